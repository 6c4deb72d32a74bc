package v1alpha1

import (
	calendarv1alpha1 "github.com/almanac-dev/almanac/api/calendar/v1alpha1"
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
		BusinessDays:   s.BusinessDays,
		TimeZone:       s.TimeZone,
	}
}

// CalendarsOf returns the spec.calendars of the Schedules that name calendars, for reading
// the calendars they need at once.
func CalendarsOf(schedules []Schedule) []*calendarv1alpha1.Calendars {
	var out []*calendarv1alpha1.Calendars
	for i := range schedules {
		if !schedules[i].Spec.Calendars.Empty() {
			out = append(out, schedules[i].Spec.Calendars)
		}
	}
	return out
}
