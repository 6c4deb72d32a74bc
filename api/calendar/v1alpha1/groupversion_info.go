// Package v1alpha1 holds the almanac.dev/v1alpha1 API: Calendar (namespaced) and
// ClusterCalendar (cluster-scoped), sets of days and periods (holidays, freezes, trading days)
// that Schedules and ScheduledJobs skip, or keep to, through spec.calendars.
//
// What a calendar means in time is the contract in docs/time-semantics.md; the code that
// implements it is package api/timing (CalendarSpec, Mask).
//
// +kubebuilder:object:generate=true
// +groupName=almanac.dev
package v1alpha1

import (
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/runtime"
	"k8s.io/apimachinery/pkg/runtime/schema"
)

// GroupVersion is the group and version of this API.
var GroupVersion = schema.GroupVersion{Group: "almanac.dev", Version: "v1alpha1"}

var (
	// SchemeBuilder registers this API's types with a scheme.
	SchemeBuilder = runtime.NewSchemeBuilder(addKnownTypes)
	// AddToScheme adds this API's types to a scheme.
	AddToScheme = SchemeBuilder.AddToScheme
)

func addKnownTypes(scheme *runtime.Scheme) error {
	scheme.AddKnownTypes(GroupVersion,
		&Calendar{}, &CalendarList{},
		&ClusterCalendar{}, &ClusterCalendarList{},
	)
	metav1.AddToGroupVersion(scheme, GroupVersion)
	return nil
}
