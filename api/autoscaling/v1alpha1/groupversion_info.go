// Package v1alpha1 holds the autoscaling.almanac.dev/v1alpha1 API: ScheduledPodAutoscaler,
// which owns an autoscaling/v2 HorizontalPodAutoscaler, and Schedule, a recurring or one-off
// window during which that autoscaler's bounds are raised or lowered.
//
// The meaning of every time field is the contract in docs/time-semantics.md; the code
// that implements it is package api/timing.
//
// +kubebuilder:object:generate=true
// +groupName=autoscaling.almanac.dev
package v1alpha1

import (
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/runtime"
	"k8s.io/apimachinery/pkg/runtime/schema"
)

// GroupVersion is the group and version of this API.
var GroupVersion = schema.GroupVersion{Group: "autoscaling.almanac.dev", Version: "v1alpha1"}

var (
	// SchemeBuilder registers this API's types with a scheme.
	SchemeBuilder = runtime.NewSchemeBuilder(addKnownTypes)
	// AddToScheme adds this API's types to a scheme.
	AddToScheme = SchemeBuilder.AddToScheme
)

func addKnownTypes(scheme *runtime.Scheme) error {
	scheme.AddKnownTypes(GroupVersion,
		&ScheduledPodAutoscaler{}, &ScheduledPodAutoscalerList{},
		&Schedule{}, &ScheduleList{},
	)
	metav1.AddToGroupVersion(scheme, GroupVersion)
	return nil
}
