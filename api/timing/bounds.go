package timing

import (
	"iter"
	"slices"
	"time"
)

// Bounds are an autoscaler's replica bounds.
type Bounds struct{ Min, Max int32 }

// Override is the replicas of an active Schedule. A nil bound takes the baseline's value.
type Override struct {
	Name     string
	Min, Max *int32
}

// Effective returns the bounds to apply: the baseline when no Schedule is active; otherwise
// the largest Min and the largest Max among the active Schedules, each omitted bound taking
// the baseline's value. If the result has Min > Max, Max is raised to Min, so that the
// HorizontalPodAutoscaler written is always valid (this also covers a baseline with
// Min > Max, which the API schema should prevent).
func Effective(baseline Bounds, active []Override) Bounds {
	out := baseline
	for i, o := range active {
		b := baseline
		if o.Min != nil {
			b.Min = *o.Min
		}
		if o.Max != nil {
			b.Max = *o.Max
		}
		if i == 0 {
			out = b
			continue
		}
		out.Min, out.Max = max(out.Min, b.Min), max(out.Max, b.Max)
	}
	out.Max = max(out.Max, out.Min)
	return out
}

// OverlapHorizon is how far ahead overlapPolicy Forbid looks for overlapping windows.
const OverlapHorizon = 366 * 24 * time.Hour

// FirstOverlap returns the first non-empty intersection of an interval of a and an interval
// of b that lies within [from, from+horizon). The intersection is not clipped to that range,
// so it may start before from when both windows are already active then. Windows that only
// touch ([s, t) and [t, u)) do not overlap.
//
// Admission compares a new Schedule with every sibling, and the reconciler compares the
// Schedules of an autoscaler pairwise, so FirstOverlap reads each window's intervals from a
// bounded, process-wide memo of materialized interval lists (see spansFor) and merges two
// sorted slices; windows with too many intervals to keep (such as a Cron window that opens
// every few minutes) are walked lazily as before. Both ways give the same result.
func FirstOverlap(a, b *Window, from time.Time, horizon time.Duration) (Interval, bool) {
	sa, okA := a.spansFor(from, horizon)
	if !okA {
		return firstOverlapLazy(a, b, from, horizon)
	}
	sb, okB := b.spansFor(from, horizon)
	if !okB {
		return firstOverlapLazy(a, b, from, horizon)
	}
	return firstOverlapOf(sa, sb, from.Add(horizon).UnixNano())
}

// firstOverlapOf is FirstOverlap over two materialized lists of intervals, each in order and
// holding every interval of its window that ends after from and starts before end: the same
// merge as firstOverlapLazy, on the bounds in nanoseconds.
func firstOverlapOf(a, b spanList, end int64) (Interval, bool) {
	na, nb := a.nanos, b.nanos
	for i, j := 0, 0; 2*i < len(na) && 2*j < len(nb) && na[2*i] < end && nb[2*j] < end; {
		if max(na[2*i], nb[2*j]) < min(na[2*i+1], nb[2*j+1]) {
			ia, ib := a.intervals[i], b.intervals[j]
			return Interval{Start: later(ia.Start, ib.Start), End: earlier(ia.End, ib.End)}, true
		}
		if na[2*i+1] < nb[2*j+1] {
			i++
		} else {
			j++
		}
	}
	return Interval{}, false
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
		// Advance whichever interval ends first; it cannot overlap anything later.
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

// Named is one Schedule of an autoscaler, for Timeline and NextTransition.
type Named struct {
	Name string
	// Window is the Schedule's compiled window. A nil Window (a Schedule that did not
	// compile) is never active, so that one invalid Schedule cannot block the others.
	Window    *Window
	Min, Max  *int32
	Suspended bool
}

// Segment is a stretch of time with constant effective bounds and active Schedules.
type Segment struct {
	Start, End time.Time
	Bounds     Bounds
	Active     []string // names of the active Schedules, sorted
}

// Timeline returns the effective bounds over [from, to) as contiguous segments, in order.
// Adjacent segments with the same bounds and the same active Schedules are merged. Suspended
// Schedules are never active.
func Timeline(baseline Bounds, schedules []Named, from, to time.Time) []Segment {
	if !from.Before(to) {
		return nil
	}
	type scheduleIntervals struct {
		Named
		intervals []Interval
	}
	var live []scheduleIntervals
	cuts := []time.Time{from, to}
	for _, s := range schedules {
		if s.Suspended || s.Window == nil {
			continue
		}
		ivs := s.Window.Intervals(from, to)
		live = append(live, scheduleIntervals{Named: s, intervals: ivs})
		for _, iv := range ivs {
			cuts = append(cuts, iv.Start, iv.End)
		}
	}
	slices.SortFunc(cuts, func(a, b time.Time) int { return a.Compare(b) })
	cuts = slices.CompactFunc(cuts, func(a, b time.Time) bool { return a.Equal(b) })

	var out []Segment
	for i := 0; i+1 < len(cuts) && cuts[i].Before(to); i++ {
		start, end := cuts[i], cuts[i+1]
		if start.Before(from) {
			continue
		}
		var active []Override
		var names []string
		for _, s := range live {
			if slices.ContainsFunc(s.intervals, func(iv Interval) bool { return iv.Contains(start) }) {
				active = append(active, Override{Name: s.Name, Min: s.Min, Max: s.Max})
				names = append(names, s.Name)
			}
		}
		slices.Sort(names)
		seg := Segment{Start: start.UTC(), End: end.UTC(), Bounds: Effective(baseline, active), Active: names}
		if n := len(out); n > 0 && out[n-1].Bounds == seg.Bounds && slices.Equal(out[n-1].Active, seg.Active) {
			out[n-1].End = seg.End
			continue
		}
		out = append(out, seg)
	}
	return out
}

// NextTransition returns the earliest start or end of an interval of any unsuspended
// Schedule strictly after now: when the reconciler must look again.
func NextTransition(schedules []Named, now time.Time) (time.Time, bool) {
	var next time.Time
	found := false
	for _, s := range schedules {
		if s.Suspended || s.Window == nil {
			continue
		}
		if t, ok := s.Window.NextBoundary(now); ok && (!found || t.Before(next)) {
			next, found = t, true
		}
	}
	return next, found
}
