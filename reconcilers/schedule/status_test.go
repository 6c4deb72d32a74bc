package schedule

import (
	"fmt"
	"strings"
	"testing"
	"time"

	"github.com/google/go-cmp/cmp"
	"k8s.io/apimachinery/pkg/api/meta"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	clocktesting "k8s.io/utils/clock/testing"

	autoscalingv1alpha1 "github.com/almanac-dev/almanac/api/autoscaling/v1alpha1"
	"github.com/almanac-dev/almanac/api/scaling"
	"github.com/almanac-dev/almanac/api/timing"
)

func instant(t *testing.T, s string) time.Time {
	t.Helper()
	at, err := time.Parse(time.RFC3339, s)
	if err != nil {
		t.Fatal(err)
	}
	return at.UTC()
}

func newSchedule(spec autoscalingv1alpha1.ScheduleSpec) *autoscalingv1alpha1.Schedule {
	spec.ScaleTargetRef = autoscalingv1alpha1.ScaleTargetReference{Name: "web"}
	return &autoscalingv1alpha1.Schedule{
		ObjectMeta: metav1.ObjectMeta{Namespace: "default", Name: "s", Generation: 3},
		Spec:       spec,
	}
}

// simulate follows the status from `from` to `to`, waking up exactly when Status says the
// next change is due (as Reconcile's RequeueAfter does), and writing each status back as the
// reconciler would; it returns each status written.
func simulate(t *testing.T, s *autoscalingv1alpha1.Schedule, from, to string) []string {
	t.Helper()
	clk := clocktesting.NewFakeClock(instant(t, from))
	end := instant(t, to)
	var steps []string
	for range 100 {
		st, next := Status(s, nil, clk.Now())
		s.Status = st
		steps = append(steps, fmt.Sprintf("%s %s", clk.Now().Format(time.RFC3339), st.Phase))
		if next.IsZero() || !next.Before(end) {
			return steps
		}
		clk.SetTime(next)
	}
	t.Fatal("more than 100 wake-ups: polling")
	return nil
}

// TestOneShotPhases: a OneShot is Scheduled until its window closes, then Completed; the
// reconciler wakes once, at the close (not at the open: the autoscaler reports that).
func TestOneShotPhases(t *testing.T) {
	s := newSchedule(autoscalingv1alpha1.ScheduleSpec{
		Type: autoscalingv1alpha1.ScheduleTypeOneShot, StartTime: "2027-03-03T10:00", EndTime: "2027-03-03T18:30", TimeZone: "America/New_York",
	})
	want := []string{
		"2027-03-01T00:00:00Z Scheduled",
		"2027-03-03T23:30:00Z Completed",
	}
	if d := cmp.Diff(want, simulate(t, s, "2027-03-01T00:00:00Z", "2027-03-08T00:00:00Z")); d != "" {
		t.Errorf("(-want +got):\n%s", d)
	}
	if s.Status.ObservedGeneration != 3 {
		t.Errorf("observedGeneration = %d, want 3", s.Status.ObservedGeneration)
	}
	if c := meta.FindStatusCondition(s.Status.Conditions, autoscalingv1alpha1.ConditionValid); c == nil || c.Status != metav1.ConditionTrue {
		t.Errorf("Valid condition = %+v, want True", c)
	}
}

// TestRepeatingScheduleNeverWakes: a Weekly Schedule across a DST change is Scheduled, and
// its status has nothing to change at its windows' boundaries: no wake-up, no write.
func TestRepeatingScheduleNeverWakes(t *testing.T) {
	s := newSchedule(autoscalingv1alpha1.ScheduleSpec{
		Type: autoscalingv1alpha1.ScheduleTypeWeekly, StartDayOfWeek: "Friday", StartTime: "18:00",
		EndDayOfWeek: "Monday", EndTime: "08:00", TimeZone: "Europe/Berlin",
	})
	want := []string{"2027-03-24T00:00:00Z Scheduled"}
	if d := cmp.Diff(want, simulate(t, s, "2027-03-24T00:00:00Z", "2027-04-01T00:00:00Z")); d != "" {
		t.Errorf("(-want +got):\n%s", d)
	}
	// Inside a window it reads the same.
	if st, next := Status(s, nil, instant(t, "2027-03-27T12:00:00Z")); st.Phase != autoscalingv1alpha1.SchedulePhaseScheduled || !next.IsZero() {
		t.Errorf("in a window: phase %s, next %v; want Scheduled, none", st.Phase, next)
	}
}

func TestSuspendedScheduleAnnouncesNothing(t *testing.T) {
	s := newSchedule(autoscalingv1alpha1.ScheduleSpec{Type: autoscalingv1alpha1.ScheduleTypeDaily, StartTime: "00:00", EndTime: "23:00"})
	s.Spec.Suspend = true
	st, next := Status(s, nil, instant(t, "2027-03-01T12:00:00Z"))
	if st.Phase != autoscalingv1alpha1.SchedulePhaseSuspended || !next.IsZero() {
		t.Errorf("got phase %s, next %v; want Suspended, none", st.Phase, next)
	}
}

func TestInvalidSchedule(t *testing.T) {
	s := newSchedule(autoscalingv1alpha1.ScheduleSpec{Type: autoscalingv1alpha1.ScheduleTypeCron, Schedule: "TZ=Europe/Paris 0 9 * * *", Duration: "1h"})
	st, next := Status(s, nil, instant(t, "2027-03-01T12:00:00Z"))
	c := meta.FindStatusCondition(st.Conditions, autoscalingv1alpha1.ConditionValid)
	if c == nil || c.Status != metav1.ConditionFalse || c.Reason != autoscalingv1alpha1.ReasonInvalidSchedule || !strings.Contains(c.Message, "spec.schedule: ") {
		t.Errorf("Valid condition = %+v, want False/InvalidSchedule naming spec.schedule", c)
	}
	if !next.IsZero() {
		t.Errorf("next = %s, want none (an invalid Schedule has no boundaries)", next)
	}
	if st.Phase != autoscalingv1alpha1.SchedulePhaseInvalid {
		t.Errorf("phase %s, want Invalid", st.Phase)
	}
}

func TestConditionTimeKeptWhileUnchanged(t *testing.T) {
	s := newSchedule(autoscalingv1alpha1.ScheduleSpec{Type: autoscalingv1alpha1.ScheduleTypeDaily, StartTime: "09:00", EndTime: "17:00"})
	first, _ := Status(s, nil, instant(t, "2027-03-01T08:00:00Z"))
	s.Status = first
	second, _ := Status(s, nil, instant(t, "2027-03-01T09:00:00Z"))
	if got, want := second.Conditions[0].LastTransitionTime, first.Conditions[0].LastTransitionTime; !got.Equal(&want) {
		t.Errorf("lastTransitionTime changed from %s to %s although Valid stayed True", want, got)
	}
}

// TestLeftOutCondition: under overlapPolicy Forbid the left-out Schedule gets the
// ForbiddenOverlap condition, and loses it when it is no longer left out; the reconciler then
// looks again at the autoscaler's next transition when that comes before its own.
func TestLeftOutCondition(t *testing.T) {
	now := instant(t, "2027-03-01T10:30:00Z")
	s := newSchedule(autoscalingv1alpha1.ScheduleSpec{Type: autoscalingv1alpha1.ScheduleTypeDaily, StartTime: "10:00", EndTime: "12:00", TimeZone: "UTC"})
	zone, _ := timing.NormalizeZone("UTC")
	own := instant(t, "2027-03-01T12:00:00Z")
	d := &scaling.Desired{
		Next: instant(t, "2027-03-01T11:00:00Z"),
		LeftOut: []scaling.LeftOut{{Name: "s", Kept: "first", Zone: zone,
			Overlap: timing.Interval{Start: instant(t, "2027-03-01T10:00:00Z"), End: instant(t, "2027-03-01T11:00:00Z")}}},
	}
	st := s.Status
	if next := LeftOut(&st, s, d, now, own); !next.Equal(d.Next) {
		t.Errorf("next %s, want the autoscaler's %s", next, d.Next)
	}
	c := meta.FindStatusCondition(st.Conditions, autoscalingv1alpha1.ConditionForbiddenOverlap)
	want := `ScheduledPodAutoscaler "web" has overlapPolicy Forbid and this Schedule's windows overlap those of Schedule "first", created earlier, ` +
		`from 2027-03-01 10:00 to 11:00 UTC: it is left out of the autoscaler's bounds until the overlap is over; ` +
		`move or shorten one of the windows, delete one of the Schedules, or set overlapPolicy to Max`
	if c == nil || c.Status != metav1.ConditionTrue || c.Reason != autoscalingv1alpha1.ReasonLeftOut || c.Message != want {
		t.Fatalf("condition %+v", c)
	}
	d.LeftOut = nil
	LeftOut(&st, s, d, now, own)
	if c := meta.FindStatusCondition(st.Conditions, autoscalingv1alpha1.ConditionForbiddenOverlap); c != nil {
		t.Errorf("condition %+v after the overlap went away", c)
	}
	if next := LeftOut(&st, s, nil, now, own); !next.Equal(own) {
		t.Errorf("without Forbid: next %s, want its own %s", next, own)
	}
}
