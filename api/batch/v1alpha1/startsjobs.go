package v1alpha1

import (
	batchv1 "k8s.io/api/batch/v1"
	"k8s.io/apimachinery/pkg/api/equality"
	"k8s.io/apimachinery/pkg/util/validation/field"
)

// Who may make almanac start a Job. A ScheduledJob or EventJob makes the manager create Jobs,
// from a template and at times that whoever wrote it chose; the webhooks' permission check
// admits such a write only from a user who may create those Jobs directly (`create jobs` in the
// namespace). This file is the one rule of which writes those are, for the webhook and for
// what `almanac validate` and the docs say about it.
//
// The rule: creating the object, and every update that can start a Job that the stored object
// would not have started, or start one sooner. That is a change of spec.jobTemplate (what runs);
// of anything that says when or upon what it runs (at, schedule, timeZone,
// startingDeadlineSeconds, spread, calendars; an EventJob's trigger, triggers and fanIn), since moving a run to
// now, or to a minute from now, is starting a Job; a resume (suspend set to false); a
// concurrencyPolicy that lets a run start beside or instead of a running Job (Allow, Replace);
// and a new run-now token. A field this rule does not name counts as one that starts Jobs, so
// that a field added later is checked until it is known not to. What can only start fewer
// Jobs, or none, is free: metadata (labels, annotations but the run-now token), suspend set to
// true, concurrencyPolicy set to Forbid, and the history limits (which delete finished Jobs).

// StartsJobsText says the rule in a sentence, for `almanac validate` and the docs.
const StartsJobsText = "on create, and on every update that can start a Job sooner or that the stored object would not have started: " +
	"a change of spec.jobTemplate, of when or upon what it runs (at, schedule, timeZone, startingDeadlineSeconds, spread, calendars, an EventJob's trigger, triggers and fanIn), " +
	"a resume (suspend: false), concurrencyPolicy set to Allow or Replace, or a new run-now token; " +
	"labels, annotations, suspend: true, concurrencyPolicy: Forbid and the history limits are free"

var (
	specPath        = field.NewPath("spec")
	jobTemplatePath = specPath.Child("jobTemplate")
)

// StartsJobs returns the field whose write, from old to sj, lets almanac start a Job that old
// would not have started (see the rule above), or nil when the write starts none: on create
// (old nil) spec.jobTemplate; on update the first such field that changed. Fields are compared
// after defaulting, with apimachinery's semantic equality (1000m equals 1, an empty list none).
func (sj *ScheduledJob) StartsJobs(old *ScheduledJob) *field.Path {
	if old == nil {
		return jobTemplatePath
	}
	if token := RunNowToken(sj); token != "" && token != RunNowToken(old) {
		// A run-now request is a Job created now.
		return RunNowPath
	}
	n, o := &sj.Spec, &old.Spec
	if p := policyStartsJobs(&n.JobPolicy, &o.JobPolicy); p != nil {
		return p
	}
	for _, f := range []struct {
		name    string
		changed bool
	}{
		{"at", n.At != o.At},
		{"schedule", n.Schedule != o.Schedule},
		{"timeZone", n.TimeZone != o.TimeZone},
		{"startingDeadlineSeconds", !equality.Semantic.DeepEqual(n.StartingDeadlineSeconds, o.StartingDeadlineSeconds)},
		{"spread", n.Spread != o.Spread},
		{"calendars", !equality.Semantic.DeepEqual(n.Calendars, o.Calendars)},
	} {
		if f.changed {
			return specPath.Child(f.name)
		}
	}
	// Any other field: checked unless it is one of the free ones.
	rest, prev := n.DeepCopy(), o.DeepCopy()
	rest.JobPolicy, prev.JobPolicy = JobPolicy{}, JobPolicy{}
	if !equality.Semantic.DeepEqual(rest, prev) {
		return specPath
	}
	return nil
}

// StartsJobs is ScheduledJob.StartsJobs for an EventJob: its trigger, or its triggers and
// fanIn, say upon what it runs.
func (ej *EventJob) StartsJobs(old *EventJob) *field.Path {
	if old == nil {
		return jobTemplatePath
	}
	n, o := &ej.Spec, &old.Spec
	if p := policyStartsJobs(&n.JobPolicy, &o.JobPolicy); p != nil {
		return p
	}
	for _, f := range []struct {
		name    string
		changed bool
	}{
		{"trigger", !equality.Semantic.DeepEqual(n.Trigger, o.Trigger)},
		{"triggers", !equality.Semantic.DeepEqual(n.Triggers, o.Triggers)},
		// Any change of how sets are made or judged can start a run sooner or one the stored
		// object would not have started (AnyOf, Run, a longer horizon).
		{"fanIn", !equality.Semantic.DeepEqual(n.FanIn, o.FanIn)},
	} {
		if f.changed {
			return specPath.Child(f.name)
		}
	}
	rest, prev := n.DeepCopy(), o.DeepCopy()
	rest.JobPolicy, prev.JobPolicy = JobPolicy{}, JobPolicy{}
	rest.Trigger, prev.Trigger = Trigger{}, Trigger{}
	rest.Triggers, prev.Triggers = nil, nil
	rest.FanIn, prev.FanIn = nil, nil
	if !equality.Semantic.DeepEqual(rest, prev) {
		return specPath
	}
	return nil
}

// policyStartsJobs applies the rule to the fields that ScheduledJob and EventJob share.
func policyStartsJobs(n, o *JobPolicy) *field.Path {
	if !equality.Semantic.DeepEqual(n.JobTemplate, o.JobTemplate) {
		return jobTemplatePath
	}
	if o.Suspend && !n.Suspend {
		return specPath.Child("suspend")
	}
	if n.ConcurrencyPolicy != o.ConcurrencyPolicy && n.ConcurrencyPolicy != ConcurrencyPolicyForbid {
		return specPath.Child("concurrencyPolicy")
	}
	// Any other field of the policy: checked unless it is one of the free ones.
	rest, prev := n.DeepCopy(), o.DeepCopy()
	for _, p := range []*JobPolicy{rest, prev} {
		p.JobTemplate, p.Suspend, p.ConcurrencyPolicy = batchv1.JobTemplateSpec{}, false, ""
		p.SuccessfulJobsHistoryLimit, p.FailedJobsHistoryLimit = nil, nil
	}
	if !equality.Semantic.DeepEqual(rest, prev) {
		return specPath
	}
	return nil
}
