package v1alpha1

import (
	"k8s.io/apimachinery/pkg/runtime"
)

// ScheduleTargetField is the cache field index of Schedules by the name of the
// ScheduledPodAutoscaler they change (spec.scaleTargetRef.name, in the Schedule's namespace).
// The manager registers it once (api/index lists every index); the Schedule webhook and the
// reconcilers list a Schedule's siblings with it.
const ScheduleTargetField = "spec.scaleTargetRef.name"

// ScheduleTarget returns the ScheduleTargetField values of a Schedule: its autoscaler's name.
func ScheduleTarget(obj runtime.Object) []string {
	s, ok := obj.(*Schedule)
	if !ok || s.Spec.ScaleTargetRef.Name == "" {
		return nil
	}
	return []string{s.Spec.ScaleTargetRef.Name}
}
