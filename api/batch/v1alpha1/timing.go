package v1alpha1

import (
	"k8s.io/utils/ptr"

	"github.com/almanac-dev/almanac/api/timing"
)

// Timing is what says when the ScheduledJob runs, for the time engine: spec.at or
// spec.schedule in spec.timeZone, and spec.spread with the namespace and name its offset is
// derived from. The webhooks, the reconciler and `almanac preview` all read a ScheduledJob
// through it, so that they shift its slots alike.
func (sj *ScheduledJob) Timing() timing.JobSpec {
	s := &sj.Spec
	return timing.JobSpec{At: s.At, Schedule: s.Schedule, TimeZone: s.TimeZone, Spread: s.Spread, Namespace: sj.Namespace, Name: sj.Name}
}

// StartingDeadline returns startingDeadlineSeconds, with the default when it is omitted.
func (s *ScheduledJobSpec) StartingDeadline() int64 {
	return ptr.Deref(s.StartingDeadlineSeconds, DefaultStartingDeadlineSeconds)
}
