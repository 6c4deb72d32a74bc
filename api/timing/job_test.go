package timing

import (
	"math"
	"strings"
	"testing"
	"time"

	"github.com/google/go-cmp/cmp"
)

// TestDeadlineRule is the one starting-deadline rule that admission and the reconciler both
// apply: a run may start while it is at most startingDeadlineSeconds late, counted in whole
// seconds.
func TestDeadlineRule(t *testing.T) {
	due := time.Date(2027, 1, 15, 10, 0, 0, 0, time.UTC)
	tests := []struct {
		late     time.Duration
		deadline int64
		want     bool
		lateness time.Duration
	}{
		{-time.Hour, 0, true, 0},
		{0, 0, true, 0},
		{999 * time.Millisecond, 0, true, 0},
		{time.Second, 0, false, time.Second},
		{600 * time.Second, 600, true, 600 * time.Second},
		// Finding 1 of issue 11: admission used to reject here while the reconciler ran it.
		{600*time.Second + 500*time.Millisecond, 600, true, 600 * time.Second},
		{601 * time.Second, 600, false, 601 * time.Second},
		{72 * time.Hour, 600, false, 72 * time.Hour},
		// Deadlines longer than a time.Duration holds saturate instead of wrapping around to a
		// negative deadline that every run has passed.
		{time.Second, 9999999999, true, time.Second},
		{100 * 365 * 24 * time.Hour, 9999999999, true, 100 * 365 * 24 * time.Hour},
		{time.Minute, math.MaxInt64, true, time.Minute},
		{time.Minute, maxDeadlineSeconds, true, time.Minute},
		{time.Minute, maxDeadlineSeconds + 1, true, time.Minute},
		// A negative deadline (the schema's minimum is 0) is 0.
		{0, -1, true, 0},
		{time.Second, math.MinInt64, false, time.Second},
	}
	for _, tt := range tests {
		now := due.Add(tt.late)
		if got := WithinDeadline(due, now, tt.deadline); got != tt.want {
			t.Errorf("late %v, deadline %ds: WithinDeadline = %v, want %v", tt.late, tt.deadline, got, tt.want)
		}
		if got := Lateness(due, now); got != tt.lateness {
			t.Errorf("late %v: Lateness = %v, want %v", tt.late, got, tt.lateness)
		}
	}
}

// TestDeadlineSaturates: Deadline never wraps around, and LastStart never falls before the
// run's instant.
func TestDeadlineSaturates(t *testing.T) {
	due := time.Date(2027, 1, 15, 10, 0, 0, 0, time.UTC)
	for _, tt := range []struct {
		seconds int64
		want    time.Duration
	}{
		{-5, 0}, {0, 0}, {600, 10 * time.Minute},
		{maxDeadlineSeconds, time.Duration(maxDeadlineSeconds) * time.Second},
		{maxDeadlineSeconds + 1, math.MaxInt64}, {9999999999, math.MaxInt64}, {math.MaxInt64, math.MaxInt64},
	} {
		if got := Deadline(tt.seconds); got != tt.want {
			t.Errorf("Deadline(%d) = %v, want %v", tt.seconds, got, tt.want)
		}
		if last := LastStart(due, tt.seconds); last.Before(due) {
			t.Errorf("LastStart(%s, %d) = %s, before the run's instant", due, tt.seconds, last)
		}
	}
}

func TestJobSpecCompile(t *testing.T) {
	tests := []struct {
		name string
		spec JobSpec
		want string // the schedule's String, its zone and Due (RFC 3339), or the errors
	}{
		{"cron in a zone", JobSpec{Schedule: " 30  2 * * * ", TimeZone: "europe/berlin"}, `cron "30 2 * * *" Europe/Berlin`},
		{"at, zone omitted", JobSpec{At: "2027-06-01T10:00"}, "at 2027-06-01T10:00 UTC 2027-06-01T10:00:00Z"},
		{"at in a gap", JobSpec{At: "2027-03-14T02:30", TimeZone: "America/New_York"}, "at 2027-03-14T02:30 America/New_York 2027-03-14T07:00:00Z"},
		{"at with an offset", JobSpec{At: "2027-06-01T10:00:00+09:00", TimeZone: "UTC"}, "at 2027-06-01T01:00 UTC 2027-06-01T01:00:00Z"},
		// The "AT" controller's form: a timestamp in schedule is a one-shot, for every consumer.
		{"legacy timestamp in schedule", JobSpec{Schedule: "2027-06-01T10:00:00Z"}, "at 2027-06-01T10:00 UTC 2027-06-01T10:00:00Z from schedule"},
		// Issue 12: at keeps whole seconds, and so does a timestamp in schedule (the "AT"
		// controller ran its Jobs at RFC 3339 instants to the second).
		{"at to the second", JobSpec{At: "2027-06-01T10:00:30", TimeZone: "Asia/Tokyo"}, "at 2027-06-01T10:00:30 Asia/Tokyo 2027-06-01T01:00:30Z"},
		{"at with seconds 00", JobSpec{At: "2027-06-01T10:00:00"}, "at 2027-06-01T10:00 UTC 2027-06-01T10:00:00Z"},
		{"at with a fraction of a second", JobSpec{At: "2027-06-01T10:00:30.5"}, `at: "2027-06-01T10:00:30.5" has a fraction of a second: times are whole seconds, e.g. "2027-06-01T10:00:30"`},
		{"legacy timestamp with seconds", JobSpec{Schedule: "2027-06-01T10:00:30Z", TimeZone: "Asia/Tokyo"}, "at 2027-06-01T19:00:30 Asia/Tokyo 2027-06-01T10:00:30Z from schedule"},
		{"legacy local timestamp", JobSpec{Schedule: "2027-06-01T10:00", TimeZone: "Asia/Tokyo"}, "at 2027-06-01T10:00 Asia/Tokyo 2027-06-01T01:00:00Z from schedule"},
		{"both", JobSpec{At: "2027-06-01T10:00", Schedule: "* * * * *"}, "schedule: at and schedule are both set: set exactly one, at to run the Job once or schedule to run it on a cron schedule"},
		{"neither (schedule: \"\")", JobSpec{}, `schedule: neither at nor schedule is set, so the Job would never run: set schedule to a cron schedule, e.g. "30 2 * * *", or at to a wall time in the time zone to run it once, e.g. "2027-09-01T10:00"`},
		{"bad zone, bad at", JobSpec{At: "2027-02-30T10:00", TimeZone: "Mars/Olympus"}, `timeZone: "Mars/Olympus" is not a known IANA time zone: expected a name such as "Europe/Berlin", "America/New_York" or "UTC", or a whole-hour offset such as "+09:00"` +
			"\n" + `at: "2027-02-30T10:00" is not a valid date: February 2027 has 28 days`},
		{"blank zone", JobSpec{Schedule: "@daily", TimeZone: " "}, `timeZone: a time zone is required: expected an IANA name such as "Europe/Berlin", or "UTC"`},
		{"a timestamp in schedule that does not parse", JobSpec{Schedule: "2027-02-30T10:00:00Z"}, `schedule: "2027-02-30T10:00:00Z" is not a valid date: February 2027 has 28 days; ` + legacyHint},
		{"bad cron", JobSpec{Schedule: "@every 5m"}, `schedule: "@every 5m" is not supported: @every counts from when the controller started and ignores the time zone; use a 5-field schedule such as "*/5 * * * *"`},
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
				got = s.String() + " " + s.Zone.Name
				if s.OneShot() {
					got += " " + s.Due.Format(time.RFC3339)
				}
				if s.FromSchedule {
					got += " from schedule"
				}
			}
			if diff := cmp.Diff(tt.want, got); diff != "" {
				t.Errorf("Compile(%+v) (-want +got):\n%s", tt.spec, diff)
			}
		})
	}
}

func TestJobScheduleRuns(t *testing.T) {
	from, to := instant(t, "2027-03-27T00:00:00Z"), instant(t, "2027-03-30T00:00:00Z")
	cron, errs := JobSpec{Schedule: "30 2 * * *", TimeZone: "Europe/Berlin"}.Compile()
	if len(errs) > 0 {
		t.Fatal(errs)
	}
	want := []time.Time{instant(t, "2027-03-27T01:30:00Z"), instant(t, "2027-03-28T01:00:00Z"), instant(t, "2027-03-29T00:30:00Z")}
	if diff := cmp.Diff(want, runs(t, cron, from, to)); diff != "" {
		t.Errorf("cron Runs (-want +got):\n%s", diff)
	}
	at, errs := JobSpec{Schedule: "2027-03-28T12:00:30Z"}.Compile()
	if len(errs) > 0 {
		t.Fatal(errs)
	}
	if diff := cmp.Diff([]time.Time{instant(t, "2027-03-28T12:00:30Z")}, runs(t, at, from, to)); diff != "" {
		t.Errorf("one-shot Runs (-want +got):\n%s", diff)
	}
	if got := runs(t, at, to, to.Add(time.Hour)); got != nil {
		t.Errorf("one-shot Runs outside the range = %v", got)
	}
}

func TestHourAfter(t *testing.T) {
	for _, tt := range []struct{ now, zone, want string }{
		{"2027-01-15T12:30:00Z", "UTC", "2027-01-15T13:00"},
		{"2027-01-15T12:30:00Z", "Asia/Kolkata", "2027-01-15T19:00"}, // 18:00 IST + 1h, on the local hour
		{"2027-12-31T23:10:00Z", "UTC", "2028-01-01T00:00"},
	} {
		if got := HourAfter(instant(t, tt.now), loc(t, tt.zone)).String(); got != tt.want {
			t.Errorf("HourAfter(%s, %s) = %s, want %s", tt.now, tt.zone, got, tt.want)
		}
	}
}
