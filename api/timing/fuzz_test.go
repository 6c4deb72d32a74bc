package timing

import (
	"errors"
	"fmt"
	"slices"
	"strings"
	"testing"
	"time"

	"github.com/google/go-cmp/cmp"
)

// The fuzz targets check that no input makes a parser panic or hang, and that normalization
// is idempotent: parsing a value's canonical String gives the same value back.

func FuzzNormalizeZone(f *testing.F) {
	for _, s := range []string{
		"Asia/Tokyo", "asia/tokyo", "UTC", "z", "Etc/Zulu", "GMT", "+09:00", "+0900", "+9", "UTC+9",
		"GMT+09:00", "-05:00", "UTC-5", "+00:00", "+05:30", "+15", "Etc/GMT-9", "EST", "PST8PDT",
		"Local", "", "TZ=Asia/Tokyo", "CRON_TZ=", "Asia/Tokio", "America/NewYork", "Tokyo", "IST",
		"../../etc/passwd", "Factory", "UTC+", "GMT-", "+", "-99:99",
	} {
		f.Add(s)
	}
	f.Fuzz(func(t *testing.T, s string) {
		z, err := NormalizeZone(s)
		if err != nil {
			if err.Error() == "" {
				t.Fatal("empty error message")
			}
			return
		}
		if z.Location == nil || z.Location.String() != z.Name {
			t.Fatalf("NormalizeZone(%q) = %+v: location does not match the name", s, z)
		}
		again, err := NormalizeZone(z.Name)
		if err != nil {
			t.Fatalf("NormalizeZone(%q) = %q, which does not normalize: %v", s, z.Name, err)
		}
		if again.Name != z.Name || again.Warning != z.Warning {
			t.Fatalf("NormalizeZone(%q) = %q, but NormalizeZone(%q) = %q", s, z.Name, z.Name, again.Name)
		}
	})
}

func FuzzParseClock(f *testing.F) {
	for _, s := range []string{"09:30", "9:30", "23:59:00", "00:00", "24:00", "25:00", "12:60", "09:30:15", "", " 7:05 ", "９:30", "+9:30", "1:2:3"} {
		f.Add(s)
	}
	f.Fuzz(func(t *testing.T, s string) {
		c, err := ParseClock(s)
		if err != nil {
			return
		}
		if c.Hour < 0 || c.Hour > 23 || c.Minute < 0 || c.Minute > 59 {
			t.Fatalf("ParseClock(%q) = %+v, out of range", s, c)
		}
		again, err := ParseClock(c.String())
		if err != nil || again != c {
			t.Fatalf("ParseClock(%q) = %v, but ParseClock(%q) = %v, %v", s, c, c.String(), again, err)
		}
	})
}

func FuzzParseWeekday(f *testing.F) {
	for _, s := range []string{"Monday", "mon", "SUNDAY", "Fri", "Fryday", "", "Tues", "7"} {
		f.Add(s)
	}
	f.Fuzz(func(t *testing.T, s string) {
		d, err := ParseWeekday(s)
		if err != nil {
			return
		}
		again, err := ParseWeekday(d.String())
		if err != nil || again != d {
			t.Fatalf("ParseWeekday(%q) = %v, but ParseWeekday(%q) = %v, %v", s, d, d.String(), again, err)
		}
	})
}

func FuzzParseLocalDateTime(f *testing.F) {
	for _, s := range []string{
		"2027-03-14T09:30", "2027-03-14T09:30:00", "2028-02-29T00:00", "2027-02-29T10:00",
		"2027-03-14T07:00:00Z", "2027-03-14T09:30:00+09:00", "2027-03-14T09:30-05:00",
		"2027-03-14T09:30:00.000Z", "2027-03-14T09:30:15", "2027-03-14 09:30", "9999-12-31T23:59:00-23:59",
		"0000-01-01T00:00:00+23:59", "2027-13-01T00:00", "",
	} {
		f.Add(s, uint8(0))
	}
	f.Fuzz(func(t *testing.T, s string, zone uint8) {
		l := loc(t, dstZones[int(zone)%len(dstZones)])
		d, err := ParseLocalDateTime(s, l)
		if err != nil {
			return
		}
		if got := time.Date(d.Year, d.Month, d.Day, d.Hour, d.Minute, 0, 0, time.UTC); got.Day() != d.Day || got.Month() != d.Month {
			t.Fatalf("ParseLocalDateTime(%q) = %+v, not a valid date", s, d)
		}
		again, err := ParseLocalDateTime(d.String(), l)
		if err != nil || again != d {
			t.Fatalf("ParseLocalDateTime(%q) = %v, but ParseLocalDateTime(%q) = %v, %v", s, d, d.String(), again, err)
		}
	})
}

func FuzzParseAt(f *testing.F) {
	for _, s := range []string{
		"2020-03-21T13:53:55Z", "2020-03-21T13:53:55", "2027-03-14T09:30:00", "2027-03-14T02:30:15",
		"2027-03-14T09:30:15+09:00", "2027-03-14T09:30:15.000Z", "2027-03-14T09:30:15.5Z", "2027-03-14T09:30:60",
		"2027-03-14T09:30", "2027-11-07T01:30:30-05:00", "",
	} {
		f.Add(s, uint8(0))
	}
	f.Fuzz(func(t *testing.T, s string, zone uint8) {
		l := loc(t, dstZones[int(zone)%len(dstZones)])
		d, err := ParseAt(s, l)
		if err != nil {
			return
		}
		if d.Second < 0 || d.Second > 59 {
			t.Fatalf("ParseAt(%q) = %+v, seconds out of range", s, d)
		}
		again, err := ParseAt(d.String(), l)
		if err != nil || again != d {
			t.Fatalf("ParseAt(%q) = %v, but ParseAt(%q) = %v, %v", s, d, d.String(), again, err)
		}
		if minute, err := ParseLocalDateTime(d.String(), l); (err == nil) != (d.Second == 0) || (err == nil && minute != d) {
			t.Fatalf("ParseAt(%q) = %v, but ParseLocalDateTime(%q) = %v, %v", s, d, d.String(), minute, err)
		}
	})
}

func FuzzParseCron(f *testing.F) {
	for _, s := range []string{
		"30 2 * * *", "*/15 * * * *", "0 9 * * MON-FRI", "0 0 29 2 *", "0 0 30 2 *", "@yearly", "@annually",
		"@midnight", "@every 1h", "TZ=", "TZ=Asia/Tokyo 0 9 * * *", "CRON_TZ=UTC", "0 30 2 * * *", "* * * *",
		"0-59/0 * * * *", "5-1 * * * *", "? ? ? ? ?", "0 0 1,15 * 1", "@", "", "a b c d e",
		"0 9 L * *", "0 9 L-3 * *", "0 9 LW * *", "0 9 15W * *", "0 9 W#2 * *", "0 9 * * MON#1", "0 9 * * FRIL",
		"0 9 1,15W,L * 5L", "0 9 W#24 * *", "0 9 * 2 MON#5", "0 9 * * L", "0 9 LW-1 * *", "0 9 l-0 * *", "0 9 * * 7#1",
	} {
		f.Add(s)
	}
	f.Fuzz(func(t *testing.T, s string) {
		c, err := ParseCron(s)
		if err != nil {
			return
		}
		again, err := ParseCron(c.String())
		if err != nil {
			t.Fatalf("ParseCron(%q) = %q, which does not parse: %v", s, c.String(), err)
		}
		if diff := cmp.Diff(c, again, cmp.AllowUnexported(Cron{}, dayForms{})); diff != "" {
			t.Fatalf("ParseCron(%q) is not idempotent (-first +second):\n%s", s, diff)
		}
		at := time.Date(2027, time.March, 14, 6, 59, 0, 0, time.UTC)
		if next := c.Next(time.UTC, at); !next.After(at) {
			t.Fatalf("ParseCron(%q) accepted a schedule without a next firing: %v", s, next)
		}
	})
}

// FuzzCronNextPrev checks that Next and Prev are consistent on arbitrary instants in DST
// zones: Prev(Next(t)) is Next(t), and nothing fires between Prev(t) and t's Next. The day
// forms count business days from a fuzzed set of weekdays (business, 0 for Monday to Friday)
// and, when holidays is not 0, a calendar of yearly days derived from it (in another DST
// zone) that closes some of them. When the calendar leaves a business-day form no day, Next
// has no answer, and NextWithin says why.
func FuzzCronNextPrev(f *testing.F) {
	f.Add("*/15 * * * *", int64(1820203200), uint8(0), uint8(0), uint16(0))
	f.Add("30 2 * * *", int64(1825473600), uint8(1), uint8(0), uint16(0))
	f.Add("0 0 29 2 *", int64(1830000000), uint8(3), uint8(0), uint16(0))
	f.Add("@daily", int64(1541300400), uint8(3), uint8(0), uint16(0))
	f.Add("0 9 LW * *", int64(1830000000), uint8(1), uint8(0), uint16(0x1234))
	f.Add("30 2 W#2 * *", int64(1820203200), uint8(0), uint8(1), uint16(0))
	f.Add("30 2 * * SUNL", int64(1806530400), uint8(1), uint8(0), uint16(0))
	f.Add("15 2 * * SUN#1", int64(1822924800), uint8(6), uint8(0), uint16(7))
	f.Add("0 9 1W,15W,L-3 * MON#1", int64(1830000000), uint8(2), uint8(0x7f), uint16(0xffff))
	f.Add("*/30 1-3 W#1,LW * *", int64(1825473600), uint8(0), uint8(0x41), uint16(3))
	f.Fuzz(func(t *testing.T, spec string, unix int64, zone, business uint8, holidays uint16) {
		weekdays := business & (1<<7 - 1)
		if weekdays == 0 {
			weekdays = defaultWeekdays
		}
		c, err := parseCron(spec, weekdays)
		if err != nil {
			return
		}
		l := loc(t, dstZones[int(zone)%len(dstZones)])
		var mask Mask
		if holidays != 0 {
			cal := CalendarSpec{Name: "Calendar fuzz", TimeZone: dstZones[int(holidays)%len(dstZones)]}
			for m := 1; m <= 12; m++ {
				cal.Days = append(cal.Days, CalendarDay{Date: fmt.Sprintf("%02d-%02d", m, 1+int(holidays>>(m%8))%28)})
			}
			compiled, errs := cal.Compile()
			if len(errs) > 0 {
				t.Fatal(errs)
			}
			mask.Skip = []*Calendar{compiled}
		}
		c = c.withBusiness(weekdays, mask, l, 0)
		at := time.Unix(unix%(200*365*86400), 0).UTC() // 1770 to 2170
		next := c.Next(l, at)
		within, err := c.NextWithin(unlimited(), l, at)
		if next.IsZero() {
			if !c.forms.business() || holidays == 0 || !errors.Is(err, ErrNoSlot) || !within.IsZero() {
				t.Fatalf("Next(%s) = none, NextWithin = %s, %v", at, within, err)
			}
			return
		}
		if err != nil || !within.Equal(next) {
			t.Fatalf("Next(%s) = %s, but NextWithin = %s, %v", at, next, within, err)
		}
		if !next.After(at) {
			t.Fatalf("Next(%s) = %s", at, next)
		}
		if prev := c.Prev(l, next); !prev.Equal(next) {
			t.Fatalf("Prev(Next(%s) = %s) = %s", at, next, prev)
		}
		if prev := c.Prev(l, at); !prev.IsZero() && (prev.After(at) || !c.Next(l, prev).Equal(next)) {
			t.Fatalf("Prev(%s) = %s, whose Next is %s, not %s", at, prev, c.Next(l, prev), next)
		}
		// A slot at the first time of day that a business-day form alone picks is open.
		if c.forms.business() && c.dom == 0 && !c.forms.last && c.forms.lastMinus == 0 && (!c.domOrDow || c.dow == 0 && !c.forms.dow()) {
			if w := wallOf(next, l); w.Hour() == c.firstHour && w.Minute() == c.firstMinute && mask.closes(next) {
				t.Fatalf("Next(%s) = %s, which the calendar closes", at, next)
			}
		}
	})
}

func FuzzCompile(f *testing.F) {
	f.Add(uint8(0), "09:00", "17:00", "", "", "", "", "America/New_York", "")
	f.Add(uint8(0), "22:00", "02:00", "", "", "", "", "Europe/Berlin", "fri,Sat")
	f.Add(uint8(0), "09:00", "9:00", "", "", "", "", "", "")
	f.Add(uint8(0), "02:30", "03:30", "", "", "", "", "America/New_York", "Sunday,sun,Funday")
	f.Add(uint8(1), "18:00", "08:00", "Friday", "Mon", "", "", "Australia/Sydney", "")
	f.Add(uint8(1), "09:00", "09:00", "mon", "Monday", "", "", "", "Monday")
	f.Add(uint8(2), "2028-02-29T09:00", "2028-02-29T17:00", "", "", "", "", "Asia/Tokyo", "")
	f.Add(uint8(2), "2027-03-14T02:10", "2027-03-14T02:40", "", "", "", "", "America/New_York", "")
	f.Add(uint8(3), "", "", "", "", "*/5 * * * *", "10m", "America/Sao_Paulo", "")
	f.Add(uint8(3), "", "", "", "", "@every 1h", "30s", "Local", "")
	f.Add(uint8(3), "", "", "", "", "0 9 LW * *", "8h", "Europe/Berlin", "Sun,Mon,thu")
	f.Add(uint8(3), "", "", "", "", "30 2 * * SUN#2", "1h", "America/New_York", "")
	f.Add(uint8(4), "x", "y", "z", "w", "v", "u", "t", "s")
	types := []Type{TypeDaily, TypeWeekly, TypeOneShot, TypeCron, "Monthly"}
	f.Fuzz(func(t *testing.T, typ uint8, start, end, startDay, endDay, schedule, duration, zone, days string) {
		spec := Spec{
			Type: types[int(typ)%len(types)], StartTime: start, EndTime: end, StartDayOfWeek: startDay,
			EndDayOfWeek: endDay, Schedule: schedule, Duration: duration, TimeZone: zone,
		}
		if days != "" && spec.Type == TypeCron {
			spec.BusinessDays = strings.Split(days, ",")
		} else if days != "" {
			spec.DaysOfWeek = strings.Split(days, ",")
		}
		w, errs := spec.Compile()
		if w == nil {
			if len(errs) == 0 {
				t.Fatal("Compile returned neither a window nor errors")
			}
			for _, e := range errs {
				if e.Field == "" || e.Detail == "" {
					t.Fatalf("incomplete FieldError %+v", e)
				}
			}
			return
		}
		if len(errs) != 0 {
			t.Fatalf("Compile returned a window and errors %v", errs)
		}
		again, errs := w.Canonical().Compile()
		if len(errs) != 0 {
			t.Fatalf("the canonical form %+v of %+v does not compile: %v", w.Canonical(), spec, errs)
		}
		if diff := cmp.Diff(w.Canonical(), again.Canonical()); diff != "" {
			t.Fatalf("Compile is not idempotent (-first +second):\n%s", diff)
		}
		from := time.Date(2027, time.March, 10, 0, 0, 0, 0, time.UTC)
		ivs := intervals(t, w, from, from.Add(48*time.Hour))
		if !slices.IsSortedFunc(ivs, func(a, b Interval) int { return a.Start.Compare(b.Start) }) {
			t.Fatalf("intervals out of order: %v", ivs)
		}
		for i, iv := range ivs {
			if !iv.End.After(iv.Start) || (i > 0 && iv.Start.Before(ivs[i-1].End)) {
				t.Fatalf("empty or overlapping intervals: %v", ivs)
			}
		}
	})
}

// FuzzCalendarCompile: no calendar makes Compile panic, and a calendar that compiles cuts a
// window into pieces that are ordered, disjoint, inside the window's recurrence and outside
// the calendar; an instant is skipped exactly when no piece holds it.
func FuzzCalendarCompile(f *testing.F) {
	f.Add("Europe/Berlin", "2027-12-24,12-25,02-29", "2026-12-28T00:00", "2027-01-04T06:00", true)
	f.Add("America/Sao_Paulo", "2018-11-04", "2018-11-03T23:30", "2018-11-04T00:30", false)
	f.Add("", "13-01,2027-02-29", "x", "2027-01-01T00:00", true)
	f.Add("Pacific/Apia", "2011-12-30,12-31", "2011-12-29T23:00", "2011-12-31T01:00", true)
	f.Fuzz(func(t *testing.T, zone, days, start, end string, skip bool) {
		spec := CalendarSpec{Name: "Calendar fuzz", TimeZone: zone}
		for i, d := range strings.Split(days, ",") {
			if i == 20 {
				break
			}
			spec.Days = append(spec.Days, CalendarDay{Date: d})
		}
		spec.Periods = []CalendarPeriod{{Start: start, End: end}}
		c, errs := spec.Compile()
		if len(errs) > 0 {
			for _, e := range errs {
				if e.Detail == "" || e.Path() == "" {
					t.Fatalf("error without a path or detail: %+v", e)
				}
			}
			return
		}
		mask := Mask{Skip: []*Calendar{c}}
		if !skip {
			mask = Mask{Only: []*Calendar{c}}
		}
		w, errs := Spec{Type: TypeDaily, StartTime: "22:00", EndTime: "02:00", TimeZone: "America/New_York", Calendars: mask}.Compile()
		if len(errs) > 0 {
			t.Fatal(errs)
		}
		var from time.Time
		if first, ok := c.after(time.Date(1, 1, 1, 0, 0, 0, 0, time.UTC)); ok {
			from = first.Start.Add(-72 * time.Hour)
		} else {
			return
		}
		got, err := w.Intervals(NewBudget(t.Context(), 1000), from, from.Add(10*24*time.Hour))
		if err != nil {
			t.Fatal(err)
		}
		for i, iv := range got {
			if !iv.End.After(iv.Start) || i > 0 && iv.Start.Before(got[i-1].End) {
				t.Fatalf("pieces out of order or empty: %v", got)
			}
			_, excluded := mask.Excludes(iv.Start)
			if excluded {
				t.Fatalf("piece %v starts on an instant the calendar closes", iv)
			}
			if _, ok := w.ActiveAt(iv.Start); !ok {
				t.Fatalf("piece %v is not active at its start", iv)
			}
		}
	})
}
