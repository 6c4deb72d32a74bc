package timing

import (
	"errors"
	"slices"
	"sort"
	"strings"
	"testing"
	"time"

	"github.com/google/go-cmp/cmp"
)

// The day forms (L, L-n, LW, nW, W#n, D#n, DL) are checked against a reference written here: a
// walk over the calendar, day by day and minute by minute, that shares no code with the
// engine. It reads the wall clock with the time package alone, resolves wall times by the DST
// rule by definition (the first minute at which the clock reads that time or later), and
// decides business days from the holidays' own instants.

// refClock is a time of day of a reference schedule.
type refClock struct{ h, m int }

// refResolve is the DST rule by definition: the first whole minute at which the wall clock
// in loc reads y-m-d h:mi or later. No instant earlier than wall − 16 h reads the wall (no
// offset exceeds 14 h); to walk fewer minutes, the walk starts at wall − (the largest offset
// seen from wall − 16 h to wall) − 1 h, before which no reading reaches the wall.
func refResolve(loc *time.Location, y int, m time.Month, d, h, mi int) time.Time {
	wall := time.Date(y, m, d, h, mi, 0, 0, time.UTC)
	reading := func(at time.Time) time.Time {
		l := at.In(loc)
		return time.Date(l.Year(), l.Month(), l.Day(), l.Hour(), l.Minute(), 0, 0, time.UTC)
	}
	largest := -16 * time.Hour
	for at := wall.Add(-16 * time.Hour); !at.After(wall); at = at.Add(15 * time.Minute) {
		_, off := at.In(loc).Zone()
		largest = max(largest, time.Duration(off)*time.Second)
	}
	for at := wall.Add(-largest - time.Hour); ; at = at.Add(time.Minute) {
		if !reading(at).Before(wall) {
			return at.UTC()
		}
	}
}

// refHoliday is a stretch of a reference calendar, as instants: a whole day in the calendar's
// zone, or a period.
type refHoliday struct{ start, end time.Time }

// refCalendar is a calendar written twice: as the engine's CalendarSpec and as the reference's
// instants, for the years 2026 to 2029.
type refCalendar struct {
	zone    string
	days    []string    // yyyy-MM-dd or MM-dd
	periods [][2]string // yyyy-MM-ddTHH:mm
}

func (c refCalendar) spec(name string) CalendarSpec {
	s := CalendarSpec{Name: name, TimeZone: c.zone}
	for _, d := range c.days {
		s.Days = append(s.Days, CalendarDay{Date: d})
	}
	for _, p := range c.periods {
		s.Periods = append(s.Periods, CalendarPeriod{Start: p[0], End: p[1]})
	}
	return s
}

func (c refCalendar) instants(t *testing.T) []refHoliday {
	l := loc(t, c.zone)
	var out []refHoliday
	day := func(y int, m time.Month, d int) {
		next := time.Date(y, m, d+1, 0, 0, 0, 0, time.UTC)
		out = append(out, refHoliday{refResolve(l, y, m, d, 0, 0), refResolve(l, next.Year(), next.Month(), next.Day(), 0, 0)})
	}
	for _, d := range c.days {
		if len(d) == 5 {
			for y := 2026; y <= 2029; y++ {
				t, err := time.Parse("2006-01-02", "2000-"+d) // 2000: 02-29 parses
				if err != nil || time.Date(y, t.Month(), t.Day(), 0, 0, 0, 0, time.UTC).Month() != t.Month() {
					continue // 02-29 outside leap years
				}
				day(y, t.Month(), t.Day())
			}
			continue
		}
		t0, err := time.Parse("2006-01-02", d)
		if err != nil {
			t.Fatal(err)
		}
		day(t0.Year(), t0.Month(), t0.Day())
	}
	for _, p := range c.periods {
		s, err1 := time.Parse("2006-01-02T15:04", p[0])
		e, err2 := time.Parse("2006-01-02T15:04", p[1])
		if err1 != nil || err2 != nil {
			t.Fatal(err1, err2)
		}
		out = append(out, refHoliday{refResolve(l, s.Year(), s.Month(), s.Day(), s.Hour(), s.Minute()), refResolve(l, e.Year(), e.Month(), e.Day(), e.Hour(), e.Minute())})
	}
	return out
}

func refIn(hs []refHoliday, at time.Time) bool {
	for _, h := range hs {
		if !at.Before(h.start) && at.Before(h.end) {
			return true
		}
	}
	return false
}

// refMonth is one month as the reference sees it.
type refMonth struct {
	y        int
	m        time.Month
	n        int   // days
	weekday  []int // weekday of each day, by day (index 0 unused)
	business []int // the business days, in order
}

// refDays picks days of a month.
type refDays func(r refMonth) []int

func refPlain(days ...int) refDays {
	return func(r refMonth) []int {
		var out []int
		for _, d := range days {
			if d <= r.n {
				out = append(out, d)
			}
		}
		return out
	}
}

func refLast(r refMonth) []int { return []int{r.n} }

func refLastMinus(k int) refDays {
	return func(r refMonth) []int {
		if r.n-k < 1 {
			return nil
		}
		return []int{r.n - k}
	}
}

func refLastBiz(r refMonth) []int {
	if len(r.business) == 0 {
		return nil
	}
	return []int{r.business[len(r.business)-1]}
}

func refNthBiz(k int) refDays {
	return func(r refMonth) []int {
		if k > len(r.business) {
			return nil
		}
		return []int{r.business[k-1]}
	}
}

// refNearest: the business day nearest the target, the earlier of two as near, within the
// month.
func refNearest(target int) refDays {
	return func(r refMonth) []int {
		if target > r.n || len(r.business) == 0 {
			return nil
		}
		best := slices.Clone(r.business)
		sort.SliceStable(best, func(i, j int) bool {
			di, dj := refAbs(best[i]-target), refAbs(best[j]-target)
			return di < dj || di == dj && best[i] < best[j]
		})
		return best[:1]
	}
}

func refAbs(x int) int {
	if x < 0 {
		return -x
	}
	return x
}

func refNthWeekday(wd time.Weekday, k int) refDays {
	return func(r refMonth) []int {
		seen := 0
		for d := 1; d <= r.n; d++ {
			if r.weekday[d] == int(wd) {
				seen++
				if seen == k {
					return []int{d}
				}
			}
		}
		return nil
	}
}

func refLastWeekday(wd time.Weekday) refDays {
	return func(r refMonth) []int {
		for d := r.n; d >= 1; d-- {
			if r.weekday[d] == int(wd) {
				return []int{d}
			}
		}
		return nil
	}
}

func refWeekdays(wds ...time.Weekday) refDays {
	return func(r refMonth) []int {
		var out []int
		for d := 1; d <= r.n; d++ {
			if slices.Contains(wds, time.Weekday(r.weekday[d])) {
				out = append(out, d)
			}
		}
		return out
	}
}

// refUnion is a day-of-month and day-of-week field both restricted: a day matches either.
func refUnion(parts ...refDays) refDays {
	return func(r refMonth) []int {
		var out []int
		for _, p := range parts {
			out = append(out, p(r)...)
		}
		slices.Sort(out)
		return slices.Compact(out)
	}
}

// refSlots walks every month that [from, to) touches and returns the instants of the
// reference schedule in it, each once, in order.
func refSlots(t *testing.T, zone string, times []refClock, months []time.Month, days refDays, business []time.Weekday,
	skip, only []refHoliday, offset time.Duration, from, to time.Time) []time.Time {
	l := loc(t, zone)
	seen := map[time.Time]bool{}
	var out []time.Time
	start := from.In(l).AddDate(0, -1, 0)
	for ym := time.Date(start.Year(), start.Month(), 1, 0, 0, 0, 0, time.UTC); ym.Before(to.AddDate(0, 1, 0)); ym = ym.AddDate(0, 1, 0) {
		if len(months) > 0 && !slices.Contains(months, ym.Month()) {
			continue
		}
		r := refMonth{y: ym.Year(), m: ym.Month(), weekday: []int{-1}}
		for d := 1; time.Date(r.y, r.m, d, 0, 0, 0, 0, time.UTC).Month() == r.m; d++ {
			r.n = d
			wd := time.Date(r.y, r.m, d, 0, 0, 0, 0, time.UTC).Weekday()
			r.weekday = append(r.weekday, int(wd))
			at := refResolve(l, r.y, r.m, d, times[0].h, times[0].m).Add(offset)
			if slices.Contains(business, wd) && !refIn(skip, at) && (only == nil || refIn(only, at)) {
				r.business = append(r.business, d)
			}
		}
		for _, d := range days(r) {
			for _, c := range times {
				at := refResolve(l, r.y, r.m, d, c.h, c.m).Add(offset)
				if !at.Before(from) && at.Before(to) && !seen[at] {
					seen[at] = true
					out = append(out, at)
				}
			}
		}
	}
	slices.SortFunc(out, func(a, b time.Time) int { return a.Compare(b) })
	return out
}

var (
	monToFri = []time.Weekday{time.Monday, time.Tuesday, time.Wednesday, time.Thursday, time.Friday}
	// berlinHolidays are German public holidays of 2027 and 2028 and yearly days, in Berlin.
	berlinHolidays = refCalendar{zone: "Europe/Berlin", days: []string{
		"01-01", "05-01", "10-03", "12-25", "12-26",
		"2027-03-26", "2027-03-29", "2027-05-06", "2027-05-17",
		"2028-04-14", "2028-04-17", "2028-05-25", "2028-06-05",
		"2027-12-31", "2028-02-29", "2028-03-31",
	}}
	// utcHolidays is a calendar written in UTC that an object in America/New_York names: its
	// days start at 19:00 or 20:00 New York time the evening before.
	utcHolidays = refCalendar{zone: "UTC", days: []string{"12-24", "12-25", "12-31", "2028-06-30", "2028-02-29"}}
	// freezes are periods that close part of a day: the afternoon of 2027-12-31 and 2028-06-30,
	// and 2027-03-14 02:00 to 03:30 in New York (which holds the DST gap).
	freezes = refCalendar{zone: "America/New_York", periods: [][2]string{
		{"2027-12-31T12:00", "2028-01-01T00:00"}, {"2028-06-30T12:00", "2028-07-01T00:00"},
		{"2027-03-14T02:00", "2027-03-14T03:30"}, {"2028-03-12T03:00", "2028-03-12T03:01"},
	}}
	// tradingDays is an only calendar of days in Europe/Berlin.
	tradingDays = refCalendar{zone: "Europe/Berlin", days: []string{
		"2027-01-04", "2027-01-05", "2027-01-28", "2027-01-29", "2027-02-26", "2027-03-01", "2027-03-31",
		"2028-02-01", "2028-02-28", "2028-02-29",
	}}
)

func TestDayFormsAgainstReference(t *testing.T) {
	type cal struct {
		ref  refCalendar
		name string
	}
	tests := []struct {
		name       string
		zone       string
		schedule   string
		businessOf []string // the spec's businessDays
		business   []time.Weekday
		times      []refClock
		months     []time.Month
		days       refDays
		skip, only []cal
		spread     string
	}{
		// The last day of the month: 28, 29 (2028), 30, 31.
		{name: "L", zone: "UTC", schedule: "0 9 L * *", times: []refClock{{9, 0}}, days: refLast},
		{name: "L in February of a leap year", zone: "Asia/Tokyo", schedule: "30 23 L 2 *", times: []refClock{{23, 30}}, months: []time.Month{2}, days: refLast},
		{name: "L-3", zone: "Europe/Berlin", schedule: "0 6 L-3 * *", times: []refClock{{6, 0}}, days: refLastMinus(3)},
		{name: "L-30: the 1st of 31-day months", zone: "UTC", schedule: "0 0 L-30 * *", times: []refClock{{0, 0}}, days: refLastMinus(30)},
		{name: "1,15,L", zone: "America/New_York", schedule: "0 12 1,15,L * *", times: []refClock{{12, 0}}, days: refUnion(refPlain(1, 15), refLast)},
		// The nth and the last weekday of the month.
		{name: "MON#1", zone: "America/New_York", schedule: "0 9 * * MON#1", times: []refClock{{9, 0}}, days: refNthWeekday(time.Monday, 1)},
		{name: "fri#3 and 4#2", zone: "Europe/Berlin", schedule: "15 8 * * fri#3,4#2", times: []refClock{{8, 15}}, days: refUnion(refNthWeekday(time.Friday, 3), refNthWeekday(time.Thursday, 2))},
		{name: "SUN#5: only some months have one", zone: "UTC", schedule: "0 10 * * SUN#5", times: []refClock{{10, 0}}, days: refNthWeekday(time.Sunday, 5)},
		{name: "FRIL", zone: "Australia/Sydney", schedule: "0 17 * * FRIL", times: []refClock{{17, 0}}, days: refLastWeekday(time.Friday)},
		{name: "5L and MON-WED", zone: "UTC", schedule: "0 17 * * 5L,MON-WED", times: []refClock{{17, 0}},
			days: refUnion(refLastWeekday(time.Friday), refWeekdays(time.Monday, time.Tuesday, time.Wednesday))},
		{name: "both day fields restricted: LW or MON#1", zone: "UTC", schedule: "0 9 LW * MON#1", business: monToFri, times: []refClock{{9, 0}},
			days: refUnion(refLastBiz, refNthWeekday(time.Monday, 1))},
		// DST: the nth and last Sunday hold the changes of New York, Berlin and Lord Howe.
		{name: "SUN#2 at 02:30 in New York: the March gap", zone: "America/New_York", schedule: "30 2 * * SUN#2", times: []refClock{{2, 30}}, days: refNthWeekday(time.Sunday, 2)},
		{name: "SUN#1 at 01:30 in New York: the November repeat", zone: "America/New_York", schedule: "30 1 * * SUN#1", times: []refClock{{1, 30}}, days: refNthWeekday(time.Sunday, 1)},
		{name: "SUNL at 02:30 in Berlin: gap and repeat", zone: "Europe/Berlin", schedule: "30 2 * * SUNL", times: []refClock{{2, 30}}, days: refLastWeekday(time.Sunday)},
		{name: "SUN#1 at 02:15 in Lord Howe: the 30-minute gap", zone: "Australia/Lord_Howe", schedule: "15 2 * * SUN#1", times: []refClock{{2, 15}}, days: refNthWeekday(time.Sunday, 1)},
		{name: "SUN#1 at 01:45 in Lord Howe: the 30-minute repeat", zone: "Australia/Lord_Howe", schedule: "45 1 * * 0#1", times: []refClock{{1, 45}}, days: refNthWeekday(time.Sunday, 1)},
		{name: "several times a day in the gap", zone: "America/New_York", schedule: "0,30 1-3 * * SUN#2", times: []refClock{{1, 0}, {1, 30}, {2, 0}, {2, 30}, {3, 0}, {3, 30}},
			days: refNthWeekday(time.Sunday, 2)},

		// Business days, Monday to Friday, without calendars.
		{name: "LW", zone: "UTC", schedule: "0 9 LW * *", business: monToFri, times: []refClock{{9, 0}}, days: refLastBiz},
		{name: "W#1", zone: "Europe/Berlin", schedule: "0 7 W#1 * *", business: monToFri, times: []refClock{{7, 0}}, days: refNthBiz(1)},
		{name: "W#2", zone: "America/New_York", schedule: "0 7 W#2 * *", business: monToFri, times: []refClock{{7, 0}}, days: refNthBiz(2)},
		{name: "W#23: only 31-day months that start Monday to Wednesday", zone: "UTC", schedule: "0 7 W#23 * *", business: monToFri, times: []refClock{{7, 0}}, days: refNthBiz(23)},
		{name: "1W is the first business day", zone: "UTC", schedule: "0 7 1W * *", business: monToFri, times: []refClock{{7, 0}}, days: refNthBiz(1)},
		{name: "15W", zone: "Asia/Tokyo", schedule: "0 9 15W * *", business: monToFri, times: []refClock{{9, 0}}, days: refNearest(15)},
		{name: "31W: not in 30-day months, and not past the month's end", zone: "UTC", schedule: "0 9 31W * *", business: monToFri, times: []refClock{{9, 0}}, days: refNearest(31)},
		{name: "29W in February", zone: "UTC", schedule: "0 9 29W 2 *", business: monToFri, times: []refClock{{9, 0}}, months: []time.Month{2}, days: refNearest(29)},
		{name: "1,15W,LW", zone: "UTC", schedule: "0 9 1,15W,LW * *", business: monToFri, times: []refClock{{9, 0}}, days: refUnion(refPlain(1), refNearest(15), refLastBiz)},

		// Other business weekdays.
		{name: "LW, Monday to Thursday", zone: "Europe/Berlin", schedule: "0 9 LW * *", businessOf: []string{"mon", "Tue", "WEDNESDAY", "thursday"},
			business: []time.Weekday{time.Monday, time.Tuesday, time.Wednesday, time.Thursday}, times: []refClock{{9, 0}}, days: refLastBiz},
		{name: "W#2 on Sundays at 02:30 in New York: the gap day", zone: "America/New_York", schedule: "30 2 W#2 * *", businessOf: []string{"Sunday"},
			business: []time.Weekday{time.Sunday}, times: []refClock{{2, 30}}, days: refNthBiz(2)},
		{name: "LW, Sunday to Thursday, in Berlin at 02:30: the last Sunday's changes", zone: "Europe/Berlin", schedule: "30 2 LW * *",
			businessOf: []string{"Sunday", "Monday", "Tuesday", "Wednesday", "Thursday"},
			business:   []time.Weekday{time.Sunday, time.Monday, time.Tuesday, time.Wednesday, time.Thursday}, times: []refClock{{2, 30}}, days: refLastBiz},
		{name: "15W every day of the week is day 15", zone: "UTC", schedule: "0 9 15W * *", businessOf: []string{"Mon", "Tue", "Wed", "Thu", "Fri", "Sat", "Sun"},
			business: []time.Weekday{0, 1, 2, 3, 4, 5, 6}, times: []refClock{{9, 0}}, days: refNearest(15)},

		// Holidays from calendars.
		{name: "LW with Berlin holidays", zone: "Europe/Berlin", schedule: "0 9 LW * *", business: monToFri, times: []refClock{{9, 0}}, days: refLastBiz,
			skip: []cal{{berlinHolidays, "Calendar de"}}},
		{name: "W#1, W#3 with Berlin holidays", zone: "Europe/Berlin", schedule: "0 9 W#1,W#3 * *", business: monToFri, times: []refClock{{9, 0}},
			days: refUnion(refNthBiz(1), refNthBiz(3)), skip: []cal{{berlinHolidays, "Calendar de"}}},
		{name: "15W and 1W with Berlin holidays (ties go to the earlier day)", zone: "Europe/Berlin", schedule: "0 9 1W,15W,26W * *", business: monToFri, times: []refClock{{9, 0}},
			days: refUnion(refNearest(1), refNearest(15), refNearest(26)), skip: []cal{{berlinHolidays, "Calendar de"}}},
		{name: "LW in New York with a UTC calendar: decided at 09:00 New York", zone: "America/New_York", schedule: "0 9 LW * *", business: monToFri, times: []refClock{{9, 0}},
			days: refLastBiz, skip: []cal{{utcHolidays, "ClusterCalendar utc"}}},
		{name: "LW at 20:00 in New York with a UTC calendar: the evening before a UTC holiday is closed", zone: "America/New_York", schedule: "0 20 LW * *", business: monToFri,
			times: []refClock{{20, 0}}, days: refLastBiz, skip: []cal{{utcHolidays, "ClusterCalendar utc"}}},
		{name: "LW at 09:00 and 17:00 with an afternoon freeze: decided at the first time", zone: "America/New_York", schedule: "0 9,17 LW * *", business: monToFri,
			times: []refClock{{9, 0}, {17, 0}}, days: refLastBiz, skip: []cal{{freezes, "Calendar freezes"}}},
		{name: "LW at 13:00 with an afternoon freeze", zone: "America/New_York", schedule: "0 13 LW * *", business: monToFri,
			times: []refClock{{13, 0}}, days: refLastBiz, skip: []cal{{freezes, "Calendar freezes"}}},
		{name: "W#2 on Sundays at 02:30 with a freeze over the gap", zone: "America/New_York", schedule: "30 2 W#2 * *", businessOf: []string{"Sunday"},
			business: []time.Weekday{time.Sunday}, times: []refClock{{2, 30}}, days: refNthBiz(2), skip: []cal{{freezes, "Calendar freezes"}}},
		{name: "two skip calendars", zone: "Europe/Berlin", schedule: "0 9 LW,W#2 * *", business: monToFri, times: []refClock{{9, 0}},
			days: refUnion(refLastBiz, refNthBiz(2)), skip: []cal{{berlinHolidays, "Calendar de"}, {utcHolidays, "ClusterCalendar utc"}}},
		{name: "only trading days", zone: "Europe/Berlin", schedule: "0 9 LW,W#1 * *", business: monToFri, times: []refClock{{9, 0}},
			days: refUnion(refLastBiz, refNthBiz(1)), only: []cal{{tradingDays, "Calendar trading"}}},
		{name: "only and skip", zone: "Europe/Berlin", schedule: "0 9 LW * *", business: monToFri, times: []refClock{{9, 0}},
			days: refLastBiz, only: []cal{{tradingDays, "Calendar trading"}}, skip: []cal{{berlinHolidays, "Calendar de"}}},
		{name: "the spread's offset moves the instant tested", zone: "America/New_York", schedule: "0 12 LW * *", business: monToFri, times: []refClock{{12, 0}},
			days: refLastBiz, skip: []cal{{freezes, "Calendar freezes"}}, spread: "1h"},
		{name: "L is not a business-day form: a holiday skips it", zone: "Europe/Berlin", schedule: "0 9 L * *", times: []refClock{{9, 0}}, days: refLast,
			skip: []cal{{berlinHolidays, "Calendar de"}}},
	}
	from, to := instant(t, "2026-12-01T00:00:00Z"), instant(t, "2029-01-15T00:00:00Z")
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			var mask Mask
			var skip, only []refHoliday
			for _, c := range tt.skip {
				compiled, errs := c.ref.spec(c.name).Compile()
				if len(errs) > 0 {
					t.Fatal(errs)
				}
				mask.Skip = append(mask.Skip, compiled)
				skip = append(skip, c.ref.instants(t)...)
			}
			for _, c := range tt.only {
				compiled, errs := c.ref.spec(c.name).Compile()
				if len(errs) > 0 {
					t.Fatal(errs)
				}
				mask.Only = append(mask.Only, compiled)
				only = append(only, c.ref.instants(t)...)
			}
			if len(tt.only) == 0 {
				only = nil
			} else if only == nil {
				only = []refHoliday{}
			}
			spec := JobSpec{Schedule: tt.schedule, TimeZone: tt.zone, BusinessDays: tt.businessOf, Spread: tt.spread, Namespace: "ns", Name: "bizdays", Calendars: mask}
			sched, errs := spec.Compile()
			if len(errs) > 0 {
				t.Fatal(errs)
			}
			got, err := sched.slots(unlimited(), from, to)
			if err != nil {
				t.Fatal(err)
			}
			want := refSlots(t, tt.zone, tt.times, tt.months, tt.days, tt.business, skip, only, sched.Offset, from, to)
			if len(want) == 0 {
				t.Fatal("the reference has no slots: the case tests nothing")
			}
			if diff := cmp.Diff(utcTexts(want), utcTexts(got)); diff != "" {
				t.Errorf("slots of %q (-reference +engine):\n%s", tt.schedule, diff)
			}
			// Next and Prev step through the same slots, from either side of each.
			for i, slot := range want {
				if next := sched.Next(slot.Add(-time.Nanosecond)); !next.Equal(slot) {
					t.Fatalf("Next(just before %s) = %s", slot, next)
				}
				if prev := sched.Prev(slot.Add(-time.Nanosecond)); i > 0 && !prev.Equal(want[i-1]) {
					t.Fatalf("Prev(just before %s) = %s, want %s", slot, prev, want[i-1])
				}
				next, err := sched.NextSlot(unlimited(), slot)
				switch {
				case i+1 < len(want) && (err != nil || !next.Equal(want[i+1])):
					t.Fatalf("NextSlot(%s) = %s, %v; want %s", slot, next, err, want[i+1])
				case err != nil && !errors.Is(err, ErrNoSlot):
					t.Fatalf("NextSlot(%s) = %v", slot, err)
				}
			}
			// The slot that a business-day form picks is never one that the calendars skip;
			// other forms are skipped as any slot is.
			if sched.Cron.forms.business() && len(tt.times) == 1 {
				if skipped, _ := sched.SkippedRuns(unlimited(), from, to); len(skipped) > 0 {
					t.Errorf("the calendars skip business-day slots: %v", skipped)
				}
			}
			// A Cron window of the same schedule opens at the same instants.
			w := compile(t, Spec{Type: TypeCron, Schedule: tt.schedule, Duration: "1m", TimeZone: tt.zone, BusinessDays: tt.businessOf, Calendars: mask})
			if sched.Offset == 0 {
				var starts []time.Time
				for iv := range w.recurrence(from) {
					if !iv.Start.Before(to) {
						break
					}
					starts = append(starts, iv.Start)
				}
				if diff := cmp.Diff(utcTexts(want), utcTexts(starts)); diff != "" {
					t.Errorf("window starts of %q (-reference +engine):\n%s", tt.schedule, diff)
				}
			}
		})
	}
}

func utcTexts(ts []time.Time) []string {
	out := make([]string, len(ts))
	for i, t := range ts {
		out[i] = t.UTC().Format("Mon 2006-01-02 15:04 UTC")
	}
	return out
}

// TestDayFormsExamples pins the examples that docs/time-semantics.md and docs/jobs.md give.
func TestDayFormsExamples(t *testing.T) {
	de, errs := berlinHolidays.spec("Calendar de").Compile()
	if len(errs) > 0 {
		t.Fatal(errs)
	}
	tests := []struct {
		name     string
		spec     JobSpec
		after    string
		want     []string // local wall times, in order
		wantText string   // JobSchedule.String
	}{{
		name:  "the last business day: 2027-12-31 is a holiday in Berlin, so Thursday the 30th",
		spec:  JobSpec{Schedule: "0 18 LW * *", TimeZone: "Europe/Berlin", Calendars: Mask{Skip: []*Calendar{de}}},
		after: "2027-11-30T23:00:00Z",
		want:  []string{"2027-12-30 18:00 CET", "2028-01-31 18:00 CET", "2028-02-28 18:00 CET", "2028-03-30 18:00 CEST"},
		// 2028-02-29 and 2028-03-31 are in the calendar, too.
		wantText: `cron "0 18 LW * *" on business days Monday to Friday`,
	}, {
		name:  "the second business day: 2028-01-03 is the first, the 1st being a holiday and a Saturday",
		spec:  JobSpec{Schedule: "0 6 W#2 * *", TimeZone: "Europe/Berlin", Calendars: Mask{Skip: []*Calendar{de}}},
		after: "2027-12-15T00:00:00Z",
		want:  []string{"2028-01-04 06:00 CET", "2028-02-02 06:00 CET", "2028-03-02 06:00 CET"},
	}, {
		name:  "the business day nearest the 15th: a Saturday moves back, a Sunday forward",
		spec:  JobSpec{Schedule: "0 9 15W * *", TimeZone: "America/New_York"},
		after: "2027-04-01T00:00:00Z",
		want:  []string{"2027-04-15 09:00 EDT", "2027-05-14 09:00 EDT", "2027-06-15 09:00 EDT", "2027-07-15 09:00 EDT", "2027-08-16 09:00 EDT"},
	}, {
		name:  "the first Monday and the last Friday",
		spec:  JobSpec{Schedule: "0 9 * * MON#1,FRIL", TimeZone: "Asia/Tokyo"},
		after: "2027-01-01T00:00:00Z",
		want:  []string{"2027-01-04 09:00 JST", "2027-01-29 09:00 JST", "2027-02-01 09:00 JST", "2027-02-26 09:00 JST"},
	}, {
		name:  "the last day of February in a leap year",
		spec:  JobSpec{Schedule: "0 0 L 2 *", TimeZone: "UTC"},
		after: "2027-01-01T00:00:00Z",
		want:  []string{"2027-02-28 00:00 UTC", "2028-02-29 00:00 UTC", "2029-02-28 00:00 UTC"},
	}, {
		name:  "the second Sunday of March at 02:30 in New York runs when the clocks jump",
		spec:  JobSpec{Schedule: "30 2 * 3 SUN#2", TimeZone: "America/New_York"},
		after: "2027-01-01T00:00:00Z",
		want:  []string{"2027-03-14 03:00 EDT", "2028-03-12 03:00 EDT"},
	}, {
		name:     "other business days: Sunday to Thursday",
		spec:     JobSpec{Schedule: "0 9 LW * *", TimeZone: "Asia/Jerusalem", BusinessDays: []string{"Sunday", "Monday", "Tuesday", "Wednesday", "Thursday"}},
		after:    "2027-04-01T00:00:00Z",
		want:     []string{"2027-04-29 09:00 IDT", "2027-05-31 09:00 IDT", "2027-06-30 09:00 IDT", "2027-07-29 09:00 IDT"},
		wantText: `cron "0 9 LW * *" on business days Sunday to Thursday`,
	}}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			s, errs := tt.spec.Compile()
			if len(errs) > 0 {
				t.Fatal(errs)
			}
			var got []string
			at := instant(t, tt.after)
			for range tt.want {
				at = s.Next(at)
				got = append(got, at.In(s.Zone.Location).Format("2006-01-02 15:04 MST"))
			}
			if diff := cmp.Diff(tt.want, got); diff != "" {
				t.Errorf("runs (-want +got):\n%s", diff)
			}
			if tt.wantText != "" && s.String() != tt.wantText {
				t.Errorf("String() = %q, want %q", s.String(), tt.wantText)
			}
		})
	}
}

// TestBusinessDaysImpossible: calendars that close every business day make the business-day
// forms find no slot. The walk stops within its horizon, with an error that says why, never
// the zero time as an answer and never a loop; a budget stops it sooner.
func TestBusinessDaysImpossible(t *testing.T) {
	freeze, errs := CalendarSpec{Name: "Calendar freeze", TimeZone: "Europe/Berlin", Periods: []CalendarPeriod{{Start: "2010-01-01T00:00", End: "2040-01-01T00:00"}}}.Compile()
	if len(errs) > 0 {
		t.Fatal(errs)
	}
	weekends, errs := CalendarSpec{Name: "Calendar weekends", Days: []CalendarDay{{Date: "2027-01-02"}}}.Compile()
	if len(errs) > 0 {
		t.Fatal(errs)
	}
	after := instant(t, "2027-06-01T00:00:00Z")
	for _, tt := range []struct {
		name string
		spec JobSpec
		want string
	}{{
		name: "a freeze over every business day",
		spec: JobSpec{Schedule: "0 9 LW * *", TimeZone: "Europe/Berlin", Calendars: Mask{Skip: []*Calendar{freeze}}},
		want: `"0 9 LW * *" has no slot within eight years after 2027-06-01 02:00 Europe/Berlin: its business days (Monday to Friday, at 09:00) are all closed by Calendar freeze, ` +
			`so its business-day forms find no day; check the calendars (spec.calendars) and the business days (spec.businessDays)`,
	}, {
		name: "an only calendar without business days",
		spec: JobSpec{Schedule: "30 7 W#1,15W * *", TimeZone: "UTC", BusinessDays: []string{"Monday"}, Calendars: Mask{Only: []*Calendar{weekends}}},
		want: `"30 7 W#1,15W * *" has no slot within eight years after 2027-06-01 00:00 UTC: its business days (Monday, at 07:30) are all closed by outside Calendar weekends, ` +
			`so its business-day forms find no day; check the calendars (spec.calendars) and the business days (spec.businessDays)`,
	}} {
		t.Run(tt.name, func(t *testing.T) {
			s, errs := tt.spec.Compile()
			if len(errs) > 0 {
				t.Fatal(errs)
			}
			if next := s.Next(after); !next.IsZero() {
				t.Fatalf("Next = %s, want none", next)
			}
			if next := s.NextRun(after); !next.IsZero() {
				t.Fatalf("NextRun = %s, want none", next)
			}
			next, err := s.NextSlot(unlimited(), after)
			if !errors.Is(err, ErrNoSlot) || !next.IsZero() {
				t.Fatalf("NextSlot = %s, %v; want an error wrapping ErrNoSlot", next, err)
			}
			if diff := cmp.Diff(tt.want, err.Error()); diff != "" {
				t.Errorf("NextSlot's error (-want +got):\n%s", diff)
			}
			if _, err := s.PrevSlot(unlimited(), after); !errors.Is(err, ErrNoSlot) {
				t.Errorf("PrevSlot: %v, want an error wrapping ErrNoSlot", err)
			}
			// The walk spends a step per day: a budget of 100 stops it after 100 days.
			budget := NewBudget(t.Context(), 100)
			if _, err := s.NextSlot(budget, after); !errors.Is(err, ErrBudgetSpent) || budget.Spent() != 100 {
				t.Errorf("NextSlot with 100 steps: %v after %d steps, want ErrBudgetSpent after 100", err, budget.Spent())
			}
			runs, err := s.Runs(unlimited(), after, after.Add(3*366*24*time.Hour))
			if err != nil || len(runs) > 0 {
				t.Errorf("Runs = %v, %v; want none", runs, err)
			}
		})
	}
}

// TestBusinessDaysMissingCalendar: a calendar that does not exist holds every slot (each is
// skipped, and says why); the business-day forms pick their days without it, so that the
// skipped slots are the ones that would run.
func TestBusinessDaysMissingCalendar(t *testing.T) {
	s, errs := JobSpec{Schedule: "0 9 LW * *", TimeZone: "UTC", Calendars: Mask{Skip: []*Calendar{MissingCalendar("Calendar holidays")}}}.Compile()
	if len(errs) > 0 {
		t.Fatal(errs)
	}
	from, to := instant(t, "2027-01-01T00:00:00Z"), instant(t, "2027-04-01T00:00:00Z")
	if runs, err := s.Runs(unlimited(), from, to); err != nil || len(runs) > 0 {
		t.Fatalf("Runs = %v, %v; want none", runs, err)
	}
	skipped, err := s.SkippedRuns(unlimited(), from, to)
	if err != nil {
		t.Fatal(err)
	}
	var got []string
	for _, sk := range skipped {
		got = append(got, sk.Start.Format(time.DateOnly)+" "+sk.Reason)
	}
	want := []string{"2027-01-29 Calendar holidays does not exist", "2027-02-26 Calendar holidays does not exist", "2027-03-31 Calendar holidays does not exist"}
	if diff := cmp.Diff(want, got); diff != "" {
		t.Errorf("skipped (-want +got):\n%s", diff)
	}
}

func TestParseDayForms(t *testing.T) {
	for _, tt := range []struct {
		in, wantErr string
	}{
		{in: "0 9 L * *"}, {in: "0 9 l-3 * *"}, {in: "0 9 lw * *"}, {in: "0 9 15w * *"}, {in: "0 9 w#2 * *"},
		{in: "0 9 1,15W,L * *"}, {in: "0 9 * * mon#1"}, {in: "0 9 * * FRIL,5L"}, {in: "0 9 * * 0#5"}, {in: "0 9 L * MON#1"},
		{in: "0 9 * * WED"}, {in: "0 9 * JUL MON-WED"}, {in: "0 9 LW 1-6 *"},
		{in: "0 9 W#23 * *"}, {in: "0 9 05W,L-03,W#01 * 05L,1#02"},
		{in: "0 9 +5W * *", wantErr: `"+5W": the n of nW (the business day nearest day n) is a number from 1 to 31`},
		{in: "0 9 W#24 * *", wantErr: `"0 9 W#24 * *" never fires: no date matches its day-of-month, month and day-of-week fields with the business days Monday to Friday`},
		{in: "0 9 W#22 2 *", wantErr: "never fires"},
		{in: "0 9 30W 2 *", wantErr: "never fires"},
		{in: "0 9 L-29 2 *", wantErr: "never fires"},
		{in: "0 9 * 2 MON#5", wantErr: `"0 9 * 2 MON#5" fires too rarely: it goes from 1988-02-29 to 2016-02-29 without a run, longer than the eight years within which almanac looks for the next run`},
		{in: "0 9 * * L", wantErr: `day-of-week field: "L" alone is not a day-of-week form: write FRIL (or 5L) for the last Friday of the month`},
		{in: "0 9 MON#1 * *", wantErr: `day-of-month field: "MON#1" is not a day-of-month form`},
		{in: "0 9 * * LW", wantErr: `day-of-week field: "LW" is not a day-of-week form`},
		{in: "0 9 * * 15W", wantErr: `"15W" is not a day-of-week form`},
		{in: "0 9 L-0 * *", wantErr: `"L-0": the n of L-n (n days before the month's last day) is a number from 1 to 30`},
		{in: "0 9 L-31 * *", wantErr: "is a number from 1 to 30"},
		{in: "0 9 W#0 * *", wantErr: `"W#0": the n of W#n (the nth business day of the month) is a number from 1 to 31`},
		{in: "0 9 32W * *", wantErr: `"32W": the n of nW (the business day nearest day n) is a number from 1 to 31`},
		{in: "0 9 W * *", wantErr: `"W": the n of nW`},
		{in: "0 9 * * MON#6", wantErr: `"MON#6": the n of D#n (the nth such weekday of the month) is a number from 1 to 5`},
		{in: "0 9 * * 7#1", wantErr: `"7#1": the weekday is 0 (Sunday) to 6, or SUN to SAT, not 7`},
		{in: "0 9 * * MONDAY#1", wantErr: `the weekday is 0 (Sunday) to 6, or SUN to SAT, not "MONDAY"`},
		{in: "0 9 L/2 * *", wantErr: `day-of-month field "L/2": failed to parse int from L: strconv.Atoi: parsing "L": invalid syntax; the forms L, L-n, LW, nW and W#n are items of the day-of-month field`},
		{in: "0 9 1-LW * *", wantErr: "each on its own (no ranges or steps)"},
		{in: "0 L * * *", wantErr: `hour field "L"`},
	} {
		t.Run(tt.in, func(t *testing.T) {
			c, err := ParseCron(tt.in)
			if tt.wantErr != "" {
				if err == nil || !strings.Contains(err.Error(), tt.wantErr) {
					t.Fatalf("ParseCron(%q) = %v, want an error containing %q", tt.in, err, tt.wantErr)
				}
				return
			}
			if err != nil {
				t.Fatal(err)
			}
			if again, err := ParseCron(c.String()); err != nil || again.String() != c.String() {
				t.Fatalf("ParseCron(%q) = %q, which parses as %q, %v", tt.in, c, again, err)
			}
		})
	}
}

// TestBusinessDaysFields: the spec's businessDays are checked, and only a schedule that counts
// business days may set them.
func TestBusinessDaysFields(t *testing.T) {
	for _, tt := range []struct {
		name string
		spec JobSpec
		want []string // FieldError.Error()
	}{
		{name: "a day that is not one", spec: JobSpec{Schedule: "0 9 LW * *", BusinessDays: []string{"Monday", "Fryday"}},
			want: []string{`businessDays[1]: "Fryday" is not a day of the week (did you mean "Friday"?): expected Monday to Sunday, or Mon to Sun, e.g. "Friday"`}},
		{name: "no business-day form", spec: JobSpec{Schedule: "0 9 L * *", BusinessDays: []string{"Monday"}},
			want: []string{`businessDays: "Monday" is set, but schedule "0 9 L * *" has no business-day form, so it would change nothing: remove it, ` +
				`or use a form that counts business days in the day-of-month field: LW (the last business day), W#2 (the second), 15W (the one nearest the 15th)`}},
		{name: "a one-shot", spec: JobSpec{At: "2027-01-01T09:00", BusinessDays: []string{"Monday"}},
			want: []string{`businessDays: business days are for the business-day forms of a cron schedule (LW, 15W, W#2): remove businessDays from a ScheduledJob that runs once at`}},
		{name: "too few business days for W#22", spec: JobSpec{Schedule: "0 9 W#22 * *", BusinessDays: []string{"Monday", "Tuesday", "Wednesday", "Thursday"}},
			want: []string{`schedule: "0 9 W#22 * *" never fires: no date matches its day-of-month, month and day-of-week fields with the business days Monday to Thursday ` +
				`(a month has 28 to 31 days, at most 5 of each weekday and, counting Monday to Friday, at most 23 business days); check those fields`}},
		{name: "W#25 with six business days", spec: JobSpec{Schedule: "0 9 W#25 * *", BusinessDays: []string{"Mon", "Tue", "Wed", "Thu", "Fri", "Sat"}}},
	} {
		t.Run(tt.name, func(t *testing.T) {
			_, errs := tt.spec.Compile()
			var got []string
			for _, e := range errs {
				got = append(got, e.Error())
			}
			if diff := cmp.Diff(tt.want, got); diff != "" {
				t.Errorf("errors (-want +got):\n%s", diff)
			}
			w := Spec{Type: TypeCron, Schedule: tt.spec.Schedule, Duration: "1h", BusinessDays: tt.spec.BusinessDays}
			if tt.spec.At != "" {
				return
			}
			_, werrs := w.Compile()
			got = nil
			for _, e := range werrs {
				got = append(got, e.Error())
			}
			if diff := cmp.Diff(tt.want, got); diff != "" {
				t.Errorf("window errors (-want +got):\n%s", diff)
			}
		})
	}
	_, errs := Spec{Type: TypeDaily, StartTime: "09:00", EndTime: "17:00", BusinessDays: []string{"Monday"}}.Compile()
	if len(errs) != 1 || errs[0].Field != FieldBusinessDays {
		t.Errorf("a Daily window with businessDays: %v, want one error on businessDays", errs)
	}
	w := compile(t, Spec{Type: TypeCron, Schedule: "0 9 LW * *", Duration: "1h", BusinessDays: []string{"fri", "MON", "monday"}})
	if diff := cmp.Diff([]string{"Monday", "Friday"}, w.Canonical().BusinessDays); diff != "" {
		t.Errorf("canonical businessDays (-want +got):\n%s", diff)
	}
}
