package timing

import (
	"strings"
	"testing"
	"time"

	"github.com/google/go-cmp/cmp"
)

// The tests in this file walk through docs/time-semantics.md (the time contract) in its
// order and check each example it gives, so that a change of the contract or of the engine
// shows up here by the example's name. Edge cases beyond the examples are in the other tests.

func TestContractZones(t *testing.T) {
	normalized := map[string]string{
		// Case-insensitive IANA names get their canonical spelling.
		"asia/tokyo": "Asia/Tokyo",
		// UTC and its aliases.
		"utc": "UTC", "Z": "UTC", "Etc/UTC": "UTC", "Etc/Zulu": "UTC", "Zulu": "UTC", "UCT": "UTC",
		"Universal": "UTC", "GMT": "UTC", "Etc/GMT": "UTC",
		// Whole-hour fixed offsets, with the POSIX sign inversion.
		"+09:00": "Etc/GMT-9", "+0900": "Etc/GMT-9", "UTC+9": "Etc/GMT-9", "GMT+09:00": "Etc/GMT-9", "-05:00": "Etc/GMT+5",
	}
	for in, want := range normalized {
		z, err := NormalizeZone(in)
		if err != nil {
			t.Errorf("NormalizeZone(%q): %v", in, err)
			continue
		}
		if z.Name != want || z.Warning != "" {
			t.Errorf("NormalizeZone(%q) = %q (warning %q), want %q without a warning", in, z.Name, z.Warning, want)
		}
		// Normalization is idempotent.
		if again, err := NormalizeZone(z.Name); err != nil || again.Name != z.Name {
			t.Errorf("NormalizeZone(%q) = %q, %v; want it unchanged", z.Name, again.Name, err)
		}
	}

	// Other offsets are rejected with a hint naming an IANA zone for that offset.
	if _, err := NormalizeZone("+05:30"); err == nil || !strings.Contains(err.Error(), `"Asia/Kolkata"`) {
		t.Errorf(`NormalizeZone("+05:30") = %v, want an error that names Asia/Kolkata`, err)
	}
	// Local, empty, and TZ=/CRON_TZ= prefixes are rejected.
	for _, in := range []string{"Local", "", "TZ=Europe/Berlin", "CRON_TZ=Europe/Berlin", "TZ=", "CRON_TZ="} {
		if z, err := NormalizeZone(in); err == nil {
			t.Errorf("NormalizeZone(%q) = %q, want an error", in, z.Name)
		}
	}
	for _, in := range []string{"TZ=Europe/Berlin 0 9 * * *", "CRON_TZ=Europe/Berlin 0 9 * * *", "TZ=", "TZ= 0 9 * * *", "CRON_TZ="} {
		if _, err := ParseCron(in); err == nil {
			t.Errorf("ParseCron(%q) succeeded, want an error", in)
		}
	}
	// Names that users rarely mean are accepted with a warning that says what they are and
	// which zone was probably meant.
	warned := map[string][]string{
		"EST":     {"fixed UTC-05:00 offset without daylight saving time", "America/New_York"},
		"MST":     {"fixed UTC-07:00 offset", "America/Denver"},
		"HST":     {"fixed UTC-10:00 offset", "Pacific/Honolulu"},
		"EST5EDT": {"America/New_York"},
	}
	for in, parts := range warned {
		z, err := NormalizeZone(in)
		if err != nil {
			t.Errorf("NormalizeZone(%q): %v", in, err)
			continue
		}
		for _, part := range parts {
			if !strings.Contains(z.Warning, part) {
				t.Errorf("NormalizeZone(%q).Warning = %q, want it to contain %q", in, z.Warning, part)
			}
		}
	}
	// Unknown names are rejected with up to three close suggestions.
	_, err := NormalizeZone("Europe/Berln")
	if err == nil || !strings.Contains(err.Error(), `did you mean "Europe/Berlin"?`) {
		t.Errorf(`NormalizeZone("Europe/Berln") = %v, want a suggestion of Europe/Berlin`, err)
	}
	_, err = NormalizeZone("America/Nw_York")
	if err == nil || strings.Count(errString(err), `"America/`) > 4 {
		t.Errorf(`NormalizeZone("America/Nw_York") = %v, want at most three suggestions`, err)
	}
}

func TestContractWallClockFormats(t *testing.T) {
	tests := []struct {
		name string
		spec Spec
		want Spec // the canonical form
	}{
		{
			name: "Daily H:mm and HH:mm:00",
			spec: Spec{Type: TypeDaily, StartTime: "9:00", EndTime: "17:00:00"},
			want: Spec{Type: TypeDaily, StartTime: "09:00", EndTime: "17:00", TimeZone: "UTC"},
		},
		{
			name: "Weekly case-insensitive names and 3-letter abbreviations",
			spec: Spec{Type: TypeWeekly, StartDayOfWeek: "FRIDAY", StartTime: "18:00", EndDayOfWeek: "mon", EndTime: "8:00", TimeZone: "europe/berlin"},
			want: Spec{Type: TypeWeekly, StartDayOfWeek: "Friday", StartTime: "18:00", EndDayOfWeek: "Monday", EndTime: "08:00", TimeZone: "Europe/Berlin"},
		},
		{
			name: "OneShot with :00 seconds and RFC 3339 converted to wall time in the zone",
			spec: Spec{Type: TypeOneShot, StartTime: "2036-03-14T09:30:00", EndTime: "2036-03-14T23:00:00Z", TimeZone: "Asia/Tokyo"},
			want: Spec{Type: TypeOneShot, StartTime: "2036-03-14T09:30", EndTime: "2036-03-15T08:00", TimeZone: "Asia/Tokyo"},
		},
		{
			name: "Cron with a Go duration",
			spec: Spec{Type: TypeCron, Schedule: "0 9 * * MON-FRI", Duration: "90m"},
			want: Spec{Type: TypeCron, Schedule: "0 9 * * MON-FRI", Duration: "1h30m0s", TimeZone: "UTC"},
		},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			got := compile(t, tt.spec).Canonical()
			// The canonical duration may be spelled either way; compare it as a duration.
			if tt.want.Type == TypeCron {
				wantD, _ := time.ParseDuration(tt.want.Duration)
				gotD, err := time.ParseDuration(got.Duration)
				if err != nil || gotD != wantD {
					t.Errorf("Duration = %q, want %v", got.Duration, wantD)
				}
				got.Duration, tt.want.Duration = "", ""
			}
			if diff := cmp.Diff(tt.want, got); diff != "" {
				t.Errorf("Canonical (-want +got):\n%s", diff)
			}
		})
	}
	for _, spec := range []string{"@yearly", "@annually", "@monthly", "@weekly", "@daily", "@midnight", "@hourly", "30 2 * * *"} {
		if _, err := ParseCron(spec); err != nil {
			t.Errorf("ParseCron(%q): %v", spec, err)
		}
	}
}

func TestContractWindows(t *testing.T) {
	// A window is half-open: [start, end).
	office := compile(t, Spec{Type: TypeDaily, StartTime: "09:00", EndTime: "17:00"})
	for at, want := range map[string]bool{"2027-01-15T08:59:59Z": false, "2027-01-15T09:00:00Z": true, "2027-01-15T16:59:59Z": true, "2027-01-15T17:00:00Z": false} {
		if _, got := office.ActiveAt(instant(t, at)); got != want {
			t.Errorf("09:00-17:00 active at %s = %v, want %v", at, got, want)
		}
	}

	// Daily: end at or before start crosses midnight.
	night := compile(t, Spec{Type: TypeDaily, StartTime: "22:00", EndTime: "02:00"})
	if diff := cmp.Diff(ivs(t, "2027-01-15T22:00:00Z", "2027-01-16T02:00:00Z"),
		intervals(t, night, instant(t, "2027-01-15T12:00:00Z"), instant(t, "2027-01-16T12:00:00Z"))); diff != "" {
		t.Errorf("22:00-02:00 (-want +got):\n%s", diff)
	}
	// Weekly: Friday 18:00 → Monday 08:00 crosses the weekend.
	weekend := compile(t, Spec{Type: TypeWeekly, StartDayOfWeek: "Friday", StartTime: "18:00", EndDayOfWeek: "Monday", EndTime: "08:00"})
	if diff := cmp.Diff(ivs(t, "2027-01-15T18:00:00Z", "2027-01-18T08:00:00Z"),
		intervals(t, weekend, instant(t, "2027-01-15T12:00:00Z"), instant(t, "2027-01-18T12:00:00Z"))); diff != "" {
		t.Errorf("Friday 18:00 - Monday 08:00 (-want +got):\n%s", diff)
	}

	rejected := map[string]Spec{
		"Daily start equal to end":           {Type: TypeDaily, StartTime: "09:00", EndTime: "9:00"},
		"Weekly same day and time":           {Type: TypeWeekly, StartDayOfWeek: "Mon", StartTime: "09:00", EndDayOfWeek: "monday", EndTime: "09:00"},
		"OneShot end not after start":        {Type: TypeOneShot, StartTime: "2036-01-01T10:00", EndTime: "2036-01-01T10:00"},
		"Cron duration under a minute":       {Type: TypeCron, Schedule: "@hourly", Duration: "59s"},
		"Cron @every":                        {Type: TypeCron, Schedule: "@every 1h", Duration: "10m"},
		"Cron that never fires (0 0 30 2 *)": {Type: TypeCron, Schedule: "0 0 30 2 *", Duration: "1h"},
	}
	for name, spec := range rejected {
		if _, errs := spec.Compile(); len(errs) == 0 {
			t.Errorf("%s: compiled, want an error", name)
		}
	}
	// A Cron window of exactly one minute is the shortest allowed.
	compile(t, Spec{Type: TypeCron, Schedule: "@hourly", Duration: "1m"})

	// A OneShot whose end is not after now is stale.
	lunch := compile(t, Spec{Type: TypeOneShot, StartTime: "2027-01-15T12:00", EndTime: "2027-01-15T13:00"})
	if lunch.Stale(instant(t, "2027-01-15T12:59:59Z")) || !lunch.Stale(instant(t, "2027-01-15T13:00:00Z")) {
		t.Errorf("a OneShot must be stale exactly from its end on")
	}
}

func TestContractDST(t *testing.T) {
	ny := loc(t, "America/New_York")
	// 1. A wall time that does not exist resolves to the instant the clocks jumped.
	if got, want := ResolveWall(ny, 2027, time.March, 14, 2, 30), instant(t, "2027-03-14T07:00:00Z"); !got.Equal(want) {
		t.Errorf("New York 2027-03-14 02:30 = %v, want %v", got, want)
	}
	// 2. A wall time that occurs twice resolves to its first occurrence.
	if got, want := ResolveWall(ny, 2027, time.November, 7, 1, 30), instant(t, "2027-11-07T05:30:00Z"); !got.Equal(want) {
		t.Errorf("New York 2027-11-07 01:30 = %v, want %v", got, want)
	}

	// A window whose start and end both fall into the same gap is empty that day.
	inGap := compile(t, Spec{Type: TypeDaily, StartTime: "02:10", EndTime: "02:50", TimeZone: "America/New_York"})
	if got := intervals(t, inGap, instant(t, "2027-03-14T05:00:00Z"), instant(t, "2027-03-15T04:00:00Z")); len(got) != 0 {
		t.Errorf("a window inside the gap on its day = %v, want none", got)
	}

	// A cron slot inside a gap runs at the jump instant; the slots of one gap and the slot at
	// the jump instant run once together.
	every30 := mustCron(t, "*/30 * * * *")
	want := []time.Time{
		instant(t, "2027-03-14T06:00:00Z"), instant(t, "2027-03-14T06:30:00Z"), // 01:00, 01:30 EST
		instant(t, "2027-03-14T07:00:00Z"), // 02:00, 02:30 (gap) and 03:00 EDT, once
		instant(t, "2027-03-14T07:30:00Z"), // 03:30 EDT
	}
	if diff := cmp.Diff(want, slots(t, every30, ny, instant(t, "2027-03-14T06:00:00Z"), instant(t, "2027-03-14T07:31:00Z"))); diff != "" {
		t.Errorf("*/30 across the gap (-want +got):\n%s", diff)
	}
	// A repeated slot runs once, at its first occurrence.
	if diff := cmp.Diff([]time.Time{instant(t, "2027-11-07T05:30:00Z")},
		slots(t, mustCron(t, "30 1 * * *"), ny, instant(t, "2027-11-07T04:00:00Z"), instant(t, "2027-11-07T08:00:00Z"))); diff != "" {
		t.Errorf("01:30 on the fall-back day (-want +got):\n%s", diff)
	}
}

func TestContractEffectiveReplicas(t *testing.T) {
	i := func(v int32) *int32 { return &v }
	baseline := Bounds{Min: 2, Max: 10}
	tests := []struct {
		name   string
		active []Override
		want   Bounds
	}{
		{name: "no active window: the baseline", want: baseline},
		{name: "largest min and largest max", active: []Override{{Name: "a", Min: i(4), Max: i(8)}, {Name: "b", Min: i(6), Max: i(7)}}, want: Bounds{Min: 6, Max: 8}},
		{name: "an omitted bound takes the baseline's value", active: []Override{{Name: "a", Min: i(5)}}, want: Bounds{Min: 5, Max: 10}},
		{name: "an omitted max competes with the baseline's", active: []Override{{Name: "a", Min: i(5)}, {Name: "b", Max: i(20)}}, want: Bounds{Min: 5, Max: 20}},
		{name: "min > max raises max to min", active: []Override{{Name: "a", Min: i(12)}}, want: Bounds{Min: 12, Max: 12}},
		{name: "a lower max with the baseline's min", active: []Override{{Name: "a", Max: i(1)}}, want: Bounds{Min: 2, Max: 2}},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			if diff := cmp.Diff(tt.want, Effective(baseline, tt.active)); diff != "" {
				t.Errorf("Effective (-want +got):\n%s", diff)
			}
		})
	}

	// overlapPolicy Forbid looks 366 days ahead (to 2028-01-16 12:00 UTC here): an overlap
	// inside that range is found, one after it is not.
	from := instant(t, "2027-01-15T12:00:00Z")
	daily := compile(t, Spec{Type: TypeDaily, StartTime: "09:00", EndTime: "17:00"})
	for _, tt := range []struct {
		day  string
		want bool
	}{{"2028-01-16T10:00", true}, {"2028-01-17T10:00", false}} {
		oneShot := compile(t, Spec{Type: TypeOneShot, StartTime: tt.day, EndTime: strings.Replace(tt.day, "10:00", "11:00", 1)})
		_, got := firstOverlap(t, oneShot, daily, from, OverlapHorizon)
		if got != tt.want {
			t.Errorf("overlap on %s within the horizon = %v, want %v", tt.day, got, tt.want)
		}
	}
	if got, want := OverlapHorizon, 366*24*time.Hour; got != want {
		t.Errorf("OverlapHorizon = %v, want %v", got, want)
	}
}

// TestContractMonthEndsAndBusinessDays checks the examples of "Month ends and business days".
func TestContractMonthEndsAndBusinessDays(t *testing.T) {
	calendar := func(zone string, days []string, periods ...[2]string) *Calendar {
		t.Helper()
		spec := CalendarSpec{Name: "Calendar c", TimeZone: zone}
		for _, d := range days {
			spec.Days = append(spec.Days, CalendarDay{Date: d})
		}
		for _, p := range periods {
			spec.Periods = append(spec.Periods, CalendarPeriod{Start: p[0], End: p[1]})
		}
		c, errs := spec.Compile()
		if len(errs) > 0 {
			t.Fatal(errs)
		}
		return c
	}
	// runs returns the local wall times of the runs in [from, to).
	runs := func(spec JobSpec, from, to string) []string {
		t.Helper()
		s, errs := spec.Compile()
		if len(errs) > 0 {
			t.Fatal(errs)
		}
		got, err := s.Runs(unlimited(), instant(t, from), instant(t, to))
		if err != nil {
			t.Fatal(err)
		}
		out := []string{}
		for _, r := range got {
			out = append(out, r.In(s.Zone.Location).Format("Mon 2006-01-02 15:04 MST"))
		}
		return out
	}
	utc := calendar("UTC", []string{"12-25"})
	freeze := calendar("America/New_York", nil, [2]string{"2027-12-31T12:00", "2028-01-01T00:00"})
	for _, tt := range []struct {
		name     string
		spec     JobSpec
		from, to string
		want     []string
	}{
		{name: "L-3 is January 28, February 25 or 26", spec: JobSpec{Schedule: "0 0 L-3 1,2 *"}, from: "2027-01-01T00:00:00Z", to: "2028-03-01T00:00:00Z",
			want: []string{"Thu 2027-01-28 00:00 UTC", "Thu 2027-02-25 00:00 UTC", "Fri 2028-01-28 00:00 UTC", "Sat 2028-02-26 00:00 UTC"}},
		{name: "1W on a Saturday the 1st is Monday the 3rd", spec: JobSpec{Schedule: "0 9 1W 1 *"}, from: "2028-01-01T00:00:00Z", to: "2028-02-01T00:00:00Z",
			want: []string{"Mon 2028-01-03 09:00 UTC"}},
		{name: "31W on a Sunday the 31st is Friday the 29th", spec: JobSpec{Schedule: "0 9 31W 10 *"}, from: "2027-10-01T00:00:00Z", to: "2027-11-01T00:00:00Z",
			want: []string{"Fri 2027-10-29 09:00 UTC"}},
		{name: "a holiday on Wednesday the 15th makes 15W Tuesday the 14th",
			spec: JobSpec{Schedule: "0 9 15W 12 *", Calendars: Mask{Skip: []*Calendar{calendar("UTC", []string{"2027-12-15"})}}},
			from: "2027-12-01T00:00:00Z", to: "2028-01-01T00:00:00Z", want: []string{"Tue 2027-12-14 09:00 UTC"}},
		{name: "31W does not fire in April", spec: JobSpec{Schedule: "0 9 31W 3-5 *"}, from: "2027-03-01T00:00:00Z", to: "2027-06-01T00:00:00Z",
			want: []string{"Wed 2027-03-31 09:00 UTC", "Mon 2027-05-31 09:00 UTC"}},
		{name: "FRI#5 fires only in months with five Fridays", spec: JobSpec{Schedule: "0 9 * * FRI#5"}, from: "2027-01-01T00:00:00Z", to: "2027-05-01T00:00:00Z",
			want: []string{"Fri 2027-01-29 09:00 UTC", "Fri 2027-04-30 09:00 UTC"}},
		{name: "a UTC calendar's 12-25 closes 12-24 at 20:00 in New York", spec: JobSpec{Schedule: "0 20 24W 12 *", TimeZone: "America/New_York", Calendars: Mask{Skip: []*Calendar{utc}}},
			from: "2027-12-01T00:00:00Z", to: "2028-01-01T00:00:00Z", want: []string{"Thu 2027-12-23 20:00 EST"}},
		{name: "but not at 09:00", spec: JobSpec{Schedule: "0 9 24W 12 *", TimeZone: "America/New_York", Calendars: Mask{Skip: []*Calendar{utc}}},
			from: "2027-12-01T00:00:00Z", to: "2028-01-01T00:00:00Z", want: []string{"Fri 2027-12-24 09:00 EST"}},
		{name: "an afternoon freeze on the 31st moves a 13:00 LW to the 30th", spec: JobSpec{Schedule: "0 13 LW 12 *", TimeZone: "America/New_York", Calendars: Mask{Skip: []*Calendar{freeze}}},
			from: "2027-12-01T00:00:00Z", to: "2028-01-01T12:00:00Z", want: []string{"Thu 2027-12-30 13:00 EST"}},
		{name: "and leaves a 09:00 one on the 31st", spec: JobSpec{Schedule: "0 9 LW 12 *", TimeZone: "America/New_York", Calendars: Mask{Skip: []*Calendar{freeze}}},
			from: "2027-12-01T00:00:00Z", to: "2028-01-01T12:00:00Z", want: []string{"Fri 2027-12-31 09:00 EST"}},
		{name: "0 9,17 LW picks its day by 09:00, and the calendars skip the 17:00 run", spec: JobSpec{Schedule: "0 9,17 LW 12 *", TimeZone: "America/New_York", Calendars: Mask{Skip: []*Calendar{freeze}}},
			from: "2027-12-01T00:00:00Z", to: "2028-01-01T12:00:00Z", want: []string{"Fri 2027-12-31 09:00 EST"}},
		{name: "30 2 * * SUN#2 in New York runs at the jump", spec: JobSpec{Schedule: "30 2 * 3 SUN#2", TimeZone: "America/New_York"},
			from: "2027-03-01T00:00:00Z", to: "2027-04-01T00:00:00Z", want: []string{"Sun 2027-03-14 03:00 EDT"}},
		{name: "30 2 * * SUNL in Berlin runs at the first occurrence", spec: JobSpec{Schedule: "30 2 * 10 SUNL", TimeZone: "Europe/Berlin"},
			from: "2027-10-01T00:00:00Z", to: "2027-11-01T00:00:00Z", want: []string{"Sun 2027-10-31 02:30 CEST"}},
		{name: "both day fields restricted: the last business day or the first Monday", spec: JobSpec{Schedule: "0 9 LW 11 MON#1"},
			from: "2027-11-01T00:00:00Z", to: "2027-12-01T00:00:00Z", want: []string{"Mon 2027-11-01 09:00 UTC", "Tue 2027-11-30 09:00 UTC"}},
	} {
		t.Run(tt.name, func(t *testing.T) {
			if diff := cmp.Diff(tt.want, runs(tt.spec, tt.from, tt.to)); diff != "" {
				t.Errorf("runs (-want +got):\n%s", diff)
			}
		})
	}
	for _, spec := range []string{"0 9 MON#1 * *", "0 9 * * L", "0 9 W#0 * *", "0 9 32W * *", "0 9 L-31 * *", "0 9 * * FRI#6", "0 9 1-LW * *", "0 9 L/2 * *",
		"0 9 W#24 * *", "0 9 30W 2 *", "0 9 * 2 MON#5"} {
		if _, err := ParseCron(spec); err == nil {
			t.Errorf("ParseCron(%q) is accepted, want it refused", spec)
		}
	}
	if _, errs := (JobSpec{Schedule: "0 9 W#22 * *", BusinessDays: []string{"Monday", "Tuesday", "Wednesday", "Thursday"}}).Compile(); len(errs) != 1 {
		t.Errorf("W#22 with four business days: %v, want refused", errs)
	}
}
