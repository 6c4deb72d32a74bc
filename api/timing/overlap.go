package timing

import (
	"fmt"
	"iter"
	"sync"
	"time"
)

// OverlapHorizon is how far ahead windows are compared for overlaps: admission's warnings and
// refusals, and overlapPolicy Forbid in the reconcilers.
const OverlapHorizon = 366 * 24 * time.Hour

// MaxWindows is the most windows (intervals) a Schedule may open within OverlapHorizon for
// almanac to compare it with others: one an hour on average. Comparing two windows costs in
// proportion to their intervals, and admission compares a Schedule with every sibling, so a
// window that opens more often (a Cron window every few minutes) would make every request of
// its autoscaler slow. Daily, Weekly and OneShot windows are far below it; a Cron window is
// under it when it opens at most once an hour or when its windows touch and merge.
const MaxWindows = 366 * 24

// TooManyWindowsError is the error of a comparison with a window that opens more than
// MaxWindows windows within OverlapHorizon.
type TooManyWindowsError struct {
	// Window is the window that opens too many.
	Window *Window
}

func (e *TooManyWindowsError) Error() string {
	return fmt.Sprintf("the window opens more than %d times in the %d days after the instant of the comparison, "+
		"more than almanac compares (one an hour on average)", MaxWindows, OverlapHorizon/(24*time.Hour))
}

// Comparable reports whether w opens at most MaxWindows windows in [from,
// from+OverlapHorizon), and how many (MaxWindows+1 when more); a window already open at from
// does not count. It reads the memo of interval lists, so asking again on the same day costs
// two binary searches.
func (w *Window) Comparable(from time.Time) (int, bool) {
	if w.Type() == TypeOneShot && !w.Masked() {
		if !w.oneShot.Start.Before(from) && w.oneShot.Start.Before(from.Add(OverlapHorizon)) {
			return 1, true
		}
		return 0, true
	}
	list := lookupSpans(w, from.UTC().Truncate(24*time.Hour))
	if list.tooMany {
		// The list covers at most three days besides the horizon, in which a window opens
		// at most 2,880 times (a window lasts at least a minute, and windows that touch
		// merge): a list over spanLimit means more than MaxWindows in the horizon.
		return MaxWindows + 1, false
	}
	n := list.before(from.Add(OverlapHorizon).UnixNano()) - list.before(from.UnixNano())
	if n > MaxWindows {
		return MaxWindows + 1, false
	}
	return max(n, 0), true
}

// FirstOverlap returns the first non-empty intersection of an interval of a and an interval
// of b that lies within [from, from+horizon), with horizon at most OverlapHorizon (a longer
// one is cut to it). The intersection is not clipped to that range, so it may start before
// from when both windows are already active then. Windows that only touch ([s, t) and
// [t, u)) do not overlap.
//
// It spends one step of budget (a comparison), and returns the budget's error once that is
// spent or its context is done, and a *TooManyWindowsError when a or b opens more than
// MaxWindows windows within OverlapHorizon from from: such windows are not compared at all,
// so that one comparison costs at most the walk over 2 × MaxWindows intervals.
//
// Admission compares a new Schedule with every sibling, and the reconcilers compare the
// Schedules of an autoscaler pairwise at every boundary, so FirstOverlap reads each window's
// intervals from a bounded, process-wide memo of materialized interval lists (see spansFor),
// merges two sorted slices, and remembers per pair of windows what the merge found (see
// pairMemo): a pair compared again later that day costs a lookup. Windows whose intervals
// are not materialized are walked lazily. All ways give the same result.
func FirstOverlap(budget *Budget, a, b *Window, from time.Time, horizon time.Duration) (Interval, bool, error) {
	if err := budget.Spend(1); err != nil {
		return Interval{}, false, err
	}
	horizon = min(horizon, OverlapHorizon)
	for _, w := range []*Window{a, b} {
		if _, ok := w.Comparable(from); !ok {
			return Interval{}, false, &TooManyWindowsError{Window: w}
		}
	}
	sa, okA := a.spansFor(from)
	sb, okB := b.spansFor(from)
	if !okA || !okB {
		iv, ok := firstOverlapLazy(a, b, from, horizon)
		return iv, ok, nil
	}
	t, end := from.UnixNano(), from.Add(horizon).UnixNano()
	if horizon < OverlapHorizon || !pairs.enabled {
		f := firstOverlapOf(sa, sb, t)
		return f.within(end)
	}
	key := pairKeyOf(a, b)
	f, ok := pairs.get(key)
	switch {
	case ok && t >= f.from && f.found && t < f.end:
		return f.within(end)
	case ok && t >= f.from && !f.found && end <= f.until:
		return Interval{}, false, nil
	case ok && t >= f.from && !f.found && t < f.until:
		// Nothing starts before f.until: look only past it, to the end of today's lists.
		if g := firstOverlapOf(sa, sb, f.until); g.found {
			f.found, f.start, f.end = true, g.start, g.end
		} else {
			f.until = g.until
		}
	default:
		f = firstOverlapOf(sa, sb, t)
	}
	pairs.put(key, f)
	return f.within(end)
}

// overlapFact is what a merge of two windows' interval lists found from an instant on: the
// first intersection that ends after from (found, [start, end)), or that no intersection
// ending after from starts before until. It stays true for every later instant t: the first
// intersection ending after t is the same one while t < end; and while none is found, none
// starting before until ends after t.
type overlapFact struct {
	from, until int64
	found       bool
	start, end  int64
}

// within returns the fact's intersection when it starts before the end of a range, in the
// form FirstOverlap returns.
func (f overlapFact) within(end int64) (Interval, bool, error) {
	if !f.found || f.start >= end {
		return Interval{}, false, nil
	}
	return Interval{Start: time.Unix(0, f.start).UTC(), End: time.Unix(0, f.end).UTC()}, true, nil
}

// firstOverlapOf merges two materialized lists, each holding every interval of its window
// that ends after their first one starts and starts before its until, from the first
// intervals that end after from: the first intersection that ends after from, or none
// before the earlier of the two lists' ends.
func firstOverlapOf(a, b spanList, from int64) overlapFact {
	na, nb := a.nanos, b.nanos
	f := overlapFact{from: from, until: min(a.until, b.until)}
	for i, j := a.after(from), b.after(from); 2*i < len(na) && 2*j < len(nb); {
		if start, end := max(na[2*i], nb[2*j]), min(na[2*i+1], nb[2*j+1]); start < end {
			f.found, f.start, f.end = true, start, end
			return f
		}
		// Advance whichever interval ends first; it cannot overlap anything later.
		if na[2*i+1] < nb[2*j+1] {
			i++
		} else {
			j++
		}
	}
	return f
}

// firstOverlapLazy is FirstOverlap computed by walking both windows' intervals as they are
// generated: the definition, and the way for windows whose intervals are not materialized.
func firstOverlapLazy(a, b *Window, from time.Time, horizon time.Duration) (Interval, bool) {
	end := from.Add(horizon)
	nextA, stopA := iter.Pull(a.intervals(from))
	defer stopA()
	nextB, stopB := iter.Pull(b.intervals(from))
	defer stopB()

	ia, okA := nextA()
	ib, okB := nextB()
	for okA && okB && ia.Start.Before(end) && ib.Start.Before(end) {
		start, stop := later(ia.Start, ib.Start), earlier(ia.End, ib.End)
		if start.Before(stop) {
			return Interval{Start: start, End: stop}, true
		}
		if ia.End.Before(ib.End) {
			ia, okA = nextA()
		} else {
			ib, okB = nextB()
		}
	}
	return Interval{}, false
}

func later(a, b time.Time) time.Time {
	if a.After(b) {
		return a
	}
	return b
}

func earlier(a, b time.Time) time.Time {
	if a.Before(b) {
		return a
	}
	return b
}

// The memo of overlaps. Under overlapPolicy Forbid the reconcilers compare every pair of an
// autoscaler's Schedules at each of its boundaries, once for the autoscaler and once for each
// Schedule (whether it is left out), so without a memo the same pairs of year-long lists
// are merged again and again; with it, a pair costs a map lookup, and once a day a merge of
// the day that the lists gained.

// pairLimit is the most pairs of windows kept in one generation of the memo (about 100 bytes
// each); at most two generations are kept.
const pairLimit = 1 << 15

// pairKey names two windows in the memo, in the order of their keys: FirstOverlap is
// symmetric.
type pairKey struct{ a, b string }

func pairKeyOf(a, b *Window) pairKey {
	if a.key > b.key {
		a, b = b, a
	}
	return pairKey{a: a.key, b: b.key}
}

// pairs holds the facts of two generations: lookups read the current one, then the previous
// one; when the current one holds pairLimit facts it becomes the previous one.
var pairs = &pairMemo{enabled: true, current: map[pairKey]overlapFact{}}

type pairMemo struct {
	sync.Mutex
	// enabled is false only in benchmarks that measure what the memo is worth
	// (SetOverlapMemo).
	enabled           bool
	current, previous map[pairKey]overlapFact
}

func (m *pairMemo) get(key pairKey) (overlapFact, bool) {
	m.Lock()
	defer m.Unlock()
	if f, ok := m.current[key]; ok {
		return f, true
	}
	f, ok := m.previous[key]
	return f, ok
}

func (m *pairMemo) put(key pairKey, f overlapFact) {
	m.Lock()
	defer m.Unlock()
	if _, ok := m.current[key]; !ok && len(m.current) >= pairLimit {
		m.previous, m.current = m.current, map[pairKey]overlapFact{}
	}
	m.current[key] = f
}

// SetOverlapMemo turns the memo of overlaps on or off (it is on) and empties it. It exists for
// the benchmark that shows what the memo is worth (test/bench), and must not be called while
// comparisons run.
func SetOverlapMemo(on bool) {
	pairs.Lock()
	defer pairs.Unlock()
	pairs.enabled = on
	pairs.current, pairs.previous = map[pairKey]overlapFact{}, nil
}
