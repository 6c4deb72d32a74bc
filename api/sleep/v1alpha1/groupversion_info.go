// Package v1alpha1 holds Sleep (namespaced) and ClusterSleep (cluster-scoped) of the
// almanac.dev/v1alpha1 API: when the workloads of a namespace, or of many, are put to sleep
// (scaled to zero, suspended, paused) and woken, in what order and how fast; and the record,
// kept on each workload, of what it was before it slept.
//
// The group is almanac.dev, the calendars' group: it holds the kinds that are about a
// namespace or the cluster as a whole rather than one workload or one Job, each in a
// namespaced form and a Cluster form that only cluster administrators write
// (docs/design.md). When the windows open is the contract in docs/time-semantics.md ("Sleep");
// the code that implements it is package api/timing, and what a sleep does at an instant is
// package api/sleeping.
//
// +kubebuilder:object:generate=true
// +groupName=almanac.dev
package v1alpha1

import (
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/runtime"
	"k8s.io/apimachinery/pkg/runtime/schema"
)

// GroupVersion is the group and version of this API: the calendars' (api/calendar/v1alpha1).
var GroupVersion = schema.GroupVersion{Group: "almanac.dev", Version: "v1alpha1"}

var (
	// SchemeBuilder registers this API's types with a scheme.
	SchemeBuilder = runtime.NewSchemeBuilder(addKnownTypes)
	// AddToScheme adds this API's types to a scheme.
	AddToScheme = SchemeBuilder.AddToScheme
)

// The kinds of this package.
const (
	KindSleep        = "Sleep"
	KindClusterSleep = "ClusterSleep"
)

func addKnownTypes(scheme *runtime.Scheme) error {
	scheme.AddKnownTypes(GroupVersion,
		&Sleep{}, &SleepList{},
		&ClusterSleep{}, &ClusterSleepList{},
	)
	metav1.AddToGroupVersion(scheme, GroupVersion)
	return nil
}
