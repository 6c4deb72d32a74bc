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

// ScheduledPodAutoscalerSpec is the baseline HorizontalPodAutoscaler and how Schedules
// change it.
// +kubebuilder:validation:XValidation:rule="!has(self.horizontalPodAutoscalerSpec.minReplicas) || self.horizontalPodAutoscalerSpec.minReplicas <= self.horizontalPodAutoscalerSpec.maxReplicas",message="minReplicas must not be greater than maxReplicas",fieldPath=".horizontalPodAutoscalerSpec.minReplicas"
type ScheduledPodAutoscalerSpec struct {
	// horizontalPodAutoscalerSpec is the baseline: the spec of the autoscaling/v2
	// HorizontalPodAutoscaler that almanac creates with the same name and namespace, and
	// whose minReplicas and maxReplicas it restores whenever no Schedule is active.
	// Omitted minReplicas defaults to 1; omitted metrics default to 80 % average CPU
	// utilization; scaleTargetRef.apiVersion defaults to apps/v1 for Deployment,
	// StatefulSet and ReplicaSet.
	// +required
	HorizontalPodAutoscalerSpec autoscalingv2.HorizontalPodAutoscalerSpec `json:"horizontalPodAutoscalerSpec"`

	// overlapPolicy says what happens when Schedules of this autoscaler overlap: Max
	// (the default) allows it and takes the largest minReplicas and the largest maxReplicas
	// among the active Schedules; Forbid rejects, at admission, a Schedule that would
	// overlap another within the next 366 days, and if Schedules overlap anyway (admitted at
	// the same moment), applies the one created first and leaves the other out of the bounds
	// (condition ForbiddenOverlap).
	// +optional
	// +kubebuilder:default=Max
	OverlapPolicy OverlapPolicy `json:"overlapPolicy,omitempty"`

	// suspend, when true, ignores every Schedule and keeps the HorizontalPodAutoscaler at
	// the baseline. Default false.
	// +optional
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
	// observedGeneration is the metadata.generation that this status describes.
	// +optional
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

	// conditions: Ready says whether the HorizontalPodAutoscaler has the bounds this
	// status reports; SchedulesValid says whether every Schedule could be evaluated.
	// +optional
	// +listType=map
	// +listMapKey=type
	// +kubebuilder:validation:MaxItems=16
	Conditions []metav1.Condition `json:"conditions,omitempty"`
}

// ScheduledPodAutoscaler generates and owns an autoscaling/v2 HorizontalPodAutoscaler of the
// same name, whose minReplicas and maxReplicas follow the Schedules that reference it.
//
// +kubebuilder:object:root=true
// +kubebuilder:subresource:status
// +kubebuilder:resource:shortName=spa,categories=almanac
// +kubebuilder:printcolumn:name="MinPods",type=integer,JSONPath=`.status.minReplicas`
// +kubebuilder:printcolumn:name="MaxPods",type=integer,JSONPath=`.status.maxReplicas`
// +kubebuilder:printcolumn:name="Active",type=string,JSONPath=`.status.activeSchedules`
// +kubebuilder:printcolumn:name="Next",type=string,JSONPath=`.status.nextTransitionTime`
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
