package v1alpha1

import (
	"slices"

	batchv1 "k8s.io/api/batch/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/runtime"
	"k8s.io/apimachinery/pkg/runtime/schema"
)

// ControllerKey identifies a controller of Jobs: "<group>/<Kind>/<name>", e.g.
// "batch/CronJob/hello" or "batch.almanac.dev/ScheduledJob/nightly" (the namespace is the
// Job's own).
func ControllerKey(group, kind, name string) string { return group + "/" + kind + "/" + name }

// ControllerKeyOf returns the ControllerKey of an object's controller ownerReference, or ""
// when it has none.
func ControllerKeyOf(obj metav1.Object) string {
	ref := metav1.GetControllerOfNoCopy(obj)
	if ref == nil {
		return ""
	}
	gv, err := schema.ParseGroupVersion(ref.APIVersion)
	if err != nil {
		return ""
	}
	return ControllerKey(gv.Group, ref.Kind, ref.Name)
}

// Group returns the API group of the trigger's kind, from apiVersion or, when admission has
// not filled that in, from the kind.
func (t *Trigger) Group() string {
	if t.APIVersion != "" {
		if gv, err := schema.ParseGroupVersion(t.APIVersion); err == nil {
			return gv.Group
		}
	}
	switch t.Kind {
	case TriggerKindScheduledJob, TriggerKindEventJob:
		return GroupVersion.Group
	default:
		return batchv1.GroupName
	}
}

// EffectiveType returns the trigger's type, Complete when omitted.
func (t *Trigger) EffectiveType() TriggerType {
	if t.Type == "" {
		return TriggerTypeComplete
	}
	return t.Type
}

// UpstreamKey is the ControllerKey that the trigger's upstream Jobs are found by: the Job
// itself for kind Job (ControllerKey("batch", "Job", name)), its controller otherwise.
func (t *Trigger) UpstreamKey() string {
	return ControllerKey(t.Group(), string(t.Kind), t.Name)
}

// WatermarkKey says which trigger a status.watermark belongs to: "<UpstreamKey>/<type>".
func (t *Trigger) WatermarkKey() string {
	return t.UpstreamKey() + "/" + string(t.EffectiveType())
}

// Cache field indexes of the batch group. The manager registers them once (api/index lists
// every index), and the reconcilers list with them.
const (
	// JobControllerField indexes Jobs by the ControllerKey of their controller: the Jobs of a
	// ScheduledJob or EventJob, and the upstream Jobs of a CronJob, ScheduledJob or EventJob.
	JobControllerField = "batch.almanac.dev/controller"
	// EventJobTriggerField indexes EventJobs by the UpstreamKey of each of their triggers:
	// the EventJobs that follow a Job, or the Jobs of a controller.
	EventJobTriggerField = "batch.almanac.dev/trigger"
)

// JobController returns the JobControllerField values of a Job: its controller's key.
func JobController(obj runtime.Object) []string {
	j, ok := obj.(*batchv1.Job)
	if !ok {
		return nil
	}
	if key := ControllerKeyOf(j); key != "" {
		return []string{key}
	}
	return nil
}

// EventJobTrigger returns the EventJobTriggerField values of an EventJob: the UpstreamKey of
// each of its triggers, each once.
func EventJobTrigger(obj runtime.Object) []string {
	ej, ok := obj.(*EventJob)
	if !ok {
		return nil
	}
	var out []string
	for _, t := range ej.TriggerList() {
		if key := t.UpstreamKey(); !slices.Contains(out, key) {
			out = append(out, key)
		}
	}
	return out
}
