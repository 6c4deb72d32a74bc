package admission

import (
	"context"
	"fmt"
	"slices"
	"strings"
	"time"

	batchv1 "k8s.io/api/batch/v1"
	corev1 "k8s.io/api/core/v1"
	"k8s.io/apimachinery/pkg/runtime/schema"
	"k8s.io/apimachinery/pkg/util/validation/field"
	"k8s.io/utils/ptr"

	batchv1alpha1 "github.com/almanac-dev/almanac/api/batch/v1alpha1"
	"github.com/almanac-dev/almanac/api/timing"
)

// ValidateScheduledJob checks when the ScheduledJob runs (the time zone, at — a valid wall time
// whose starting deadline has not passed — or the cron schedule: parsable, its day forms
// well placed, fires at least once in eight years with its businessDays, no @every or TZ=;
// exactly one of them; businessDays only with a business-day form), and that the name leaves
// room for the Jobs' names. It warns about DST gaps and repeats, legacy zone names, an at in
// the past that is still within its deadline, day forms in both day fields (a day matching
// either fires), calendars named in spec.calendars that do not exist or do not compile
// (checkCalendarReferences), and calendars that leave the business-day forms no day
// (checkBusinessDays); it refuses a calendar named twice in one list. old is nil on
// create. The rules are api/timing's, which the reconciler and `almanac preview` read the
// ScheduledJob with too.
//
// Ratcheting: on update, when at, schedule, timeZone, startingDeadlineSeconds and calendars
// did not change, their problems (a one-shot whose deadline has passed) are warnings.
func ValidateScheduledJob(ctx context.Context, sj, old *batchv1alpha1.ScheduledJob, env Env) (field.ErrorList, []string, error) {
	if sj.DeletionTimestamp != nil {
		return nil, nil, nil
	}
	spec := &sj.Spec
	v := &verdict{ratchet: old != nil && jobTimingEqual(&old.Spec, spec)}

	sched, ferrs := sj.Timing().Compile()
	for _, fe := range ferrs {
		v.fail(field.Invalid(enginePath(fe), fe.Value, fe.Detail))
	}
	switch {
	case sched == nil:
	case sched.FromSchedule:
		// Admission moves such a time to at; one that is still in schedule here was not
		// defaulted.
		v.fail(field.Invalid(specPath.Child("schedule"), spec.Schedule, timing.LegacyHint()))
	case sched.OneShot():
		validateAt(v, spec, sched, env.Now)
	default:
		for _, note := range sched.Cron.DSTNotes(sched.Zone, env.Now) {
			v.warn("spec.schedule: " + note.Message)
		}
		if note := sched.Cron.EitherDayNote(); note != "" {
			v.warn("spec.schedule: " + note)
		}
	}
	if sched != nil && sched.Zone.Warning != "" {
		v.warn("spec.timeZone: " + sched.Zone.Warning)
	}
	book, err := checkCalendarReferences(ctx, v, sj.Namespace, spec.Calendars, env)
	if err != nil {
		return nil, nil, err
	}
	if sched != nil && book != nil && sched.Cron.CountsBusinessDays() {
		masked, _ := sj.TimingWith(book)
		if withCalendars, ferrs := masked.Compile(); len(ferrs) == 0 {
			checkBusinessDays(ctx, v, withCalendars.Cron, withCalendars.Zone, env.Now)
		}
	}
	errs, warnings, _ := v.result()
	errs = append(errs, validateJobOwner(sj.Name, "ScheduledJob", "the slot: the Unix minute of the run", old == nil, &warnings)...)
	if token, ok := sj.Annotations[batchv1alpha1.AnnotationRunNow]; ok && (old == nil || batchv1alpha1.RunNowToken(old) != token) {
		if err := batchv1alpha1.CheckRunNowToken(token); err != nil {
			errs = append(errs, field.Invalid(batchv1alpha1.RunNowPath, token, err.Error()))
		}
	}
	var oldTemplate *corev1.PodTemplateSpec
	if old != nil {
		oldTemplate = &old.Spec.JobTemplate.Spec.Template
	}
	errs = append(errs, validateRestartPolicy(&spec.JobTemplate.Spec.Template, oldTemplate)...)
	return errs, warnings, nil
}

// validateAt checks a one-shot ScheduledJob's at by the starting-deadline rule that the
// reconciler applies (timing.WithinDeadline): it is rejected exactly when the reconciler would
// no longer start it.
func validateAt(v *verdict, spec *batchv1alpha1.ScheduledJobSpec, sched *timing.JobSchedule, now time.Time) {
	p := specPath.Child("at")
	zone, due, deadlineSeconds := sched.Zone, sched.Due, spec.StartingDeadline()
	switch {
	case !timing.WithinDeadline(due, now, deadlineSeconds):
		v.failOrWarn(field.Invalid(p, spec.At, fmt.Sprintf(
			"the run was due at %s and could start until %s (startingDeadlineSeconds: %d), before now (%s), so the Job would never run: "+
				"set at to a future wall time in %s, e.g. %q",
			timing.InstantText(due, zone), timing.SecondText(timing.LastStart(due, deadlineSeconds), zone), deadlineSeconds, timing.SecondText(now, timing.Zone{}),
			zone.Name, timing.HourAfter(now, zone.Location).String())),
			fmt.Sprintf("spec.at: the run was due at %s and its starting deadline has passed: this ScheduledJob will not run again; delete it when it is no longer needed",
				timing.InstantText(due, zone)))
		return
	case !due.After(now):
		v.warn(fmt.Sprintf("spec.at: %s is in the past, but within startingDeadlineSeconds (%d): the Job starts right away", timing.InstantText(due, zone), deadlineSeconds))
	}
	if note, ok := sched.At.DSTNote(zone, "at", "the Job runs"); ok {
		v.warn("spec.at: " + note.Message)
	}
}

// ValidateEventJob checks that the name leaves room for the Jobs' names and that the
// triggers keep the rule of EventJob chains (batchv1alpha1.CheckTriggerChain): none names
// this EventJob, they close no cycle of EventJobs (A triggers on B, B on A), and neither this
// EventJob's chains of EventJob triggers nor those of an EventJob below it are longer than
// batchv1alpha1.MaxTriggerChain; and it warns when a trigger's object does not exist. old is
// nil on create; on update the chain is checked when a trigger changed. What the schema says
// of spec.triggers and spec.fanIn (how many, each upstream once, the bounds) is the schema's.
func ValidateEventJob(ctx context.Context, ej, old *batchv1alpha1.EventJob, env Env) (field.ErrorList, []string, error) {
	if ej.DeletionTimestamp != nil {
		return nil, nil, nil
	}
	var (
		errs     field.ErrorList
		warnings []string
	)
	triggerChanged := old == nil || old.Spec.Trigger != ej.Spec.Trigger || !slices.Equal(old.Spec.Triggers, ej.Spec.Triggers)
	if triggerChanged {
		for i, t := range ej.TriggerList() {
			if t.Kind == batchv1alpha1.TriggerKindEventJob && t.Name == ej.Name && t.Group() == batchv1alpha1.GroupVersion.Group {
				errs = append(errs, field.Invalid(triggerPath(ej, i).Child("name"), t.Name,
					"an EventJob cannot trigger on itself: each of its Jobs would start another one, forever; trigger on the Job, CronJob, ScheduledJob or EventJob that should start it"))
			}
		}
	}
	if env.Objects != nil && len(errs) == 0 {
		for i, t := range ej.TriggerList() {
			gv, _ := schema.ParseGroupVersion(t.APIVersion)
			exists, err := env.Objects.Exists(ctx, gv.WithKind(string(t.Kind)), ej.Namespace, t.Name)
			if err != nil {
				return nil, nil, err
			}
			if !exists {
				warnings = append(warnings, fmt.Sprintf("%s: %s %q does not exist in namespace %q: the EventJob starts no Job until it exists and %s",
					triggerPath(ej, i).Child("name"), t.Kind, t.Name, ej.Namespace, triggerRuns(ej, t.Kind)))
			}
		}
		if triggerChanged {
			problem, err := batchv1alpha1.CheckTriggerChain(ej,
				func(name string) (*batchv1alpha1.EventJob, error) {
					return env.Objects.EventJob(ctx, ej.Namespace, name)
				},
				func(name string) ([]*batchv1alpha1.EventJob, error) {
					return env.Objects.EventJobFollowers(ctx, ej.Namespace, name)
				})
			if err != nil {
				return nil, nil, err
			}
			if problem != nil {
				errs = append(errs, triggerChainError(ej, problem))
			}
		}
	}
	if ej.IsFanIn() && triggerChanged {
		warnings = append(warnings, fanInWarnings(ej)...)
	}
	suffix := "derived from the upstream Job's UID"
	if ej.IsFanIn() {
		suffix = "derived from the set's slot or first run"
	}
	errs = append(errs, validateJobOwner(ej.Name, "EventJob", suffix, old == nil, &warnings)...)
	var oldTemplate *corev1.PodTemplateSpec
	if old != nil {
		oldTemplate = &old.Spec.JobTemplate.Spec.Template
	}
	errs = append(errs, validateRestartPolicy(&ej.Spec.JobTemplate.Spec.Template, oldTemplate)...)
	return errs, warnings, nil
}

// triggerPath is the field path of ej's ith trigger: spec.trigger, or spec.triggers[i].
func triggerPath(ej *batchv1alpha1.EventJob, i int) *field.Path {
	if ej.IsFanIn() {
		return specPath.Child("triggers").Index(i)
	}
	return specPath.Child("trigger")
}

// fanInWarnings warns of triggers whose runs a fan-in by slot cannot pair: a named Job carries
// a slot only if whoever created it wrote one.
func fanInWarnings(ej *batchv1alpha1.EventJob) []string {
	if ej.Spec.EffectiveFanIn().PairBy != batchv1alpha1.FanInPairBySlot {
		return nil
	}
	var out []string
	for i, t := range ej.Spec.Triggers {
		if t.Kind == batchv1alpha1.TriggerKindJob {
			out = append(out, fmt.Sprintf("%s: Job %q pairs by slot only if it carries the annotation %s or %s; a Job without a slot starts nothing "+
				"(name the CronJob or ScheduledJob that creates it, or pair by window: fanIn.pairBy: Window)",
				triggerPath(ej, i).Child("kind"), t.Name, batchv1alpha1.AnnotationScheduledTime, batchv1.CronJobScheduledTimestampAnnotation))
		}
	}
	return out
}

// triggerChainError is the refusal of an EventJob whose triggers close a cycle or make a
// chain of EventJob triggers longer than batchv1alpha1.MaxTriggerChain: its own chain, or the
// chain of an EventJob below it (this EventJob was added or moved upstream of it).
func triggerChainError(ej *batchv1alpha1.EventJob, p *batchv1alpha1.TriggerChainError) *field.Error {
	// The path of the trigger the problem goes through: the EventJob after this one on the
	// cycle or chain, or the first EventJob trigger.
	at := ej.Name
	switch {
	case len(p.Cycle) > 1:
		at = p.Cycle[1]
	case p.Chain != nil && p.Below+1 < len(p.Chain):
		at = p.Chain[p.Below+1]
	}
	namePath, value := specPath.Child("trigger", "name"), ej.Spec.Trigger.Name
	for i, t := range ej.TriggerList() {
		if t.Kind == batchv1alpha1.TriggerKindEventJob && (t.Name == at || at == ej.Name) {
			namePath, value = triggerPath(ej, i).Child("name"), t.Name
			break
		}
	}
	switch {
	case p.Unchecked:
		return field.Invalid(namePath, value, batchv1alpha1.UncheckedText+
			": trigger on fewer EventJobs, or on the Jobs, CronJobs or ScheduledJobs that start them")
	case p.Cycle != nil:
		return field.Invalid(namePath, value, fmt.Sprintf(
			"this trigger closes a cycle: %s; each Job would start the next one, forever: trigger on an object outside the cycle",
			batchv1alpha1.CycleText(p.Cycle)))
	case p.Below == 0:
		return field.Invalid(namePath, value, fmt.Sprintf(
			"the chain of EventJob triggers from this EventJob is %s long, more than the %d EventJobs that may trigger one after another: %s; "+
				"trigger on an EventJob nearer the start of the chain, or on the Job, CronJob or ScheduledJob that starts it",
			p.LengthText(), batchv1alpha1.MaxTriggerChain, batchv1alpha1.ChainText(p.Chain, p.AtLeast)))
	}
	detail := fmt.Sprintf(
		"with this EventJob, the chain of EventJob triggers from EventJob %q, %s below it, would be %s long, more than the %d EventJobs that may trigger one after another: %s; "+
			"trigger this EventJob, or one of the EventJobs between, on an object nearer the start of the chain (the Job, CronJob or ScheduledJob that starts it), "+
			"so that no EventJob is more than %d from the start",
		p.Chain[0], plural(p.Below, "EventJob"), p.LengthText(), batchv1alpha1.MaxTriggerChain, batchv1alpha1.ChainText(p.Chain, p.AtLeast), batchv1alpha1.MaxTriggerChain)
	if ej.TriggersOnEventJob() {
		return field.Invalid(namePath, value, detail)
	}
	// Its own trigger is no EventJob: what lengthens the chain below is that it exists, under
	// the name the EventJobs below trigger on.
	return field.Invalid(field.NewPath("metadata", "name"), ej.Name, detail+", or give this EventJob another name")
}

func triggerRuns(ej *batchv1alpha1.EventJob, kind batchv1alpha1.TriggerKind) string {
	switch {
	case ej.IsFanIn() && kind == batchv1alpha1.TriggerKindJob:
		return "ends"
	case ej.IsFanIn():
		return "one of its Jobs ends"
	case kind == batchv1alpha1.TriggerKindJob:
		return "reaches the trigger condition"
	}
	return "one of its Jobs reaches the trigger condition"
}

// validateJobOwner checks, on create, that the name of a ScheduledJob or EventJob leaves room
// for its Jobs' names: "<name>-<suffix>" must fit the 63-character job-name label. On update
// (the name cannot change) a name that is too long is a warning.
func validateJobOwner(name, kind, suffix string, create bool, warnings *[]string) field.ErrorList {
	if len(name) <= batchv1alpha1.MaxOwnerNameLength {
		return nil
	}
	over := len(name) - batchv1alpha1.MaxOwnerNameLength
	detail := fmt.Sprintf("%d characters, but %s name may have at most %d: its Jobs are named \"<name>-<suffix>\" with a suffix of up to 10 characters (%s), "+
		"and a Job's name must fit the %d-character job-name label of its Pods; shorten the name by %s",
		len(name), withArticle(kind+"'s"), batchv1alpha1.MaxOwnerNameLength, suffix, batchv1alpha1.MaxJobNameLength, plural(over, "character"))
	if !create {
		*warnings = append(*warnings, "metadata.name: "+detail+" (recreate it under a shorter name)")
		return nil
	}
	return field.ErrorList{&field.Error{Type: field.ErrorTypeTooLong, Field: "metadata.name", BadValue: name, Detail: detail}}
}

func withArticle(noun string) string {
	if strings.ContainsRune("AEIOU", rune(noun[0])) {
		return "an " + noun
	}
	return "a " + noun
}

func plural(n int, noun string) string {
	if n == 1 {
		return "1 " + noun
	}
	return fmt.Sprintf("%d %ss", n, noun)
}

// validateRestartPolicy rejects a Job template whose Pods would restart forever: the Job API
// takes only OnFailure and Never, and would refuse the Job when almanac creates it, long after
// admission. A policy unchanged by an update is not checked again.
func validateRestartPolicy(t, old *corev1.PodTemplateSpec) field.ErrorList {
	policy := t.Spec.RestartPolicy
	if policy == corev1.RestartPolicyOnFailure || policy == corev1.RestartPolicyNever || (old != nil && old.Spec.RestartPolicy == policy) {
		return nil
	}
	p := specPath.Child("jobTemplate", "spec", "template", "spec", "restartPolicy")
	const why = "a Job's Pods restart OnFailure or Never (the Job API refuses other values when almanac creates the Job)"
	if policy == "" {
		return field.ErrorList{field.Required(p, why+`: set restartPolicy: OnFailure or Never`)}
	}
	return field.ErrorList{&field.Error{Type: field.ErrorTypeNotSupported, Field: p.String(), BadValue: string(policy),
		Detail: `supported values: "OnFailure", "Never": ` + why}}
}

// jobTimingEqual reports whether two ScheduledJobs run at the same times.
func jobTimingEqual(a, b *batchv1alpha1.ScheduledJobSpec) bool {
	return a.At == b.At && a.Schedule == b.Schedule && a.TimeZone == b.TimeZone && a.Spread == b.Spread && slices.Equal(a.BusinessDays, b.BusinessDays) &&
		ptr.Equal(a.StartingDeadlineSeconds, b.StartingDeadlineSeconds) && calendarsEqual(a.Calendars, b.Calendars)
}
