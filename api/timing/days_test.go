package timing

import (
	"fmt"
	"testing"
	"time"

	"github.com/google/go-cmp/cmp"
)

func TestDaysOfWeekIntervals(t *testing.T) {
	tests := []struct {
		name     string
		spec     Spec
		from, to string
		want     []Interval
	}{
		{
			name: "weekdays, across a weekend and the spring-forward Sunday (Europe/Berlin, 2027-03-28)",
			spec: Spec{Type: TypeDaily, StartTime: "09:00", EndTime: "18:00", DaysOfWeek: []string{"Monday", "Tuesday", "Wednesday", "Thursday", "Friday"}, TimeZone: "Europe/Berlin"},
			from: "2027-03-21T23:00:00Z", to: "2027-03-30T00:00:00Z",
			want: ivs(t,
				"2027-03-22T08:00:00Z", "2027-03-22T17:00:00Z",
				"2027-03-23T08:00:00Z", "2027-03-23T17:00:00Z",
				"2027-03-24T08:00:00Z", "2027-03-24T17:00:00Z",
				"2027-03-25T08:00:00Z", "2027-03-25T17:00:00Z",
				"2027-03-26T08:00:00Z", "2027-03-26T17:00:00Z",
				// Saturday and Sunday: none; Monday in CEST.
				"2027-03-29T07:00:00Z", "2027-03-29T16:00:00Z"),
		},
		{
			name: "across midnight: the window belongs to the day it opens",
			spec: Spec{Type: TypeDaily, StartTime: "22:00", EndTime: "02:00", DaysOfWeek: []string{"Friday"}},
			from: "2027-03-25T00:00:00Z", to: "2027-04-03T00:00:00Z",
			want: ivs(t,
				"2027-03-26T22:00:00Z", "2027-03-27T02:00:00Z",
				"2027-04-02T22:00:00Z", "2027-04-03T02:00:00Z"),
		},
		{
			name: "the weekend, in a zone without daylight saving time",
			spec: Spec{Type: TypeDaily, StartTime: "10:00", EndTime: "16:00", DaysOfWeek: []string{"sat", "SUNDAY"}, TimeZone: "Asia/Tokyo"},
			from: "2027-03-22T00:00:00Z", to: "2027-04-05T00:00:00Z",
			want: ivs(t,
				"2027-03-27T01:00:00Z", "2027-03-27T07:00:00Z",
				"2027-03-28T01:00:00Z", "2027-03-28T07:00:00Z",
				"2027-04-03T01:00:00Z", "2027-04-03T07:00:00Z",
				"2027-04-04T01:00:00Z", "2027-04-04T07:00:00Z"),
		},
		{
			name: "Sundays on the spring-forward day (America/New_York, 2027-03-14): an hour shorter",
			spec: Spec{Type: TypeDaily, StartTime: "01:30", EndTime: "03:30", DaysOfWeek: []string{"Sunday"}, TimeZone: "America/New_York"},
			from: "2027-03-13T00:00:00Z", to: "2027-03-22T00:00:00Z",
			want: ivs(t,
				"2027-03-14T06:30:00Z", "2027-03-14T07:30:00Z", // 01:30 EST to 03:30 EDT
				"2027-03-21T05:30:00Z", "2027-03-21T07:30:00Z"),
		},
		{
			name: "Sundays on the fall-back day (America/New_York, 2027-11-07): an hour longer",
			spec: Spec{Type: TypeDaily, StartTime: "01:30", EndTime: "03:30", DaysOfWeek: []string{"Sunday"}, TimeZone: "America/New_York"},
			from: "2027-11-06T00:00:00Z", to: "2027-11-15T00:00:00Z",
			want: ivs(t,
				"2027-11-07T05:30:00Z", "2027-11-07T08:30:00Z", // the first 01:30 (EDT) to 03:30 EST
				"2027-11-14T06:30:00Z", "2027-11-14T08:30:00Z"),
		},
		{
			name: "a start in the gap starts at the jump, only on the days it opens",
			spec: Spec{Type: TypeDaily, StartTime: "02:30", EndTime: "04:00", DaysOfWeek: []string{"Sunday", "Monday"}, TimeZone: "America/New_York"},
			from: "2027-03-13T00:00:00Z", to: "2027-03-16T00:00:00Z",
			want: ivs(t,
				"2027-03-14T07:00:00Z", "2027-03-14T08:00:00Z", // 03:00 EDT (the jump) to 04:00 EDT
				"2027-03-15T06:30:00Z", "2027-03-15T08:00:00Z"),
		},
		{
			name: "both ends in one gap: empty that Sunday, the next Sunday is not",
			spec: Spec{Type: TypeDaily, StartTime: "02:10", EndTime: "02:40", DaysOfWeek: []string{"Sunday"}, TimeZone: "America/New_York"},
			from: "2027-03-13T00:00:00Z", to: "2027-03-22T00:00:00Z",
			want: ivs(t, "2027-03-21T06:10:00Z", "2027-03-21T06:40:00Z"),
		},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			w := compile(t, tt.spec)
			got := intervals(t, w, instant(t, tt.from), instant(t, tt.to))
			if diff := cmp.Diff(tt.want, got); diff != "" {
				t.Errorf("Intervals mismatch (-want +got):\n%s", diff)
			}
		})
	}
}

// TestDaysOfWeekWeekdaysOnly is the reconciler's question at single instants: a weekday-only
// window opens on Friday and not on Saturday, and the next boundary after Friday's window
// skips the weekend.
func TestDaysOfWeekWeekdaysOnly(t *testing.T) {
	w := compile(t, Spec{Type: TypeDaily, StartTime: "09:00", EndTime: "18:00", DaysOfWeek: []string{"mon", "tue", "wed", "thu", "fri"}, TimeZone: "Europe/Berlin"})
	for _, tt := range []struct {
		at     string
		active bool
		next   string
	}{
		{"2027-04-02T07:00:00Z", true, "2027-04-02T16:00:00Z"},  // Friday 09:00 CEST
		{"2027-04-02T15:59:59Z", true, "2027-04-02T16:00:00Z"},  // Friday 17:59:59
		{"2027-04-02T16:00:00Z", false, "2027-04-05T07:00:00Z"}, // Friday 18:00: closed until Monday
		{"2027-04-03T07:00:00Z", false, "2027-04-05T07:00:00Z"}, // Saturday 09:00
		{"2027-04-04T10:00:00Z", false, "2027-04-05T07:00:00Z"}, // Sunday 12:00
		{"2027-04-05T07:00:00Z", true, "2027-04-05T16:00:00Z"},  // Monday 09:00
	} {
		_, active := w.ActiveAt(instant(t, tt.at))
		next, _ := w.NextBoundary(instant(t, tt.at))
		if active != tt.active || !next.Equal(instant(t, tt.next)) {
			t.Errorf("at %s: active %v, next boundary %s; want %v, %s", tt.at, active, next.Format(time.RFC3339), tt.active, tt.next)
		}
	}
}

// TestDaysOfWeekAllSevenIsEveryDay checks that listing all seven days gives exactly the
// windows of a Daily window without daysOfWeek, in every test zone, across both DST changes.
func TestDaysOfWeekAllSevenIsEveryDay(t *testing.T) {
	all := []string{"Sunday", "Saturday", "Friday", "Thursday", "Wednesday", "Tuesday", "Monday"}
	for _, zone := range dstZones {
		for _, times := range [][2]string{{"09:00", "17:00"}, {"22:00", "02:30"}, {"02:30", "03:00"}, {"00:00", "00:00"}} {
			if times[0] == times[1] {
				continue
			}
			every := compile(t, Spec{Type: TypeDaily, StartTime: times[0], EndTime: times[1], TimeZone: zone})
			seven := compile(t, Spec{Type: TypeDaily, StartTime: times[0], EndTime: times[1], TimeZone: zone, DaysOfWeek: all})
			for _, rng := range [][2]string{{"2027-03-01T00:00:00Z", "2027-04-15T00:00:00Z"}, {"2027-09-20T00:00:00Z", "2027-11-15T00:00:00Z"}} {
				from, to := instant(t, rng[0]), instant(t, rng[1])
				if diff := cmp.Diff(intervals(t, every, from, to), intervals(t, seven, from, to)); diff != "" {
					t.Errorf("%s %s-%s: all seven days differ from every day (-every +seven):\n%s", zone, times[0], times[1], diff)
				}
			}
		}
	}
}

func TestDaysOfWeekCanonicalAndErrors(t *testing.T) {
	w := compile(t, Spec{Type: TypeDaily, StartTime: "9:00", EndTime: "17:00", DaysOfWeek: []string{"fri", "MONDAY", "mon", " Sunday "}})
	want := Spec{Type: TypeDaily, StartTime: "09:00", EndTime: "17:00", DaysOfWeek: []string{"Monday", "Friday", "Sunday"}, TimeZone: "UTC"}
	if diff := cmp.Diff(want, w.Canonical()); diff != "" {
		t.Errorf("Canonical mismatch (-want +got):\n%s", diff)
	}
	if got := compile(t, Spec{Type: TypeDaily, StartTime: "09:00", EndTime: "17:00", DaysOfWeek: []string{}}).Canonical().DaysOfWeek; got != nil {
		t.Errorf("an empty daysOfWeek canonicalizes to %q, want nil (every day)", got)
	}

	for _, tt := range []struct {
		name string
		spec Spec
		want []FieldError
	}{
		{
			name: "a misspelt day names its index",
			spec: Spec{Type: TypeDaily, StartTime: "09:00", EndTime: "17:00", DaysOfWeek: []string{"Monday", "Fryday", ""}},
			want: []FieldError{
				{Field: "daysOfWeek", Index: new(1), Value: "Fryday", Detail: `"Fryday" is not a day of the week (did you mean "Friday"?): expected Monday to Sunday, or Mon to Sun, e.g. "Friday"`},
				{Field: "daysOfWeek", Index: new(2), Value: "", Detail: `a day of the week is required: expected Monday to Sunday, or Mon to Sun, e.g. "Friday"`},
			},
		},
		{
			name: "Weekly does not take daysOfWeek, and says what does",
			spec: Spec{Type: TypeWeekly, StartDayOfWeek: "Monday", StartTime: "11:50", EndDayOfWeek: "Wednesday", EndTime: "13:00", DaysOfWeek: []string{"Monday", "Tuesday"}},
			want: []FieldError{{Field: FieldDaysOfWeek, Value: "Monday, Tuesday", Detail: `"Monday, Tuesday" is set, but Weekly windows do not use this field: remove it; ` +
				`a Weekly window is one stretch from its start day and time to its end day and time, while type Daily with these days opens the same hours on each of them`}},
		},
		{
			name: "Cron does not take daysOfWeek",
			spec: Spec{Type: TypeCron, Schedule: "0 9 * * *", Duration: "1h", DaysOfWeek: []string{"Monday"}},
			want: []FieldError{{Field: FieldDaysOfWeek, Value: "Monday", Detail: `"Monday" is set, but Cron windows do not use this field: remove it`}},
		},
	} {
		t.Run(tt.name, func(t *testing.T) {
			w, errs := tt.spec.Compile()
			if w != nil {
				t.Error("Compile returned a window")
			}
			if diff := cmp.Diff(tt.want, errs); diff != "" {
				t.Errorf("errors mismatch (-want +got):\n%s", diff)
			}
		})
	}
}

func TestDaysOfWeekDSTNotes(t *testing.T) {
	from := instant(t, "2027-01-01T00:00:00Z")
	for _, tt := range []struct {
		name string
		spec Spec
		want []string // Field: Date Kind
	}{
		{
			name: "a start in the gap, on a day the window does not open: no note",
			spec: Spec{Type: TypeDaily, StartTime: "02:30", EndTime: "04:00", DaysOfWeek: []string{"Monday"}, TimeZone: "America/New_York"},
		},
		{
			name: "the same start on Sundays, the day clocks jump",
			spec: Spec{Type: TypeDaily, StartTime: "02:30", EndTime: "04:00", DaysOfWeek: []string{"Sunday"}, TimeZone: "America/New_York"},
			want: []string{"startTime: 2027-03-14 Gap"},
		},
		{
			name: "an end after midnight falls on the next day: Saturday's window ends in Sunday's gap",
			spec: Spec{Type: TypeDaily, StartTime: "23:00", EndTime: "02:30", DaysOfWeek: []string{"Saturday"}, TimeZone: "America/New_York"},
			want: []string{"endTime: 2027-03-14 Gap"},
		},
		{
			name: "Sunday's window ends on Monday: no note",
			spec: Spec{Type: TypeDaily, StartTime: "23:00", EndTime: "02:30", DaysOfWeek: []string{"Sunday"}, TimeZone: "America/New_York"},
		},
		{
			name: "a start in the repeated hour on Sundays",
			spec: Spec{Type: TypeDaily, StartTime: "01:30", EndTime: "05:00", DaysOfWeek: []string{"Sunday"}, TimeZone: "America/New_York"},
			want: []string{"startTime: 2027-11-07 Repeat"},
		},
	} {
		t.Run(tt.name, func(t *testing.T) {
			var got []string
			for _, n := range compile(t, tt.spec).DSTNotes(from) {
				got = append(got, fmt.Sprintf("%s: %s %s", n.Field, n.Date, n.Kind))
			}
			if diff := cmp.Diff(tt.want, got); diff != "" {
				t.Errorf("DSTNotes mismatch (-want +got):\n%s", diff)
			}
		})
	}
}

func TestWeekdayRangeAndEachDay(t *testing.T) {
	for _, tt := range []struct {
		first, last time.Weekday
		want        []time.Weekday
		days        []string // EachDay's daysOfWeek
	}{
		{time.Monday, time.Wednesday, []time.Weekday{time.Monday, time.Tuesday, time.Wednesday}, []string{"Monday", "Tuesday", "Wednesday"}},
		{time.Friday, time.Monday, []time.Weekday{time.Friday, time.Saturday, time.Sunday, time.Monday}, []string{"Monday", "Friday", "Saturday", "Sunday"}},
		{time.Monday, time.Monday, []time.Weekday{time.Monday}, []string{"Monday"}},
		{time.Sunday, time.Saturday, []time.Weekday{0, 1, 2, 3, 4, 5, 6}, nil},
		{time.Tuesday, time.Monday, []time.Weekday{2, 3, 4, 5, 6, 0, 1}, nil},
	} {
		if diff := cmp.Diff(tt.want, WeekdayRange(tt.first, tt.last)); diff != "" {
			t.Errorf("WeekdayRange(%s, %s) mismatch (-want +got):\n%s", tt.first, tt.last, diff)
		}
		want := Spec{Type: TypeDaily, StartTime: "11:50", EndTime: "13:00", DaysOfWeek: tt.days, TimeZone: "Asia/Tokyo"}
		if diff := cmp.Diff(want, EachDay(tt.first, tt.last, "11:50", "13:00", "Asia/Tokyo")); diff != "" {
			t.Errorf("EachDay(%s, %s) mismatch (-want +got):\n%s", tt.first, tt.last, diff)
		}
	}
}

func TestWallLengthAndSpansDays(t *testing.T) {
	for _, tt := range []struct {
		spec      Spec
		length    time.Duration
		spansDays bool
	}{
		{Spec{Type: TypeWeekly, StartDayOfWeek: "Monday", StartTime: "11:50", EndDayOfWeek: "Wednesday", EndTime: "13:00"}, 49*time.Hour + 10*time.Minute, true},
		{Spec{Type: TypeWeekly, StartDayOfWeek: "Monday", StartTime: "15:00", EndDayOfWeek: "Monday", EndTime: "01:00"}, 6*24*time.Hour + 10*time.Hour, false},
		{Spec{Type: TypeWeekly, StartDayOfWeek: "Monday", StartTime: "10:00", EndDayOfWeek: "Monday", EndTime: "19:00"}, 9 * time.Hour, false},
		{Spec{Type: TypeWeekly, StartDayOfWeek: "Friday", StartTime: "18:00", EndDayOfWeek: "Monday", EndTime: "08:00"}, 62 * time.Hour, false},
		{Spec{Type: TypeWeekly, StartDayOfWeek: "Saturday", StartTime: "00:00", EndDayOfWeek: "Sunday", EndTime: "23:59"}, 47*time.Hour + 59*time.Minute, true},
		{Spec{Type: TypeDaily, StartTime: "22:00", EndTime: "02:00"}, 4 * time.Hour, false},
		{Spec{Type: TypeDaily, StartTime: "09:00", EndTime: "17:30"}, 8*time.Hour + 30*time.Minute, false},
	} {
		w := compile(t, tt.spec)
		if got, ok := w.WallLength(); !ok || got != tt.length {
			t.Errorf("%+v: WallLength = %s, %v; want %s", tt.spec, got, ok, tt.length)
		}
		if got := w.SpansDays(); got != tt.spansDays {
			t.Errorf("%+v: SpansDays = %v, want %v", tt.spec, got, tt.spansDays)
		}
	}
	if _, ok := compile(t, Spec{Type: TypeCron, Schedule: "@daily", Duration: "1h"}).WallLength(); ok {
		t.Error("WallLength of a Cron window")
	}
	monWed := compile(t, Spec{Type: TypeWeekly, StartDayOfWeek: "mon", StartTime: "11:50", EndDayOfWeek: "wed", EndTime: "13:00", TimeZone: "asia/tokyo"})
	want := Spec{Type: TypeDaily, StartTime: "11:50", EndTime: "13:00", DaysOfWeek: []string{"Monday", "Tuesday", "Wednesday"}, TimeZone: "Asia/Tokyo"}
	if diff := cmp.Diff(want, monWed.EachDay()); diff != "" {
		t.Errorf("Window.EachDay mismatch (-want +got):\n%s", diff)
	}
}

func TestParseAt(t *testing.T) {
	tokyo := loc(t, "Asia/Tokyo")
	for _, tt := range []struct {
		in        string
		loc       *time.Location
		want      string // canonical, or the error
		instant   string // In(loc), RFC 3339
		minuteErr bool   // ParseLocalDateTime rejects it
	}{
		{in: "2020-03-21T13:53:55Z", want: "2020-03-21T13:53:55", instant: "2020-03-21T13:53:55Z", minuteErr: true},
		{in: "2020-03-21T13:53:55", want: "2020-03-21T13:53:55", instant: "2020-03-21T13:53:55Z", minuteErr: true},
		{in: "2020-03-21T13:53:00", want: "2020-03-21T13:53", instant: "2020-03-21T13:53:00Z"},
		{in: "2020-03-21T13:53:00.000Z", want: "2020-03-21T13:53", instant: "2020-03-21T13:53:00Z"},
		{in: "2020-03-21T13:53:55+09:00", loc: tokyo, want: "2020-03-21T13:53:55", instant: "2020-03-21T04:53:55Z", minuteErr: true},
		{in: "2020-03-21T23:59:59Z", loc: tokyo, want: "2020-03-22T08:59:59", instant: "2020-03-21T23:59:59Z", minuteErr: true},
		{in: "2027-03-14T02:30:15", loc: loc(t, "America/New_York"), want: "2027-03-14T02:30:15", instant: "2027-03-14T07:00:00Z", minuteErr: true}, // in the gap: the jump
		{in: "2027-11-07T01:30:15", loc: loc(t, "America/New_York"), want: "2027-11-07T01:30:15", instant: "2027-11-07T05:30:15Z", minuteErr: true}, // repeated: the first
		{in: "2020-03-21T13:53:55.5Z", want: `"2020-03-21T13:53:55.5Z" has a fraction of a second: times are whole seconds, e.g. "2020-03-21T13:53:55"`},
		{in: "2020-03-21T13:53:60", want: `"2020-03-21T13:53:60" is not a valid time of day: expected HH:mm:ss on a 24-hour clock from 00:00:00 to 23:59:59`},
		{in: "2020-03-21T13:5", want: `"2020-03-21T13:5" is not a date and time: ` + atExpected},
	} {
		got, err := ParseAt(tt.in, tt.loc)
		if tt.instant == "" {
			if err == nil || err.Error() != tt.want {
				t.Errorf("ParseAt(%q) = %v, %v; want the error %s", tt.in, got, err, tt.want)
			}
			continue
		}
		if err != nil || got.String() != tt.want || !got.In(tt.loc).Equal(instant(t, tt.instant)) {
			t.Errorf("ParseAt(%q) = %v (%s), %v; want %s (%s)", tt.in, got, got.In(tt.loc).Format(time.RFC3339), err, tt.want, tt.instant)
		}
		if _, err := ParseLocalDateTime(tt.in, tt.loc); (err != nil) != tt.minuteErr {
			t.Errorf("ParseLocalDateTime(%q) error %v, want an error: %v", tt.in, err, tt.minuteErr)
		}
	}
}
