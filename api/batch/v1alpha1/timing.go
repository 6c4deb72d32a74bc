package v1alpha1

import (
	"k8s.io/utils/ptr"

	calendarv1alpha1 "github.com/almanac-dev/almanac/api/calendar/v1alpha1"
	"github.com/almanac-dev/almanac/api/timing"
)

// Timing is what says when the ScheduledJob runs, for the time engine: spec.at or
// spec.schedule (with spec.businessDays) in spec.timeZone, and spec.spread with the namespace
// and name its offset is derived from. The webhooks, the reconciler and `almanac preview` all read a ScheduledJob
// through it, so that they shift its slots alike.
func (sj *ScheduledJob) Timing() timing.JobSpec {
	s := &sj.Spec
	return timing.JobSpec{At: s.At, Schedule: s.Schedule, TimeZone: s.TimeZone, Spread: s.Spread, BusinessDays: s.BusinessDays, Namespace: sj.Namespace, Name: sj.Name}
}

// TimingWith is Timing with the calendars that spec.calendars names, read from book (nil: none
// exist), and what is wrong with them (calendarv1alpha1.Book.Mask): the reconciler and
// `almanac preview` skip the same slots.
func (sj *ScheduledJob) TimingWith(book *calendarv1alpha1.Book) (timing.JobSpec, []string) {
	spec := sj.Timing()
	var problems []string
	spec.Calendars, problems = book.Mask(sj.Namespace, sj.Spec.Calendars)
	return spec, problems
}

// StartingDeadline returns startingDeadlineSeconds, with the default when it is omitted.
func (s *ScheduledJobSpec) StartingDeadline() int64 {
	return ptr.Deref(s.StartingDeadlineSeconds, DefaultStartingDeadlineSeconds)
}
