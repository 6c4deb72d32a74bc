package scaling_test

import (
	"context"
	"fmt"
	"math"
	"testing"
	"time"

	"github.com/prometheus/client_golang/prometheus"
	dto "github.com/prometheus/client_model/go"
	"k8s.io/apimachinery/pkg/types"
	"k8s.io/utils/ptr"
	"sigs.k8s.io/controller-runtime/pkg/client"
	crmetrics "sigs.k8s.io/controller-runtime/pkg/metrics"

	autoscalingv1alpha1 "github.com/almanac-dev/almanac/api/autoscaling/v1alpha1"
	"github.com/almanac-dev/almanac/reconcilers/scheduledpodautoscaler"
)

// TestMetricsFollowTransitions: the scaling metrics say what happened, exactly once per
// transition. The autoscaler's first HPA is not a transition; one boundary (one Schedule ends,
// another starts, the bounds change) counts one applied transition and one lag observation
// equal to the lag in status; active_schedules follows the open windows and goes away with
// the autoscaler; a broken Schedule counts as an evaluation error in both reconcilers.
//
// It does not run in parallel: the counters are process-wide, and only this test may move
// them while it runs.
func TestMetricsFollowTransitions(t *testing.T) {
	ctx := context.Background()
	ns := newNamespace(t)
	boundary := time.Date(2030, 1, 15, 10, 0, 0, 0, time.UTC)
	// The manager starts five informers and resolves three API groups before its first
	// reconcile: on a loaded machine that takes a few seconds.
	clk := newOffsetClock(boundary.Add(-10 * time.Second))

	bad := oneShot(ns, "broken", "web", boundary.Add(-time.Hour), boundary.Add(time.Hour), 50, 60)
	bad.Spec.TimeZone = "Europe/Atlantis"
	spa := newAutoscaler(ns, "web", 2, 10)
	create(t, spa,
		oneShot(ns, "early", "web", boundary.Add(-time.Hour), boundary, 3, 12),
		oneShot(ns, "late", "web", boundary, boundary.Add(time.Hour), 6, 30),
		bad)

	applied0, lagCount0, lagSum0 := counterValue(t, scheduledpodautoscaler.TransitionsApplied), histogramCount(t), histogramSum(t)
	spaErrors0 := counterValue(t, scheduledpodautoscaler.EvaluationErrors.WithLabelValues("ScheduledPodAutoscaler"))
	scheduleErrors0 := counterValue(t, scheduledpodautoscaler.EvaluationErrors.WithLabelValues("Schedule"))

	reconciles := startCountedManager(t, clk, ns)
	eventually(t, 10*time.Second, hasBounds(ns, "web", 3, 12))
	eventually(t, 10*time.Second, func() error {
		if got, ok := activeSchedules(t, ns, "web"); !ok || got != 1 {
			return fmt.Errorf("active_schedules{%s/web} = %v (present %v), want 1 (early)", ns, got, ok)
		}
		if d := counterValue(t, scheduledpodautoscaler.EvaluationErrors.WithLabelValues("ScheduledPodAutoscaler")) - spaErrors0; d < 1 {
			return fmt.Errorf("schedule_evaluation_errors_total{kind=ScheduledPodAutoscaler} rose by %v, want at least 1", d)
		}
		if d := counterValue(t, scheduledpodautoscaler.EvaluationErrors.WithLabelValues("Schedule")) - scheduleErrors0; d < 1 {
			return fmt.Errorf("schedule_evaluation_errors_total{kind=Schedule} rose by %v, want at least 1", d)
		}
		return nil
	})
	if !clk.Now().Before(boundary) {
		t.Fatalf("the manager took until %s to converge, after the boundary %s; the test cannot tell creation from the transition", clk.Now(), boundary)
	}
	if d := counterValue(t, scheduledpodautoscaler.TransitionsApplied) - applied0; d != 0 {
		t.Errorf("transitions_applied_total rose by %v when the HPA was created, want 0 (creation is not a transition)", d)
	}

	clk.sleepUntil(boundary)
	eventually(t, 10*time.Second, hasBounds(ns, "web", 6, 30))
	var lag time.Duration
	eventually(t, 10*time.Second, func() error {
		got := &autoscalingv1alpha1.ScheduledPodAutoscaler{}
		if err := env.Client.Get(ctx, types.NamespacedName{Namespace: ns, Name: "web"}, got); err != nil {
			return err
		}
		lt := got.Status.LastAppliedTransition
		if lt == nil || !lt.BoundaryTime.Time.Equal(boundary) {
			return fmt.Errorf("lastAppliedTransition = %+v, want the boundary %s", lt, boundary)
		}
		lag = lt.Lag.Duration
		return nil
	})
	// Stays the same: one transition, counted once, also after another reconcile (the fence:
	// a change of the spec that moves no bound).
	reconciles.Fence(t, "scheduledpodautoscaler", client.ObjectKeyFromObject(spa), func() {
		latest := &autoscalingv1alpha1.ScheduledPodAutoscaler{}
		if err := env.Client.Get(ctx, client.ObjectKeyFromObject(spa), latest); err != nil {
			t.Fatal(err)
		}
		patch := client.MergeFrom(latest.DeepCopy())
		latest.Spec.HorizontalPodAutoscalerSpec.Metrics[0].Resource.Target.AverageUtilization = ptr.To[int32](71)
		if err := env.Client.Patch(ctx, latest, patch); err != nil {
			t.Fatal(err)
		}
	})
	reconciles.WaitIdle(t, "scheduledpodautoscaler")
	if d := counterValue(t, scheduledpodautoscaler.TransitionsApplied) - applied0; d != 1 {
		t.Errorf("transitions_applied_total rose by %v over one boundary, want 1", d)
	}
	if d := histogramCount(t) - lagCount0; d != 1 {
		t.Errorf("transition_lag_seconds count rose by %d over one boundary, want 1", d)
	}
	if d := histogramSum(t) - lagSum0; math.Abs(d-lag.Seconds()) > 1e-5 {
		t.Errorf("transition_lag_seconds sum rose by %vs, want the lag in status, %s", d, lag)
	}
	if got, ok := activeSchedules(t, ns, "web"); !ok || got != 1 {
		t.Errorf("active_schedules{%s/web} = %v (present %v), want 1 (late)", ns, got, ok)
	}

	// The series goes with the autoscaler.
	if err := env.Client.Delete(ctx, spa); err != nil {
		t.Fatal(err)
	}
	eventually(t, 10*time.Second, func() error {
		if got, ok := activeSchedules(t, ns, "web"); ok {
			return fmt.Errorf("active_schedules{%s/web} = %v after the autoscaler was deleted, want no series", ns, got)
		}
		return nil
	})
}

func counterValue(t testing.TB, c prometheus.Metric) float64 {
	t.Helper()
	m := &dto.Metric{}
	if err := c.Write(m); err != nil {
		t.Fatal(err)
	}
	return m.GetCounter().GetValue()
}

func histogram(t testing.TB) *dto.Histogram {
	t.Helper()
	m := &dto.Metric{}
	if err := scheduledpodautoscaler.TransitionLag.Write(m); err != nil {
		t.Fatal(err)
	}
	return m.GetHistogram()
}

func histogramCount(t testing.TB) uint64 { return histogram(t).GetSampleCount() }

func histogramSum(t testing.TB) float64 { return histogram(t).GetSampleSum() }

// activeSchedules reads almanac_autoscaler_active_schedules{namespace=ns,name=name} from the
// registry that the manager's metrics server serves; ok is false if there is no such series.
func activeSchedules(t testing.TB, ns, name string) (value float64, ok bool) {
	t.Helper()
	families, err := crmetrics.Registry.Gather()
	if err != nil {
		t.Fatal(err)
	}
	for _, f := range families {
		if f.GetName() != "almanac_autoscaler_active_schedules" {
			continue
		}
		for _, m := range f.GetMetric() {
			labels := map[string]string{}
			for _, l := range m.GetLabel() {
				labels[l.GetName()] = l.GetValue()
			}
			if labels["namespace"] == ns && labels["name"] == name {
				return m.GetGauge().GetValue(), true
			}
		}
	}
	return 0, false
}
