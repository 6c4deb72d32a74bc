// Package sleeping is what a Sleep or ClusterSleep does at an instant: a pure function of its
// spec, its calendars, the workloads it selects (with the records they carry) and now, built
// on the time engine (api/timing). The sleep reconciler and `almanac release` act on its
// answers, and admission and the commands compile a sleep with it, so that none of them can
// disagree about when a sleep starts, when its wake starts, which workload wakes next and
// what it wakes to.
package sleeping

import (
	"context"
	"fmt"
	"time"

	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/labels"
	"k8s.io/apimachinery/pkg/runtime/schema"

	sleepv1alpha1 "github.com/almanac-dev/almanac/api/sleep/v1alpha1"
	"github.com/almanac-dev/almanac/api/timing"
)

// Defaults of a sleep's wake.
const (
	// DefaultTierTimeout is how long a tier may take to be Ready before the next one wakes
	// anyway, unless spec.wake.tierTimeout says otherwise.
	DefaultTierTimeout = 10 * time.Minute
	// MaxTierTimeout is the longest tierTimeout admission accepts.
	MaxTierTimeout = time.Hour
	// DefaultMaxLead caps a learned lead unless spec.wake.lead.max says otherwise.
	DefaultMaxLead = time.Hour
	// MaxLead is the longest lead (max or fixed) admission accepts.
	MaxLead = 24 * time.Hour
	// WalkSteps bounds each walk over a sleep's windows (one step per interval looked at):
	// 16 windows that touch one another for 366 days at one interval a day stay well within
	// it; a union that never closes stops here and is reported.
	WalkSteps = 16 * 400
	// PaceWindow is the stretch over which spec.wake.podsPerMinute counts Pods.
	PaceWindow = time.Minute
)

// Tier is a compiled wake tier.
type Tier struct {
	Name     string
	Selector labels.Selector
}

// Kind is a compiled kind of spec.kinds.
type Kind struct {
	GVK      schema.GroupVersionKind
	Handling sleepv1alpha1.Handling
}

// Plan is a sleep's spec, compiled.
type Plan struct {
	// Windows are the windows of asleep or awake, cut by the calendars.
	Windows timing.Union
	// AwakeMode: the windows are the awake ones; the workloads sleep outside them.
	AwakeMode bool
	// Selector selects workloads (everything when the spec has none).
	Selector labels.Selector
	Tiers    []Tier
	Kinds    []Kind
	// PodsPerMinute is the pace; 0: none.
	PodsPerMinute int32
	TierTimeout   time.Duration
	Lead          sleepv1alpha1.LeadMode
	FixedLead     time.Duration
	MaxLead       time.Duration
	Suspend       bool
}

// Compile compiles spec with the calendars' mask (calendarv1alpha1.Book.Mask). Problems
// name the field ("spec.asleep[1].startTime: ..."); a spec with problems has no plan. The
// webhooks refuse such a spec; the reconciler reports one stored without admission.
func Compile(spec *sleepv1alpha1.SleepSpec, mask timing.Mask) (*Plan, []string) {
	var problems []string
	p := &Plan{PodsPerMinute: deref(spec.Wake.PodsPerMinute), Suspend: spec.Suspend, TierTimeout: DefaultTierTimeout,
		Lead: spec.Wake.Lead.Mode, MaxLead: DefaultMaxLead}
	windows, field, awake := spec.Windows()
	p.AwakeMode = awake
	for i := range windows {
		ts := windows[i].Timing()
		ts.Calendars = mask
		w, errs := ts.Compile()
		for _, fe := range errs {
			problems = append(problems, fmt.Sprintf("spec.%s[%d].%s: %s", field, i, fe.Path(), fe.Detail))
		}
		p.Windows = append(p.Windows, w)
	}
	var err error
	if p.Selector, err = Selector(spec.Selector); err != nil {
		problems = append(problems, "spec.selector: "+err.Error())
	}
	for i, t := range spec.Wake.Tiers {
		sel, err := Selector(&t.Selector)
		if err != nil {
			problems = append(problems, fmt.Sprintf("spec.wake.tiers[%d].selector: %v", i, err))
		}
		p.Tiers = append(p.Tiers, Tier{Name: t.Name, Selector: sel})
	}
	kinds := spec.Kinds
	if len(kinds) == 0 {
		kinds = sleepv1alpha1.DefaultKinds()
	}
	for _, k := range kinds {
		gvk := k.GroupVersionKind()
		p.Kinds = append(p.Kinds, Kind{GVK: gvk, Handling: sleepv1alpha1.HandlingOf(gvk.GroupKind())})
	}
	if d := spec.Wake.TierTimeout; d != nil {
		p.TierTimeout = d.Duration
	}
	if d := spec.Wake.Lead.Max; d != nil {
		p.MaxLead = d.Duration
	}
	if d := spec.Wake.Lead.Fixed; d != nil {
		p.FixedLead = d.Duration
	}
	if p.Lead == "" {
		p.Lead = sleepv1alpha1.LeadAuto
	}
	if len(problems) > 0 {
		return nil, problems
	}
	return p, nil
}

// Selector compiles a label selector; nil selects everything.
func Selector(s *metav1.LabelSelector) (labels.Selector, error) {
	if s == nil {
		return labels.Everything(), nil
	}
	return metav1.LabelSelectorAsSelector(s)
}

// HasKind reports whether the plan names the kind gk (any version).
func (p *Plan) HasKind(gk schema.GroupKind) bool {
	for _, k := range p.Kinds {
		if k.GVK.GroupKind() == gk {
			return true
		}
	}
	return false
}

// TierOf returns the index of the first tier whose selector matches a workload's labels, or
// len(Tiers) (the workloads of no tier, which wake last).
func (p *Plan) TierOf(l map[string]string) int {
	for i, t := range p.Tiers {
		if t.Selector.Matches(labels.Set(l)) {
			return i
		}
	}
	return len(p.Tiers)
}

// TierName names tier i for messages.
func (p *Plan) TierName(i int) string {
	if i < len(p.Tiers) {
		return fmt.Sprintf("tier %d (%s)", i+1, p.Tiers[i].Name)
	}
	if len(p.Tiers) == 0 {
		return "every workload"
	}
	return "the workloads of no tier"
}

// LeadFrom returns the lead in force given the measured wakes (oldest first): none for mode
// Off, the fixed lead for Fixed, and for Auto the learned one (timing.LearnedLead), the fixed
// lead until a wake was measured. Every lead is capped by MaxLead.
func (p *Plan) LeadFrom(wakes []sleepv1alpha1.MeasuredWake) sleepv1alpha1.LeadStatus {
	switch p.Lead {
	case sleepv1alpha1.LeadOff:
		return sleepv1alpha1.LeadStatus{Source: "Off"}
	case sleepv1alpha1.LeadFixed:
		return sleepv1alpha1.LeadStatus{Duration: metav1.Duration{Duration: min(p.FixedLead, p.MaxLead)}, Source: "Fixed"}
	}
	samples := make([]time.Duration, 0, len(wakes))
	for _, w := range wakes {
		samples = append(samples, w.Duration.Duration)
	}
	lead, learned := timing.LearnedLead(samples, p.FixedLead, p.MaxLead)
	st := sleepv1alpha1.LeadStatus{Duration: metav1.Duration{Duration: lead}, Source: "Fixed"}
	if learned {
		st.Source, st.Samples = "Learned", int32(min(len(samples), timing.LeadSamples))
	}
	return st
}

// State is what a sleep's windows call for at an instant.
type State struct {
	// Asleep: the workloads are to sleep now.
	Asleep bool
	// InLead: the instant is within the lead before the end of a sleep: its wake is under
	// way (Asleep is false).
	InLead bool
	// WakeAt is the end of the current sleep (Asleep or InLead), or of the next one; zero when
	// it never ends or none comes.
	WakeAt time.Time
	// Next is the next instant at which Asleep changes: the start of the next sleep (a sleep
	// shorter than the lead is skipped: its wake would start before it), or, asleep, the
	// start of its wake (WakeAt − lead). Zero: never, within the engine's horizon.
	Next time.Time
}

// At returns what the windows call for at now with the lead: a sleep starts at its boundary,
// and its wake starts lead before its end. Its work is bounded (WalkSteps); it fails when
// the windows never close or ctx is done.
func (p *Plan) At(ctx context.Context, now time.Time, lead time.Duration) (State, error) {
	if p.Suspend {
		return State{}, nil
	}
	budget := timing.NewBudget(ctx, WalkSteps)
	if p.asleepRaw(now) {
		end, ok, err := p.sleepEnd(budget, now)
		if err != nil {
			return State{}, err
		}
		if !ok {
			return State{Asleep: true}, nil // it never ends: nothing to wake for
		}
		if now.Before(end.Add(-lead)) {
			return State{Asleep: true, WakeAt: end, Next: end.Add(-lead)}, nil
		}
		next, _, err := p.nextSleep(budget, end, lead)
		return State{InLead: true, WakeAt: end, Next: next}, err
	}
	next, wake, err := p.nextSleep(budget, now, lead)
	return State{WakeAt: wake, Next: next}, err
}

// nextSleep returns the start and end of the first sleep that starts at or after t and is
// longer than the lead.
func (p *Plan) nextSleep(budget *timing.Budget, t time.Time, lead time.Duration) (start, end time.Time, err error) {
	for {
		start, ok, err := p.sleepStart(budget, t)
		if err != nil || !ok {
			return time.Time{}, time.Time{}, err
		}
		end, ok, err := p.sleepEnd(budget, start)
		if err != nil {
			return time.Time{}, time.Time{}, err
		}
		if !ok || start.Before(end.Add(-lead)) {
			return start, end, nil
		}
		if err := budget.Spend(1); err != nil {
			return time.Time{}, time.Time{}, err
		}
		t = end
	}
}

// asleepRaw reports whether the windows put the workloads to sleep at t, without the lead.
func (p *Plan) asleepRaw(t time.Time) bool { return p.Windows.Open(t) != p.AwakeMode }

// sleepEnd returns the end of the sleep that holds at t; false when it does not end.
func (p *Plan) sleepEnd(budget *timing.Budget, t time.Time) (time.Time, bool, error) {
	if p.AwakeMode {
		end, ok := p.Windows.NextOpen(t)
		return end, ok, nil
	}
	return p.Windows.OpenUntil(budget, t)
}

// sleepStart returns the first instant at or after t at which the workloads sleep; false when
// none comes.
func (p *Plan) sleepStart(budget *timing.Budget, t time.Time) (time.Time, bool, error) {
	if p.AwakeMode {
		return p.Windows.OpenUntil(budget, t)
	}
	start, ok := p.Windows.NextOpen(t)
	return start, ok, nil
}

func deref(p *int32) int32 {
	if p == nil {
		return 0
	}
	return *p
}
