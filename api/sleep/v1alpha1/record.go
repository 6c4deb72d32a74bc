package v1alpha1

import (
	"encoding/json"
	"fmt"
	"slices"
	"strings"
	"time"

	"k8s.io/apimachinery/pkg/runtime/schema"
)

// What a sleep leaves on a workload, and what it reads there. The record of what a workload
// was before it slept is an annotation on the workload itself, written in the same request
// that puts it to sleep (a patch under almanac's field manager, with the workload's
// resourceVersion as a precondition), so it lives exactly as long as the workload: a
// restart, a leader change, an upgrade or a reinstall of almanac reads it back, and a
// workload deleted during sleep takes its record with it.
const (
	// RecordAnnotation holds a workload's Record (JSON) while a sleep holds it asleep.
	RecordAnnotation = "almanac.dev/asleep"
	// StayAwakeAnnotation opts a workload (or, for ClusterSleeps, a whole namespace) out of
	// sleep: "true" for good, or an RFC 3339 instant until which it stays awake
	// ("2027-09-01T18:00:00Z"). A workload that sleeps wakes as soon as it is annotated.
	// Any other value opts out too (for good) and is reported, so that a typo never puts to
	// sleep what someone meant to keep awake.
	StayAwakeAnnotation = "almanac.dev/stay-awake"
	// Finalizer is on every Sleep and ClusterSleep that holds workloads: before it goes, the
	// reconciler wakes every workload it holds, at once (no tiers, no pace).
	Finalizer = "almanac.dev/wake"
)

// FinalizerRemoval returns the JSON patch that removes Finalizer from an object whose
// finalizers are these (tested at its index, so that a concurrent change fails it rather than
// removing another finalizer); false when it is not there. `almanac release` removes it once it
// has woken everything, as the reconciler does once a sleep being deleted holds nothing.
func FinalizerRemoval(finalizers []string) ([]byte, bool) {
	i := slices.Index(finalizers, Finalizer)
	if i < 0 {
		return nil, false
	}
	p := fmt.Sprintf("/metadata/finalizers/%d", i)
	raw, _ := json.Marshal([]map[string]string{{"op": "test", "path": p, "value": Finalizer}, {"op": "remove", "path": p}})
	return raw, true
}

// KEDA's annotations on a ScaledObject (github.com/kedacore/keda/v2/apis/keda/v1alpha1):
// paused-replicas scales the workload to that count and pauses autoscaling until it is
// removed; paused pauses autoscaling where the workload is.
const (
	KEDAPausedReplicasAnnotation = "autoscaling.keda.sh/paused-replicas"
	KEDAPausedAnnotation         = "autoscaling.keda.sh/paused"
)

// RecordVersion is the version of the Record format that this almanac writes; an almanac
// reads every version it ever wrote (an upgrade during sleep wakes what the old one put to
// sleep).
const RecordVersion = 1

// Record is what a workload was before it slept, and who holds it asleep. It is not an API
// object: it is the JSON of RecordAnnotation.
//
// +kubebuilder:object:generate=false
type Record struct {
	// Version of the format (RecordVersion).
	Version int `json:"v"`
	// By is the holder: "Sleep/<namespace>/<name>" or "ClusterSleep/<name>" (Holder).
	By string `json:"by"`
	// At is when it was put to sleep.
	At time.Time `json:"at"`
	// Replicas is what a workload that scales had (spec.replicas, or its scale
	// subresource's): what it wakes to.
	Replicas *int32 `json:"replicas,omitempty"`
	// Suspend is what a CronJob, ScheduledJob or EventJob had in spec.suspend.
	Suspend *bool `json:"suspend,omitempty"`
	// PausedReplicas is a ScaledObject's KEDAPausedReplicasAnnotation before it slept: nil
	// when it had none.
	PausedReplicas *string `json:"pausedReplicas,omitempty"`
	// PutBacks are the instants at which almanac put the workload back to sleep after
	// another field manager woke it (the bounded put-back rule, api/putback), within the
	// rule's window.
	PutBacks []time.Time `json:"putBacks,omitempty"`
	// Contested is set once almanac stopped putting it back: another manager keeps it
	// awake, until the holder's spec changes or its sleep ends.
	Contested *Contest `json:"contested,omitempty"`
}

// Contest is who keeps a workload awake against its sleep.
//
// +kubebuilder:object:generate=false
type Contest struct {
	// Manager is the other field manager ("" when managedFields did not say).
	Manager string `json:"manager,omitempty"`
	// Field is the field it wrote.
	Field string `json:"field"`
	// Generation is the holder's metadata.generation when almanac stopped: a new
	// generation (a spec change) resumes the put-backs.
	Generation int64 `json:"generation"`
}

// Encode returns the annotation value of r.
func (r *Record) Encode() string {
	r.Version = RecordVersion
	raw, _ := json.Marshal(r)
	return string(raw)
}

// DecodeRecord reads a workload's record from its annotations: nil when it has none, an
// error when the annotation does not hold a record (someone edited it): such a workload is
// reported and left alone, since what it was before it slept is not known.
func DecodeRecord(annotations map[string]string) (*Record, error) {
	v, ok := annotations[RecordAnnotation]
	if !ok {
		return nil, nil
	}
	r := &Record{}
	if err := json.Unmarshal([]byte(v), r); err != nil || r.By == "" || r.Version < 1 {
		if err == nil {
			err = fmt.Errorf("no holder or version")
		}
		return nil, fmt.Errorf("annotation %s does not hold almanac's record (%v): almanac does not know what the workload was before it slept, so it leaves it alone; "+
			"set its replicas (or suspend) back by hand and remove the annotation", RecordAnnotation, err)
	}
	return r, nil
}

// Holds reports whether a workload with these annotations is held asleep by a Sleep or
// ClusterSleep. It is the one rule between sleeps and ScheduledPodAutoscalers: while a
// workload is held asleep, an autoscaler attached to it through its scale subresource writes
// nothing to it (the sleep wins, so almanac never fights itself); at wake the sleep puts back
// the replicas it recorded, and the autoscaler then applies its bounds as at any other time.
// An autoscaler that writes an HPA or a ScaledObject never meets a sleep on the same field:
// an HPA does not act on a workload at 0 replicas, and KEDA's paused-replicas annotation
// outranks a ScaledObject's bounds.
func Holds(annotations map[string]string) bool {
	_, ok := annotations[RecordAnnotation]
	return ok
}

// Holder names the Sleep (namespace set) or ClusterSleep (namespace empty) called name, as
// Record.By does.
func Holder(namespace, name string) string {
	if namespace == "" {
		return KindClusterSleep + "/" + name
	}
	return KindSleep + "/" + namespace + "/" + name
}

// ParseHolder is the inverse of Holder.
func ParseHolder(by string) (kind, namespace, name string, ok bool) {
	parts := strings.Split(by, "/")
	switch {
	case len(parts) == 2 && parts[0] == KindClusterSleep && parts[1] != "":
		return KindClusterSleep, "", parts[1], true
	case len(parts) == 3 && parts[0] == KindSleep && parts[1] != "" && parts[2] != "":
		return KindSleep, parts[1], parts[2], true
	}
	return "", "", "", false
}

// StayAwake reads the opt-out annotation at now: whether it keeps the object awake, until
// when (zero: for good), and a problem with its value (which opts out for good).
func StayAwake(annotations map[string]string, now time.Time) (awake bool, until time.Time, problem string) {
	v, ok := annotations[StayAwakeAnnotation]
	if !ok {
		return false, time.Time{}, ""
	}
	switch strings.TrimSpace(strings.ToLower(v)) {
	case "true", "yes", "":
		return true, time.Time{}, ""
	case "false", "no":
		return false, time.Time{}, ""
	}
	t, err := time.Parse(time.RFC3339, strings.TrimSpace(v))
	if err != nil {
		return true, time.Time{}, fmt.Sprintf("annotation %s=%q is neither \"true\" nor an RFC 3339 instant (e.g. \"2027-09-01T18:00:00Z\"): it keeps the workload awake for good; correct or remove it",
			StayAwakeAnnotation, v)
	}
	if !now.Before(t) {
		return false, time.Time{}, ""
	}
	return true, t, ""
}

// How a sleep puts a kind to sleep.
type Handling string

const (
	// HandleReplicas: a Deployment, StatefulSet or ReplicaSet: spec.replicas set to 0 in the
	// same patch as the record.
	HandleReplicas Handling = "Replicas"
	// HandleSuspend: a CronJob, ScheduledJob or EventJob: spec.suspend set to true.
	HandleSuspend Handling = "Suspend"
	// HandlePause: a KEDA ScaledObject: paused at 0 replicas (KEDAPausedReplicasAnnotation).
	HandlePause Handling = "Pause"
	// HandleScale: any other kind: its scale subresource set to 0 replicas, after the record.
	HandleScale Handling = "Scale"
)

// HandlingOf says how a sleep puts the kind gk to sleep.
func HandlingOf(gk schema.GroupKind) Handling {
	switch gk {
	case schema.GroupKind{Group: "apps", Kind: "Deployment"}, schema.GroupKind{Group: "apps", Kind: "StatefulSet"}, schema.GroupKind{Group: "apps", Kind: "ReplicaSet"}:
		return HandleReplicas
	case schema.GroupKind{Group: "batch", Kind: "CronJob"}, schema.GroupKind{Group: "batch.almanac.dev", Kind: "ScheduledJob"}, schema.GroupKind{Group: "batch.almanac.dev", Kind: "EventJob"}:
		return HandleSuspend
	case schema.GroupKind{Group: "keda.sh", Kind: "ScaledObject"}:
		return HandlePause
	}
	return HandleScale
}

// DefaultKinds are the kinds of a sleep that names none.
func DefaultKinds() []WorkloadKind {
	return []WorkloadKind{
		{APIVersion: "apps/v1", Kind: "Deployment"},
		{APIVersion: "apps/v1", Kind: "StatefulSet"},
		{APIVersion: "apps/v1", Kind: "ReplicaSet"},
		{APIVersion: "batch/v1", Kind: "CronJob"},
		{APIVersion: "batch.almanac.dev/v1alpha1", Kind: "ScheduledJob"},
		{APIVersion: "batch.almanac.dev/v1alpha1", Kind: "EventJob"},
		{APIVersion: "keda.sh/v1alpha1", Kind: "ScaledObject"},
	}
}

// GroupVersionKind is the kind's apiVersion and kind; an apiVersion that does not parse gives
// an empty group and version.
func (k WorkloadKind) GroupVersionKind() schema.GroupVersionKind {
	gv, _ := schema.ParseGroupVersion(k.APIVersion)
	return gv.WithKind(k.Kind)
}

// String is "Kind (apiVersion)".
func (k WorkloadKind) String() string { return k.Kind + " (" + k.APIVersion + ")" }
