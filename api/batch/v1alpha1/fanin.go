package v1alpha1

import (
	"crypto/sha256"
	"encoding/hex"
	"fmt"
	"strings"
	"time"

	batchv1 "k8s.io/api/batch/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/types"
	"k8s.io/utils/ptr"
)

// Fan-in: an EventJob with spec.triggers starts one Job per set of upstream runs. This file
// holds what the reconciler, admission and the commands must agree on: which triggers an
// EventJob has, the slot of an upstream Job, the keys and Job names of sets, and the
// effective fanIn.

// Annotations of the Job of a set (on the Job and its Pod template, as all of almanac's): the
// set's key, and its upstream runs, in the order of spec.triggers, each list comma-separated.
// A set paired by slot also carries AnnotationScheduledTime, the slot; AnnotationTriggerTime
// is when the run that completed the set ended, and AnnotationTriggerNamespace the namespace.
const (
	// AnnotationFanInSet is the key of the set (FanInSet.Key) that started the Job.
	AnnotationFanInSet = "batch.almanac.dev/fan-in-set"
	// AnnotationTriggerJobs names the upstream Jobs of the set.
	AnnotationTriggerJobs = "batch.almanac.dev/trigger-jobs"
	// AnnotationTriggerUIDs are their UIDs.
	AnnotationTriggerUIDs = "batch.almanac.dev/trigger-uids"
	// AnnotationTriggerConditions say how each ended: Complete or Failed.
	AnnotationTriggerConditions = "batch.almanac.dev/trigger-conditions"
)

// TriggerList returns the EventJob's triggers: spec.triggers, or spec.trigger alone.
func (ej *EventJob) TriggerList() []Trigger {
	if len(ej.Spec.Triggers) > 0 {
		return ej.Spec.Triggers
	}
	if ej.Spec.Trigger == (Trigger{}) {
		return nil
	}
	return []Trigger{ej.Spec.Trigger}
}

// IsFanIn reports whether the EventJob has spec.triggers: one run per set of upstream runs,
// not per upstream Job.
func (ej *EventJob) IsFanIn() bool { return len(ej.Spec.Triggers) > 0 }

// EffectiveFanIn returns spec.fanIn with the defaults of the fields that are omitted (those
// that admission fills in: AllOf, Slot, DefaultFanInHorizonSeconds, Skip).
func (s *EventJobSpec) EffectiveFanIn() FanIn {
	var f FanIn
	if s.FanIn != nil {
		f = *s.FanIn.DeepCopy()
	}
	if f.Require == "" {
		f.Require = FanInAllOf
	}
	if f.PairBy == "" {
		f.PairBy = FanInPairBySlot
	}
	if f.OnFailure == "" {
		f.OnFailure = FanInSkip
	}
	if f.PairBy == FanInPairBySlot && f.HorizonSeconds == nil {
		f.HorizonSeconds = ptr.To(DefaultFanInHorizonSeconds)
	}
	return f
}

// Reach is how long after its time a set takes runs and may complete: windowSeconds for
// pairBy Window, horizonSeconds for pairBy Slot, within their bounds (an object stored before
// a bound existed is read as the bound would have it).
func (f *FanIn) Reach() time.Duration {
	if f.PairBy == FanInPairByWindow {
		return time.Duration(min(max(ptr.Deref(f.WindowSeconds, 1), 1), MaxFanInWindowSeconds)) * time.Second
	}
	s := ptr.Deref(f.HorizonSeconds, DefaultFanInHorizonSeconds)
	return time.Duration(min(max(s, MinFanInHorizonSeconds), MaxFanInHorizonSeconds)) * time.Second
}

// SlotOf returns the nominal slot of an upstream Job: AnnotationScheduledTime (a
// ScheduledJob's Job, or an EventJob's Job of a slot), else the CronJob controller's
// batchv1.CronJobScheduledTimestampAnnotation (RFC 3339 in the CronJob's zone), in UTC.
// A run-now Job (AnnotationRunNowToken) is no slot's run; a Job with neither annotation, or
// one that does not parse, has no slot.
func SlotOf(job metav1.Object) (time.Time, bool) {
	a := job.GetAnnotations()
	if _, ok := a[AnnotationRunNowToken]; ok {
		return time.Time{}, false
	}
	if v, ok := a[AnnotationScheduledTime]; ok {
		return ParseTime(v)
	}
	if v, ok := a[batchv1.CronJobScheduledTimestampAnnotation]; ok {
		return ParseTime(v)
	}
	return time.Time{}, false
}

// SlotSetKey is the key of the set of a slot: the slot in UTC, RFC 3339.
func SlotSetKey(slot time.Time) string { return FormatTime(slot) }

// WindowSetKey is the key of a set paired by window: its first run's condition time and
// UID.
func WindowSetKey(first time.Time, uid types.UID) string {
	return FormatTime(first) + "/" + string(uid)
}

// FanInJobName returns the name of the Job of a set: "<owner>-<the first 10 hex digits of the
// SHA-256 of "fan-in/<key>">", so that every retry, restart or leader change computes the
// same name for the same set, and no set's name is an upstream Job's (EventJobName).
func FanInJobName(owner, key string) string {
	sum := sha256.Sum256([]byte("fan-in/" + key))
	return owner + "-" + hex.EncodeToString(sum[:])[:suffixLength]
}

// maxFanInWatermarkKey is the MaxLength of status.watermark.trigger.
const maxFanInWatermarkKey = 512

// FanInWatermarkKey says which triggers and pairing a status.watermark (and status.fanIn)
// belongs to: "<pairBy>[/<windowSeconds>s]:<WatermarkKey of each trigger, comma-separated>",
// or, when that is longer than the field allows, its SHA-256 in place of the list. When it
// changes, the record starts over; a change of require, onFailure or horizonSeconds keeps the
// open sets, which are judged by the new rule.
func (ej *EventJob) FanInWatermarkKey() string {
	f := ej.Spec.EffectiveFanIn()
	prefix := string(f.PairBy)
	if f.PairBy == FanInPairByWindow {
		prefix += "/" + (time.Duration(ptr.Deref(f.WindowSeconds, 0)) * time.Second).String()
	}
	keys := make([]string, 0, len(ej.Spec.Triggers))
	for i := range ej.Spec.Triggers {
		keys = append(keys, ej.Spec.Triggers[i].WatermarkKey())
	}
	list := strings.Join(keys, ",")
	if key := prefix + ":" + list; len(key) <= maxFanInWatermarkKey {
		return key
	}
	sum := sha256.Sum256([]byte(list))
	return prefix + ":sha256:" + hex.EncodeToString(sum[:])
}

// FanInCondition says when an EventJob with spec.triggers starts a Job, for its Ready
// condition ("Starts a Job once …") and `kubectl almanac next` ("waits until …"): "each of
// ScheduledJob a, ScheduledJob b and CronJob c has a Job that completed, for the same slot (a
// set waits 86400 s after its slot; a Job that ended otherwise skips its set)".
func (ej *EventJob) FanInCondition() string {
	f := ej.Spec.EffectiveFanIn()
	verb := func(t TriggerType) string {
		switch t {
		case TriggerTypeFailed:
			return "failed"
		case TriggerTypeAny:
			return "ended"
		}
		return "completed"
	}
	same := true
	for i := range ej.Spec.Triggers {
		same = same && ej.Spec.Triggers[i].EffectiveType() == ej.Spec.Triggers[0].EffectiveType()
	}
	names := make([]string, 0, len(ej.Spec.Triggers))
	for i := range ej.Spec.Triggers {
		t := &ej.Spec.Triggers[i]
		name := string(t.Kind) + " " + t.Name
		if !same {
			name += " (" + verb(t.EffectiveType()) + ")"
		}
		names = append(names, name)
	}
	list := strings.Join(names, ", ")
	if n := len(names); n > 1 {
		list = strings.Join(names[:n-1], ", ") + " and " + names[n-1]
	}
	which := "each of"
	if f.Require == FanInAnyOf {
		which = "one of"
	}
	if len(names) == 1 {
		which = ""
	} else {
		which += " "
	}
	what := "a Job that ended so"
	if same && len(names) > 0 {
		what = "a Job that " + verb(ej.Spec.Triggers[0].EffectiveType())
	}
	failure := "a Job that ended otherwise skips its set"
	if f.OnFailure == FanInRun {
		failure = "a Job that ended otherwise counts too"
	}
	reach := int64(f.Reach() / time.Second)
	if f.PairBy == FanInPairByWindow {
		return fmt.Sprintf("%s%s has %s, within %d s of the set's first Job (%s)", which, list, what, reach, failure)
	}
	return fmt.Sprintf("%s%s has %s, for the same slot (a set waits %d s after its slot; %s)", which, list, what, reach, failure)
}
