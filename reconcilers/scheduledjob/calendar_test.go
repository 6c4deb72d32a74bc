package scheduledjob

import (
	"strings"
	"testing"
	"time"

	"github.com/google/go-cmp/cmp"
	"k8s.io/apimachinery/pkg/api/meta"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/utils/ptr"

	batchv1alpha1 "github.com/almanac-dev/almanac/api/batch/v1alpha1"
	calendarv1alpha1 "github.com/almanac-dev/almanac/api/calendar/v1alpha1"
)

// holidays is a Calendar "holidays" in namespace ns, in Europe/Berlin.
func holidays(days ...calendarv1alpha1.CalendarDay) *calendarv1alpha1.Book {
	return calendarv1alpha1.NewBook([]calendarv1alpha1.Calendar{{
		ObjectMeta: metav1.ObjectMeta{Namespace: "ns", Name: "holidays"},
		Spec:       calendarv1alpha1.CalendarSpec{TimeZone: "Europe/Berlin", Days: days},
	}}, nil)
}

func skipHolidays(sj *batchv1alpha1.ScheduledJob) *batchv1alpha1.ScheduledJob {
	sj.Spec.Calendars = &calendarv1alpha1.Calendars{Skip: []calendarv1alpha1.CalendarReference{{Name: "holidays"}}}
	return sj
}

func TestCronSlotOnAHolidayIsSkippedNotMissed(t *testing.T) {
	w := &world{t: t, sj: skipHolidays(cronSJ("0 6 * * *", "Europe/Berlin", utc("2027-12-23T12:00:00Z"))),
		book: holidays(calendarv1alpha1.CalendarDay{Date: "12-25", Name: "Christmas Day"})}
	w.run(utc("2027-12-24T00:00:00Z"), utc("2027-12-27T00:00:00Z"))
	if diff := cmp.Diff([]time.Time{utc("2027-12-24T05:00:00Z"), utc("2027-12-26T05:00:00Z")}, w.created); diff != "" {
		t.Errorf("Jobs created (-want +got):\n%s", diff)
	}
	st := w.sj.Status
	if st.SkippedRuns != 1 || st.LastSkippedTime == nil || !st.LastSkippedTime.Equal(ptr.To(metav1.NewTime(utc("2027-12-25T05:00:00Z")))) ||
		st.LastSkippedReason != "Christmas Day (Calendar holidays)" {
		t.Errorf("skipped = %d, %v, %q", st.SkippedRuns, st.LastSkippedTime, st.LastSkippedReason)
	}
	if st.MissedRuns != 0 {
		t.Errorf("missedRuns = %d: a skipped slot is not missed", st.MissedRuns)
	}
	c := meta.FindStatusCondition(st.Conditions, calendarv1alpha1.ConditionCalendars)
	if c == nil || c.Status != metav1.ConditionTrue {
		t.Errorf("condition Calendars = %+v", c)
	}
}

func TestNextScheduleTimePassesOverHolidays(t *testing.T) {
	sj := skipHolidays(cronSJ("0 6 * * *", "Europe/Berlin", utc("2027-12-23T12:00:00Z")))
	book := holidays(calendarv1alpha1.CalendarDay{Date: "12-25"}, calendarv1alpha1.CalendarDay{Date: "12-26"})
	p := decideAt(sj, book, nil, time.Time{}, utc("2027-12-24T06:00:00Z"))
	if !p.next.Equal(utc("2027-12-27T05:00:00Z")) {
		t.Errorf("next = %s, want the 27th", p.next)
	}
	// The reconciler wakes at that run, not at the holidays' slots: it counts them then
	// (issue 38: it woke, and wrote status and an event, at each of them).
	if want := utc("2027-12-27T05:00:00Z").Sub(utc("2027-12-24T06:00:00Z")); p.requeueAfter != want {
		t.Errorf("requeueAfter = %s, want %s", p.requeueAfter, want)
	}
}

// After downtime over a holiday, the slot that may still run is the latest one that the
// calendar does not skip.
func TestDowntimeAcrossAHolidayRunsTheLatestRunnableSlot(t *testing.T) {
	sj := skipHolidays(cronSJ("0 6 * * *", "Europe/Berlin", utc("2027-12-23T12:00:00Z")))
	sj.Spec.StartingDeadlineSeconds = ptr.To[int64](3 * 24 * 3600)
	sj.Status.LastScheduleTime = ptr.To(metav1.NewTime(utc("2027-12-23T05:00:00Z")))
	p := decideAt(sj, holidays(calendarv1alpha1.CalendarDay{Date: "12-25"}), nil, time.Time{}, utc("2027-12-25T12:00:00Z"))
	if !p.run.Equal(utc("2027-12-24T05:00:00Z")) || p.skipped != 1 || p.missedTotal() != 0 {
		t.Errorf("run %s, skipped %d, missed %v", p.run, p.skipped, p.missed)
	}
}

// A calendar that does not exist holds every slot: the reconciler does not wake at them (the
// Calendars condition says why it is held), and counts them when it next looks (a Job, the
// spec or a calendar changed, the manager started).
func TestMissingCalendarHoldsTheScheduledJob(t *testing.T) {
	w := &world{t: t, sj: skipHolidays(cronSJ("0 6 * * *", "UTC", utc("2027-12-23T12:00:00Z")))}
	if p := w.step(utc("2027-12-24T00:00:00Z")); p.requeueAfter != 0 || !p.next.IsZero() {
		t.Errorf("requeueAfter %s, next %s; want no wake-up while every slot is held", p.requeueAfter, p.next)
	}
	p := w.step(utc("2027-12-26T00:00:00Z"))
	if len(w.created) != 0 {
		t.Errorf("Jobs created %v while the calendar does not exist", w.created)
	}
	if p.requeueAfter != 0 || p.skipped != 2 {
		t.Errorf("requeueAfter %s, skipped %d; want no wake-up, the 2 slots counted at once", p.requeueAfter, p.skipped)
	}
	st := w.sj.Status
	c := meta.FindStatusCondition(st.Conditions, calendarv1alpha1.ConditionCalendars)
	if c == nil || c.Status != metav1.ConditionFalse || c.Reason != calendarv1alpha1.ReasonCalendarNotUsable ||
		!strings.Contains(c.Message, `spec.calendars.skip[0]: Calendar holidays does not exist in namespace "ns"`) {
		t.Errorf("condition Calendars = %+v", c)
	}
	if st.SkippedRuns != 2 || !strings.Contains(st.LastSkippedReason, "does not exist") {
		t.Errorf("skipped = %d, %q", st.SkippedRuns, st.LastSkippedReason)
	}
	if st.NextScheduleTime != nil {
		t.Errorf("nextScheduleTime = %s while every slot is held", st.NextScheduleTime)
	}
}

func TestOneShotOnAHolidayIsSkipped(t *testing.T) {
	w := &world{t: t, sj: skipHolidays(atSJ("2027-12-25T10:00", "Europe/Berlin", utc("2027-12-23T12:00:00Z"))),
		book: holidays(calendarv1alpha1.CalendarDay{Date: "2027-12-25", Name: "Christmas Day"})}
	p := w.step(utc("2027-12-24T00:00:00Z"))
	if !p.next.IsZero() || p.requeueAfter != utc("2027-12-25T09:00:00Z").Sub(utc("2027-12-24T00:00:00Z")) {
		t.Errorf("next %s, requeueAfter %s", p.next, p.requeueAfter)
	}
	w.step(utc("2027-12-25T09:00:00Z"))
	if len(w.created) != 0 || w.sj.Status.Phase != batchv1alpha1.ScheduledJobPhaseSkipped || w.sj.Status.SkippedRuns != 1 {
		t.Errorf("created %v, phase %s, skipped %d", w.created, w.sj.Status.Phase, w.sj.Status.SkippedRuns)
	}
	// And stays so: the skip is on the record.
	w.step(utc("2027-12-25T09:05:00Z"))
	if len(w.created) != 0 || w.sj.Status.SkippedRuns != 1 {
		t.Errorf("created %v, skipped %d after a second look", w.created, w.sj.Status.SkippedRuns)
	}
}

func TestSkippedReasonIsCutToTheSchema(t *testing.T) {
	long := strings.Repeat("é", 700)
	if got := truncate(long, maxSkippedReason); len(got) > maxSkippedReason || !strings.HasSuffix(got, "…") {
		t.Errorf("truncate = %d bytes", len(got))
	}
}

// TestBusinessDaysWithHolidays: the reconciler reads spec.businessDays and the calendars
// through the engine, so the last business day moves before a holiday at the month's end,
// and the run is never one that the calendars skip.
func TestBusinessDaysWithHolidays(t *testing.T) {
	sj := skipHolidays(cronSJ("0 18 LW * *", "Europe/Berlin", utc("2027-11-01T00:00:00Z")))
	sj.Spec.BusinessDays = []string{"Monday", "Tuesday", "Wednesday", "Thursday"}
	w := &world{t: t, sj: sj, book: holidays(calendarv1alpha1.CalendarDay{Date: "12-30"}, calendarv1alpha1.CalendarDay{Date: "02-29"})}
	w.run(utc("2027-11-15T00:00:00Z"), utc("2028-03-01T00:00:00Z"))
	// Monday to Thursday: 2027-11-30 (Tue); 2027-12-30 (Thu) is a holiday, the 29th (Wed);
	// 2028-01-31 (Mon); 2028-02-29 (Tue) is a holiday, the 28th (Mon).
	want := []time.Time{utc("2027-11-30T17:00:00Z"), utc("2027-12-29T17:00:00Z"), utc("2028-01-31T17:00:00Z"), utc("2028-02-28T17:00:00Z")}
	if diff := cmp.Diff(want, w.created); diff != "" {
		t.Errorf("Jobs created (-want +got):\n%s", diff)
	}
	if st := w.sj.Status; st.SkippedRuns != 0 || st.MissedRuns != 0 {
		t.Errorf("skipped %d, missed %d; want none", st.SkippedRuns, st.MissedRuns)
	}
}

// TestBusinessDaysClosedByCalendars: calendars that close every business day leave the
// business-day form no slot: the ScheduledJob is invalid with the engine's reason, and the
// reconciler does not loop.
func TestBusinessDaysClosedByCalendars(t *testing.T) {
	sj := skipHolidays(cronSJ("0 18 LW * *", "Europe/Berlin", utc("2027-11-01T00:00:00Z")))
	book := calendarv1alpha1.NewBook([]calendarv1alpha1.Calendar{{
		ObjectMeta: metav1.ObjectMeta{Namespace: "ns", Name: "holidays"},
		Spec:       calendarv1alpha1.CalendarSpec{Periods: []calendarv1alpha1.CalendarPeriod{{Start: "2020-01-01T00:00", End: "2045-01-01T00:00"}}},
	}}, nil)
	p := decideAt(sj, book, nil, time.Time{}, utc("2027-12-01T00:00:00Z"))
	want := `schedule: "0 18 LW * *" has no slot within eight years after 2027-12-01 01:00 Europe/Berlin: its business days (Monday to Friday, at 18:00) ` +
		`are all closed by Calendar holidays, so its business-day forms find no day; check the calendars (spec.calendars) and the business days (spec.businessDays)`
	if p.invalid == nil || p.invalid.Error() != want {
		t.Errorf("invalid = %v, want %q", p.invalid, want)
	}
	if !p.run.IsZero() || p.requeueAfter < 0 {
		t.Errorf("run %s, requeueAfter %s", p.run, p.requeueAfter)
	}
}

// A week-long freeze of an every-minute ScheduledJob: the reconciler wakes at the last slot
// before it and then at the first slot after it, not at the 10,080 slots in between, and that
// one look counts them all, in one status write and one event. Issue 38: it woke at each
// skipped slot (about 43,000 status writes and events for a month).
func TestAFreezeIsCountedAtOnceAndWokenPast(t *testing.T) {
	freeze := calendarv1alpha1.NewBook([]calendarv1alpha1.Calendar{{
		ObjectMeta: metav1.ObjectMeta{Namespace: "ns", Name: "freeze"},
		Spec: calendarv1alpha1.CalendarSpec{TimeZone: "UTC", Periods: []calendarv1alpha1.CalendarPeriod{
			{Start: "2027-12-20T00:00", End: "2027-12-27T00:00", Name: "Year-end freeze"}}},
	}}, nil)
	sj := cronSJ("* * * * *", "UTC", utc("2027-12-19T23:58:30Z"))
	sj.Spec.Calendars = &calendarv1alpha1.Calendars{Skip: []calendarv1alpha1.CalendarReference{{Name: "freeze"}}}
	w := &world{t: t, sj: sj, book: freeze}
	now := utc("2027-12-19T23:59:00Z")
	wakes := 0
	for now.Before(utc("2027-12-27T00:00:30Z")) {
		wakes++
		p := w.step(now)
		if p.requeueAfter <= 0 {
			t.Fatalf("RequeueAfter %v at %s", p.requeueAfter, now)
		}
		now = now.Add(p.requeueAfter)
	}
	if wakes != 2 {
		t.Errorf("%d wake-ups from 23:59 before the freeze to the end of it, want 2 (its last slot before, and the first after)", wakes)
	}
	st := w.sj.Status
	if st.SkippedRuns != 7*24*60 || st.LastSkippedReason != "Year-end freeze (Calendar freeze)" {
		t.Errorf("skippedRuns %d (%q), want %d", st.SkippedRuns, st.LastSkippedReason, 7*24*60)
	}
	if diff := cmp.Diff([]time.Time{utc("2027-12-19T23:59:00Z"), utc("2027-12-27T00:00:00Z")}, w.created); diff != "" {
		t.Errorf("runs (-want +got):\n%s", diff)
	}
	if st.MissedRuns != 0 {
		t.Errorf("missedRuns %d: a skipped slot is not missed", st.MissedRuns)
	}
}

// A freeze longer than one reconcile's budget (maxSlotWalk slots) is counted in parts, one
// reconcile after another, and adds up.
func TestAFreezeLongerThanTheBudgetIsCountedInParts(t *testing.T) {
	freeze := calendarv1alpha1.NewBook([]calendarv1alpha1.Calendar{{
		ObjectMeta: metav1.ObjectMeta{Namespace: "ns", Name: "freeze"},
		Spec: calendarv1alpha1.CalendarSpec{TimeZone: "UTC", Periods: []calendarv1alpha1.CalendarPeriod{
			{Start: "2027-01-01T00:00", End: "2027-04-01T00:00"}}},
	}}, nil)
	sj := cronSJ("* * * * *", "UTC", utc("2026-12-31T23:59:30Z"))
	sj.Spec.Calendars = &calendarv1alpha1.Calendars{Skip: []calendarv1alpha1.CalendarReference{{Name: "freeze"}}}
	w := &world{t: t, sj: sj, book: freeze}
	now, parts := utc("2027-04-01T00:00:00Z"), 0
	for {
		parts++
		if p := w.step(now); !p.more {
			break
		}
	}
	const slots = (31 + 28 + 31) * 24 * 60
	if want := (slots + maxSlotWalk - 1) / maxSlotWalk; parts != want {
		t.Errorf("%d parts, want %d", parts, want)
	}
	if st := w.sj.Status; st.SkippedRuns != slots || len(w.created) != 1 || !w.created[0].Equal(now) {
		t.Errorf("skippedRuns %d, runs %v; want %d and the first slot after the freeze", st.SkippedRuns, w.created, slots)
	}
}
