package timing

import (
	"errors"
	"fmt"
	"math"
	"strings"
	"time"
)

// FieldAt is the field name of a JobSpec's at, as FieldError.Field reports it (schedule and
// timeZone are FieldSchedule and FieldTimeZone).
const FieldAt = "at"

// JobSpec is when a ScheduledJob runs, as the user wrote it: once at a wall time (At) or on
// a cron schedule (Schedule), in TimeZone. Exactly one of At and Schedule is set. A
// timestamp written in Schedule (the form of the "AT" controller that ScheduledJob replaces)
// means a one-shot at that time: admission moves it to at, and every other consumer reads
// it the same way.
type JobSpec struct {
	At, Schedule string
	// TimeZone is the zone of At and Schedule; "" means DefaultZone (the field was omitted).
	TimeZone string
	// Spread (a Go duration, "" for none; only with a cron Schedule) shifts every slot by the
	// same offset in [0, spread), SpreadOffset of Namespace and Name.
	Spread string
	// Namespace and Name are the ScheduledJob's, from which the spread's offset is derived.
	Namespace, Name string
	// BusinessDays are the weekdays that the business-day forms of Schedule (LW, nW, W#n)
	// count as business days; empty means Monday to Friday. Only a schedule with such a form
	// may set them.
	BusinessDays []string
	// Calendars skip slots (spec.calendars, compiled), and close days for the business-day
	// forms.
	Calendars Mask
}

// JobSchedule is a compiled JobSpec: a one-shot instant or a cron schedule, in a zone.
type JobSchedule struct {
	// Zone is the normalized time zone.
	Zone Zone
	// At is the one-shot's wall time, and Due the instant it names by the DST rule; both are
	// zero for a cron schedule.
	At  LocalDateTime
	Due time.Time
	// Cron is the cron schedule; zero (it never fires) for a one-shot.
	Cron Cron
	// FromSchedule is true when the one-shot's time was written in Schedule.
	FromSchedule bool
	// Spread is the cron schedule's spread (0 for none), and Offset the shift of every slot
	// that it gives this ScheduledJob (SpreadOffset): the nominal instant of a slot is the
	// instant of the cron slot plus Offset. Next, Prev and Runs return nominal instants.
	Spread, Offset time.Duration
	// Calendars skip the slots whose nominal instants they close.
	Calendars Mask
	// BusinessDays are the weekdays that the business-day forms of Cron count, Monday first
	// (Monday to Friday when the spec names none); nil when the schedule has no such form.
	BusinessDays []time.Weekday
}

// OneShot reports whether the schedule runs once, at Due.
func (s *JobSchedule) OneShot() bool { return !s.Due.IsZero() }

// String describes the schedule: `at 2027-11-05T12:00` or `cron "30 1 * * *"`.
func (s *JobSchedule) String() string {
	if s.OneShot() {
		return "at " + s.At.String()
	}
	text := fmt.Sprintf("cron %q", s.Cron.String())
	if s.Spread > 0 {
		text += fmt.Sprintf(" spread %s (+%s)", s.Spread, s.Offset)
	}
	if s.Cron.forms.business() {
		text += " on business days " + weekdaysText(s.Cron.biz.weekdaySet())
	}
	return text
}

// Next returns the nominal instant of the first run strictly after `after`, in UTC: the
// cron slot after after − Offset, shifted by Offset (the one-shot's Due, if it is after
// `after`). It returns the zero time when there is none.
func (s *JobSchedule) Next(after time.Time) time.Time {
	if s.OneShot() {
		if s.Due.After(after) {
			return s.Due
		}
		return time.Time{}
	}
	return s.shift(s.Cron.Next(s.Zone.Location, after.Add(-s.Offset)))
}

// Prev returns the nominal instant of the latest run at or before atOrBefore, in UTC (the
// one-shot's Due, if it is not after atOrBefore), or the zero time when there is none.
func (s *JobSchedule) Prev(atOrBefore time.Time) time.Time {
	if s.OneShot() {
		if !s.Due.After(atOrBefore) {
			return s.Due
		}
		return time.Time{}
	}
	return s.shift(s.Cron.Prev(s.Zone.Location, atOrBefore.Add(-s.Offset)))
}

// shift moves a cron slot's instant by Offset; the zero time (no slot) stays zero.
func (s *JobSchedule) shift(slot time.Time) time.Time {
	if slot.IsZero() {
		return slot
	}
	return slot.Add(s.Offset)
}

// Runs returns the nominal instants of the runs in the half-open range [from, to), in order,
// in UTC, less the slots that the calendars skip (see SkippedRuns). Each run is a step of budget; when the budget stops the walk, it returns the
// budget's error.
func (s *JobSchedule) Runs(budget *Budget, from, to time.Time) ([]time.Time, error) {
	all, err := s.slots(budget, from, to)
	if err != nil || s.Calendars.Empty() {
		return all, err
	}
	runs := all[:0]
	for _, t := range all {
		if _, skipped := s.Skips(t); !skipped {
			runs = append(runs, t)
		}
	}
	return runs, nil
}

// slots returns the nominal instants of the slots in [from, to), skipped or not.
func (s *JobSchedule) slots(budget *Budget, from, to time.Time) ([]time.Time, error) {
	if s.OneShot() {
		if !s.Due.Before(from) && s.Due.Before(to) {
			return []time.Time{s.Due}, budget.Spend(1)
		}
		return nil, nil
	}
	slots, err := s.Cron.Slots(budget, s.Zone.Location, from.Add(-s.Offset), to.Add(-s.Offset))
	for i := range slots {
		slots[i] = slots[i].Add(s.Offset)
	}
	return slots, err
}

// Compile validates the spec and returns the schedule, or every problem found (a bad zone
// does not stop at and schedule from being checked, in UTC). Errors name the fields at,
// schedule and timeZone.
func (s JobSpec) Compile() (*JobSchedule, []FieldError) {
	var errs []FieldError
	fail := func(field, value string, err error) {
		errs = append(errs, FieldError{Field: field, Value: value, Detail: err.Error()})
	}
	zone, zoneErr := compileZone(s.TimeZone)
	if zoneErr != nil {
		errs = append(errs, *zoneErr)
	}
	out := &JobSchedule{Zone: zone, Calendars: s.Calendars}

	switch {
	case s.At != "" && s.Schedule != "":
		fail(FieldSchedule, s.Schedule, errors.New("at and schedule are both set: set exactly one, at to run the Job once or schedule to run it on a cron schedule"))
	case s.At != "":
		at, err := ParseAt(s.At, zone.Location)
		if err != nil {
			fail(FieldAt, s.At, err)
			break
		}
		out.At, out.Due = at, at.In(zone.Location)
	case LooksLikeDateTime(s.Schedule):
		at, err := ParseAt(s.Schedule, zone.Location)
		if err != nil {
			fail(FieldSchedule, s.Schedule, fmt.Errorf("%w; %s", err, legacyHint))
			break
		}
		out.At, out.Due, out.FromSchedule = at, at.In(zone.Location), true
	case s.Schedule != "":
		weekdays, bizErrs := parseBusinessDays(s.BusinessDays)
		errs = append(errs, bizErrs...)
		c, err := parseCron(s.Schedule, weekdays)
		if err != nil {
			fail(FieldSchedule, s.Schedule, err)
			break
		}
		if err := checkBusinessDaysUsed(s.BusinessDays, c); err != nil {
			fail(FieldBusinessDays, strings.Join(s.BusinessDays, ", "), err)
		}
		out.Cron = c
	default:
		fail(FieldSchedule, s.Schedule, errors.New(`neither at nor schedule is set, so the Job would never run: set schedule to a cron schedule, e.g. "30 2 * * *", or at to a wall time in the time zone to run it once, e.g. "2027-09-01T10:00"`))
	}
	if spread, err := ParseSpread(s.Spread); err != nil {
		fail(FieldSpread, s.Spread, err)
	} else if spread > 0 && (s.At != "" || LooksLikeDateTime(s.Schedule)) {
		fail(FieldSpread, s.Spread, errSpreadOneShot)
	} else {
		out.Spread, out.Offset = spread, SpreadOffset(s.Namespace, s.Name, spread)
	}
	if len(s.BusinessDays) > 0 && (s.At != "" || LooksLikeDateTime(s.Schedule)) {
		fail(FieldBusinessDays, strings.Join(s.BusinessDays, ", "), errors.New("business days are for the business-day forms of a cron schedule (LW, 15W, W#2): remove businessDays from a ScheduledJob that runs once at"))
	}
	if len(errs) > 0 {
		return nil, errs
	}
	if out.Cron.forms.business() {
		weekdays, _ := parseBusinessDays(s.BusinessDays)
		// The business days are tested at the nominal instant of the day's first slot, so
		// that a slot that a business-day form picks is never one that the calendars skip.
		out.Cron = out.Cron.withBusiness(weekdays, s.Calendars, zone.Location, out.Offset)
		for _, d := range weekOrder {
			if weekdays&(1<<d) != 0 {
				out.BusinessDays = append(out.BusinessDays, d)
			}
		}
	}
	return out, nil
}

// NextSlot is Next that never answers with the zero time: the nominal instant of the first
// slot strictly after `after` (a slot that the calendars skip included, as Next), or an error
// that says why there is none: the one-shot's instant has passed, or, wrapping ErrNoSlot, no
// slot within eight years (the calendars close every business day that a business-day form
// could pick); or the budget's error. Each day the walk looks at is a step of budget (nil: no
// budget; the walk is bounded by the eight years all the same).
//
// Catch-up and backfill walk slots with it, so that an impossible rule stops them with a
// reason instead of an empty answer.
func (s *JobSchedule) NextSlot(budget *Budget, after time.Time) (time.Time, error) {
	if s.OneShot() {
		if s.Due.After(after) {
			return s.Due, nil
		}
		return time.Time{}, &noSlotError{fmt.Sprintf("the one run, at %s, is not after %s", InstantText(s.Due, s.Zone), InstantText(after, s.Zone))}
	}
	slot, err := s.Cron.NextWithin(budget, s.Zone.Location, after.Add(-s.Offset))
	if err != nil {
		return time.Time{}, err
	}
	return slot.Add(s.Offset), nil
}

// PrevSlot is Prev that never answers with the zero time: the nominal instant of the latest
// slot at or before atOrBefore, or an error that says why there is none (wrapping ErrNoSlot),
// or the budget's error. Each day the walk looks at is a step of budget (nil: no budget).
func (s *JobSchedule) PrevSlot(budget *Budget, atOrBefore time.Time) (time.Time, error) {
	if s.OneShot() {
		if !s.Due.After(atOrBefore) {
			return s.Due, nil
		}
		return time.Time{}, &noSlotError{fmt.Sprintf("the one run, at %s, is after %s", InstantText(s.Due, s.Zone), InstantText(atOrBefore, s.Zone))}
	}
	slot, err := s.Cron.PrevWithin(budget, s.Zone.Location, atOrBefore.Add(-s.Offset))
	if err != nil {
		return time.Time{}, err
	}
	return slot.Add(s.Offset), nil
}

// legacyHint says where a one-shot's time belongs.
const legacyHint = "schedule takes a cron schedule; to run the Job once, write the time in at (yyyy-MM-ddTHH:mm, a wall time in timeZone)"

// LegacyHint is what admission says about a timestamp that stays in schedule: it belongs in
// at.
func LegacyHint() string { return legacyHint }

// LooksLikeDateTime reports whether s starts like a date (yyyy-MM-dd), which no cron schedule
// does: a ScheduledJob's schedule that does is a one-shot's time.
func LooksLikeDateTime(s string) bool {
	t := strings.TrimSpace(s)
	if len(t) < 10 {
		return false
	}
	for i, c := range []byte(t[:10]) {
		switch i {
		case 4, 7:
			if c != '-' {
				return false
			}
		default:
			if c < '0' || c > '9' {
				return false
			}
		}
	}
	return true
}

// The starting deadline: a run due at an instant may still start while it is at most
// startingDeadlineSeconds late, lateness counted in whole seconds, so that a run that starts
// a few milliseconds after its instant is on time even with a deadline of 0. Admission
// rejects a one-shot whose deadline has passed exactly when the reconciler would no longer
// start it: both ask WithinDeadline.

// Lateness is how late a run due at due would start at now, in whole seconds (truncated); 0
// when now is not after due.
func Lateness(due, now time.Time) time.Duration {
	if !now.After(due) {
		return 0
	}
	return now.Sub(due).Truncate(time.Second)
}

// WithinDeadline reports whether a run due at due may still start at now, given
// startingDeadlineSeconds.
func WithinDeadline(due, now time.Time, deadlineSeconds int64) bool {
	return Lateness(due, now) <= Deadline(deadlineSeconds)
}

// LastStart is the last second in which a run due at due may start: due +
// startingDeadlineSeconds; the run may start until that second has ended.
func LastStart(due time.Time, deadlineSeconds int64) time.Time {
	return due.Add(Deadline(deadlineSeconds))
}

// maxDeadlineSeconds is the longest deadline a time.Duration holds, in whole seconds (about
// 292 years).
const maxDeadlineSeconds = int64(math.MaxInt64 / time.Second)

// Deadline is startingDeadlineSeconds as a Duration, saturating: a deadline longer than a
// Duration holds (about 292 years) is the longest Duration, which no lateness exceeds, and a
// negative one is 0. time.Duration(s)*time.Second would wrap around instead: 9999999999
// seconds became a negative deadline that every run had passed, so an every-minute ScheduledJob
// never ran while admission and preview said it would. The schema bounds the field far below
// (batchv1alpha1.MaxStartingDeadlineSeconds); objects stored before that bound existed are
// read by this rule.
func Deadline(deadlineSeconds int64) time.Duration {
	switch {
	case deadlineSeconds <= 0:
		return 0
	case deadlineSeconds > maxDeadlineSeconds:
		return math.MaxInt64
	}
	return time.Duration(deadlineSeconds) * time.Second
}

// HourAfter returns the wall time in loc of the start of the local hour one hour after now:
// a time to suggest for a one-shot whose time has passed ("2027-01-15T13:00" at 12:30). It
// is taken on the local clock, so that it is on the hour in zones with half- or quarter-hour
// offsets too.
func HourAfter(now time.Time, loc *time.Location) LocalDateTime {
	t := now.In(orUTC(loc)).Add(time.Hour)
	return LocalDateTime{Year: t.Year(), Month: t.Month(), Day: t.Day(), Hour: t.Hour()}
}

// Skips reports whether the calendars skip the slot whose nominal instant is t, and why
// (Mask.Reason): a slot in a skip calendar, or outside every only calendar, does not run.
func (s *JobSchedule) Skips(t time.Time) (string, bool) {
	return s.Calendars.Excludes(t)
}

// maxSkippedSlots is the most slots in a row that NextRun passes over as skipped before it
// gives up: a schedule whose next run is further away than that reports none.
const maxSkippedSlots = 10_000

// NextRun returns the nominal instant of the first slot after t that the calendars do not
// skip; zero when there is none within the engine's horizon (or past maxSkippedSlots skipped
// slots in a row). A skip calendar's stretch is passed over at once, not slot by slot.
func (s *JobSchedule) NextRun(t time.Time) time.Time {
	if s.OneShot() {
		if s.Due.After(t) {
			if _, skipped := s.Skips(s.Due); !skipped {
				return s.Due
			}
		}
		return time.Time{}
	}
	if s.Calendars.closesAll() {
		return time.Time{}
	}
	slot := s.Next(t)
	for range maxSkippedSlots {
		if slot.IsZero() || s.Calendars.Empty() {
			return slot
		}
		if _, skipped := s.Skips(slot); !skipped {
			return slot
		}
		// Jump over the stretch that closes the slot: the skip calendars' cover, or to the
		// next only calendar's stretch.
		from := slot
		if k, ok := cover(s.Calendars.Skip, true, slot); ok && k.Contains(slot) {
			from = k.End.Add(-time.Nanosecond)
		} else if len(s.Calendars.Only) > 0 {
			if o, ok := cover(s.Calendars.Only, false, slot); ok && o.Start.After(slot) {
				from = o.Start.Add(-time.Nanosecond)
			}
		}
		if from.Sub(t) > searchHorizon {
			return time.Time{}
		}
		slot = s.Next(from)
	}
	return time.Time{}
}

// SkippedRuns returns the slots in [from, to) that the calendars skip, with why, in order
// (each a Skipped whose Start and End are the slot's nominal instant). Each slot is a step of
// budget.
func (s *JobSchedule) SkippedRuns(budget *Budget, from, to time.Time) ([]Skipped, error) {
	if s.Calendars.Empty() {
		return nil, nil
	}
	all, err := s.slots(budget, from, to)
	if err != nil {
		return nil, err
	}
	var out []Skipped
	for _, t := range all {
		if reason, skipped := s.Skips(t); skipped {
			out = append(out, Skipped{Interval: Interval{Start: t, End: t}, Reason: reason})
		}
	}
	return out, nil
}
