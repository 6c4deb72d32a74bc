package timing

import (
	"slices"
	"strings"
	"testing"
	"time"

	"github.com/google/go-cmp/cmp"
	"github.com/google/go-cmp/cmp/cmpopts"
)

func TestParseCron(t *testing.T) {
	tests := []struct {
		in      string
		want    string // canonical form
		wantErr string // a substring of the error
	}{
		{in: "30 2 * * *", want: "30 2 * * *"},
		{in: "  */15   *  * *\t*  ", want: "*/15 * * * *"},
		{in: "0 9 * * MON-FRI", want: "0 9 * * MON-FRI"},
		{in: "0 0 29 2 *", want: "0 0 29 2 *"},
		{in: "0 0 31 * *", want: "0 0 31 * *"},
		{in: "@yearly", want: "@yearly"},
		{in: "@annually", want: "@yearly"},
		{in: "@ANNUALLY", want: "@yearly"},
		{in: "@monthly", want: "@monthly"},
		{in: "@Weekly", want: "@weekly"},
		{in: "@daily", want: "@daily"},
		{in: "@midnight", want: "@daily"},
		{in: "@hourly", want: "@hourly"},

		{in: "", wantErr: "a cron schedule is required"},
		{in: "@every 1h", wantErr: `"@every 1h" is not supported: @every counts from when the controller started and ignores the time zone`},
		{in: "@EVERY 5m", wantErr: "@every counts from when the controller started"},
		{in: "@every 5m", wantErr: `use a 5-field schedule such as "*/5 * * * *"`},
		{in: "@every 1m", wantErr: `use a 5-field schedule such as "* * * * *"`},
		{in: "@every 60m", wantErr: `use a 5-field schedule such as "0 * * * *"`},
		{in: "@every 6h", wantErr: `use a 5-field schedule such as "0 */6 * * *"`},
		{in: "@every 24h", wantErr: `use a 5-field schedule such as "0 0 * * *"`},
		{in: "@every 7m", wantErr: `use a 5-field schedule such as "*/30 * * * *"`},
		{in: "@every 90m", wantErr: `use a 5-field schedule such as "*/30 * * * *"`},
		{in: "@every", wantErr: `use a 5-field schedule such as "*/30 * * * *"`},
		{in: "@reboot", wantErr: `"@reboot" is not a known descriptor`},
		{in: "TZ=Asia/Tokyo 0 9 * * *", wantErr: `"TZ=Asia/Tokyo 0 9 * * *" sets a time zone inside the schedule: remove "TZ=Asia/Tokyo" and set the schedule's time zone to "Asia/Tokyo" instead`},
		{in: "CRON_TZ=Europe/Berlin 0 9 * * *", wantErr: `remove "CRON_TZ=Europe/Berlin"`},
		{in: "TZ=", wantErr: `"TZ=" starts with "TZ=": the time zone is not part of the schedule`},
		{in: "tz=UTC", wantErr: `"tz=UTC" sets a time zone inside the schedule`},
		{in: "0 30 2 * * *", wantErr: `"0 30 2 * * *" has 6 fields: seconds (and years) are not supported`},
		{in: "0 2 * *", wantErr: `"0 2 * *" has 4 fields: expected 5 fields (minute hour day-of-month month day-of-week)`},
		{in: "0 25 * * *", wantErr: `"0 25 * * *" is not a valid cron schedule: hour field "25": end of range (25) above maximum (23)`},
		{in: "61 * * * *", wantErr: `minute field "61"`},
		{in: "0 0 0 * *", wantErr: `day-of-month field "0": beginning of range (0) below minimum (1)`},
		{in: "0 0 * 13 *", wantErr: `month field "13"`},
		{in: "0 0 * * 7", wantErr: `day-of-week field "7"`},
		{in: "0 0 * * MON-", wantErr: `day-of-week field "MON-"`},
		{in: "*/0 * * * *", wantErr: `minute field "*/0"`},
		{in: ", 0 1 1 0", wantErr: `minute field "," matches no value`},
		{in: "0 0 1 ,, *", wantErr: `month field ",," matches no value`},
		{in: "0 0 30 2 *", wantErr: `"0 0 30 2 *" never fires: no calendar date matches both its day-of-month and month fields`},
		{in: "0 0 31 4 *", wantErr: "never fires"},
		{in: "0 0 30,31 2 *", wantErr: "never fires"},
	}
	for _, tt := range tests {
		t.Run(tt.in, func(t *testing.T) {
			got, err := ParseCron(tt.in)
			if tt.wantErr != "" {
				if err == nil || !strings.Contains(err.Error(), tt.wantErr) {
					t.Fatalf("ParseCron(%q) error = %v, want one containing %q", tt.in, err, tt.wantErr)
				}
				return
			}
			if err != nil {
				t.Fatalf("ParseCron(%q) = %v", tt.in, err)
			}
			if diff := cmp.Diff(tt.want, got.String()); diff != "" {
				t.Errorf("ParseCron(%q).String() mismatch (-want +got):\n%s", tt.in, diff)
			}
		})
	}
}

func mustCron(t testing.TB, spec string) Cron {
	t.Helper()
	c, err := ParseCron(spec)
	if err != nil {
		t.Fatal(err)
	}
	return c
}

// TestCronSlotsAcrossDST lists every firing on spring-forward and fall-back days: a gap slot
// runs once at the jump instant, the slots of one gap and the slot at the jump instant run
// once together, and a repeated slot runs once, at its first occurrence.
func TestCronSlotsAcrossDST(t *testing.T) {
	tests := []struct {
		name     string
		spec     string
		zone     string
		from, to string
		want     []string
	}{
		{
			name: "gap slot runs at the jump instant",
			spec: "30 2 * * *", zone: "America/New_York",
			from: "2027-03-13T00:00:00Z", to: "2027-03-16T00:00:00Z",
			want: []string{"2027-03-13T07:30:00Z", "2027-03-14T07:00:00Z", "2027-03-15T06:30:00Z"},
		},
		{
			name: "repeated slot runs once",
			spec: "30 1 * * *", zone: "America/New_York",
			from: "2027-11-06T00:00:00Z", to: "2027-11-09T00:00:00Z",
			want: []string{"2027-11-06T05:30:00Z", "2027-11-07T05:30:00Z", "2027-11-08T06:30:00Z"},
		},
		{
			name: "start of the repeated hour runs once",
			spec: "0 1 * * *", zone: "America/New_York",
			from: "2027-11-06T00:00:00Z", to: "2027-11-09T00:00:00Z",
			want: []string{"2027-11-06T05:00:00Z", "2027-11-07T05:00:00Z", "2027-11-08T06:00:00Z"},
		},
		{
			name: "slot before the gap is untouched",
			spec: "0 1 * * *", zone: "America/New_York",
			from: "2027-03-13T00:00:00Z", to: "2027-03-16T00:00:00Z",
			want: []string{"2027-03-13T06:00:00Z", "2027-03-14T06:00:00Z", "2027-03-15T05:00:00Z"},
		},
		{
			name: "quarter hours on the spring-forward day",
			spec: "*/15 * * * *", zone: "America/New_York",
			from: "2027-03-14T06:30:00Z", to: "2027-03-14T07:31:00Z",
			want: []string{
				"2027-03-14T06:30:00Z", "2027-03-14T06:45:00Z", // 01:30, 01:45 EST
				"2027-03-14T07:00:00Z", // 02:00, 02:15, 02:30, 02:45 and 03:00 EDT, once
				"2027-03-14T07:15:00Z", "2027-03-14T07:30:00Z",
			},
		},
		{
			name: "quarter hours on the fall-back day",
			spec: "*/15 * * * *", zone: "America/New_York",
			from: "2027-11-07T05:30:00Z", to: "2027-11-07T07:31:00Z",
			want: []string{
				"2027-11-07T05:30:00Z", "2027-11-07T05:45:00Z", // 01:30, 01:45 EDT
				// 01:00-01:45 EST are second occurrences: nothing runs.
				"2027-11-07T07:00:00Z", "2027-11-07T07:15:00Z", "2027-11-07T07:30:00Z", // 02:00 EST on
			},
		},
		{
			name: "Berlin gap slot",
			spec: "30 2 * * *", zone: "Europe/Berlin",
			from: "2027-03-27T00:00:00Z", to: "2027-03-30T00:00:00Z",
			want: []string{"2027-03-27T01:30:00Z", "2027-03-28T01:00:00Z", "2027-03-29T00:30:00Z"},
		},
		{
			name: "Berlin repeated slot",
			spec: "30 2 * * *", zone: "Europe/Berlin",
			from: "2027-10-30T00:00:00Z", to: "2027-11-02T00:00:00Z",
			want: []string{"2027-10-30T00:30:00Z", "2027-10-31T00:30:00Z", "2027-11-01T01:30:00Z"},
		},
		{
			name: "Berlin quarter hours across the gap",
			spec: "*/15 * * * *", zone: "Europe/Berlin",
			from: "2027-03-28T00:30:00Z", to: "2027-03-28T01:16:00Z",
			want: []string{"2027-03-28T00:30:00Z", "2027-03-28T00:45:00Z", "2027-03-28T01:00:00Z", "2027-03-28T01:15:00Z"},
		},
		{
			name: "Berlin quarter hours across the repeat",
			spec: "*/15 * * * *", zone: "Europe/Berlin",
			from: "2027-10-31T00:30:00Z", to: "2027-10-31T02:01:00Z",
			want: []string{"2027-10-31T00:30:00Z", "2027-10-31T00:45:00Z", "2027-10-31T02:00:00Z"},
		},
		{
			name: "Sydney gap in October",
			spec: "30 2 * * *", zone: "Australia/Sydney",
			from: "2027-10-01T00:00:00Z", to: "2027-10-04T00:00:00Z",
			want: []string{"2027-10-01T16:30:00Z", "2027-10-02T16:00:00Z", "2027-10-03T15:30:00Z"},
		},
		{
			name: "Sydney repeated slot in April runs once",
			spec: "30 2 * * *", zone: "Australia/Sydney",
			from: "2027-04-02T00:00:00Z", to: "2027-04-05T00:00:00Z",
			want: []string{"2027-04-02T15:30:00Z", "2027-04-03T15:30:00Z", "2027-04-04T16:30:00Z"}, // not 2027-04-03T16:30 (02:30 AEST)
		},
		{
			name: "Sao Paulo midnight gap",
			spec: "@daily", zone: "America/Sao_Paulo",
			from: "2018-11-03T00:00:00Z", to: "2018-11-06T00:00:00Z",
			want: []string{"2018-11-03T03:00:00Z", "2018-11-04T03:00:00Z", "2018-11-05T02:00:00Z"},
		},
		{
			name: "Sao Paulo repeated hour before midnight",
			spec: "30 23 * * *", zone: "America/Sao_Paulo",
			from: "2019-02-15T12:00:00Z", to: "2019-02-19T00:00:00Z",
			want: []string{"2019-02-16T01:30:00Z", "2019-02-17T01:30:00Z", "2019-02-18T02:30:00Z"},
		},
		{
			name: "Chatham 45-minute zone",
			spec: "0 3 * * *", zone: "Pacific/Chatham",
			from: "2027-09-24T00:00:00Z", to: "2027-09-27T00:00:00Z",
			want: []string{"2027-09-24T14:15:00Z", "2027-09-25T14:00:00Z", "2027-09-26T13:15:00Z"},
		},
		{
			name: "Chatham 45-minute zone, repeated slot in April runs once",
			spec: "0 3 * * *", zone: "Pacific/Chatham",
			from: "2027-04-02T00:00:00Z", to: "2027-04-05T00:00:00Z",
			want: []string{"2027-04-02T13:15:00Z", "2027-04-03T13:15:00Z", "2027-04-04T14:15:00Z"}, // not 2027-04-03T14:15 (03:00 +1245)
		},
		{
			name: "Chatham quarter hours across the 45-minute gap",
			spec: "*/15 * * * *", zone: "Pacific/Chatham",
			from: "2027-09-25T13:30:00Z", to: "2027-09-25T14:16:00Z",
			want: []string{
				"2027-09-25T13:30:00Z", "2027-09-25T13:45:00Z", // 02:15, 02:30 +1245
				"2027-09-25T14:00:00Z", // the jump to 03:45 +1345: the 02:45 to 03:45 slots, once
				"2027-09-25T14:15:00Z", // 04:00 +1345
			},
		},
		{
			name: "Tokyo has no DST",
			spec: "30 2 * * *", zone: "Asia/Tokyo",
			from: "2027-03-13T00:00:00Z", to: "2027-03-16T00:00:00Z",
			want: []string{"2027-03-13T17:30:00Z", "2027-03-14T17:30:00Z", "2027-03-15T17:30:00Z"},
		},
		{
			name: "weekday from the local date",
			spec: "0 8 * * MON", zone: "Asia/Tokyo",
			from: "2027-03-14T00:00:00Z", to: "2027-03-16T00:00:00Z",
			want: []string{"2027-03-14T23:00:00Z"}, // Monday 08:00 JST is Sunday in UTC
		},
		{
			name: "half-open range includes from",
			spec: "0 * * * *", zone: "UTC",
			from: "2027-01-01T00:00:00Z", to: "2027-01-01T02:00:00Z",
			want: []string{"2027-01-01T00:00:00Z", "2027-01-01T01:00:00Z"},
		},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			c := mustCron(t, tt.spec)
			var want []time.Time
			for _, s := range tt.want {
				want = append(want, instant(t, s))
			}
			got := slots(t, c, loc(t, tt.zone), instant(t, tt.from), instant(t, tt.to))
			if diff := cmp.Diff(want, got); diff != "" {
				t.Errorf("Slots(%q) mismatch (-want +got):\n%s", tt.spec, diff)
			}
		})
	}
}

func TestCronNextAndPrev(t *testing.T) {
	tests := []struct {
		name     string
		spec     string
		zone     string
		at       string
		wantNext string
		wantPrev string // latest firing at or before at
	}{
		{
			name: "Feb 29 from a common year", spec: "0 0 29 2 *", zone: "UTC",
			at: "2027-03-01T00:00:00Z", wantNext: "2028-02-29T00:00:00Z", wantPrev: "2024-02-29T00:00:00Z",
		},
		{
			name: "Feb 29 in Tokyo", spec: "0 0 29 2 *", zone: "Asia/Tokyo",
			at: "2027-03-01T00:00:00Z", wantNext: "2028-02-28T15:00:00Z", wantPrev: "2024-02-28T15:00:00Z",
		},
		{
			name: "Feb 29 across 2100, which is not a leap year", spec: "0 0 29 2 *", zone: "UTC",
			at: "2096-03-01T00:00:00Z", wantNext: "2104-02-29T00:00:00Z", wantPrev: "2096-02-29T00:00:00Z",
		},
		{
			name: "Next is strictly after, Prev includes the instant", spec: "0 9 * * *", zone: "UTC",
			at: "2027-01-01T09:00:00Z", wantNext: "2027-01-02T09:00:00Z", wantPrev: "2027-01-01T09:00:00Z",
		},
		{
			name: "in the second occurrence of a repeated hour", spec: "*/15 * * * *", zone: "America/New_York",
			at:       "2027-11-07T06:20:00Z", // 01:20 EST
			wantNext: "2027-11-07T07:00:00Z", wantPrev: "2027-11-07T05:45:00Z",
		},
		{
			name: "at the jump instant", spec: "30 2 * * *", zone: "America/New_York",
			at: "2027-03-14T07:00:00Z", wantNext: "2027-03-15T06:30:00Z", wantPrev: "2027-03-14T07:00:00Z",
		},
		{
			name: "just before the jump instant", spec: "30 2 * * *", zone: "America/New_York",
			at: "2027-03-14T06:59:59Z", wantNext: "2027-03-14T07:00:00Z", wantPrev: "2027-03-13T07:30:00Z",
		},
		{
			name: "seconds are ignored", spec: "* * * * *", zone: "UTC",
			at: "2027-01-01T09:00:30Z", wantNext: "2027-01-01T09:01:00Z", wantPrev: "2027-01-01T09:00:00Z",
		},
		{
			name: "day of month or day of week (both restricted)", spec: "0 0 13 * FRI", zone: "UTC",
			at: "2027-01-01T12:00:00Z", wantNext: "2027-01-08T00:00:00Z", wantPrev: "2027-01-01T00:00:00Z",
		},
		{
			name: "day of week with any day of month", spec: "0 0 * * FRI", zone: "UTC",
			at: "2027-01-02T00:00:00Z", wantNext: "2027-01-08T00:00:00Z", wantPrev: "2027-01-01T00:00:00Z",
		},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			c, l, at := mustCron(t, tt.spec), loc(t, tt.zone), instant(t, tt.at)
			if diff := cmp.Diff(instant(t, tt.wantNext), c.Next(l, at)); diff != "" {
				t.Errorf("Next mismatch (-want +got):\n%s", diff)
			}
			if diff := cmp.Diff(instant(t, tt.wantPrev), c.Prev(l, at)); diff != "" {
				t.Errorf("Prev mismatch (-want +got):\n%s", diff)
			}
		})
	}
}

func TestZeroCronNeverFires(t *testing.T) {
	var c Cron
	at := instant(t, "2027-01-01T00:00:00Z")
	if got := c.Next(time.UTC, at); !got.IsZero() {
		t.Errorf("Next = %s, want zero", got)
	}
	if got := c.Prev(time.UTC, at); !got.IsZero() {
		t.Errorf("Prev = %s, want zero", got)
	}
}

// TestCronMatchesDefinition compares Slots with the definition: resolve every wall-clock slot
// by the DST rule (bruteResolve) and keep each instant once.
func TestCronMatchesDefinition(t *testing.T) {
	specs := []string{"*/15 * * * *", "30 2 * * *", "0 1 * * *", "0 0 * * *", "45 23 * * *", "5,50 0-3 * * SUN", "*/20 2 * * *", "0 3 * * *"}
	from, to := instant(t, "2018-01-01T00:00:00Z"), instant(t, "2029-01-01T00:00:00Z")
	for _, name := range dstZones {
		l := loc(t, name)
		for _, tr := range transitions(l, from, to) {
			// Two days around each transition.
			lo, _ := tr.walls()
			startWall := civil(lo.Year(), lo.Month(), lo.Day()-1, 0, 0)
			endWall := startWall.AddDate(0, 0, 3)
			for _, spec := range specs {
				c := mustCron(t, spec)
				var want []time.Time
				for s, ok := c.nextSlot(startWall); ok && s.Before(endWall); s, ok = c.nextSlot(s.Add(time.Minute)) {
					if at := bruteResolve(l, s); len(want) == 0 || !want[len(want)-1].Equal(at) {
						want = append(want, at)
					}
				}
				// Compare the firings of the middle day, away from the edges of the range.
				rangeFrom, rangeTo := resolve(l, startWall.AddDate(0, 0, 1)).at, resolve(l, startWall.AddDate(0, 0, 2)).at
				want = slices.DeleteFunc(want, func(at time.Time) bool { return at.Before(rangeFrom) || !at.Before(rangeTo) })
				got := slots(t, c, l, rangeFrom, rangeTo)
				if diff := cmp.Diff(want, got, cmpopts.EquateEmpty()); diff != "" {
					t.Errorf("%s %q around %s mismatch (-want +got):\n%s", name, spec, tr.at, diff)
				}
				for i, at := range got {
					if i > 0 {
						if diff := cmp.Diff(got[i-1], c.Prev(l, at.Add(-time.Nanosecond))); diff != "" {
							t.Errorf("%s %q: Prev before %s mismatch (-want +got):\n%s", name, spec, at, diff)
						}
					}
				}
			}
		}
	}
}
