package timing

import (
	"testing"
	"time"
)

// BenchmarkFirstOverlapSiblings compares a new Weekly window with 100 one-hour Weekly
// siblings that it does not overlap (what admission does under overlapPolicy Forbid, the
// benchmark's case), by FirstOverlap and by the walk it replaces. Each op compiles the
// siblings, as admission does for every request.
func BenchmarkFirstOverlapSiblings(b *testing.B) {
	monday := time.Date(2027, time.January, 18, 0, 0, 0, 0, time.UTC)
	specs := make([]Spec, 100)
	for i := range specs {
		start, end := monday.Add(time.Duration(i)*time.Hour), monday.Add(time.Duration(i+1)*time.Hour)
		specs[i] = Spec{Type: TypeWeekly, StartDayOfWeek: start.Weekday().String(), StartTime: start.Format("15:04"),
			EndDayOfWeek: end.Weekday().String(), EndTime: end.Format("15:04"), TimeZone: "Europe/Berlin"}
	}
	sunday := Spec{Type: TypeWeekly, StartDayOfWeek: "Sunday", StartTime: "10:00", EndDayOfWeek: "Sunday", EndTime: "11:00", TimeZone: "Europe/Berlin"}
	now := time.Date(2027, time.January, 10, 12, 0, 0, 0, time.UTC)
	for _, bb := range []struct {
		name  string
		first func(a, b *Window, from time.Time, horizon time.Duration) (Interval, bool)
	}{{"Memo", memoized}, {"Walk", firstOverlapLazy}} {
		b.Run(bb.name, func(b *testing.B) {
			for b.Loop() {
				w := compile(b, sunday)
				for _, s := range specs {
					if _, ok := bb.first(w, compile(b, s), now, OverlapHorizon); ok {
						b.Fatal("overlap")
					}
				}
				now = now.Add(time.Millisecond)
			}
		})
	}
	// Pairwise: the reconciler's safety net (api/scaling under overlapPolicy Forbid) compares
	// each of the 100 Schedules with those kept before it.
	for _, bb := range []struct {
		name  string
		first func(a, b *Window, from time.Time, horizon time.Duration) (Interval, bool)
	}{{"PairwiseMemo", memoized}, {"PairwiseWalk", firstOverlapLazy}} {
		b.Run(bb.name, func(b *testing.B) {
			for b.Loop() {
				windows := make([]*Window, len(specs))
				for i, s := range specs {
					windows[i] = compile(b, s)
				}
				for i := range windows {
					for j := range i {
						if _, ok := bb.first(windows[j], windows[i], now, OverlapHorizon); ok {
							b.Fatal("overlap")
						}
					}
				}
				now = now.Add(time.Millisecond)
			}
		})
	}
}

// memoized is FirstOverlap as the benchmarks' walks are called.
func memoized(a, b *Window, from time.Time, horizon time.Duration) (Interval, bool) {
	iv, ok, _ := FirstOverlap(unlimited(), a, b, from, horizon)
	return iv, ok
}
