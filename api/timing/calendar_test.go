package timing

import (
	"strings"
	"testing"
	"time"

	"github.com/google/go-cmp/cmp"
)

// calendar compiles a calendar that must be valid.
func calendar(t testing.TB, s CalendarSpec) *Calendar {
	t.Helper()
	if s.Name == "" {
		s.Name = "Calendar test"
	}
	c, errs := s.Compile()
	if len(errs) > 0 {
		t.Fatalf("Compile(%+v) = %v", s, errs)
	}
	return c
}

// spans builds intervals from pairs of RFC 3339 instants.
func spans(t testing.TB, pairs ...string) []Interval {
	t.Helper()
	var out []Interval
	for i := 0; i+1 < len(pairs); i += 2 {
		out = append(out, Interval{Start: instant(t, pairs[i]), End: instant(t, pairs[i+1])})
	}
	return out
}

func TestCalendarDaysAndPeriodsAreInstants(t *testing.T) {
	for _, tc := range []struct {
		name string
		spec CalendarSpec
		// at is an instant, and want the entry of the calendar that contains it or comes next.
		at   string
		want []string
	}{{
		name: "a day in Berlin is its local midnight to midnight",
		spec: CalendarSpec{TimeZone: "Europe/Berlin", Days: []CalendarDay{{Date: "2027-12-24"}}},
		at:   "2027-12-01T00:00:00Z",
		want: []string{"2027-12-23T23:00:00Z", "2027-12-24T23:00:00Z"},
	}, {
		name: "the day clocks spring forward lasts 23 hours",
		spec: CalendarSpec{TimeZone: "Europe/Berlin", Days: []CalendarDay{{Date: "2027-03-28"}}},
		at:   "2027-03-01T00:00:00Z",
		want: []string{"2027-03-27T23:00:00Z", "2027-03-28T22:00:00Z"},
	}, {
		name: "the day clocks fall back lasts 25 hours",
		spec: CalendarSpec{TimeZone: "America/New_York", Days: []CalendarDay{{Date: "2027-11-07"}}},
		at:   "2027-11-01T00:00:00Z",
		want: []string{"2027-11-07T04:00:00Z", "2027-11-08T05:00:00Z"},
	}, {
		name: "a midnight in a gap starts the day when the clocks jumped (Sao Paulo 2018)",
		spec: CalendarSpec{TimeZone: "America/Sao_Paulo", Days: []CalendarDay{{Date: "2018-11-04"}}},
		at:   "2018-11-01T00:00:00Z",
		want: []string{"2018-11-04T03:00:00Z", "2018-11-05T02:00:00Z"},
	}, {
		name: "a yearly day is found in the year of the instant",
		spec: CalendarSpec{TimeZone: "Asia/Tokyo", Days: []CalendarDay{{Date: "12-25"}}},
		at:   "2030-12-26T00:00:00Z",
		want: []string{"2031-12-24T15:00:00Z", "2031-12-25T15:00:00Z"},
	}, {
		name: "02-29 only in leap years",
		spec: CalendarSpec{Days: []CalendarDay{{Date: "02-29"}}},
		at:   "2025-01-01T00:00:00Z",
		want: []string{"2028-02-29T00:00:00Z", "2028-03-01T00:00:00Z"},
	}, {
		name: "a period crosses the year end",
		spec: CalendarSpec{TimeZone: "Europe/Berlin", Periods: []CalendarPeriod{{Start: "2026-12-28T00:00", End: "2027-01-04T06:00"}}},
		at:   "2027-01-01T00:00:00Z",
		want: []string{"2026-12-27T23:00:00Z", "2027-01-04T05:00:00Z"},
	}, {
		name: "a period's end in a gap is when the clocks jumped",
		spec: CalendarSpec{TimeZone: "America/New_York", Periods: []CalendarPeriod{{Start: "2027-03-14T00:00", End: "2027-03-14T02:30"}}},
		at:   "2027-03-01T00:00:00Z",
		want: []string{"2027-03-14T05:00:00Z", "2027-03-14T07:00:00Z"},
	}} {
		t.Run(tc.name, func(t *testing.T) {
			c := calendar(t, tc.spec)
			got, ok := c.after(instant(t, tc.at))
			if !ok {
				t.Fatal("no entry")
			}
			if want := spans(t, tc.want...)[0]; got.Interval != want {
				t.Errorf("entry = %v–%v, want %v–%v", got.Start, got.End, want.Start, want.End)
			}
		})
	}
}

func TestCalendarCompileErrorsNameTheField(t *testing.T) {
	for _, tc := range []struct {
		spec CalendarSpec
		want []string // "path: part of the detail"
	}{
		{CalendarSpec{Days: []CalendarDay{{Date: "2027-12-24"}, {Date: "24.12.2027"}}}, []string{"days[1].date: is not a date"}},
		{CalendarSpec{Days: []CalendarDay{{Date: "13-01"}}}, []string{"days[0].date: months go from 01 to 12"}},
		{CalendarSpec{Days: []CalendarDay{{Date: "2027-02-29"}}}, []string{"days[0].date: February 2027 has 28 days"}},
		{CalendarSpec{Days: []CalendarDay{{Date: "02-30"}}}, []string{"days[0].date: February has 29 days"}},
		{CalendarSpec{Periods: []CalendarPeriod{{Start: "2027-01-02T00:00", End: "2027-01-01T00:00"}}}, []string{"periods[0].end: is not after the start", "periods[0].end: a period must end after it starts"}},
		{CalendarSpec{Periods: []CalendarPeriod{{Start: "2027-01-02", End: "x"}}}, []string{"periods[0].start: is not a date and time", "periods[0].end: is not a date and time"}},
		{CalendarSpec{TimeZone: "Europe/Berln"}, []string{"timeZone: "}},
	} {
		_, errs := tc.spec.Compile()
		got := Join("spec.", errs)
		if got == nil {
			t.Errorf("Compile(%+v) accepted it", tc.spec)
			continue
		}
		for _, w := range tc.want {
			path, detail, _ := strings.Cut(w, ": ")
			if !strings.Contains(got.Error(), "spec."+path+": ") || !strings.Contains(got.Error(), detail) {
				t.Errorf("Compile(%+v) = %q, want it to say %q", tc.spec, got, w)
			}
		}
	}
}

func TestMaskCutsWindows(t *testing.T) {
	berlin := func(days ...string) *Calendar {
		spec := CalendarSpec{Name: "Calendar holidays", TimeZone: "Europe/Berlin"}
		for _, d := range days {
			spec.Days = append(spec.Days, CalendarDay{Date: d, Name: "Holiday " + d})
		}
		return calendar(t, spec)
	}
	for _, tc := range []struct {
		name     string
		spec     Spec
		from, to string
		want     []string
		// skipped are the stretches the calendars close, each "start end reason".
		skipped []string
	}{{
		name: "a weekday window is closed on a holiday and reopens the day after",
		spec: Spec{Type: TypeDaily, StartTime: "09:00", EndTime: "18:00", TimeZone: "Europe/Berlin", Calendars: Mask{Skip: []*Calendar{berlin("2027-12-24")}}},
		from: "2027-12-23T00:00:00Z", to: "2027-12-26T00:00:00Z",
		want:    []string{"2027-12-23T08:00:00Z", "2027-12-23T17:00:00Z", "2027-12-25T08:00:00Z", "2027-12-25T17:00:00Z"},
		skipped: []string{"2027-12-24T08:00:00Z 2027-12-24T17:00:00Z Holiday 2027-12-24 (Calendar holidays)"},
	}, {
		name: "a 22:00–02:00 window before a holiday closes at midnight, and one on it opens at the next midnight",
		spec: Spec{Type: TypeDaily, StartTime: "22:00", EndTime: "02:00", TimeZone: "Europe/Berlin", Calendars: Mask{Skip: []*Calendar{berlin("12-25")}}},
		from: "2027-12-24T00:00:00Z", to: "2027-12-27T00:00:00Z",
		want: []string{
			"2027-12-23T21:00:00Z", "2027-12-24T01:00:00Z",
			"2027-12-24T21:00:00Z", "2027-12-24T23:00:00Z",
			"2027-12-25T23:00:00Z", "2027-12-26T01:00:00Z",
			"2027-12-26T21:00:00Z", "2027-12-27T01:00:00Z",
		},
		skipped: []string{
			"2027-12-24T23:00:00Z 2027-12-25T01:00:00Z Holiday 12-25 (Calendar holidays)",
			"2027-12-25T21:00:00Z 2027-12-25T23:00:00Z Holiday 12-25 (Calendar holidays)",
		},
	}, {
		name: "the calendar's zone, not the window's, says where the holiday is",
		spec: Spec{Type: TypeDaily, StartTime: "07:00", EndTime: "10:00", TimeZone: "Asia/Tokyo", Calendars: Mask{Skip: []*Calendar{berlin("2027-12-24")}}},
		from: "2027-12-23T00:00:00Z", to: "2027-12-26T00:00:00Z",
		// Berlin's 24 December is 08:00 on the 24th to 08:00 on the 25th in Tokyo.
		want: []string{
			"2027-12-22T22:00:00Z", "2027-12-23T01:00:00Z",
			"2027-12-23T22:00:00Z", "2027-12-23T23:00:00Z",
			"2027-12-24T23:00:00Z", "2027-12-25T01:00:00Z",
			"2027-12-25T22:00:00Z", "2027-12-26T01:00:00Z",
		},
	}, {
		name: "a DST change inside the holiday: the day is 23 hours",
		spec: Spec{Type: TypeCron, Schedule: "0 * * * *", Duration: "1h", Calendars: Mask{Skip: []*Calendar{berlin("2027-03-28")}}},
		from: "2027-03-27T21:00:00Z", to: "2027-03-29T00:00:00Z",
		// Intervals are reported whole: the day's run of the Cron window starts at midnight UTC.
		want: []string{"2027-03-27T00:00:00Z", "2027-03-27T23:00:00Z", "2027-03-28T22:00:00Z", "2027-03-29T00:00:00Z"},
	}, {
		name: "only and skip together: trading days less a holiday among them",
		spec: Spec{Type: TypeDaily, StartTime: "09:00", EndTime: "17:00", TimeZone: "Europe/Berlin", Calendars: Mask{
			Only: []*Calendar{calendar(t, CalendarSpec{Name: "Calendar trading", TimeZone: "Europe/Berlin", Periods: []CalendarPeriod{{Start: "2027-01-04T00:00", End: "2027-01-09T00:00", Name: "first week"}}})},
			Skip: []*Calendar{berlin("2027-01-06")},
		}},
		from: "2027-01-02T00:00:00Z", to: "2027-01-11T00:00:00Z",
		want: []string{
			"2027-01-04T08:00:00Z", "2027-01-04T16:00:00Z",
			"2027-01-05T08:00:00Z", "2027-01-05T16:00:00Z",
			"2027-01-07T08:00:00Z", "2027-01-07T16:00:00Z",
			"2027-01-08T08:00:00Z", "2027-01-08T16:00:00Z",
		},
		skipped: []string{
			"2027-01-02T08:00:00Z 2027-01-02T16:00:00Z outside Calendar trading",
			"2027-01-03T08:00:00Z 2027-01-03T16:00:00Z outside Calendar trading",
			"2027-01-06T08:00:00Z 2027-01-06T16:00:00Z Holiday 2027-01-06 (Calendar holidays)",
			"2027-01-09T08:00:00Z 2027-01-09T16:00:00Z outside Calendar trading",
			"2027-01-10T08:00:00Z 2027-01-10T16:00:00Z outside Calendar trading",
		},
	}, {
		name: "a freeze across the year end cuts a long OneShot in two",
		spec: Spec{Type: TypeOneShot, StartTime: "2026-12-20T00:00", EndTime: "2027-01-10T00:00", Calendars: Mask{Skip: []*Calendar{
			calendar(t, CalendarSpec{Name: "ClusterCalendar freeze", TimeZone: "Europe/Berlin", Periods: []CalendarPeriod{{Start: "2026-12-28T00:00", End: "2027-01-04T06:00", Name: "Year-end freeze"}}}),
		}}},
		from: "2026-12-01T00:00:00Z", to: "2027-02-01T00:00:00Z",
		want:    []string{"2026-12-20T00:00:00Z", "2026-12-27T23:00:00Z", "2027-01-04T05:00:00Z", "2027-01-10T00:00:00Z"},
		skipped: []string{"2026-12-27T23:00:00Z 2027-01-04T05:00:00Z Year-end freeze (ClusterCalendar freeze)"},
	}, {
		name: "consecutive days merge: a window is not reopened between them",
		spec: Spec{Type: TypeWeekly, StartDayOfWeek: "Thursday", StartTime: "00:00", EndDayOfWeek: "Monday", EndTime: "00:00", TimeZone: "Europe/Berlin",
			Calendars: Mask{Skip: []*Calendar{berlin("2027-12-24", "12-25", "2027-12-26")}}},
		from: "2027-12-22T00:00:00Z", to: "2027-12-28T00:00:00Z",
		want: []string{"2027-12-22T23:00:00Z", "2027-12-23T23:00:00Z"},
	}, {
		name: "a missing skip calendar closes every window",
		spec: Spec{Type: TypeDaily, StartTime: "09:00", EndTime: "18:00", Calendars: Mask{Skip: []*Calendar{MissingCalendar("Calendar gone")}}},
		from: "2027-01-01T00:00:00Z", to: "2027-01-02T00:00:00Z",
		skipped: []string{"2027-01-01T09:00:00Z 2027-01-01T18:00:00Z Calendar gone does not exist"},
	}, {
		name: "a missing only calendar opens no window",
		spec: Spec{Type: TypeDaily, StartTime: "09:00", EndTime: "18:00", Calendars: Mask{Only: []*Calendar{MissingCalendar("Calendar gone")}}},
		from: "2027-01-01T00:00:00Z", to: "2027-01-02T00:00:00Z",
		skipped: []string{"2027-01-01T09:00:00Z 2027-01-01T18:00:00Z outside Calendar gone (which does not exist)"},
	}} {
		t.Run(tc.name, func(t *testing.T) {
			w := compile(t, tc.spec)
			from, to := instant(t, tc.from), instant(t, tc.to)
			got := intervals(t, w, from, to)
			if diff := cmp.Diff(spans(t, tc.want...), got); diff != "" {
				t.Errorf("intervals (-want +got):\n%s", diff)
			}
			skipped, err := w.Skipped(unlimited(), from, to)
			if err != nil {
				t.Fatal(err)
			}
			var texts []string
			for _, s := range skipped {
				texts = append(texts, s.Start.Format(time.RFC3339)+" "+s.End.Format(time.RFC3339)+" "+s.Reason)
			}
			if tc.skipped != nil {
				if diff := cmp.Diff(tc.skipped, texts); diff != "" {
					t.Errorf("skipped (-want +got):\n%s", diff)
				}
			}
			// Every instant is either in an open interval or in a skipped stretch of the
			// recurrence, never both, and ActiveAt agrees with the intervals.
			for at := from; at.Before(to); at = at.Add(30 * time.Minute) {
				_, active := w.ActiveAt(at)
				inOpen := false
				for _, iv := range got {
					inOpen = inOpen || iv.Contains(at)
				}
				if active != inOpen {
					t.Fatalf("ActiveAt(%s) = %v, but the intervals say %v", at, active, inOpen)
				}
				for _, s := range skipped {
					if s.Contains(at) && inOpen {
						t.Fatalf("%s is both open and skipped", at)
					}
				}
			}
		})
	}
}

func TestMaskKeysTheWindowMemo(t *testing.T) {
	plain := Spec{Type: TypeDaily, StartTime: "09:00", EndTime: "18:00"}
	masked := plain
	masked.Calendars = Mask{Skip: []*Calendar{calendar(t, CalendarSpec{Days: []CalendarDay{{Date: "2027-01-01"}}})}}
	other := plain
	other.Calendars = Mask{Skip: []*Calendar{calendar(t, CalendarSpec{Days: []CalendarDay{{Date: "2027-01-02"}}})}}
	a, b, c := compile(t, plain), compile(t, masked), compile(t, other)
	if a == b || b == c || windowKey(a.Canonical()) == windowKey(b.Canonical()) || windowKey(b.Canonical()) == windowKey(c.Canonical()) {
		t.Fatal("windows with different calendars share a memo entry")
	}
	at := instant(t, "2027-01-01T10:00:00Z")
	if _, ok := a.ActiveAt(at); !ok {
		t.Error("the plain window is closed on 1 January")
	}
	if _, ok := b.ActiveAt(at); ok {
		t.Error("the masked window is open on its holiday")
	}
	if _, ok := c.ActiveAt(at); !ok {
		t.Error("the other calendar's window is closed on 1 January")
	}
	// Comparing masked windows goes through the memo of interval lists too: the window closed
	// on 1 January and the one closed on 2 January first overlap on 3 January.
	if iv, ok := firstOverlap(t, b, c, instant(t, "2027-01-01T00:00:00Z"), 48*time.Hour); ok {
		t.Errorf("overlap %v on the holiday of one of them", iv)
	}
	if iv, ok := firstOverlap(t, b, c, instant(t, "2027-01-01T00:00:00Z"), 72*time.Hour); !ok || !iv.Start.Equal(instant(t, "2027-01-03T09:00:00Z")) {
		t.Errorf("first overlap = %v, %v; want 3 January 09:00", iv, ok)
	}
}

func TestJobSlotsOnCalendars(t *testing.T) {
	holidays := calendar(t, CalendarSpec{Name: "Calendar holidays", TimeZone: "Europe/Berlin", Days: []CalendarDay{{Date: "12-25", Name: "Christmas Day"}, {Date: "12-26", Name: "Boxing Day"}}})
	s, errs := JobSpec{Schedule: "0 6 * * *", TimeZone: "Europe/Berlin", Calendars: Mask{Skip: []*Calendar{holidays}}}.Compile()
	if len(errs) > 0 {
		t.Fatal(errs)
	}
	from, to := instant(t, "2027-12-24T00:00:00Z"), instant(t, "2027-12-28T00:00:00Z")
	if diff := cmp.Diff([]time.Time{instant(t, "2027-12-24T05:00:00Z"), instant(t, "2027-12-27T05:00:00Z")}, runs(t, s, from, to)); diff != "" {
		t.Errorf("runs (-want +got):\n%s", diff)
	}
	skipped, err := s.SkippedRuns(unlimited(), from, to)
	if err != nil {
		t.Fatal(err)
	}
	if len(skipped) != 2 || skipped[0].Reason != "Christmas Day (Calendar holidays)" || skipped[1].Reason != "Boxing Day (Calendar holidays)" {
		t.Errorf("skipped = %+v", skipped)
	}
	if got, want := s.NextRun(instant(t, "2027-12-24T06:00:00Z")), instant(t, "2027-12-27T05:00:00Z"); !got.Equal(want) {
		t.Errorf("NextRun = %s, want %s", got, want)
	}

	// An every-minute schedule kept to one day a year finds its next run at once.
	only := calendar(t, CalendarSpec{Name: "Calendar day", Days: []CalendarDay{{Date: "07-01"}}})
	every, _ := JobSpec{Schedule: "* * * * *", Calendars: Mask{Only: []*Calendar{only}}}.Compile()
	if got, want := every.NextRun(instant(t, "2027-07-02T00:00:00Z")), instant(t, "2028-07-01T00:00:00Z"); !got.Equal(want) {
		t.Errorf("NextRun = %s, want %s", got, want)
	}
	// A one-shot on a holiday never runs.
	at, _ := JobSpec{At: "2027-12-25T10:00", TimeZone: "Europe/Berlin", Calendars: Mask{Skip: []*Calendar{holidays}}}.Compile()
	if reason, ok := at.Skips(at.Due); !ok || reason != "Christmas Day (Calendar holidays)" {
		t.Errorf("Skips = %q, %v", reason, ok)
	}
	if next := at.NextRun(instant(t, "2027-01-01T00:00:00Z")); !next.IsZero() {
		t.Errorf("NextRun = %s for a one-shot on a holiday", next)
	}
	// A missing skip calendar skips everything.
	held, _ := JobSpec{Schedule: "0 6 * * *", Calendars: Mask{Skip: []*Calendar{MissingCalendar("Calendar gone")}}}.Compile()
	if next := held.NextRun(from); !next.IsZero() {
		t.Errorf("NextRun = %s with a missing skip calendar", next)
	}
}

// TestCalendarAllYearSkipsEverythingWithinBudget is the hostile shape: a calendar that names
// every day of the year, as skip and as only, on an every-minute Cron window. The walks end.
func TestCalendarAllYearSkipsEverythingWithinBudget(t *testing.T) {
	spec := CalendarSpec{Name: "Calendar all"}
	for m := time.January; m <= time.December; m++ {
		for d := 1; d <= daysIn(2000, m); d++ {
			spec.Days = append(spec.Days, CalendarDay{Date: civil(2000, m, d, 0, 0).Format("01-02")})
		}
	}
	all := calendar(t, spec)
	w := compile(t, Spec{Type: TypeCron, Schedule: "* * * * *", Duration: "1m", Calendars: Mask{Skip: []*Calendar{all}}})
	from := instant(t, "2027-01-01T00:00:00Z")
	if iv, ok := w.NextInterval(from); ok {
		t.Errorf("NextInterval = %v, want none", iv)
	}
	if _, err := w.Skipped(NewBudget(t.Context(), 100), from, from.Add(365*24*time.Hour)); err == nil {
		t.Error("Skipped over a year of minutes within 100 steps")
	}
	only := compile(t, Spec{Type: TypeDaily, StartTime: "09:00", EndTime: "10:00", Calendars: Mask{Only: []*Calendar{all}}})
	if got := intervals(t, only, from, from.Add(72*time.Hour)); len(got) != 3 {
		t.Errorf("intervals = %v, want one a day", got)
	}
}
