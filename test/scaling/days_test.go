package scaling_test

import (
	"context"
	"fmt"
	"slices"
	"testing"
	"time"

	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/types"
	clocktesting "k8s.io/utils/clock/testing"
	"k8s.io/utils/ptr"
	"sigs.k8s.io/controller-runtime/pkg/client"
	"sigs.k8s.io/controller-runtime/pkg/reconcile"

	autoscalingv1alpha1 "github.com/almanac-dev/almanac/api/autoscaling/v1alpha1"
	"github.com/almanac-dev/almanac/reconcilers/base"
	"github.com/almanac-dev/almanac/reconcilers/schedule"
	"github.com/almanac-dev/almanac/reconcilers/scheduledpodautoscaler"
)

// TestWeekdayWindowOpensFridayNotSaturday creates an autoscaler and a Daily Schedule with
// daysOfWeek Monday to Friday (09:00 to 18:00, Berlin time) on the API server, and runs both
// reconcilers at chosen instants of a fake clock: on Friday the window opens and the HPA gets
// its bounds; on Saturday it stays closed and the HPA has the baseline; after Friday's window
// the next transition the reconcilers announce is Monday's opening, not Saturday's.
func TestWeekdayWindowOpensFridayNotSaturday(t *testing.T) {
	t.Parallel()
	ctx := context.Background()
	ns := newNamespace(t)
	spa := newAutoscaler(ns, "web", 2, 10)
	weekdays := &autoscalingv1alpha1.Schedule{
		ObjectMeta: metav1.ObjectMeta{Namespace: ns, Name: "weekdays"},
		Spec: autoscalingv1alpha1.ScheduleSpec{
			ScaleTargetRef: autoscalingv1alpha1.ScaleTargetReference{Name: "web"},
			MinReplicas:    ptr.To[int32](6),
			MaxReplicas:    ptr.To[int32](20),
			Type:           autoscalingv1alpha1.ScheduleTypeDaily,
			StartTime:      "09:00",
			EndTime:        "18:00",
			DaysOfWeek:     []string{"Monday", "Tuesday", "Wednesday", "Thursday", "Friday"},
			TimeZone:       "Europe/Berlin",
		},
	}
	create(t, spa, weekdays)

	mgr := newManager(t, ns)
	run(t, mgr)
	clk := clocktesting.NewFakeClock(time.Time{})
	b := base.Base{Client: mgr.GetClient(), APIReader: mgr.GetAPIReader(), Clock: clk, Recorder: mgr.GetEventRecorder("almanac")}
	spaReconciler := &scheduledpodautoscaler.Reconciler{Base: b}
	scheduleReconciler := &schedule.Reconciler{Base: b, EvaluationErrors: scheduledpodautoscaler.ScheduleEvaluationErrors()}
	eventually(t, 10*time.Second, func() error {
		schedules := &autoscalingv1alpha1.ScheduleList{}
		err := mgr.GetClient().List(ctx, schedules, client.InNamespace(ns), client.MatchingFields{autoscalingv1alpha1.ScheduleTargetField: "web"})
		if err == nil && len(schedules.Items) != 1 {
			err = fmt.Errorf("the cache has %d Schedules of web, want 1", len(schedules.Items))
		}
		return err
	})

	monday := instant(t, "2030-04-08T07:00:00Z") // 09:00 CEST on Monday 8 April 2030
	for _, tt := range []struct {
		at             string
		min, max       int32
		active         bool
		nextTransition string
		why            string
	}{
		{"2030-04-05T06:59:00Z", 2, 10, false, "2030-04-05T07:00:00Z", "Friday 08:59 Berlin: closed, opens at 09:00"},
		{"2030-04-05T07:00:00Z", 6, 20, true, "2030-04-05T16:00:00Z", "Friday 09:00 Berlin: open"},
		{"2030-04-05T16:00:00Z", 2, 10, false, monday.Format(time.RFC3339), "Friday 18:00 Berlin: closed until Monday"},
		{"2030-04-06T07:00:00Z", 2, 10, false, monday.Format(time.RFC3339), "Saturday 09:00 Berlin: stays closed"},
		{"2030-04-07T12:00:00Z", 2, 10, false, monday.Format(time.RFC3339), "Sunday 14:00 Berlin: stays closed"},
		{"2030-04-08T07:00:00Z", 6, 20, true, "2030-04-08T16:00:00Z", "Monday 09:00 Berlin: open again"},
	} {
		t.Run(tt.at, func(t *testing.T) {
			clk.SetTime(instant(t, tt.at))
			eventually(t, 5*time.Second, cacheCaughtUp(mgr.GetClient(), ns, "web"))
			if _, err := spaReconciler.Reconcile(ctx, reconcile.Request{NamespacedName: types.NamespacedName{Namespace: ns, Name: "web"}}); err != nil {
				t.Fatal(err)
			}
			if _, err := scheduleReconciler.Reconcile(ctx, reconcile.Request{NamespacedName: types.NamespacedName{Namespace: ns, Name: "weekdays"}}); err != nil {
				t.Fatal(err)
			}
			if err := hasBounds(ns, "web", tt.min, tt.max)(); err != nil {
				t.Errorf("%s: %v", tt.why, err)
			}
			got := &autoscalingv1alpha1.ScheduledPodAutoscaler{}
			if err := env.Client.Get(ctx, client.ObjectKeyFromObject(spa), got); err != nil {
				t.Fatal(err)
			}
			if active := slices.Contains(got.Status.ActiveSchedules, "weekdays"); active != tt.active ||
				got.Status.NextTransitionTime == nil || got.Status.NextTransitionTime.UTC().Format(time.RFC3339) != tt.nextTransition {
				t.Errorf("%s: status active %v, next transition %v; want %v, %s", tt.why, got.Status.ActiveSchedules, got.Status.NextTransitionTime, tt.active, tt.nextTransition)
			}
			s := &autoscalingv1alpha1.Schedule{}
			if err := env.Client.Get(ctx, client.ObjectKeyFromObject(weekdays), s); err != nil {
				t.Fatal(err)
			}
			// The Schedule's status does not follow its windows (its autoscaler's does).
			if s.Status.Phase != autoscalingv1alpha1.SchedulePhaseScheduled {
				t.Errorf("%s: Schedule phase %s, want Scheduled", tt.why, s.Status.Phase)
			}
		})
	}
}
