// Package scaling is what an autoscaler's bounds are at an instant: a pure function of a
// ScheduledPodAutoscaler, its Schedules and now, built on the time engine (api/timing). The
// ScheduledPodAutoscaler and Schedule reconcilers and `almanac preview` all compute bounds,
// active Schedules and the next transition with it, so they cannot disagree.
package scaling

import (
	"context"
	"errors"
	"fmt"
	"slices"
	"strings"
	"time"

	"k8s.io/utils/ptr"

	autoscalingv1alpha1 "github.com/almanac-dev/almanac/api/autoscaling/v1alpha1"
	calendarv1alpha1 "github.com/almanac-dev/almanac/api/calendar/v1alpha1"
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
	// comes first by name) and is kept; empty when the Schedule was not compared.
	Kept string
	// Overlap is the first interval in which both are active, and Zone the left-out
	// Schedule's zone, for messages.
	Overlap timing.Interval
	Zone    timing.Zone
	// NotCompared, when not empty, says why the Schedule's windows could not be compared with
	// those of the Schedules kept before it (too many windows, or too many Schedules): under
	// Forbid such a Schedule is left out, as if it overlapped. It completes "its windows were
	// not compared with those of the other Schedules: …".
	NotCompared string
}

// MaxComparisons is the most comparisons of two Schedules' windows that one resolution of
// overlapPolicy Forbid makes (a step of its budget, see timing.Budget): every pair of
// MaxSchedules Schedules, so that it is spent only by an autoscaler that has more Schedules
// than admission lets it have.
const MaxComparisons = autoscalingv1alpha1.MaxSchedules * (autoscalingv1alpha1.MaxSchedules - 1) / 2

// Texts of LeftOut.NotCompared.
var (
	notComparedTooManyWindows = fmt.Sprintf("it opens more than %d windows in the next %d days, more than almanac compares (one an hour on average); "+
		"open it less often, or give it a longer duration so that its windows touch and merge", timing.MaxWindows, timing.OverlapHorizon/(24*time.Hour))
	notComparedTooManySchedules = fmt.Sprintf("the autoscaler has more Schedules than almanac compares (%d comparisons, every pair of %d Schedules); "+
		"delete Schedules whose windows have ended, or combine windows into fewer Schedules", MaxComparisons, autoscalingv1alpha1.MaxSchedules)
)

// InvalidSchedule is a Schedule that could not be evaluated, and why.
type InvalidSchedule struct {
	Name    string
	Message string
}

// Baseline returns the autoscaler's own bounds: those of its HorizontalPodAutoscalerSpec
// (minReplicas defaults to 1, as in the HorizontalPodAutoscaler API), or, attached to a
// target, spec.minReplicas and spec.maxReplicas (a scale subresource target without
// maxReplicas has no maximum of its own: it is minReplicas).
func Baseline(spa *autoscalingv1alpha1.ScheduledPodAutoscaler) timing.Bounds {
	if hpa := spa.Spec.HorizontalPodAutoscalerSpec; hpa != nil {
		return timing.Bounds{Min: ptr.Deref(hpa.MinReplicas, 1), Max: hpa.MaxReplicas}
	}
	lo := ptr.Deref(spa.Spec.MinReplicas, 0)
	return timing.Bounds{Min: lo, Max: max(lo, ptr.Deref(spa.Spec.MaxReplicas, lo))}
}

// Compile compiles a Schedule's window with the time engine. The error names each wrong field
// by its path (spec.startTime: …). Admission should have refused such a Schedule, but objects
// stored before a webhook existed, or written with the webhook down, can still be wrong; and
// a panic in the engine must not take the others down with it.
//
// The calendars that spec.calendars names are read from book (nil: none exist); one that does
// not exist, or does not compile, holds the Schedule closed (see calendarv1alpha1.Book.Mask,
// and CalendarProblems for what to report).
func Compile(s *autoscalingv1alpha1.Schedule, book *calendarv1alpha1.Book) (w *timing.Window, err error) {
	defer func() {
		if r := recover(); r != nil {
			w, err = nil, fmt.Errorf("the time engine failed on this Schedule (please report it): %v", r)
		}
	}()
	spec := s.Spec.Timing()
	spec.Calendars, _ = book.Mask(s.Namespace, s.Spec.Calendars)
	w, errs := spec.Compile()
	if len(errs) > 0 {
		return nil, timing.Join("spec.", errs)
	}
	return w, nil
}

// CalendarProblems says what is wrong with the calendars that s names, in book: each message
// names the field (spec.calendars.skip[0]) and the fix. Such a calendar holds the Schedule
// closed.
func CalendarProblems(s *autoscalingv1alpha1.Schedule, book *calendarv1alpha1.Book) []string {
	_, problems := book.Mask(s.Namespace, s.Spec.Calendars)
	return problems
}

// targets reports whether s changes the autoscaler spa.
func targets(s *autoscalingv1alpha1.Schedule, spa *autoscalingv1alpha1.ScheduledPodAutoscaler) bool {
	return InEffect(s) && s.Namespace == spa.Namespace && s.Spec.ScaleTargetRef.Name == spa.Name
}

// InEffect reports whether s changes its autoscaler's bounds at all: a Schedule being deleted
// (a deletionTimestamp, held by someone's finalizer) changes nothing from the moment it is
// deleted, for the reconcilers, admission (it is nobody's sibling) and `almanac preview`.
func InEffect(s *autoscalingv1alpha1.Schedule) bool {
	return s.DeletionTimestamp == nil
}

// Compute returns the desired state of spa at now, given the Schedules of its namespace
// (Schedules of other autoscalers are ignored). It is a pure function: the reconciler, the
// tests and `almanac preview` get the same answer for the same input. Its work is bounded
// (see resolve); it fails only when ctx is done first.
func Compute(ctx context.Context, spa *autoscalingv1alpha1.ScheduledPodAutoscaler, schedules []autoscalingv1alpha1.Schedule, book *calendarv1alpha1.Book, now time.Time) (Desired, error) {
	base := Baseline(spa)
	d := Desired{Baseline: base, Bounds: timing.Effective(base, nil), Suspended: spa.Spec.Suspend}
	entries := compileAll(spa, schedules, book, func(name string, err error) {
		d.Invalid = append(d.Invalid, InvalidSchedule{Name: name, Message: err.Error()})
	})
	d.all = namedOf(entries)
	var err error
	if d.named, d.LeftOut, err = resolve(timing.NewBudget(ctx, MaxComparisons), spa, entries, now); err != nil {
		return Desired{}, err
	}
	if d.Suspended {
		return d, nil
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
	return d, nil
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
//
// The work is bounded: each comparison spends a step of budget (MaxComparisons for a
// reconcile), and a Schedule that opens more than timing.MaxWindows windows is not compared
// at all. A Schedule that cannot be compared, for either reason, is left out as if it
// overlapped (LeftOut.NotCompared says why): admission refuses such Schedules, so only ones
// stored without it meet the rule, and leaving them out keeps Forbid's promise that no two
// windows in the bounds overlap. It fails only when the budget's context is done.
func resolve(budget *timing.Budget, spa *autoscalingv1alpha1.ScheduledPodAutoscaler, entries []entry, now time.Time) ([]timing.Named, []LeftOut, error) {
	if spa.Spec.OverlapPolicy != autoscalingv1alpha1.OverlapPolicyForbid {
		return namedOf(entries), nil, nil
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
	leave := func(l LeftOut) {
		leftOut = append(leftOut, l)
		out[l.Name] = true
	}
	for _, c := range order {
		if c.Suspended {
			continue
		}
		if _, ok := c.Window.Comparable(now); !ok {
			leave(LeftOut{Name: c.Name, Zone: c.Window.Zone(), NotCompared: notComparedTooManyWindows})
			continue
		}
		keep := true
		for _, k := range kept {
			iv, ok, err := timing.FirstOverlap(budget, k.Window, c.Window, now, timing.OverlapHorizon)
			var tooMany *timing.TooManyWindowsError
			switch {
			case errors.Is(err, timing.ErrBudgetSpent):
				leave(LeftOut{Name: c.Name, Zone: c.Window.Zone(), NotCompared: notComparedTooManySchedules})
			case errors.As(err, &tooMany):
				leave(LeftOut{Name: c.Name, Zone: c.Window.Zone(), NotCompared: notComparedTooManyWindows})
			case err != nil:
				return nil, nil, err
			case ok:
				leave(LeftOut{Name: c.Name, Kept: k.Name, Overlap: iv, Zone: c.Window.Zone()})
			default:
				continue
			}
			keep = false
			break
		}
		if keep {
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
	return named, leftOut, nil
}

// Named compiles the Schedules of spa (sorted by name) for the time engine. Schedules that
// cannot be compiled are left out and passed to invalid (when it is not nil).
func Named(spa *autoscalingv1alpha1.ScheduledPodAutoscaler, schedules []autoscalingv1alpha1.Schedule, book *calendarv1alpha1.Book, invalid func(name string, err error)) []timing.Named {
	return namedOf(compileAll(spa, schedules, book, invalid))
}

// compileAll is Named with each Schedule's creation time.
func compileAll(spa *autoscalingv1alpha1.ScheduledPodAutoscaler, schedules []autoscalingv1alpha1.Schedule, book *calendarv1alpha1.Book, invalid func(name string, err error)) []entry {
	sorted := make([]*autoscalingv1alpha1.Schedule, 0, len(schedules))
	for i := range schedules {
		if targets(&schedules[i], spa) {
			sorted = append(sorted, &schedules[i])
		}
	}
	slices.SortFunc(sorted, func(a, b *autoscalingv1alpha1.Schedule) int { return strings.Compare(a.Name, b.Name) })
	entries := make([]entry, 0, len(sorted))
	for _, s := range sorted {
		w, err := Compile(s, book)
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
// there, each time with the budget a reconcile has (MaxComparisons), so that they are the
// same. Schedules that cannot be compiled are passed to invalid and skipped.
//
// budget bounds the whole walk: each interval of a Schedule in the range is a step, and so is
// each comparison of two Schedules' windows. When it stops the walk, Timeline returns no
// segments and the budget's error.
func Timeline(budget *timing.Budget, spa *autoscalingv1alpha1.ScheduledPodAutoscaler, schedules []autoscalingv1alpha1.Schedule, book *calendarv1alpha1.Book, from, to time.Time, invalid func(name string, err error)) ([]timing.Segment, error) {
	base := Baseline(spa)
	entries := compileAll(spa, schedules, book, invalid)
	if spa.Spec.Suspend {
		return timing.Timeline(budget, base, nil, from, to)
	}
	if spa.Spec.OverlapPolicy != autoscalingv1alpha1.OverlapPolicyForbid {
		return timing.Timeline(budget, base, namedOf(entries), from, to)
	}
	all := namedOf(entries)
	var out []timing.Segment
	for t := from; t.Before(to); {
		resolution := timing.NewBudget(context.Background(), MaxComparisons)
		named, _, err := resolve(resolution, spa, entries, t)
		if err == nil {
			err = budget.Spend(resolution.Spent())
		}
		if err != nil {
			return nil, err
		}
		end := to
		if next, ok := timing.NextTransition(all, t); ok && next.Before(to) {
			end = next
		}
		segs, err := timing.Timeline(budget, base, named, t, end)
		if err != nil {
			return nil, err
		}
		for _, seg := range segs {
			if n := len(out); n > 0 && out[n-1].Bounds == seg.Bounds && slices.Equal(out[n-1].Active, seg.Active) {
				out[n-1].End = seg.End
				continue
			}
			out = append(out, seg)
		}
		t = end
	}
	return out, nil
}

// BoundarySince returns the instant, in [since, now], from which the current bounds have
// held: the boundary whose transition the reconciler is applying. It returns since when the
// bounds have not changed after it.
//
// It walks the Schedules' intervals since then, at most maxBoundaryWalk of them (after a long
// downtime, since may be far behind): beyond that it returns since.
func (d Desired) BoundarySince(since, now time.Time) time.Time {
	if d.Suspended || since.After(now) {
		return since
	}
	segs, err := timing.Timeline(timing.NewBudget(context.Background(), maxBoundaryWalk), d.Baseline, d.named, since, now.Add(time.Nanosecond))
	i := len(segs) - 1
	if err != nil || i < 0 {
		return since
	}
	for i > 0 && segs[i-1].Bounds == segs[i].Bounds {
		i--
	}
	return segs[i].Start
}

// maxBoundaryWalk is the most intervals BoundarySince walks.
const maxBoundaryWalk = 100_000
