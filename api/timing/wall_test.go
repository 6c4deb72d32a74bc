package timing

import (
	"strings"
	"testing"
	"time"

	"github.com/google/go-cmp/cmp"
)

func TestResolveWall(t *testing.T) {
	tests := []struct {
		name     string
		zone     string
		wall     string // yyyy-MM-ddTHH:mm
		want     string // RFC 3339 instant
		wantKind WallKind
	}{
		// The contract's examples.
		{"New York gap", "America/New_York", "2027-03-14T02:30", "2027-03-14T07:00:00Z", Gap},
		{"New York repeat", "America/New_York", "2027-11-07T01:30", "2027-11-07T05:30:00Z", Repeat},

		{"New York gap start", "America/New_York", "2027-03-14T02:00", "2027-03-14T07:00:00Z", Gap},
		{"New York last minute of gap", "America/New_York", "2027-03-14T02:59", "2027-03-14T07:00:00Z", Gap},
		{"New York jump instant", "America/New_York", "2027-03-14T03:00", "2027-03-14T07:00:00Z", Normal},
		{"New York before gap", "America/New_York", "2027-03-14T01:59", "2027-03-14T06:59:00Z", Normal},
		{"New York repeat start", "America/New_York", "2027-11-07T01:00", "2027-11-07T05:00:00Z", Repeat},
		{"New York after repeat", "America/New_York", "2027-11-07T02:00", "2027-11-07T07:00:00Z", Normal},
		{"New York before repeat", "America/New_York", "2027-11-07T00:59", "2027-11-07T04:59:00Z", Normal},

		{"Berlin gap", "Europe/Berlin", "2027-03-28T02:30", "2027-03-28T01:00:00Z", Gap},
		{"Berlin repeat", "Europe/Berlin", "2027-10-31T02:30", "2027-10-31T00:30:00Z", Repeat},
		{"Berlin summer", "Europe/Berlin", "2027-07-01T09:00", "2027-07-01T07:00:00Z", Normal},

		// Southern hemisphere: DST starts in October and ends in April.
		{"Sydney gap in October", "Australia/Sydney", "2027-10-03T02:30", "2027-10-02T16:00:00Z", Gap},
		{"Sydney repeat in April", "Australia/Sydney", "2027-04-04T02:30", "2027-04-03T15:30:00Z", Repeat},
		{"Sydney after repeat", "Australia/Sydney", "2027-04-04T03:00", "2027-04-03T17:00:00Z", Normal},

		// Midnight transitions: 2018-11-04 had no 00:00, 2019-02-16 23:00-23:59 happened twice.
		{"Sao Paulo midnight gap", "America/Sao_Paulo", "2018-11-04T00:00", "2018-11-04T03:00:00Z", Gap},
		{"Sao Paulo in midnight gap", "America/Sao_Paulo", "2018-11-04T00:30", "2018-11-04T03:00:00Z", Gap},
		{"Sao Paulo after midnight gap", "America/Sao_Paulo", "2018-11-04T01:00", "2018-11-04T03:00:00Z", Normal},
		{"Sao Paulo day before gap", "America/Sao_Paulo", "2018-11-03T23:59", "2018-11-04T02:59:00Z", Normal},
		{"Sao Paulo repeat start", "America/Sao_Paulo", "2019-02-16T23:00", "2019-02-17T01:00:00Z", Repeat},
		{"Sao Paulo repeat", "America/Sao_Paulo", "2019-02-16T23:59", "2019-02-17T01:59:00Z", Repeat},
		{"Sao Paulo after repeat", "America/Sao_Paulo", "2019-02-17T00:00", "2019-02-17T03:00:00Z", Normal},
		{"Sao Paulo before repeat", "America/Sao_Paulo", "2019-02-16T22:59", "2019-02-17T00:59:00Z", Normal},

		{"Tokyo has no DST", "Asia/Tokyo", "2027-03-14T02:30", "2027-03-13T17:30:00Z", Normal},

		// 45-minute offsets: +12:45, +13:45 in summer; transitions at 02:45 local standard time.
		{"Chatham gap", "Pacific/Chatham", "2027-09-26T03:00", "2027-09-25T14:00:00Z", Gap},
		{"Chatham repeat", "Pacific/Chatham", "2027-04-04T03:00", "2027-04-03T13:15:00Z", Repeat},
		{"Chatham after repeat", "Pacific/Chatham", "2027-04-04T03:45", "2027-04-03T15:00:00Z", Normal},

		// 30-minute shifts.
		{"Lord Howe gap", "Australia/Lord_Howe", "2027-10-03T02:15", "2027-10-02T15:30:00Z", Gap},
		{"Lord Howe repeat", "Australia/Lord_Howe", "2027-04-04T01:45", "2027-04-03T14:45:00Z", Repeat},
		{"Lord Howe after repeat", "Australia/Lord_Howe", "2027-04-04T02:00", "2027-04-03T15:30:00Z", Normal},

		// Samoa skipped 2011-12-30 entirely.
		{"Apia skipped day", "Pacific/Apia", "2011-12-30T12:00", "2011-12-30T10:00:00Z", Gap},

		{"UTC", "UTC", "2028-02-29T00:00", "2028-02-29T00:00:00Z", Normal},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			l := loc(t, tt.zone)
			w, err := ParseLocalDateTime(tt.wall, l)
			if err != nil {
				t.Fatal(err)
			}
			if diff := cmp.Diff(instant(t, tt.want), ResolveWall(l, w.Year, w.Month, w.Day, w.Hour, w.Minute)); diff != "" {
				t.Errorf("ResolveWall(%s, %s) mismatch (-want +got):\n%s", tt.zone, tt.wall, diff)
			}
			if diff := cmp.Diff(tt.wantKind, ClassifyWall(l, w.Year, w.Month, w.Day, w.Hour, w.Minute)); diff != "" {
				t.Errorf("ClassifyWall(%s, %s) mismatch (-want +got):\n%s", tt.zone, tt.wall, diff)
			}
			if diff := cmp.Diff(instant(t, tt.want), w.In(l)); diff != "" {
				t.Errorf("LocalDateTime.In mismatch (-want +got):\n%s", diff)
			}
		})
	}
}

func TestResolveWallNilLocationIsUTC(t *testing.T) {
	if diff := cmp.Diff(instant(t, "2027-03-14T02:30:00Z"), ResolveWall(nil, 2027, time.March, 14, 2, 30)); diff != "" {
		t.Errorf("mismatch (-want +got):\n%s", diff)
	}
}

// TestResolveWallMatchesDefinition checks every 5 minutes around every transition of
// 2018-2029 in the test zones against the rule's definition (bruteResolve).
func TestResolveWallMatchesDefinition(t *testing.T) {
	from, to := instant(t, "2018-01-01T00:00:00Z"), instant(t, "2029-01-01T00:00:00Z")
	for _, name := range dstZones {
		l := loc(t, name)
		for _, tr := range transitions(l, from, to) {
			lo, _ := tr.walls()
			for wall := lo.Add(-3 * time.Hour); wall.Before(lo.Add(3 * time.Hour)); wall = wall.Add(5 * time.Minute) {
				want := bruteResolve(l, wall)
				if got := resolve(l, wall).at; !got.Equal(want) {
					t.Errorf("%s: resolve(%s) = %s, want %s", name, wall.Format("2006-01-02T15:04"), got, want)
				}
			}
		}
	}
}

func TestTransitionsFindBothYearlyChanges(t *testing.T) {
	got := transitions(loc(t, "Australia/Sydney"), instant(t, "2027-01-01T00:00:00Z"), instant(t, "2028-01-01T00:00:00Z"))
	want := []transition{
		{at: instant(t, "2027-04-03T16:00:00Z"), before: 11 * time.Hour, after: 10 * time.Hour},
		{at: instant(t, "2027-10-02T16:00:00Z"), before: 10 * time.Hour, after: 11 * time.Hour},
	}
	if diff := cmp.Diff(want, got, cmp.AllowUnexported(transition{})); diff != "" {
		t.Errorf("mismatch (-want +got):\n%s", diff)
	}
}

func TestParseClock(t *testing.T) {
	tests := []struct {
		in      string
		want    Clock
		wantErr string
	}{
		{in: "09:30", want: Clock{9, 30}},
		{in: "9:30", want: Clock{9, 30}},
		{in: "00:00", want: Clock{0, 0}},
		{in: "23:59", want: Clock{23, 59}},
		{in: "18:00:00", want: Clock{18, 0}},
		{in: " 07:05 ", want: Clock{7, 5}},
		{in: "", wantErr: `a time of day is required: expected HH:mm on a 24-hour clock, e.g. "09:30"`},
		{in: "25:00", wantErr: `"25:00" is not a time of day: expected HH:mm on a 24-hour clock, e.g. "09:30"`},
		{in: "24:00", wantErr: `"24:00" is not a time of day: the clock goes from 00:00 to 23:59; write "00:00" for midnight`},
		{in: "12:60", wantErr: `"12:60" is not a time of day: expected HH:mm on a 24-hour clock, e.g. "09:30"`},
		{in: "09:30:15", wantErr: `"09:30:15" has seconds: times are whole minutes; write "09:30"`},
		{in: "9:5", wantErr: `"9:5" is not a time of day: expected HH:mm on a 24-hour clock, e.g. "09:30"`},
		{in: "9am", wantErr: `"9am" is not a time of day: expected HH:mm on a 24-hour clock, e.g. "09:30"`},
		{in: "0930", wantErr: `"0930" is not a time of day: expected HH:mm on a 24-hour clock, e.g. "09:30"`},
		{in: "+9:30", wantErr: `"+9:30" is not a time of day: expected HH:mm on a 24-hour clock, e.g. "09:30"`},
		{in: "09:30:0", wantErr: `"09:30:0" is not a time of day: expected HH:mm on a 24-hour clock, e.g. "09:30"`},
		{in: "09:30 PM", wantErr: `"09:30 PM" is not a time of day: expected HH:mm on a 24-hour clock, e.g. "09:30"`},
	}
	for _, tt := range tests {
		t.Run(tt.in, func(t *testing.T) {
			got, err := ParseClock(tt.in)
			if diff := cmp.Diff(tt.wantErr, errString(err)); diff != "" {
				t.Fatalf("ParseClock(%q) error mismatch (-want +got):\n%s", tt.in, diff)
			}
			if diff := cmp.Diff(tt.want, got); diff != "" {
				t.Errorf("ParseClock(%q) mismatch (-want +got):\n%s", tt.in, diff)
			}
		})
	}
}

func TestClockString(t *testing.T) {
	if diff := cmp.Diff("07:05", Clock{7, 5}.String()); diff != "" {
		t.Errorf("mismatch (-want +got):\n%s", diff)
	}
}

func TestParseWeekday(t *testing.T) {
	tests := []struct {
		in      string
		want    time.Weekday
		wantErr string
	}{
		{in: "Monday", want: time.Monday},
		{in: "monday", want: time.Monday},
		{in: "SUNDAY", want: time.Sunday},
		{in: "Fri", want: time.Friday},
		{in: "sat", want: time.Saturday},
		{in: " Thu ", want: time.Thursday},
		{in: "", wantErr: `a day of the week is required: expected Monday to Sunday, or Mon to Sun, e.g. "Friday"`},
		{in: "Fryday", wantErr: `"Fryday" is not a day of the week (did you mean "Friday"?): expected Monday to Sunday, or Mon to Sun, e.g. "Friday"`},
		{in: "Tues", wantErr: `"Tues" is not a day of the week: expected Monday to Sunday, or Mon to Sun, e.g. "Friday"`},
		{in: "1", wantErr: `"1" is not a day of the week: expected Monday to Sunday, or Mon to Sun, e.g. "Friday"`},
		{in: "Montag", wantErr: `"Montag" is not a day of the week (did you mean "Monday"?): expected Monday to Sunday, or Mon to Sun, e.g. "Friday"`},
	}
	for _, tt := range tests {
		t.Run(tt.in, func(t *testing.T) {
			got, err := ParseWeekday(tt.in)
			if diff := cmp.Diff(tt.wantErr, errString(err)); diff != "" {
				t.Fatalf("ParseWeekday(%q) error mismatch (-want +got):\n%s", tt.in, diff)
			}
			if diff := cmp.Diff(tt.want, got); diff != "" {
				t.Errorf("ParseWeekday(%q) mismatch (-want +got):\n%s", tt.in, diff)
			}
		})
	}
}

func TestParseLocalDateTime(t *testing.T) {
	tests := []struct {
		name    string
		in      string
		zone    string
		want    string // canonical form
		wantErr string
	}{
		{name: "canonical", in: "2027-03-14T09:30", zone: "UTC", want: "2027-03-14T09:30"},
		{name: "zero seconds", in: "2027-03-14T09:30:00", zone: "UTC", want: "2027-03-14T09:30"},
		{name: "leap day", in: "2028-02-29T00:00", zone: "Asia/Tokyo", want: "2028-02-29T00:00"},
		{name: "Z converted to the zone", in: "2027-03-14T07:00:00Z", zone: "America/New_York", want: "2027-03-14T03:00"},
		{name: "offset converted to the zone", in: "2027-03-14T09:30:00+09:00", zone: "Europe/Berlin", want: "2027-03-14T01:30"},
		{name: "offset converted across the date", in: "2027-03-14T00:30:00Z", zone: "Asia/Tokyo", want: "2027-03-14T09:30"},
		{name: "offset without seconds", in: "2027-03-14T09:30-05:00", zone: "America/New_York", want: "2027-03-14T10:30"},
		{name: "zero fraction", in: "2027-03-14T09:30:00.000Z", zone: "UTC", want: "2027-03-14T09:30"},
		{name: "second occurrence is stored as its wall time", in: "2027-11-07T01:30:00-05:00", zone: "America/New_York", want: "2027-11-07T01:30"},
		{name: "nil location is UTC", in: "2027-03-14T09:30:00+01:00", want: "2027-03-14T08:30"},

		{name: "empty", in: "", zone: "UTC", wantErr: `a date and time is required: expected yyyy-MM-ddTHH:mm (wall time in the time zone) or RFC 3339 with an offset, e.g. "2027-03-14T09:30" or "2027-03-14T09:30:00+09:00"`},
		{name: "not a leap year", in: "2027-02-29T10:00", zone: "UTC", wantErr: `"2027-02-29T10:00" is not a valid date: February 2027 has 28 days`},
		{name: "April 31", in: "2027-04-31T10:00", zone: "UTC", wantErr: `"2027-04-31T10:00" is not a valid date: April 2027 has 30 days`},
		{name: "month 13", in: "2027-13-01T10:00", zone: "UTC", wantErr: `"2027-13-01T10:00" is not a valid date: months go from 01 to 12`},
		{name: "hour 24", in: "2027-03-14T24:00", zone: "UTC", wantErr: `"2027-03-14T24:00" is not a valid time of day: expected HH:mm on a 24-hour clock from 00:00 to 23:59`},
		{name: "seconds", in: "2027-03-14T09:30:15", zone: "UTC", wantErr: `"2027-03-14T09:30:15" has seconds: times are whole minutes (seconds must be 00), e.g. "2027-03-14T09:30"`},
		{name: "fraction", in: "2027-03-14T09:30:00.5Z", zone: "UTC", wantErr: `"2027-03-14T09:30:00.5Z" has seconds: times are whole minutes (seconds must be 00), e.g. "2027-03-14T09:30"`},
		{name: "space", in: "2027-03-14 09:30", zone: "UTC", wantErr: `"2027-03-14 09:30" separates the date and the time with a space: use "T", e.g. "2027-03-14T09:30"`},
		{name: "date only", in: "2027-03-14", zone: "UTC", wantErr: `"2027-03-14" is not a date and time: expected yyyy-MM-ddTHH:mm (wall time in the time zone) or RFC 3339 with an offset, e.g. "2027-03-14T09:30" or "2027-03-14T09:30:00+09:00"`},
		{name: "zone name suffix", in: "2027-03-14T09:30 EST", zone: "UTC", wantErr: `"2027-03-14T09:30 EST" is not a date and time: expected yyyy-MM-ddTHH:mm (wall time in the time zone) or RFC 3339 with an offset, e.g. "2027-03-14T09:30" or "2027-03-14T09:30:00+09:00"`},
		{name: "bad offset", in: "2027-03-14T09:30:00+24:00", zone: "UTC", wantErr: `"2027-03-14T09:30:00+24:00" has an invalid UTC offset "+24:00": expected ±hh:mm from -23:59 to +23:59`},
		{name: "year out of range after conversion", in: "2261-12-31T23:00:00Z", zone: "Asia/Tokyo", wantErr: `"2261-12-31T23:00:00Z" is 2262-01-01T08:00 in Asia/Tokyo, outside the years almanac schedules: 1970 to 2261 (instants are int64 nanoseconds since 1970, which end in April 2262); write a date in that range`},
		{name: "last year", in: "2261-12-31T23:59", zone: "Pacific/Kiritimati", want: "2261-12-31T23:59"},
		// A OneShot ending in 2300 would compare as garbage: time.Time.UnixNano is undefined
		// after April 2262.
		{name: "after the last year", in: "2300-01-01T00:00", zone: "UTC", wantErr: `"2300-01-01T00:00" is outside the years almanac schedules: 1970 to 2261 (instants are int64 nanoseconds since 1970, which end in April 2262); write a date in that range`},
		{name: "before 1970", in: "1969-12-31T23:59", zone: "UTC", wantErr: `"1969-12-31T23:59" is outside the years almanac schedules: 1970 to 2261 (instants are int64 nanoseconds since 1970, which end in April 2262); write a date in that range`},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			var l *time.Location
			if tt.zone != "" {
				l = loc(t, tt.zone)
			}
			got, err := ParseLocalDateTime(tt.in, l)
			if diff := cmp.Diff(tt.wantErr, errString(err)); diff != "" {
				t.Fatalf("ParseLocalDateTime(%q) error mismatch (-want +got):\n%s", tt.in, diff)
			}
			if err != nil {
				return
			}
			if diff := cmp.Diff(tt.want, got.String()); diff != "" {
				t.Errorf("ParseLocalDateTime(%q) mismatch (-want +got):\n%s", tt.in, diff)
			}
		})
	}
}

// errString returns err's message, or "" for nil, so that tables can compare errors as text.
func errString(err error) string {
	if err == nil {
		return ""
	}
	return err.Error()
}

// TestLeapYearEndAfterWrittenTransitions: after 2038 a zone's instants are answered by its TZ
// string, where Time.ZoneBounds reports the end of a leap year's last UTC day as Dec 31 00:00
// UTC, at or before the instant (golang/go#81583). The walks from period to period (the DST
// rule, the transitions of a range) must neither stop there nor loop; before, they looped
// forever (and did so with Go's own embedded data from 2024 on).
func TestLeapYearEndAfterWrittenTransitions(t *testing.T) {
	berlin := loc(t, "Europe/Berlin")
	at := time.Date(2040, time.December, 31, 12, 0, 0, 0, time.UTC).In(berlin)
	if _, end := at.ZoneBounds(); end.After(at) {
		t.Skip("time.ZoneBounds is right here: golang/go#81583 is fixed in this Go release")
	}
	done := make(chan struct{})
	var (
		trs []transition
		res resolution
	)
	go func() {
		defer close(done)
		trs = transitions(berlin, instant(t, "2040-10-01T00:00:00Z"), instant(t, "2041-04-01T00:00:00Z"))
		res = resolve(berlin, civil(2040, time.December, 31, 13, 0))
	}()
	select {
	case <-done:
	case <-time.After(10 * time.Second):
		t.Fatal("transitions or resolve did not return within 10 s around 2040-12-31 in Europe/Berlin")
	}
	var got []string
	for _, tr := range trs {
		got = append(got, tr.at.Format(time.RFC3339))
	}
	if want := []string{"2040-10-28T01:00:00Z", "2041-03-31T01:00:00Z"}; strings.Join(got, " ") != strings.Join(want, " ") {
		t.Errorf("transitions = %v, want %v", got, want)
	}
	if want := instant(t, "2040-12-31T12:00:00Z"); res.kind != Normal || !res.at.Equal(want) {
		t.Errorf("resolve(2040-12-31 13:00) = %s %v, want %s Normal", res.at, res.kind, want)
	}
	if end := periodEnd(at); !end.Equal(instant(t, "2041-01-01T00:00:00Z")) {
		t.Errorf("periodEnd(%s) = %s, want the end of the UTC year", at.UTC(), end.UTC())
	}
}

// TestClockChanges: the instants at which a zone's clocks change, with its abbreviations, in
// the range; the same two a year after 2038 (where Go works times out from the zone's rule,
// and a leap year's last day once made the walk loop), none in UTC.
func TestClockChanges(t *testing.T) {
	berlin := loc(t, "Europe/Berlin")
	for _, year := range []int{2027, 2040} {
		from, to := time.Date(year, 1, 1, 0, 0, 0, 0, time.UTC), time.Date(year+1, 1, 1, 0, 0, 0, 0, time.UTC)
		var got []string
		for _, c := range ClockChanges(berlin, from, to) {
			got = append(got, c.At.Format(time.RFC3339)+" "+c.From+"→"+c.To)
		}
		spring := time.Date(year, 3, 31, 1, 0, 0, 0, time.UTC)
		for spring.Weekday() != time.Sunday {
			spring = spring.AddDate(0, 0, -1)
		}
		fall := time.Date(year, 10, 31, 1, 0, 0, 0, time.UTC)
		for fall.Weekday() != time.Sunday {
			fall = fall.AddDate(0, 0, -1)
		}
		want := []string{spring.Format(time.RFC3339) + " CET→CEST", fall.Format(time.RFC3339) + " CEST→CET"}
		if diff := cmp.Diff(want, got); diff != "" {
			t.Errorf("%d (-want +got):\n%s", year, diff)
		}
	}
	if got := ClockChanges(time.UTC, time.Date(2040, 1, 1, 0, 0, 0, 0, time.UTC), time.Date(2041, 1, 1, 0, 0, 0, 0, time.UTC)); len(got) != 0 {
		t.Errorf("UTC: %v, want none", got)
	}
}
