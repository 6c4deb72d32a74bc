package timing

import (
	"context"
	"testing"
	"time"
)

// loc loads a zone from the engine's tz database or fails the test.
func loc(t testing.TB, name string) *time.Location {
	t.Helper()
	l, err := loadZone(name)
	if err != nil {
		t.Fatal(err)
	}
	return l
}

// instant parses an RFC 3339 instant and returns it in UTC; tests use it for fixed instants.
func instant(t testing.TB, s string) time.Time {
	t.Helper()
	at, err := time.Parse(time.RFC3339, s)
	if err != nil {
		t.Fatal(err)
	}
	return at.UTC()
}

// compile compiles a spec that must be valid.
func compile(t testing.TB, s Spec) *Window {
	t.Helper()
	w, errs := s.Compile()
	if len(errs) > 0 {
		t.Fatalf("Compile(%+v) = %v", s, errs)
	}
	return w
}

// bruteResolve applies the DST rule by definition: the first instant (on a one-minute grid)
// at which the wall clock in loc reads wall or later. It is slow and obviously right for zones
// whose offsets and transitions are whole minutes (every zone since about 1970).
func bruteResolve(loc *time.Location, wall time.Time) time.Time {
	for at := wall.Add(-16 * time.Hour); ; at = at.Add(time.Minute) {
		if !wallOf(at, loc).Before(wall) {
			return at
		}
	}
}

// dstZones are the zones most tests run in: both hemispheres, 30- and 45-minute shifts,
// midnight transitions, a 24-hour jump and a zone without DST.
var dstZones = []string{
	"America/New_York", "Europe/Berlin", "Australia/Sydney", "America/Sao_Paulo",
	"Asia/Tokyo", "Pacific/Chatham", "Australia/Lord_Howe", "Pacific/Apia", "UTC",
}

// unlimited is a budget that no test spends.
func unlimited() *Budget { return NewBudget(context.Background(), 1<<40) }

// firstOverlap is FirstOverlap with an unlimited budget, for windows that may be compared.
func firstOverlap(t testing.TB, a, b *Window, from time.Time, horizon time.Duration) (Interval, bool) {
	t.Helper()
	iv, ok, err := FirstOverlap(unlimited(), a, b, from, horizon)
	if err != nil {
		t.Fatalf("FirstOverlap(%+v, %+v, %s): %v", a.Canonical(), b.Canonical(), from, err)
	}
	return iv, ok
}

// timeline is Timeline with an unlimited budget.
func timeline(t testing.TB, baseline Bounds, schedules []Named, from, to time.Time) []Segment {
	t.Helper()
	segs, err := Timeline(unlimited(), baseline, schedules, from, to)
	if err != nil {
		t.Fatal(err)
	}
	return segs
}

// intervals is Window.Intervals with an unlimited budget.
func intervals(t testing.TB, w *Window, from, to time.Time) []Interval {
	t.Helper()
	out, err := w.Intervals(unlimited(), from, to)
	if err != nil {
		t.Fatal(err)
	}
	return out
}

// slots is Cron.Slots with an unlimited budget.
func slots(t testing.TB, c Cron, loc *time.Location, from, to time.Time) []time.Time {
	t.Helper()
	out, err := c.Slots(unlimited(), loc, from, to)
	if err != nil {
		t.Fatal(err)
	}
	return out
}

// runs is JobSchedule.Runs with an unlimited budget.
func runs(t testing.TB, s *JobSchedule, from, to time.Time) []time.Time {
	t.Helper()
	out, err := s.Runs(unlimited(), from, to)
	if err != nil {
		t.Fatal(err)
	}
	return out
}
