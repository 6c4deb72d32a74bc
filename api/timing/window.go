package timing

import (
	"errors"
	"fmt"
	"iter"
	"strings"
	"sync"
	"time"
)

// Type is the kind of recurrence of a Schedule's window.
type Type string

const (
	// TypeDaily is a window between two times of day, every day.
	TypeDaily Type = "Daily"
	// TypeWeekly is a window from a day and time of the week to another.
	TypeWeekly Type = "Weekly"
	// TypeOneShot is a single window between two dates and times.
	TypeOneShot Type = "OneShot"
	// TypeCron is a window of a fixed duration opened by each firing of a cron schedule.
	TypeCron Type = "Cron"
)

// Spec is a window as the user wrote it.
type Spec struct {
	Type Type
	// StartTime and EndTime are HH:mm for Daily and Weekly windows, and yyyy-MM-ddTHH:mm
	// (or RFC 3339) for OneShot windows.
	StartTime, EndTime string
	// StartDayOfWeek and EndDayOfWeek are the days of a Weekly window.
	StartDayOfWeek, EndDayOfWeek string
	// DaysOfWeek are the days on which a Daily window opens (a window that crosses
	// midnight belongs to the day it opens); empty means every day.
	DaysOfWeek []string
	// Schedule (a cron expression) and Duration (a Go duration of at least 1m) define a
	// Cron window.
	Schedule, Duration string
	// BusinessDays are the weekdays that a Cron window's business-day forms (LW, nW, W#n)
	// count as business days; empty means Monday to Friday. Only a schedule with such a form
	// may set them.
	BusinessDays []string
	// TimeZone is the zone of all wall-clock fields; "" means DefaultZone.
	TimeZone string
	// Calendars close parts of the windows (spec.calendars, compiled): a window is cut at
	// the boundaries of the instants they close.
	Calendars Mask
}

// Field names of a Spec, as FieldError.Field reports them.
const (
	FieldType           = "type"
	FieldTimeZone       = "timeZone"
	FieldStartDayOfWeek = "startDayOfWeek"
	FieldStartTime      = "startTime"
	FieldEndDayOfWeek   = "endDayOfWeek"
	FieldEndTime        = "endTime"
	FieldDaysOfWeek     = "daysOfWeek"
	FieldSchedule       = "schedule"
	FieldDuration       = "duration"
	FieldBusinessDays   = "businessDays"
)

// FieldError is a problem with one field of a Spec. Webhooks map Field and Index to their
// field path (Child(Field), then Index(*Index)) and report Detail as the message.
type FieldError struct {
	Field string // one of the Field* constants
	Index *int   // the item of Field's list (daysOfWeek, businessDays, days) that is wrong; nil for the whole field
	// Sub is the field of that item that is wrong (date, start, end); empty for the item.
	Sub    string
	Value  string // the value as given
	Detail string // what was wrong, what was expected, and how to fix it
}

// Path is the field's path below the spec, as a field path writes it: "timeZone",
// "daysOfWeek[2]".
func (e FieldError) Path() string {
	p := e.Field
	if e.Index != nil {
		p = fmt.Sprintf("%s[%d]", e.Field, *e.Index)
	}
	if e.Sub != "" {
		p += "." + e.Sub
	}
	return p
}

func (e FieldError) Error() string { return e.Path() + ": " + e.Detail }

// Join returns errs as one error whose message writes each "<prefix><field>: <detail>",
// separated by "; " (prefix is the path of the spec, e.g. "spec."), or nil when errs is
// empty. Reconcilers report a spec that does not compile with it.
func Join(prefix string, errs []FieldError) error {
	if len(errs) == 0 {
		return nil
	}
	msgs := make([]string, 0, len(errs))
	for _, e := range errs {
		msgs = append(msgs, prefix+e.Path()+": "+e.Detail)
	}
	return errors.New(strings.Join(msgs, "; "))
}

// MinCronDuration is the shortest window a Cron window may open.
const MinCronDuration = time.Minute

// MaxCronDuration is the longest window a Cron window may open: 366 days, the horizon over
// which windows are compared (OverlapHorizon). A longer one would only be cut by the next
// firing, and its end could pass the last instant that Unix nanoseconds hold (year 2262).
const MaxCronDuration = 366 * 24 * time.Hour

// Interval is a half-open interval [Start, End) of instants, in UTC.
type Interval struct{ Start, End time.Time }

// Contains reports whether t is in [Start, End).
func (iv Interval) Contains(t time.Time) bool { return !t.Before(iv.Start) && t.Before(iv.End) }

// Window is a compiled Spec: the recurrence of intervals it describes. Create it with
// Spec.Compile. Its methods are pure and safe for concurrent use.
//
// Intervals are computed from wall-clock dates in the window's zone, each boundary resolved
// by the DST rule (see ResolveWall). A Daily or Weekly occurrence whose start and end resolve
// to the same instant (both in one gap) is empty and skipped. Searches reach at most eight
// years past the given instant.
//
// For Cron windows, each firing opens [firing, firing+duration). Overlapping (or touching)
// windows of firings on the same local date are merged into one interval. A new interval
// starts at the first firing of each local date, and the interval before it ends there
// (instead of at its own end): this keeps the windows' union exactly, keeps intervals
// disjoint and in order, and bounds the work per interval to one day of firings, even for a
// window that is always open such as "*/5 * * * *" with a duration of 10m (reported as one
// interval per day).
type Window struct {
	canonical Spec
	zone      Zone
	// key names the window in the memo of intervals (see spansFor).
	key string

	// Daily and Weekly.
	start, end       Clock
	startDay, endDay time.Weekday
	// days has bit d set for each weekday d on which a Daily window opens; 0 means every day.
	days uint8
	// OneShot: the wall times, and the interval they resolve to.
	startWall, endWall LocalDateTime
	oneShot            Interval
	// Cron.
	cron     Cron
	duration time.Duration
}

// Compile validates every field of the spec and returns the window, or all the problems
// found. Fields that the spec's type does not use must be empty.
//
// Windows are immutable, so the windows of specs compiled recently are kept in a bounded memo
// and shared: admission compiles every sibling of a Schedule for each request.
func (s Spec) Compile() (*Window, []FieldError) {
	key := windowKey(s)
	if w := compiled.get(key); w != nil {
		return w, nil
	}
	w, errs := s.compile()
	if w != nil {
		compiled.put(key, w)
	}
	return w, errs
}

// compiledLimit is the most windows kept in one generation of the memo of compiled windows.
const compiledLimit = 4096

// compiled is the memo of compiled windows, keyed by windowKey of the spec as written: two
// generations, the current one replacing the previous one when it holds compiledLimit.
var compiled = &windowMemo{current: map[string]*Window{}}

type windowMemo struct {
	sync.Mutex
	current, previous map[string]*Window
}

func (m *windowMemo) get(key string) *Window {
	m.Lock()
	defer m.Unlock()
	if w, ok := m.current[key]; ok {
		return w
	}
	w, ok := m.previous[key]
	if ok {
		m.putLocked(key, w)
	}
	return w
}

func (m *windowMemo) put(key string, w *Window) {
	m.Lock()
	defer m.Unlock()
	m.putLocked(key, w)
}

func (m *windowMemo) putLocked(key string, w *Window) {
	if len(m.current) >= compiledLimit {
		m.previous, m.current = m.current, map[string]*Window{}
	}
	m.current[key] = w
}

func (s Spec) compile() (*Window, []FieldError) {
	var errs []FieldError
	fail := func(field, value string, err error) {
		errs = append(errs, FieldError{Field: field, Value: value, Detail: err.Error()})
	}

	zone, zoneErr := compileZone(s.TimeZone)
	if zoneErr != nil {
		errs = append(errs, *zoneErr)
	}
	var err error
	w := &Window{zone: zone, canonical: Spec{Type: s.Type, TimeZone: zone.Name, Calendars: s.Calendars}}

	used, ok := fieldsUsed[s.Type]
	if !ok {
		fail(FieldType, string(s.Type), fmt.Errorf("%q is not a window type: expected one of Daily, Weekly, OneShot or Cron", s.Type))
		return nil, errs
	}
	for _, f := range []struct{ name, value string }{
		{FieldStartDayOfWeek, s.StartDayOfWeek},
		{FieldStartTime, s.StartTime},
		{FieldEndDayOfWeek, s.EndDayOfWeek},
		{FieldEndTime, s.EndTime},
		{FieldSchedule, s.Schedule},
		{FieldDuration, s.Duration},
	} {
		if f.value != "" && !used[f.name] {
			fail(f.name, f.value, fmt.Errorf("%q is set, but %s windows do not use this field: remove it", f.value, s.Type))
		}
	}
	if len(s.DaysOfWeek) > 0 && !used[FieldDaysOfWeek] {
		days := strings.Join(s.DaysOfWeek, ", ")
		detail := fmt.Sprintf("%q is set, but %s windows do not use this field: remove it", days, s.Type)
		if s.Type == TypeWeekly {
			detail += "; a Weekly window is one stretch from its start day and time to its end day and time, " +
				"while type Daily with these days opens the same hours on each of them"
		}
		fail(FieldDaysOfWeek, days, errors.New(detail))
	}
	if len(s.BusinessDays) > 0 && s.Type != TypeCron {
		fail(FieldBusinessDays, strings.Join(s.BusinessDays, ", "), fmt.Errorf("%q is set, but %s windows do not use this field: remove it; "+
			"business days are for the business-day forms of a Cron window's schedule (LW, 15W, W#2)", strings.Join(s.BusinessDays, ", "), s.Type))
	}

	switch s.Type {
	case TypeDaily, TypeWeekly:
		weekly := s.Type == TypeWeekly
		valid := true
		check := func(field, value string, err error) {
			if err != nil {
				fail(field, value, err)
				valid = false
			}
		}
		if weekly {
			w.startDay, err = ParseWeekday(s.StartDayOfWeek)
			check(FieldStartDayOfWeek, s.StartDayOfWeek, err)
		}
		w.start, err = ParseClock(s.StartTime)
		check(FieldStartTime, s.StartTime, err)
		if weekly {
			w.endDay, err = ParseWeekday(s.EndDayOfWeek)
			check(FieldEndDayOfWeek, s.EndDayOfWeek, err)
		}
		w.end, err = ParseClock(s.EndTime)
		check(FieldEndTime, s.EndTime, err)

		if valid && w.start == w.end && w.startDay == w.endDay {
			detail := fmt.Sprintf("%q equals the start time: the window would be empty; an end at or before the start crosses midnight (e.g. 22:00 to 02:00)", s.EndTime)
			if weekly {
				detail = fmt.Sprintf("%s %s is the same day and time as the start: the window would be empty; choose a different end day or time", w.endDay, w.end)
			}
			fail(FieldEndTime, s.EndTime, errors.New(detail))
		}
		w.canonical.StartTime, w.canonical.EndTime = w.start.String(), w.end.String()
		if weekly {
			w.canonical.StartDayOfWeek, w.canonical.EndDayOfWeek = w.startDay.String(), w.endDay.String()
		} else {
			for i, d := range s.DaysOfWeek {
				day, err := ParseWeekday(d)
				if err != nil {
					errs = append(errs, FieldError{Field: FieldDaysOfWeek, Index: &i, Value: d, Detail: err.Error()})
					continue
				}
				w.days |= 1 << day
			}
			w.canonical.DaysOfWeek = weekdayNames(w.days)
		}

	case TypeOneShot:
		start, startErr := ParseLocalDateTime(s.StartTime, zone.Location)
		if startErr != nil {
			fail(FieldStartTime, s.StartTime, startErr)
		}
		end, endErr := ParseLocalDateTime(s.EndTime, zone.Location)
		if endErr != nil {
			fail(FieldEndTime, s.EndTime, endErr)
		}
		if startErr == nil && endErr == nil {
			w.startWall, w.endWall = start, end
			w.oneShot = Interval{Start: start.In(zone.Location), End: end.In(zone.Location)}
			if err := checkOneShotOrder(start, end, w.oneShot, zone); err != nil {
				fail(FieldEndTime, s.EndTime, err)
			}
		}
		w.canonical.StartTime, w.canonical.EndTime = start.String(), end.String()

	case TypeCron:
		weekdays, bizErrs := parseBusinessDays(s.BusinessDays)
		errs = append(errs, bizErrs...)
		if w.cron, err = parseCron(s.Schedule, weekdays); err != nil {
			fail(FieldSchedule, s.Schedule, err)
		} else if err := checkBusinessDaysUsed(s.BusinessDays, w.cron); err != nil {
			fail(FieldBusinessDays, strings.Join(s.BusinessDays, ", "), err)
		}
		w.cron = w.cron.withBusiness(weekdays, s.Calendars, zone.Location, 0)
		if w.duration, err = parseWindowDuration(s.Duration); err != nil {
			fail(FieldDuration, s.Duration, err)
		}
		w.canonical.Schedule, w.canonical.Duration = w.cron.String(), w.duration.String()
		if len(s.BusinessDays) > 0 {
			w.canonical.BusinessDays = weekdayNames(weekdays)
		}
	}

	if len(errs) > 0 {
		return nil, errs
	}
	w.key = windowKey(w.canonical)
	return w, nil
}

// fieldsUsed lists, per type, the fields besides type and timeZone that it reads.
var fieldsUsed = map[Type]map[string]bool{
	TypeDaily:   {FieldStartTime: true, FieldEndTime: true, FieldDaysOfWeek: true},
	TypeWeekly:  {FieldStartDayOfWeek: true, FieldStartTime: true, FieldEndDayOfWeek: true, FieldEndTime: true},
	TypeOneShot: {FieldStartTime: true, FieldEndTime: true},
	TypeCron:    {FieldSchedule: true, FieldDuration: true},
}

// checkOneShotOrder rejects a OneShot window that does not end after it starts.
func checkOneShotOrder(start, end LocalDateTime, iv Interval, zone Zone) error {
	if iv.End.After(iv.Start) {
		return nil
	}
	startWall := civil(start.Year, start.Month, start.Day, start.Hour, start.Minute)
	endWall := civil(end.Year, end.Month, end.Day, end.Hour, end.Minute)
	if endWall.After(startWall) {
		return fmt.Errorf("%s and the start %s both fall into the same daylight saving gap in %s, so the window would be empty: end it at %s or later",
			end, start, zone.Name, iv.End.In(zone.Location).Add(time.Minute).Format("2006-01-02T15:04"))
	}
	return fmt.Errorf("%s is not after the start %s: a OneShot window must end after it starts", end, start)
}

func parseWindowDuration(s string) (time.Duration, error) {
	const expected = `expected a Go duration of at least 1m, e.g. "90m" or "2h30m"`
	t := strings.TrimSpace(s)
	if t == "" {
		return 0, errors.New("a duration is required: " + expected)
	}
	d, err := time.ParseDuration(t)
	if err != nil {
		return 0, fmt.Errorf("%q is not a duration: %s", s, expected)
	}
	if d < MinCronDuration {
		return 0, fmt.Errorf("%q is shorter than one minute: %s", s, expected)
	}
	if d > MaxCronDuration {
		return 0, fmt.Errorf("%q is longer than 366 days (8784h), the longest window a Cron window may open: "+
			"a window that long reaches past the next firing of any schedule that fires at least once a year; use a shorter duration", s)
	}
	return d, nil
}

// Canonical returns the spec the window was compiled from, in canonical form: the zone's
// canonical name (DefaultZone when omitted), HH:mm times, full day names, yyyy-MM-ddTHH:mm
// wall times, the canonical cron spelling and time.Duration's spelling. Compiling it gives
// an equal window. Mutating webhooks store it.
func (w *Window) Canonical() Spec { return w.canonical }

// Cron returns a Cron window's schedule, with its business days and calendars; false for the
// other types.
func (w *Window) Cron() (Cron, bool) { return w.cron, w.Type() == TypeCron }

// Type returns the window's type.
func (w *Window) Type() Type { return w.canonical.Type }

// Zone returns the window's normalized time zone.
func (w *Window) Zone() Zone { return w.zone }

// ActiveAt returns the interval that contains t, if any.
func (w *Window) ActiveAt(t time.Time) (Interval, bool) {
	iv, ok := w.NextInterval(t)
	if !ok || !iv.Contains(t) {
		return Interval{}, false
	}
	return iv, true
}

// NextInterval returns the first interval that ends after t: the one containing t, or
// else the next one. It reports false when there is none (a OneShot in the past).
func (w *Window) NextInterval(t time.Time) (Interval, bool) {
	for iv := range w.intervals(t) {
		return iv, true
	}
	return Interval{}, false
}

// Intervals returns, in order, every interval that intersects [from, to), unclipped. Each
// interval is a step of budget; when the budget stops the walk, it returns the budget's
// error.
func (w *Window) Intervals(budget *Budget, from, to time.Time) ([]Interval, error) {
	var out []Interval
	for iv := range w.intervals(from) {
		if !iv.Start.Before(to) {
			break
		}
		if err := budget.Spend(1); err != nil {
			return nil, err
		}
		out = append(out, iv)
	}
	return out, nil
}

// NextBoundary returns the earliest start or end of an interval strictly after t: the instant
// at which the window's state next changes (or, between touching intervals, is re-evaluated).
func (w *Window) NextBoundary(t time.Time) (time.Time, bool) {
	iv, ok := w.NextInterval(t)
	switch {
	case !ok:
		return time.Time{}, false
	case iv.Start.After(t):
		return iv.Start, true
	default:
		return iv.End, true
	}
}

// OneShotInterval returns the interval of a OneShot window, past or not; false for the other
// types.
func (w *Window) OneShotInterval() (Interval, bool) {
	return w.oneShot, w.Type() == TypeOneShot
}

// Stale reports whether the window is a OneShot whose end is not after now: it will never be
// active again.
func (w *Window) Stale(now time.Time) bool {
	return w.Type() == TypeOneShot && !w.oneShot.End.After(now)
}

// intervals yields the window's non-empty intervals that end after t, in order, up to
// searchHorizon past t: those of its recurrence, cut by its calendars.
func (w *Window) intervals(t time.Time) iter.Seq[Interval] {
	mask := w.canonical.Calendars
	if mask.Empty() {
		return w.recurrence(t)
	}
	return func(yield func(Interval) bool) {
		for from := t; ; {
			var resume time.Time
			jumped := false
			for iv := range w.recurrence(from) {
				if !mask.pieces(iv, func(p Interval) bool { return !p.End.After(t) || yield(p) }) {
					return
				}
				// Across a long closed stretch (a freeze, or the time between two days of an
				// only calendar), the walk resumes where the calendars open again instead of
				// cutting each interval of the recurrence in between.
				if open := mask.nextOpen(iv.End); open.Sub(iv.End) > 24*time.Hour {
					resume, jumped = open, true
					break
				}
			}
			if !jumped || resume.Sub(t) > searchHorizon {
				return
			}
			from = resume
		}
	}
}

// Masked reports whether calendars cut the window.
func (w *Window) Masked() bool { return !w.canonical.Calendars.Empty() }

// Skipped returns, in order, the stretches of the window's recurrence that intersect
// [from, to) and that its calendars close, with the calendar entries that close them. Each
// interval of the recurrence is a step of budget.
func (w *Window) Skipped(budget *Budget, from, to time.Time) ([]Skipped, error) {
	mask := w.canonical.Calendars
	if mask.Empty() {
		return nil, nil
	}
	var out []Skipped
	for iv := range w.recurrence(from) {
		if !iv.Start.Before(to) {
			break
		}
		if err := budget.Spend(1); err != nil {
			return nil, err
		}
		cur := iv.Start
		gap := func(end time.Time) {
			if end.After(cur) {
				g := Interval{Start: cur, End: end}
				out = append(out, Skipped{Interval: g, Reason: mask.Reason(g)})
			}
		}
		mask.pieces(iv, func(p Interval) bool {
			gap(p.Start)
			cur = p.End
			return true
		})
		gap(iv.End)
	}
	return out, nil
}

// recurrence yields the intervals of the window's recurrence alone (see intervals).
func (w *Window) recurrence(t time.Time) iter.Seq[Interval] {
	switch w.Type() {
	case TypeDaily:
		return w.recurring(t, dateOf(t, w.zone.Location).AddDate(0, 0, -2), 1)
	case TypeWeekly:
		first := dateOf(t, w.zone.Location).AddDate(0, 0, -8)
		first = first.AddDate(0, 0, (int(w.startDay)-int(first.Weekday())+7)%7)
		return w.recurring(t, first, 7)
	case TypeOneShot:
		return func(yield func(Interval) bool) {
			if w.oneShot.End.After(t) {
				yield(w.oneShot)
			}
		}
	default:
		return w.cronIntervals(t)
	}
}

// recurring yields the Daily or Weekly occurrences that start on the local dates first,
// first+step, ... and end after t. first must be early enough for the occurrence containing
// t: two days before t's date for Daily windows (which last less than a day), eight for Weekly
// ones.
func (w *Window) recurring(t, first time.Time, step int) iter.Seq[Interval] {
	return func(yield func(Interval) bool) {
		limit := t.Add(searchHorizon)
		for day := first; ; day = day.AddDate(0, 0, step) {
			iv := w.occurrence(day)
			if iv.Start.After(limit) {
				return
			}
			if w.opensOn(day.Weekday()) && iv.End.After(iv.Start) && iv.End.After(t) && !yield(iv) {
				return
			}
		}
	}
}

// opensOn reports whether a Daily window opens on weekday d (always for a Weekly window,
// which recurring steps from start day to start day).
func (w *Window) opensOn(d time.Weekday) bool { return w.days == 0 || w.days&(1<<d) != 0 }

// crossesMidnight reports whether a Daily window ends on the day after it opens.
func (w *Window) crossesMidnight() bool { return w.end.minutes() <= w.start.minutes() }

// occurrence returns the Daily or Weekly interval that starts on the local date day.
func (w *Window) occurrence(day time.Time) Interval {
	days := 0 // from the start date to the end date
	if w.Type() == TypeWeekly {
		days = (int(w.endDay) - int(w.startDay) + 7) % 7
	}
	if days == 0 && w.end.minutes() <= w.start.minutes() {
		// A Daily end at or before the start is on the next day; a Weekly one on the same
		// weekday is a week later.
		days = 1
		if w.Type() == TypeWeekly {
			days = 7
		}
	}
	loc := w.zone.Location
	return Interval{
		Start: resolve(loc, day.Add(time.Duration(w.start.minutes())*time.Minute)).at,
		End:   resolve(loc, day.AddDate(0, 0, days).Add(time.Duration(w.end.minutes())*time.Minute)).at,
	}
}

// cronIntervals yields the merged runs of a Cron window (see Window) that end after t.
func (w *Window) cronIntervals(t time.Time) iter.Seq[Interval] {
	return func(yield func(Interval) bool) {
		loc := w.zone.Location
		first := w.cron.Prev(loc, t)
		if first.IsZero() || !w.clippedEnd(first).After(t) {
			first = w.cron.Next(loc, t)
		} else {
			first = w.runStart(first)
		}
		limit := t.Add(searchHorizon)
		for !first.IsZero() && first.Before(limit) {
			iv, next := w.run(first)
			if !yield(iv) {
				return
			}
			first = next
		}
	}
}

// clippedEnd is the end of the window opened by firing f, or the next firing if that comes
// first: from then on the next firing's window, which ends later, covers the time.
func (w *Window) clippedEnd(f time.Time) time.Time {
	end := f.Add(w.duration)
	if next := w.cron.Next(w.zone.Location, f); !next.IsZero() && next.Before(end) {
		return next
	}
	return end
}

// runStart returns the firing that starts the run containing firing f.
func (w *Window) runStart(f time.Time) time.Time {
	loc := w.zone.Location
	day := dateOf(f, loc)
	for {
		prev := w.cron.Prev(loc, f.Add(-time.Nanosecond))
		if prev.IsZero() || prev.Add(w.duration).Before(f) || !dateOf(prev, loc).Equal(day) {
			return f
		}
		f = prev
	}
}

// run returns the interval of the run that starts with firing first, and the firing that
// starts the next run (zero if there is none).
func (w *Window) run(first time.Time) (Interval, time.Time) {
	loc := w.zone.Location
	day := dateOf(first, loc)
	for last := first; ; {
		end := last.Add(w.duration)
		next := w.cron.Next(loc, last)
		if next.IsZero() {
			return Interval{Start: first, End: end}, time.Time{}
		}
		if next.After(end) || !dateOf(next, loc).Equal(day) {
			if next.Before(end) {
				end = next
			}
			return Interval{Start: first, End: end}, next
		}
		last = next
	}
}
