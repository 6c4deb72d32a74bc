package timing

import (
	"errors"
	"fmt"
	"math/bits"
	"strconv"
	"strings"
	"sync"
	"time"
)

// Day forms beyond standard cron. robfig/cron parses the standard fields; these forms, which
// users know from Quartz (and Spring, AWS EventBridge), are items of the day-of-month and
// day-of-week fields that almanac reads itself:
//
//	day-of-month  L      the last day of the month
//	              L-3    three days before the last day (n from 1 to 30)
//	              LW     the last business day of the month
//	              15W    the business day nearest the 15th, within the month (n from 1 to 31)
//	              W#2    the second business day of the month (n from 1 to 31)
//	day-of-week   MON#1  the first Monday of the month (n from 1 to 5; a day name or 0-6)
//	              FRIL   the last Friday of the month (also 5L)
//
// Each form is a list item of its own (no ranges or steps) and mixes with plain items:
// "1,15W,L". The rule that combines the two day fields is unchanged: when both are
// restricted, a day matches either.
//
// A business day is a local day, in the schedule's zone, whose weekday is one of the business
// weekdays (Monday to Friday unless the object says otherwise) and that its calendars
// (spec.calendars) leave open at the schedule's first time of day: the instant of that time
// on that day (by the DST rule, plus the spread's offset) is in no skip calendar and, when
// only is given, in an only calendar. So the run that a business-day form picks is never one
// that the calendars skip. Calendars that do not exist hold every slot anyway; the day choice
// ignores them.

// dayForms are the forms of a Cron beyond standard cron.
type dayForms struct {
	last      bool   // L
	lastMinus uint32 // bit n: L-n
	lastBiz   bool   // LW
	nearest   uint32 // bit n: nW
	nthBiz    uint32 // bit n: W#n
	// nthDow[d] has bit n for D#n of weekday d; lastDow has bit d for DL.
	nthDow  [7]uint8
	lastDow uint8
}

// dom reports whether f has a day-of-month form.
func (f *dayForms) dom() bool { return f.last || f.lastMinus != 0 || f.business() }

// dow reports whether f has a day-of-week form.
func (f *dayForms) dow() bool { return f.lastDow != 0 || f.nthDow != [7]uint8{} }

// business reports whether f has a form that counts business days.
func (f *dayForms) business() bool { return f.lastBiz || f.nearest != 0 || f.nthBiz != 0 }

// formsHint says where the forms belong, for messages about a misplaced or malformed one.
const formsHint = "the forms L, L-n, LW, nW and W#n are items of the day-of-month field and D#n and DL (MON#1, FRIL) of the day-of-week field, each on its own (no ranges or steps)"

// splitForms takes the items of a day field that are forms out of it, into f, and returns the
// items left for robfig/cron joined by commas ("" when none is left). dom says which field.
func splitForms(field string, dom bool, f *dayForms) (string, error) {
	var rest []string
	for _, item := range strings.Split(field, ",") {
		ok, err := parseForm(item, dom, f)
		if err != nil {
			return "", err
		}
		if !ok {
			rest = append(rest, item)
		}
	}
	return strings.Join(rest, ","), nil
}

// parseForm adds the form that item is to f; it reports false when item is not one (it is a
// plain item for robfig/cron).
func parseForm(item string, dom bool, f *dayForms) (bool, error) {
	u := strings.ToUpper(item)
	if !strings.ContainsAny(u, "LW#") {
		return false, nil
	}
	// number reads the n of a form, from 1 to hi.
	number := func(s string, hi int, what string) (int, error) {
		n, err := strconv.Atoi(s)
		if err != nil || n < 1 || n > hi || strings.Trim(s, "0123456789") != "" {
			return 0, fmt.Errorf("%q: %s is a number from 1 to %d", item, what, hi)
		}
		return n, nil
	}
	if dom {
		switch {
		case u == "L":
			f.last = true
		case u == "LW":
			f.lastBiz = true
		case strings.HasPrefix(u, "L-"):
			n, err := number(u[2:], 30, "the n of L-n (n days before the month's last day)")
			if err != nil {
				return false, err
			}
			f.lastMinus |= 1 << n
		case strings.HasPrefix(u, "W#"):
			n, err := number(u[2:], 31, "the n of W#n (the nth business day of the month)")
			if err != nil {
				return false, err
			}
			f.nthBiz |= 1 << n
		case strings.HasSuffix(u, "W") && !strings.ContainsAny(u[:len(u)-1], "LW#-/*,"):
			n, err := number(u[:len(u)-1], 31, "the n of nW (the business day nearest day n)")
			if err != nil {
				return false, err
			}
			f.nearest |= 1 << n
		case strings.Contains(u, "#") || u == "WL":
			return false, fmt.Errorf("%q is not a day-of-month form: %s; e.g. LW for the last business day, W#2 for the second, 15W for the one nearest the 15th", item, formsHint)
		default:
			return false, nil // robfig/cron names what is wrong with it
		}
		return true, nil
	}
	switch {
	case u == "L":
		return false, fmt.Errorf(`%q alone is not a day-of-week form: write FRIL (or 5L) for the last Friday of the month, or L in the day-of-month field for the month's last day`, item)
	case strings.Contains(u, "#"):
		day, nth, _ := strings.Cut(u, "#")
		d, err := cronWeekday(day)
		if err != nil {
			return false, fmt.Errorf("%q: %w (D#n is the nth weekday D of the month, e.g. MON#1)", item, err)
		}
		n, err := number(nth, 5, "the n of D#n (the nth such weekday of the month)")
		if err != nil {
			return false, err
		}
		f.nthDow[d] |= 1 << n
	case strings.HasSuffix(u, "L") && len(u) > 1:
		d, err := cronWeekday(u[:len(u)-1])
		if err != nil {
			return false, fmt.Errorf("%q: %w (DL is the last weekday D of the month, e.g. FRIL or 5L)", item, err)
		}
		f.lastDow |= 1 << d
	case u == "LW" || u == "W" || strings.HasSuffix(u, "W"):
		return false, fmt.Errorf("%q is not a day-of-week form: %s", item, formsHint)
	default:
		return false, nil
	}
	return true, nil
}

// cronWeekday reads a weekday as the day-of-week field writes it: 0 (Sunday) to 6, or SUN to
// SAT.
func cronWeekday(s string) (time.Weekday, error) {
	if n, err := strconv.Atoi(s); err == nil && strings.Trim(s, "0123456789") == "" {
		if n < 0 || n > 6 {
			return 0, fmt.Errorf("the weekday is 0 (Sunday) to 6, or SUN to SAT, not %s", s)
		}
		return time.Weekday(n), nil
	}
	for d := time.Sunday; d <= time.Saturday; d++ {
		if strings.EqualFold(s, d.String()[:3]) {
			return d, nil
		}
	}
	return 0, fmt.Errorf("the weekday is 0 (Sunday) to 6, or SUN to SAT, not %q", s)
}

// defaultWeekdays are the business weekdays of an object that does not name them, Monday to
// Friday, as a set (bit d for weekday d).
const defaultWeekdays uint8 = 1<<time.Monday | 1<<time.Tuesday | 1<<time.Wednesday | 1<<time.Thursday | 1<<time.Friday

// business is what a business day is for a Cron's business-day forms: the weekdays, and the
// calendars that close days, with the zone and the spread's offset of the instant at which a
// day is tested. Its memo of months is safe for concurrent use.
type business struct {
	weekdays uint8
	// mask is the object's calendars without those that do not exist.
	mask   Mask
	loc    *time.Location
	offset time.Duration

	mu     sync.Mutex
	months map[int]uint32
}

// maxMonthsKept is the most months whose business days one schedule keeps.
const maxMonthsKept = 1200

// weekdaySet returns the business weekdays of b (Monday to Friday for nil).
func (b *business) weekdaySet() uint8 {
	if b == nil {
		return defaultWeekdays
	}
	return b.weekdays
}

// withBusiness returns c with the business days given by weekdays (a set; 0 means Monday to
// Friday), the calendars of mask (those that exist), in loc, tested at the first time of day
// plus offset. A Cron without business-day forms is returned as it is.
func (c Cron) withBusiness(weekdays uint8, mask Mask, loc *time.Location, offset time.Duration) Cron {
	if !c.forms.business() {
		return c
	}
	if weekdays == 0 {
		weekdays = defaultWeekdays
	}
	c.biz = &business{weekdays: weekdays, mask: mask.existing(), loc: orUTC(loc), offset: offset, months: map[int]uint32{}}
	return c
}

// existing returns m without its calendars that do not exist (which hold every slot anyway):
// what decides which days are business days.
func (m Mask) existing() Mask {
	var out Mask
	for _, c := range m.Skip {
		if !c.missing {
			out.Skip = append(out.Skip, c)
		}
	}
	for _, c := range m.Only {
		if !c.missing {
			out.Only = append(out.Only, c)
		}
	}
	return out
}

// closes reports whether m closes the instant t.
func (m Mask) closes(t time.Time) bool {
	open := false
	m.pieces(Interval{Start: t, End: t.Add(time.Nanosecond)}, func(Interval) bool { open = true; return false })
	return !open
}

// monthShape is what the day forms read of a month: its length and the weekday of its 1st.
type monthShape struct {
	month time.Month
	days  int
	first time.Weekday
}

func shapeOf(y int, m time.Month) monthShape {
	return monthShape{month: m, days: daysIn(y, m), first: civil(y, m, 1, 0, 0).Weekday()}
}

// weekday returns the weekday of day d of the month.
func (ms monthShape) weekday(d int) time.Weekday { return (ms.first + time.Weekday((d-1)%7)) % 7 }

// weekdayDays returns the days of the month whose weekday is in the set (bit d for day d).
func (ms monthShape) weekdayDays(weekdays uint8) uint32 {
	var set uint32
	for d := 1; d <= ms.days; d++ {
		if weekdays&(1<<ms.weekday(d)) != 0 {
			set |= 1 << d
		}
	}
	return set
}

// businessDays returns the business days of the month y-m, of shape ms (bit d for day d).
func (c Cron) businessDays(y int, m time.Month, ms monthShape) uint32 {
	set := ms.weekdayDays(c.biz.weekdaySet())
	if c.biz == nil || c.biz.mask.Empty() {
		return set
	}
	b := c.biz
	key := y*12 + int(m) - 1
	b.mu.Lock()
	cached, ok := b.months[key]
	b.mu.Unlock()
	if ok {
		return cached
	}
	for d := 1; d <= ms.days; d++ {
		if set&(1<<d) == 0 {
			continue
		}
		at := resolve(b.loc, civil(y, m, d, c.firstHour, c.firstMinute)).at.Add(b.offset)
		if b.mask.closes(at) {
			set &^= 1 << d
		}
	}
	b.mu.Lock()
	if len(b.months) >= maxMonthsKept {
		clear(b.months)
	}
	b.months[key] = set
	b.mu.Unlock()
	return set
}

// formsMatch reports whether the schedule fires on day d of a month of shape ms, whose
// business days are biz (read only when the schedule has business-day forms): the month,
// both day fields and their forms, combined by the cron rule.
func (c Cron) formsMatch(ms monthShape, d int, biz uint32) bool {
	if c.month&(1<<uint(ms.month)) == 0 {
		return false
	}
	wd := ms.weekday(d)
	domMatch := c.dom&(1<<uint(d)) != 0 || c.forms.dom() && c.domForm(ms, d, biz)
	dowMatch := c.dow&(1<<uint(wd)) != 0 || c.forms.dow() && c.dowForm(ms, d, wd)
	if c.domOrDow {
		return domMatch || dowMatch
	}
	return domMatch && dowMatch
}

// domForm reports whether a day-of-month form matches day day of a month of shape ms with
// the business days biz.
func (c Cron) domForm(ms monthShape, day int, biz uint32) bool {
	f := &c.forms
	n := ms.days
	if f.last && day == n {
		return true
	}
	if k := n - day; k >= 1 && k <= 30 && f.lastMinus&(1<<k) != 0 {
		return true
	}
	if !f.business() || biz == 0 {
		return false
	}
	if f.lastBiz && day == bits.Len32(biz)-1 {
		return true
	}
	if f.nthBiz != 0 && biz&(1<<day) != 0 && f.nthBiz&(1<<(bits.OnesCount32(biz&(1<<day-1))+1)) != 0 {
		return true
	}
	for targets := f.nearest; targets != 0; targets &= targets - 1 {
		if nearestBusinessDay(biz, bits.TrailingZeros32(targets), n) == day {
			return true
		}
	}
	return false
}

// nearestBusinessDay returns the day of set nearest day target of a month of n days, the
// earlier one of two as near; 0 when target is past the month's end or set is empty.
func nearestBusinessDay(set uint32, target, n int) int {
	if target > n {
		return 0
	}
	for k := 0; k < n; k++ {
		if d := target - k; d >= 1 && set&(1<<d) != 0 {
			return d
		}
		if d := target + k; d <= n && set&(1<<d) != 0 {
			return d
		}
	}
	return 0
}

// dowForm reports whether a day-of-week form matches day day, weekday wd, of a month of shape
// ms.
func (c Cron) dowForm(ms monthShape, day int, wd time.Weekday) bool {
	f := &c.forms
	if f.nthDow[wd]&(1<<((day-1)/7+1)) != 0 {
		return true
	}
	return f.lastDow&(1<<wd) != 0 && day+7 > ms.days
}

// errTooRare is wrapped by the error of a schedule that fires, but not in every stretch of
// searchDays days.
var errTooRare = errors.New("fires too rarely")

// checkFires returns an error when the schedule (its day forms, with its business weekdays and
// without calendars) fires on no date of the years MinYear to MaxYear, or leaves a stretch of
// more days than the engine searches (searchDays) without a firing in between: the fifth
// Monday of February is in one year of 28. Which days of a month match depends only on the
// month, its length and the weekday of its first day, so each of those cases is computed once.
func (c Cron) checkFires() error {
	weekdays := c.biz.weekdaySet()
	type firings struct {
		lo, hi int
		known  bool
	}
	var memo [13][4][7]firings // by month, length − 28 and the weekday of the 1st
	first := civil(MinYear, time.January, 1, 0, 0).Weekday()
	dayNumber := 0 // days from MinYear-01-01 to the month's 1st
	prevDay, fired := 0, false
	var prevY, prevHi int
	var prevM time.Month
	for y := MinYear; y <= MaxYear; y++ {
		for m := time.January; m <= time.December; m++ {
			ms := monthShape{month: m, days: daysInFast(y, m), first: first}
			f := &memo[m][ms.days-28][first]
			if !f.known {
				biz := ms.weekdayDays(weekdays)
				for d := 1; d <= ms.days; d++ {
					if c.formsMatch(ms, d, biz) {
						if f.lo == 0 {
							f.lo = d
						}
						f.hi = d
					}
				}
				f.known = true
			}
			if f.lo != 0 {
				if day := dayNumber + f.lo - 1; fired && day-prevDay > searchDays-1 {
					return fmt.Errorf("%w: from %s to %s without a run", errTooRare,
						civil(prevY, prevM, prevHi, 0, 0).Format(time.DateOnly), civil(y, m, f.lo, 0, 0).Format(time.DateOnly))
				}
				prevDay, prevY, prevM, prevHi, fired = dayNumber+f.hi-1, y, m, f.hi, true
			}
			dayNumber += ms.days
			first = (first + time.Weekday(ms.days%7)) % 7
		}
	}
	if !fired {
		return errNeverFires
	}
	return nil
}

// daysInFast is daysIn without time.Date.
func daysInFast(y int, m time.Month) int {
	switch m {
	case time.February:
		if y%4 == 0 && (y%100 != 0 || y%400 == 0) {
			return 29
		}
		return 28
	case time.April, time.June, time.September, time.November:
		return 30
	}
	return 31
}

var errNeverFires = errors.New("never fires")

// weekdaysText writes a set of weekdays for messages: "Monday to Friday", "Sunday to
// Thursday", "Monday, Wednesday and Friday", "every day".
func weekdaysText(set uint8) string {
	set &= 1<<7 - 1
	if set == 1<<7-1 {
		return "every day"
	}
	// Three days or more in a row, in the week's cycle, read as a range.
	if n := bits.OnesCount8(set); n >= 3 {
		for d := time.Sunday; d <= time.Saturday; d++ {
			if set&(1<<d) == 0 || set&(1<<((d+6)%7)) != 0 {
				continue // not where a run starts
			}
			if run := (set>>d | set<<(7-d)) & (1<<7 - 1); run == 1<<n-1 {
				return d.String() + " to " + ((d + time.Weekday(n) - 1) % 7).String()
			}
		}
	}
	names := weekdayNames(set)
	if len(names) == 1 {
		return names[0]
	}
	return strings.Join(names[:len(names)-1], ", ") + " and " + names[len(names)-1]
}

// ErrNoSlot is wrapped by the error of a walk that found no slot of a schedule within the
// engine's horizon (eight years), and by nothing else: a schedule that admission accepted
// finds none only when its calendars close every day that its business-day forms could pick.
var ErrNoSlot = errors.New("no slot")

// noSlot says why c has no slot within the horizon from the instant t, in loc, in which
// direction.
func (c Cron) noSlot(loc *time.Location, t time.Time, after bool) error {
	dir := "after"
	if !after {
		dir = "before"
	}
	why := ""
	if c.forms.business() && c.biz != nil && !c.biz.mask.Empty() {
		why = fmt.Sprintf(": its business days (%s, at %02d:%02d) are all closed by %s, so its business-day forms find no day; "+
			"check the calendars (spec.calendars) and the business days (spec.businessDays)",
			weekdaysText(c.biz.weekdays), c.firstHour, c.firstMinute, c.biz.mask.names())
	}
	return &noSlotError{fmt.Sprintf("%q has no slot within eight years %s %s %s%s", c.spec, dir, t.In(orUTC(loc)).Format(localLayout), orUTC(loc), why)}
}

// noSlotError is an error that wraps ErrNoSlot with a message of its own.
type noSlotError struct{ msg string }

func (e *noSlotError) Error() string { return e.msg }
func (e *noSlotError) Unwrap() error { return ErrNoSlot }

// names names m's calendars for a message: "Calendar holidays and outside ClusterCalendar
// trading".
func (m Mask) names() string {
	var parts []string
	for _, c := range m.Skip {
		parts = append(parts, c.name)
	}
	for _, c := range m.Only {
		parts = append(parts, "outside "+c.name)
	}
	if len(parts) == 1 {
		return parts[0]
	}
	return strings.Join(parts[:len(parts)-1], ", ") + " and " + parts[len(parts)-1]
}

// parseBusinessDays reads the business weekdays of a spec (FieldBusinessDays): the set of
// the days, Monday to Friday when none is given (or none is valid), and an error for each item
// that is not a day.
func parseBusinessDays(days []string) (uint8, []FieldError) {
	var (
		set  uint8
		errs []FieldError
	)
	for i, d := range days {
		day, err := ParseWeekday(d)
		if err != nil {
			errs = append(errs, FieldError{Field: FieldBusinessDays, Index: &i, Value: d, Detail: err.Error()})
			continue
		}
		set |= 1 << day
	}
	if set == 0 {
		set = defaultWeekdays
	}
	return set, errs
}

// checkBusinessDaysUsed refuses business days for a schedule that has no business-day form:
// they would change nothing.
func checkBusinessDaysUsed(days []string, c Cron) error {
	if len(days) == 0 || c.forms.business() {
		return nil
	}
	return fmt.Errorf("%q is set, but schedule %q has no business-day form, so it would change nothing: remove it, "+
		"or use a form that counts business days in the day-of-month field: LW (the last business day), W#2 (the second), 15W (the one nearest the 15th)",
		strings.Join(days, ", "), c.spec)
}

// CountsBusinessDays reports whether the schedule has a business-day form (LW, nW, W#n),
// whose days its business days and calendars decide.
func (c Cron) CountsBusinessDays() bool { return c.forms.business() }

// HasDayForms reports whether the schedule has a day form beyond standard cron (L, L-n, LW,
// nW, W#n, D#n, DL), which robfig/cron and the systems built on it refuse.
func (c Cron) HasDayForms() bool { return c.forms.dom() || c.forms.dow() }

// EitherDayNote says, for a schedule with day forms whose two day fields are both restricted,
// that a day matching either fires (the rule of cron, which Quartz does not have: there one of
// the two fields must be "?"), and how to write the other meaning; "" otherwise.
func (c Cron) EitherDayNote() string {
	if !c.domOrDow || !c.HasDayForms() {
		return ""
	}
	fields := strings.Fields(c.spec)
	dom, dow := fields[2], fields[4]
	if c.forms.business() {
		return fmt.Sprintf("%q restricts both day fields, so it fires on each day that matches either, as cron does: %s or %s. "+
			"If %s should only count business days, write * in the day-of-week field and list the business weekdays in businessDays", c.spec, dom, dow, dom)
	}
	return fmt.Sprintf("%q restricts both day fields, so it fires on each day that matches either, as cron does: %s or %s; "+
		"to fire only on days that match both, restrict one field and leave the other *", c.spec, dom, dow)
}

// BusinessDaysText says which weekdays the business-day forms of a Cron window's schedule
// count ("Monday to Friday"), for descriptions; "" for a spec whose schedule has no such form
// (or does not parse).
func (s Spec) BusinessDaysText() string {
	weekdays, errs := parseBusinessDays(s.BusinessDays)
	if s.Type != TypeCron || len(errs) > 0 {
		return ""
	}
	c, err := parseCron(s.Schedule, weekdays)
	if err != nil || !c.forms.business() {
		return ""
	}
	return weekdaysText(weekdays)
}
