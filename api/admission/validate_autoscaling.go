package admission

import (
	"context"
	"errors"
	"fmt"
	"reflect"
	"slices"
	"strconv"
	"strings"
	"time"

	autoscalingv2 "k8s.io/api/autoscaling/v2"
	"k8s.io/apimachinery/pkg/runtime/schema"
	"k8s.io/apimachinery/pkg/util/validation"
	"k8s.io/apimachinery/pkg/util/validation/field"

	autoscalingv1alpha1 "github.com/almanac-dev/almanac/api/autoscaling/v1alpha1"
	calendarv1alpha1 "github.com/almanac-dev/almanac/api/calendar/v1alpha1"
	"github.com/almanac-dev/almanac/api/scaling"
	"github.com/almanac-dev/almanac/api/timing"
)

var specPath = field.NewPath("spec")

// enginePath is the field path of a problem the time engine found in a spec's timing fields.
func enginePath(fe timing.FieldError) *field.Path {
	p := specPath.Child(fe.Field)
	if fe.Index != nil {
		p = p.Index(*fe.Index)
	}
	return p
}

// maxOverlapReports bounds the overlaps reported for one Schedule, as errors or warnings.
const maxOverlapReports = 3

// ValidateSchedule checks what the schema cannot: the time zone, the times, days and cron
// schedule by the time semantics (with its day forms and businessDays, as
// ValidateScheduledJob), a OneShot window in the past, and overlaps with the other
// Schedules of the same autoscaler (an error under overlapPolicy Forbid, a warning under Max),
// comparing the windows as their calendars (spec.calendars, the Schedule's and the
// siblings') cut them. It warns about wall-clock times in a DST gap or repeat, legacy zone
// names, a missing autoscaler, and calendars named in spec.calendars that do not exist or do
// not compile (checkCalendarReferences); it refuses a calendar named twice in one list. old
// is nil on create.
//
// It refuses minReplicas 0 for an autoscaler whose target cannot scale to zero (a generated
// HorizontalPodAutoscaler, or one attached to), and warns about it when the autoscaler does
// not exist.
//
// Ratcheting: on update, when none of the fields that define the windows (type, times, days,
// schedule, duration, timeZone, calendars, scaleTargetRef) changed, every problem is a warning, so that
// labels, finalizers, suspend and replicas of an aged Schedule can always be changed. The one
// exception is minReplicas 0, a problem of minReplicas itself: it is refused whenever
// minReplicas or scaleTargetRef changed, and a warning otherwise.
func ValidateSchedule(ctx context.Context, s, old *autoscalingv1alpha1.Schedule, env Env) (field.ErrorList, []string, error) {
	if !scaling.InEffect(s) { // being deleted, it changes nothing
		return nil, nil, nil
	}
	ratchet := old != nil && scheduleTimingEqual(&old.Spec, &s.Spec)
	v := &verdict{ratchet: ratchet}
	if err := checkZeroReplicas(ctx, v, s, old, env); err != nil {
		return nil, nil, err
	}
	ownBook, err := checkCalendarReferences(ctx, v, s.Namespace, s.Spec.Calendars, env)
	if err != nil {
		return nil, nil, err
	}

	window, ferrs := s.Spec.Timing().Compile()
	for _, fe := range ferrs {
		v.fail(field.Invalid(enginePath(fe), fe.Value, fe.Detail))
	}
	if window == nil {
		return v.result()
	}
	if c, ok := window.Cron(); ok {
		if note := c.EitherDayNote(); note != "" {
			v.warn("spec.schedule: " + note)
		}
		if ownBook != nil && c.CountsBusinessDays() {
			spec := s.Spec.Timing()
			spec.Calendars, _ = ownBook.Mask(s.Namespace, s.Spec.Calendars)
			if masked, errs := spec.Compile(); len(errs) == 0 {
				mc, _ := masked.Cron()
				checkBusinessDays(ctx, v, mc, masked.Zone(), env.Now)
			}
		}
	}
	if w := window.Zone().Warning; w != "" {
		v.warn("spec.timeZone: " + w)
	}
	if window.Stale(env.Now) {
		iv, _ := window.OneShotInterval()
		v.failOrWarn(field.Invalid(specPath.Child("endTime"), s.Spec.EndTime, fmt.Sprintf(
			"the window ended at %s, which is not after now (%s): a OneShot Schedule in the past would never be active; "+
				"set startTime and endTime to a future window, or delete the Schedule", timing.InstantText(iv.End, window.Zone()), timing.InstantText(env.Now, timing.Zone{}))),
			fmt.Sprintf("spec.endTime: the OneShot window ended at %s: this Schedule will never be active again; delete it when it is no longer needed",
				timing.InstantText(iv.End, window.Zone())))
		return v.result()
	}
	for _, note := range window.DSTNotes(env.Now) {
		v.warn("spec." + note.Field + ": " + note.Message)
	}
	if w, ok := WeeklySpanWarning(window); ok {
		v.warn(w)
	}
	comparable := checkWindowCount(v, s, window, env.Now)
	if env.Objects == nil {
		return v.result()
	}

	target := s.Spec.ScaleTargetRef.Name
	spa, err := env.Objects.ScheduledPodAutoscaler(ctx, s.Namespace, target)
	if err != nil {
		return nil, nil, err
	}
	if spa == nil {
		v.warn(fmt.Sprintf("spec.scaleTargetRef.name: ScheduledPodAutoscaler %q does not exist in namespace %q: this Schedule changes nothing until it is created",
			target, s.Namespace))
	}
	siblings, err := env.Objects.Schedules(ctx, s.Namespace, target)
	if err != nil {
		return nil, nil, err
	}
	// By name, so that what a budget leaves uncompared is the same in every replica and in
	// `almanac validate`.
	siblings = slices.DeleteFunc(slices.Clone(siblings), func(sib autoscalingv1alpha1.Schedule) bool {
		return sib.Name == s.Name || !scaling.InEffect(&sib)
	})
	slices.SortFunc(siblings, func(a, b autoscalingv1alpha1.Schedule) int { return strings.Compare(a.Name, b.Name) })
	if len(siblings) >= autoscalingv1alpha1.MaxSchedules && (old == nil || old.Spec.ScaleTargetRef.Name != target) {
		// Refused whatever its windows: they are not compared.
		v.fail(field.Forbidden(specPath.Child("scaleTargetRef", "name"), fmt.Sprintf(
			"ScheduledPodAutoscaler %q already has %d Schedules, and an autoscaler may have at most %d (almanac compares each Schedule's windows with those of all its siblings): "+
				"delete Schedules whose windows have ended, or combine windows into fewer Schedules (a Daily window with daysOfWeek, a Cron window)",
			target, len(siblings), autoscalingv1alpha1.MaxSchedules)))
		return v.result()
	}
	forbid := spa != nil && spa.Spec.OverlapPolicy == autoscalingv1alpha1.OverlapPolicyForbid
	if !comparable {
		return v.result()
	}
	// The calendars of the Schedule and its siblings, each read once.
	book, err := calendarv1alpha1.ReadBook(ctx, env.Objects, s.Namespace, append([]*calendarv1alpha1.Calendars{s.Spec.Calendars}, autoscalingv1alpha1.CalendarsOf(siblings)...)...)
	if err != nil {
		return nil, nil, err
	}
	masked, ok := maskedWindow(window, s, book, env.Now)
	if !ok {
		v.warn(fmt.Sprintf("spec.calendars: cut by its calendars, the window opens more than %d separate windows in the next %d days, more than almanac compares: "+
			"its overlaps with other Schedules are checked without the calendars", timing.MaxWindows, timing.OverlapHorizon/(24*time.Hour)))
	}
	overlaps, notCompared, err := findOverlaps(ctx, masked, siblings, book, env.Now)
	if err != nil {
		return nil, nil, err
	}
	if len(notCompared) > 0 {
		reportNotCompared(v, target, forbid, notCompared)
	}
	for i, o := range overlaps {
		if i == maxOverlapReports {
			more := fmt.Sprintf("spec: %d more Schedules of ScheduledPodAutoscaler %q overlap this one", len(overlaps)-i, target)
			if forbid && !ratchet {
				v.fail(field.Forbidden(specPath, more[len("spec: "):]))
			} else {
				v.warn(more)
			}
			break
		}
		when := timing.IntervalText(o.interval, window.Zone())
		if forbid {
			v.failOrWarn(field.Forbidden(specPath, fmt.Sprintf(
				"the windows overlap those of Schedule %q, and ScheduledPodAutoscaler %q has overlapPolicy Forbid: both are active from %s; "+
					"move or shorten one of the windows, or set the autoscaler's overlapPolicy to Max",
				o.name, target, when)),
				fmt.Sprintf("spec: the windows overlap those of Schedule %q (overlapPolicy Forbid) from %s", o.name, when))
			continue
		}
		v.warn(fmt.Sprintf("spec: the windows overlap those of Schedule %q from %s; while both are active the largest minReplicas and the largest maxReplicas apply (overlapPolicy Max)",
			o.name, when))
	}
	return v.result()
}

// WeeklySpanWarning returns the warning for a Weekly window that spans more than one day
// while its end time of day is after its start time of day ("Monday 11:50 to Wednesday
// 13:00"): it is one stretch of time, while such fields often mean the same hours on each day,
// as scheduled-pod-autoscaler read them. The warning says how long the window is and how to
// write the hours on each day with daysOfWeek. Admission and `almanac validate` both return
// it; ok is false for every other window.
func WeeklySpanWarning(w *timing.Window) (string, bool) {
	if !w.SpansDays() {
		return "", false
	}
	weekly, daily := w.Canonical(), w.EachDay()
	length, _ := w.WallLength()
	write := fmt.Sprintf("type: Daily, startTime: %q, endTime: %q, daysOfWeek: [%s]", daily.StartTime, daily.EndTime, strings.Join(daily.DaysOfWeek, ", "))
	if len(daily.DaysOfWeek) == 0 {
		write = fmt.Sprintf("type: Daily, startTime: %q, endTime: %q (every day)", daily.StartTime, daily.EndTime)
	}
	return fmt.Sprintf("spec: a Weekly window is one stretch of time: %s %s to %s %s in %s is open for %s at a time, once a week. "+
		"For %s to %s on each day from %s to %s, write %s "+
		"(scheduled-pod-autoscaler read Weekly fields that way; `almanac migrate` converts its manifests)",
		weekly.StartDayOfWeek, weekly.StartTime, weekly.EndDayOfWeek, weekly.EndTime, weekly.TimeZone, lengthText(length),
		weekly.StartTime, weekly.EndTime, weekly.StartDayOfWeek, weekly.EndDayOfWeek, write), true
}

// lengthText writes a length of whole minutes in words: "2 days 1 hour 10 minutes".
func lengthText(d time.Duration) string {
	minutes := int(d / time.Minute)
	var parts []string
	for _, unit := range []struct {
		minutes int
		name    string
	}{{24 * 60, "day"}, {60, "hour"}, {1, "minute"}} {
		if n := minutes / unit.minutes; n > 0 {
			parts = append(parts, plural(n, unit.name))
			minutes -= n * unit.minutes
		}
	}
	return strings.Join(parts, " ")
}

// ValidateScheduledPodAutoscaler checks the baseline HorizontalPodAutoscaler spec for what
// the autoscaling/v2 API would refuse when almanac writes the HorizontalPodAutoscaler, or,
// for an attached autoscaler, its spec.targetRef and baseline (validateTarget); and warns
// when it switches to overlapPolicy Forbid while its Schedules already overlap.
func ValidateScheduledPodAutoscaler(ctx context.Context, spa, old *autoscalingv1alpha1.ScheduledPodAutoscaler, env Env) (field.ErrorList, []string, error) {
	if spa.DeletionTimestamp != nil {
		return nil, nil, nil
	}
	v := &verdict{}
	if hpa := spa.Spec.HorizontalPodAutoscalerSpec; hpa != nil {
		validateHPASpec(v, hpa)
	}
	if spa.Attached() {
		if err := validateTarget(ctx, v, spa, old, env); err != nil {
			return nil, nil, err
		}
	}
	if err := validateOverlapPolicyChange(ctx, v, spa, old, env); err != nil {
		return nil, nil, err
	}
	return v.result()
}

// scaleToZeroText says where a minReplicas of 0 works, for messages.
const scaleToZeroText = "0 works only where the target can scale to zero: a KEDA ScaledObject, or a workload without an autoscaler, attached through its scale subresource"

// hpaMinText says why a HorizontalPodAutoscaler's minReplicas cannot be 0, for messages.
const hpaMinText = "a HorizontalPodAutoscaler's minReplicas must be at least 1 (0 needs the alpha feature gate HPAScaleToZero, which almanac does not rely on)"

// validateTarget checks an attached autoscaler: that spec.targetRef.apiVersion is a group
// and version, that the baseline fits the kind of target (no minReplicas 0 for a
// HorizontalPodAutoscaler; a warning that a scale subresource has no maximum), and that no
// other ScheduledPodAutoscaler changes the same object (refused when targetRef is new or
// changed, a warning otherwise, since both were admitted). With env.Objects it warns when a
// HorizontalPodAutoscaler or ScaledObject target does not exist (other kinds are not looked
// up: the webhook may not read them), and when a workload target is scaled by a
// HorizontalPodAutoscaler too.
func validateTarget(ctx context.Context, v *verdict, spa, old *autoscalingv1alpha1.ScheduledPodAutoscaler, env Env) error {
	ref := *spa.Spec.TargetRef
	refPath := specPath.Child("targetRef")
	gv, err := schema.ParseGroupVersion(ref.APIVersion)
	switch {
	case err != nil || gv.Version == "" || strings.HasPrefix(ref.APIVersion, "/"):
		v.fail(field.Invalid(refPath.Child("apiVersion"), ref.APIVersion,
			`must be group/version, e.g. "autoscaling/v2", "keda.sh/v1alpha1" or "apps/v1" (only the core group is written as the version alone: "v1")`))
		return nil
	case gv.Group == "" && gv.Version != "v1":
		v.fail(field.Invalid(refPath.Child("apiVersion"), ref.APIVersion, fmt.Sprintf(
			`a version alone names the core group, whose only version is v1: write group/version, e.g. "apps/v1" or "%s/v1"`, gv.Version)))
		return nil
	case len(validation.IsDNS1123Subdomain(gv.Group)) > 0 && gv.Group != "":
		v.fail(field.Invalid(refPath.Child("apiVersion"), ref.APIVersion, fmt.Sprintf(
			`the group %q is not a lower-case DNS subdomain, as API groups are: e.g. "autoscaling/v2", "keda.sh/v1alpha1" or "apps/v1"`, gv.Group)))
		return nil
	case len(validation.IsDNS1035Label(gv.Version)) > 0:
		v.fail(field.Invalid(refPath.Child("apiVersion"), ref.APIVersion, fmt.Sprintf(
			`the version %q is not a lower-case DNS label, as API versions are: e.g. "v1", "v2" or "v1alpha1"`, gv.Version)))
		return nil
	case isAlmanacGroup(gv.Group):
		v.fail(field.Invalid(refPath.Child("kind"), ref.Kind, fmt.Sprintf(
			"almanac's own kinds (group %s) have no scale subresource: attach to a HorizontalPodAutoscaler, a KEDA ScaledObject or a workload such as a Deployment",
			gv.Group)))
		return nil
	}
	kind := ref.TargetKind()
	minReplicas := spa.Spec.MinReplicas
	switch kind {
	case autoscalingv1alpha1.TargetHPA:
		if minReplicas != nil && *minReplicas == 0 {
			v.fail(field.Invalid(specPath.Child("minReplicas"), *minReplicas, hpaMinText+
				": set minReplicas to 1, or, to scale to zero, attach to the workload itself (a Deployment or StatefulSet that no HorizontalPodAutoscaler scales) or to a KEDA ScaledObject"))
		}
	case autoscalingv1alpha1.TargetScale:
		if spa.Spec.MaxReplicas != nil {
			v.warn(fmt.Sprintf("spec.maxReplicas: almanac sets the replicas of %s %q through its scale subresource, which has no maximum: nothing enforces maxReplicas %d on it, and almanac does not use it "+
				"(the replicas are the largest minReplicas of the open Schedules, or the baseline's); remove maxReplicas", ref.Kind, ref.Name, *spa.Spec.MaxReplicas))
		}
	case autoscalingv1alpha1.TargetScaledObject: // 0 is fine: KEDA scales to zero
	}
	if env.Objects == nil {
		return nil
	}
	if err := checkSharedTarget(ctx, v, spa, old, env); err != nil {
		return err
	}
	if kind == autoscalingv1alpha1.TargetHPA || kind == autoscalingv1alpha1.TargetScaledObject {
		exists, err := env.Objects.Exists(ctx, gv.WithKind(ref.Kind), spa.Namespace, ref.Name)
		if err != nil {
			return err
		}
		if !exists {
			v.warn(fmt.Sprintf("spec.targetRef.name: %s %q (%s) does not exist in namespace %q: this ScheduledPodAutoscaler changes nothing until it exists",
				ref.Kind, ref.Name, ref.APIVersion, spa.Namespace))
		}
		return nil
	}
	hpas, err := env.Objects.HorizontalPodAutoscalers(ctx, spa.Namespace)
	if err != nil {
		return err
	}
	var scaling []string
	for i := range hpas {
		t := hpas[i].Spec.ScaleTargetRef
		tgv, _ := schema.ParseGroupVersion(t.APIVersion)
		if t.Kind == ref.Kind && t.Name == ref.Name && tgv.Group == gv.Group {
			scaling = append(scaling, hpas[i].Name)
		}
	}
	slices.Sort(scaling)
	if len(scaling) > 0 {
		v.warn(fmt.Sprintf("spec.targetRef: HorizontalPodAutoscaler %q scales %s %q too, and would undo the replicas that almanac sets (and almanac its): "+
			"attach to the HorizontalPodAutoscaler instead (targetRef apiVersion autoscaling/v2, kind HorizontalPodAutoscaler, name %s), so that Schedules move its bounds",
			scaling[0], ref.Kind, ref.Name, scaling[0]))
	}
	return nil
}

// sameTarget reports whether two target references name the same object, whatever the
// version.
func sameTarget(a, b *autoscalingv1alpha1.TargetReference) bool {
	if a == nil || b == nil {
		return a == b
	}
	ga, gb := a.GroupVersionKind(), b.GroupVersionKind()
	return ga.GroupKind() == gb.GroupKind() && a.Name == b.Name
}

// checkSharedTarget refuses an autoscaler attached to an object that another one already
// changes: another ScheduledPodAutoscaler attached to it, or, for a HorizontalPodAutoscaler,
// the autoscaler that generates it. Two would overwrite each other's bounds. It is refused
// when spec.targetRef is new or changed; otherwise both were admitted (at the same moment),
// and it is a warning, so that the autoscaler can still be edited or moved away.
func checkSharedTarget(ctx context.Context, v *verdict, spa, old *autoscalingv1alpha1.ScheduledPodAutoscaler, env Env) error {
	ref := spa.Spec.TargetRef
	gvk := ref.GroupVersionKind()
	namePath := specPath.Child("targetRef", "name")
	changed := old == nil || !sameTarget(old.Spec.TargetRef, ref)
	report := func(detail string) {
		if changed {
			v.fail(field.Forbidden(namePath, detail))
			return
		}
		v.warn(namePath.String() + ": " + detail)
	}
	if ref.TargetKind() == autoscalingv1alpha1.TargetHPA {
		owner, err := env.Objects.ScheduledPodAutoscaler(ctx, spa.Namespace, ref.Name)
		if err != nil {
			return err
		}
		if owner != nil && owner.Name != spa.Name && owner.DeletionTimestamp == nil && owner.Spec.HorizontalPodAutoscalerSpec != nil {
			report(fmt.Sprintf("HorizontalPodAutoscaler %q is generated by ScheduledPodAutoscaler %q, which sets its minReplicas and maxReplicas: "+
				"two autoscalers would overwrite each other's bounds; give your Schedules spec.scaleTargetRef.name %q instead",
				ref.Name, owner.Name, owner.Name))
			return nil
		}
	}
	attached, err := env.Objects.AttachedAutoscalers(ctx, spa.Namespace, gvk.Group, gvk.Kind, ref.Name)
	if err != nil {
		return err
	}
	var others []string
	for i := range attached {
		o := &attached[i]
		if o.Name != spa.Name && o.DeletionTimestamp == nil && sameTarget(o.Spec.TargetRef, ref) {
			others = append(others, o.Name)
		}
	}
	if len(others) == 0 {
		return nil
	}
	slices.Sort(others)
	report(fmt.Sprintf("ScheduledPodAutoscaler %q is already attached to %s %q: two autoscalers on one target would overwrite each other's bounds; "+
		"give your Schedules spec.scaleTargetRef.name %q instead, or delete that autoscaler first", others[0], ref.Kind, ref.Name, others[0]))
	return nil
}

// checkZeroReplicas refuses a Schedule's minReplicas 0 when its autoscaler's target cannot
// scale to zero: a generated HorizontalPodAutoscaler or one attached to. When the autoscaler
// does not exist it warns. The refusal is kept when ratcheting if minReplicas or
// scaleTargetRef changed: it is a problem of those fields, not of the windows.
func checkZeroReplicas(ctx context.Context, v *verdict, s, old *autoscalingv1alpha1.Schedule, env Env) error {
	if s.Spec.MinReplicas == nil || *s.Spec.MinReplicas != 0 || env.Objects == nil {
		return nil
	}
	target := s.Spec.ScaleTargetRef.Name
	spa, err := env.Objects.ScheduledPodAutoscaler(ctx, s.Namespace, target)
	if err != nil {
		return err
	}
	if spa == nil {
		v.warn(fmt.Sprintf("spec.minReplicas: ScheduledPodAutoscaler %q does not exist, so almanac cannot tell whether 0 applies: %s; "+
			"if the autoscaler generates a HorizontalPodAutoscaler or attaches to one, 0 cannot apply (%s)", target, scaleToZeroText, hpaMinText))
		return nil
	}
	var why string
	switch {
	case spa.Spec.HorizontalPodAutoscalerSpec != nil:
		why = fmt.Sprintf("ScheduledPodAutoscaler %q generates a HorizontalPodAutoscaler, and %s", target, hpaMinText)
	case spa.Attached() && spa.Spec.TargetRef.TargetKind() == autoscalingv1alpha1.TargetHPA:
		why = fmt.Sprintf("ScheduledPodAutoscaler %q is attached to HorizontalPodAutoscaler %q, and %s", target, spa.Spec.TargetRef.Name, hpaMinText)
	default:
		return nil
	}
	err0 := field.Invalid(specPath.Child("minReplicas"), int32(0), why+": set minReplicas to 1 or more; "+scaleToZeroText)
	changed := old == nil || old.Spec.MinReplicas == nil || *old.Spec.MinReplicas != 0 || old.Spec.ScaleTargetRef.Name != target
	if changed {
		v.refuse(err0)
		return nil
	}
	v.warn(err0.Error() + " (admitted because this field did not change)")
	return nil
}

// validateHPASpec checks the spec of a generated HorizontalPodAutoscaler for what the
// autoscaling/v2 API would refuse when almanac writes it.
func validateHPASpec(v *verdict, hpa *autoscalingv2.HorizontalPodAutoscalerSpec) {
	hpaPath := specPath.Child("horizontalPodAutoscalerSpec")
	ref := hpa.ScaleTargetRef
	if ref.APIVersion == "" {
		v.fail(field.Required(hpaPath.Child("scaleTargetRef", "apiVersion"), fmt.Sprintf(
			"the HorizontalPodAutoscaler needs the API version of kind %q to find its scale subresource, e.g. \"apps/v1\" "+
				"(it is filled in only for Deployment, StatefulSet and ReplicaSet)", ref.Kind)))
	}
	if hpa.MinReplicas != nil && *hpa.MinReplicas < 1 {
		v.fail(field.Invalid(hpaPath.Child("minReplicas"), *hpa.MinReplicas, "must be at least 1: an autoscaled workload keeps at least one replica"))
	}
	if hpa.MaxReplicas < 1 {
		v.fail(field.Invalid(hpaPath.Child("maxReplicas"), hpa.MaxReplicas, "must be at least 1"))
	}
	for i := range hpa.Metrics {
		validateMetric(v, hpaPath.Child("metrics").Index(i), &hpa.Metrics[i])
	}
}

// validateOverlapPolicyChange warns when spa switches to overlapPolicy Forbid while its
// Schedules already overlap.
func validateOverlapPolicyChange(ctx context.Context, v *verdict, spa, old *autoscalingv1alpha1.ScheduledPodAutoscaler, env Env) error {
	becomesForbid := spa.Spec.OverlapPolicy == autoscalingv1alpha1.OverlapPolicyForbid &&
		(old == nil || old.Spec.OverlapPolicy != autoscalingv1alpha1.OverlapPolicyForbid)
	if becomesForbid && env.Objects != nil {
		schedules, err := env.Objects.Schedules(ctx, spa.Namespace, spa.Name)
		if err != nil {
			return err
		}
		book, err := calendarv1alpha1.ReadBook(ctx, env.Objects, spa.Namespace, autoscalingv1alpha1.CalendarsOf(schedules)...)
		if err != nil {
			return err
		}
		a, b, iv, zone, ok, err := firstOverlapAmong(ctx, slices.Clone(schedules), book, env.Now)
		if err != nil {
			return err
		}
		if ok {
			v.warn(fmt.Sprintf("spec.overlapPolicy: Schedules %q and %q already overlap (both are active from %s); Forbid applies to Schedules created or changed from now on, "+
				"so change one of them to remove the overlap", a, b, timing.IntervalText(iv, zone)))
		}
	}
	return nil
}

// validateMetric checks that a metric has the source its type names and a target that fits.
func validateMetric(v *verdict, p *field.Path, m *autoscalingv2.MetricSpec) {
	var (
		target      *autoscalingv2.MetricTarget
		source      string
		utilization bool // whether a Utilization target is allowed
	)
	switch m.Type {
	case autoscalingv2.ResourceMetricSourceType:
		if source = "resource"; m.Resource != nil {
			target, utilization = &m.Resource.Target, true
		}
	case autoscalingv2.ContainerResourceMetricSourceType:
		if source = "containerResource"; m.ContainerResource != nil {
			target, utilization = &m.ContainerResource.Target, true
		}
	case autoscalingv2.PodsMetricSourceType:
		if source = "pods"; m.Pods != nil {
			target = &m.Pods.Target
		}
	case autoscalingv2.ObjectMetricSourceType:
		if source = "object"; m.Object != nil {
			target = &m.Object.Target
		}
	case autoscalingv2.ExternalMetricSourceType:
		if source = "external"; m.External != nil {
			target = &m.External.Target
		}
	default:
		v.fail(field.NotSupported(p.Child("type"), m.Type, []autoscalingv2.MetricSourceType{
			autoscalingv2.ResourceMetricSourceType, autoscalingv2.ContainerResourceMetricSourceType, autoscalingv2.PodsMetricSourceType,
			autoscalingv2.ObjectMetricSourceType, autoscalingv2.ExternalMetricSourceType,
		}))
		return
	}
	if target == nil {
		v.fail(field.Required(p.Child(source), fmt.Sprintf("a metric of type %s describes its source in %s", m.Type, source)))
		return
	}
	tp := p.Child(source, "target")
	switch target.Type {
	case autoscalingv2.UtilizationMetricType:
		switch {
		case !utilization:
			v.fail(field.Invalid(tp.Child("type"), target.Type, fmt.Sprintf("a metric of type %s takes a target of type Value or AverageValue", m.Type)))
		case target.AverageUtilization == nil || *target.AverageUtilization < 1:
			v.fail(field.Required(tp.Child("averageUtilization"), "a Utilization target needs averageUtilization, a percentage of the Pods' requests of at least 1, e.g. 80"))
		}
	case autoscalingv2.AverageValueMetricType:
		if target.AverageValue == nil {
			v.fail(field.Required(tp.Child("averageValue"), "an AverageValue target needs averageValue, a quantity per Pod, e.g. \"500m\""))
		}
	case autoscalingv2.ValueMetricType:
		if target.Value == nil {
			v.fail(field.Required(tp.Child("value"), "a Value target needs value, a quantity, e.g. \"100\""))
		}
	default:
		v.fail(field.NotSupported(tp.Child("type"), target.Type, []autoscalingv2.MetricTargetType{
			autoscalingv2.UtilizationMetricType, autoscalingv2.AverageValueMetricType, autoscalingv2.ValueMetricType,
		}))
	}
}

// scheduleTimingEqual reports whether two Schedules have the same windows and target: then
// an update cannot have made staleness or overlaps worse.
func scheduleTimingEqual(a, b *autoscalingv1alpha1.ScheduleSpec) bool {
	return reflect.DeepEqual(a.Timing(), b.Timing()) && a.ScaleTargetRef.Name == b.ScaleTargetRef.Name && calendarsEqual(a.Calendars, b.Calendars)
}

// maskedWindow returns the window w of Schedule s as the calendars that s names (from book:
// one that does not exist holds the Schedule closed, as in the reconcilers) cut it, for
// comparing it with others. Cutting may split windows: when the cut window opens more windows
// than almanac compares, it returns w itself, which covers all of it (a comparison may then
// find an overlap that the calendars would prevent), and ok is false.
func maskedWindow(w *timing.Window, s *autoscalingv1alpha1.Schedule, book *calendarv1alpha1.Book, now time.Time) (out *timing.Window, ok bool) {
	if w == nil || s.Spec.Calendars.Empty() {
		return w, true
	}
	defer func() {
		if r := recover(); r != nil { // a panic of the engine must not fail the request
			out, ok = w, true
		}
	}()
	spec := s.Spec.Timing()
	spec.Calendars, _ = book.Mask(s.Namespace, s.Spec.Calendars)
	masked, errs := spec.Compile()
	if len(errs) > 0 {
		return w, true // it compiled without its calendars, and the mask is compiled already
	}
	if _, comparable := masked.Comparable(now); !comparable {
		return w, false
	}
	return masked, true
}

type overlap struct {
	name     string
	interval timing.Interval
}

// findOverlaps returns, in the order of siblings, those whose windows overlap w within
// timing.OverlapHorizon from now, and those it could not compare: siblings that open more
// windows than almanac compares (stored without this check), and, past MaxSchedules - 1
// comparisons (more siblings than admission lets an autoscaler have), the rest. Siblings that
// do not compile are skipped: they are never active. Suspended siblings count, because
// unsuspending one is an update that does not check overlaps again. Each sibling's windows
// are cut by its calendars (maskedWindow). It fails only when ctx is done (the API server
// gave up on the request).
func findOverlaps(ctx context.Context, w *timing.Window, siblings []autoscalingv1alpha1.Schedule, book *calendarv1alpha1.Book, now time.Time) ([]overlap, []notCompared, error) {
	var out []overlap
	var skipped []notCompared
	budget := timing.NewBudget(ctx, autoscalingv1alpha1.MaxSchedules-1)
	for i := range siblings {
		sib := &siblings[i]
		sw, errs := sib.Spec.Timing().Compile()
		if len(errs) > 0 {
			continue
		}
		sw, _ = maskedWindow(sw, sib, book, now)
		iv, ok, err := timing.FirstOverlap(budget, w, sw, now, timing.OverlapHorizon)
		var tooMany *timing.TooManyWindowsError
		switch {
		case errors.As(err, &tooMany):
			skipped = append(skipped, notCompared{name: sib.Name, tooManyWindows: true})
		case errors.Is(err, timing.ErrBudgetSpent):
			skipped = append(skipped, notCompared{name: sib.Name})
		case err != nil:
			return nil, nil, err
		case ok:
			out = append(out, overlap{name: sib.Name, interval: iv})
		}
	}
	return out, skipped, nil
}

// notCompared is a sibling whose windows admission did not compare with the new ones.
type notCompared struct {
	name string
	// tooManyWindows: it opens more than timing.MaxWindows windows; otherwise the autoscaler
	// has more Schedules than admission compares.
	tooManyWindows bool
}

// checkWindowCount refuses a window that opens more than timing.MaxWindows windows within
// timing.OverlapHorizon from now: admission compares a Schedule's windows with those of every
// sibling, in proportion to their number. Only a Cron window can open that often. It reports
// whether the window may be compared.
func checkWindowCount(v *verdict, s *autoscalingv1alpha1.Schedule, w *timing.Window, now time.Time) bool {
	if _, ok := w.Comparable(now); ok {
		return true
	}
	days := int(timing.OverlapHorizon / (24 * time.Hour))
	v.failOrWarn(field.Invalid(specPath.Child("schedule"), s.Spec.Schedule, fmt.Sprintf(
		"with a duration of %s, this Cron window opens more than %d separate windows in the next %d days, and a Schedule may open at most %d (one an hour on average): "+
			"almanac compares each Schedule's windows with those of its siblings, which takes too long for windows this frequent. "+
			"Open it at most once an hour (e.g. %q), or give it a duration that reaches the next firing, so that its windows touch and merge into one",
		s.Spec.Duration, timing.MaxWindows, days, timing.MaxWindows, "0 * * * *")),
		fmt.Sprintf("spec.schedule: the Cron window opens more than %d windows in the next %d days, more than almanac compares: its overlaps with other Schedules are not checked",
			timing.MaxWindows, days))
	return false
}

// reportNotCompared says which siblings admission could not compare with a Schedule: under
// overlapPolicy Forbid that refuses it (or warns, when its timing did not change), since
// admission cannot promise that it overlaps none; under Max it is a warning.
func reportNotCompared(v *verdict, target string, forbid bool, skipped []notCompared) {
	var dense, unchecked []string
	for _, n := range skipped {
		if n.tooManyWindows {
			dense = append(dense, strconv.Quote(n.name))
		} else {
			unchecked = append(unchecked, strconv.Quote(n.name))
		}
	}
	var why []string
	if len(dense) > 0 {
		why = append(why, fmt.Sprintf("Schedule %s opens more than %d windows in the next %d days (it was stored without this check): change its schedule or delete it",
			namesText(dense), timing.MaxWindows, timing.OverlapHorizon/(24*time.Hour)))
	}
	if len(unchecked) > 0 {
		why = append(why, fmt.Sprintf("ScheduledPodAutoscaler %q has more than %d Schedules, and admission compares at most %d, so Schedule %s was not compared: delete Schedules whose windows have ended",
			target, autoscalingv1alpha1.MaxSchedules, autoscalingv1alpha1.MaxSchedules-1, namesText(unchecked)))
	}
	if forbid {
		v.failOrWarn(field.Forbidden(specPath, fmt.Sprintf(
			"the windows could not be compared with those of every other Schedule, and ScheduledPodAutoscaler %q has overlapPolicy Forbid, so almanac cannot check that they overlap none: %s; "+
				"or set the autoscaler's overlapPolicy to Max", target, strings.Join(why, "; "))),
			fmt.Sprintf("spec: overlaps with some Schedules were not checked (overlapPolicy Forbid): %s", strings.Join(why, "; ")))
		return
	}
	v.warn(fmt.Sprintf("spec: overlaps with some Schedules were not checked: %s", strings.Join(why, "; ")))
}

// namesText writes quoted names as `"a"`, `"a" and "b"`, or `"a", "b" and 2 more`.
func namesText(quoted []string) string {
	const shown = 3
	switch n := len(quoted); {
	case n == 1:
		return quoted[0]
	case n <= shown:
		return strings.Join(quoted[:n-1], ", ") + " and " + quoted[n-1]
	default:
		return strings.Join(quoted[:shown], ", ") + fmt.Sprintf(" and %d more", n-shown)
	}
}

// firstOverlapAmong returns the first pair of schedules (by name) that overlap, comparing at
// most scaling.MaxComparisons pairs, with their windows cut by their calendars (from book); Schedules that open too many windows to compare are skipped. It fails only when ctx
// is done.
func firstOverlapAmong(ctx context.Context, schedules []autoscalingv1alpha1.Schedule, book *calendarv1alpha1.Book, now time.Time) (a, b string, iv timing.Interval, zone timing.Zone, ok bool, err error) {
	slices.SortFunc(schedules, func(x, y autoscalingv1alpha1.Schedule) int { return strings.Compare(x.Name, y.Name) })
	windows := make([]*timing.Window, len(schedules))
	for i := range schedules {
		if w, _ := schedules[i].Spec.Timing().Compile(); w != nil {
			w, _ = maskedWindow(w, &schedules[i], book, now)
			if _, comparable := w.Comparable(now); comparable {
				windows[i] = w
			}
		}
	}
	budget := timing.NewBudget(ctx, scaling.MaxComparisons)
	for i := range schedules {
		for j := i + 1; j < len(schedules); j++ {
			if windows[i] == nil || windows[j] == nil {
				continue
			}
			iv, found, err := timing.FirstOverlap(budget, windows[i], windows[j], now, timing.OverlapHorizon)
			switch {
			case errors.Is(err, timing.ErrBudgetSpent):
				return "", "", timing.Interval{}, timing.Zone{}, false, nil
			case err != nil:
				return "", "", timing.Interval{}, timing.Zone{}, false, err
			case found:
				return schedules[i].Name, schedules[j].Name, iv, windows[i].Zone(), true, nil
			}
		}
	}
	return "", "", timing.Interval{}, timing.Zone{}, false, nil
}

// verdict collects the errors and warnings of one object. With ratchet set, errors passed to
// failOrWarn become their warning instead.
type verdict struct {
	errs field.ErrorList
	// refused are errors of fields that changed: ratcheting keeps them.
	refused  field.ErrorList
	warnings []string
	ratchet  bool
}

func (v *verdict) fail(err *field.Error) { v.errs = append(v.errs, err) }

// refuse records err whether or not the verdict ratchets: the field it is about changed.
func (v *verdict) refuse(err *field.Error) { v.refused = append(v.refused, err) }

func (v *verdict) warn(w string) {
	if !slices.Contains(v.warnings, w) {
		v.warnings = append(v.warnings, w)
	}
}

// failOrWarn records err, or, when the object's timing did not change in an update, the
// warning instead.
func (v *verdict) failOrWarn(err *field.Error, warning string) {
	if v.ratchet {
		v.warn(warning)
		return
	}
	v.fail(err)
}

// result returns the verdict. When ratcheting, the remaining errors (in fields that did not
// change) are turned into warnings too.
func (v *verdict) result() (field.ErrorList, []string, error) {
	if v.ratchet {
		for _, e := range v.errs {
			v.warn(e.Error() + " (admitted because this field did not change)")
		}
		return v.refused, v.warnings, nil
	}
	return append(v.refused, v.errs...), v.warnings, nil
}
