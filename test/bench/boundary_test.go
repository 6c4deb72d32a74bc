package bench_test

import (
	"context"
	"errors"
	"fmt"
	"strings"
	"sync"
	"testing"
	"time"

	autoscalingv2 "k8s.io/api/autoscaling/v2"
	"k8s.io/utils/ptr"
	"sigs.k8s.io/controller-runtime/pkg/client"

	autoscalingv1alpha1 "github.com/almanac-dev/almanac/api/autoscaling/v1alpha1"
)

// boundaryResult is what the boundary burst measured.
type boundaryResult struct {
	N, Rounds, Workers int
	// Attached: the autoscalers are attached to HPAs that exist (spec.targetRef) instead of
	// generating them.
	Attached bool
	// Almanac: from each boundary to each HPA's new bounds seen on the watch. Raw: from each
	// raw burst's start to each of its patches seen on the same watch.
	Almanac, Raw dist
	// CPUAlmanac and CPURaw: the CPU each process used during almanac's bursts (boundary to
	// quiet) and during the raw bursts.
	CPUAlmanac, CPURaw cpuUse
	// ReqAlmanac and ReqRaw are the requests the API server counted during the bursts.
	ReqAlmanac, ReqRaw requests
	// ReturnedAlmanac: from each boundary to almanac's apply returning, as the manager
	// recorded it (status.lastAppliedTransition.lag); ReturnedRaw: from each raw burst's start
	// to each raw apply returning. With Almanac and Raw they split the time into the request
	// and its arrival on the watch.
	ReturnedAlmanac, ReturnedRaw dist
	Profile                      string
}

// BenchmarkBoundaryBurst: ALMANAC_BENCH_BOUNDARY_N autoscalers (100) share each of
// ALMANAC_BENCH_BOUNDARY_ROUNDS boundaries (5); after each, a bare client fires as many
// server-side-apply patches of other HPAs at once. Then the same with the autoscalers
// attached to HPAs that exist (spec.targetRef), in the same run.
func BenchmarkBoundaryBurst(b *testing.B) {
	n, rounds := size(b, "ALMANAC_BENCH_BOUNDARY_N", 100), size(b, "ALMANAC_BENCH_BOUNDARY_ROUNDS", 5)
	m := startManager(b, "boundary")
	for range b.N {
		for _, attached := range []bool{false, true} {
			res := boundaryBurst(b, m, n, rounds, attached)
			unit := ""
			if attached {
				unit = "attached-"
			}
			b.ReportMetric(float64(res.Almanac.P50.Microseconds())/1000, unit+"almanac-p50-ms")
			b.ReportMetric(float64(res.Almanac.P99.Microseconds())/1000, unit+"almanac-p99-ms")
			b.ReportMetric(float64(res.Raw.P50.Microseconds())/1000, unit+"raw-p50-ms")
			b.ReportMetric(float64(res.Raw.P99.Microseconds())/1000, unit+"raw-p99-ms")
			res.report()
		}
	}
}

func (res boundaryResult) report() {
	figure := fmt.Sprintf("boundary burst: %d autoscalers × %d boundaries → HPA seen", res.N, res.Rounds)
	if res.Attached {
		figure = fmt.Sprintf("boundary burst, attached: %d autoscalers attached to existing HPAs × %d boundaries → HPA seen", res.N, res.Rounds)
	}
	r := ratio(res.Almanac.P99, res.Raw.P99)
	table.add(row{
		Figure:  figure,
		Almanac: res.Almanac.String(),
		Other:   fmt.Sprintf("%d raw SSA patches of other HPAs × %d, %d workers: %s", res.N, res.Rounds, res.Workers, res.Raw),
		Ratio:   fmt.Sprintf("p50 %s, p99 %s", times(ratio(res.Almanac.P50, res.Raw.P50)), times(r)),
		Goal:    "p99 ≤ 1.5× raw",
		Met:     yes(r <= 1.5),
	})
	perTransition := res.perTransition()
	table.add(row{
		Figure:  figure + ": requests per transition",
		Almanac: fmt.Sprintf("%.2f (%d requests the API server counted during the bursts, %d transitions)", perTransition, res.ReqAlmanac.total(), res.N*res.Rounds),
		Other:   fmt.Sprintf("raw: %.2f per patch (%d)", float64(res.ReqRaw.total())/float64(res.N*res.Rounds), res.ReqRaw.total()),
		Ratio:   times(float64(res.ReqAlmanac.total()) / float64(max(res.ReqRaw.total(), 1))),
		Goal:    "≤ 3 per transition",
		Met:     yes(perTransition <= 3),
	})
	cpu := ratio(res.CPUAlmanac["kube-apiserver"], res.CPURaw["kube-apiserver"])
	table.add(row{
		Figure:  figure + ": the API server's CPU",
		Almanac: "during almanac's bursts: " + ms(res.CPUAlmanac["kube-apiserver"]),
		Other:   "during the raw bursts: " + ms(res.CPURaw["kube-apiserver"]),
		Ratio:   times(cpu),
		Goal:    "≤ 3× raw",
		Met:     yes(cpu <= 3),
	})
	table.note(figure, "CPU during almanac's bursts: %s; during the raw bursts: %s; profile %s", res.CPUAlmanac, res.CPURaw, res.Profile)
	table.note(figure, "requests the API server counted (watches left out) during almanac's bursts: %d (%s); during the raw bursts: %d (%s)",
		res.ReqAlmanac.total(), res.ReqAlmanac, res.ReqRaw.total(), res.ReqRaw)
	table.note(figure, "until the apply returned to its client: almanac (its lastAppliedTransition.lag) %s; raw %s",
		res.ReturnedAlmanac, res.ReturnedRaw)
}

// perTransition is how many requests the API server counted during almanac's bursts per
// transition (an autoscaler whose bounds a boundary changed), whoever made them.
func (res boundaryResult) perTransition() float64 {
	return float64(res.ReqAlmanac.total()) / float64(max(res.N*res.Rounds, 1))
}

// boundaryBurst measures n autoscalers sharing each of `rounds` boundaries against a raw
// burst after each. The boundaries are the ends of Cron windows (a firing a minute or two
// ago, with a duration that ends it at a chosen second): closing a window costs almanac the
// same writes as opening one (the HPA and the autoscaler's status), and lets many boundaries fit in a minute without touching any clock.
//
// attached: the autoscalers are attached (spec.targetRef) to HPAs that a client of its own
// created beforehand, instead of generating them.
func boundaryBurst(tb testing.TB, m *manager, n, rounds int, attached bool) boundaryResult {
	tb.Helper()
	ctx := context.Background()
	ns := newNamespace(tb, "boundary", false)
	cleanup(tb, ns)
	c := newClient(tb, harnessConfig())
	res := boundaryResult{N: n, Rounds: rounds, Attached: attached, Workers: m.settings.Workers["scheduledpodautoscaler"],
		CPUAlmanac: cpuUse{}, CPURaw: cpuUse{}, ReqAlmanac: requests{}, ReqRaw: requests{}}
	names := make([]string, n)
	for i := range names {
		names[i] = fmt.Sprintf("app-%03d", i)
	}
	raws := make([]string, n)
	for i := range raws {
		raws[i] = fmt.Sprintf("raw-%03d", i)
	}
	if err := parallel(16, n, func(i int) error {
		if attached {
			if err := applyHPA(ctx, c, ns, names[i], 2, 10); err != nil {
				return err
			}
			return errors.Join(c.Create(ctx, attachedAutoscaler(ns, names[i])), applyHPA(ctx, c, ns, raws[i], 2, 10))
		}
		if err := c.Create(ctx, newAutoscaler(ns, names[i])); err != nil {
			return err
		}
		return applyHPA(ctx, c, ns, raws[i], 2, 10)
	}); err != nil {
		tb.Fatal(err)
	}

	// Schedule r of each autoscaler closes at boundary r; the earlier a Schedule closes, the
	// higher its minReplicas, so that every boundary changes every HPA.
	minOf := func(r int) int32 { return int32(3 + rounds - 1 - r) }
	want := func(r int) int32 {
		if r+1 < rounds {
			return minOf(r + 1)
		}
		return 2 // the baseline
	}
	gap := 2*time.Second + time.Duration(n)*40*time.Millisecond
	now := time.Now()
	fired := now.UTC().Truncate(time.Minute).Add(-time.Minute)
	first := now.Add(2*time.Second + time.Duration(n*rounds)*20*time.Millisecond).Truncate(time.Second).Add(time.Second)
	boundary := func(r int) time.Time { return first.Add(time.Duration(r) * gap) }
	if err := parallel(16, n*rounds, func(k int) error {
		i, r := k/rounds, k%rounds
		return c.Create(ctx, &autoscalingv1alpha1.Schedule{
			ObjectMeta: objectMeta(ns, fmt.Sprintf("%s-%d", names[i], r)),
			Spec: autoscalingv1alpha1.ScheduleSpec{
				ScaleTargetRef: autoscalingv1alpha1.ScaleTargetReference{Name: names[i]},
				Type:           autoscalingv1alpha1.ScheduleTypeCron,
				Schedule:       fmt.Sprintf("%d %d * * *", fired.Minute(), fired.Hour()),
				Duration:       boundary(r).Sub(fired).String(),
				TimeZone:       "UTC",
				MinReplicas:    ptr.To(minOf(r)),
			},
		})
	}); err != nil {
		tb.Fatal(err)
	}
	eventually(tb, time.Until(first), 100*time.Millisecond, func() error {
		hpas := &autoscalingv2.HorizontalPodAutoscalerList{}
		if err := c.List(ctx, hpas, client.InNamespace(ns)); err != nil {
			return err
		}
		ready := 0
		for _, h := range hpas.Items {
			if strings.HasPrefix(h.Name, "app-") && ptr.Deref(h.Spec.MinReplicas, 0) == minOf(0) {
				ready++
			}
		}
		if ready < n {
			return fmt.Errorf("%d of %d HPAs have the bounds of the open windows, %s the first boundary: raise the lead", ready, n, until(first))
		}
		return nil
	})
	rec := record(tb, ns, true, "HorizontalPodAutoscaler", "ScheduledPodAutoscaler", "Schedule", "Event")
	if _, err := rec.quiet(300*time.Millisecond, time.Until(first)-settle-100*time.Millisecond); err != nil {
		tb.Fatalf("setup did not settle before the first boundary: %v", err)
	}
	procs := pids(m, nil)
	wait := m.profile(tb, "boundary", time.Until(boundary(rounds-1).Add(gap)))
	raw := newClient(tb, rawConfig(m.settings))

	var almanac, rawLat, returnedRaw []time.Duration
	var returnedMu sync.Mutex
	for r := range rounds {
		at := boundary(r)
		sleepUntil(ctx, at.Add(-settle))
		before, reqs := cpuNow(procs), apiRequestsOrLog(tb)
		lat, err := firstSeen(rec, at, names, want(r), 30*time.Second)
		if err != nil {
			tb.Fatalf("boundary %d at %s: %v", r, at.Format(time.RFC3339), err)
		}
		almanac = append(almanac, lat...)
		if _, err := rec.quiet(300*time.Millisecond, gap); err != nil {
			tb.Fatalf("boundary %d: %v", r, err)
		}
		res.CPUAlmanac.add(cpuNow(procs).since(before))
		res.ReqAlmanac.add(apiRequestsOrLog(tb).since(reqs))

		// The raw burst, at equal concurrency, while almanac is idle.
		before, reqs = cpuNow(procs), apiRequestsOrLog(tb)
		time.Sleep(settle)
		start := time.Now()
		value := int32(100 + r)
		go func() {
			if err := parallel(res.Workers, n, func(i int) error {
				err := applyHPA(ctx, raw, ns, raws[i], value, 200)
				returnedMu.Lock()
				returnedRaw = append(returnedRaw, time.Since(start))
				returnedMu.Unlock()
				return err
			}); err != nil {
				tb.Errorf("raw burst %d: %v", r, err)
			}
		}()
		lat, err = firstSeen(rec, start, raws, value, 30*time.Second)
		if err != nil {
			tb.Fatalf("raw burst %d: %v", r, err)
		}
		rawLat = append(rawLat, lat...)
		if _, err := rec.quiet(300*time.Millisecond, gap); err != nil {
			tb.Fatalf("raw burst %d: %v", r, err)
		}
		res.CPURaw.add(cpuNow(procs).since(before))
		res.ReqRaw.add(apiRequestsOrLog(tb).since(reqs))
		if r+1 < rounds && time.Until(boundary(r+1)) < settle+100*time.Millisecond {
			tb.Fatalf("round %d ended %s: the gap of %s between boundaries is too short for this machine", r, until(boundary(r+1)), gap)
		}
	}
	res.Almanac, res.Raw = summarize(almanac), summarize(rawLat)
	returnedMu.Lock()
	res.ReturnedRaw = summarize(returnedRaw)
	returnedMu.Unlock()
	res.ReturnedAlmanac = summarize(recordedLags(rec, names, rounds))
	res.Profile = wait()
	return res
}

// recordedLags returns, for each autoscaler in names, the lag of each transition it recorded
// in status (lastAppliedTransition: from the boundary to its HPA apply returning), up to
// rounds of them.
func recordedLags(rec *recorder, names []string, rounds int) []time.Duration {
	want := map[string]bool{}
	for _, n := range names {
		want[n] = true
	}
	type key struct {
		name     string
		boundary time.Time
	}
	lags := map[key]time.Duration{}
	for _, e := range rec.since(time.Time{}) {
		spa, ok := e.Obj.(*autoscalingv1alpha1.ScheduledPodAutoscaler)
		if !ok || !want[e.Name] || spa.Status.LastAppliedTransition == nil {
			continue
		}
		t := spa.Status.LastAppliedTransition
		lags[key{e.Name, t.BoundaryTime.Time}] = t.Lag.Duration
	}
	out := make([]time.Duration, 0, len(names)*rounds)
	for _, l := range lags {
		out = append(out, l)
	}
	return out
}

// firstSeen waits until each HPA in names has been seen with minReplicas value since t, and
// returns the time from t to the first such sighting of each.
func firstSeen(rec *recorder, t time.Time, names []string, value int32, timeout time.Duration) ([]time.Duration, error) {
	var out []time.Duration
	err := rec.waitFor(timeout, t, func(evs []seen) error {
		first := map[string]time.Time{}
		for _, e := range evs {
			if e.Kind != "HorizontalPodAutoscaler" {
				continue
			}
			h, ok := e.Obj.(*autoscalingv2.HorizontalPodAutoscaler)
			if _, done := first[e.Name]; ok && !done && ptr.Deref(h.Spec.MinReplicas, 0) == value {
				first[e.Name] = e.At
			}
		}
		out = out[:0]
		var missing []string
		for _, name := range names {
			at, ok := first[name]
			if !ok {
				missing = append(missing, name)
				continue
			}
			out = append(out, at.Sub(t))
		}
		if len(missing) > 0 {
			return fmt.Errorf("%d of %d HPAs not seen with minReplicas %d (%s…)", len(missing), len(names), value, missing[0])
		}
		return nil
	})
	return out, err
}
