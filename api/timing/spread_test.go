package timing

import (
	"fmt"
	"strings"
	"testing"
	"time"

	"github.com/google/go-cmp/cmp"
)

func TestParseSpread(t *testing.T) {
	tests := []struct {
		in   string
		want time.Duration
		err  string // a part of the error; "" for none
	}{
		{"", 0, ""},
		{"1s", time.Second, ""},
		{"5m", 5 * time.Minute, ""},
		{"90s", 90 * time.Second, ""},
		{"1m30s", 90 * time.Second, ""},
		{"1.5m", 90 * time.Second, ""},
		{"1h", time.Hour, ""},
		{"3600s", time.Hour, ""},
		{"0s", 0, `"0s" is shorter than 1s, the shortest spread`},
		{"0", 0, `"0" is shorter than 1s`},
		{"500ms", 0, `"500ms" is shorter than 1s`},
		{"999999999ns", 0, "is shorter than 1s"},
		{"-5m", 0, `"-5m" is negative`},
		{"-0s", 0, "is shorter than 1s"},
		{"1.5s", 0, `"1.5s" is not a whole number of seconds: the offset is whole seconds; write e.g. "1s"`},
		{"1m0.25s", 0, `write e.g. "1m0s"`},
		{"1h1s", 0, `"1h1s" is longer than 1h, the longest spread`},
		{"2h", 0, "is longer than 1h"},
		{"8784h", 0, "is longer than 1h"},
		// Past what a time.Duration holds, or not durations at all.
		{"9999999999999h", 0, `"9999999999999h" is longer than 1h, the longest spread`},
		{"1e9h", 0, "is not a duration"},
		{"5", 0, "is not a duration"},
		{"m", 0, "is not a duration"},
		{"5 m", 0, "is not a duration"},
		{" 5m", 0, "is not a duration"},
		{"5m ", 0, "is not a duration"},
		{"\uff15m", 0, "is not a duration"},  // a fullwidth digit five
		{"5m\u200b", 0, "is not a duration"}, // a zero-width space
		{"5\u0578", 0, "is not a duration"},  // an Armenian letter that looks like an m
		{"\u0665m", 0, "is not a duration"},  // an Arabic-Indic digit five
		{"5min", 0, "is not a duration"},
		{"P5M", 0, "is not a duration"},
		{strings.Repeat("1", 40) + "s", 0, "is longer than 1h"},
	}
	for _, tt := range tests {
		got, err := ParseSpread(tt.in)
		switch {
		case tt.err == "" && err != nil:
			t.Errorf("ParseSpread(%q): %v", tt.in, err)
		case tt.err != "" && (err == nil || !strings.Contains(err.Error(), tt.err)):
			t.Errorf("ParseSpread(%q) = %v, %v; want an error containing %q", tt.in, got, err, tt.err)
		case got != tt.want:
			t.Errorf("ParseSpread(%q) = %v, want %v", tt.in, got, tt.want)
		}
	}
}

// TestSpreadOffset: the offset is a stable function of namespace, name and spread (the
// reconciler, admission and `almanac preview` compute it apart, and a change of the hash would
// move every spread ScheduledJob's runs), whole seconds in [0, spread).
func TestSpreadOffset(t *testing.T) {
	for _, tt := range []struct {
		namespace, name string
		spread, want    time.Duration
	}{
		{"ops", "nightly", 5 * time.Minute, 3*time.Minute + 17*time.Second},
		{"ops", "nightly", time.Hour, 18*time.Minute + 17*time.Second},
		{"team-a", "nightly", 5 * time.Minute, time.Minute + 28*time.Second},
		{"team-b", "nightly", 5 * time.Minute, 4*time.Minute + 45*time.Second},
		{"default", "report", 5 * time.Minute, time.Second},
		{"ops", "nightly", time.Second, 0},
		// No spread, or less than a second of it: no shift.
		{"ops", "nightly", 0, 0},
		{"ops", "nightly", 999 * time.Millisecond, 0},
		{"ops", "nightly", -time.Hour, 0},
	} {
		if got := SpreadOffset(tt.namespace, tt.name, tt.spread); got != tt.want {
			t.Errorf("SpreadOffset(%q, %q, %v) = %v, want %v", tt.namespace, tt.name, tt.spread, got, tt.want)
		}
	}

	// In range, whole seconds, and spread over the range: 2,000 names with a spread of 5m use
	// most of its 300 seconds, and the same name in two namespaces lands apart.
	seen := map[time.Duration]bool{}
	for i := range 2000 {
		for _, spread := range []time.Duration{time.Second, 7 * time.Second, 5 * time.Minute, MaxSpread} {
			got := SpreadOffset("ns", fmt.Sprintf("job-%d", i), spread)
			if got < 0 || got >= spread || got%time.Second != 0 {
				t.Fatalf("SpreadOffset(ns, job-%d, %v) = %v, not whole seconds in [0, %v)", i, spread, got, spread)
			}
			if spread == 5*time.Minute {
				seen[got] = true
			}
		}
	}
	if len(seen) < 250 {
		t.Errorf("2000 names with a spread of 5m use only %d of its 300 offsets", len(seen))
	}
	if SpreadOffset("team-a", "nightly", MaxSpread) == SpreadOffset("team-b", "nightly", MaxSpread) {
		t.Error("the same name in two namespaces has the same offset")
	}
	// The separator keeps namespace and name apart: "a/b-c" is not "a-b/c".
	if SpreadOffset("a", "b-c", MaxSpread) == SpreadOffset("a-b", "c", MaxSpread) {
		t.Error(`"a"/"b-c" and "a-b"/"c" have the same offset`)
	}
}

func TestJobSpecCompileSpread(t *testing.T) {
	tests := []struct {
		name string
		spec JobSpec
		want string // String and Offset, or the errors
	}{
		{"cron", JobSpec{Schedule: "0 0 * * *", Spread: "5m", Namespace: "ops", Name: "nightly"}, `cron "0 0 * * *" spread 5m0s (+3m17s) +3m17s`},
		{"no spread", JobSpec{Schedule: "0 0 * * *", Namespace: "ops", Name: "nightly"}, `cron "0 0 * * *" +0s`},
		{"with at", JobSpec{At: "2027-06-01T10:00", Spread: "5m"}, "spread: spread shifts the slots of a cron schedule, but this ScheduledJob runs once (at): remove spread, or write the time you want into at"},
		{"with a bad at", JobSpec{At: "2027-02-30T10:00", Spread: "5m"}, `at: "2027-02-30T10:00" is not a valid date: February 2027 has 28 days` + "\n" +
			"spread: spread shifts the slots of a cron schedule, but this ScheduledJob runs once (at): remove spread, or write the time you want into at"},
		{"with a timestamp in schedule", JobSpec{Schedule: "2027-06-01T10:00:00Z", Spread: "5m"}, "spread: spread shifts the slots of a cron schedule, but this ScheduledJob runs once (at)"},
		{"too long", JobSpec{Schedule: "@daily", Spread: "2h"}, `spread: "2h" is longer than 1h, the longest spread (every run starts up to spread after its slot); write at most "1h", or move the slots themselves in schedule`},
		{"bad spread and bad schedule", JobSpec{Schedule: "@every 1h", Spread: "1e9h"}, `schedule: "@every 1h" is not supported` + "\n" + `spread: "1e9h" is not a duration`},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			s, errs := tt.spec.Compile()
			var got string
			if len(errs) > 0 {
				var lines []string
				for _, e := range errs {
					lines = append(lines, e.Error())
				}
				got = strings.Join(lines, "\n")
			} else {
				got = fmt.Sprintf("%s +%s", s.String(), s.Offset)
			}
			if !strings.HasPrefix(got, tt.want) && !containsLines(got, tt.want) {
				t.Errorf("Compile(%+v) =\n%s\nwant\n%s", tt.spec, got, tt.want)
			}
		})
	}
}

// containsLines reports whether every line of want starts a line of got.
func containsLines(got, want string) bool {
	lines := strings.Split(got, "\n")
	for _, w := range strings.Split(want, "\n") {
		found := false
		for _, l := range lines {
			if strings.HasPrefix(l, w) {
				found = true
			}
		}
		if !found {
			return false
		}
	}
	return true
}

func mustJob(t *testing.T, spec JobSpec) *JobSchedule {
	t.Helper()
	s, errs := spec.Compile()
	if len(errs) > 0 {
		t.Fatal(errs)
	}
	return s
}

// TestSpreadShiftsSlots: Next, Prev and Runs return the cron slots shifted by the offset,
// around daylight-saving changes too: the gap's slot runs at the jump instant plus the offset,
// the repeated slot once, at its first occurrence plus the offset.
func TestSpreadShiftsSlots(t *testing.T) {
	const offset = 18*time.Minute + 17*time.Second // ops/nightly, spread 1h
	tests := []struct {
		name     string
		spec     JobSpec
		from, to string
		want     []string // the cron slots, unshifted
	}{
		{"Berlin spring forward", JobSpec{Schedule: "30 2 * * *", TimeZone: "Europe/Berlin"},
			"2027-03-27T00:00:00Z", "2027-03-30T00:00:00Z",
			// 02:30 CET; 02:30 does not exist on the 28th: 03:00 CEST; 02:30 CEST.
			[]string{"2027-03-27T01:30:00Z", "2027-03-28T01:00:00Z", "2027-03-29T00:30:00Z"}},
		{"New York fall back", JobSpec{Schedule: "30 1 * * *", TimeZone: "America/New_York"},
			"2027-11-06T00:00:00Z", "2027-11-09T00:00:00Z",
			// 01:30 EDT; 01:30 twice on the 7th: the first (EDT), once; 01:30 EST.
			[]string{"2027-11-06T05:30:00Z", "2027-11-07T05:30:00Z", "2027-11-08T06:30:00Z"}},
		{"every 15 minutes through the Berlin gap", JobSpec{Schedule: "*/15 1-3 * * *", TimeZone: "Europe/Berlin"},
			"2027-03-28T00:00:00Z", "2027-03-28T02:00:00Z",
			// 01:00–01:45 CET; 02:00–02:45 all at the jump, once; 03:00 CEST is that instant too;
			// 03:45 CEST (01:45Z) shifted is past the range.
			[]string{"2027-03-28T00:00:00Z", "2027-03-28T00:15:00Z", "2027-03-28T00:30:00Z", "2027-03-28T00:45:00Z", "2027-03-28T01:00:00Z", "2027-03-28T01:15:00Z", "2027-03-28T01:30:00Z"}},
		// A spread longer than the time between slots: every slot moves by the same offset, so
		// they keep their order and their minute apart.
		{"every minute, spread longer than a minute", JobSpec{Schedule: "* * * * *"},
			"2027-01-15T10:00:00Z", "2027-01-15T10:05:00Z",
			[]string{"2027-01-15T09:42:00Z", "2027-01-15T09:43:00Z", "2027-01-15T09:44:00Z", "2027-01-15T09:45:00Z", "2027-01-15T09:46:00Z"}},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			spec := tt.spec
			spec.Spread, spec.Namespace, spec.Name = "1h", "ops", "nightly"
			s := mustJob(t, spec)
			if s.Offset != offset {
				t.Fatalf("Offset = %v, want %v", s.Offset, offset)
			}
			var want []time.Time
			for _, w := range tt.want {
				want = append(want, instant(t, w).Add(offset))
			}
			from, to := instant(t, tt.from), instant(t, tt.to)
			got := runs(t, s, from, to)
			if diff := cmp.Diff(want, got); diff != "" {
				t.Errorf("Runs (-want +got):\n%s", diff)
			}
			// The same walk with Next and Prev, which the reconciler uses.
			for i, w := range want {
				if n := s.Next(w.Add(-time.Nanosecond)); !n.Equal(w) {
					t.Errorf("Next(%s − 1ns) = %s, want %s", w, n, w)
				}
				if p := s.Prev(w); !p.Equal(w) {
					t.Errorf("Prev(%s) = %s, want it", w, p)
				}
				if i > 0 {
					if n := s.Next(want[i-1]); !n.Equal(w) {
						t.Errorf("Next(%s) = %s, want %s", want[i-1], n, w)
					}
					if p := s.Prev(w.Add(-time.Nanosecond)); !p.Equal(want[i-1]) {
						t.Errorf("Prev(%s − 1ns) = %s, want %s", w, p, want[i-1])
					}
				}
			}
			// Unshifted, the same spec runs at the cron slots.
			spec.Spread = ""
			plain := runs(t, mustJob(t, spec), from.Add(-offset), to.Add(-offset))
			for i := range plain {
				plain[i] = plain[i].Add(offset)
			}
			if diff := cmp.Diff(want, plain); diff != "" {
				t.Errorf("Runs without spread, shifted by hand (-want +got):\n%s", diff)
			}
		})
	}
}

// TestOneShotNextPrev: a one-shot's Next and Prev are its Due.
func TestOneShotNextPrev(t *testing.T) {
	s := mustJob(t, JobSpec{At: "2027-06-01T10:00:30"})
	due := instant(t, "2027-06-01T10:00:30Z")
	if got := s.Next(due.Add(-time.Second)); !got.Equal(due) {
		t.Errorf("Next before = %s", got)
	}
	if got := s.Next(due); !got.IsZero() {
		t.Errorf("Next at = %s, want none", got)
	}
	if got := s.Prev(due); !got.Equal(due) {
		t.Errorf("Prev at = %s", got)
	}
	if got := s.Prev(due.Add(-time.Second)); !got.IsZero() {
		t.Errorf("Prev before = %s, want none", got)
	}
}

// FuzzParseSpread: any input is refused or gives whole seconds in [MinSpread, MaxSpread], and
// the offset of an accepted spread is whole seconds in [0, spread).
func FuzzParseSpread(f *testing.F) {
	for _, s := range []string{"5m", "1h", "1s", "0s", "1.5s", "-5m", "1e9h", "9999999999999h", "\uff15m", ""} {
		f.Add(s, "ns/name")
	}
	f.Fuzz(func(t *testing.T, s, key string) {
		d, err := ParseSpread(s)
		if err != nil || d == 0 {
			return
		}
		if d < MinSpread || d > MaxSpread || d%time.Second != 0 {
			t.Fatalf("ParseSpread(%q) = %v", s, d)
		}
		if off := spreadOffset(key, d); off < 0 || off >= d || off%time.Second != 0 {
			t.Fatalf("spreadOffset(%q, %v) = %v", key, d, off)
		}
	})
}
