package v1alpha1

import (
	autoscalingv2 "k8s.io/api/autoscaling/v2"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
)

// OverlapPolicy says what happens when two Schedules of one autoscaler are active at once.
// +kubebuilder:validation:Enum=Max;Forbid
type OverlapPolicy string

const (
	// OverlapPolicyMax allows overlapping Schedules: while several are active the HPA gets
	// the largest minReplicas and the largest maxReplicas among them. Admission warns about
	// each overlap and names the other Schedule.
	OverlapPolicyMax OverlapPolicy = "Max"
	// OverlapPolicyForbid makes admission reject a Schedule whose windows overlap those of
	// another Schedule of the same autoscaler within the next 366 days. Schedules that
	// overlap anyway (admitted at the same moment) are resolved by the controller: the one
	// created first applies, the other is left out of the bounds (condition
	// ForbiddenOverlap).
	OverlapPolicyForbid OverlapPolicy = "Forbid"
)

// ScheduledPodAutoscalerSpec is the baseline autoscaler and how Schedules change it: either an
// autoscaling/v2 HorizontalPodAutoscaler that almanac generates (horizontalPodAutoscalerSpec)
// or an object that already exists and that almanac attaches to (targetRef, with minReplicas
// and maxReplicas as the baseline).
// +kubebuilder:validation:XValidation:rule="has(self.horizontalPodAutoscalerSpec) != has(self.targetRef)",message="exactly one of horizontalPodAutoscalerSpec (almanac generates the HorizontalPodAutoscaler) and targetRef (almanac attaches to an object that exists) is required"
// +kubebuilder:validation:XValidation:rule="!has(self.horizontalPodAutoscalerSpec) || !has(self.horizontalPodAutoscalerSpec.minReplicas) || self.horizontalPodAutoscalerSpec.minReplicas <= self.horizontalPodAutoscalerSpec.maxReplicas",message="minReplicas must not be greater than maxReplicas",fieldPath=".horizontalPodAutoscalerSpec.minReplicas"
// +kubebuilder:validation:XValidation:rule="has(self.targetRef) || (!has(self.minReplicas) && !has(self.maxReplicas))",message="minReplicas and maxReplicas are the baseline of targetRef; with horizontalPodAutoscalerSpec, set them inside it",fieldPath=".minReplicas"
// +kubebuilder:validation:XValidation:rule="!has(self.targetRef) || has(self.minReplicas)",message="minReplicas is required with targetRef: it is the baseline that the target has whenever no Schedule is active",fieldPath=".minReplicas"
// +kubebuilder:validation:XValidation:rule="!has(self.targetRef) || has(self.maxReplicas) || !((self.targetRef.apiVersion.startsWith('autoscaling/') && self.targetRef.kind == 'HorizontalPodAutoscaler') || (self.targetRef.apiVersion.startsWith('keda.sh/') && self.targetRef.kind == 'ScaledObject'))",message="maxReplicas is required when targetRef is a HorizontalPodAutoscaler or a ScaledObject: it is the baseline maximum that the target has whenever no Schedule is active",fieldPath=".maxReplicas"
// +kubebuilder:validation:XValidation:rule="!has(self.minReplicas) || !has(self.maxReplicas) || self.minReplicas <= self.maxReplicas",message="minReplicas must not be greater than maxReplicas",fieldPath=".minReplicas"
// +kubebuilder:validation:XValidation:rule="!has(oldSelf.targetRef) == !has(self.targetRef)",message="a ScheduledPodAutoscaler cannot switch between horizontalPodAutoscalerSpec and targetRef: create a new ScheduledPodAutoscaler instead (deleting this one leaves an attached target at its baseline, and deletes a generated HorizontalPodAutoscaler)"
type ScheduledPodAutoscalerSpec struct {
	// horizontalPodAutoscalerSpec is the baseline of a generated autoscaler: the spec of the
	// autoscaling/v2 HorizontalPodAutoscaler that almanac creates with the same name and
	// namespace, and whose minReplicas and maxReplicas it restores whenever no Schedule is
	// active. Omitted minReplicas defaults to 1; omitted metrics default to 80 % average CPU
	// utilization; scaleTargetRef.apiVersion defaults to apps/v1 for Deployment,
	// StatefulSet and ReplicaSet. Exactly one of horizontalPodAutoscalerSpec and targetRef.
	// +optional
	HorizontalPodAutoscalerSpec *autoscalingv2.HorizontalPodAutoscalerSpec `json:"horizontalPodAutoscalerSpec,omitempty"`

	// targetRef names an object in this namespace that already exists and whose bounds the
	// Schedules change; almanac owns only those fields of it, by server-side apply under the
	// field manager "almanac", and leaves everything else to the object's owner:
	//   - an autoscaling/v2 HorizontalPodAutoscaler: spec.minReplicas and spec.maxReplicas;
	//   - a keda.sh/v1alpha1 ScaledObject: spec.minReplicaCount and spec.maxReplicaCount;
	//   - any other object with a scale subresource and no autoscaler (a Deployment, a
	//     StatefulSet, an Argo Rollout): its replicas, set to the effective minReplicas.
	// Deleting the ScheduledPodAutoscaler, or changing targetRef, leaves the target at the
	// baseline and owned by no almanac field manager. Exactly one of
	// horizontalPodAutoscalerSpec and targetRef.
	// +optional
	TargetRef *TargetReference `json:"targetRef,omitempty"`

	// minReplicas is, with targetRef, the baseline minimum: the target's minReplicas
	// (minReplicaCount, or replicas for a scale subresource) whenever no Schedule is active.
	// Zero is allowed where the target can scale to zero: a ScaledObject, or a workload
	// without an autoscaler. Required with targetRef; not used with
	// horizontalPodAutoscalerSpec.
	// +optional
	// +kubebuilder:validation:Minimum=0
	MinReplicas *int32 `json:"minReplicas,omitempty"`

	// maxReplicas is, with targetRef, the baseline maximum (maxReplicas, or
	// maxReplicaCount) whenever no Schedule is active. Required for a HorizontalPodAutoscaler
	// or ScaledObject target. A workload's scale subresource has no maximum: there it is not
	// used, and admission warns. Not used with horizontalPodAutoscalerSpec.
	// +optional
	// +kubebuilder:validation:Minimum=1
	MaxReplicas *int32 `json:"maxReplicas,omitempty"`

	// overlapPolicy says what happens when Schedules of this autoscaler overlap: Max
	// (the default) allows it and takes the largest minReplicas and the largest maxReplicas
	// among the active Schedules; Forbid rejects, at admission, a Schedule that would
	// overlap another within the next 366 days, and if Schedules overlap anyway (admitted at
	// the same moment), applies the one created first and leaves the other out of the bounds
	// (condition ForbiddenOverlap).
	// +optional
	// +kubebuilder:default=Max
	OverlapPolicy OverlapPolicy `json:"overlapPolicy,omitempty"`

	// suspend, when true, ignores every Schedule and keeps the HorizontalPodAutoscaler (or
	// the target) at the baseline. Default false.
	// +optional
	// +kubebuilder:default=false
	Suspend bool `json:"suspend,omitempty"`
}

// AppliedTransition records the last change of bounds that almanac wrote to the
// HorizontalPodAutoscaler.
type AppliedTransition struct {
	// boundaryTime is the instant at which the bounds were due (a Schedule's window opened
	// or closed), in UTC.
	// +required
	BoundaryTime metav1.Time `json:"boundaryTime"`
	// appliedTime is when the HorizontalPodAutoscaler was patched, in UTC.
	// +required
	AppliedTime metav1.Time `json:"appliedTime"`
	// lag is appliedTime minus boundaryTime, e.g. "12ms".
	// +optional
	Lag metav1.Duration `json:"lag,omitempty"`
	// minReplicas is the minReplicas written at that transition.
	// +required
	MinReplicas int32 `json:"minReplicas"`
	// maxReplicas is the maxReplicas written at that transition.
	// +required
	MaxReplicas int32 `json:"maxReplicas"`
}

// ScheduledPodAutoscalerStatus is the observed state of a ScheduledPodAutoscaler.
type ScheduledPodAutoscalerStatus struct {
	// observedGeneration is the metadata.generation that this status describes. It reads 0
	// until the controller has written a status (a default of the schema), so that a new
	// object is seen as not yet reconciled: by kstatus (Flux, kpt, `kubectl wait`) as
	// InProgress, by the Argo CD health checks as Progressing (docs/gitops.md).
	// +optional
	// +kubebuilder:default=0
	ObservedGeneration int64 `json:"observedGeneration,omitempty"`

	// minReplicas is the effective minReplicas: the baseline's, or the largest among the
	// active Schedules.
	// +optional
	MinReplicas *int32 `json:"minReplicas,omitempty"`

	// maxReplicas is the effective maxReplicas: the baseline's, or the largest among the
	// active Schedules (raised to minReplicas when that is larger).
	// +optional
	MaxReplicas int32 `json:"maxReplicas,omitempty"`

	// activeSchedules names the Schedules whose windows are open now, sorted.
	// +optional
	// +listType=set
	// +kubebuilder:validation:MaxItems=1024
	// +kubebuilder:validation:items:MaxLength=253
	ActiveSchedules []string `json:"activeSchedules,omitempty"`

	// nextTransitionTime is the next instant (UTC) at which a Schedule's window opens or
	// closes; the controller acts at that instant. Absent when no Schedule will change the
	// bounds again.
	// +optional
	NextTransitionTime *metav1.Time `json:"nextTransitionTime,omitempty"`

	// lastAppliedTransition is the last change of bounds written to the
	// HorizontalPodAutoscaler.
	// +optional
	LastAppliedTransition *AppliedTransition `json:"lastAppliedTransition,omitempty"`

	// target is the object that almanac is attached to (targetRef as last applied); when
	// targetRef changes, the reconciler lets go of this one first, leaving it at the
	// baseline.
	// +optional
	Target *TargetReference `json:"target,omitempty"`

	// conditions: Ready says whether the HorizontalPodAutoscaler has the bounds this
	// status reports; SchedulesValid says whether every Schedule could be evaluated.
	// +optional
	// +listType=map
	// +listMapKey=type
	// +kubebuilder:validation:MaxItems=16
	Conditions []metav1.Condition `json:"conditions,omitempty"`
}

// ScheduledPodAutoscaler generates and owns an autoscaling/v2 HorizontalPodAutoscaler of the
// same name, or attaches to an autoscaler or workload that exists (spec.targetRef), whose
// minReplicas and maxReplicas (or replicas) follow the Schedules that reference it.
//
// +kubebuilder:object:root=true
// +kubebuilder:subresource:status
// +kubebuilder:resource:shortName=spa,categories=almanac
// +kubebuilder:printcolumn:name="Target",type=string,JSONPath=`.status.target.name`,priority=1
// +kubebuilder:printcolumn:name="MinPods",type=integer,JSONPath=`.status.minReplicas`
// +kubebuilder:printcolumn:name="MaxPods",type=integer,JSONPath=`.status.maxReplicas`
// +kubebuilder:printcolumn:name="Active",type=string,JSONPath=`.status.activeSchedules`
// +kubebuilder:printcolumn:name="Next",type=string,JSONPath=`.status.nextTransitionTime`
// +kubebuilder:printcolumn:name="Suspended",type=boolean,JSONPath=`.spec.suspend`
// +kubebuilder:printcolumn:name="Ready",type=string,JSONPath=`.status.conditions[?(@.type=="Ready")].status`
// +kubebuilder:printcolumn:name="Age",type=date,JSONPath=`.metadata.creationTimestamp`
type ScheduledPodAutoscaler struct {
	metav1.TypeMeta `json:",inline"`
	// +optional
	metav1.ObjectMeta `json:"metadata,omitempty"`

	// spec is the baseline autoscaler and its overlap policy.
	// +required
	Spec ScheduledPodAutoscalerSpec `json:"spec"`

	// status is the effective state, written by the controller.
	// +optional
	// +kubebuilder:default={}
	Status ScheduledPodAutoscalerStatus `json:"status,omitempty"`
}

// ScheduledPodAutoscalerList is a list of ScheduledPodAutoscalers.
//
// +kubebuilder:object:root=true
type ScheduledPodAutoscalerList struct {
	metav1.TypeMeta `json:",inline"`
	// +optional
	metav1.ListMeta `json:"metadata,omitempty"`
	Items           []ScheduledPodAutoscaler `json:"items"`
}
