package timing

import (
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
//
// It spends one step of budget for each interval of a Schedule that intersects the range;
// when the budget stops it, it returns no segments and the budget's error.
func Timeline(budget *Budget, baseline Bounds, schedules []Named, from, to time.Time) ([]Segment, error) {
	if !from.Before(to) {
		return nil, nil
	}
	type scheduleIntervals struct {
		Named
		intervals []Interval
		next      int // the first interval that ends after the current cut
	}
	var live []*scheduleIntervals
	cuts := []time.Time{from, to}
	for _, s := range schedules {
		if s.Suspended || s.Window == nil {
			continue
		}
		l := &scheduleIntervals{Named: s}
		for iv := range s.Window.intervals(from) {
			if !iv.Start.Before(to) {
				break
			}
			if err := budget.Spend(1); err != nil {
				return nil, err
			}
			l.intervals = append(l.intervals, iv)
			cuts = append(cuts, iv.Start, iv.End)
		}
		live = append(live, l)
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
			// The cuts rise, and each Schedule's intervals are in order: skip the ones that
			// ended.
			for s.next < len(s.intervals) && !s.intervals[s.next].End.After(start) {
				s.next++
			}
			if s.next < len(s.intervals) && s.intervals[s.next].Contains(start) {
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
	return out, nil
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
