package scaling_test

import (
	"context"
	"fmt"
	"strings"
	"testing"
	"time"

	"k8s.io/apimachinery/pkg/api/meta"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/utils/ptr"
	"sigs.k8s.io/controller-runtime/pkg/client"

	autoscalingv1alpha1 "github.com/almanac-dev/almanac/api/autoscaling/v1alpha1"
	calendarv1alpha1 "github.com/almanac-dev/almanac/api/calendar/v1alpha1"
)

// TestScheduleClosedOnAHoliday runs the manager with a clock set just before midnight UTC: a
// Daily 22:00–02:00 window is open; at midnight the holiday of its Calendar closes it (the
// HPA goes back to its baseline at the boundary); editing the Calendar wakes the autoscaler
// (the day removed, the window is open again at once; put back, closed again); and at the
// next midnight, after the holiday, the window reopens at the boundary.
func TestScheduleClosedOnAHoliday(t *testing.T) {
	t.Parallel()
	ctx := context.Background()
	ns := newNamespace(t)
	holiday := "2030-04-05"
	clk := newOffsetClock(instant(t, "2030-04-04T23:59:52Z"))

	cal := &calendarv1alpha1.Calendar{
		ObjectMeta: metav1.ObjectMeta{Namespace: ns, Name: "holidays"},
		Spec:       calendarv1alpha1.CalendarSpec{Days: []calendarv1alpha1.CalendarDay{{Date: holiday, Name: "Test Day"}}},
	}
	night := &autoscalingv1alpha1.Schedule{
		ObjectMeta: metav1.ObjectMeta{Namespace: ns, Name: "night"},
		Spec: autoscalingv1alpha1.ScheduleSpec{
			ScaleTargetRef: autoscalingv1alpha1.ScaleTargetReference{Name: "web"},
			MinReplicas:    ptr.To[int32](6),
			MaxReplicas:    ptr.To[int32](20),
			Type:           autoscalingv1alpha1.ScheduleTypeDaily,
			StartTime:      "22:00",
			EndTime:        "02:00",
			Calendars:      &calendarv1alpha1.Calendars{Skip: []calendarv1alpha1.CalendarReference{{Name: "holidays"}}},
		},
	}
	create(t, cal, newAutoscaler(ns, "web", 2, 10), night)
	startManager(t, clk, ns)

	eventually(t, 10*time.Second, hasBounds(ns, "web", 6, 20))
	eventually(t, 10*time.Second, calendarsCondition(ns, "night", metav1.ConditionTrue, ""))

	// Midnight: the holiday closes the window.
	clk.sleepUntil(instant(t, "2030-04-05T00:00:00Z"))
	eventually(t, 5*time.Second, hasBounds(ns, "web", 2, 10))
	eventually(t, 5*time.Second, nextTransition(ns, "web", "2030-04-06T00:00:00Z"))

	// The day removed from the Calendar: the window is open again, without waiting.
	setDays(t, ns, "holidays", nil)
	eventually(t, 5*time.Second, hasBounds(ns, "web", 6, 20))
	// Put back: closed again.
	setDays(t, ns, "holidays", []calendarv1alpha1.CalendarDay{{Date: holiday, Name: "Test Day"}})
	eventually(t, 5*time.Second, hasBounds(ns, "web", 2, 10))

	// Just before the next midnight; an edit of the Calendar that changes nothing of its
	// instants makes the autoscaler look again, and it wakes at the boundary.
	clk.set(instant(t, "2030-04-05T23:59:54Z"))
	setDays(t, ns, "holidays", []calendarv1alpha1.CalendarDay{{Date: holiday, Name: "Test Day (renamed)"}})
	eventually(t, 5*time.Second, nextTransition(ns, "web", "2030-04-06T00:00:00Z"))
	if err := hasBounds(ns, "web", 2, 10)(); err != nil {
		t.Fatalf("before the boundary: %v", err)
	}
	clk.sleepUntil(instant(t, "2030-04-06T00:00:00Z"))
	eventually(t, 5*time.Second, hasBounds(ns, "web", 6, 20))

	// A Calendar that does not exist holds the Schedule, and its condition says so.
	if err := env.Client.Delete(ctx, cal); err != nil {
		t.Fatal(err)
	}
	eventually(t, 5*time.Second, hasBounds(ns, "web", 2, 10))
	eventually(t, 5*time.Second, calendarsCondition(ns, "night", metav1.ConditionFalse, `Calendar holidays does not exist in namespace "`+ns+`"`))
}

func setDays(t *testing.T, ns, name string, days []calendarv1alpha1.CalendarDay) {
	t.Helper()
	cal := &calendarv1alpha1.Calendar{}
	if err := env.Client.Get(context.Background(), client.ObjectKey{Namespace: ns, Name: name}, cal); err != nil {
		t.Fatal(err)
	}
	cal.Spec.Days = days
	if err := env.Client.Update(context.Background(), cal); err != nil {
		t.Fatal(err)
	}
}

func nextTransition(ns, name, want string) func() error {
	return func() error {
		spa := &autoscalingv1alpha1.ScheduledPodAutoscaler{}
		if err := env.Client.Get(context.Background(), client.ObjectKey{Namespace: ns, Name: name}, spa); err != nil {
			return err
		}
		if got := spa.Status.NextTransitionTime; got == nil || got.UTC().Format(time.RFC3339) != want {
			return fmt.Errorf("nextTransitionTime %v, want %s", got, want)
		}
		return nil
	}
}

func calendarsCondition(ns, name string, status metav1.ConditionStatus, says string) func() error {
	return func() error {
		s := &autoscalingv1alpha1.Schedule{}
		if err := env.Client.Get(context.Background(), client.ObjectKey{Namespace: ns, Name: name}, s); err != nil {
			return err
		}
		c := meta.FindStatusCondition(s.Status.Conditions, calendarv1alpha1.ConditionCalendars)
		if c == nil || c.Status != status || !strings.Contains(c.Message, says) {
			return fmt.Errorf("condition Calendars %+v, want %s saying %q", c, status, says)
		}
		return nil
	}
}
