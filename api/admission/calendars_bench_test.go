package admission

import (
	"context"
	"fmt"
	"testing"

	autoscalingv1alpha1 "github.com/almanac-dev/almanac/api/autoscaling/v1alpha1"
	calendarv1alpha1 "github.com/almanac-dev/almanac/api/calendar/v1alpha1"
)

// BenchmarkValidateScheduleCalendars: the worst an autoscaler can ask of admission through
// calendars: 99 siblings, each naming 8 + 8 calendars of 1000 days and 1000 periods (the
// schema's limits), compared with a new Schedule that names them too.
func BenchmarkValidateScheduleCalendars(b *testing.B) {
	objs := []Object{spa("web", "Forbid")}
	var names []string
	for c := range 2 * calendarv1alpha1.MaxReferences {
		ds := make([]string, calendarv1alpha1.MaxDays)
		for i := range ds {
			ds[i] = fmt.Sprintf("%04d-%02d-%02d", 2027+i/300, 1+(i/25)%12, 1+i%25)
		}
		ps := make([]calendarv1alpha1.CalendarPeriod, calendarv1alpha1.MaxPeriods)
		for i := range ps {
			ps[i] = period(fmt.Sprintf("%04d-01-01T%02d:00", 2030+i, c), fmt.Sprintf("%04d-01-01T%02d:30", 2030+i, c))
		}
		name := fmt.Sprintf("cal-%d", c)
		names = append(names, name)
		objs = append(objs, calendar(name, "Europe/Berlin", days(ds...), ps...))
	}
	with := func(s *autoscalingv1alpha1.Schedule) *autoscalingv1alpha1.Schedule {
		return withCalendars(s, refs(names[:8]...), refs(names[8:]...))
	}
	for i := range autoscalingv1alpha1.MaxSchedules - 1 {
		objs = append(objs, with(schedule(fmt.Sprintf("s-%02d", i), daily(fmt.Sprintf("%02d:00", i%24), fmt.Sprintf("%02d:30", i%24), "UTC"))))
	}
	env := Env{Now: now, Objects: lookupOf(objs...)}
	s := with(schedule("new", daily("09:40", "09:50", "UTC")))
	b.ResetTimer()
	for b.Loop() {
		if _, _, err := ValidateSchedule(context.Background(), s, nil, env); err != nil {
			b.Fatal(err)
		}
	}
}
