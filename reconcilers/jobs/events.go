package jobs

import (
	"fmt"
	"unicode/utf8"

	"k8s.io/apimachinery/pkg/runtime"
	"k8s.io/client-go/tools/events"
)

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
	// EventJobsReplaced (Normal): running Jobs were deleted for a new run (Replace).
	EventJobsReplaced = "JobsReplaced"
	// EventJobPruned (Normal): a finished Job was deleted by the history limits.
	EventJobPruned = "JobPruned"
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

// MaxNote is the longest note an events.k8s.io/v1 Event may have: the API server refuses a
// longer Event, and the recorder drops it (it does not retry). A condition's message, which
// may be up to four times as long, is often an event's note too.
const MaxNote = 1024

// ShortNotes returns r cutting every note to MaxNote bytes (at a character's boundary, ending
// in "…"), so that an event whose note is long is recorded shortened rather than lost.
func ShortNotes(r events.EventRecorder) events.EventRecorder { return shortNotes{r} }

type shortNotes struct{ events.EventRecorder }

func (r shortNotes) Eventf(regarding, related runtime.Object, eventtype, reason, action, note string, args ...any) {
	msg := fmt.Sprintf(note, args...)
	if len(msg) > MaxNote {
		const ellipsis = "…"
		cut := MaxNote - len(ellipsis)
		for cut > 0 && !utf8.RuneStart(msg[cut]) {
			cut--
		}
		msg = msg[:cut] + ellipsis
	}
	r.EventRecorder.Eventf(regarding, related, eventtype, reason, action, "%s", msg)
}
