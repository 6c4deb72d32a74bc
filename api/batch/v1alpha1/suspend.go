package v1alpha1

import (
	"encoding/json"
	"time"

	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
)

// ResumedAt returns when spec.suspend last became false on obj (a ScheduledJob read around
// the manager's cache, which drops managedFields), as the API server recorded it: the time
// of the newest managedFields entry of the object itself (not of a subresource) that owns
// spec.suspend. An Update or apply that changes a field's value takes the field and stamps
// its entry, so when suspend is false and someone owns it, the newest owner's time is at or
// after the write that set it false. false when nobody owns it: suspend was removed rather
// than set to false (a client that omits false), which takes no field and stamps nothing,
// so the time is unknown.
//
// managedFields times are whole seconds and never later than the write, and slots are whole
// minutes, so a slot is after the resume exactly when it is after ResumedAt.
func ResumedAt(obj metav1.Object) (time.Time, bool) { return suspendWrittenAt(obj) }

// SuspendedAt returns, for an object whose spec.suspend is true (a ScheduledJob, EventJob,
// ScheduledPodAutoscaler or Schedule read around the cache), a time at or after the write
// that set it true, by the same rule as ResumedAt: the newest time of a managedFields entry
// that owns spec.suspend (a later write by the same manager that changed another of its
// fields moves it later, never earlier). So "suspended for longer than d" measured from it
// is never claimed early. false when nobody owns spec.suspend.
func SuspendedAt(obj metav1.Object) (time.Time, bool) { return suspendWrittenAt(obj) }

// suspendWrittenAt is the newest time of a managedFields entry of the object itself (not of
// a subresource) that owns spec.suspend.
func suspendWrittenAt(obj metav1.Object) (time.Time, bool) {
	var newest time.Time
	for _, e := range obj.GetManagedFields() {
		if e.Subresource != "" || e.Time == nil || !ownsSuspend(e.FieldsV1) {
			continue
		}
		if t := e.Time.UTC(); t.After(newest) {
			newest = t
		}
	}
	return newest, !newest.IsZero()
}

// ownsSuspend reports whether a managedFields entry's field set holds spec.suspend.
func ownsSuspend(fields *metav1.FieldsV1) bool {
	if fields == nil {
		return false
	}
	var set struct {
		Spec map[string]json.RawMessage `json:"f:spec"`
	}
	if json.Unmarshal(fields.GetRawBytes(), &set) != nil {
		return false
	}
	_, ok := set.Spec["f:suspend"]
	return ok
}
