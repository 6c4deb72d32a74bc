package jobs

// Reasons of the Events that the ScheduledJob and EventJob reconcilers record on their
// objects. Condition reasons live with the API types in api/batch/v1alpha1.
const (
	// EventScheduled (Normal): a one-shot will run at the instant in the message.
	EventScheduled = "Scheduled"
	// EventJobCreated (Normal): a Job was created for a slot or an upstream Job.
	EventJobCreated = "JobCreated"
	// EventJobSucceeded (Normal): a Job completed.
	EventJobSucceeded = "JobSucceeded"
	// EventJobFailed (Warning): a Job failed.
	EventJobFailed = "JobFailed"
	// EventJobDeleted (Warning): a one-shot's Job was deleted before it finished.
	EventJobDeleted = "JobDeleted"
	// EventRunsMissed (Warning): runs were not started because their deadline passed (the
	// controller was not running in time) or a later catch-up run replaced them.
	EventRunsMissed = "RunsMissed"
	// EventRunSkipped (Normal): a due run was not started because of concurrencyPolicy
	// Forbid or suspend.
	EventRunSkipped = "RunSkipped"
	// EventRunNowRefused (Warning): a run-now request started no Job (concurrencyPolicy
	// Forbid while a Job runs, a Job of its name that is not ours, a token that admission
	// would refuse); the RunNow condition says the same.
	EventRunNowRefused = "RunNowRefused"
	// EventJobsReplaced (Normal): running Jobs were deleted for a new run (Replace).
	EventJobsReplaced = "JobsReplaced"
	// EventJobPruned (Normal): a finished Job was deleted by the history limits.
	EventJobPruned = "JobPruned"
	// EventSetFailed (Warning): a set of an EventJob's triggers started no Job, because an
	// upstream run of it ended without its trigger's outcome (fanIn.onFailure Skip).
	EventSetFailed = "SetFailed"
	// EventSetExpired (Warning): a set of an EventJob's triggers was not complete within its
	// horizon (or window), or was closed early because too many sets were open.
	EventSetExpired = "SetExpired"
	// EventRunUnpaired (Warning): an upstream Job of an EventJob that pairs by slot has no
	// slot, so it joins no set.
	EventRunUnpaired = "RunUnpaired"
	// EventInvalidSchedule, EventInvalidTrigger, EventJobConflict, EventJobInvalid and
	// EventJobNameTooLong (Warning) repeat the Ready condition's reason.
	EventInvalidSchedule = "InvalidSchedule"
	EventInvalidTrigger  = "InvalidTrigger"
	EventJobConflict     = "JobConflict"
	EventJobInvalid      = "JobInvalid"
	EventJobNameTooLong  = "JobNameTooLong"
)

// Actions of those Events (events.k8s.io/v1 requires one).
const (
	ActionCreate   = "Create"
	ActionDelete   = "Delete"
	ActionSchedule = "Schedule"
	ActionObserve  = "Observe"
	ActionSkip     = "Skip"
)
