package timing

import (
	"crypto/sha256"
	"encoding/hex"
	"fmt"
	"slices"
	"sort"
	"strconv"
	"strings"
	"sync"
	"time"
)

// Calendars. A calendar (the Calendar and ClusterCalendar kinds) is a set of instants: whole
// days and periods, written in its own zone. Schedules and ScheduledJobs name calendars to
// skip, and calendars to keep to (Mask); their windows are cut, and their slots skipped, by
// the instants of those calendars, whatever the zones of each.

// Field names of a CalendarSpec, as FieldError.Field (and Sub) report them.
const (
	FieldDays    = "days"
	FieldPeriods = "periods"
	FieldDate    = "date"
	FieldStart   = "start"
	FieldEnd     = "end"
)

// CalendarDay is a day of a calendar as the user wrote it: Date is yyyy-MM-dd, or MM-dd for
// that day every year.
type CalendarDay struct{ Date, Name string }

// CalendarPeriod is a period of a calendar as the user wrote it: [Start, End), wall times
// yyyy-MM-ddTHH:mm.
type CalendarPeriod struct{ Start, End, Name string }

// CalendarSpec is a calendar as the user wrote it.
type CalendarSpec struct {
	// Name is how messages name the calendar: "Calendar holidays", "ClusterCalendar de".
	Name string
	// TimeZone is the zone of the days and periods; "" means DefaultZone.
	TimeZone string
	Days     []CalendarDay
	Periods  []CalendarPeriod
}

// Calendar is a compiled CalendarSpec: a set of instants. Create it with CalendarSpec.Compile,
// or MissingCalendar for one that does not exist. Its methods are safe for concurrent use.
type Calendar struct {
	name string
	zone Zone
	// key names the calendar's instants in the memos of windows (see windowKey).
	key string
	// missing marks a calendar that was referenced but not found (see MissingCalendar).
	missing bool
	// fixed are the dated days and the periods, sorted by start; reach[i] is the latest end of
	// fixed[:i+1], so that the first entry that ends after t is found by binary search.
	fixed []entry
	reach []time.Time
	// yearly are the MM-dd days; the entries of each year are computed once (see year).
	yearly []yearlyDay
	mu     sync.Mutex
	years  map[int]*yearEntries
}

// entry is one day or period of a calendar, as instants.
type entry struct {
	Interval
	name string
}

type yearlyDay struct {
	month time.Month
	day   int
	name  string
}

// yearEntries are a calendar's yearly days in one year, sorted by start, with their reach.
type yearEntries struct {
	entries []entry
	reach   []time.Time
}

// maxYearsKept is the most years whose entries one calendar keeps.
const maxYearsKept = 64

// Name returns how messages name the calendar.
func (c *Calendar) Name() string { return c.name }

// Zone returns the calendar's zone.
func (c *Calendar) Zone() Zone { return c.zone }

// Missing reports whether the calendar was referenced but not found.
func (c *Calendar) Missing() bool { return c.missing }

// MissingCalendar returns the stand-in for a calendar that an object names but that does not
// exist. It holds the object (docs/time-semantics.md#calendars): in skip it covers every
// instant, in only none, so that no window opens and no slot runs until it exists.
func MissingCalendar(name string) *Calendar {
	return &Calendar{name: name, missing: true, key: "missing:" + name}
}

// Compile validates the spec and returns the calendar, or every problem found. A calendar's
// yearly days are computed for a year when a walk first reaches it, and kept in the calendar.
func (s CalendarSpec) Compile() (*Calendar, []FieldError) {
	var errs []FieldError
	zone, zoneErr := compileZone(s.TimeZone)
	if zoneErr != nil {
		errs = append(errs, *zoneErr)
	}
	loc := zone.Location
	c := &Calendar{name: s.Name, zone: zone, years: map[int]*yearEntries{}}
	canonical := []string{s.Name, zone.Name}
	for i, d := range s.Days {
		fail := func(err error) {
			errs = append(errs, FieldError{Field: FieldDays, Index: &i, Sub: FieldDate, Value: d.Date, Detail: err.Error()})
		}
		y, m, day, yearly, err := parseCalendarDate(d.Date)
		if err != nil {
			fail(err)
			continue
		}
		if yearly {
			c.yearly = append(c.yearly, yearlyDay{month: m, day: day, name: d.Name})
			canonical = append(canonical, fmt.Sprintf("y%02d-%02d", int(m), day), d.Name)
			continue
		}
		c.fixed = append(c.fixed, entry{Interval: dayInterval(loc, y, m, day), name: d.Name})
		canonical = append(canonical, fmt.Sprintf("d%04d-%02d-%02d", y, int(m), day), d.Name)
	}
	for i, p := range s.Periods {
		start, startErr := ParseLocalDateTime(p.Start, loc)
		if startErr != nil {
			errs = append(errs, FieldError{Field: FieldPeriods, Index: &i, Sub: FieldStart, Value: p.Start, Detail: startErr.Error()})
		}
		end, endErr := ParseLocalDateTime(p.End, loc)
		if endErr != nil {
			errs = append(errs, FieldError{Field: FieldPeriods, Index: &i, Sub: FieldEnd, Value: p.End, Detail: endErr.Error()})
		}
		if startErr != nil || endErr != nil {
			continue
		}
		iv := Interval{Start: start.In(loc), End: end.In(loc)}
		if err := checkOneShotOrder(start, end, iv, zone); err != nil {
			errs = append(errs, FieldError{Field: FieldPeriods, Index: &i, Sub: FieldEnd, Value: p.End,
				Detail: strings.Replace(err.Error(), "a OneShot window must end after it starts", "a period must end after it starts", 1)})
			continue
		}
		c.fixed = append(c.fixed, entry{Interval: iv, name: p.Name})
		canonical = append(canonical, "p"+start.String()+"/"+end.String(), p.Name)
	}
	if len(errs) > 0 {
		return nil, errs
	}
	slices.SortStableFunc(c.fixed, func(a, b entry) int { return a.Start.Compare(b.Start) })
	c.reach = reachOf(c.fixed)
	sum := sha256.Sum256([]byte(strings.Join(canonical, "\x00")))
	c.key = hex.EncodeToString(sum[:16])
	return c, nil
}

// Key names the calendar's instants: two calendars with the same key cover the same instants
// with the same names. Reconcilers compare keys to see whether a calendar's edit changes
// anything.
func (c *Calendar) Key() string { return c.key }

// parseCalendarDate parses yyyy-MM-dd, or MM-dd (yearly).
func parseCalendarDate(s string) (y int, m time.Month, d int, yearly bool, err error) {
	const expected = `expected yyyy-MM-dd for one day or MM-dd for that day every year, e.g. "2027-12-24" or "12-25"`
	t := strings.TrimSpace(s)
	switch {
	case len(t) == 10 && leadingDigits(t, 4) == 4 && t[4] == '-' && leadingDigits(t[5:], 2) == 2 && t[7] == '-' && leadingDigits(t[8:], 2) == 2:
		y, m, d = atoi(t[:4]), time.Month(atoi(t[5:7])), atoi(t[8:])
	case len(t) == 5 && leadingDigits(t, 2) == 2 && t[2] == '-' && leadingDigits(t[3:], 2) == 2:
		y, m, d, yearly = 2000, time.Month(atoi(t[:2])), atoi(t[3:]), true // 2000 is a leap year: 02-29 is valid
	default:
		return 0, 0, 0, false, fmt.Errorf("%q is not a date: %s", s, expected)
	}
	if m < time.January || m > time.December {
		return 0, 0, 0, false, fmt.Errorf("%q is not a valid date: months go from 01 to 12", s)
	}
	if n := daysIn(y, m); d < 1 || d > n {
		if yearly {
			return 0, 0, 0, false, fmt.Errorf("%q is not a valid date: %s has %d days", s, m, n)
		}
		return 0, 0, 0, false, fmt.Errorf("%q is not a valid date: %s %d has %d days", s, m, y, n)
	}
	if yearly {
		y = 0
	}
	return y, m, d, yearly, nil
}

// dayInterval is the local date y-m-d in loc as instants: [00:00, next day's 00:00), each
// resolved by the DST rule.
func dayInterval(loc *time.Location, y int, m time.Month, d int) Interval {
	day := civil(y, m, d, 0, 0)
	return Interval{Start: resolve(loc, day).at, End: resolve(loc, day.AddDate(0, 0, 1)).at}
}

func reachOf(entries []entry) []time.Time {
	reach := make([]time.Time, len(entries))
	for i, e := range entries {
		reach[i] = e.End
		if i > 0 && reach[i-1].After(e.End) {
			reach[i] = reach[i-1]
		}
	}
	return reach
}

// firstEndingAfter returns the entry of entries (sorted by start, with their reach) that ends
// after t and starts first.
func firstEndingAfter(entries []entry, reach []time.Time, t time.Time) (entry, bool) {
	i := sort.Search(len(reach), func(i int) bool { return reach[i].After(t) })
	if i == len(reach) {
		return entry{}, false
	}
	return entries[i], true // reach[i] > reach[i-1], so entries[i] itself ends after t
}

// year returns the calendar's yearly days in local year y.
func (c *Calendar) year(y int) *yearEntries {
	c.mu.Lock()
	defer c.mu.Unlock()
	if ye, ok := c.years[y]; ok {
		return ye
	}
	ye := &yearEntries{}
	for _, d := range c.yearly {
		if d.day > daysIn(y, d.month) {
			continue // 02-29 outside leap years
		}
		ye.entries = append(ye.entries, entry{Interval: dayInterval(c.zone.Location, y, d.month, d.day), name: d.name})
	}
	slices.SortStableFunc(ye.entries, func(a, b entry) int { return a.Start.Compare(b.Start) })
	ye.reach = reachOf(ye.entries)
	if len(c.years) >= maxYearsKept {
		clear(c.years)
	}
	c.years[y] = ye
	return ye
}

// after returns the entry of c that ends after t and starts first (the one containing t, if
// any, or else the next one), searching yearly days up to searchHorizon past t.
func (c *Calendar) after(t time.Time) (entry, bool) {
	best, ok := firstEndingAfter(c.fixed, c.reach, t)
	if len(c.yearly) > 0 {
		first := wallOf(t, c.zone.Location).Year() - 1
		last := wallOf(t.Add(searchHorizon), c.zone.Location).Year()
		for y := first; y <= last; y++ {
			if ye := c.year(y); len(ye.entries) > 0 {
				if e, found := firstEndingAfter(ye.entries, ye.reach, t); found {
					if !ok || e.Start.Before(best.Start) {
						best, ok = e, true
					}
					break
				}
			}
			if ok && best.Start.Before(civil(y+1, 1, 1, 0, 0).Add(-maxOffset)) {
				break // later years start later
			}
		}
	}
	return best, ok
}

// namesIn returns the names of c's entries that intersect iv, in order of their start, at
// most maxNames.
func (c *Calendar) namesIn(iv Interval) []string {
	var names []string
	scan := func(entries []entry, reach []time.Time) {
		i := sort.Search(len(reach), func(i int) bool { return reach[i].After(iv.Start) })
		for ; i < len(entries) && entries[i].Start.Before(iv.End) && len(names) < maxNames; i++ {
			if entries[i].End.After(iv.Start) {
				names = append(names, entryName(entries[i]))
			}
		}
	}
	scan(c.fixed, c.reach)
	if len(c.yearly) > 0 {
		first := wallOf(iv.Start, c.zone.Location).Year() - 1
		last := min(wallOf(iv.End, c.zone.Location).Year(), first+maxNameYears)
		for y := first; y <= last && len(names) < maxNames; y++ {
			ye := c.year(y)
			scan(ye.entries, ye.reach)
		}
	}
	return names
}

// maxNames is the most entry names a reason lists, and maxNameYears the most years of yearly
// days it looks through.
const (
	maxNames     = 3
	maxNameYears = 10
)

func entryName(e entry) string {
	if e.name != "" {
		return e.name
	}
	return e.Start.UTC().Format("2006-01-02")
}

func maxTime(a, b time.Time) time.Time {
	if a.After(b) {
		return a
	}
	return b
}

// allTime is the interval a missing skip calendar covers.
var allTime = Interval{Start: time.Date(1, 1, 1, 0, 0, 0, 0, time.UTC), End: time.Date(9999, 12, 31, 0, 0, 0, 0, time.UTC)}

// Mask is what spec.calendars makes of time for a Schedule or a ScheduledJob: the instants of
// its Skip calendars are closed, and, when Only names calendars, so is every instant outside
// all of them. The zero Mask closes nothing.
type Mask struct {
	Skip, Only []*Calendar
}

// Empty reports whether m closes nothing.
func (m Mask) Empty() bool { return len(m.Skip) == 0 && len(m.Only) == 0 }

// key names m in the memos of windows.
func (m Mask) key() string {
	if m.Empty() {
		return ""
	}
	var b strings.Builder
	for _, c := range m.Skip {
		b.WriteString("s" + strconv.Itoa(len(c.key)) + ":" + c.key)
	}
	for _, c := range m.Only {
		b.WriteString("o" + strconv.Itoa(len(c.key)) + ":" + c.key)
	}
	return b.String()
}

// Missing returns the names of m's calendars that do not exist.
func (m Mask) Missing() []string {
	var out []string
	for _, c := range append(append([]*Calendar(nil), m.Skip...), m.Only...) {
		if c.missing && !slices.Contains(out, c.name) {
			out = append(out, c.name)
		}
	}
	return out
}

// closesAll reports whether m closes every instant because of a missing calendar: one in
// Skip, or every one in Only.
func (m Mask) closesAll() bool {
	for _, c := range m.Skip {
		if c.missing {
			return true
		}
	}
	if len(m.Only) == 0 {
		return false
	}
	for _, c := range m.Only {
		if !c.missing {
			return false
		}
	}
	return true
}

// coverLimit is how far past t a cover is followed: beyond it, the engine never looks.
const coverLimit = searchHorizon + 2*MaxCronDuration

// cover returns the first stretch that the union of cals covers and that ends after t:
// touching and overlapping entries merge. It is cut coverLimit past t.
func cover(cals []*Calendar, skip bool, t time.Time) (Interval, bool) {
	next := func(t time.Time) (Interval, bool) {
		var best Interval
		found := false
		for _, c := range cals {
			var iv Interval
			switch {
			case c.missing && skip:
				iv = allTime
			case c.missing:
				continue
			default:
				e, ok := c.after(t)
				if !ok {
					continue
				}
				iv = e.Interval
			}
			if !found || iv.Start.Before(best.Start) || iv.Start.Equal(best.Start) && iv.End.After(best.End) {
				best, found = iv, true
			}
		}
		return best, found
	}
	iv, ok := next(t)
	if !ok {
		return Interval{}, false
	}
	limit := t.Add(coverLimit)
	for iv.End.Before(limit) {
		more, ok := next(iv.End.Add(-time.Nanosecond))
		if !ok || more.Start.After(iv.End) || !more.End.After(iv.End) {
			break
		}
		iv.End = more.End
	}
	return iv, true
}

// pieces yields the parts of iv that m leaves open, in order.
func (m Mask) pieces(iv Interval, yield func(Interval) bool) bool {
	if m.Empty() {
		return yield(iv)
	}
	cur := iv.Start
	for cur.Before(iv.End) {
		lim := iv.End
		if len(m.Only) > 0 {
			o, ok := cover(m.Only, false, cur)
			if !ok || !o.Start.Before(iv.End) {
				return true
			}
			cur = maxTime(cur, o.Start)
			if o.End.Before(lim) {
				lim = o.End
			}
		}
		for cur.Before(lim) {
			k, ok := cover(m.Skip, true, cur)
			if !ok || !k.Start.Before(lim) {
				if !yield(Interval{Start: cur, End: lim}) {
					return false
				}
				cur = lim
				break
			}
			if k.Start.After(cur) && !yield(Interval{Start: cur, End: k.Start}) {
				return false
			}
			cur = k.End
		}
		cur = maxTime(cur, lim)
	}
	return true
}

// nextOpen returns the first instant at or after t that m does not close; past coverLimit it
// gives up and returns an instant that far away.
func (m Mask) nextOpen(t time.Time) time.Time {
	limit := t.Add(coverLimit)
	for cur := t; cur.Before(limit); {
		if len(m.Only) > 0 {
			o, ok := cover(m.Only, false, cur)
			if !ok {
				return limit
			}
			cur = maxTime(cur, o.Start)
		}
		k, ok := cover(m.Skip, true, cur)
		if !ok || k.Start.After(cur) {
			return cur
		}
		cur = k.End
	}
	return limit
}

// Excludes reports whether m closes the instant t, and why (see Reason).
func (m Mask) Excludes(t time.Time) (string, bool) {
	open := false
	m.pieces(Interval{Start: t, End: t.Add(time.Nanosecond)}, func(Interval) bool { open = true; return false })
	if open {
		return "", false
	}
	return m.Reason(Interval{Start: t, End: t.Add(time.Nanosecond)}), true
}

// Reason says why m closes iv (a stretch it closes): the names of the skip calendars' days
// and periods in it, with their calendar ("Christmas Day (Calendar holidays)"), or that it is
// outside the only calendars ("outside Calendar trading-days"), or that a calendar does not
// exist.
func (m Mask) Reason(iv Interval) string {
	var parts []string
	for _, c := range m.Skip {
		if c.missing {
			parts = append(parts, c.name+" does not exist")
			continue
		}
		if names := c.namesIn(iv); len(names) > 0 {
			parts = append(parts, strings.Join(names, ", ")+" ("+c.name+")")
		}
	}
	if len(parts) == 0 && len(m.Only) > 0 {
		names := make([]string, len(m.Only))
		for i, c := range m.Only {
			names[i] = c.name
			if c.missing {
				names[i] += " (which does not exist)"
			}
		}
		parts = append(parts, "outside "+strings.Join(names, " and "))
	}
	return strings.Join(parts, "; ")
}

// Skipped is a stretch of a window, or a slot, that calendars closed.
type Skipped struct {
	Interval
	// Reason says which calendar entries closed it (see Mask.Reason).
	Reason string
}
