package bench_test

import (
	"context"
	"fmt"
	"path/filepath"
	"strings"
	"sync"
	"testing"
	"time"

	autoscalingv2 "k8s.io/api/autoscaling/v2"
	"k8s.io/apimachinery/pkg/api/meta"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/client-go/rest"
	"k8s.io/utils/ptr"
	"sigs.k8s.io/controller-runtime/pkg/client"

	autoscalingv1alpha1 "github.com/almanac-dev/almanac/api/autoscaling/v1alpha1"
)

// schedulesPerAutoscaler is the shape: every autoscaler has five Schedules.
const schedulesPerAutoscaler = 5

// scaleResult is what the scale figure measured.
type scaleResult struct {
	N, Workers int
	// Converge is from the manager's start to the last write of the cold start seen; Floor is
	// the time the bare client took for the writes almanac must make.
	Converge, Floor time.Duration
	// Writes is the number of writes almanac must make (one HPA and one status per
	// autoscaler, one status per Schedule); Events the events it wrote besides.
	Writes, Events int
	// Peak is the manager's peak resident set (VmHWM); Idle its resident set when quiet.
	Peak, Idle int64
	// QuietWrites counts the writes in the QuietFor after the cold start settled.
	QuietWrites int
	QuietFor    time.Duration
	CPU         cpuUse
	Profile     string
	// RequestsAlmanac and RequestsFloor are the requests the API server counted during the
	// cold start and during the floor (apiserver_request_total), by verb, resource and code.
	RequestsAlmanac, RequestsFloor requests
}

// BenchmarkScale: ALMANAC_BENCH_SCALE_N autoscalers (1,000; the goal is for 10,000)
// × 5 Schedules, the manager started cold.
//
//	ALMANAC_BENCH_SCALE_N=10000 go test ./test/bench -run '^$' -bench Scale -benchtime 1x -timeout 90m
func BenchmarkScale(b *testing.B) {
	n := size(b, "ALMANAC_BENCH_SCALE_N", 1000)
	quiet := time.Duration(size(b, "ALMANAC_BENCH_QUIET_SECONDS", 10)) * time.Second
	for range b.N {
		res := scale(b, n, quiet, 10*time.Second)
		b.ReportMetric(res.Converge.Seconds(), "converge-s")
		b.ReportMetric(res.Floor.Seconds(), "floor-s")
		b.ReportMetric(float64(res.Peak)/(1<<20), "peak-rss-MiB")
		b.ReportMetric(float64(res.QuietWrites), "quiet-writes")
		res.report()
	}
}

func (res scaleResult) report() {
	figure := fmt.Sprintf("scale: %d autoscalers × %d Schedules, cold start → converged", res.N, schedulesPerAutoscaler)
	r := ratio(res.Converge, res.Floor)
	mib := float64(res.Peak) / (1 << 20)
	table.add(row{
		Figure: figure,
		Almanac: fmt.Sprintf("%s; peak RSS %.0f MiB; %d writes in %s while quiet",
			ms(res.Converge), mib, res.QuietWrites, ms(res.QuietFor)),
		Other: fmt.Sprintf("the %d writes almanac must make, from a bare client with %d workers: %s", res.Writes, res.Workers, ms(res.Floor)),
		Ratio: times(r),
		Goal:  "≤ 1.5× the floor; peak RSS ≤ 300 MiB (at 10,000); 0 writes while quiet",
		Met:   yes(r <= 1.5 && mib <= 300 && res.QuietWrites == 0),
	})
	table.note(figure, "almanac also wrote %d events; resident set when quiet %.0f MiB; CPU of the cold start: %s; profiles %s",
		res.Events, float64(res.Idle)/(1<<20), res.CPU, res.Profile)
	table.note(figure, "requests the API server counted (watches left out) during the cold start: %d (%s); during the floor: %d (%s)",
		res.RequestsAlmanac.total(), res.RequestsAlmanac, res.RequestsFloor.total(), res.RequestsFloor)
}

// scale populates n autoscalers with 5 Schedules each while no manager runs, measures the
// floor on a second set of the same objects, removes that set, then starts the manager cold
// and measures the time until everything has converged, its peak memory, and the writes in
// a quiet period after. Nothing else may run a manager meanwhile.
func scale(tb testing.TB, n int, quiet time.Duration, profileChunk time.Duration) scaleResult {
	tb.Helper()
	ctx := context.Background()
	s := managerSettings(tb)
	res := scaleResult{N: n, Workers: s.Workers["scheduledpodautoscaler"] + s.Workers["schedule"], Writes: n * (2 + schedulesPerAutoscaler), QuietFor: quiet}
	c := newClient(tb, harnessConfig())
	now := time.Now()

	// The objects are created without the webhooks in their path (no manager serves them):
	// they are written in the form admission stores.
	ns := newNamespace(tb, "scale", true)
	cleanup(tb, ns)
	populate(tb, c, ns, n, now)
	floorNS := newNamespace(tb, "scale-floor", true)
	cleanup(tb, floorNS)
	spas, schedules := populate(tb, c, floorNS, n, now)
	reqs := apiRequestsOrLog(tb)
	time.Sleep(settle)
	res.Floor = floor(tb, rawConfig(s), s, spas, schedules, now)
	res.RequestsFloor = apiRequestsOrLog(tb).since(reqs)
	if err := deleteAll(ctx, floorNS); err != nil {
		tb.Fatal(err)
	}

	rec := record(tb, ns, false, "HorizontalPodAutoscaler", "ScheduledPodAutoscaler", "Schedule", "Event")
	reqs = apiRequestsOrLog(tb)
	time.Sleep(settle)
	start := time.Now()
	m, err := launchManager("scale")
	if err != nil {
		tb.Fatal(err)
	}
	tb.Cleanup(m.stop)
	procs := pids(m, nil)
	before := cpuNow(procs)
	before["almanac"] = 0
	stopProfiles := profileUntilStopped(m, "scale", profileChunk)

	// Convergence is when the last change it needed arrived on the watch (convergedAt), not
	// when it is noticed: checking once a second loses nothing, and each check copies what the
	// watch has seen (60,000 objects at 10,000 × 5), CPU taken from the API server's cores.
	var converged time.Time
	eventually(tb, 90*time.Minute, time.Second, func() error {
		if err := m.exited(); err != nil {
			tb.Fatal(err)
		}
		var err error
		converged, err = convergedAt(rec, n)
		return err
	})
	res.Converge = converged.Sub(start)
	res.CPU = cpuNow(procs).since(before)
	res.RequestsAlmanac = apiRequestsOrLog(tb).since(reqs)
	res.Profile = stopProfiles()

	settled, err := rec.quiet(2*time.Second, 2*time.Minute)
	if err != nil {
		tb.Logf("the cold start did not settle: %v", err)
	}
	time.Sleep(quiet)
	for _, e := range rec.since(settled.Add(time.Nanosecond)) {
		res.QuietWrites++
		if res.QuietWrites <= 10 {
			tb.Logf("a write while quiet: %s %s %s at %s", e.Type, e.Kind, e.Name, e.At.Format(time.RFC3339Nano))
		}
	}
	events, _ := rec.snapshot("Event")
	res.Events = len(events)
	if res.Peak, res.Idle, err = memory(m.pid()); err != nil {
		tb.Fatal(err)
	}
	m.stop() // the next figure starts its own
	return res
}

// managerSettings returns the settings of the manager under test, starting it briefly when
// no figure has started it yet.
func managerSettings(tb testing.TB) settings {
	tb.Helper()
	settingsOnce.Do(func() {
		m, err := launchManager("settings")
		if err == nil {
			err = m.waitStarted(3 * time.Minute)
			m.stop()
		}
		if err != nil {
			tb.Fatal(err)
		}
		cachedSettings = m.settings
	})
	return cachedSettings
}

var (
	settingsOnce   sync.Once
	cachedSettings settings
)

// populate creates n autoscalers with five Schedules each, of every type and in several
// zones, none with a boundary in the next hours: one window open now (so that every HPA gets
// raised bounds), one later today on weekdays (a third suspended), a Weekly window in two
// days, a monthly Cron window, and a OneShot years ahead. It returns what it created.
func populate(tb testing.TB, c client.Client, ns string, n int, now time.Time) ([]*autoscalingv1alpha1.ScheduledPodAutoscaler, []*autoscalingv1alpha1.Schedule) {
	tb.Helper()
	hm := func(t time.Time) string { return t.Format("15:04") }
	utc := now.UTC()
	berlin, err := time.LoadLocation("Europe/Berlin")
	if err != nil {
		tb.Fatal(err)
	}
	inBerlin := now.In(berlin)
	weekly := now.AddDate(0, 0, 2)
	spas := make([]*autoscalingv1alpha1.ScheduledPodAutoscaler, n)
	schedules := make([]*autoscalingv1alpha1.Schedule, n*schedulesPerAutoscaler)
	specs := func(i int) []autoscalingv1alpha1.ScheduleSpec {
		return []autoscalingv1alpha1.ScheduleSpec{
			{Type: autoscalingv1alpha1.ScheduleTypeDaily, StartTime: hm(utc.Add(-time.Hour)), EndTime: hm(utc.Add(3 * time.Hour)), TimeZone: "UTC", MinReplicas: ptr.To[int32](3)},
			{Type: autoscalingv1alpha1.ScheduleTypeDaily, StartTime: hm(inBerlin.Add(4 * time.Hour)), EndTime: hm(inBerlin.Add(6 * time.Hour)), TimeZone: "Europe/Berlin",
				DaysOfWeek: []string{"Monday", "Tuesday", "Wednesday", "Thursday", "Friday"}, MaxReplicas: ptr.To[int32](30), Suspend: i%3 == 0},
			{Type: autoscalingv1alpha1.ScheduleTypeWeekly, StartDayOfWeek: weekly.Weekday().String(), StartTime: "06:00",
				EndDayOfWeek: weekly.AddDate(0, 0, 1).Weekday().String(), EndTime: "06:00", TimeZone: "America/New_York", MinReplicas: ptr.To[int32](5)},
			{Type: autoscalingv1alpha1.ScheduleTypeCron, Schedule: fmt.Sprintf("30 3 %d * *", now.AddDate(0, 0, 10).Day()), Duration: "2h", TimeZone: "UTC", MinReplicas: ptr.To[int32](8), MaxReplicas: ptr.To[int32](40)},
			{Type: autoscalingv1alpha1.ScheduleTypeOneShot, StartTime: "2035-01-20T10:00", EndTime: "2035-01-20T12:00", TimeZone: "Asia/Tokyo", MinReplicas: ptr.To[int32](15), MaxReplicas: ptr.To[int32](50)},
		}
	}
	suffixes := []string{"open", "later", "weekly", "monthly", "launch"}
	if err := parallel(16, n, func(i int) error {
		name := fmt.Sprintf("app-%05d", i)
		spa := newAutoscaler(ns, name)
		if err := c.Create(context.Background(), spa); err != nil {
			return err
		}
		spas[i] = spa
		for k, spec := range specs(i) {
			spec.ScaleTargetRef = autoscalingv1alpha1.ScaleTargetReference{Name: name}
			s := &autoscalingv1alpha1.Schedule{ObjectMeta: objectMeta(ns, name+"-"+suffixes[k]), Spec: spec}
			if err := c.Create(context.Background(), s); err != nil {
				return err
			}
			schedules[i*schedulesPerAutoscaler+k] = s
		}
		return nil
	}); err != nil {
		tb.Fatal(err)
	}
	return spas, schedules
}

// floor issues, with a bare client and the manager's concurrency (as many workers as its
// autoscaler and Schedule controllers have, side by side), the writes that almanac's cold
// start must make for these objects: each autoscaler's HPA (a server-side apply) and status,
// and each Schedule's status (merge patches under a resourceVersion precondition, as almanac
// writes them). It returns how long they took.
func floor(tb testing.TB, cfg *rest.Config, s settings, spas []*autoscalingv1alpha1.ScheduledPodAutoscaler, schedules []*autoscalingv1alpha1.Schedule, now time.Time) time.Duration {
	tb.Helper()
	ctx := context.Background()
	c := newClient(tb, cfg)
	start := time.Now()
	var wg sync.WaitGroup
	errs := make(chan error, 2)
	wg.Go(func() {
		errs <- parallel(s.Workers["scheduledpodautoscaler"], len(spas), func(i int) error {
			spa := spas[i]
			if err := applyHPA(ctx, c, spa.Namespace, spa.Name, 3, 10); err != nil {
				return err
			}
			changed := spa.DeepCopy()
			changed.Status = autoscalingv1alpha1.ScheduledPodAutoscalerStatus{
				ObservedGeneration: spa.Generation, MinReplicas: ptr.To[int32](3), MaxReplicas: 10,
				ActiveSchedules:    []string{spa.Name + "-open"},
				NextTransitionTime: ptr.To(metav1.NewTime(now.Add(3 * time.Hour).Truncate(time.Minute))),
				Conditions: []metav1.Condition{
					condition(spa.Generation, autoscalingv1alpha1.ConditionReady, autoscalingv1alpha1.ReasonBoundsApplied,
						fmt.Sprintf("HorizontalPodAutoscaler %s has minReplicas 3 and maxReplicas 10 (active Schedules: %s-open)", spa.Name, spa.Name)),
					condition(spa.Generation, autoscalingv1alpha1.ConditionSchedulesValid, autoscalingv1alpha1.ReasonAllSchedulesValid,
						"Every Schedule of this autoscaler could be evaluated"),
				},
			}
			return c.Status().Patch(ctx, changed, client.MergeFromWithOptions(spa, client.MergeFromWithOptimisticLock{}))
		})
	})
	wg.Go(func() {
		errs <- parallel(s.Workers["schedule"], len(schedules), func(i int) error {
			sc := schedules[i]
			changed := sc.DeepCopy()
			changed.Status = autoscalingv1alpha1.ScheduleStatus{
				ObservedGeneration: sc.Generation, Phase: autoscalingv1alpha1.SchedulePhaseScheduled,
				Conditions: []metav1.Condition{condition(sc.Generation, autoscalingv1alpha1.ConditionValid, autoscalingv1alpha1.ReasonValid,
					"The Schedule's window could be evaluated")},
			}
			return c.Status().Patch(ctx, changed, client.MergeFromWithOptions(sc, client.MergeFromWithOptimisticLock{}))
		})
	})
	wg.Wait()
	close(errs)
	for err := range errs {
		if err != nil {
			tb.Fatal(err)
		}
	}
	return time.Since(start)
}

func condition(generation int64, typ, reason, message string) metav1.Condition {
	return metav1.Condition{Type: typ, Status: metav1.ConditionTrue, Reason: reason, Message: message,
		ObservedGeneration: generation, LastTransitionTime: metav1.Now()}
}

// convergedAt reports when the last change that the cold start needed arrived: every
// autoscaler has a status for its generation, Ready, with the bounds its HPA has; every
// Schedule has a status for its generation.
func convergedAt(rec *recorder, n int) (time.Time, error) {
	spas, spaAt := rec.snapshot("ScheduledPodAutoscaler")
	hpas, hpaAt := rec.snapshot("HorizontalPodAutoscaler")
	schedules, scheduleAt := rec.snapshot("Schedule")
	var last time.Time
	later := func(t time.Time) {
		if t.After(last) {
			last = t
		}
	}
	done := 0
	for name, obj := range spas {
		spa := obj.(*autoscalingv1alpha1.ScheduledPodAutoscaler)
		h, ok := hpas[name]
		if !ok || spa.Status.ObservedGeneration != spa.Generation || spa.Status.MinReplicas == nil ||
			!meta.IsStatusConditionTrue(spa.Status.Conditions, autoscalingv1alpha1.ConditionReady) {
			continue
		}
		hpa := h.(*autoscalingv2.HorizontalPodAutoscaler)
		if ptr.Deref(hpa.Spec.MinReplicas, 0) != *spa.Status.MinReplicas || hpa.Spec.MaxReplicas != spa.Status.MaxReplicas {
			continue
		}
		done++
		later(spaAt[name])
		later(hpaAt[name])
	}
	if done < n {
		return time.Time{}, fmt.Errorf("%d of %d autoscalers converged", done, n)
	}
	pending := 0
	for name, obj := range schedules {
		sc := obj.(*autoscalingv1alpha1.Schedule)
		if sc.Status.ObservedGeneration != sc.Generation || sc.Status.Phase == "" {
			pending++
			continue
		}
		later(scheduleAt[name])
	}
	if pending > 0 || len(schedules) < n*schedulesPerAutoscaler {
		return time.Time{}, fmt.Errorf("%d of %d Schedules have no status yet", pending+n*schedulesPerAutoscaler-len(schedules), n*schedulesPerAutoscaler)
	}
	return last, nil
}

// profileUntilStopped records consecutive CPU profiles of length chunk of a manager that is
// starting, until the returned function is called; it returns their paths.
func profileUntilStopped(m *manager, name string, chunk time.Duration) func() string {
	stop := make(chan struct{})
	done := make(chan []string, 1)
	go func() {
		var paths []string
		for k := 0; ; k++ {
			select {
			case <-stop:
				done <- paths
				return
			default:
			}
			if p := fetchQuiet(m, fmt.Sprintf("%s-%d", name, k), chunk); p != "" {
				paths = append(paths, p)
			} else {
				k--
				time.Sleep(50 * time.Millisecond)
			}
		}
	}()
	return func() string {
		close(stop)
		return strings.Join(<-done, " ")
	}
}

// fetchQuiet records one profile of length d; empty when pprof does not answer (yet).
func fetchQuiet(m *manager, name string, d time.Duration) string {
	path := filepath.Join(profileDir, name+".pprof")
	url := fmt.Sprintf("http://127.0.0.1:%d/debug/pprof/profile?seconds=%d", m.pprofPort, max(1, int(d/time.Second)))
	return fetch(func(string, ...any) {}, url, nil, path)
}

// apiRequestsOrLog is apiRequests, logging (not failing on) an API server that does not answer:
// the counts explain a figure, they are not the figure.
func apiRequestsOrLog(tb testing.TB) requests {
	r, err := apiRequests()
	if err != nil {
		tb.Logf("no request counts: %v", err)
	}
	return r
}
