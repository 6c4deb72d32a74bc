package admission

import (
	"context"
	"errors"
	"fmt"
	"reflect"
	"strings"
	"time"

	"k8s.io/apimachinery/pkg/util/validation/field"

	calendarv1alpha1 "github.com/almanac-dev/almanac/api/calendar/v1alpha1"
	"github.com/almanac-dev/almanac/api/timing"
)

// maxCalendarReports bounds the warnings of one kind (duplicate dates, periods in the past)
// reported for one calendar: a calendar lists up to 1000 days and 1000 periods.
const maxCalendarReports = 3

// DefaultCalendar writes the default time zone (UTC) and its canonical name, and the periods'
// start and end as wall times in the zone, yyyy-MM-ddTHH:mm (converting RFC 3339 times with an
// offset, as for a OneShot Schedule). Dates are left as written: the schema's pattern admits
// only their one form.
func DefaultCalendar(c *calendarv1alpha1.Calendar) []string { return defaultCalendarSpec(&c.Spec) }

// DefaultClusterCalendar is DefaultCalendar for a ClusterCalendar.
func DefaultClusterCalendar(c *calendarv1alpha1.ClusterCalendar) []string {
	return defaultCalendarSpec(&c.Spec)
}

func defaultCalendarSpec(spec *calendarv1alpha1.CalendarSpec) []string {
	zone, ok := defaultZone(&spec.TimeZone)
	if !ok {
		return nil
	}
	var warnings []string
	for i := range spec.Periods {
		p := &spec.Periods[i]
		var w string
		p.Start, w = canonicalDateTime(p.Start, zone, fmt.Sprintf("spec.periods[%d].start", i))
		warnings = appendNonEmpty(warnings, w)
		p.End, w = canonicalDateTime(p.End, zone, fmt.Sprintf("spec.periods[%d].end", i))
		warnings = appendNonEmpty(warnings, w)
	}
	return warnings
}

// ValidateCalendar checks a Calendar by compiling it with the time engine, as the reconcilers
// will: the time zone, each date and each period (a wall time in the zone, end after start).
// Each problem is refused at its field path (spec.days[3].date, spec.periods[0].end,
// spec.timeZone). It warns about a date listed twice, a period that lies wholly in the past,
// and a legacy zone name. old is nil on create.
//
// Ratcheting: on update, when the spec did not change (labels, annotations, finalizers),
// every problem is a warning.
func ValidateCalendar(_ context.Context, c, old *calendarv1alpha1.Calendar, env Env) (field.ErrorList, []string, error) {
	if c.DeletionTimestamp != nil {
		return nil, nil, nil
	}
	ref := calendarv1alpha1.CalendarReference{Kind: calendarv1alpha1.KindCalendar, Name: c.Name}
	var oldSpec *calendarv1alpha1.CalendarSpec
	if old != nil {
		oldSpec = &old.Spec
	}
	return validateCalendarSpec(ref, &c.Spec, oldSpec, env.Now)
}

// ValidateClusterCalendar is ValidateCalendar for a ClusterCalendar.
func ValidateClusterCalendar(_ context.Context, c, old *calendarv1alpha1.ClusterCalendar, env Env) (field.ErrorList, []string, error) {
	if c.DeletionTimestamp != nil {
		return nil, nil, nil
	}
	ref := calendarv1alpha1.CalendarReference{Kind: calendarv1alpha1.KindClusterCalendar, Name: c.Name}
	var oldSpec *calendarv1alpha1.CalendarSpec
	if old != nil {
		oldSpec = &old.Spec
	}
	return validateCalendarSpec(ref, &c.Spec, oldSpec, env.Now)
}

func validateCalendarSpec(ref calendarv1alpha1.CalendarReference, spec, old *calendarv1alpha1.CalendarSpec, now time.Time) (field.ErrorList, []string, error) {
	v := &verdict{ratchet: old != nil && reflect.DeepEqual(*old, *spec)}
	cal, ferrs := compileCalendar(ref, spec)
	for _, fe := range ferrs {
		v.failOrWarn(fe, fe.Error()+" (admitted because the spec did not change)")
	}
	if cal != nil {
		if w := cal.Zone().Warning; w != "" {
			v.warn("spec.timeZone: " + w)
		}
		warnPastPeriods(v, spec, cal.Zone(), now)
	}
	warnDuplicateDates(v, spec)
	return v.result()
}

// compileCalendar compiles spec with the time engine and returns its problems as field
// errors, each at its path, with what was expected and how to fix it. A panic of the engine
// is an error of the spec, not of the webhook.
func compileCalendar(ref calendarv1alpha1.CalendarReference, spec *calendarv1alpha1.CalendarSpec) (cal *timing.Calendar, errs field.ErrorList) {
	defer func() {
		if r := recover(); r != nil {
			cal, errs = nil, field.ErrorList{field.InternalError(specPath, fmt.Errorf("the time engine failed on this calendar (please report it): %v", r))}
		}
	}()
	cal, ferrs := spec.Timing(ref.String()).Compile()
	for _, fe := range ferrs {
		p := specPath.Child(fe.Field)
		if fe.Index != nil {
			p = p.Index(*fe.Index)
		}
		if fe.Sub != "" {
			p = p.Child(fe.Sub)
		}
		detail := fe.Detail
		if fe.Sub == timing.FieldEnd && strings.HasSuffix(detail, "a period must end after it starts") {
			detail += ": set end to a later wall time than start (swap them if they were written the wrong way round)"
		}
		errs = append(errs, field.Invalid(p, fe.Value, detail))
	}
	if len(errs) > 0 {
		return nil, errs
	}
	return cal, nil
}

// warnDuplicateDates warns about a date that the calendar lists more than once: it changes
// nothing (a day is in the calendar or not), and often means a typo in the other one.
func warnDuplicateDates(v *verdict, spec *calendarv1alpha1.CalendarSpec) {
	first := make(map[string]int, len(spec.Days))
	reported, more := 0, 0
	for i, d := range spec.Days {
		date := strings.TrimSpace(d.Date)
		j, seen := first[date]
		if !seen {
			first[date] = i
			continue
		}
		if reported == maxCalendarReports {
			more++
			continue
		}
		reported++
		v.warn(fmt.Sprintf("spec.days[%d].date: %q is listed already at spec.days[%d]: a day is in the calendar once, however often it is listed; "+
			"remove one of them, or correct the date if another day was meant", i, d.Date, j))
	}
	if more > 0 {
		v.warn(fmt.Sprintf("spec.days: %s listed more than once besides those above", plural(more, "more date")))
	}
}

// warnPastPeriods warns about periods that end at or before now: they change nothing any
// more, and can be removed.
func warnPastPeriods(v *verdict, spec *calendarv1alpha1.CalendarSpec, zone timing.Zone, now time.Time) {
	reported, more := 0, 0
	for i, p := range spec.Periods {
		end, err := timing.ParseLocalDateTime(p.End, zone.Location)
		if err != nil {
			continue // compiled, so it cannot fail
		}
		at := end.In(zone.Location)
		if at.After(now) {
			continue
		}
		if reported == maxCalendarReports {
			more++
			continue
		}
		reported++
		v.warn(fmt.Sprintf("spec.periods[%d]: the period ended at %s, before now (%s): it closes nothing any more; remove it when it is no longer needed",
			i, timing.InstantText(at, zone), timing.InstantText(now, timing.Zone{})))
	}
	if more > 0 {
		v.warn(fmt.Sprintf("spec.periods: %s ended before now besides those above", plural(more, "more period")))
	}
}

// checkCalendarReferences checks an object's spec.calendars: the same calendar named twice in
// one list is refused (field.Duplicate); with env.Objects, each calendar named that does not
// exist, or does not compile, is a warning (it holds the object: no window opens, no run
// starts). It returns the calendars it read (nil without env.Objects or calendars).
func checkCalendarReferences(ctx context.Context, v *verdict, namespace string, c *calendarv1alpha1.Calendars, env Env) (*calendarv1alpha1.Book, error) {
	if c.Empty() {
		return nil, nil
	}
	for _, list := range []struct {
		name string
		refs []calendarv1alpha1.CalendarReference
	}{{"skip", c.Skip}, {"only", c.Only}} {
		seen := make(map[calendarv1alpha1.CalendarReference]int, len(list.refs))
		for i, ref := range list.refs {
			key := calendarv1alpha1.CalendarReference{Kind: ref.KindOrDefault(), Name: ref.Name}
			if j, dup := seen[key]; dup {
				err := field.Duplicate(specPath.Child("calendars", list.name).Index(i), key.String())
				err.Detail = fmt.Sprintf("%s is named already at spec.calendars.%s[%d]: remove one of them", key, list.name, j)
				v.failOrWarn(err, err.Error()+" (admitted because spec.calendars did not change)")
				continue
			}
			seen[key] = i
		}
	}
	if env.Objects == nil {
		return nil, nil
	}
	book, err := calendarv1alpha1.ReadBook(ctx, env.Objects, namespace, c)
	if err != nil {
		return nil, err
	}
	_, problems := book.Mask(namespace, c)
	for _, p := range problems {
		v.warn(p)
	}
	return book, nil
}

// businessDaysSteps bounds the walk that looks for a schedule's next business day at
// admission: a step per day, and the engine looks at most eight years ahead.
const businessDaysSteps = 8*366 + 2

// checkBusinessDays warns when the calendars of a schedule with business-day forms (LW, 15W,
// W#2) leave those forms no day within eight years after now, so that it never fires (the
// engine's reason, timing.ErrNoSlot). The calendars are other objects, which may change: it is
// a warning, as a missing calendar is.
func checkBusinessDays(ctx context.Context, v *verdict, c timing.Cron, zone timing.Zone, now time.Time) {
	if !c.CountsBusinessDays() {
		return
	}
	if _, err := c.NextWithin(timing.NewBudget(ctx, businessDaysSteps), zone.Location, now); errors.Is(err, timing.ErrNoSlot) {
		v.warn("spec.calendars: " + err.Error())
	}
}

// calendarsEqual reports whether two spec.calendars name the same calendars in the same
// lists and order.
func calendarsEqual(a, b *calendarv1alpha1.Calendars) bool {
	if a.Empty() || b.Empty() {
		return a.Empty() == b.Empty()
	}
	return reflect.DeepEqual(a, b)
}
