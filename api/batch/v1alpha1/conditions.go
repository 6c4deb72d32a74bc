package v1alpha1

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

	// ConditionRunNow on a ScheduledJob says how its latest run-now request went: True
	// (ReasonRunNowStarted) when a Job started for it, False (ReasonRunNowRefused) when it
	// was refused; the message names the token and the Job or the reason.
	ConditionRunNow = "RunNow"
	// ReasonRunNowStarted: a Job started for the latest run-now token.
	ReasonRunNowStarted = "Started"
	// ReasonRunNowRefused: no Job started for the latest run-now token; the message says why.
	ReasonRunNowRefused = "Refused"
)
