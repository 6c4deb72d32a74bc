package v1alpha1

import (
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"

	calendarv1alpha1 "github.com/almanac-dev/almanac/api/calendar/v1alpha1"
	"github.com/almanac-dev/almanac/api/conditions"
)

// Condition types and reasons of this API group. Each reason is a CamelCase word that a
// user can search for; the condition's message says what happened and what to do.
const (
	// ConditionReady on a ScheduledJob or EventJob is True when its schedule or trigger can
	// be evaluated and its Jobs can be created; False says why runs cannot start.
	ConditionReady = "Ready"

	// ReasonScheduled: the ScheduledJob's schedule is valid; the message names the next run.
	ReasonScheduled = "Scheduled"
	// ReasonCompleted: the one-shot ScheduledJob has run (or was missed); nothing is due.
	ReasonCompleted = "Completed"
	// ReasonWatching: the EventJob follows its upstream Jobs.
	ReasonWatching = "Watching"
	// ReasonSuspended: spec.suspend is true; no new Job starts, and runs that fall due are
	// not started later.
	ReasonSuspended = "Suspended"
	// ReasonInvalidSchedule: at, schedule or timeZone cannot be evaluated; the message says
	// why. Nothing runs until the spec is fixed (admission normally rejects such input).
	ReasonInvalidSchedule = "InvalidSchedule"
	// ReasonInvalidTrigger: the EventJob's trigger cannot be followed (for example it names
	// the EventJob itself, which would start a run for each of its own runs).
	ReasonInvalidTrigger = "InvalidTrigger"
	// ReasonJobNameTooLong: the Job name derived from the object's name is longer than 63
	// characters; rename the object to at most 52 characters.
	ReasonJobNameTooLong = "JobNameTooLong"
	// ReasonJobConflict: a Job with the run's name exists and is not controlled by this
	// object; almanac leaves it alone and counts the run as not run.
	ReasonJobConflict = "JobConflict"
	// ReasonJobInvalid: the API server rejected the Job built from jobTemplate; the message
	// has its answer. The run is counted as not run.
	ReasonJobInvalid = "JobInvalid"
	// ReasonRequestRefused: the API server refused a request of the run (creating its Job,
	// deleting the Job that concurrencyPolicy Replace replaces; RBAC, an admission webhook or
	// policy, a ResourceQuota); the message has its answer and the fix. The run has not
	// started: almanac tries again about a minute later, at the next slot if sooner, or when
	// the object or its Jobs change, while its starting deadline allows.
	ReasonRequestRefused = conditions.ReasonRequestRefused

	// ConditionRunNow on a ScheduledJob says how its latest run-now request went: True
	// (ReasonRunNowStarted) when a Job started for it, False (ReasonRunNowRefused) when it
	// was refused; the message names the token and the Job or the reason.
	ConditionRunNow = "RunNow"
	// ReasonRunNowStarted: a Job started for the latest run-now token.
	ReasonRunNowStarted = "Started"
	// ReasonRunNowRefused: no Job started for the latest run-now token; the message says why.
	ReasonRunNowRefused = "Refused"

	// ReasonOneShotFailed (condition Stalled): the one-shot's Job failed. Set a new spec.at to
	// run it again.
	ReasonOneShotFailed = "OneShotFailed"
	// ReasonOneShotMissed (condition Stalled): the one-shot could not start before at +
	// startingDeadlineSeconds. Set a new spec.at to run it.
	ReasonOneShotMissed = "OneShotMissed"
)

// The terminal states of this group's kinds: a user must change something (the spec, a Job
// in the way, a calendar) before the object can do what its spec asks. Every reason that the
// reconcilers set with Ready False is terminal, and so is a calendar that cannot be used. A
// refused run-now request (RunNow False) is not: the request was handled, and the schedule
// goes on.
var (
	scheduledJobTerminal = []conditions.Terminal{
		{Type: ConditionReady, Status: metav1.ConditionFalse, Reasons: []string{
			ReasonInvalidSchedule, ReasonJobConflict, ReasonJobInvalid, ReasonJobNameTooLong, ReasonRequestRefused}},
		{Type: calendarv1alpha1.ConditionCalendars, Status: metav1.ConditionFalse, Reasons: []string{
			calendarv1alpha1.ReasonCalendarNotUsable}},
	}
	eventJobTerminal = []conditions.Terminal{
		{Type: ConditionReady, Status: metav1.ConditionFalse, Reasons: []string{
			ReasonInvalidTrigger, ReasonJobConflict, ReasonJobInvalid, ReasonJobNameTooLong, ReasonRequestRefused}},
	}
)

// Stalled returns the ScheduledJob's Stalled condition (conditions.TypeStalled), which
// kstatus reads as Failed, from the rest of its status: a terminal condition, or a one-shot
// that ended Failed or Missed; nil when nothing stalls it. A suspended ScheduledJob is not
// stalled by being suspended: suspension is a state it has reached.
func (st *ScheduledJobStatus) Stalled() *metav1.Condition {
	if c := conditions.Stalled(st.Conditions, scheduledJobTerminal...); c != nil {
		return c
	}
	switch st.Phase {
	case ScheduledJobPhaseFailed:
		return conditions.StalledBy(ReasonOneShotFailed,
			"The one-shot's Job failed: see the Job's conditions and its Pods' logs; set a new spec.at to run it again")
	case ScheduledJobPhaseMissed:
		return conditions.StalledBy(ReasonOneShotMissed,
			"The one-shot was missed: it could not start before at + startingDeadlineSeconds; set a new spec.at to run it")
	}
	return nil
}

// Stalled returns the EventJob's Stalled condition (conditions.TypeStalled), which kstatus
// reads as Failed, from the rest of its status; nil when nothing stalls it.
func (st *EventJobStatus) Stalled() *metav1.Condition {
	return conditions.Stalled(st.Conditions, eventJobTerminal...)
}
