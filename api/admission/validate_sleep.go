package admission

import (
	"context"
	"errors"
	"fmt"
	"reflect"
	"strings"
	"time"

	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/runtime/schema"
	"k8s.io/apimachinery/pkg/util/validation"
	"k8s.io/apimachinery/pkg/util/validation/field"

	calendarv1alpha1 "github.com/almanac-dev/almanac/api/calendar/v1alpha1"
	sleepv1alpha1 "github.com/almanac-dev/almanac/api/sleep/v1alpha1"
	"github.com/almanac-dev/almanac/api/sleeping"
	"github.com/almanac-dev/almanac/api/timing"
)

// DefaultSleep writes, for every window, the default time zone and the canonical forms of its
// times, days and cron schedule (as DefaultSchedule does), and the default kinds when none
// are named, so that the stored object says what it puts to sleep.
func DefaultSleep(s *sleepv1alpha1.Sleep) []string { return defaultSleepSpec(&s.Spec) }

// DefaultClusterSleep is DefaultSleep for a ClusterSleep.
func DefaultClusterSleep(s *sleepv1alpha1.ClusterSleep) []string {
	return defaultSleepSpec(&s.Spec.SleepSpec)
}

func defaultSleepSpec(spec *sleepv1alpha1.SleepSpec) []string {
	var warnings []string
	for _, list := range []struct {
		name    string
		windows []sleepv1alpha1.Window
	}{{"asleep", spec.Asleep}, {"awake", spec.Awake}} {
		for i := range list.windows {
			warnings = append(warnings, defaultWindow(&list.windows[i], fmt.Sprintf("spec.%s[%d]", list.name, i))...)
		}
	}
	if len(spec.Kinds) == 0 {
		spec.Kinds = sleepv1alpha1.DefaultKinds()
	}
	if spec.Wake.Lead.Mode == "" {
		spec.Wake.Lead.Mode = sleepv1alpha1.LeadAuto
	}
	return warnings
}

// defaultWindow normalizes one window as DefaultSchedule normalizes a Schedule's.
func defaultWindow(w *sleepv1alpha1.Window, path string) []string {
	// The schema defaults an omitted timeZone to UTC before this runs, so an empty one was
	// written so: it is left for the schema to refuse (the contract refuses an empty zone).
	zone, zoneOK := timing.Zone{}, false
	if w.TimeZone != "" {
		zone, zoneOK = defaultZone(&w.TimeZone)
	}
	var warnings []string
	switch w.Type {
	case sleepv1alpha1.WindowDaily, sleepv1alpha1.WindowWeekly:
		w.StartTime = canonicalClock(w.StartTime)
		w.EndTime = canonicalClock(w.EndTime)
	case sleepv1alpha1.WindowOneShot:
		if zoneOK {
			var warning string
			w.StartTime, warning = canonicalDateTime(w.StartTime, zone, path+".startTime")
			warnings = appendNonEmpty(warnings, warning)
			w.EndTime, warning = canonicalDateTime(w.EndTime, zone, path+".endTime")
			warnings = appendNonEmpty(warnings, warning)
		}
	case sleepv1alpha1.WindowCron:
		w.Schedule = canonicalCron(w.Schedule)
	}
	w.StartDayOfWeek = canonicalWeekday(w.StartDayOfWeek)
	w.EndDayOfWeek = canonicalWeekday(w.EndDayOfWeek)
	if days, ok := timing.CanonicalWeekdays(w.DaysOfWeek); ok && len(days) > 0 {
		w.DaysOfWeek = days
	}
	if days, ok := timing.CanonicalWeekdays(w.BusinessDays); ok && len(days) > 0 {
		w.BusinessDays = days
	}
	return warnings
}

// ValidateSleep checks what the schema cannot of a Sleep: each window by the time semantics
// (zones, times, days, cron), a OneShot window in the past, windows that never close (more
// than the reconciler walks), the calendars named (a Calendar of the Sleep's namespace, or a
// ClusterCalendar), the selectors (valid, and at most sleepv1alpha1.MaxSelectorTerms terms
// each), the tiers (unique names), the kinds (each once, none that cannot sleep), the lead
// (fixed at most max, max at most a day) and the tier timeout. Whether its writer may scale and
// patch what it puts to sleep is the webhooks' permission check (webhooks/permissions.go).
//
// Ratcheting: on update, when neither the windows nor the calendars changed, a window that has
// ended is a warning, so that an aged Sleep can always be edited.
func ValidateSleep(ctx context.Context, s, old *sleepv1alpha1.Sleep, env Env) (field.ErrorList, []string, error) {
	var oldSpec *sleepv1alpha1.SleepSpec
	if old != nil {
		oldSpec = &old.Spec
	}
	return validateSleepSpec(ctx, s.Namespace, &s.Spec, oldSpec, s.DeletionTimestamp != nil, env)
}

// ValidateClusterSleep is ValidateSleep for a ClusterSleep, whose calendars are
// ClusterCalendars (the schema refuses a Calendar), and whose namespaces must be namespace
// names.
func ValidateClusterSleep(ctx context.Context, s, old *sleepv1alpha1.ClusterSleep, env Env) (field.ErrorList, []string, error) {
	var oldSpec *sleepv1alpha1.SleepSpec
	if old != nil {
		oldSpec = &old.Spec.SleepSpec
	}
	errs, warnings, err := validateSleepSpec(ctx, "", &s.Spec.SleepSpec, oldSpec, s.DeletionTimestamp != nil, env)
	if err != nil {
		return nil, nil, err
	}
	for i, ns := range s.Spec.Namespaces {
		if msgs := validation.IsDNS1123Label(ns); len(msgs) > 0 {
			errs = append(errs, field.Invalid(specPath.Child("namespaces").Index(i), ns, "not a namespace name: "+msgs[0]))
		}
	}
	if sel := s.Spec.NamespaceSelector; sel != nil {
		errs = append(errs, checkSelector(specPath.Child("namespaceSelector"), sel)...)
	}
	return errs, warnings, nil
}

// cannotSleep are kinds that have nothing to sleep: no replicas, no suspension.
var cannotSleep = map[schema.GroupKind]string{
	{Group: "apps", Kind: "DaemonSet"}:                                              "a DaemonSet runs a Pod on every node and has no replicas to scale to 0",
	{Group: "", Kind: "Pod"}:                                                        "a Pod cannot be scaled; put to sleep the workload that owns it",
	{Group: "batch", Kind: "Job"}:                                                   "a Job cannot be suspended by a sleep; put its CronJob, ScheduledJob or EventJob to sleep instead",
	{Group: "autoscaling", Kind: "HorizontalPodAutoscaler"}:                         "an HPA does not act on a workload at 0 replicas: put the workload to sleep, and the HPA waits",
	{Group: sleepv1alpha1.GroupVersion.Group, Kind: sleepv1alpha1.KindSleep}:        "a sleep cannot sleep",
	{Group: sleepv1alpha1.GroupVersion.Group, Kind: sleepv1alpha1.KindClusterSleep}: "a sleep cannot sleep",
}

func validateSleepSpec(ctx context.Context, namespace string, spec, old *sleepv1alpha1.SleepSpec, deleting bool, env Env) (field.ErrorList, []string, error) {
	if deleting { // being deleted, it only wakes what it holds
		return nil, nil, nil
	}
	ratchet := old != nil && reflect.DeepEqual(old.Asleep, spec.Asleep) && reflect.DeepEqual(old.Awake, spec.Awake) && calendarsEqual(old.Calendars, spec.Calendars)
	v := &verdict{ratchet: ratchet}
	book, err := checkCalendarReferences(ctx, v, namespace, spec.Calendars, env)
	if err != nil {
		return nil, nil, err
	}
	windows, name, _ := spec.Windows()
	compiled := 0
	for i := range windows {
		p := specPath.Child(name).Index(i)
		w, ferrs := windows[i].Timing().Compile()
		for _, fe := range ferrs {
			fp := p.Child(fe.Field)
			if fe.Index != nil {
				fp = fp.Index(*fe.Index)
			}
			v.fail(field.Invalid(fp, fe.Value, fe.Detail))
		}
		if w == nil {
			continue
		}
		compiled++
		if zw := w.Zone().Warning; zw != "" {
			v.warn(p.Child("timeZone").String() + ": " + zw)
		}
		if w.Stale(env.Now) {
			iv, _ := w.OneShotInterval()
			v.failOrWarn(field.Invalid(p.Child("endTime"), windows[i].EndTime, fmt.Sprintf(
				"the window ended at %s, which is not after now (%s): it would never open; set startTime and endTime to a window to come, or remove it",
				timing.InstantText(iv.End, w.Zone()), timing.InstantText(env.Now, timing.Zone{}))),
				fmt.Sprintf("%s: the OneShot window ended at %s and will never open again; remove it", p.Child("endTime"), timing.InstantText(iv.End, w.Zone())))
			continue
		}
		for _, note := range w.DSTNotes(env.Now) {
			v.warn(p.Child(note.Field).String() + ": " + note.Message)
		}
	}
	if spec.Selector != nil {
		v.errs = append(v.errs, checkSelector(specPath.Child("selector"), spec.Selector)...)
	}
	names := map[string]int{}
	for i := range spec.Wake.Tiers {
		t := &spec.Wake.Tiers[i]
		p := specPath.Child("wake", "tiers").Index(i)
		if j, dup := names[t.Name]; dup {
			v.fail(field.Duplicate(p.Child("name"), fmt.Sprintf("%s (tier %d has it already: give each tier its own name)", t.Name, j+1)))
		}
		names[t.Name] = i
		v.errs = append(v.errs, checkSelector(p.Child("selector"), &t.Selector)...)
	}
	checkKinds(v, spec.Kinds)
	checkWake(v, &spec.Wake)
	if env.Objects != nil && len(v.errs) == 0 && (old == nil || !reflect.DeepEqual(old.Selector, spec.Selector) || !reflect.DeepEqual(old.Kinds, spec.Kinds)) {
		if err := warnSelectsNothing(ctx, v, namespace, spec, env.Objects); err != nil {
			return nil, nil, err
		}
	}
	if compiled == len(windows) && len(v.errs) == 0 && len(v.refused) == 0 {
		checkWalk(ctx, v, namespace, spec, book, env.Now)
	}
	return v.result()
}

// warnSelectsNothing warns when no workload of the sleep's kinds (in its namespace; for a
// ClusterSleep, in any) matches its selector now: a sleep that selects nothing is allowed (the
// workloads may come later), and says so.
func warnSelectsNothing(ctx context.Context, v *verdict, namespace string, spec *sleepv1alpha1.SleepSpec, objects Lookup) error {
	sel, err := sleeping.Selector(spec.Selector)
	if err != nil {
		return nil // refused above
	}
	kinds := spec.Kinds
	if len(kinds) == 0 {
		kinds = sleepv1alpha1.DefaultKinds()
	}
	var names []string
	for _, k := range kinds {
		found, err := objects.Selects(ctx, k.GroupVersionKind(), namespace, sel)
		if err != nil || found {
			return err
		}
		names = append(names, k.Kind)
	}
	where := fmt.Sprintf("in namespace %q", namespace)
	if namespace == "" {
		where = "in any namespace"
	}
	v.warn(fmt.Sprintf("spec.selector: no %s %s matches it now: this sleep puts nothing to sleep until one does (correct spec.selector or spec.kinds if that is not what you meant)",
		strings.Join(names, ", "), where))
	return nil
}

// checkSelector refuses a label selector that does not parse, or has more than
// sleepv1alpha1.MaxSelectorTerms terms: the reconciler matches every workload (and, for
// tiers, every woken workload) against it at each reconcile.
func checkSelector(p *field.Path, sel *metav1.LabelSelector) field.ErrorList {
	var errs field.ErrorList
	if _, err := sleeping.Selector(sel); err != nil {
		errs = append(errs, field.Invalid(p, sel.String(), err.Error()))
	}
	terms := len(sel.MatchLabels)
	for _, e := range sel.MatchExpressions {
		terms += max(1, len(e.Values))
	}
	if terms > sleepv1alpha1.MaxSelectorTerms {
		errs = append(errs, field.TooMany(p, terms, sleepv1alpha1.MaxSelectorTerms))
		errs[len(errs)-1].Detail = fmt.Sprintf("the selector has %d terms (matchLabels entries and matchExpressions values), and a sleep's selectors may have at most %d each: "+
			"select by a label that the workloads share instead of listing them", terms, sleepv1alpha1.MaxSelectorTerms)
	}
	return errs
}

// checkKinds refuses a kind named twice, one whose apiVersion does not parse, and one that
// has nothing to sleep.
func checkKinds(v *verdict, kinds []sleepv1alpha1.WorkloadKind) {
	seen := map[schema.GroupKind]int{}
	for i, k := range kinds {
		p := specPath.Child("kinds").Index(i)
		gv, err := schema.ParseGroupVersion(k.APIVersion)
		if err != nil {
			v.fail(field.Invalid(p.Child("apiVersion"), k.APIVersion, "not an apiVersion (group/version, or v1 for the core group): "+err.Error()))
			continue
		}
		gk := schema.GroupKind{Group: gv.Group, Kind: k.Kind}
		if why, ok := cannotSleep[gk]; ok {
			v.fail(field.Invalid(p, k.String(), why))
		}
		if j, dup := seen[gk]; dup {
			v.fail(field.Duplicate(p, fmt.Sprintf("%s (spec.kinds[%d] names it already, in any version)", k.String(), j)))
		}
		seen[gk] = i
	}
}

// checkWake refuses a lead beyond a day, a fixed lead above the maximum, and a tier timeout
// that is not positive or beyond an hour.
func checkWake(v *verdict, w *sleepv1alpha1.Wake) {
	lead := specPath.Child("wake", "lead")
	maxLead := sleeping.DefaultMaxLead
	if m := w.Lead.Max; m != nil {
		maxLead = m.Duration
		if m.Duration < 0 || m.Duration > sleeping.MaxLead {
			v.fail(field.Invalid(lead.Child("max"), m.Duration.String(), fmt.Sprintf("the lead's maximum must be between 0 and %s: a wake that starts more than a day early is a second awake window; write it in spec.awake instead", sleeping.MaxLead)))
		}
	}
	if f := w.Lead.Fixed; f != nil {
		switch {
		case f.Duration < 0:
			v.fail(field.Invalid(lead.Child("fixed"), f.Duration.String(), "a lead is how long before its boundary a wake starts: it cannot be negative"))
		case f.Duration > maxLead:
			v.fail(field.Invalid(lead.Child("fixed"), f.Duration.String(), fmt.Sprintf("the fixed lead is above the lead's maximum (%s): lower it, or raise spec.wake.lead.max (at most %s)", maxLead, sleeping.MaxLead)))
		}
	}
	if t := w.TierTimeout; t != nil && (t.Duration <= 0 || t.Duration > sleeping.MaxTierTimeout) {
		v.fail(field.Invalid(specPath.Child("wake", "tierTimeout"), t.Duration.String(), fmt.Sprintf("a tier waits for Ready between 1s and %s before the next one wakes anyway", sleeping.MaxTierTimeout)))
	}
}

// checkWalk refuses windows that the reconciler could not walk: a union that never closes (or
// closes so rarely that finding its end takes more than sleeping.WalkSteps intervals), with
// the calendars read for the check.
func checkWalk(ctx context.Context, v *verdict, namespace string, spec *sleepv1alpha1.SleepSpec, book *calendarv1alpha1.Book, now time.Time) {
	mask, _ := book.Mask(namespace, spec.Calendars)
	plan, problems := sleeping.Compile(spec, mask)
	if len(problems) > 0 {
		return
	}
	_, name, awake := spec.Windows()
	st, err := plan.At(ctx, now, 0)
	switch {
	case errors.Is(err, timing.ErrBudgetSpent):
		v.failOrWarn(field.Invalid(specPath.Child(name), fmt.Sprintf("%d windows", len(spec.Asleep)+len(spec.Awake)), fmt.Sprintf(
			"these windows follow one another without a gap for more intervals than almanac walks (%d): almanac cannot tell when they close; "+
				"make them fewer and longer (a Daily or Weekly window instead of a frequent Cron one), or leave a gap between them", sleeping.WalkSteps)),
			fmt.Sprintf("spec.%s: the windows follow one another for more intervals than almanac walks", name))
	case err == nil && st.Asleep && st.WakeAt.IsZero():
		v.warn(fmt.Sprintf("spec.%s: these windows never close (as far as almanac looks ahead, eight years): the workloads sleep from now on and never wake", name))
	case err == nil && !st.Asleep && st.Next.IsZero() && !awake:
		v.warn(fmt.Sprintf("spec.%s: no window opens again: this sleep never puts anything to sleep", name))
	}
}
