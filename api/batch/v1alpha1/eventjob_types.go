package v1alpha1

import (
	corev1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/types"
)

// TriggerKind is the kind of object whose Jobs an EventJob follows.
// +kubebuilder:validation:Enum=Job;CronJob;ScheduledJob;EventJob
type TriggerKind string

const (
	// TriggerKindJob follows the Job with the given name.
	TriggerKindJob TriggerKind = "Job"
	// TriggerKindCronJob follows the Jobs controlled by the named batch/v1 CronJob.
	TriggerKindCronJob TriggerKind = "CronJob"
	// TriggerKindScheduledJob follows the Jobs controlled by the named ScheduledJob.
	TriggerKindScheduledJob TriggerKind = "ScheduledJob"
	// TriggerKindEventJob follows the Jobs controlled by the named EventJob (a chain).
	TriggerKindEventJob TriggerKind = "EventJob"
)

// TriggerType is the Job outcome that starts a run.
// +kubebuilder:validation:Enum=Complete;Failed;Any
type TriggerType string

const (
	// TriggerTypeComplete fires when an upstream Job gets the Complete condition.
	TriggerTypeComplete TriggerType = "Complete"
	// TriggerTypeFailed fires when an upstream Job gets the Failed condition.
	TriggerTypeFailed TriggerType = "Failed"
	// TriggerTypeAny fires when an upstream Job finishes either way.
	TriggerTypeAny TriggerType = "Any"
)

// Trigger names the upstream Jobs of an EventJob and the outcome that starts a run.
//
// +kubebuilder:validation:XValidation:rule="!has(self.apiVersion) || ((self.kind == 'Job' || self.kind == 'CronJob') ? self.apiVersion == 'batch/v1' : self.apiVersion == 'batch.almanac.dev/v1alpha1')",message="apiVersion must be batch/v1 for kind Job and CronJob, and batch.almanac.dev/v1alpha1 for kind ScheduledJob and EventJob",fieldPath=".apiVersion"
type Trigger struct {
	// apiVersion of the upstream object: batch/v1 for Job and CronJob,
	// batch.almanac.dev/v1alpha1 for ScheduledJob and EventJob. Filled in by admission when
	// omitted.
	// +optional
	// +kubebuilder:validation:MaxLength=64
	APIVersion string `json:"apiVersion,omitempty"`
	// kind of the upstream object: Job (that Job), or CronJob, ScheduledJob or EventJob (every
	// Job that object controls).
	// +required
	Kind TriggerKind `json:"kind"`
	// name of the upstream object, in the EventJob's namespace.
	// +required
	// +kubebuilder:validation:MinLength=1
	// +kubebuilder:validation:MaxLength=253
	Name string `json:"name"`
	// type is the upstream Job outcome that starts a run: Complete (default), Failed, or
	// Any. Only Jobs that reach it after the EventJob was created count.
	// +optional
	// +kubebuilder:default=Complete
	Type TriggerType `json:"type,omitempty"`
}

// EventJobSpec says which upstream Jobs start a run, and what to run.
type EventJobSpec struct {
	// trigger names the upstream Jobs and the outcome that starts a run. Each upstream Job
	// that reaches it starts exactly one Job of this EventJob.
	// +required
	Trigger Trigger `json:"trigger"`

	JobPolicy `json:",inline"`
}

// TriggerRecord identifies the upstream Job that last started a run.
type TriggerRecord struct {
	// jobName is the upstream Job's name.
	// +required
	JobName string `json:"jobName"`
	// uid is the upstream Job's UID; the downstream Job's name is derived from it.
	// +required
	UID types.UID `json:"uid"`
	// condition is the upstream Job's condition that fired: Complete or Failed.
	// +required
	Condition string `json:"condition"`
	// time is when the upstream Job reached that condition (UTC).
	// +required
	Time metav1.Time `json:"time"`
}

// HandledTrigger is an upstream Job whose trigger condition the EventJob has handled.
type HandledTrigger struct {
	// uid is the upstream Job's UID.
	// +required
	UID types.UID `json:"uid"`
	// time is when the upstream Job reached the trigger condition (UTC, whole seconds).
	// +required
	Time metav1.Time `json:"time"`
}

// TriggerWatermark is the EventJob's persisted record of the upstream Jobs it has handled,
// so that restarts, re-lists and deleted Jobs (upstream or downstream) neither repeat nor
// lose a run. An upstream Job counts as handled when it reached the trigger condition
// before time, or when its UID is listed in handled.
type TriggerWatermark struct {
	// trigger is the spec.trigger this record belongs to, written group/kind/name/type.
	// When spec.trigger changes, the record starts over from the time of the change, so
	// that only upstream Jobs that reach the new trigger condition after it count.
	// +required
	// +kubebuilder:validation:MaxLength=512
	Trigger string `json:"trigger"`
	// time (UTC, whole seconds): every upstream Job that reached the trigger condition
	// before this instant has been handled, or reached it before the EventJob was created
	// (which is where time starts). It only moves forward; it trails the latest handled
	// upstream Job by one hour, so that a condition observed late still starts its run.
	// +required
	Time metav1.Time `json:"time"`
	// handled lists the upstream Jobs that reached the trigger condition at or after time
	// and were handled (a run was started, or skipped by concurrencyPolicy or suspend).
	// Entries are dropped when the upstream Job is deleted (it cannot trigger again) or
	// when time moves past them.
	// +optional
	// +listType=atomic
	// +kubebuilder:validation:MaxItems=1024
	Handled []HandledTrigger `json:"handled,omitempty"`
}

// EventJobStatus is the observed state of an EventJob.
type EventJobStatus struct {
	// observedGeneration is the metadata.generation that this status describes. It reads 0
	// until the controller has written a status (a default of the schema), so that a new
	// object is seen as not yet reconciled: by kstatus (Flux, kpt, `kubectl wait`) as
	// InProgress, by the Argo CD health checks as Progressing (docs/gitops.md).
	// +optional
	// +kubebuilder:default=0
	ObservedGeneration int64 `json:"observedGeneration,omitempty"`

	// lastTrigger is the upstream Job that last started a run.
	// +optional
	LastTrigger *TriggerRecord `json:"lastTrigger,omitempty"`

	// triggerCount counts the runs started by upstream Jobs.
	// +optional
	TriggerCount int64 `json:"triggerCount,omitempty"`

	// skippedCount counts the upstream Jobs that reached the trigger condition but started
	// no run, because a Job was still running under concurrencyPolicy Forbid, or because
	// the EventJob was suspended.
	// +optional
	SkippedCount int64 `json:"skippedCount,omitempty"`

	// watermark records which upstream Jobs have been handled; the controller writes it and
	// reads it back after a restart.
	// +optional
	Watermark *TriggerWatermark `json:"watermark,omitempty"`

	// active lists the Jobs of this EventJob that are running, at most 1024: when more run,
	// the oldest are left out and counted in activeOverflow.
	// +optional
	// +listType=atomic
	// +kubebuilder:validation:MaxItems=1024
	Active []corev1.ObjectReference `json:"active,omitempty"`

	// activeOverflow counts the running Jobs that active leaves out because it is full (the
	// oldest ones). Absent when active lists every running Job.
	// +optional
	// +kubebuilder:validation:Minimum=0
	ActiveOverflow int32 `json:"activeOverflow,omitempty"`

	// conditions of the EventJob.
	// +optional
	// +listType=map
	// +listMapKey=type
	// +kubebuilder:validation:MaxItems=16
	Conditions []metav1.Condition `json:"conditions,omitempty"`
}

// EventJob runs a Job each time an upstream Job (a named Job, or the Jobs of a CronJob,
// ScheduledJob or EventJob) completes or fails: exactly one run per upstream Job.
//
// +kubebuilder:object:root=true
// +kubebuilder:subresource:status
// +kubebuilder:resource:shortName=ej,categories=almanac
// +kubebuilder:printcolumn:name="TriggerKind",type=string,JSONPath=`.spec.trigger.kind`
// +kubebuilder:printcolumn:name="Trigger",type=string,JSONPath=`.spec.trigger.name`
// +kubebuilder:printcolumn:name="On",type=string,JSONPath=`.spec.trigger.type`
// +kubebuilder:printcolumn:name="Suspend",type=boolean,JSONPath=`.spec.suspend`
// +kubebuilder:printcolumn:name="Runs",type=integer,JSONPath=`.status.triggerCount`
// +kubebuilder:printcolumn:name="LastTrigger",type=string,JSONPath=`.status.lastTrigger.jobName`,priority=1
// +kubebuilder:printcolumn:name="Age",type=date,JSONPath=`.metadata.creationTimestamp`
type EventJob struct {
	metav1.TypeMeta `json:",inline"`
	// +optional
	metav1.ObjectMeta `json:"metadata,omitempty"`

	// spec says what starts a run and what to run.
	// +required
	Spec EventJobSpec `json:"spec"`

	// status is written by the controller.
	// +optional
	// +kubebuilder:default={}
	Status EventJobStatus `json:"status,omitempty"`
}

// EventJobList is a list of EventJobs.
//
// +kubebuilder:object:root=true
type EventJobList struct {
	metav1.TypeMeta `json:",inline"`
	// +optional
	metav1.ListMeta `json:"metadata,omitempty"`
	Items           []EventJob `json:"items"`
}
