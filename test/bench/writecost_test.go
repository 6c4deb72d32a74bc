package bench_test

import (
	"context"
	"fmt"
	"slices"
	"testing"
	"time"

	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/utils/ptr"
	"sigs.k8s.io/controller-runtime/pkg/client"

	autoscalingv1alpha1 "github.com/almanac-dev/almanac/api/autoscaling/v1alpha1"
	"github.com/almanac-dev/almanac/api/index"
)

// writeCostResult is what the write-cost figure measured: the API server's CPU per request
// for the two writes a transition makes, each issued alone, n at a time, once per round.
type writeCostResult struct {
	N, Rounds int
	// Apply and Status are the medians over the rounds of the API server's CPU per request:
	// an HPA apply as the raw client issues it, and an autoscaler's status patch as the
	// manager issues it (a merge patch with the resourceVersion precondition, under almanac's
	// field manager, of the fields a transition changes).
	Apply, Status time.Duration
	// Ratios is Status ÷ Apply for each round.
	Ratios []float64
}

// BenchmarkWriteCost: the API server's CPU for ALMANAC_BENCH_WRITECOST_N (300) HPA applies
// and as many autoscaler status patches, ALMANAC_BENCH_WRITECOST_ROUNDS (5) times, with no
// manager running. It is the floor under the boundary figure's CPU ratio: a transition that
// writes the HPA and the autoscaler's status costs the API server at least 1 + Status ÷
// Apply raw applies.
func BenchmarkWriteCost(b *testing.B) {
	n, rounds := size(b, "ALMANAC_BENCH_WRITECOST_N", 300), size(b, "ALMANAC_BENCH_WRITECOST_ROUNDS", 5)
	for range b.N {
		res := writeCost(b, n, rounds)
		b.ReportMetric(float64(res.Apply.Microseconds())/1000, "apply-cpu-ms")
		b.ReportMetric(float64(res.Status.Microseconds())/1000, "status-cpu-ms")
		res.report()
	}
}

func (res writeCostResult) report() {
	r := ratio(res.Status, res.Apply)
	table.add(row{
		Figure:  fmt.Sprintf("write cost: %d autoscaler status patches × %d, the API server's CPU per write", res.N, res.Rounds),
		Almanac: "a status patch: " + ms(res.Status),
		Other:   "an HPA apply: " + ms(res.Apply),
		Ratio:   times(r),
		Goal:    "1 + ratio ≤ 3 (the boundary's CPU goal, with a status per transition)",
		Met:     yes(1+r <= 3),
	})
	parts := make([]string, len(res.Ratios))
	for i, x := range res.Ratios {
		parts[i] = times(x)
	}
	table.note("write cost", "status patch ÷ HPA apply in each round: %v", parts)
}

// writeCost creates n autoscalers and n HPAs, then in each round applies the HPAs (new
// bounds) and patches the autoscalers' statuses (a transition's report), 16 at a time each,
// reading the API server's CPU around each. The objects are read before each measure, as
// the manager reads them from its cache.
func writeCost(tb testing.TB, n, rounds int) writeCostResult {
	tb.Helper()
	ctx := context.Background()
	ns := newNamespace(tb, "writecost", true)
	cleanup(tb, ns)
	c := newClient(tb, harnessConfig())
	names := make([]string, n)
	for i := range names {
		names[i] = fmt.Sprintf("app-%03d", i)
	}
	if err := parallel(16, n, func(i int) error {
		if err := c.Create(ctx, newAutoscaler(ns, names[i])); err != nil {
			return err
		}
		return applyHPA(ctx, c, ns, names[i], 2, 10)
	}); err != nil {
		tb.Fatal(err)
	}
	api := children()["kube-apiserver"]
	perRequest := func(f func(i int) error) time.Duration {
		time.Sleep(settle)
		before := cpuTime(api)
		if err := parallel(16, n, f); err != nil {
			tb.Fatal(err)
		}
		return (cpuTime(api) - before) / time.Duration(n)
	}
	res := writeCostResult{N: n, Rounds: rounds}
	var applies, statuses []time.Duration
	for r := range rounds {
		applies = append(applies, perRequest(func(i int) error { return applyHPA(ctx, c, ns, names[i], int32(3+r), 10) }))
		list := &autoscalingv1alpha1.ScheduledPodAutoscalerList{}
		if err := c.List(ctx, list, client.InNamespace(ns)); err != nil {
			tb.Fatal(err)
		}
		statuses = append(statuses, perRequest(func(i int) error {
			old := &list.Items[i]
			spa := old.DeepCopy()
			transitionReport(spa, r)
			return c.Status().Patch(ctx, spa, client.MergeFromWithOptions(old, client.MergeFromWithOptimisticLock{}), client.FieldOwner(index.FieldManager))
		}))
		res.Ratios = append(res.Ratios, ratio(statuses[r], applies[r]))
	}
	res.Apply, res.Status = median(applies), median(statuses)
	return res
}

// transitionReport sets the status the manager writes after the r-th transition of spa:
// the bounds and the Schedule now active, the next transition, the transition applied, and
// the Ready and SchedulesValid conditions.
func transitionReport(spa *autoscalingv1alpha1.ScheduledPodAutoscaler, r int) {
	now := metav1.NewTime(time.Now().UTC().Truncate(time.Second))
	active := fmt.Sprintf("%s-%d", spa.Name, r)
	minReplicas := int32(3 + r)
	st := &spa.Status
	st.ObservedGeneration = spa.Generation
	st.MinReplicas, st.MaxReplicas = ptr.To(minReplicas), 10
	st.ActiveSchedules = []string{active}
	st.NextTransitionTime = ptr.To(metav1.NewTime(now.Add(time.Hour)))
	st.LastAppliedTransition = &autoscalingv1alpha1.AppliedTransition{
		BoundaryTime: now, AppliedTime: now, Lag: metav1.Duration{Duration: 12 * time.Millisecond},
		MinReplicas: minReplicas, MaxReplicas: 10,
	}
	st.Conditions = []metav1.Condition{{
		Type: autoscalingv1alpha1.ConditionReady, Status: metav1.ConditionTrue, Reason: autoscalingv1alpha1.ReasonBoundsApplied,
		Message:            fmt.Sprintf("HorizontalPodAutoscaler %s has minReplicas %d and maxReplicas 10 (active Schedules: %s)", spa.Name, minReplicas, active),
		ObservedGeneration: spa.Generation, LastTransitionTime: now,
	}, {
		Type: autoscalingv1alpha1.ConditionSchedulesValid, Status: metav1.ConditionTrue, Reason: autoscalingv1alpha1.ReasonAllSchedulesValid,
		Message:            "Every Schedule of this autoscaler could be evaluated",
		ObservedGeneration: spa.Generation, LastTransitionTime: now,
	}}
}

// median returns the median of ds (the lower middle for an even count).
func median(ds []time.Duration) time.Duration {
	if len(ds) == 0 {
		return 0
	}
	s := slices.Clone(ds)
	slices.Sort(s)
	return s[(len(s)-1)/2]
}
