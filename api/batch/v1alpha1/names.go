package v1alpha1

import (
	"crypto/sha256"
	"encoding/hex"
	"fmt"
	"slices"
	"strconv"
	"strings"
	"time"

	"k8s.io/apimachinery/pkg/types"
)

// Labels and annotations that almanac puts on the Jobs it creates. Labels select; annotations
// carry values that are not valid label values (times) or that only humans read. They are
// part of the API: the reconcilers write them, and users, the webhooks and tools read them.
// The annotations are also on the Job's Pod template, so on every Pod of the run: a container
// reads the slot it runs for, or the upstream Job that started it, with the downward API
// (env valueFrom fieldRef metadata.annotations['batch.almanac.dev/scheduled-time']).
const (
	// LabelScheduledJob names the ScheduledJob that created the Job.
	LabelScheduledJob = "batch.almanac.dev/scheduled-job"
	// LabelEventJob names the EventJob that created the Job.
	LabelEventJob = "batch.almanac.dev/event-job"
	// LabelTriggerUID is the UID of the upstream Job that started an EventJob's Job.
	LabelTriggerUID = "batch.almanac.dev/trigger-uid"

	// AnnotationScheduledTime is the nominal time of the slot a ScheduledJob's Job runs,
	// in UTC, RFC 3339 ("2027-03-14T07:00:00Z"): the instant the wall-clock slot resolves to
	// by the DST rule, not the moment the Job was created.
	AnnotationScheduledTime = "batch.almanac.dev/scheduled-time"
	// AnnotationTriggerJob is the name of the upstream Job that started an EventJob's Job.
	AnnotationTriggerJob = "batch.almanac.dev/trigger-job"
	// AnnotationTriggerNamespace is that upstream Job's namespace (the EventJob's).
	AnnotationTriggerNamespace = "batch.almanac.dev/trigger-namespace"
	// AnnotationTriggerUID is the UID of that upstream Job (also a label).
	AnnotationTriggerUID = "batch.almanac.dev/trigger-uid"
	// AnnotationTriggerCondition is the upstream Job's condition that fired: Complete or
	// Failed.
	AnnotationTriggerCondition = "batch.almanac.dev/trigger-condition"
	// AnnotationTriggerTime is when the upstream Job reached that condition, in UTC,
	// RFC 3339.
	AnnotationTriggerTime = "batch.almanac.dev/trigger-time"

	// FinalizerOutcome is on every Job almanac creates until its owner's status records the
	// run (a cron ScheduledJob: lastScheduleTime; an EventJob: the watermark), and, for the
	// Job of a one-shot ScheduledJob, how the Job ended (the phase): a Job deleted before
	// that (ttlSecondsAfterFinished: 0, a user, a namespace cleaner, while status writes fail
	// or the manager is down) stays, being deleted, until almanac has recorded it, so that
	// its run never starts again. almanac removes it right after that status write, when the
	// owner is deleted, and on uninstall (`almanac release`, the chart's pre-delete hook).
	FinalizerOutcome = "batch.almanac.dev/outcome"
)

// MaxJobNameLength is the longest Job name that works: the Job controller copies the name
// into the job-name label of the Job's Pods, and label values have at most 63 characters.
const MaxJobNameLength = 63

// MaxOwnerNameLength is the name budget of a ScheduledJob or EventJob: its Job names are the
// owner's name, a dash and a suffix of at most 10 characters, so that they stay within
// MaxJobNameLength. The validating webhook enforces it; the reconcilers report a longer name
// as a condition instead of creating a Job that cannot run.
const MaxOwnerNameLength = MaxJobNameLength - 1 - suffixLength

// suffixLength is the longest suffix of a Job name: the slot's Unix minute has 8 digits until
// the year 2160 and 10 digits until the year 21000; the trigger hash has 10 characters.
const suffixLength = 10

// ScheduledJobName returns the name of the Job of a ScheduledJob's slot:
// "<owner>-<Unix time of the slot in minutes>", as a CronJob names its Jobs. The slot is the
// nominal instant (after the DST rule), so that every retry, restart or leader change computes
// the same name for the same slot.
func ScheduledJobName(owner string, slot time.Time) string {
	return owner + "-" + strconv.FormatInt(SlotMinute(slot), 10)
}

// SlotMinute is the Unix time of a slot in whole minutes (floored).
func SlotMinute(slot time.Time) int64 {
	sec := slot.Unix()
	if sec < 0 && sec%60 != 0 {
		return sec/60 - 1
	}
	return sec / 60
}

// EventJobName returns the name of the Job that an EventJob starts for an upstream Job:
// "<owner>-<the first 10 hex digits of the SHA-256 of the upstream Job's UID>". UIDs are never
// reused, so each upstream Job has exactly one downstream name.
func EventJobName(owner string, upstream types.UID) string {
	sum := sha256.Sum256([]byte(upstream))
	return owner + "-" + hex.EncodeToString(sum[:])[:suffixLength]
}

// CheckJobName returns an error when name cannot be a Job's name.
func CheckJobName(name, ownerKind, owner string) error {
	if len(name) <= MaxJobNameLength {
		return nil
	}
	return fmt.Errorf("the Job name %q has %d characters, more than the %d that a Job's job-name label allows: "+
		"rename the %s %q to at most %d characters", name, len(name), MaxJobNameLength, ownerKind, owner, MaxOwnerNameLength)
}

// FormatTime formats an instant the way almanac's annotations and messages do: UTC RFC 3339.
func FormatTime(t time.Time) string { return t.UTC().Format(time.RFC3339) }

// ParseTime parses FormatTime's output.
func ParseTime(s string) (time.Time, bool) {
	t, err := time.Parse(time.RFC3339, s)
	if err != nil {
		return time.Time{}, false
	}
	return t.UTC(), true
}

// ParseSlotMinute returns the Unix minute in a name made by ScheduledJobName for owner.
func ParseSlotMinute(owner, name string) (int64, bool) {
	rest, ok := strings.CutPrefix(name, owner+"-")
	if !ok || rest == "" {
		return 0, false
	}
	m, err := strconv.ParseInt(rest, 10, 64)
	return m, err == nil
}

// FinalizerRemoval returns the JSON patch that removes FinalizerOutcome from an object
// whose metadata.finalizers is finalizers, and false when it is not there. The patch tests
// the finalizer's place in the list and removes it, so that it needs no resourceVersion: a
// Job is written by the Job controller too, and a patch conditional on the version read
// would mostly conflict; a change of the list meanwhile fails the test instead, and the
// caller retries. The reconcilers (once a run is recorded) and `almanac release` (on
// uninstall) both remove it this way.
func FinalizerRemoval(finalizers []string) ([]byte, bool) {
	i := slices.Index(finalizers, FinalizerOutcome)
	if i < 0 {
		return nil, false
	}
	path := fmt.Sprintf("/metadata/finalizers/%d", i)
	return fmt.Appendf(nil, `[{"op":"test","path":%q,"value":%q},{"op":"remove","path":%q}]`, path, FinalizerOutcome, path), true
}
