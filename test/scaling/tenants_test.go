package scaling_test

import (
	"context"
	"fmt"
	"slices"
	"strings"
	"testing"
	"time"

	"k8s.io/apimachinery/pkg/api/meta"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/utils/ptr"
	"sigs.k8s.io/controller-runtime/pkg/client"

	autoscalingv1alpha1 "github.com/almanac-dev/almanac/api/autoscaling/v1alpha1"
	"github.com/almanac-dev/almanac/test/testenv"
)

// TestTouchingSchedulesUnderForbidLeaveTheManagerIdle is what a tenant can make the manager do
// with Schedules that admission would refuse, stored while the webhooks were off: 30 Cron
// Schedules that open every other minute, in alternation with each other (each touches the
// other kind without overlapping), beside 40 that open every hour at minutes 0 to 39 (each
// touches the next), all under overlapPolicy Forbid. Before resolution had a work budget, each
// reconcile of the autoscaler and of every Schedule compared the dense ones pairwise by
// walking a year of intervals (about 155 ms a pair, the whole set for every one of the 71
// reconciles of a boundary): the manager burned both cores without pause, and did not stop
// within its grace period.
//
// Now the dense Schedules are left out without a comparison (ForbiddenOverlap, reason
// NotCompared, saying why), the hourly ones apply, no reconcile runs between two boundaries,
// and the manager stops within its grace period even when stopped at a boundary, when every
// reconcile runs at once.
func TestTouchingSchedulesUnderForbidLeaveTheManagerIdle(t *testing.T) {
	ns := newNamespace(t)
	// A minute's turn, and 5 s after it: the next boundary is 55 s of real time away.
	start := time.Date(2030, 1, 14, 12, 0, 5, 0, time.UTC)
	clk := newOffsetClock(start)

	spa := newAutoscaler(ns, "web", 2, 10)
	spa.Spec.OverlapPolicy = autoscalingv1alpha1.OverlapPolicyForbid
	objs := []client.Object{spa}
	cron := func(name, schedule string, minReplicas int32) *autoscalingv1alpha1.Schedule {
		return &autoscalingv1alpha1.Schedule{
			ObjectMeta: metav1.ObjectMeta{Namespace: ns, Name: name},
			Spec: autoscalingv1alpha1.ScheduleSpec{
				ScaleTargetRef: autoscalingv1alpha1.ScaleTargetReference{Name: "web"}, MinReplicas: ptr.To(minReplicas),
				Type: autoscalingv1alpha1.ScheduleTypeCron, Schedule: schedule, Duration: "1m", TimeZone: "UTC",
			},
		}
	}
	for i := range 30 {
		objs = append(objs, cron(fmt.Sprintf("dense-%02d", i), fmt.Sprintf("%d-59/2 * * * *", i%2), 9))
	}
	for m := range 40 {
		objs = append(objs, cron(fmt.Sprintf("hourly-%02d", m), fmt.Sprintf("%d * * * *", m), int32(3+m%5)))
	}
	create(t, objs...)
	reconciles := testenv.NewReconciles()
	stop := startManagerOpts(t, clk, managerOpts{reconciles: reconciles}, ns)

	eventually(t, 45*time.Second, func() error {
		if err := converged(ns, 1)(); err != nil {
			return err
		}
		got := &autoscalingv1alpha1.ScheduledPodAutoscaler{}
		if err := env.Client.Get(context.Background(), client.ObjectKeyFromObject(spa), got); err != nil {
			return err
		}
		if c := meta.FindStatusCondition(got.Status.Conditions, autoscalingv1alpha1.ConditionForbiddenOverlap); c == nil ||
			!strings.Contains(c.Message, `Schedule "dense-00" is left out of the bounds: its windows were not compared with those of the other Schedules: it opens more than 8784 windows`) {
			return fmt.Errorf("autoscaler's ForbiddenOverlap condition: %+v", c)
		}
		if !slices.Equal(got.Status.ActiveSchedules, []string{"hourly-00"}) || ptr.Deref(got.Status.MinReplicas, 0) != 3 {
			return fmt.Errorf("active %v, minReplicas %d; want hourly-00 alone, 3", got.Status.ActiveSchedules, ptr.Deref(got.Status.MinReplicas, 0))
		}
		for i := range 30 {
			s := &autoscalingv1alpha1.Schedule{}
			if err := env.Client.Get(context.Background(), client.ObjectKey{Namespace: ns, Name: fmt.Sprintf("dense-%02d", i)}, s); err != nil {
				return err
			}
			if c := meta.FindStatusCondition(s.Status.Conditions, autoscalingv1alpha1.ConditionForbiddenOverlap); c == nil || c.Reason != autoscalingv1alpha1.ReasonNotCompared {
				return fmt.Errorf("Schedule %s: ForbiddenOverlap %+v, want reason NotCompared", s.Name, c)
			}
		}
		return hasBounds(ns, "web", 3, 10)()
	})

	// Between two boundaries nothing runs: once the reconciles of the start are over, no
	// object of either controller is due to be reconciled before the next boundary, 12:01:00
	// (the work queues' own record, not a wait: what is due later cannot run sooner).
	boundary := time.Date(2030, 1, 14, 12, 1, 0, 0, time.UTC)
	for _, c := range []string{"scheduledpodautoscaler", "schedule"} {
		reconciles.WaitIdle(t, c)
		next, key, ok := reconciles.NextWake(c)
		at := clk.Now().Add(time.Until(next))
		switch {
		case ok && at.Before(boundary.Add(-time.Second)):
			t.Errorf("%s %s is due to be reconciled again at %s, before the next boundary %s: want nothing between two boundaries",
				c, key, at.Format(time.TimeOnly), boundary.Format(time.TimeOnly))
		case c == "scheduledpodautoscaler" && (!ok || at.After(boundary.Add(time.Second))):
			// The autoscaler asks for the boundary itself: the queue's record is read right.
			t.Errorf("the autoscaler is due at %s (%v), want the boundary %s", at.Format(time.TimeOnly), ok, boundary.Format(time.TimeOnly))
		}
	}

	stop()

	// A manager that starts reconciles every object at once, as at a boundary under Forbid;
	// stopped in the middle of that, it still stops within its grace period (run fails the
	// test otherwise).
	stop = startManager(t, clk, ns)
	time.Sleep(300 * time.Millisecond)
	stopped := time.Now()
	stop()
	t.Logf("the manager stopped %s after it was asked to, while it reconciled everything", time.Since(stopped).Round(time.Millisecond))
}
