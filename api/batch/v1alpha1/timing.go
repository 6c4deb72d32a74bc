package v1alpha1

import (
	"k8s.io/utils/ptr"

	"github.com/almanac-dev/almanac/api/timing"
)

// Timing is the part of the spec that says when the Job runs, for the time engine: the
// webhooks, the reconciler and `almanac preview` all read a ScheduledJob through it.
func (s *ScheduledJobSpec) Timing() timing.JobSpec {
	return timing.JobSpec{At: s.At, Schedule: s.Schedule, TimeZone: s.TimeZone}
}

// StartingDeadline returns startingDeadlineSeconds, with the default when it is omitted.
func (s *ScheduledJobSpec) StartingDeadline() int64 {
	return ptr.Deref(s.StartingDeadlineSeconds, DefaultStartingDeadlineSeconds)
}
