// Package index lists the cache field indexes that almanac's webhooks and reconcilers read: the
// field names and the functions that compute an object's values, defined next to the types
// in api/autoscaling/v1alpha1 and api/batch/v1alpha1.
//
// api/ imports no controller-runtime, so this package cannot register them itself: the manager
// (main.go; test/testenv for the tests' managers) registers each of All once, with a
// two-line adapter to controller-runtime's FieldIndexer. The webhooks and reconcilers only
// list with the field names; none of them registers an index, so none depends on another
// having been set up first.
package index

import (
	batchv1 "k8s.io/api/batch/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/runtime"

	autoscalingv1alpha1 "github.com/almanac-dev/almanac/api/autoscaling/v1alpha1"
	batchv1alpha1 "github.com/almanac-dev/almanac/api/batch/v1alpha1"
	calendarv1alpha1 "github.com/almanac-dev/almanac/api/calendar/v1alpha1"
	sleepv1alpha1 "github.com/almanac-dev/almanac/api/sleep/v1alpha1"
)

// scheduleCalendars are the calendars a Schedule names (calendarv1alpha1.ReferenceKey).
func scheduleCalendars(obj runtime.Object) []string {
	s, ok := obj.(*autoscalingv1alpha1.Schedule)
	if !ok {
		return nil
	}
	return calendarv1alpha1.ReferenceKeys(s.Namespace, s.Spec.Calendars)
}

// scheduledJobCalendars are the calendars a ScheduledJob names.
func scheduledJobCalendars(obj runtime.Object) []string {
	sj, ok := obj.(*batchv1alpha1.ScheduledJob)
	if !ok {
		return nil
	}
	return calendarv1alpha1.ReferenceKeys(sj.Namespace, sj.Spec.Calendars)
}

// sleepCalendars are the calendars a Sleep or ClusterSleep names.
func sleepCalendars(obj runtime.Object) []string {
	switch s := obj.(type) {
	case *sleepv1alpha1.Sleep:
		return calendarv1alpha1.ReferenceKeys(s.Namespace, s.Spec.Calendars)
	case *sleepv1alpha1.ClusterSleep:
		return calendarv1alpha1.ReferenceKeys("", s.Spec.Calendars)
	}
	return nil
}

// Object is an API object (the same methods as controller-runtime's client.Object, so a
// value of it can be passed as one).
type Object interface {
	metav1.Object
	runtime.Object
}

// Index is one cache field index.
type Index struct {
	// Object is an empty object of the indexed kind.
	Object Object
	// Field is the index's name, which List calls match with client.MatchingFields.
	Field string
	// Values returns the values under which an object is found.
	Values func(runtime.Object) []string
}

// All returns every index, each with a fresh Object.
func All() []Index {
	return []Index{
		{Object: &autoscalingv1alpha1.Schedule{}, Field: autoscalingv1alpha1.ScheduleTargetField, Values: autoscalingv1alpha1.ScheduleTarget},
		{Object: &autoscalingv1alpha1.ScheduledPodAutoscaler{}, Field: autoscalingv1alpha1.TargetField, Values: autoscalingv1alpha1.ScheduledPodAutoscalerTarget},
		{Object: &batchv1.Job{}, Field: batchv1alpha1.JobControllerField, Values: batchv1alpha1.JobController},
		{Object: &batchv1alpha1.EventJob{}, Field: batchv1alpha1.EventJobTriggerField, Values: batchv1alpha1.EventJobTrigger},
		{Object: &autoscalingv1alpha1.Schedule{}, Field: calendarv1alpha1.CalendarField, Values: scheduleCalendars},
		{Object: &batchv1alpha1.ScheduledJob{}, Field: calendarv1alpha1.CalendarField, Values: scheduledJobCalendars},
		{Object: &sleepv1alpha1.Sleep{}, Field: calendarv1alpha1.CalendarField, Values: sleepCalendars},
		{Object: &sleepv1alpha1.ClusterSleep{}, Field: calendarv1alpha1.CalendarField, Values: sleepCalendars},
	}
}
