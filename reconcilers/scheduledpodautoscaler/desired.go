package scheduledpodautoscaler

import (
	"errors"
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

	named []timing.Named
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

// TimingSpec converts a Schedule's window fields to the time engine's Spec.
func TimingSpec(s *autoscalingv1alpha1.Schedule) timing.Spec {
	return timing.Spec{
		Type:           timing.Type(s.Spec.Type),
		StartTime:      s.Spec.StartTime,
		EndTime:        s.Spec.EndTime,
		StartDayOfWeek: s.Spec.StartDayOfWeek,
		EndDayOfWeek:   s.Spec.EndDayOfWeek,
		DaysOfWeek:     s.Spec.DaysOfWeek,
		Schedule:       s.Spec.Schedule,
		Duration:       s.Spec.Duration,
		TimeZone:       s.Spec.TimeZone,
	}
}

// CompileSchedule compiles a Schedule's window with the time engine. The error names each
// wrong field by its path (spec.startTime: …). Admission should have refused such a
// Schedule, but objects stored before a webhook existed, or written with the webhook down,
// can still be wrong; and a panic in the engine must not take the others down with it.
func CompileSchedule(s *autoscalingv1alpha1.Schedule) (w *timing.Window, err error) {
	defer func() {
		if r := recover(); r != nil {
			w, err = nil, fmt.Errorf("the time engine failed on this Schedule (please report it): %v", r)
		}
	}()
	w, errs := TimingSpec(s).Compile()
	if len(errs) == 0 {
		return w, nil
	}
	msgs := make([]string, 0, len(errs))
	for _, e := range errs {
		msgs = append(msgs, "spec."+e.Field+": "+e.Detail)
	}
	return nil, errors.New(strings.Join(msgs, "; "))
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
	d.named = Named(spa, schedules, func(name string, err error) {
		d.Invalid = append(d.Invalid, InvalidSchedule{Name: name, Message: err.Error()})
	})
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
	if next, ok := timing.NextTransition(d.named, now); ok {
		d.Next = next
	}
	return d
}

// Named compiles the Schedules of spa (sorted by name) for the time engine. Schedules that
// cannot be compiled are left out and passed to invalid.
func Named(spa *autoscalingv1alpha1.ScheduledPodAutoscaler, schedules []autoscalingv1alpha1.Schedule, invalid func(name string, err error)) []timing.Named {
	sorted := make([]*autoscalingv1alpha1.Schedule, 0, len(schedules))
	for i := range schedules {
		if targets(&schedules[i], spa) {
			sorted = append(sorted, &schedules[i])
		}
	}
	slices.SortFunc(sorted, func(a, b *autoscalingv1alpha1.Schedule) int { return strings.Compare(a.Name, b.Name) })
	named := make([]timing.Named, 0, len(sorted))
	for _, s := range sorted {
		w, err := CompileSchedule(s)
		if err != nil {
			invalid(s.Name, err)
			continue
		}
		named = append(named, timing.Named{
			Name:      s.Name,
			Window:    w,
			Min:       s.Spec.MinReplicas,
			Max:       s.Spec.MaxReplicas,
			Suspended: s.Spec.Suspend,
		})
	}
	return named
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
