package admission

import (
	"context"
	"testing"

	"github.com/google/go-cmp/cmp"
	"k8s.io/utils/ptr"

	autoscalingv1alpha1 "github.com/almanac-dev/almanac/api/autoscaling/v1alpha1"
	batchv1alpha1 "github.com/almanac-dev/almanac/api/batch/v1alpha1"
	calendarv1alpha1 "github.com/almanac-dev/almanac/api/calendar/v1alpha1"
)

// The day forms of cron schedules (L, L-n, LW, nW, W#n, D#n, DL) and businessDays, as the
// webhooks and `almanac validate` admit them: refusals name the field, what was wrong and the
// fix; what depends on other objects (the calendars) is a warning.

func TestValidateScheduledJobBusinessDays(t *testing.T) {
	freeze := calendar("freeze", "Europe/Berlin", nil, period("2020-01-01T00:00", "2040-01-01T00:00"))
	holidays := calendar("holidays", "Europe/Berlin", days("12-25", "12-26"))
	job := func(schedule string, business ...string) *batchv1alpha1.ScheduledJob {
		return scheduledJob("close", batchv1alpha1.ScheduledJobSpec{Schedule: schedule, TimeZone: "Europe/Berlin", BusinessDays: business})
	}
	withCalendars := func(sj *batchv1alpha1.ScheduledJob, skip ...string) *batchv1alpha1.ScheduledJob {
		sj.Spec.Calendars = &calendarv1alpha1.Calendars{Skip: refs(skip...)}
		return sj
	}
	tests := []struct {
		name    string
		obj     *batchv1alpha1.ScheduledJob
		old     *batchv1alpha1.ScheduledJob
		objects []Object
		want    result
	}{{
		name: "the last business day, the second, the one nearest the 15th, the first Monday, the last Friday",
		obj:  job("0 18 LW,W#2,15W * *"),
	}, {
		name: "the nth and last weekday",
		obj:  job("0 9 * * MON#1,FRIL,5L"),
	}, {
		name: "other business days",
		obj:  job("0 9 LW * *", "Sunday", "Monday", "Tuesday", "Wednesday", "Thursday"),
	}, {
		name:    "holidays that leave days",
		obj:     withCalendars(job("0 18 LW * *"), "holidays"),
		objects: []Object{holidays},
	}, {
		name: "a form in the wrong field",
		obj:  job("0 9 MON#1 * *"),
		want: result{Errors: []string{`spec.schedule: Invalid value: "0 9 MON#1 * *": "0 9 MON#1 * *" is not a valid cron schedule: day-of-month field: ` +
			`"MON#1" is not a day-of-month form: the forms L, L-n, LW, nW and W#n are items of the day-of-month field and D#n and DL (MON#1, FRIL) of the day-of-week field, ` +
			`each on its own (no ranges or steps); e.g. LW for the last business day, W#2 for the second, 15W for the one nearest the 15th`}},
	}, {
		name: "a form out of range",
		obj:  job("0 9 * * FRI#6"),
		want: result{Errors: []string{`spec.schedule: Invalid value: "0 9 * * FRI#6": "0 9 * * FRI#6" is not a valid cron schedule: day-of-week field: ` +
			`"FRI#6": the n of D#n (the nth such weekday of the month) is a number from 1 to 5`}},
	}, {
		name: "more business days than a month has",
		obj:  job("0 9 W#22 * *", "Monday", "Tuesday", "Wednesday", "Thursday"),
		want: result{Errors: []string{`spec.schedule: Invalid value: "0 9 W#22 * *": "0 9 W#22 * *" never fires: no date matches its day-of-month, month and day-of-week fields ` +
			`with the business days Monday to Thursday (a month has 28 to 31 days, at most 5 of each weekday and, counting Monday to Friday, at most 23 business days); check those fields`}},
	}, {
		name: "too rare for the engine's horizon",
		obj:  job("0 9 * 2 MON#5"),
		want: result{Errors: []string{`spec.schedule: Invalid value: "0 9 * 2 MON#5": "0 9 * 2 MON#5" fires too rarely: it goes from 1988-02-29 to 2016-02-29 without a run, ` +
			`longer than the eight years within which almanac looks for the next run; check the day-of-month, month and day-of-week fields`}},
	}, {
		name: "businessDays without a business-day form",
		obj:  job("0 9 L * *", "Monday"),
		want: result{Errors: []string{`spec.businessDays: Invalid value: "Monday": "Monday" is set, but schedule "0 9 L * *" has no business-day form, so it would change nothing: ` +
			`remove it, or use a form that counts business days in the day-of-month field: LW (the last business day), W#2 (the second), 15W (the one nearest the 15th)`}},
	}, {
		name: "a business day that is not a day",
		obj:  job("0 9 LW * *", "Monday", "Fryday"),
		want: result{Errors: []string{`spec.businessDays[1]: Invalid value: "Fryday": "Fryday" is not a day of the week (did you mean "Friday"?): expected Monday to Sunday, or Mon to Sun, e.g. "Friday"`}},
	}, {
		name: "both day fields restricted: a day that matches either fires",
		obj:  job("0 9 LW * MON-FRI"),
		want: result{Warnings: []string{`spec.schedule: "0 9 LW * MON-FRI" restricts both day fields, so it fires on each day that matches either, as cron does: LW or MON-FRI. ` +
			`If LW should only count business days, write * in the day-of-week field and list the business weekdays in businessDays`}},
	}, {
		name:    "calendars that close every business day: a warning with the engine's reason",
		obj:     withCalendars(job("0 18 LW * *"), "freeze"),
		objects: []Object{freeze},
		want: result{Warnings: []string{`spec.calendars: "0 18 LW * *" has no slot within eight years after 2027-01-15 13:00 Europe/Berlin: ` +
			`its business days (Monday to Friday, at 18:00) are all closed by Calendar freeze, so its business-day forms find no day; ` +
			`check the calendars (spec.calendars) and the business days (spec.businessDays)`}},
	}, {
		name:    "a calendar that does not exist holds the object, but leaves the business days alone",
		obj:     withCalendars(job("0 18 LW * *"), "holidays"),
		objects: nil,
		want: result{Warnings: []string{`spec.calendars.skip[0]: Calendar holidays does not exist in namespace "ns": until it does, no window of this object opens and no run starts ` +
			`(a missing calendar holds it); create it, or correct the name or kind (Calendar or ClusterCalendar)`}},
	}, {
		name: "ratcheted when the schedule did not change",
		obj:  withTeamLabel(job("0 9 L * *", "Monday")),
		old:  job("0 9 L * *", "Monday"),
		want: result{Warnings: []string{`spec.businessDays: Invalid value: "Monday": "Monday" is set, but schedule "0 9 L * *" has no business-day form, so it would change nothing: ` +
			`remove it, or use a form that counts business days in the day-of-month field: LW (the last business day), W#2 (the second), 15W (the one nearest the 15th) ` +
			`(admitted because this field did not change)`}},
	}, {
		name: "not ratcheted when businessDays changed",
		obj:  job("0 9 L * *", "Monday"),
		old:  job("0 9 L * *"),
		want: result{Errors: []string{`spec.businessDays: Invalid value: "Monday": "Monday" is set, but schedule "0 9 L * *" has no business-day form, so it would change nothing: ` +
			`remove it, or use a form that counts business days in the day-of-month field: LW (the last business day), W#2 (the second), 15W (the one nearest the 15th)`}},
	}}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			errs, warnings, err := ValidateScheduledJob(context.Background(), tt.obj, tt.old, Env{Now: now, Objects: lookupOf(tt.objects...)})
			if err != nil {
				t.Fatal(err)
			}
			if diff := cmp.Diff(tt.want, toResult(errs, warnings)); diff != "" {
				t.Errorf("(-want +got):\n%s", diff)
			}
		})
	}
}

func TestValidateScheduleBusinessDays(t *testing.T) {
	web := spa("web", "Max")
	freeze := calendar("freeze", "UTC", nil, period("2020-01-01T00:00", "2040-01-01T00:00"))
	cron := func(schedule string, business ...string) autoscalingv1alpha1.ScheduleSpec {
		return autoscalingv1alpha1.ScheduleSpec{Type: "Cron", Schedule: schedule, Duration: "10h", TimeZone: "UTC", BusinessDays: business}
	}
	frozen := cron("0 8 LW * *")
	frozen.Calendars = &calendarv1alpha1.Calendars{Skip: refs("freeze")}
	daily := weekdays("09:00", "17:00", "UTC")
	daily.BusinessDays = []string{"Monday"}
	tests := []struct {
		name    string
		obj     *autoscalingv1alpha1.Schedule
		objects []Object
		want    result
	}{{
		name:    "month-end capacity on the last business day",
		obj:     schedule("month-end", cron("0 8 LW * *", "Monday", "Tuesday", "Wednesday", "Thursday")),
		objects: []Object{web},
	}, {
		name:    "the first Monday",
		obj:     schedule("first-monday", cron("0 8 * * MON#1")),
		objects: []Object{web},
	}, {
		name:    "businessDays on a Daily window",
		obj:     schedule("daily", daily),
		objects: []Object{web},
		want: result{Errors: []string{`spec.businessDays: Invalid value: "Monday": "Monday" is set, but Daily windows do not use this field: remove it; ` +
			`business days are for the business-day forms of a Cron window's schedule (LW, 15W, W#2)`}},
	}, {
		name:    "businessDays without a business-day form",
		obj:     schedule("month-end", cron("0 8 L * *", "Monday")),
		objects: []Object{web},
		want: result{Errors: []string{`spec.businessDays: Invalid value: "Monday": "Monday" is set, but schedule "0 8 L * *" has no business-day form, so it would change nothing: ` +
			`remove it, or use a form that counts business days in the day-of-month field: LW (the last business day), W#2 (the second), 15W (the one nearest the 15th)`}},
	}, {
		name:    "calendars that close every business day",
		obj:     schedule("frozen", frozen),
		objects: []Object{web, freeze},
		want: result{Warnings: []string{`spec.calendars: "0 8 LW * *" has no slot within eight years after 2027-01-15 12:00 UTC: ` +
			`its business days (Monday to Friday, at 08:00) are all closed by Calendar freeze, so its business-day forms find no day; ` +
			`check the calendars (spec.calendars) and the business days (spec.businessDays)`}},
	}}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			errs, warnings, err := ValidateSchedule(context.Background(), tt.obj, nil, Env{Now: now, Objects: lookupOf(tt.objects...)})
			if err != nil {
				t.Fatal(err)
			}
			if diff := cmp.Diff(tt.want, toResult(errs, warnings)); diff != "" {
				t.Errorf("(-want +got):\n%s", diff)
			}
		})
	}
}

// TestDefaultBusinessDays: admission stores businessDays as full names, Monday first, each
// once, and the schedule's forms as written.
func TestDefaultBusinessDays(t *testing.T) {
	sj := scheduledJob("close", batchv1alpha1.ScheduledJobSpec{Schedule: "  0 18   lw * *", BusinessDays: []string{"fri", "MON", "monday", "thu"}})
	DefaultScheduledJob(sj)
	if diff := cmp.Diff([]string{"Monday", "Thursday", "Friday"}, sj.Spec.BusinessDays); diff != "" {
		t.Errorf("ScheduledJob businessDays (-want +got):\n%s", diff)
	}
	if sj.Spec.Schedule != "0 18 lw * *" {
		t.Errorf("schedule = %q", sj.Spec.Schedule)
	}
	s := schedule("month-end", autoscalingv1alpha1.ScheduleSpec{Type: "Cron", Schedule: "0 8 LW * *", Duration: "1h", BusinessDays: []string{"sun", "Thursday"}, MinReplicas: ptr.To(int32(3))})
	DefaultSchedule(s)
	if diff := cmp.Diff([]string{"Thursday", "Sunday"}, s.Spec.BusinessDays); diff != "" {
		t.Errorf("Schedule businessDays (-want +got):\n%s", diff)
	}
}
