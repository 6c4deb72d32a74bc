package v1alpha1

import (
	"github.com/almanac-dev/almanac/api/timing"
)

// Timing is the window for the time engine: the webhooks, the reconciler and the commands
// all read a sleep's window through it.
func (w *Window) Timing() timing.Spec {
	return timing.Spec{
		Type:           timing.Type(w.Type),
		StartTime:      w.StartTime,
		EndTime:        w.EndTime,
		StartDayOfWeek: w.StartDayOfWeek,
		EndDayOfWeek:   w.EndDayOfWeek,
		DaysOfWeek:     w.DaysOfWeek,
		Schedule:       w.Schedule,
		Duration:       w.Duration,
		BusinessDays:   w.BusinessDays,
		TimeZone:       w.TimeZone,
	}
}

// Windows returns the windows of spec (asleep or awake, whichever is given), their field
// name, and whether they are the awake windows.
func (s *SleepSpec) Windows() (windows []Window, field string, awake bool) {
	if len(s.Awake) > 0 {
		return s.Awake, "awake", true
	}
	return s.Asleep, "asleep", false
}
