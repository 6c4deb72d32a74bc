package timing

import (
	"time"
)

// weekOrder is the order in which canonical day lists name the days: Monday first, as
// schedules are read (ISO 8601), not time.Weekday's Sunday first.
var weekOrder = [7]time.Weekday{time.Monday, time.Tuesday, time.Wednesday, time.Thursday, time.Friday, time.Saturday, time.Sunday}

// weekdayNames returns the names of the weekdays in the bit set, Monday first; nil for none.
func weekdayNames(set uint8) []string {
	var names []string
	for _, d := range weekOrder {
		if set&(1<<d) != 0 {
			names = append(names, d.String())
		}
	}
	return names
}

// CanonicalWeekdays returns the canonical form of a list of days: full names, Monday first,
// each day once. It reports false when an item is not a day (see ParseWeekday); Compile
// reports which.
func CanonicalWeekdays(days []string) ([]string, bool) {
	var set uint8
	for _, d := range days {
		day, err := ParseWeekday(d)
		if err != nil {
			return nil, false
		}
		set |= 1 << day
	}
	return weekdayNames(set), true
}

// WeekdayRange returns the days from first to last, both included, in order, wrapping past
// Saturday: Monday to Wednesday is Monday, Tuesday, Wednesday; Friday to Monday is Friday,
// Saturday, Sunday, Monday; a day to itself is that day alone; Tuesday to Monday is the
// whole week.
func WeekdayRange(first, last time.Weekday) []time.Weekday {
	n := (int(last)-int(first)+7)%7 + 1
	out := make([]time.Weekday, n)
	for i := range out {
		out[i] = (first + time.Weekday(i)) % 7
	}
	return out
}

// EachDay returns the Daily window that opens from start to end (times of day) on each day
// from firstDay to lastDay, both included (see WeekdayRange), in zone: "the same hours on
// each of these days". A window whose end is at or before its start crosses midnight and
// belongs to the day it opens. When the days are the whole week, DaysOfWeek is empty (every
// day). The result is not compiled: start and end are taken as written.
func EachDay(firstDay, lastDay time.Weekday, start, end, zone string) Spec {
	spec := Spec{Type: TypeDaily, StartTime: start, EndTime: end, TimeZone: zone}
	var set uint8
	for _, d := range WeekdayRange(firstDay, lastDay) {
		set |= 1 << d
	}
	if set != 1<<7-1 {
		spec.DaysOfWeek = weekdayNames(set)
	}
	return spec
}

// WallLength returns the length of each interval of a Daily or Weekly window on the wall
// clock, from the start day and time to the end day and time (a daylight saving change
// inside an interval makes the elapsed time an hour longer or shorter). It reports false for
// OneShot and Cron windows.
func (w *Window) WallLength() (time.Duration, bool) {
	var days int
	switch w.Type() {
	case TypeDaily:
		if w.crossesMidnight() {
			days = 1
		}
	case TypeWeekly:
		days = (int(w.endDay) - int(w.startDay) + 7) % 7
		if days == 0 && w.crossesMidnight() {
			days = 7
		}
	default:
		return 0, false
	}
	return time.Duration(days)*24*time.Hour + time.Duration(w.end.minutes()-w.start.minutes())*time.Minute, true
}

// SpansDays reports whether a Weekly window runs from one day to another while its end time
// of day is after its start time of day ("Monday 11:50 to Wednesday 13:00"): a shape whose
// readers often expect the same hours on each day (see EachDay), as scheduled-pod-autoscaler
// read it.
func (w *Window) SpansDays() bool {
	return w.Type() == TypeWeekly && w.startDay != w.endDay && w.end.minutes() > w.start.minutes()
}

// EachDay returns, for a Weekly window, the Daily window with the same times of day on each
// day from its start day to its end day (see the function EachDay), in canonical form.
func (w *Window) EachDay() Spec {
	return EachDay(w.startDay, w.endDay, w.start.String(), w.end.String(), w.zone.Name)
}
