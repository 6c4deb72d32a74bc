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
	// Any. Only Jobs that reach it after the EventJob was created count. In triggers, it is
	// the outcome that a run of the set should have (fanIn.onFailure says what another one
	// does).
	// +optional
	// +kubebuilder:default=Complete
	Type TriggerType `json:"type,omitempty"`
}

// EventJobSpec says which upstream Jobs start a run, and what to run.
//
// +kubebuilder:validation:XValidation:rule="has(self.trigger) != has(self.triggers)",message="exactly one of trigger and triggers is required: trigger starts a run for each upstream Job, triggers one run for each set of upstream runs (fan-in)"
// +kubebuilder:validation:XValidation:rule="!has(self.fanIn) || has(self.triggers)",message="fanIn says how the runs of several triggers make a set: set it only with triggers",fieldPath=".fanIn"
type EventJobSpec struct {
	// trigger names the upstream Jobs and the outcome that starts a run. Each upstream Job
	// that reaches it starts exactly one Job of this EventJob. Exactly one of trigger and
	// triggers.
	// +optional
	Trigger Trigger `json:"trigger,omitzero"`

	// triggers (fan-in) name several upstream objects, each as trigger does: the EventJob
	// starts one Job for each set of their runs that fanIn makes (by default one run of every
	// trigger for the same slot), never one per upstream Job. Each upstream object at most
	// once; 1 to 16 of them. Exactly one of trigger and triggers.
	// +optional
	// +listType=atomic
	// +kubebuilder:validation:MinItems=1
	// +kubebuilder:validation:MaxItems=16
	// +kubebuilder:validation:XValidation:rule="self.all(t, self.exists_one(u, u.kind == t.kind && u.name == t.name))",message="each upstream object may be named once in triggers: remove the repeated kind and name (a trigger's type says which outcome counts)"
	Triggers []Trigger `json:"triggers,omitempty"`

	// fanIn says how the runs of triggers make a set and when a set runs (only with
	// triggers; admission fills in the defaults: AllOf, by Slot, a horizon of 86400 s, Skip
	// on failure).
	// +optional
	FanIn *FanIn `json:"fanIn,omitempty"`

	JobPolicy `json:",inline"`
}

// FanInRequirement says which triggers a set needs before it runs.
// +kubebuilder:validation:Enum=AllOf;AnyOf
type FanInRequirement string

const (
	// FanInAllOf runs a set once every trigger has a run in it.
	FanInAllOf FanInRequirement = "AllOf"
	// FanInAnyOf runs a set at its first run; the later runs of the same set start nothing.
	FanInAnyOf FanInRequirement = "AnyOf"
)

// FanInPairing says which upstream runs belong to the same set.
// +kubebuilder:validation:Enum=Slot;Window
type FanInPairing string

const (
	// FanInPairBySlot makes a set of the runs of one slot: the upstream Jobs' nominal
	// scheduled time (AnnotationScheduledTime of a ScheduledJob's or EventJob's Job, the
	// CronJob controller's batchv1.CronJobScheduledTimestampAnnotation).
	FanInPairBySlot FanInPairing = "Slot"
	// FanInPairByWindow makes a set of the runs that reach their condition within
	// windowSeconds of the set's first run.
	FanInPairByWindow FanInPairing = "Window"
)

// FanInFailurePolicy says what an upstream run that ended without its trigger's outcome does
// to its set.
// +kubebuilder:validation:Enum=Skip;Run
type FanInFailurePolicy string

const (
	// FanInSkip ends the set without a run (counted in status.fanIn.failedSets) under AllOf;
	// under AnyOf, once every trigger's run of the set ended so.
	FanInSkip FanInFailurePolicy = "Skip"
	// FanInRun counts such a run as its trigger's run of the set: the set runs anyway, and the
	// Job's annotations say how each upstream run ended.
	FanInRun FanInFailurePolicy = "Run"
)

// Limits and defaults of fanIn (the kubebuilder markers repeat the numbers; TestSchemaMaxima
// checks them).
const (
	// MaxTriggers is how many triggers an EventJob may name (spec.triggers' MaxItems).
	MaxTriggers = 16
	// DefaultFanInHorizonSeconds is a day: a set of a daily slot waits for its last run until
	// the next day's slot.
	DefaultFanInHorizonSeconds = int64(86400)
	// MinFanInHorizonSeconds and MaxFanInHorizonSeconds bound horizonSeconds: from a minute
	// to a week.
	MinFanInHorizonSeconds = int64(60)
	MaxFanInHorizonSeconds = int64(604800)
	// MaxFanInWindowSeconds bounds windowSeconds: a day.
	MaxFanInWindowSeconds = int64(86400)
	// MaxFanInSets bounds status.fanIn.sets, in the schema and in the reconciler: when more
	// sets are open or decided within reach, the oldest are closed (an open one expires,
	// counted in status.fanIn.expiredSets), so that a status write is never refused for its
	// size, whatever the upstream runs do.
	MaxFanInSets = 64
)

// FanIn says how the runs of several triggers make a set, and when a set starts a Job.
//
// +kubebuilder:validation:XValidation:rule="(has(self.pairBy) && self.pairBy == 'Window') == has(self.windowSeconds)",message="windowSeconds is how long a set of pairBy Window waits for its runs: set it with pairBy: Window, and only then",fieldPath=".windowSeconds"
// +kubebuilder:validation:XValidation:rule="!has(self.horizonSeconds) || !has(self.pairBy) || self.pairBy == 'Slot'",message="horizonSeconds is how long a set of one slot waits for its runs: set it only with pairBy: Slot (pairBy: Window waits windowSeconds)",fieldPath=".horizonSeconds"
type FanIn struct {
	// require is AllOf (default): a set runs once every trigger has a run in it; or AnyOf: a
	// set runs at its first run, and the later runs of the set start nothing.
	// +optional
	// +kubebuilder:default=AllOf
	Require FanInRequirement `json:"require,omitempty"`

	// pairBy says which upstream runs make a set: Slot (default), the runs of the same
	// nominal slot (the scheduled time that a ScheduledJob's, an EventJob's or a CronJob's Job
	// carries; a Job with none, a run-now Job for one, pairs with nothing); or Window, the runs
	// that reach their condition within windowSeconds of the set's first run (each run joins
	// the oldest open set that has no run of its trigger yet).
	// +optional
	// +kubebuilder:default=Slot
	PairBy FanInPairing `json:"pairBy,omitempty"`

	// windowSeconds (pairBy Window only, required there) is how long after its first run a
	// set takes runs; a set not complete by then expires (counted in
	// status.fanIn.expiredSets). 1 to 86400.
	// +optional
	// +kubebuilder:validation:Minimum=1
	// +kubebuilder:validation:Maximum=86400
	WindowSeconds *int64 `json:"windowSeconds,omitempty"`

	// horizonSeconds (pairBy Slot only) is how long after its slot a set waits for its runs:
	// a set not complete by then expires (counted in status.fanIn.expiredSets), and a run of
	// its slot that ends later starts nothing. Default 86400 (a day); 60 to 604800.
	// +optional
	// +kubebuilder:validation:Maximum=604800
	// +kubebuilder:validation:XValidation:rule="self >= 60",message="horizonSeconds is at least 60 (a minute): a set waits that long after its slot for a run of each trigger; write 60 or more, or omit it for a day (86400)"
	HorizonSeconds *int64 `json:"horizonSeconds,omitempty"`

	// onFailure says what an upstream run that ended without its trigger's outcome (a
	// Failed Job of a trigger of type Complete, a Complete Job of one of type Failed) does to
	// its set: Skip (default) ends the set without a run, counted in
	// status.fanIn.failedSets (under AnyOf, once every trigger's run ended so); Run counts it
	// as its trigger's run, so the set runs anyway, and the Job's
	// batch.almanac.dev/trigger-conditions annotation says how each upstream run ended.
	// +optional
	// +kubebuilder:default=Skip
	OnFailure FanInFailurePolicy `json:"onFailure,omitempty"`
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

// FanInDecision is what became of a set of upstream runs.
// +kubebuilder:validation:Enum=Started;Failed;Skipped
type FanInDecision string

const (
	// FanInStarted: the set started its Job.
	FanInStarted FanInDecision = "Started"
	// FanInFailed: an upstream run of the set ended without its trigger's outcome, and
	// onFailure is Skip: no Job (counted in failedSets).
	FanInFailed FanInDecision = "Failed"
	// FanInSkipped: the set was complete but started no Job: concurrencyPolicy Forbid while a
	// Job ran, suspend, or a Job that could not be created (counted in skippedCount; Ready
	// says why when it was the Job).
	FanInSkipped FanInDecision = "Skipped"
)

// FanInMember is an upstream run of a set.
type FanInMember struct {
	// trigger is the index in spec.triggers of the trigger the run is of.
	// +required
	// +kubebuilder:validation:Minimum=0
	// +kubebuilder:validation:Maximum=15
	Trigger int32 `json:"trigger"`
	// jobName is the upstream Job's name.
	// +required
	// +kubebuilder:validation:MaxLength=253
	JobName string `json:"jobName"`
	// uid is the upstream Job's UID.
	// +required
	UID types.UID `json:"uid"`
	// condition is how the upstream Job ended: Complete or Failed.
	// +required
	Condition string `json:"condition"`
	// time is when the upstream Job reached that condition (UTC, whole seconds).
	// +required
	Time metav1.Time `json:"time"`
}

// FanInSet is a set of upstream runs: open while it waits for runs, then decided.
type FanInSet struct {
	// key identifies the set: its slot (UTC, RFC 3339) for pairBy Slot; for pairBy Window,
	// its first run's condition time and UID ("<time>/<uid>"). The Job's name is derived
	// from it.
	// +required
	// +kubebuilder:validation:MaxLength=128
	Key string `json:"key"`
	// time is the set's slot (pairBy Slot) or its first run's condition time (pairBy
	// Window): it expires horizonSeconds or windowSeconds after it.
	// +required
	Time metav1.Time `json:"time"`
	// members are the set's runs, at most one per trigger (the first to end): so far while
	// the set is open, and those that made the decision once it is decided.
	// +optional
	// +listType=atomic
	// +kubebuilder:validation:MaxItems=16
	Members []FanInMember `json:"members,omitempty"`
	// decision is empty while the set is open, then Started, Failed or Skipped.
	// +optional
	Decision FanInDecision `json:"decision,omitempty"`
	// job is the name of the Job that a Started set started.
	// +optional
	// +kubebuilder:validation:MaxLength=63
	Job string `json:"job,omitempty"`
}

// FanInStatus is the EventJob's record of the sets of its triggers' runs, so that each set
// starts at most one Job, exactly once, across restarts, leader changes and deleted Jobs.
type FanInStatus struct {
	// closedThrough: every set whose time is at or before this instant is closed; a run of
	// such a set starts nothing. It moves with the horizon (or window) and, when sets
	// exceeds its bound, past the oldest sets.
	// +optional
	ClosedThrough *metav1.Time `json:"closedThrough,omitempty"`
	// sets are the open sets and the decided ones after closedThrough, oldest first, at most
	// 64: when more, the oldest are closed (an open one expires, counted).
	// +optional
	// +listType=atomic
	// +kubebuilder:validation:MaxItems=64
	Sets []FanInSet `json:"sets,omitempty"`
	// failedSets counts the sets that started no Job because an upstream run ended without
	// its trigger's outcome (onFailure Skip).
	// +optional
	FailedSets int64 `json:"failedSets,omitempty"`
	// expiredSets counts the sets that were not complete within their horizon (or window),
	// or were closed early because more than 64 sets were open.
	// +optional
	ExpiredSets int64 `json:"expiredSets,omitempty"`
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

	// fanIn records the sets of upstream runs of spec.triggers: those still open, and those
	// decided that a late run could still reach.
	// +optional
	FanIn *FanInStatus `json:"fanIn,omitempty"`

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
// ScheduledJob or EventJob) completes or fails: exactly one run per upstream Job; or, with
// several triggers, exactly one run per set of their runs (fan-in: the runs of one slot, or
// of one window of time).
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
// +kubebuilder:printcolumn:name="FanIn",type=string,JSONPath=`.spec.fanIn.require`,priority=1
// +kubebuilder:printcolumn:name="Expired",type=integer,JSONPath=`.status.fanIn.expiredSets`,priority=1
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
