package jobs_test

import (
	"context"
	"fmt"
	"testing"
	"time"

	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"sigs.k8s.io/controller-runtime/pkg/client"

	batchv1alpha1 "github.com/almanac-dev/almanac/api/batch/v1alpha1"
	calendarv1alpha1 "github.com/almanac-dev/almanac/api/calendar/v1alpha1"
)

// A cron ScheduledJob skips the slot on its Calendar's holiday (status says skipped, no Job),
// an edit of the Calendar wakes it (the next run moves past the day added, and the holiday's
// slot, which it did not wake for, is counted then), and the next slot after the holidays runs.
func TestCronSkipsItsHolidaySlotAndRunsTheNext(t *testing.T) {
	ns := namespace(t)
	clk := newTestClock(t, time.Now())
	startManager(t, ns, clk, nil)
	ctx := context.Background()

	// Three days from tomorrow (UTC), each with a slot at 06:00; the first is a holiday.
	day := clk.Now().UTC().Truncate(24 * time.Hour)
	slot := func(n int) time.Time { return day.Add(time.Duration(n)*24*time.Hour + 6*time.Hour) }
	date := func(n int) string { return slot(n).Format("2006-01-02") }
	cal := &calendarv1alpha1.Calendar{
		ObjectMeta: metav1.ObjectMeta{Namespace: ns, Name: "holidays"},
		Spec:       calendarv1alpha1.CalendarSpec{Days: []calendarv1alpha1.CalendarDay{{Date: date(1), Name: "Test Holiday"}}},
	}
	sj := newSJ(ns, "report")
	sj.Spec.Schedule = fmt.Sprintf("0 6 %d,%d,%d %d,%d *", slot(1).Day(), slot(2).Day(), slot(3).Day(), int(slot(1).Month()), int(slot(3).Month()))
	sj.Spec.Calendars = &calendarv1alpha1.Calendars{Skip: []calendarv1alpha1.CalendarReference{{Name: "holidays"}}}
	for _, obj := range []client.Object{cal, sj} {
		if err := env.Client.Create(ctx, obj); err != nil {
			t.Fatal(err)
		}
	}
	nextIs := func(want time.Time) func() (bool, error) {
		return func() (bool, error) {
			next := getSJ(t, ns, "report").Status.NextScheduleTime
			return next != nil && next.Equal(&metav1.Time{Time: want}), nil
		}
	}
	eventually(t, "the next run is the day after the holiday", nextIs(slot(2)))

	// The reconciler does not wake at the holiday's slot; it counts it when it next looks
	// (here: the Calendar's edit below).
	clk.JumpTo(slot(1).Add(time.Second))

	// The next day becomes a holiday too: the edit alone moves the next run.
	latest := &calendarv1alpha1.Calendar{}
	if err := env.Client.Get(ctx, client.ObjectKeyFromObject(cal), latest); err != nil {
		t.Fatal(err)
	}
	latest.Spec.Days = append(latest.Spec.Days, calendarv1alpha1.CalendarDay{Date: date(2), Name: "Bridge Day"})
	if err := env.Client.Update(ctx, latest); err != nil {
		t.Fatal(err)
	}
	eventually(t, "the Calendar's edit moves the next run past the day added", nextIs(slot(3)))
	eventually(t, "the holiday's slot recorded as skipped", func() (bool, error) {
		st := getSJ(t, ns, "report").Status
		return st.SkippedRuns == 1 && st.LastSkippedReason == "Test Holiday (Calendar holidays)", nil
	})
	if st := getSJ(t, ns, "report").Status; st.MissedRuns != 0 || st.LastScheduleTime != nil {
		t.Errorf("missedRuns %d, lastScheduleTime %v: a skipped slot neither runs nor is missed", st.MissedRuns, st.LastScheduleTime)
	}

	clk.JumpTo(slot(2).Add(time.Second))
	clk.JumpTo(slot(3).Add(time.Second))
	eventually(t, "the slot after the holidays runs", func() (bool, error) {
		st := getSJ(t, ns, "report").Status
		return st.LastScheduleTime != nil && st.LastScheduleTime.Equal(&metav1.Time{Time: slot(3)}) && st.SkippedRuns == 2, nil
	})
	got := jobsIn(t, ns, nil)
	if len(got) != 1 || got[0].Name != batchv1alpha1.ScheduledJobName("report", slot(3)) {
		t.Errorf("Jobs %v, want only the one of %s", got, slot(3))
	}
}
