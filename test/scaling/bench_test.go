package scaling_test

import (
	"context"
	"encoding/json"
	"fmt"
	"os"
	goruntime "runtime"
	"slices"
	"strconv"
	"sync"
	"testing"
	"time"

	autoscalingv2 "k8s.io/api/autoscaling/v2"
	"k8s.io/apimachinery/pkg/api/meta"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/runtime"
	autoscalingv2ac "k8s.io/client-go/applyconfigurations/autoscaling/v2"
	"k8s.io/utils/clock"
	"k8s.io/utils/ptr"
	"sigs.k8s.io/controller-runtime/pkg/client"

	autoscalingv1alpha1 "github.com/almanac-dev/almanac/api/autoscaling/v1alpha1"
)

// BenchmarkBoundaryLag measures the time from a boundary instant (a Schedule's window opening
// or closing) to the HPA patch returning with the new bounds, against the real API server,
// over many boundaries, and reports p50/p99/max:
//
//   - lag-p50-ms, lag-p99-ms, lag-max-ms: as the reconciler measures it (status
//     lastAppliedTransition.lag, which is also what the transition lag histogram observes);
//   - watch-p50-ms, watch-p99-ms: as a separate watch of the HPA sees it (adds the watch
//     delivery).
//
// "autoscalers=1" is one autoscaler per boundary; "autoscalers=100" has 100 autoscalers share
// each boundary (everyone scales up at 09:00), so it includes queueing.
//
// Schedules are written in whole minutes, so to measure many boundaries without waiting a
// minute for each, the manager's clock is moved (between boundaries, never across one) to a
// moment shortly before the next boundary, and each autoscaler is nudged (a spec change that
// does not affect its bounds) so that it computes its RequeueAfter from the moved clock. The
// wait for the boundary itself is a real RequeueAfter, exactly as in production.
//
// ALMANAC_BENCH_BOUNDARIES sets the number of boundaries per run (default 60; a sixth of
// that, at least 4, for autoscalers=100).
func BenchmarkBoundaryLag(b *testing.B) {
	boundaries := envInt(b, "ALMANAC_BENCH_BOUNDARIES", 60)
	b.Run("autoscalers=1", func(b *testing.B) { benchmarkBoundaryLag(b, 1, boundaries) })
	b.Run("autoscalers=100", func(b *testing.B) { benchmarkBoundaryLag(b, 100, max(boundaries/6, 4)) })
}

func benchmarkBoundaryLag(b *testing.B, k, boundaries int) {
	ctx := context.Background()
	ns := newNamespace(b)
	day0 := time.Date(2030, 2, 1, 10, 0, 0, 0, time.UTC)
	clk := newOffsetClock(day0.Add(-time.Hour))
	for i := range k {
		name := fmt.Sprintf("app-%03d", i)
		s := oneShot(ns, name, name, day0, day0, 5, 20)
		s.Spec.Type = autoscalingv1alpha1.ScheduleTypeDaily
		s.Spec.StartTime, s.Spec.EndTime = "10:00", "10:01"
		create(b, newAutoscaler(ns, name, 2, 10), s)
	}
	applies := &applyLog{clk: clk}
	startManagerWith(b, clk, applies.wrap, ns)
	eventually(b, time.Minute, converged(ns, k))
	writes := watchWrites(b, clk, ns)
	c, err := client.New(restConfig(), client.Options{Scheme: env.Client.Scheme()})
	if err != nil {
		b.Fatal(err)
	}

	lead := 300*time.Millisecond + time.Duration(k)*20*time.Millisecond
	var lags, watched, wakes, trips []time.Duration
	next := 0 // index of the next boundary: day0 + next/2 days, + 1 minute when odd
	b.ResetTimer()
	for range b.N {
		for range boundaries {
			boundary := day0.AddDate(0, 0, next/2).Add(time.Duration(next%2) * time.Minute)
			next++
			clk.set(boundary.Add(-lead))
			nudge(b, c, ns)
			eventuallyEvery(b, lead+10*time.Second, 100*time.Millisecond, func() error {
				spas := &autoscalingv1alpha1.ScheduledPodAutoscalerList{}
				if err := c.List(ctx, spas, client.InNamespace(ns)); err != nil {
					return err
				}
				for _, spa := range spas.Items {
					if spa.Status.ObservedGeneration != spa.Generation {
						return errNotYet
					}
				}
				return nil
			})
			if !clk.Now().Before(boundary) {
				b.Logf("boundary %s: the nudge took longer than the lead of %s; raising the lead", boundary, lead)
				lead *= 2
			}
			clk.sleepUntil(boundary)

			// Wait for the HPA writes on the watch (in this process), then for the statuses:
			// polling the API server right at the boundary would take CPU from the very
			// writes being measured.
			eventuallyEvery(b, 30*time.Second, 10*time.Millisecond, func() error {
				if first := firstWrites(writes, boundary); len(first) < k {
					for i := range k {
						name := fmt.Sprintf("app-%03d", i)
						if _, ok := first[name]; ok {
							continue
						}
						spa := &autoscalingv1alpha1.ScheduledPodAutoscaler{}
						_ = c.Get(ctx, client.ObjectKey{Namespace: ns, Name: name}, spa)
						hpa, _ := getHPA(ns, name)
						var seen []string
						for _, w := range writes.all() {
							if w.name == name && w.kind == "HorizontalPodAutoscaler" {
								seen = append(seen, w.String())
							}
						}
						return fmt.Errorf("%d of %d HPAs written since the boundary %s (now %s); %s is not: generation %d, status %s, applies %v; HPA rv %s %d-%d; watched %v",
							len(first), k, boundary, clk.Now(), name, spa.Generation, dump(spa.Status), applies.of(name),
							hpa.ResourceVersion, ptr.Deref(hpa.Spec.MinReplicas, 0), hpa.Spec.MaxReplicas, seen)
					}
				}
				return nil
			})
			var spas autoscalingv1alpha1.ScheduledPodAutoscalerList
			eventuallyEvery(b, 30*time.Second, 250*time.Millisecond, func() error {
				if err := c.List(ctx, &spas, client.InNamespace(ns)); err != nil {
					return err
				}
				for _, spa := range spas.Items {
					if lt := spa.Status.LastAppliedTransition; lt == nil || !lt.BoundaryTime.Time.Equal(boundary) {
						hpa, _ := getHPA(ns, spa.Name)
						return fmt.Errorf("%s has not applied the boundary %s yet (now %s): status %s; HPA %d-%d; applies %v",
							spa.Name, boundary, clk.Now(), dump(spa.Status), ptr.Deref(hpa.Spec.MinReplicas, 0), hpa.Spec.MaxReplicas, applies.of(spa.Name))
					}
				}
				return nil
			})
			for _, spa := range spas.Items {
				lags = append(lags, spa.Status.LastAppliedTransition.Lag.Duration)
			}
			for _, at := range firstWrites(writes, boundary) {
				watched = append(watched, at.Sub(boundary))
			}
			for _, a := range applies.since(boundary) {
				wakes = append(wakes, a.start.Sub(boundary))
				trips = append(trips, a.end.Sub(a.start))
			}
		}
	}
	b.StopTimer()
	report(b, "lag", lags)
	report(b, "watch", watched)
	report(b, "wake", wakes)
	report(b, "apply", trips)
	b.ReportMetric(float64(len(lags)), "transitions")
}

// firstWrites returns, per HPA, when the watch first saw it written at or after t.
func firstWrites(writes *writeLog, t time.Time) map[string]time.Time {
	first := map[string]time.Time{}
	for _, w := range writes.since(t) {
		if _, ok := first[w.name]; w.kind == "HorizontalPodAutoscaler" && !ok {
			first[w.name] = w.at
		}
	}
	return first
}

// applyLog records, on the manager's clock, when the ScheduledPodAutoscaler reconciler's
// server-side applies of HorizontalPodAutoscalers start and return, so that the lag can be
// split into the wake-up (boundary to the start of the apply: requeue precision, queueing,
// CPU) and the apply's round trip to the API server.
type applyLog struct {
	clk     clock.PassiveClock
	mu      sync.Mutex
	applies []apply
}

type apply struct {
	name       string
	start, end time.Time
}

func (l *applyLog) wrap(c client.Client) client.Client { return &timedClient{Client: c, log: l} }

// since returns the first apply of each HPA that started at or after t.
func (l *applyLog) since(t time.Time) []apply {
	l.mu.Lock()
	defer l.mu.Unlock()
	seen := map[string]bool{}
	var out []apply
	for _, a := range l.applies {
		if !a.start.Before(t) && !seen[a.name] {
			seen[a.name] = true
			out = append(out, a)
		}
	}
	return out
}

// of returns the applies of one HPA.
func (l *applyLog) of(name string) []apply {
	l.mu.Lock()
	defer l.mu.Unlock()
	var out []apply
	for _, a := range l.applies {
		if a.name == name {
			out = append(out, a)
		}
	}
	return out
}

func dump(v any) string {
	raw, err := json.Marshal(v)
	if err != nil {
		return err.Error()
	}
	return string(raw)
}

type timedClient struct {
	client.Client
	log *applyLog
}

func (c *timedClient) Apply(ctx context.Context, obj runtime.ApplyConfiguration, opts ...client.ApplyOption) error {
	hpa, ok := obj.(*autoscalingv2ac.HorizontalPodAutoscalerApplyConfiguration)
	if !ok {
		return c.Client.Apply(ctx, obj, opts...)
	}
	start := c.log.clk.Now()
	err := c.Client.Apply(ctx, obj, opts...)
	end := c.log.clk.Now()
	c.log.mu.Lock()
	c.log.applies = append(c.log.applies, apply{name: ptr.Deref(hpa.Name, ""), start: start, end: end})
	c.log.mu.Unlock()
	return err
}

// nudge changes each autoscaler's spec without changing its bounds (overlapPolicy is only
// read by admission), so that the reconciler runs now.
func nudge(b *testing.B, c client.Client, ns string) {
	spas := &autoscalingv1alpha1.ScheduledPodAutoscalerList{}
	if err := c.List(context.Background(), spas, client.InNamespace(ns)); err != nil {
		b.Fatal(err)
	}
	parallel(b, len(spas.Items), func(i int) error {
		spa := &spas.Items[i]
		patch := client.MergeFrom(spa.DeepCopy())
		spa.Spec.OverlapPolicy = map[autoscalingv1alpha1.OverlapPolicy]autoscalingv1alpha1.OverlapPolicy{
			autoscalingv1alpha1.OverlapPolicyMax: autoscalingv1alpha1.OverlapPolicyForbid,
		}[spa.Spec.OverlapPolicy]
		if spa.Spec.OverlapPolicy == "" {
			spa.Spec.OverlapPolicy = autoscalingv1alpha1.OverlapPolicyMax
		}
		return c.Patch(context.Background(), spa, patch)
	})
}

// BenchmarkScale creates N autoscalers × 5 Schedules, then starts the manager cold and
// measures the time until every autoscaler and Schedule has converged (HPA created with the
// right bounds, statuses written), the process's peak heap during that time, and the writes
// in a 10-second quiet period afterwards (which must be 0).
//
// N is ALMANAC_SCALE_AUTOSCALERS (default 500, a few minutes on 2 cores including the
// creation of the objects). The figure is 10,000:
//
//	ALMANAC_SCALE_AUTOSCALERS=10000 go test ./test/scaling/ -run '^$' -bench BenchmarkScale -benchtime 1x -timeout 60m
func BenchmarkScale(b *testing.B) {
	n := envInt(b, "ALMANAC_SCALE_AUTOSCALERS", 500)
	for range b.N {
		b.StopTimer()
		ns := newNamespace(b)
		created := time.Now()
		populate(b, ns, n, false)
		b.Logf("created %d autoscalers and %d Schedules in %s", n, 5*n, time.Since(created).Round(time.Millisecond))

		goruntime.GC()
		var base goruntime.MemStats
		goruntime.ReadMemStats(&base)
		peak := sampleMemory()
		clk := newOffsetClock(quietStart)

		b.StartTimer()
		start := time.Now()
		stop := startManager(b, clk, ns)
		eventuallyEvery(b, 30*time.Minute, time.Second, convergedPaged(ns, n))
		elapsed := time.Since(start)
		b.StopTimer()
		heap, sys := peak()

		writes := watchWrites(b, clk, ns)
		time.Sleep(10 * time.Second)
		quiet := len(writes.all())
		stop()

		b.ReportMetric(elapsed.Seconds(), "converge-s")
		b.ReportMetric(float64(n), "autoscalers")
		b.ReportMetric(float64(heap-base.HeapInuse)/(1<<20), "peak-heap-delta-MB")
		b.ReportMetric(float64(sys)/(1<<20), "peak-sys-MB")
		b.ReportMetric(float64(quiet), "quiet-writes")
		if quiet > 0 {
			b.Errorf("%d writes in the quiet period after convergence:\n%s", quiet, joinWrites(writes.all()))
		}
	}
}

// sampleMemory samples the heap every 50 ms until the returned function is called, which
// returns the peak HeapInuse and Sys.
func sampleMemory() func() (heap, sys uint64) {
	var mu sync.Mutex
	var peakHeap, peakSys uint64
	done := make(chan struct{})
	stopped := make(chan struct{})
	go func() {
		defer close(stopped)
		t := time.NewTicker(50 * time.Millisecond)
		defer t.Stop()
		for {
			var m goruntime.MemStats
			goruntime.ReadMemStats(&m)
			mu.Lock()
			peakHeap, peakSys = max(peakHeap, m.HeapInuse), max(peakSys, m.Sys)
			mu.Unlock()
			select {
			case <-done:
				return
			case <-t.C:
			}
		}
	}()
	return func() (uint64, uint64) {
		close(done)
		<-stopped
		mu.Lock()
		defer mu.Unlock()
		return peakHeap, peakSys
	}
}

// convergedPaged is converged for many objects: it reads in pages so that the benchmark's own
// reading adds little to the peak heap.
func convergedPaged(ns string, n int) func() error {
	return func() error {
		ctx := context.Background()
		bounds := map[string][2]int32{}
		if err := pages(ctx, &autoscalingv2.HorizontalPodAutoscalerList{}, ns, func(l client.ObjectList) {
			for _, h := range l.(*autoscalingv2.HorizontalPodAutoscalerList).Items {
				bounds[h.Name] = [2]int32{ptr.Deref(h.Spec.MinReplicas, 0), h.Spec.MaxReplicas}
			}
		}); err != nil {
			return err
		}
		done := 0
		if err := pages(ctx, &autoscalingv1alpha1.ScheduledPodAutoscalerList{}, ns, func(l client.ObjectList) {
			for _, spa := range l.(*autoscalingv1alpha1.ScheduledPodAutoscalerList).Items {
				ready := meta.FindStatusCondition(spa.Status.Conditions, autoscalingv1alpha1.ConditionReady)
				if spa.Status.ObservedGeneration == spa.Generation && ready != nil && ready.Status == metav1.ConditionTrue &&
					bounds[spa.Name] == [2]int32{ptr.Deref(spa.Status.MinReplicas, 0), spa.Status.MaxReplicas} {
					done++
				}
			}
		}); err != nil {
			return err
		}
		if done < n {
			return fmt.Errorf("%d of %d autoscalers converged", done, n)
		}
		pending := 0
		if err := pages(ctx, &autoscalingv1alpha1.ScheduleList{}, ns, func(l client.ObjectList) {
			for _, s := range l.(*autoscalingv1alpha1.ScheduleList).Items {
				if s.Status.ObservedGeneration != s.Generation || s.Status.Phase == "" {
					pending++
				}
			}
		}); err != nil {
			return err
		}
		if pending > 0 {
			return fmt.Errorf("%d Schedules have no status yet", pending)
		}
		return nil
	}
}

func pages(ctx context.Context, list client.ObjectList, ns string, each func(client.ObjectList)) error {
	cont := ""
	for {
		if err := env.Client.List(ctx, list, client.InNamespace(ns), client.Limit(500), client.Continue(cont)); err != nil {
			return err
		}
		each(list)
		if cont = list.(metav1.ListInterface).GetContinue(); cont == "" {
			return nil
		}
	}
}

func eventuallyEvery(t testing.TB, timeout, interval time.Duration, f func() error) {
	t.Helper()
	deadline := time.Now().Add(timeout)
	for {
		err := f()
		if err == nil {
			return
		}
		if time.Now().After(deadline) {
			t.Fatalf("after %s: %v", timeout, err)
		}
		time.Sleep(interval)
	}
}

// parallel runs f(0..n-1) on 16 goroutines and fails with the errors at the end.
func parallel(t testing.TB, n int, f func(i int) error) {
	t.Helper()
	var wg sync.WaitGroup
	errs := make(chan error, n)
	jobs := make(chan int)
	for range 16 {
		wg.Go(func() {
			for i := range jobs {
				if err := f(i); err != nil {
					errs <- err
				}
			}
		})
	}
	for i := range n {
		jobs <- i
	}
	close(jobs)
	wg.Wait()
	close(errs)
	for err := range errs {
		t.Fatal(err)
	}
}

// report adds the p50, p99 and maximum of ds, in milliseconds, as metrics named prefix-….
func report(b *testing.B, prefix string, ds []time.Duration) {
	if len(ds) == 0 {
		return
	}
	slices.Sort(ds)
	at := func(q float64) float64 {
		return float64(ds[min(len(ds)-1, int(q*float64(len(ds))))].Microseconds()) / 1000
	}
	b.ReportMetric(at(0.50), prefix+"-p50-ms")
	b.ReportMetric(at(0.99), prefix+"-p99-ms")
	b.ReportMetric(float64(ds[len(ds)-1].Microseconds())/1000, prefix+"-max-ms")
}

func envInt(t testing.TB, name string, def int) int {
	v := os.Getenv(name)
	if v == "" {
		return def
	}
	n, err := strconv.Atoi(v)
	if err != nil || n <= 0 {
		t.Fatalf("%s=%q is not a positive number", name, v)
	}
	return n
}
