package scheduledpodautoscaler

import (
	"context"
	"slices"
	"testing"
	"time"

	autoscalingv2 "k8s.io/api/autoscaling/v2"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/runtime"
	"k8s.io/apimachinery/pkg/types"
	clocktesting "k8s.io/utils/clock/testing"
	"k8s.io/utils/ptr"
	ctrl "sigs.k8s.io/controller-runtime"
	"sigs.k8s.io/controller-runtime/pkg/client"
	"sigs.k8s.io/controller-runtime/pkg/client/fake"

	autoscalingv1alpha1 "github.com/almanac-dev/almanac/api/autoscaling/v1alpha1"
	"github.com/almanac-dev/almanac/api/scheme"
	"github.com/almanac-dev/almanac/reconcilers/base"
)

// noEvents records nothing.
type noEvents struct{}

func (noEvents) Eventf(runtime.Object, runtime.Object, string, string, string, string, ...any) {}

// TestHeldReportKeepsItsWakeUp: under Job-owner writes that never stop (two EventJobs
// creating a Job every 100 ms, their records overlapping, for two minutes on a fake clock),
// the Lanes are never idle, so no flush wakes the autoscaler. Its reconcile still runs when
// its Schedule's window opens and applies the HPA within 1 s of the boundary, and its held
// status is written (at most DefaultMaxReportDelay after it was first held back), driven only
// by the RequeueAfter that each reconcile returns.
func TestHeldReportKeepsItsWakeUp(t *testing.T) {
	ctx := context.Background()
	start := time.Date(2030, 1, 7, 8, 59, 30, 0, time.UTC)
	boundary := start.Add(30 * time.Second) // 09:00, when the window opens
	clk := clocktesting.NewFakeClock(start)
	key := types.NamespacedName{Namespace: "ns", Name: "web"}

	spa := &autoscalingv1alpha1.ScheduledPodAutoscaler{
		ObjectMeta: metav1.ObjectMeta{Namespace: key.Namespace, Name: key.Name, UID: "uid-web"},
		Spec: autoscalingv1alpha1.ScheduledPodAutoscalerSpec{HorizontalPodAutoscalerSpec: &autoscalingv2.HorizontalPodAutoscalerSpec{
			ScaleTargetRef: autoscalingv2.CrossVersionObjectReference{APIVersion: "apps/v1", Kind: "Deployment", Name: key.Name},
			MinReplicas:    ptr.To[int32](1),
			MaxReplicas:    5,
		}},
	}
	window := &autoscalingv1alpha1.Schedule{
		ObjectMeta: metav1.ObjectMeta{Namespace: key.Namespace, Name: "morning"},
		Spec: autoscalingv1alpha1.ScheduleSpec{
			ScaleTargetRef: autoscalingv1alpha1.ScaleTargetReference{Name: key.Name},
			MinReplicas:    ptr.To[int32](3),
			MaxReplicas:    ptr.To[int32](10),
			Type:           autoscalingv1alpha1.ScheduleTypeOneShot,
			StartTime:      "2030-01-07T09:00",
			EndTime:        "2030-01-07T10:00",
			TimeZone:       "UTC",
		},
	}
	c := fake.NewClientBuilder().WithScheme(scheme.New()).
		WithStatusSubresource(&autoscalingv1alpha1.ScheduledPodAutoscaler{}, &autoscalingv1alpha1.Schedule{}).
		WithIndex(&autoscalingv1alpha1.Schedule{}, autoscalingv1alpha1.ScheduleTargetField, func(o client.Object) []string {
			return autoscalingv1alpha1.ScheduleTarget(o)
		}).
		WithObjects(spa, window).
		Build()
	lanes := base.NewLanes(clk, base.DefaultMaxReportDelay)
	r := &Reconciler{Base: base.Base{Client: c, APIReader: c, Clock: clk, Recorder: noEvents{}, Lanes: lanes}}
	ordered := lanes.Reconciler(controllerName, r) // as Complete builds it

	// The EventJobs' traffic: each step, both create a Job (due at once, under way, done) and
	// start the record of it, which is written while the next step's Jobs go out, so that a
	// record is always being written.
	var recording []func()
	traffic := func() {
		for _, name := range []string{"upstream-a", "upstream-b"} {
			ej := types.NamespacedName{Namespace: "ns", Name: name}
			lanes.Expect("eventjob", ej, clk.Now())
			lanes.Urgent("eventjob", ej)()
			recording = append(recording, lanes.Recording())
		}
		for len(recording) > 2 {
			recording[0]()
			recording = recording[1:]
		}
	}

	var (
		nextAt     = clk.Now() // when the autoscaler asked to be reconciled again (zero: never)
		appliedAt  time.Time   // when the HPA was seen with the window's bounds
		reconciles int
	)
	for end := start.Add(2 * time.Minute); clk.Now().Before(end); clk.Step(100 * time.Millisecond) {
		traffic()
		if !nextAt.IsZero() && !clk.Now().Before(nextAt) {
			reconciles++
			res, err := ordered.Reconcile(ctx, ctrl.Request{NamespacedName: key})
			if err != nil {
				t.Fatalf("reconcile at %s: %v", clk.Now().Format(time.TimeOnly), err)
			}
			nextAt = time.Time{}
			if res.RequeueAfter > 0 {
				nextAt = clk.Now().Add(res.RequeueAfter)
			}
		}
		hpa := &autoscalingv2.HorizontalPodAutoscaler{}
		if err := c.Get(ctx, key, hpa); err == nil && appliedAt.IsZero() && ptr.Deref(hpa.Spec.MinReplicas, 0) == 3 && hpa.Spec.MaxReplicas == 10 {
			appliedAt = clk.Now()
		}
	}

	switch lag := appliedAt.Sub(boundary); {
	case appliedAt.IsZero():
		t.Errorf("the window that opened at %s was never applied (%d reconciles)", boundary.Format(time.TimeOnly), reconciles)
	case lag < 0 || lag > time.Second:
		t.Errorf("the window was applied %s after the boundary, want within 1s", lag)
	}
	got := &autoscalingv1alpha1.ScheduledPodAutoscaler{}
	if err := c.Get(ctx, key, got); err != nil {
		t.Fatal(err)
	}
	if st := got.Status; !slices.Equal(st.ActiveSchedules, []string{"morning"}) || ptr.Deref(st.MinReplicas, 0) != 3 || st.MaxReplicas != 10 {
		t.Errorf("status after two minutes of traffic: activeSchedules %q, bounds %d-%d; want the window's report (morning, 3-10)",
			st.ActiveSchedules, ptr.Deref(st.MinReplicas, 0), st.MaxReplicas)
	}
}
