package timing

import (
	"errors"
	"fmt"
	"math/bits"
	"slices"
	"strings"
	"time"

	"github.com/robfig/cron/v3"
)

// Cron is a parsed cron schedule: five fields (minute, hour, day of month, month, day of
// week) or a descriptor, with the day forms L, L-n, LW, nW and W#n in the day-of-month field
// and D#n and DL in the day-of-week field (see monthdays.go). Day matching follows
// robfig/cron, like Kubernetes CronJobs: when both the day-of-month and the day-of-week field
// are restricted (neither starts with *), a day matches either; otherwise it must match both.
//
// The zero Cron never fires.
type Cron struct {
	spec string
	// Bit i is set when value i matches.
	minute, hour, dom, month, dow uint64
	// domOrDow is true when a day matching either the day-of-month or the day-of-week
	// field matches (both fields restricted).
	domOrDow bool
	// forms are the day forms beyond standard cron.
	forms dayForms
	// firstHour and firstMinute are the schedule's first time of day: a day is a business day
	// when the calendars leave that time open on it.
	firstHour, firstMinute int
	// biz says what a business day is for the business-day forms (LW, nW, W#n); nil means
	// Monday to Friday, without calendars.
	biz *business
}

// searchHorizon bounds every search for a slot or an interval, so that no input can make
// the engine loop. Any date that a valid cron schedule requires recurs within eight years:
// February 29 is the rarest, and it skips only century years not divisible by 400
// (2096 → 2104); ParseCron refuses day forms that can go longer without a firing (the fifth
// Monday of February).
const searchHorizon = searchDays * 24 * time.Hour

// searchDays is searchHorizon in days.
const searchDays = 8*366 + 1

// descriptors maps the accepted descriptors to their canonical spelling.
var descriptors = map[string]string{
	"@yearly":   "@yearly",
	"@annually": "@yearly",
	"@monthly":  "@monthly",
	"@weekly":   "@weekly",
	"@daily":    "@daily",
	"@midnight": "@daily",
	"@hourly":   "@hourly",
}

const cronExpected = `expected 5 fields (minute hour day-of-month month day-of-week), e.g. "30 2 * * 1-5", or one of @yearly, @annually, @monthly, @weekly, @daily, @midnight, @hourly`

// cronFields names the five fields, for messages.
var cronFields = [5]string{"minute", "hour", "day-of-month", "month", "day-of-week"}

// ParseCron parses a cron schedule with robfig/cron's standard parser (five fields, or the
// descriptors @yearly, @annually, @monthly, @weekly, @daily, @midnight and @hourly). It
// rejects @every, which counts from whenever the process started and ignores time zones;
// TZ= and CRON_TZ= prefixes, because the zone is a field of its own; six-field forms with
// seconds; and schedules that never fire, such as "0 0 30 2 *". It never panics.
//
// The day forms L, L-n, LW, nW, W#n, D#n and DL are read by almanac itself (see Cron); the
// business-day forms (LW, nW, W#n) count Monday to Friday as business days, without
// calendars, until the schedule is compiled in a Spec or a JobSpec with the object's business
// days and calendars. A schedule with day forms that can go more than eight years without a
// firing is refused too.
func ParseCron(spec string) (Cron, error) {
	return parseCron(spec, defaultWeekdays)
}

// parseCron is ParseCron with the business weekdays (bit d for weekday d) that the
// business-day forms count, which decide whether the schedule fires at all.
func parseCron(spec string, weekdays uint8) (Cron, error) {
	s := strings.TrimSpace(spec)
	if s == "" {
		return Cron{}, errors.New("a cron schedule is required: " + cronExpected)
	}
	upper := strings.ToUpper(s)
	for _, prefix := range []string{"TZ=", "CRON_TZ="} {
		if !strings.HasPrefix(upper, prefix) {
			continue
		}
		zone, _, _ := strings.Cut(s[len(prefix):], " ")
		if zone == "" {
			return Cron{}, fmt.Errorf("%q starts with %q: the time zone is not part of the schedule; remove the prefix and set the schedule's time zone instead", spec, s[:len(prefix)])
		}
		return Cron{}, fmt.Errorf("%q sets a time zone inside the schedule: remove %q and set the schedule's time zone to %q instead", spec, s[:len(prefix)]+zone, zone)
	}

	if strings.HasPrefix(s, "@") {
		name := strings.ToLower(s)
		if name == "@every" || strings.HasPrefix(name, "@every ") {
			return Cron{}, fmt.Errorf(`%q is not supported: @every counts from when the controller started and ignores the time zone; use a 5-field schedule such as %q`,
				spec, everyHint(strings.TrimSpace(s[len("@every"):])))
		}
		canonical, ok := descriptors[name]
		if !ok {
			return Cron{}, fmt.Errorf("%q is not a known descriptor: %s", spec, cronExpected)
		}
		c, err := cronOf(canonical, []string{canonical}, dayForms{})
		if err != nil {
			return Cron{}, fmt.Errorf("%q is not a valid cron schedule: %w; %s", spec, err, cronExpected)
		}
		return c, nil
	}

	fields := strings.Fields(s)
	switch n := len(fields); {
	case n == 6 || n == 7:
		return Cron{}, fmt.Errorf("%q has %d fields: seconds (and years) are not supported; %s", spec, n, cronExpected)
	case n != 5:
		return Cron{}, fmt.Errorf("%q has %d fields: %s", spec, n, cronExpected)
	}
	// The day forms are taken out of the day fields first; robfig/cron parses the rest.
	var forms dayForms
	plain := slices.Clone(fields)
	for _, i := range []int{2, 4} {
		rest, err := splitForms(fields[i], i == 2, &forms)
		if err != nil {
			return Cron{}, fmt.Errorf("%q is not a valid cron schedule: %s field: %w", spec, cronFields[i], err)
		}
		plain[i] = rest
	}
	// Parse each field on its own first, so that the message can name the field.
	for i, f := range plain {
		if f == "" {
			continue // only forms
		}
		probe := []string{"*", "*", "*", "*", "*"}
		probe[i] = f
		probed, err := parseStandard(strings.Join(probe, " "))
		if err != nil {
			hint := ""
			if looksLikeForm(i, f) {
				hint = "; " + formsHint
			}
			return Cron{}, fmt.Errorf("%q is not a valid cron schedule: %s field %q: %w%s; %s", spec, cronFields[i], fields[i], err, hint, cronExpected)
		}
		// robfig/cron accepts a list without items (",") as matching nothing.
		if sets := [...]uint64{probed.Minute, probed.Hour, probed.Dom, probed.Month, probed.Dow}; sets[i]&^starBit == 0 {
			return Cron{}, fmt.Errorf("%q is not a valid cron schedule: %s field %q matches no value; %s", spec, cronFields[i], fields[i], cronExpected)
		}
	}
	c, err := cronOf(strings.Join(fields, " "), plain, forms)
	if err != nil {
		return Cron{}, fmt.Errorf("%q is not a valid cron schedule: %w; %s", spec, err, cronExpected)
	}
	if !c.forms.dom() && !c.forms.dow() {
		if !c.firesAtAll() {
			return Cron{}, fmt.Errorf("%q never fires: no calendar date matches both its day-of-month and month fields (February has no 30th, April no 31st); check those fields", spec)
		}
		return c, nil
	}
	if c.forms.business() && weekdays != defaultWeekdays {
		c.biz = &business{weekdays: weekdays}
	}
	switch err := c.checkFires(); {
	case errors.Is(err, errNeverFires):
		biz := ""
		if c.forms.business() {
			biz = fmt.Sprintf(" with the business days %s", weekdaysText(weekdays))
		}
		return Cron{}, fmt.Errorf("%q never fires: no date matches its day-of-month, month and day-of-week fields%s "+
			"(a month has 28 to 31 days, at most 5 of each weekday and, counting Monday to Friday, at most 23 business days); check those fields", spec, biz)
	case err != nil:
		return Cron{}, fmt.Errorf("%q fires too rarely: it goes %s, longer than the eight years within which almanac looks for the next run; check the day-of-month, month and day-of-week fields",
			spec, strings.TrimPrefix(err.Error(), errTooRare.Error()+": "))
	}
	return c, nil
}

// cronOf builds the Cron whose canonical spelling is canonical from what robfig/cron parses
// (a descriptor alone, or five fields of which a day field is empty when it holds only forms)
// and the forms.
func cronOf(canonical string, plain []string, forms dayForms) (Cron, error) {
	// A day field of forms alone gives robfig/cron a stand-in, whose value is dropped.
	var domOnlyForms, dowOnlyForms bool
	probe := slices.Clone(plain)
	for i, f := range probe {
		switch {
		case f != "" || len(probe) != 5:
		case i == 2:
			domOnlyForms, probe[i] = true, "1"
		case i == 4:
			dowOnlyForms, probe[i] = true, "0"
		}
	}
	schedule, err := parseStandard(strings.Join(probe, " "))
	if err != nil {
		return Cron{}, err
	}
	c := Cron{
		spec:   canonical,
		minute: schedule.Minute &^ starBit,
		hour:   schedule.Hour &^ starBit,
		dom:    schedule.Dom &^ starBit,
		month:  schedule.Month &^ starBit,
		dow:    schedule.Dow &^ starBit,
		forms:  forms,
		// robfig/cron marks a field that starts with * (or ?) without a step with starBit.
		domOrDow: schedule.Dom&starBit == 0 && schedule.Dow&starBit == 0,
	}
	if domOnlyForms {
		c.dom = 0
	}
	if dowOnlyForms {
		c.dow = 0
	}
	// A day field that matches every value (*) has no use for forms.
	if schedule.Dom&starBit != 0 {
		c.forms.last, c.forms.lastMinus, c.forms.lastBiz, c.forms.nearest, c.forms.nthBiz = false, 0, false, 0, 0
	}
	if schedule.Dow&starBit != 0 {
		c.forms.nthDow, c.forms.lastDow = [7]uint8{}, 0
	}
	c.firstHour, c.firstMinute, _ = c.firstTime(0, 0)
	return c, nil
}

// starBit is robfig/cron's marker for a field written as * or ?.
const starBit = 1 << 63

var standardParser = cron.NewParser(cron.Minute | cron.Hour | cron.Dom | cron.Month | cron.Dow | cron.Descriptor)

// parseStandard runs robfig/cron's parser, turning its panics (it indexes past the end of
// some malformed inputs) into errors.
func parseStandard(spec string) (schedule *cron.SpecSchedule, err error) {
	defer func() {
		if r := recover(); r != nil {
			schedule, err = nil, fmt.Errorf("cannot be parsed (%v)", r)
		}
	}()
	parsed, err := standardParser.Parse(spec)
	if err != nil {
		return nil, err
	}
	schedule, ok := parsed.(*cron.SpecSchedule)
	if !ok {
		return nil, fmt.Errorf("is not a calendar schedule (%T)", parsed)
	}
	return schedule, nil
}

// firesAtAll reports whether any date in eight years (which include two February 29ths)
// matches the schedule. Hours and minutes match something once ParseCron checked each field.
func (c Cron) firesAtAll() bool {
	for d := civil(2024, time.January, 1, 0, 0); d.Year() < 2032; d = d.AddDate(0, 0, 1) {
		if c.dayMatches(d) {
			return true
		}
	}
	return false
}

// String returns the canonical spelling: trimmed, fields separated by single spaces,
// descriptors in lower case, @annually as @yearly and @midnight as @daily.
func (c Cron) String() string { return c.spec }

// looksLikeForm reports whether a field that robfig/cron refused looks like a day form
// written in the wrong place or shape, for the hint of the message.
func looksLikeForm(field int, f string) bool {
	u := strings.ToUpper(f)
	if field == 4 {
		u = strings.NewReplacer("WED", "", "JUL", "").Replace(u)
	}
	if field == 3 {
		u = strings.ReplaceAll(u, "JUL", "")
	}
	return strings.ContainsAny(u, "LW#")
}

// dayMatches reports whether the schedule fires on the date of wall d.
func (c Cron) dayMatches(d time.Time) bool {
	if c.month&(1<<uint(d.Month())) == 0 {
		return false
	}
	if c.forms.dom() || c.forms.dow() {
		y, m, day := d.Date()
		ms := shapeOf(y, m)
		var biz uint32
		if c.forms.business() {
			biz = c.businessDays(y, m, ms)
		}
		return c.formsMatch(ms, day, biz)
	}
	domMatch := c.dom&(1<<uint(d.Day())) != 0
	dowMatch := c.dow&(1<<uint(d.Weekday())) != 0
	if c.domOrDow {
		return domMatch || dowMatch
	}
	return domMatch && dowMatch
}

// firstTime returns the earliest hour:minute of a matching day at or after h:m.
func (c Cron) firstTime(h, m int) (int, int, bool) {
	for ; h < 24; h, m = h+1, 0 {
		if c.hour&(1<<uint(h)) == 0 {
			continue
		}
		if mm := bits.TrailingZeros64(c.minute >> uint(m) << uint(m)); mm < 60 {
			return h, mm, true
		}
	}
	return 0, 0, false
}

// lastTime returns the latest hour:minute of a matching day at or before h:m.
func (c Cron) lastTime(h, m int) (int, int, bool) {
	for ; h >= 0; h, m = h-1, 59 {
		if c.hour&(1<<uint(h)) == 0 {
			continue
		}
		if mask := c.minute & (1<<uint(m+1) - 1); mask != 0 {
			return h, bits.Len64(mask) - 1, true
		}
	}
	return 0, 0, false
}

// nextSlot returns the earliest wall-clock slot at or after wall w (a whole minute).
func (c Cron) nextSlot(w time.Time) (time.Time, bool) {
	slot, ok, _ := c.nextSlotWithin(nil, w)
	return slot, ok
}

// nextSlotWithin is nextSlot that spends a step of budget (nil: none) for each day it looks
// at, and returns the budget's error when it stops.
func (c Cron) nextSlotWithin(budget *Budget, w time.Time) (time.Time, bool, error) {
	y, mo, d := w.Date()
	h, m := w.Hour(), w.Minute()
	for i := 0; i < searchDays; i++ {
		if budget != nil {
			if err := budget.Spend(1); err != nil {
				return time.Time{}, false, err
			}
		}
		day := civil(y, mo, d+i, 0, 0)
		if !c.dayMatches(day) {
			continue
		}
		if i > 0 {
			h, m = 0, 0
		}
		if hh, mm, ok := c.firstTime(h, m); ok {
			return day.Add(time.Duration(hh)*time.Hour + time.Duration(mm)*time.Minute), true, nil
		}
	}
	return time.Time{}, false, nil
}

// prevSlot returns the latest wall-clock slot at or before wall w (a whole minute).
func (c Cron) prevSlot(w time.Time) (time.Time, bool) {
	slot, ok, _ := c.prevSlotWithin(nil, w)
	return slot, ok
}

// prevSlotWithin is prevSlot that spends a step of budget (nil: none) for each day it looks
// at, and returns the budget's error when it stops.
func (c Cron) prevSlotWithin(budget *Budget, w time.Time) (time.Time, bool, error) {
	y, mo, d := w.Date()
	h, m := w.Hour(), w.Minute()
	for i := 0; i < searchDays; i++ {
		if budget != nil {
			if err := budget.Spend(1); err != nil {
				return time.Time{}, false, err
			}
		}
		day := civil(y, mo, d-i, 0, 0)
		if !c.dayMatches(day) {
			continue
		}
		if i > 0 {
			h, m = 23, 59
		}
		if hh, mm, ok := c.lastTime(h, m); ok {
			return day.Add(time.Duration(hh)*time.Hour + time.Duration(mm)*time.Minute), true, nil
		}
	}
	return time.Time{}, false, nil
}

// Next returns the first firing instant strictly after `after`, in UTC, with the wall-clock
// slots evaluated in loc (nil means UTC). A slot in a spring-forward gap fires at the instant
// the clocks jumped; slots that resolve to the same instant fire once; a slot in a repeated
// hour fires once, at its first occurrence. It returns the zero time only when there is no
// firing within eight years, which for a schedule that ParseCron accepted happens only when
// calendars close every day that its business-day forms could pick (NextWithin says why).
func (c Cron) Next(loc *time.Location, after time.Time) time.Time {
	loc = orUTC(loc)
	// A slot resolves to an instant after `after` exactly when it is later than every wall
	// reading shown up to `after`.
	slot, ok := c.nextSlot(latestWall(loc, after).Truncate(time.Minute).Add(time.Minute))
	if !ok {
		return time.Time{}
	}
	return resolve(loc, slot).at
}

// Prev returns the latest firing instant at or before atOrBefore, in UTC, or the zero time if
// there is none within eight years (for catching up after downtime). Slots are evaluated
// in loc (nil means UTC) as for Next.
func (c Cron) Prev(loc *time.Location, atOrBefore time.Time) time.Time {
	loc = orUTC(loc)
	slot, ok := c.prevSlot(latestWall(loc, atOrBefore).Truncate(time.Minute))
	if !ok {
		return time.Time{}
	}
	return resolve(loc, slot).at
}

// NextWithin is Next that never answers with the zero time: it returns the first firing
// instant strictly after `after`, or an error that says why there is none within eight years
// (wrapping ErrNoSlot: a business-day form whose calendars close every business day), or the
// budget's error. Each day the walk looks at is a step of budget (nil: no budget; the walk is
// bounded by the eight years all the same).
func (c Cron) NextWithin(budget *Budget, loc *time.Location, after time.Time) (time.Time, error) {
	loc = orUTC(loc)
	from := latestWall(loc, after).Truncate(time.Minute).Add(time.Minute)
	slot, ok, err := c.nextSlotWithin(budget, from)
	switch {
	case err != nil:
		return time.Time{}, err
	case !ok:
		return time.Time{}, c.noSlot(loc, after, true)
	}
	return resolve(loc, slot).at, nil
}

// PrevWithin is Prev that never answers with the zero time: it returns the latest firing
// instant at or before atOrBefore, or an error that says why there is none within eight years
// (wrapping ErrNoSlot), or the budget's error. Each day the walk looks at is a step of budget.
func (c Cron) PrevWithin(budget *Budget, loc *time.Location, atOrBefore time.Time) (time.Time, error) {
	loc = orUTC(loc)
	from := latestWall(loc, atOrBefore).Truncate(time.Minute)
	slot, ok, err := c.prevSlotWithin(budget, from)
	switch {
	case err != nil:
		return time.Time{}, err
	case !ok:
		return time.Time{}, c.noSlot(loc, atOrBefore, false)
	}
	return resolve(loc, slot).at, nil
}

// Slots returns the firing instants in the half-open range [from, to), in order, in UTC,
// with slots evaluated in loc (nil means UTC). Each instant appears once, and is a step of
// budget; when the budget stops the walk, it returns the budget's error.
func (c Cron) Slots(budget *Budget, loc *time.Location, from, to time.Time) ([]time.Time, error) {
	var out []time.Time
	for t := c.Next(loc, from.Add(-time.Nanosecond)); !t.IsZero() && t.Before(to); t = c.Next(loc, t) {
		if err := budget.Spend(1); err != nil {
			return nil, err
		}
		out = append(out, t)
	}
	return out, nil
}

// everyHint returns the 5-field schedule that fires at the interval of an @every argument
// (counted from the top of the hour or from midnight) when there is one, and a common
// example otherwise.
func everyHint(interval string) string {
	d, err := time.ParseDuration(interval)
	switch {
	case err != nil || d <= 0:
	case d%time.Hour == 0 && d <= 24*time.Hour && (24*time.Hour)%d == 0:
		switch h := int(d / time.Hour); h {
		case 1:
			return "0 * * * *"
		case 24:
			return "0 0 * * *"
		default:
			return fmt.Sprintf("0 */%d * * *", h)
		}
	case d%time.Minute == 0 && d < time.Hour && time.Hour%d == 0:
		if m := int(d / time.Minute); m > 1 {
			return fmt.Sprintf("*/%d * * * *", m)
		}
		return "* * * * *"
	}
	return "*/30 * * * *"
}
