package timing

import (
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
