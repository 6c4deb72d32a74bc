package timing

import (
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

// FuzzFirstOverlap checks that FirstOverlap, which reads memoized interval lists, gives
// exactly what walking both windows' intervals gives (firstOverlapLazy, the definition), for
// every type in zones with DST changes at all hours, from any minute and for any horizon up
// to OverlapHorizon.
func FuzzFirstOverlap(f *testing.F) {
	for zi := range overlapZones {
		for ka := range uint8(4) {
			for kb := range uint8(4) {
				f.Add(ka, kb, uint16(zi*977+int(ka)*131), uint16(zi*31+int(kb)*7+5), uint16(zi*613+int(kb)*57), uint16(zi*19+3), uint8(zi), uint8(zi+int(ka)), uint32(zi*104729+int(kb)*7919), uint16(366))
			}
		}
	}
	// Touching windows: 09:00-17:00 and 17:00-20:00, from the instant they touch.
	f.Add(uint8(0), uint8(0), uint16(36|1<<15), uint16(68), uint16(68|1<<15), uint16(80), uint8(1), uint8(1), uint32(0), uint16(366))
	f.Fuzz(func(t *testing.T, ka, kb uint8, a1, a2, b1, b2 uint16, za, zb uint8, fromMinutes uint32, horizonDays uint16) {
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
		wantIv, wantOK := firstOverlapLazy(a, b, from, horizon)
		gotIv, gotOK := FirstOverlap(a, b, from, horizon)
		if diff := cmp.Diff(struct {
			Interval
			OK bool
		}{wantIv, wantOK}, struct {
			Interval
			OK bool
		}{gotIv, gotOK}); diff != "" {
			t.Fatalf("FirstOverlap(%+v, %+v, %s, %s) differs from the walk (-want +got):\n%s", a.Canonical(), b.Canonical(), from, horizon, diff)
		}
	})
}

// TestFirstOverlapTooManyIntervals: a Cron window with more intervals than the memo keeps
// (every other minute, for a year) is walked lazily; the memo keeps no list for it, and the
// result is the walk's.
func TestFirstOverlapTooManyIntervals(t *testing.T) {
	every := compile(t, Spec{Type: TypeCron, Schedule: "*/2 * * * *", Duration: "1m", TimeZone: "Europe/Berlin"})
	sunday := compile(t, Spec{Type: TypeWeekly, StartDayOfWeek: "Sunday", StartTime: "10:00", EndDayOfWeek: "Sunday", EndTime: "10:01", TimeZone: "Europe/Berlin"})
	oneShot := compile(t, Spec{Type: TypeOneShot, StartTime: "2027-03-10T10:01", EndTime: "2027-03-10T10:02", TimeZone: "Europe/Berlin"})
	from := instant(t, "2027-03-01T00:00:00Z")
	for _, tt := range []struct {
		name string
		b    *Window
		want *Interval
	}{
		{name: "overlap within the first minute of each Sunday", b: sunday, want: &Interval{Start: instant(t, "2027-03-07T09:00:00Z"), End: instant(t, "2027-03-07T09:01:00Z")}},
		{name: "a minute between two firings", b: oneShot},
	} {
		t.Run(tt.name, func(t *testing.T) {
			iv, ok := FirstOverlap(every, tt.b, from, OverlapHorizon)
			var got *Interval
			if ok {
				got = &iv
			}
			if diff := cmp.Diff(tt.want, got); diff != "" {
				t.Errorf("FirstOverlap (-want +got):\n%s", diff)
			}
		})
	}
	list := lookupSpans(every, from.Truncate(24*time.Hour))
	if !list.tooMany || list.intervals != nil {
		t.Errorf("memo for %q: tooMany %v with %d intervals, want tooMany and none kept", every.Canonical().Schedule, list.tooMany, len(list.intervals))
	}
}

// TestSpanMemoBounded: the memo never holds more than two generations of spanBudget intervals.
func TestSpanMemoBounded(t *testing.T) {
	from := instant(t, "2027-01-01T00:00:00Z")
	for i := range 2 * spanBudget / 360 {
		w := compile(t, Spec{Type: TypeDaily, StartTime: fmt.Sprintf("%02d:%02d", i/60%24, i%60), EndTime: "23:59", TimeZone: overlapZones[i%len(overlapZones)]})
		FirstOverlap(w, w, from.Add(time.Duration(i/1440)*24*time.Hour), OverlapHorizon)
	}
	spanMemo.Lock()
	defer spanMemo.Unlock()
	total := 0
	for _, m := range []map[spanKey]*spanList{spanMemo.current, spanMemo.previous} {
		for _, l := range m {
			total += len(l.intervals) + 1
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
