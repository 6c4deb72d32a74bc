// Package v1alpha1 holds the batch.almanac.dev/v1alpha1 API: ScheduledJob, which runs a Job
// once at an instant or on a cron schedule, and EventJob, which runs a Job when another
// Job completes or fails.
//
// The meaning of every time field is the contract in docs/time-semantics.md; the code
// that implements it is package api/timing.
//
// +kubebuilder:object:generate=true
// +groupName=batch.almanac.dev
package v1alpha1

import (
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/runtime"
	"k8s.io/apimachinery/pkg/runtime/schema"
)

// GroupVersion is the group and version of this API.
var GroupVersion = schema.GroupVersion{Group: "batch.almanac.dev", Version: "v1alpha1"}

var (
	// SchemeBuilder registers this API's types with a scheme.
	SchemeBuilder = runtime.NewSchemeBuilder(addKnownTypes)
	// AddToScheme adds this API's types to a scheme.
	AddToScheme = SchemeBuilder.AddToScheme
)

func addKnownTypes(scheme *runtime.Scheme) error {
	scheme.AddKnownTypes(GroupVersion,
		&ScheduledJob{}, &ScheduledJobList{},
		&EventJob{}, &EventJobList{},
	)
	metav1.AddToGroupVersion(scheme, GroupVersion)
	return nil
}
