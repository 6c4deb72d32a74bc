package timing

import (
	"errors"
	"fmt"
	"strings"
	"time"
)

// Clock is a time of day on a 24-hour clock, in whole minutes.
type Clock struct{ Hour, Minute int }

// String returns the canonical form, HH:mm.
func (c Clock) String() string { return fmt.Sprintf("%02d:%02d", c.Hour, c.Minute) }

// minutes returns the minutes since midnight.
func (c Clock) minutes() int { return c.Hour*60 + c.Minute }

const clockExpected = `expected HH:mm on a 24-hour clock, e.g. "09:30"`

// ParseClock parses a time of day. The canonical form is HH:mm; H:mm and HH:mm:00 are also
// accepted. Seconds other than 00 are rejected because schedules work in whole minutes.
func ParseClock(s string) (Clock, error) {
	t := strings.TrimSpace(s)
	if t == "" {
		return Clock{}, errors.New("a time of day is required: " + clockExpected)
	}
	h := leadingDigits(t, 2)
	if h == 0 || len(t) < h+3 || t[h] != ':' || leadingDigits(t[h+1:], 2) != 2 {
		return Clock{}, fmt.Errorf("%q is not a time of day: %s", s, clockExpected)
	}
	c := Clock{Hour: atoi(t[:h]), Minute: atoi(t[h+1 : h+3])}
	seconds := t[h+3:]
	if seconds != "" && (len(seconds) != 3 || seconds[0] != ':' || leadingDigits(seconds[1:], 2) != 2) {
		return Clock{}, fmt.Errorf("%q is not a time of day: %s", s, clockExpected)
	}
	if c.Hour == 24 && c.Minute == 0 {
		return Clock{}, fmt.Errorf(`%q is not a time of day: the clock goes from 00:00 to 23:59; write "00:00" for midnight`, s)
	}
	if c.Hour > 23 || c.Minute > 59 {
		return Clock{}, fmt.Errorf("%q is not a time of day: %s", s, clockExpected)
	}
	if seconds != "" && seconds != ":00" {
		return Clock{}, fmt.Errorf("%q has seconds: times are whole minutes; write %q", s, c.String())
	}
	return c, nil
}

// weekdays maps lower-case full and three-letter day names to their weekday.
var weekdays = func() map[string]time.Weekday {
	m := make(map[string]time.Weekday, 14)
	for d := time.Sunday; d <= time.Saturday; d++ {
		name := strings.ToLower(d.String())
		m[name] = d
		m[name[:3]] = d
	}
	return m
}()

// ParseWeekday parses a day of the week: a full English name or its three-letter
// abbreviation, in any letter case. The canonical form is time.Weekday.String ("Monday").
func ParseWeekday(s string) (time.Weekday, error) {
	t := strings.ToLower(strings.TrimSpace(s))
	if d, ok := weekdays[t]; ok {
		return d, nil
	}
	const expected = `expected Monday to Sunday, or Mon to Sun, e.g. "Friday"`
	if t == "" {
		return 0, errors.New("a day of the week is required: " + expected)
	}
	for d := time.Sunday; d <= time.Saturday; d++ {
		if len(t) < 16 && EditDistance(t, strings.ToLower(d.String())) <= 2 {
			return 0, fmt.Errorf("%q is not a day of the week (did you mean %q?): %s", s, d.String(), expected)
		}
	}
	return 0, fmt.Errorf("%q is not a day of the week: %s", s, expected)
}

// LocalDateTime is a wall-clock date and time in a zone that is kept elsewhere.
type LocalDateTime struct {
	Year   int
	Month  time.Month
	Day    int
	Hour   int
	Minute int
	// Second is zero except for a time read by ParseAt.
	Second int
}

// String returns the canonical form, yyyy-MM-ddTHH:mm, or yyyy-MM-ddTHH:mm:ss when Second is
// not zero.
func (l LocalDateTime) String() string {
	s := fmt.Sprintf("%04d-%02d-%02dT%02d:%02d", l.Year, int(l.Month), l.Day, l.Hour, l.Minute)
	if l.Second != 0 {
		s += fmt.Sprintf(":%02d", l.Second)
	}
	return s
}

// In returns the instant l names in loc, by the DST rule (see ResolveWall).
func (l LocalDateTime) In(loc *time.Location) time.Time {
	return resolve(orUTC(loc), l.wall()).at
}

// wall returns l as a wall (see civil).
func (l LocalDateTime) wall() time.Time {
	return civil(l.Year, l.Month, l.Day, l.Hour, l.Minute).Add(time.Duration(l.Second) * time.Second)
}

const dateTimeExpected = `expected yyyy-MM-ddTHH:mm (wall time in the time zone) or RFC 3339 with an offset, e.g. "2027-03-14T09:30" or "2027-03-14T09:30:00+09:00"`

const atExpected = `expected yyyy-MM-ddTHH:mm or yyyy-MM-ddTHH:mm:ss (wall time in the time zone) or RFC 3339 with an offset, e.g. "2027-03-14T09:30", "2027-03-14T09:30:15" or "2027-03-14T09:30:15+09:00"`

// ParseLocalDateTime parses a date and time of day. The canonical form is yyyy-MM-ddTHH:mm,
// read as wall time in loc; seconds :00 are accepted. RFC 3339 with an offset or Z (with or
// without :00 seconds) is accepted too and converted to the wall time it names in loc, which
// is what the canonical form stores. Invalid dates (2027-02-29) and seconds other than 00 are
// rejected. A nil loc means UTC.
//
// An RFC 3339 time in the second occurrence of a repeated hour becomes a wall time that the
// DST rule resolves to its first occurrence; DSTNotes reports such times.
func ParseLocalDateTime(s string, loc *time.Location) (LocalDateTime, error) {
	return parseDateTime(s, loc, false)
}

// ParseAt parses the time of a one-shot Job: what ParseLocalDateTime accepts, and whole
// seconds, which are kept (the "AT" controller ran its Jobs at RFC 3339 instants to the
// second). The canonical form stays yyyy-MM-ddTHH:mm when the seconds are 00, and is
// yyyy-MM-ddTHH:mm:ss otherwise. Fractions of a second must be zero. A nil loc means UTC.
func ParseAt(s string, loc *time.Location) (LocalDateTime, error) {
	return parseDateTime(s, loc, true)
}

func parseDateTime(s string, loc *time.Location, seconds bool) (LocalDateTime, error) {
	loc = orUTC(loc)
	expected := dateTimeExpected
	if seconds {
		expected = atExpected
	}
	t := strings.TrimSpace(s)
	if t == "" {
		return LocalDateTime{}, errors.New("a date and time is required: " + expected)
	}
	syntaxErr := fmt.Errorf("%q is not a date and time: %s", s, expected)

	// yyyy-MM-dd
	if len(t) < 10 || leadingDigits(t, 4) != 4 || t[4] != '-' || leadingDigits(t[5:], 2) != 2 || t[7] != '-' || leadingDigits(t[8:], 2) != 2 {
		return LocalDateTime{}, syntaxErr
	}
	l := LocalDateTime{Year: atoi(t[:4]), Month: time.Month(atoi(t[5:7])), Day: atoi(t[8:10])}
	t = t[10:]

	// THH:mm
	if len(t) < 6 || leadingDigits(t[1:], 2) != 2 || t[3] != ':' || leadingDigits(t[4:], 2) != 2 {
		return LocalDateTime{}, syntaxErr
	}
	if t[0] == ' ' {
		return LocalDateTime{}, fmt.Errorf(`%q separates the date and the time with a space: use "T", e.g. %q`, s, strings.Replace(strings.TrimSpace(s), " ", "T", 1))
	}
	if t[0] != 'T' && t[0] != 't' {
		return LocalDateTime{}, syntaxErr
	}
	l.Hour, l.Minute = atoi(t[1:3]), atoi(t[4:6])
	t = t[6:]

	// Optional :ss and fraction; the fraction must be zero, and so must the seconds unless
	// they are allowed.
	wholeSecond := true
	if strings.HasPrefix(t, ":") {
		if leadingDigits(t[1:], 2) != 2 {
			return LocalDateTime{}, syntaxErr
		}
		l.Second = atoi(t[1:3])
		t = t[3:]
		if strings.HasPrefix(t, ".") {
			n := leadingDigits(t[1:], len(t))
			if n == 0 {
				return LocalDateTime{}, syntaxErr
			}
			wholeSecond = strings.Trim(t[1:1+n], "0") == ""
			t = t[1+n:]
		}
	}

	// Optional offset.
	hasOffset := t != ""
	offset := 0
	switch {
	case t == "":
	case t == "Z" || t == "z":
	case len(t) == 6 && (t[0] == '+' || t[0] == '-') && leadingDigits(t[1:], 2) == 2 && t[3] == ':' && leadingDigits(t[4:], 2) == 2:
		hours, minutes := atoi(t[1:3]), atoi(t[4:6])
		if hours > 23 || minutes > 59 {
			return LocalDateTime{}, fmt.Errorf("%q has an invalid UTC offset %q: expected ±hh:mm from -23:59 to +23:59", s, t)
		}
		offset = (hours*60 + minutes) * 60
		if t[0] == '-' {
			offset = -offset
		}
	default:
		return LocalDateTime{}, syntaxErr
	}

	if l.Month < time.January || l.Month > time.December {
		return LocalDateTime{}, fmt.Errorf("%q is not a valid date: months go from 01 to 12", s)
	}
	if l.Year < MinYear || l.Year > MaxYear {
		return LocalDateTime{}, fmt.Errorf("%q is outside the years almanac schedules: %d to %d (instants are int64 nanoseconds since 1970, which end in April 2262); write a date in that range", s, MinYear, MaxYear)
	}
	if n := daysIn(l.Year, l.Month); l.Day < 1 || l.Day > n {
		return LocalDateTime{}, fmt.Errorf("%q is not a valid date: %s %d has %d days", s, l.Month, l.Year, n)
	}
	if l.Hour > 23 || l.Minute > 59 || l.Second > 59 {
		if seconds {
			return LocalDateTime{}, fmt.Errorf("%q is not a valid time of day: expected HH:mm:ss on a 24-hour clock from 00:00:00 to 23:59:59", s)
		}
		return LocalDateTime{}, fmt.Errorf("%q is not a valid time of day: expected HH:mm on a 24-hour clock from 00:00 to 23:59", s)
	}
	switch {
	case !wholeSecond && seconds:
		return LocalDateTime{}, fmt.Errorf("%q has a fraction of a second: times are whole seconds, e.g. %q", s, l.String())
	case (!wholeSecond || l.Second != 0) && !seconds:
		l.Second = 0
		return LocalDateTime{}, fmt.Errorf("%q has seconds: times are whole minutes (seconds must be 00), e.g. %q", s, l.String())
	}
	if !hasOffset {
		return l, nil
	}

	at := time.Date(l.Year, l.Month, l.Day, l.Hour, l.Minute, l.Second, 0, time.FixedZone("", offset)).In(loc)
	converted := LocalDateTime{Year: at.Year(), Month: at.Month(), Day: at.Day(), Hour: at.Hour(), Minute: at.Minute(), Second: at.Second()}
	if converted.Year < MinYear || converted.Year > MaxYear {
		return LocalDateTime{}, fmt.Errorf("%q is %s in %s, outside the years almanac schedules: %d to %d (instants are int64 nanoseconds since 1970, which end in April 2262); write a date in that range",
			s, converted, loc, MinYear, MaxYear)
	}
	if !seconds && at.Second() != 0 {
		// Seconds appear only for historic offsets (local mean time) that are not whole
		// minutes.
		return LocalDateTime{}, fmt.Errorf("%q is not a wall time in %s that can be written as yyyy-MM-ddTHH:mm", s, loc)
	}
	return converted, nil
}

// MinYear and MaxYear bound the dates and times almanac parses (windows, one-shot Jobs,
// calendar periods): the engine compares instants as int64 nanoseconds since 1970
// (time.Time.UnixNano), which hold years up to April 2262 and are undefined past that, so a
// OneShot ending in 2300 would compare as garbage. Nothing almanac schedules needs an earlier
// or a later year.
const (
	MinYear = 1970
	MaxYear = 2261
)

func daysIn(year int, m time.Month) int {
	return time.Date(year, m+1, 0, 0, 0, 0, 0, time.UTC).Day()
}

// WallKind classifies a wall-clock time in a zone.
type WallKind int

const (
	// Normal is a wall time that occurs exactly once.
	Normal WallKind = iota
	// Gap is a wall time that does not occur because the clocks jumped forward over it.
	Gap
	// Repeat is a wall time that occurs twice because the clocks were set back.
	Repeat
)

func (k WallKind) String() string {
	switch k {
	case Normal:
		return "Normal"
	case Gap:
		return "Gap"
	case Repeat:
		return "Repeat"
	}
	return fmt.Sprintf("WallKind(%d)", int(k))
}

// ResolveWall returns the instant, in UTC, that the wall-clock time y-m-d hh:mm names in loc,
// by almanac's DST rule: a time in a spring-forward gap resolves to the instant the clocks
// jumped (the first instant after the gap), and a time that occurs twice resolves to its
// first occurrence. Out-of-range values are normalized as time.Date does. A nil loc means UTC.
func ResolveWall(loc *time.Location, y int, m time.Month, d, hh, mm int) time.Time {
	return resolve(orUTC(loc), civil(y, m, d, hh, mm)).at
}

// ClassifyWall reports whether the wall-clock time y-m-d hh:mm occurs once, never or twice in
// loc. A nil loc means UTC.
func ClassifyWall(loc *time.Location, y int, m time.Month, d, hh, mm int) WallKind {
	return resolve(orUTC(loc), civil(y, m, d, hh, mm)).kind
}

func orUTC(loc *time.Location) *time.Location {
	if loc == nil {
		return time.UTC
	}
	return loc
}

// A wall is a wall-clock reading in some zone, held in a time.Time in UTC whose fields are read
// as the local date and time. It is never an instant; time.Time just gives it calendar
// arithmetic and ordering.

// civil returns the wall for a local date and time.
func civil(y int, m time.Month, d, hh, mm int) time.Time {
	return time.Date(y, m, d, hh, mm, 0, 0, time.UTC)
}

// wallOf returns the wall-clock reading at instant t in loc.
func wallOf(t time.Time, loc *time.Location) time.Time {
	_, offset := t.In(loc).Zone()
	return t.UTC().Add(time.Duration(offset) * time.Second)
}

// dateOf returns the midnight wall of the local date of instant t in loc.
func dateOf(t time.Time, loc *time.Location) time.Time {
	y, m, d := wallOf(t, loc).Date()
	return civil(y, m, d, 0, 0)
}

// transition is a change of a zone's UTC offset.
type transition struct {
	at            time.Time     // the first instant with the new offset, in UTC
	before, after time.Duration // the offsets before and after
}

// isGap reports whether the clocks jumped forward.
func (tr transition) isGap() bool { return tr.after > tr.before }

// walls returns the wall-clock readings that the transition affects, [lo, hi): for a gap
// those that never occur, for a repeat those that occur twice.
func (tr transition) walls() (lo, hi time.Time) {
	a, b := tr.at.Add(tr.before), tr.at.Add(tr.after)
	if a.After(b) {
		return b, a
	}
	return a, b
}

// periodEnd returns the end of the zone period that t (in its zone) is in, as ZoneBounds
// reports it, but never at or before t. For the instants that a zone's TZ string answers
// (those after the last transition its TZif data lists: 2038 on in the host's "fat" zoneinfo,
// the year the current rules began in Go's "slim" data), Go reports the end of a leap year's
// last UTC day as Dec 31 00:00 UTC, the instant itself or before it (golang/go#81583), and the
// loops that walk from period to period would not move. There the period ends with the UTC
// year, unless the offset changes before.
func periodEnd(t time.Time) time.Time {
	_, end := t.ZoneBounds()
	if end.IsZero() || end.After(t) {
		return end
	}
	end = time.Date(t.UTC().Year()+1, time.January, 1, 0, 0, 0, 0, time.UTC).In(t.Location())
	_, before := t.Zone()
	if _, after := end.Add(-time.Nanosecond).Zone(); after == before {
		return end
	}
	// A change of offset in the rest of the year (no TZ string of the tz database has one on
	// the last day of a year, but the loops must not depend on it): find its instant.
	lo, hi := t, end
	for hi.Sub(lo) > time.Nanosecond {
		mid := lo.Add(hi.Sub(lo) / 2)
		if _, offset := mid.Zone(); offset == before {
			lo = mid
		} else {
			hi = mid
		}
	}
	return hi
}

// transitions returns the offset changes of loc at instants in (from, to].
func transitions(loc *time.Location, from, to time.Time) []transition {
	var out []transition
	t := from.In(loc)
	for {
		end := periodEnd(t)
		if end.IsZero() || end.After(to) {
			return out
		}
		_, before := t.Zone()
		next := end.In(loc)
		_, after := next.Zone()
		if before != after {
			out = append(out, transition{at: end.UTC(), before: time.Duration(before) * time.Second, after: time.Duration(after) * time.Second})
		}
		t = next
	}
}

// ClockChange is an instant at which a zone's clocks change.
type ClockChange struct {
	// At is the first instant with the new offset, in UTC.
	At time.Time
	// From and To are the zone's abbreviations before and after (CET, CEST).
	From, To string
}

// ClockChanges returns, in order, the instants in [from, to) at which loc's offset changes:
// where a window written in loc's wall time moves against UTC. `almanac preview` marks them.
func ClockChanges(loc *time.Location, from, to time.Time) []ClockChange {
	loc = orUTC(loc)
	var out []ClockChange
	for _, tr := range transitions(loc, from.Add(-time.Nanosecond), to.Add(-time.Nanosecond)) {
		before, _ := tr.at.Add(-time.Nanosecond).In(loc).Zone()
		after, _ := tr.at.In(loc).Zone()
		out = append(out, ClockChange{At: tr.at, From: before, To: after})
	}
	return out
}

// maxOffset bounds the UTC offsets the tz database has ever used (local mean times reached
// about ±15h); the zone periods that can contain a wall-clock reading all overlap
// [wall-maxOffset, wall+maxOffset].
const maxOffset = 18 * time.Hour

// resolution is the outcome of the DST rule for one wall-clock reading.
type resolution struct {
	at   time.Time // the instant the rule picks, in UTC
	kind WallKind
	// cause is the transition that makes the reading a Gap or a Repeat.
	cause transition
}

// resolve applies the DST rule to a wall. It inspects each zone period around the reading:
// the reading occurs in a period when the instant it names under that period's offset lies
// inside the period, and it falls into a gap when a forward transition skipped it.
func resolve(loc *time.Location, wall time.Time) resolution {
	var (
		res         resolution
		occurrences int
		gap         *transition
		prev        time.Duration
		havePrev    bool
	)
	limit := wall.Add(maxOffset)
	for t := wall.Add(-maxOffset).In(loc); ; {
		_, seconds := t.Zone()
		offset := time.Duration(seconds) * time.Second
		start, _ := t.ZoneBounds()
		end := periodEnd(t)

		if havePrev && offset != prev {
			tr := transition{at: start.UTC(), before: prev, after: offset}
			if lo, hi := tr.walls(); !wall.Before(lo) && wall.Before(hi) {
				if tr.isGap() {
					gap = &tr
				} else {
					res.cause = tr
				}
			}
		}
		if at := wall.Add(-offset); (start.IsZero() || !at.Before(start)) && (end.IsZero() || at.Before(end)) {
			// Periods are visited in order, so the first occurrence found is the earliest.
			if occurrences == 0 {
				res.at = at
			}
			occurrences++
		}

		if end.IsZero() || end.After(limit) {
			break
		}
		prev, havePrev = offset, true
		t = end.In(loc)
	}

	switch {
	case occurrences > 1:
		res.kind = Repeat
	case occurrences == 1:
		res.kind, res.cause = Normal, transition{}
	case gap != nil:
		res.at, res.kind, res.cause = gap.at, Gap, *gap
	default:
		// Unreachable for real zones: a reading that occurs in no period was skipped by a
		// transition. Fall back to time.Date rather than return a zero instant.
		res.at = time.Date(wall.Year(), wall.Month(), wall.Day(), wall.Hour(), wall.Minute(), 0, 0, loc).UTC()
	}
	return res
}

// latestWall returns the latest wall-clock reading shown in loc at or before instant t. It is
// t's own reading unless the clocks were set back shortly before t, in which case it is the
// reading just before they were set back. By the DST rule, a wall resolves to an instant at or
// before t exactly when it is not after latestWall(t), which lets Cron.Next and Cron.Prev
// search in wall-clock order.
func latestWall(loc *time.Location, t time.Time) time.Time {
	latest := wallOf(t, loc)
	for cur := t.In(loc); ; {
		start, _ := cur.ZoneBounds()
		// A set-back is at most a day (date-line moves); older transitions cannot matter.
		if start.IsZero() || t.Sub(start) > 2*maxOffset {
			return latest
		}
		cur = start.Add(-time.Nanosecond).In(loc)
		if w := wallOf(cur, loc); w.After(latest) {
			latest = w
		}
	}
}
