package timing

import (
	"context"
	"errors"
	"fmt"
	"testing"
	"time"

	"github.com/google/go-cmp/cmp"
)

// overlapZones adds to dstZones zones that set their clocks back over midnight (Asia/Beirut,
// America/Havana, historically America/Santiago) and one with a fixed offset.
var overlapZones = append(append([]string(nil), dstZones...), "Asia/Beirut", "America/Havana", "America/Santiago", "Asia/Kolkata")

// overlapCrons are the Cron schedules the overlap fuzz target draws from: rare and frequent
// firings, firings on the hours that DST changes skip or repeat, and one on the 29th.
var overlapCrons = []string{
	"0 9 * * 1-5", "30 2 * * *", "0 0 * * *", "*/30 * * * *", "0 */6 * * *", "15 1 * * 0", "0 0 29 * *", "45 23 * * 6", "0 1-3 * * *",
}

// fuzzSpec builds a window of kind k from a few numbers: enough to reach every type, both
// kinds of Weekly span, windows across midnight, and boundaries on the same minutes as the
// other window's, so that windows touch as often as they overlap.
func fuzzSpec(k uint8, x, y uint16, zone string) Spec {
	clock := func(m int) string { m %= 24 * 60; return fmt.Sprintf("%02d:%02d", m/60, m%60) }
	step := func(v uint16) int { return int(v%96) * 15 } // quarter hours
	switch k % 4 {
	case 0:
		var days []string
		for d := range 7 {
			if x>>(8+d)&1 == 1 {
				days = append(days, time.Weekday(d).String())
			}
		}
		if x>>15 == 1 {
			days = nil
		}
		return Spec{Type: TypeDaily, StartTime: clock(step(x)), EndTime: clock(step(y)), DaysOfWeek: days, TimeZone: zone}
	case 1:
		return Spec{
			Type: TypeWeekly, StartDayOfWeek: time.Weekday(x >> 8 % 7).String(), StartTime: clock(step(x)),
			EndDayOfWeek: time.Weekday(y >> 8 % 7).String(), EndTime: clock(step(y)), TimeZone: zone,
		}
	case 2:
		start := time.Date(2026, time.March, 1, 0, 0, 0, 0, time.UTC).Add(time.Duration(x%4096) * 6 * time.Hour)
		end := start.Add(time.Duration(y%(16*24)+1) * 15 * time.Minute)
		return Spec{Type: TypeOneShot, StartTime: start.Format("2006-01-02T15:04"), EndTime: end.Format("2006-01-02T15:04"), TimeZone: zone}
	default:
		d := time.Duration(y%(4*24)+1) * 15 * time.Minute
		return Spec{Type: TypeCron, Schedule: overlapCrons[int(x)%len(overlapCrons)], Duration: d.String(), TimeZone: zone}
	}
}

// FuzzFirstOverlap checks that FirstOverlap, which reads memoized interval lists and
// remembers what it found per pair of windows, gives exactly what walking both windows'
// intervals gives (firstOverlapLazy, the definition), for every type in zones with DST changes
// at all hours, from any minute and for any horizon up to OverlapHorizon, and again from a
// later instant (which the memo of the pair answers); and that a window it refuses to compare
// does open more than MaxWindows windows within OverlapHorizon.
func FuzzFirstOverlap(f *testing.F) {
	for zi := range overlapZones {
		for ka := range uint8(4) {
			for kb := range uint8(4) {
				f.Add(ka, kb, uint16(zi*977+int(ka)*131), uint16(zi*31+int(kb)*7+5), uint16(zi*613+int(kb)*57), uint16(zi*19+3), uint8(zi), uint8(zi+int(ka)), uint32(zi*104729+int(kb)*7919), uint16(366), uint32(zi*7+int(ka)))
			}
		}
	}
	// Touching windows: 09:00-17:00 and 17:00-20:00, from the instant they touch.
	f.Add(uint8(0), uint8(0), uint16(36|1<<15), uint16(68), uint16(68|1<<15), uint16(80), uint8(1), uint8(1), uint32(0), uint16(366), uint32(1440*3+7))
	f.Fuzz(func(t *testing.T, ka, kb uint8, a1, a2, b1, b2 uint16, za, zb uint8, fromMinutes uint32, horizonDays uint16, laterMinutes uint32) {
		a, errs := fuzzSpec(ka, a1, a2, overlapZones[int(za)%len(overlapZones)]).Compile()
		if len(errs) > 0 {
			return
		}
		b, errs := fuzzSpec(kb, b1, b2, overlapZones[int(zb)%len(overlapZones)]).Compile()
		if len(errs) > 0 {
			return
		}
		from := time.Date(2026, time.January, 1, 0, 0, 0, 0, time.UTC).Add(time.Duration(fromMinutes%(3*366*24*60)) * time.Minute)
		horizon := time.Duration(horizonDays%367) * 24 * time.Hour
		if horizonDays%367 == 366 {
			horizon = OverlapHorizon
		}
		later := from.Add(time.Duration(laterMinutes%(40*24*60)) * time.Minute)
		for _, c := range []struct {
			from    time.Time
			horizon time.Duration
		}{{from, horizon}, {from, OverlapHorizon}, {later, OverlapHorizon}} {
			gotIv, gotOK, err := FirstOverlap(unlimited(), a, b, c.from, c.horizon)
			if tooMany := (*TooManyWindowsError)(nil); errors.As(err, &tooMany) {
				if n := lazyCount(tooMany.Window, c.from, MaxWindows+1); n <= MaxWindows {
					t.Fatalf("FirstOverlap(%+v, %+v, %s): %v, but %+v opens %d windows", a.Canonical(), b.Canonical(), c.from, err, tooMany.Window.Canonical(), n)
				}
				continue
			}
			if err != nil {
				t.Fatal(err)
			}
			for _, w := range []*Window{a, b} {
				if n, _ := w.Comparable(c.from); n != lazyCount(w, c.from, MaxWindows+1) {
					t.Fatalf("Comparable(%+v, %s) = %d, the walk counts %d", w.Canonical(), c.from, n, lazyCount(w, c.from, MaxWindows+1))
				}
			}
			wantIv, wantOK := firstOverlapLazy(a, b, c.from, c.horizon)
			if diff := cmp.Diff(struct {
				Interval
				OK bool
			}{wantIv, wantOK}, struct {
				Interval
				OK bool
			}{gotIv, gotOK}); diff != "" {
				t.Fatalf("FirstOverlap(%+v, %+v, %s, %s) differs from the walk (-want +got):\n%s", a.Canonical(), b.Canonical(), c.from, c.horizon, diff)
			}
		}
	})
}

// lazyCount counts, by walking, the intervals of w that start in [from,
// from+OverlapHorizon), up to limit.
func lazyCount(w *Window, from time.Time, limit int) int {
	n := 0
	for iv := range w.intervals(from) {
		if n == limit || !iv.Start.Before(from.Add(OverlapHorizon)) {
			break
		}
		if !iv.Start.Before(from) {
			n++
		}
	}
	return n
}

// TestFirstOverlapTooManyWindows: a Cron window that opens more than MaxWindows windows within
// OverlapHorizon (every other minute, for a year) is not compared with anything: FirstOverlap
// names it, within one comparison of the budget, whatever the other window; the memo keeps no
// list for it. One that opens exactly MaxWindows times, every hour, is compared.
func TestFirstOverlapTooManyWindows(t *testing.T) {
	every := compile(t, Spec{Type: TypeCron, Schedule: "*/2 * * * *", Duration: "1m", TimeZone: "Europe/Berlin"})
	hourly := compile(t, Spec{Type: TypeCron, Schedule: "0 * * * *", Duration: "1m", TimeZone: "UTC"})
	sunday := compile(t, Spec{Type: TypeWeekly, StartDayOfWeek: "Sunday", StartTime: "10:00", EndDayOfWeek: "Sunday", EndTime: "10:01", TimeZone: "Europe/Berlin"})
	from := instant(t, "2027-03-01T00:00:00Z")
	for _, b := range []*Window{sunday, every, hourly} {
		_, _, err := FirstOverlap(unlimited(), b, every, from, OverlapHorizon)
		var tooMany *TooManyWindowsError
		if !errors.As(err, &tooMany) || tooMany.Window != every {
			t.Errorf("FirstOverlap(%s, */2) = %v, want a TooManyWindowsError that names the */2 window", b.Canonical().Type, err)
		}
	}
	if n, ok := every.Comparable(from); ok || n != MaxWindows+1 {
		t.Errorf("Comparable(*/2) = %d, %v; want %d, false", n, ok, MaxWindows+1)
	}
	for _, at := range []time.Time{from, from.Add(30 * time.Second), from.Add(90 * time.Minute)} {
		if n, ok := hourly.Comparable(at); !ok || n != MaxWindows {
			t.Errorf("Comparable(hourly, %s) = %d, %v; want %d, true", at, n, ok, MaxWindows)
		}
	}
	if _, _, err := FirstOverlap(unlimited(), hourly, sunday, from, OverlapHorizon); err != nil {
		t.Errorf("FirstOverlap(hourly, Sunday) = %v, want a comparison", err)
	}
	list := lookupSpans(every, from.Truncate(24*time.Hour))
	if !list.tooMany || list.nanos != nil {
		t.Errorf("memo for %q: tooMany %v with %d intervals, want tooMany and none kept", every.Canonical().Schedule, list.tooMany, list.len())
	}
}

// TestFirstOverlapBudget: each comparison spends one step; a spent budget or a done context
// stops the next comparison with an error that says which.
func TestFirstOverlapBudget(t *testing.T) {
	a := compile(t, Spec{Type: TypeDaily, StartTime: "09:00", EndTime: "10:00"})
	b := compile(t, Spec{Type: TypeDaily, StartTime: "10:00", EndTime: "11:00"})
	from := instant(t, "2027-03-01T00:00:00Z")
	budget := NewBudget(context.Background(), 2)
	for i, want := range []error{nil, nil, ErrBudgetSpent, ErrBudgetSpent} {
		if _, _, err := FirstOverlap(budget, a, b, from, OverlapHorizon); !errors.Is(err, want) {
			t.Errorf("comparison %d: %v, want %v", i+1, err, want)
		}
	}
	ctx, cancel := context.WithCancel(context.Background())
	cancel()
	if _, _, err := FirstOverlap(NewBudget(ctx, 100), a, b, from, OverlapHorizon); !errors.Is(err, context.Canceled) {
		t.Errorf("with a done context: %v, want context.Canceled", err)
	}
}

// TestSpanMemoBounded: the memo never holds more than two generations of spanBudget intervals.
func TestSpanMemoBounded(t *testing.T) {
	from := instant(t, "2027-01-01T00:00:00Z")
	for i := range 2 * spanBudget / 360 {
		w := compile(t, Spec{Type: TypeDaily, StartTime: fmt.Sprintf("%02d:%02d", i%1439/60, i%1439%60), EndTime: "23:59", TimeZone: overlapZones[i%len(overlapZones)]})
		firstOverlap(t, w, w, from.Add(time.Duration(i/1440)*24*time.Hour), OverlapHorizon)
	}
	spanMemo.Lock()
	defer spanMemo.Unlock()
	total := 0
	for _, m := range []map[spanKey]*spanList{spanMemo.current, spanMemo.previous} {
		for _, l := range m {
			total += l.len() + 1
		}
	}
	if total > 2*spanBudget {
		t.Errorf("the memo holds %d intervals, more than two generations of %d", total, spanBudget)
	}
}

// TestCompileMemo: specs that differ only in how their fields split (a day list with one item
// "Monday,Tuesday" against two items) are not confused by the memo of compiled windows, and
// a spec compiled twice gives the same window.
func TestCompileMemo(t *testing.T) {
	good := Spec{Type: TypeDaily, StartTime: "09:00", EndTime: "17:00", DaysOfWeek: []string{"Monday", "Tuesday"}}
	compile(t, good)
	bad := good
	bad.DaysOfWeek = []string{"Monday,Tuesday"}
	if w, errs := bad.Compile(); w != nil || len(errs) == 0 {
		t.Errorf("Compile(%+v) = %v, %v: want an error for the day", bad, w, errs)
	}
	if a, b := compile(t, good), compile(t, good); a != b {
		t.Errorf("Compile of the same spec twice gave two windows")
	}
}
