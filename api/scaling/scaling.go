// Package scaling is what an autoscaler's bounds are at an instant: a pure function of a
// ScheduledPodAutoscaler, its Schedules and now, built on the time engine (api/timing). The
// ScheduledPodAutoscaler and Schedule reconcilers and `almanac preview` all compute bounds,
// active Schedules and the next transition with it, so they cannot disagree.
package scaling

import (
	"fmt"
	"slices"
	"strings"
	"time"

	"k8s.io/utils/ptr"

	autoscalingv1alpha1 "github.com/almanac-dev/almanac/api/autoscaling/v1alpha1"
	"github.com/almanac-dev/almanac/api/timing"
)

// Desired is what an autoscaler should look like at one instant: a pure function of its
// spec, its Schedules and now (see Compute).
type Desired struct {
	// Baseline is the autoscaler's own minReplicas and maxReplicas.
	Baseline timing.Bounds
	// Bounds is what the HorizontalPodAutoscaler should have now.
	Bounds timing.Bounds
	// Active names the Schedules whose windows are open now, sorted.
	Active []string
	// Next is the next instant at which a window opens or closes; zero if none will.
	Next time.Time
	// Invalid lists the Schedules that could not be evaluated, sorted by name; they are
	// skipped.
	Invalid []InvalidSchedule
	// Suspended is true when the autoscaler is suspended and held at its baseline.
	Suspended bool
	// LeftOut lists, under overlapPolicy Forbid, the Schedules left out of the bounds because
	// their windows overlap those of a Schedule created earlier (see Resolve), sorted by
	// name.
	LeftOut []LeftOut

	// named are the Schedules that take part in the bounds; all are every valid Schedule.
	named, all []timing.Named
}

// LeftOut is a Schedule that overlapPolicy Forbid leaves out of the bounds.
type LeftOut struct {
	// Name is the Schedule left out.
	Name string
	// Kept is the Schedule it overlaps, which was created earlier (or at the same time and
	// comes first by name) and is kept.
	Kept string
	// Overlap is the first interval in which both are active, and Zone the left-out
	// Schedule's zone, for messages.
	Overlap timing.Interval
	Zone    timing.Zone
}

// InvalidSchedule is a Schedule that could not be evaluated, and why.
type InvalidSchedule struct {
	Name    string
	Message string
}

// Baseline returns the bounds of the autoscaler's own HorizontalPodAutoscalerSpec
// (minReplicas defaults to 1, as in the HorizontalPodAutoscaler API).
func Baseline(spa *autoscalingv1alpha1.ScheduledPodAutoscaler) timing.Bounds {
	hpa := spa.Spec.HorizontalPodAutoscalerSpec
	return timing.Bounds{Min: ptr.Deref(hpa.MinReplicas, 1), Max: hpa.MaxReplicas}
}

// Compile compiles a Schedule's window with the time engine. The error names each wrong field
// by its path (spec.startTime: …). Admission should have refused such a Schedule, but objects
// stored before a webhook existed, or written with the webhook down, can still be wrong; and
// a panic in the engine must not take the others down with it.
func Compile(s *autoscalingv1alpha1.Schedule) (w *timing.Window, err error) {
	defer func() {
		if r := recover(); r != nil {
			w, err = nil, fmt.Errorf("the time engine failed on this Schedule (please report it): %v", r)
		}
	}()
	w, errs := s.Spec.Timing().Compile()
	if len(errs) > 0 {
		return nil, timing.Join("spec.", errs)
	}
	return w, nil
}

// targets reports whether s changes the autoscaler spa.
func targets(s *autoscalingv1alpha1.Schedule, spa *autoscalingv1alpha1.ScheduledPodAutoscaler) bool {
	return s.Namespace == spa.Namespace && s.Spec.ScaleTargetRef.Name == spa.Name
}

// Compute returns the desired state of spa at now, given the Schedules of its namespace
// (Schedules of other autoscalers are ignored). It is a pure function: the reconciler, the
// tests and `almanac preview` get the same answer for the same input.
func Compute(spa *autoscalingv1alpha1.ScheduledPodAutoscaler, schedules []autoscalingv1alpha1.Schedule, now time.Time) Desired {
	base := Baseline(spa)
	d := Desired{Baseline: base, Bounds: timing.Effective(base, nil), Suspended: spa.Spec.Suspend}
	entries := compileAll(spa, schedules, func(name string, err error) {
		d.Invalid = append(d.Invalid, InvalidSchedule{Name: name, Message: err.Error()})
	})
	d.all = namedOf(entries)
	d.named, d.LeftOut = resolve(spa, entries, now)
	if d.Suspended {
		return d
	}
	var active []timing.Override
	for _, n := range d.named {
		if n.Suspended {
			continue
		}
		if _, ok := n.Window.ActiveAt(now); ok {
			active = append(active, timing.Override{Name: n.Name, Min: n.Min, Max: n.Max})
			d.Active = append(d.Active, n.Name)
		}
	}
	d.Bounds = timing.Effective(base, active)
	// Every valid Schedule's boundaries count, a left-out one's too: whether it is left out
	// can change when one of its windows closes.
	if next, ok := timing.NextTransition(d.all, now); ok {
		d.Next = next
	}
	return d
}

// entry is a valid Schedule of an autoscaler, for the time engine, with its creation time.
type entry struct {
	timing.Named
	created time.Time
}

func namedOf(entries []entry) []timing.Named {
	out := make([]timing.Named, len(entries))
	for i, e := range entries {
		out[i] = e.Named
	}
	return out
}

// resolve applies overlapPolicy Forbid, the reconciler's safety net behind admission (which
// reads a cache and can admit two overlapping Schedules created at the same moment). Among
// the Schedules that are not suspended, in the order of their creation (then name), each is
// kept unless its windows overlap, within timing.OverlapHorizon from now, those of a Schedule
// already kept; then it is left out of the bounds. The rule is deterministic, so every
// replica, restart and `almanac preview` leaves out the same Schedules at the same instant.
// Under overlapPolicy Max nothing is left out. It returns the Schedules that take part in the
// bounds (suspended ones included; they are never active), sorted by name.
func resolve(spa *autoscalingv1alpha1.ScheduledPodAutoscaler, entries []entry, now time.Time) ([]timing.Named, []LeftOut) {
	if spa.Spec.OverlapPolicy != autoscalingv1alpha1.OverlapPolicyForbid {
		return namedOf(entries), nil
	}
	order := slices.Clone(entries)
	slices.SortStableFunc(order, func(a, b entry) int {
		if c := a.created.Compare(b.created); c != 0 {
			return c
		}
		return strings.Compare(a.Name, b.Name)
	})
	var kept []entry
	var leftOut []LeftOut
	out := map[string]bool{}
	for _, c := range order {
		if c.Suspended {
			continue
		}
		overlapped := false
		for _, k := range kept {
			if iv, ok := timing.FirstOverlap(k.Window, c.Window, now, timing.OverlapHorizon); ok {
				leftOut = append(leftOut, LeftOut{Name: c.Name, Kept: k.Name, Overlap: iv, Zone: c.Window.Zone()})
				out[c.Name] = true
				overlapped = true
				break
			}
		}
		if !overlapped {
			kept = append(kept, c)
		}
	}
	var named []timing.Named
	for _, e := range entries {
		if !out[e.Name] {
			named = append(named, e.Named)
		}
	}
	slices.SortFunc(leftOut, func(a, b LeftOut) int { return strings.Compare(a.Name, b.Name) })
	return named, leftOut
}

// Named compiles the Schedules of spa (sorted by name) for the time engine. Schedules that
// cannot be compiled are left out and passed to invalid (when it is not nil).
func Named(spa *autoscalingv1alpha1.ScheduledPodAutoscaler, schedules []autoscalingv1alpha1.Schedule, invalid func(name string, err error)) []timing.Named {
	return namedOf(compileAll(spa, schedules, invalid))
}

// compileAll is Named with each Schedule's creation time.
func compileAll(spa *autoscalingv1alpha1.ScheduledPodAutoscaler, schedules []autoscalingv1alpha1.Schedule, invalid func(name string, err error)) []entry {
	sorted := make([]*autoscalingv1alpha1.Schedule, 0, len(schedules))
	for i := range schedules {
		if targets(&schedules[i], spa) {
			sorted = append(sorted, &schedules[i])
		}
	}
	slices.SortFunc(sorted, func(a, b *autoscalingv1alpha1.Schedule) int { return strings.Compare(a.Name, b.Name) })
	entries := make([]entry, 0, len(sorted))
	for _, s := range sorted {
		w, err := Compile(s)
		if err != nil {
			if invalid != nil {
				invalid(s.Name, err)
			}
			continue
		}
		entries = append(entries, entry{Named: timing.Named{
			Name:      s.Name,
			Window:    w,
			Min:       s.Spec.MinReplicas,
			Max:       s.Spec.MaxReplicas,
			Suspended: s.Spec.Suspend,
		}, created: s.CreationTimestamp.Time})
	}
	return entries
}

// Timeline returns the bounds of spa over [from, to) as contiguous segments (see
// timing.Timeline): what the reconciler applies at each instant of the range, the baseline
// throughout when the autoscaler is suspended. Under overlapPolicy Forbid the Schedules left
// out are resolved again at every boundary in the range, as the reconciler does when it wakes
// there. Schedules that cannot be compiled are passed to invalid and skipped.
func Timeline(spa *autoscalingv1alpha1.ScheduledPodAutoscaler, schedules []autoscalingv1alpha1.Schedule, from, to time.Time, invalid func(name string, err error)) []timing.Segment {
	base := Baseline(spa)
	entries := compileAll(spa, schedules, invalid)
	if spa.Spec.Suspend {
		return timing.Timeline(base, nil, from, to)
	}
	if spa.Spec.OverlapPolicy != autoscalingv1alpha1.OverlapPolicyForbid {
		return timing.Timeline(base, namedOf(entries), from, to)
	}
	all := namedOf(entries)
	var out []timing.Segment
	for t := from; t.Before(to); {
		named, _ := resolve(spa, entries, t)
		end := to
		if next, ok := timing.NextTransition(all, t); ok && next.Before(to) {
			end = next
		}
		for _, seg := range timing.Timeline(base, named, t, end) {
			if n := len(out); n > 0 && out[n-1].Bounds == seg.Bounds && slices.Equal(out[n-1].Active, seg.Active) {
				out[n-1].End = seg.End
				continue
			}
			out = append(out, seg)
		}
		t = end
	}
	return out
}

// BoundarySince returns the instant, in [since, now], from which the current bounds have
// held: the boundary whose transition the reconciler is applying. It returns since when the
// bounds have not changed after it.
func (d Desired) BoundarySince(since, now time.Time) time.Time {
	if d.Suspended || since.After(now) {
		return since
	}
	segs := timing.Timeline(d.Baseline, d.named, since, now.Add(time.Nanosecond))
	i := len(segs) - 1
	if i < 0 {
		return since
	}
	for i > 0 && segs[i-1].Bounds == segs[i].Bounds {
		i--
	}
	return segs[i].Start
}
