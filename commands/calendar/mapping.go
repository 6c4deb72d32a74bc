package calendar

import (
	"fmt"
	"regexp"
	"slices"
	"strconv"
	"strings"
	"time"
	"unicode/utf8"

	"github.com/emersion/go-ical"
	"github.com/teambition/rrule-go"

	calendarv1alpha1 "github.com/almanac-dev/almanac/api/calendar/v1alpha1"
	"github.com/almanac-dev/almanac/api/timing"
	"github.com/almanac-dev/almanac/commands/kube"
)

// dayEntry and periodEntry are days and periods being collected, with the names of every
// event that made them.
type dayEntry struct {
	date  string
	names []string
}

type periodEntry struct {
	start, end string
	names      []string
}

// importer collects the days and periods of a file's events.
type importer struct {
	opts Options
	zone timing.Zone
	// from and to are the dates [from, to) over which recurrences are expanded, as UTC
	// midnights; rangeStart and rangeEnd the same in the calendar's zone.
	from, to             time.Time
	rangeStart, rangeEnd time.Time
	horizon              string
	// overrides are the RECURRENCE-IDs of the VEVENTs that move or cancel one occurrence of
	// a recurring event, by UID.
	overrides map[string][]*ical.Prop
	// recurring are the UIDs of the recurring events.
	recurring map[string]bool
	days      map[string]*dayEntry
	periods   map[[2]string]*periodEntry
	// made counts the days and periods each event made, for the message of a file that makes
	// too many.
	made []contribution
	// steps are the occurrences recurrence sets yielded (see maxSteps); expanded the events
	// expanded.
	steps, expanded int
	notes           []string
}

type contribution struct {
	event         event
	days, periods int
	expanded      bool
	capped        bool
}

func (im *importer) note(format string, args ...any) {
	im.notes = append(im.notes, fmt.Sprintf(format, args...))
}

// chooseZone sets the calendar's zone: --time-zone, else X-WR-TIMEZONE when valid, else UTC.
// A legacy zone (EST, which ignores daylight saving time) is noted as admission warns of it.
func (im *importer) chooseZone(cals []*ical.Calendar) error {
	if err := im.chooseZoneName(cals); err != nil {
		return err
	}
	if im.zone.Warning != "" {
		im.note("time zone %s: %s", im.zone.Name, im.zone.Warning)
	}
	return nil
}

func (im *importer) chooseZoneName(cals []*ical.Calendar) error {
	if im.opts.TimeZone != "" {
		z, err := timing.NormalizeZone(im.opts.TimeZone)
		if err != nil {
			return kube.Usage("--time-zone %q: %v", im.opts.TimeZone, err)
		}
		im.zone = z
		return nil
	}
	im.zone = timing.Zone{Name: timing.DefaultZone, Location: time.UTC}
	name := propValue(cals[0].Props, "X-WR-TIMEZONE")
	if name == "" {
		return nil
	}
	z, err := timing.NormalizeZone(name)
	if err != nil {
		im.note("%s names the time zone X-WR-TIMEZONE:%s, which is not valid (%v): the calendar is in UTC; give --time-zone to choose its zone", im.opts.Source, name, err)
		return nil
	}
	im.zone = z
	return nil
}

var horizonPattern = regexp.MustCompile(`^([0-9]{1,4})(y|mo|w|d)$`)

// chooseRange sets the dates over which recurrences are expanded.
func (im *importer) chooseRange(now time.Time) error {
	loc := im.zone.Location
	y, m, d := now.In(loc).Date()
	if im.opts.From != "" {
		t, err := time.Parse(dateLayout, strings.TrimSpace(im.opts.From))
		if err != nil {
			return kube.Usage("--from %q is not a date: expected yyyy-MM-dd, e.g. %s", im.opts.From, now.In(loc).Format(dateLayout))
		}
		y, m, d = t.Date()
	}
	// Dates are UTC midnights; adding days to them is adding 24 hours.
	im.from = timing.ResolveWall(time.UTC, y, m, d, 0, 0)
	im.horizon = im.opts.Horizon
	if im.horizon == "" {
		im.horizon = DefaultHorizon
	}
	match := horizonPattern.FindStringSubmatch(strings.TrimSpace(im.horizon))
	n := 0
	if match != nil {
		n, _ = strconv.Atoi(match[1])
	}
	if match == nil || n == 0 {
		return kube.Usage(`--horizon %q is not a length of time: give a positive number of years, months, weeks or days, e.g. "3y", "18mo", "6w" or "90d"`, im.horizon)
	}
	switch match[2] {
	case "y":
		im.to = timing.ResolveWall(time.UTC, y+n, m, d, 0, 0)
	case "mo":
		im.to = timing.ResolveWall(time.UTC, y, m+time.Month(n), d, 0, 0)
	case "w":
		im.to = addDays(im.from, 7*n)
	default:
		im.to = addDays(im.from, n)
	}
	if im.to.After(timing.ResolveWall(time.UTC, y+maxHorizonYears, m, d, 0, 0)) {
		return kube.Usage("--horizon %q is longer than %d years: a calendar holds at most %d days and %d periods", im.horizon, maxHorizonYears, calendarv1alpha1.MaxDays, calendarv1alpha1.MaxPeriods)
	}
	// The range of timed occurrences: the same dates, from 00:00 in the calendar's zone (by
	// the engine's rule when a daylight-saving change skips midnight).
	im.rangeStart = timing.ResolveWall(loc, y, m, d, 0, 0)
	ty, tm, td := im.to.Date()
	im.rangeEnd = timing.ResolveWall(loc, ty, tm, td, 0, 0)
	return nil
}

// addDays adds n days to a date (a UTC midnight).
func addDays(date time.Time, n int) time.Time {
	return date.Add(time.Duration(n) * 24 * time.Hour)
}

// lastDate is the last date of the expansion range, yyyy-MM-dd.
func (im *importer) lastDate() string {
	return addDays(im.to, -1).Format(dateLayout)
}

// collectOverrides finds the VEVENTs that replace one occurrence of a recurring event.
func (im *importer) collectOverrides(events []event) {
	im.overrides = map[string][]*ical.Prop{}
	im.recurring = map[string]bool{}
	for _, e := range events {
		p := e.Props.Get(ical.PropRecurrenceID)
		switch {
		case e.uid == "":
		case p != nil:
			im.overrides[e.uid] = append(im.overrides[e.uid], p)
		case e.Props.Get(ical.PropRecurrenceRule) != nil || e.Props.Get(ical.PropRecurrenceDates) != nil:
			im.recurring[e.uid] = true
		}
	}
}

// add adds the days and periods of one event.
func (im *importer) add(e event) error {
	c := contribution{event: e}
	defer func() { im.made = append(im.made, c) }()
	if status, _ := e.Status(); status == ical.EventCancelled {
		if e.Props.Get(ical.PropRecurrenceID) == nil {
			im.note("skipped %s: it is cancelled (STATUS:CANCELLED)", e)
		}
		return nil
	}
	startProp := e.Props.Get(ical.PropDateTimeStart)
	if startProp == nil {
		im.note("skipped %s: it has no DTSTART, so no date", e)
		return nil
	}
	allDay := isDate(startProp)
	loc, err := im.localize(e, allDay)
	if err != nil {
		return err
	}
	start, err := e.DateTimeStart(loc)
	if err != nil {
		return fmt.Errorf("%s: DTSTART %q cannot be read: %w; write a date (DTSTART;VALUE=DATE:20271225) or a date and time (DTSTART;TZID=Europe/Berlin:20271225T090000)", e, startProp.Value, err)
	}
	end, err := e.DateTimeEnd(loc)
	if err != nil {
		return fmt.Errorf("%s: its end (DTEND or DURATION) cannot be read: %w", e, err)
	}
	name := e.summary
	emit := func(occ time.Time) {
		if allDay {
			d, p := im.addAllDay(occ, end.Sub(start), name)
			c.days += d
			c.periods += p
			return
		}
		im.addTimed(occ, occ.Add(end.Sub(start)), name)
		c.periods++
	}
	if !allDay && !end.After(start) {
		im.note("skipped %s: it has no duration (no DTEND or DURATION after DTSTART), and a period must end after it starts", e)
		return nil
	}

	rule, err := e.Props.RecurrenceRule()
	if err != nil {
		return fmt.Errorf("%s: RRULE cannot be read: %w", e, err)
	}
	rdates := e.Props.Values(ical.PropRecurrenceDates)
	if rule == nil && len(rdates) == 0 {
		if e.Props.Get(ical.PropRecurrenceID) != nil && im.recurring[e.uid] {
			// An occurrence moved by the file: part of its recurring event, so kept in the
			// range the event is expanded over.
			if im.inRange(start, allDay) {
				emit(start)
			}
			return nil
		}
		emit(start)
		return nil
	}
	if rule != nil && allDay && im.yearly(e, rule, start, end) {
		n := days(end.Sub(start))
		for i := range n {
			im.addDay(addDays(start, i).Format("01-02"), name)
		}
		c.days += n
		return nil
	}

	set, err := im.recurrenceSet(e, rule, loc, start)
	if err != nil {
		return err
	}
	limit := max(calendarv1alpha1.MaxDays, calendarv1alpha1.MaxPeriods)
	count := 0
	next := set.Iterator()
	for {
		occ, ok := next()
		if !ok {
			break
		}
		if im.steps++; im.steps > maxSteps {
			return fmt.Errorf("%s recurs too often to expand: more than %d occurrences before %s; remove its RRULE or give the occurrences that matter as events", e, maxSteps, im.to.Format(dateLayout))
		}
		if !im.inRangeOrBefore(occ, allDay) {
			break
		}
		if !im.inRange(occ, allDay) {
			continue
		}
		count++
		emit(occ)
		if count > limit {
			// Enough: its occurrences start at distinct instants, so they already make more
			// days or periods than a calendar holds, and checkLimits refuses the file.
			c.capped = true
			break
		}
	}
	c.expanded = true
	im.expanded++
	if count == 0 {
		im.note("expanded the recurring event %s: no occurrence starts from %s to %s (--from, --horizon %s)",
			e, im.from.Format(dateLayout), im.lastDate(), im.horizon)
		return nil
	}
	more := ""
	if c.capped {
		more = "more than "
		count--
	}
	im.note("expanded the recurring event %s: %s%d occurrences from %s to %s (--from, --horizon %s)",
		e, more, count, im.from.Format(dateLayout), im.lastDate(), im.horizon)
	return nil
}

// inRange reports whether an occurrence starts in the expansion range: all-day occurrences
// are UTC midnights of their dates, timed ones instants.
func (im *importer) inRange(t time.Time, allDay bool) bool {
	if allDay {
		return !t.Before(im.from) && t.Before(im.to)
	}
	return !t.Before(im.rangeStart) && t.Before(im.rangeEnd)
}

// inRangeOrBefore reports whether an occurrence starts before the end of the range.
func (im *importer) inRangeOrBefore(t time.Time, allDay bool) bool {
	if allDay {
		return t.Before(im.to)
	}
	return t.Before(im.rangeEnd)
}

// isDate reports whether a DTSTART is a date. A DTSTART:20271225 without VALUE=DATE, which
// some feeds write, is taken as one, and marked so for the library.
func isDate(p *ical.Prop) bool {
	if p.ValueType() == ical.ValueDate {
		return true
	}
	if p.Params.Get(ical.ParamValue) == "" && len(strings.TrimSpace(p.Value)) == len("20060102") {
		p.SetValueType(ical.ValueDate)
		return true
	}
	return false
}

// dateTimeProps are the properties of an event that hold dates and times.
var dateTimeProps = []string{ical.PropDateTimeStart, ical.PropDateTimeEnd, ical.PropExceptionDates, ical.PropRecurrenceDates, ical.PropRecurrenceID}

// localize returns the location in which e's dates and times without TZID are read, and
// prepares its properties for the library: each value of a multi-valued EXDATE or RDATE
// becomes a property of its own, and each TZID is read by the time engine (with its
// suggestions for misspelt zones), then dropped when it is DTSTART's zone (read through the
// location returned) or written in its canonical spelling.
func (im *importer) localize(e event, allDay bool) (*time.Location, error) {
	for _, name := range []string{ical.PropExceptionDates, ical.PropRecurrenceDates} {
		var split []ical.Prop
		for _, p := range e.Props.Values(name) {
			for v := range strings.SplitSeq(p.Value, ",") {
				q := ical.Prop{Name: p.Name, Params: ical.Params{}, Value: strings.TrimSpace(v)}
				for k, vs := range p.Params {
					q.Params[k] = slices.Clone(vs)
				}
				split = append(split, q)
			}
		}
		if split != nil {
			e.Props[name] = split
		}
	}
	if allDay {
		return time.UTC, nil
	}
	loc, zoneName := im.zone.Location, im.zone.Name
	if tzid := e.Props.Get(ical.PropDateTimeStart).Params.Get(ical.PropTimezoneID); tzid != "" {
		z, err := timing.NormalizeZone(tzid)
		if err != nil {
			return nil, fmt.Errorf("%s: DTSTART has TZID=%s: %w", e, tzid, err)
		}
		loc, zoneName = z.Location, z.Name
	}
	for _, name := range dateTimeProps {
		props := e.Props[name]
		for i := range props {
			tzid := props[i].Params.Get(ical.PropTimezoneID)
			if tzid == "" {
				continue
			}
			z, err := timing.NormalizeZone(tzid)
			if err != nil {
				return nil, fmt.Errorf("%s: %s has TZID=%s: %w", e, name, tzid, err)
			}
			if z.Name == zoneName {
				props[i].Params.Del(ical.PropTimezoneID)
			} else {
				props[i].Params.Set(ical.PropTimezoneID, z.Name)
			}
		}
	}
	return loc, nil
}

// yearly reports whether an all-day event's rule repeats it on the same month and day every
// year, without end or exception, so that it is written as "MM-dd" days.
func (im *importer) yearly(e event, rule *rrule.ROption, start, end time.Time) bool {
	if rule.Freq != rrule.YEARLY || rule.Interval > 1 || rule.Count != 0 || !rule.Until.IsZero() {
		return false
	}
	if len(rule.Bysetpos)+len(rule.Byyearday)+len(rule.Byweekno)+len(rule.Byweekday)+len(rule.Byhour)+
		len(rule.Byminute)+len(rule.Bysecond)+len(rule.Byeaster) > 0 {
		return false
	}
	for _, m := range rule.Bymonth {
		if m != int(start.Month()) {
			return false
		}
	}
	for _, d := range rule.Bymonthday {
		if d != start.Day() {
			return false
		}
	}
	if len(e.Props.Values(ical.PropExceptionDates)) > 0 || len(e.Props.Values(ical.PropRecurrenceDates)) > 0 || len(im.overrides[e.uid]) > 0 {
		return false
	}
	n := days(end.Sub(start))
	if n > maxDaysAsDays {
		return false
	}
	// The same MM-dd every year only when the event does not run over the end of February,
	// whose length changes.
	if start.Month() != time.February {
		return true
	}
	last := addDays(start, n-1)
	return last.Month() == time.February && (n == 1 || last.Day() != 29)
}

// recurrenceSet is the library's recurrence set of e, with what it leaves out: RDATEs, and
// the occurrences that other VEVENTs of the file move (RECURRENCE-ID).
func (im *importer) recurrenceSet(e event, rule *rrule.ROption, loc *time.Location, start time.Time) (*rrule.Set, error) {
	var set *rrule.Set
	if rule != nil {
		if rule.Freq == rrule.SECONDLY || rule.Freq == rrule.MINUTELY {
			return nil, fmt.Errorf("%s recurs every second or minute (RRULE FREQ=%s): a calendar is days and periods; give the stretch it covers as one event", e, rule.Freq)
		}
		s, err := e.RecurrenceSet(loc)
		if err != nil {
			return nil, fmt.Errorf("%s: its recurrence cannot be read: %w", e, err)
		}
		set = s
	} else {
		set = &rrule.Set{}
		set.RDate(start)
		for _, p := range e.Props.Values(ical.PropExceptionDates) {
			t, err := p.DateTime(loc)
			if err != nil {
				return nil, fmt.Errorf("%s: EXDATE %q cannot be read: %w", e, p.Value, err)
			}
			set.ExDate(t)
		}
	}
	for _, p := range e.Props.Values(ical.PropRecurrenceDates) {
		t, err := p.DateTime(loc)
		if err != nil {
			return nil, fmt.Errorf("%s: RDATE %q cannot be read (a PERIOD value is not supported: give the occurrence as an event of its own): %w", e, p.Value, err)
		}
		set.RDate(t)
	}
	for _, p := range im.overrides[e.uid] {
		q := *p
		q.Params = ical.Params{}
		for k, vs := range p.Params {
			q.Params[k] = slices.Clone(vs)
		}
		if tzid := q.Params.Get(ical.PropTimezoneID); tzid != "" {
			if z, err := timing.NormalizeZone(tzid); err == nil {
				if loc.String() == z.Location.String() {
					q.Params.Del(ical.PropTimezoneID)
				} else {
					q.Params.Set(ical.PropTimezoneID, z.Name)
				}
			}
		}
		t, err := q.DateTime(loc)
		if err != nil {
			return nil, fmt.Errorf("%s: the RECURRENCE-ID %q of another event with its UID cannot be read: %w", e, p.Value, err)
		}
		set.ExDate(t)
	}
	return set, nil
}

// days is the number of whole days an all-day event lasts: at least one (an all-day event
// with DTEND equal to DTSTART, which some feeds write, is one day).
func days(d time.Duration) int {
	n := int((d + 24*time.Hour - 1) / (24 * time.Hour))
	return max(n, 1)
}

// addAllDay adds an all-day occurrence starting on date (a UTC midnight) and lasting d, and
// returns the number of days and periods it made.
func (im *importer) addAllDay(date time.Time, d time.Duration, name string) (int, int) {
	n := days(d)
	if n > maxDaysAsDays {
		im.addPeriod(date.Format(dateLayout)+"T00:00", addDays(date, n).Format(dateLayout)+"T00:00", name)
		return 0, 1
	}
	for i := range n {
		im.addDay(addDays(date, i).Format(dateLayout), name)
	}
	return n, 0
}

// addTimed adds the period [start, end), as wall times in the calendar's zone, to the minute:
// the start rounded down and the end up.
func (im *importer) addTimed(start, end time.Time, name string) {
	loc := im.zone.Location
	s := start.In(loc).Truncate(time.Minute)
	e := end.In(loc)
	if t := e.Truncate(time.Minute); !t.Equal(e) {
		e = t.Add(time.Minute)
	}
	im.addPeriod(s.Format(dateTimeLayout), e.Format(dateTimeLayout), name)
}

func (im *importer) addDay(date, name string) {
	d, ok := im.days[date]
	if !ok {
		d = &dayEntry{date: date}
		im.days[date] = d
	}
	d.names = addName(d.names, name)
}

func (im *importer) addPeriod(start, end, name string) {
	key := [2]string{start, end}
	p, ok := im.periods[key]
	if !ok {
		p = &periodEntry{start: start, end: end}
		im.periods[key] = p
	}
	p.names = addName(p.names, name)
}

func addName(names []string, name string) []string {
	if name == "" || slices.Contains(names, name) {
		return names
	}
	return append(names, name)
}

// joinNames is the name of a merged day or period, cut to the length the API allows.
func joinNames(names []string) string {
	s := strings.Join(names, " / ")
	if utf8.RuneCountInString(s) <= maxNameLength {
		return s
	}
	r := []rune(s)
	return string(r[:maxNameLength-1]) + "…"
}

// spec returns the collected days and periods, sorted: the yearly days by date, then the
// dated days by date, then the periods by start and end.
func (im *importer) spec() calendarv1alpha1.CalendarSpec {
	spec := calendarv1alpha1.CalendarSpec{TimeZone: im.zone.Name}
	for _, d := range im.days {
		spec.Days = append(spec.Days, calendarv1alpha1.CalendarDay{Date: d.date, Name: joinNames(d.names)})
	}
	slices.SortFunc(spec.Days, func(a, b calendarv1alpha1.CalendarDay) int {
		if ay, by := len(a.Date) == 5, len(b.Date) == 5; ay != by {
			if ay {
				return -1
			}
			return 1
		}
		return strings.Compare(a.Date, b.Date)
	})
	for _, p := range im.periods {
		spec.Periods = append(spec.Periods, calendarv1alpha1.CalendarPeriod{Start: p.start, End: p.end, Name: joinNames(p.names)})
	}
	slices.SortFunc(spec.Periods, func(a, b calendarv1alpha1.CalendarPeriod) int {
		if c := strings.Compare(a.Start, b.Start); c != 0 {
			return c
		}
		return strings.Compare(a.End, b.End)
	})
	return spec
}

// whyEmpty says why the file made nothing.
func (im *importer) whyEmpty() string {
	if im.expanded > 0 {
		return fmt.Sprintf("its events are skipped, or recur with no occurrence from %s to %s; give another --from or a longer --horizon (now %s)",
			im.from.Format(dateLayout), im.lastDate(), im.horizon)
	}
	return "every event is skipped (standard error says why)"
}

// checkLimits refuses a calendar with more days or periods than the API allows, naming the
// events that made the most.
func (im *importer) checkLimits(spec calendarv1alpha1.CalendarSpec) error {
	check := func(what string, n, limit int, count func(contribution) int) error {
		if n <= limit {
			return nil
		}
		made := slices.Clone(im.made)
		slices.SortStableFunc(made, func(a, b contribution) int { return count(b) - count(a) })
		var top []string
		expanded := false
		for _, c := range made[:min(3, len(made))] {
			if count(c) == 0 {
				break
			}
			s := fmt.Sprintf("%s made %d", c.event, count(c))
			if c.capped {
				s = fmt.Sprintf("%s made more than %d", c.event, limit)
			}
			if c.expanded {
				s += " (recurring, expanded)"
				expanded = true
			}
			top = append(top, s)
		}
		fix := "split the file into several calendars, which a Schedule can all name in spec.calendars"
		if expanded {
			fix = fmt.Sprintf("give a shorter --horizon than %s (recurring events are expanded over it), or ", im.horizon) + fix
		}
		total := strconv.Itoa(n)
		if slices.ContainsFunc(im.made, func(c contribution) bool { return c.capped && count(c) > 0 }) {
			total = "more than " + strconv.Itoa(limit)
		}
		return kube.Refused("%s makes %s %s, more than a calendar holds (%d): %s; %s",
			im.opts.Source, total, what, limit, strings.Join(top, ", "), fix)
	}
	if err := check("days", len(spec.Days), calendarv1alpha1.MaxDays, func(c contribution) int { return c.days }); err != nil {
		return err
	}
	return check("periods", len(spec.Periods), calendarv1alpha1.MaxPeriods, func(c contribution) int { return c.periods })
}
