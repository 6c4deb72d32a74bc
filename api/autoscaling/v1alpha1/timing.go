package v1alpha1

import (
	"github.com/almanac-dev/almanac/api/timing"
)

// Timing is the part of the spec that defines the Schedule's windows, for the time engine:
// the webhooks, the reconcilers and `almanac preview` all read a Schedule through it.
func (s *ScheduleSpec) Timing() timing.Spec {
	return timing.Spec{
		Type:           timing.Type(s.Type),
		StartTime:      s.StartTime,
		EndTime:        s.EndTime,
		StartDayOfWeek: s.StartDayOfWeek,
		EndDayOfWeek:   s.EndDayOfWeek,
		DaysOfWeek:     s.DaysOfWeek,
		Schedule:       s.Schedule,
		Duration:       s.Duration,
		TimeZone:       s.TimeZone,
	}
}
