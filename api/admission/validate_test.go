package admission

import (
	"context"
	"errors"
	"fmt"
	"strings"
	"testing"
	"time"

	"github.com/google/go-cmp/cmp"
	autoscalingv2 "k8s.io/api/autoscaling/v2"
	batchv1 "k8s.io/api/batch/v1"
	corev1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"
	"k8s.io/apimachinery/pkg/runtime/schema"
	"k8s.io/apimachinery/pkg/util/validation/field"
	"k8s.io/utils/ptr"

	autoscalingv1alpha1 "github.com/almanac-dev/almanac/api/autoscaling/v1alpha1"
	batchv1alpha1 "github.com/almanac-dev/almanac/api/batch/v1alpha1"
	calendarv1alpha1 "github.com/almanac-dev/almanac/api/calendar/v1alpha1"
	"github.com/almanac-dev/almanac/api/timing"
)

// now is Friday 2027-01-15 12:00 UTC.
var now = time.Date(2027, time.January, 15, 12, 0, 0, 0, time.UTC)

// lookupOf is a Lookup over the given objects (the CLI's, which is a plain in-memory set).
func lookupOf(objs ...Object) *inputLookup {
	l := newInputLookup()
	for _, obj := range objs {
		obj.SetNamespace("ns")
		if _, cluster := obj.(*calendarv1alpha1.ClusterCalendar); cluster {
			obj.SetNamespace("")
		}
		gvk := allRulesKind(obj)
		switch o := obj.(type) {
		case *unstructured.Unstructured: // another kind, as `almanac validate` reads it
			l.exists[objectKey(o.GroupVersionKind().GroupKind(), "ns", o.GetName())] = true
			l.addHPA(o)
			continue
		case *autoscalingv2.HorizontalPodAutoscaler:
			l.exists[objectKey(hpaGroupKind, "ns", o.Name)] = true
			l.hpas[objectKey(hpaGroupKind, "ns", o.Name)] = o
			continue
		}
		if gvk.Empty() {
			// Not almanac's: it only exists.
			kind := map[string]string{"*v1.Job": "Job", "*v1.CronJob": "CronJob"}[typeName(obj)]
			l.exists[objectKey(schema.GroupKind{Group: "batch", Kind: kind}, "ns", obj.GetName())] = true
			continue
		}
		l.all[objectKey(gvk.GroupKind(), obj.GetNamespace(), obj.GetName())] = obj
		l.admit(obj)
	}
	return l
}

func typeName(obj Object) string {
	switch obj.(type) {
	case *batchv1.Job:
		return "*v1.Job"
	case *batchv1.CronJob:
		return "*v1.CronJob"
	}
	return ""
}

type result struct {
	Errors   []string // "field: message"
	Warnings []string
}

func toResult(errs field.ErrorList, warnings []string) result {
	var r result
	for _, e := range errs {
		r.Errors = append(r.Errors, e.Error())
	}
	r.Warnings = warnings
	return r
}

func spa(name string, policy autoscalingv1alpha1.OverlapPolicy) *autoscalingv1alpha1.ScheduledPodAutoscaler {
	return &autoscalingv1alpha1.ScheduledPodAutoscaler{
		ObjectMeta: metav1.ObjectMeta{Name: name},
		Spec:       autoscalingv1alpha1.ScheduledPodAutoscalerSpec{OverlapPolicy: policy},
	}
}

func schedule(name string, spec autoscalingv1alpha1.ScheduleSpec) *autoscalingv1alpha1.Schedule {
	if spec.ScaleTargetRef.Name == "" {
		spec.ScaleTargetRef = defaultRef
	}
	if spec.MinReplicas == nil {
		spec.MinReplicas = ptr.To(int32(2))
	}
	return &autoscalingv1alpha1.Schedule{ObjectMeta: metav1.ObjectMeta{Name: name, Namespace: "ns"}, Spec: spec}
}

func daily(start, end, zone string) autoscalingv1alpha1.ScheduleSpec {
	return autoscalingv1alpha1.ScheduleSpec{Type: "Daily", StartTime: start, EndTime: end, TimeZone: zone}
}

func weekdays(start, end, zone string, days ...string) autoscalingv1alpha1.ScheduleSpec {
	spec := daily(start, end, zone)
	spec.DaysOfWeek = days
	return spec
}

func TestValidateSchedule(t *testing.T) {
	web := spa("web", "Max")
	forbid := spa("web", "Forbid")
	nineToFive := schedule("office", daily("09:00", "17:00", "Asia/Tokyo"))
	past := autoscalingv1alpha1.ScheduleSpec{Type: "OneShot", StartTime: "2026-12-24T18:00", EndTime: "2026-12-26T00:00", TimeZone: "Europe/Berlin"}
	tests := []struct {
		name    string
		obj     *autoscalingv1alpha1.Schedule
		old     *autoscalingv1alpha1.Schedule
		objects []Object
		want    result
	}{{
		name:    "valid",
		obj:     schedule("a", daily("09:00", "17:00", "Asia/Tokyo")),
		objects: []Object{web},
	}, {
		name:    "unknown zone with suggestions",
		obj:     schedule("a", daily("09:00", "17:00", "Asia/Tokio")),
		objects: []Object{web},
		want:    result{Errors: []string{`spec.timeZone: Invalid value: "Asia/Tokio": "Asia/Tokio" is not a known IANA time zone: did you mean "Asia/Tokyo"?`}},
	}, {
		name:    "half-hour offset",
		obj:     schedule("a", daily("09:00", "17:00", "+05:30")),
		objects: []Object{web},
		want: result{Errors: []string{`spec.timeZone: Invalid value: "+05:30": "+05:30" is not a whole-hour offset: only whole-hour offsets have a fixed zone (Etc/GMT±N); ` +
			`use the IANA zone of the place instead, e.g. "Asia/Kolkata" for +05:30`}},
	}, {
		name:    "Local",
		obj:     schedule("a", daily("09:00", "17:00", "Local")),
		objects: []Object{web},
		want: result{Errors: []string{`spec.timeZone: Invalid value: "Local": "Local" means the zone of the machine that evaluates the schedule, which differs between machines: ` +
			`use an IANA name such as "Europe/Berlin", or "UTC"`}},
	}, {
		name:    "start equals end",
		obj:     schedule("a", daily("09:00", "09:00", "UTC")),
		objects: []Object{web},
		want: result{Errors: []string{`spec.endTime: Invalid value: "09:00": "09:00" equals the start time: the window would be empty; ` +
			`an end at or before the start crosses midnight (e.g. 22:00 to 02:00)`}},
	}, {
		name:    "stale OneShot on create",
		obj:     schedule("a", past),
		objects: []Object{web},
		want: result{Errors: []string{`spec.endTime: Invalid value: "2026-12-26T00:00": the window ended at 2026-12-26 00:00 Europe/Berlin (2026-12-25 23:00 UTC), ` +
			`which is not after now (2027-01-15 12:00 UTC): a OneShot Schedule in the past would never be active; set startTime and endTime to a future window, or delete the Schedule`}},
	}, {
		name:    "stale OneShot, update that leaves the window alone (ratcheted)",
		obj:     schedule("a", past),
		old:     schedule("a", past),
		objects: []Object{web},
		want: result{Warnings: []string{"spec.endTime: the OneShot window ended at 2026-12-26 00:00 Europe/Berlin (2026-12-25 23:00 UTC): " +
			"this Schedule will never be active again; delete it when it is no longer needed"}},
	}, {
		name: "stale OneShot, update that changes the window",
		obj:  schedule("a", past),
		old: schedule("a", autoscalingv1alpha1.ScheduleSpec{
			Type: "OneShot", StartTime: "2026-12-24T18:00", EndTime: "2026-12-25T00:00", TimeZone: "Europe/Berlin",
		}),
		objects: []Object{web},
		want: result{Errors: []string{`spec.endTime: Invalid value: "2026-12-26T00:00": the window ended at 2026-12-26 00:00 Europe/Berlin (2026-12-25 23:00 UTC), ` +
			`which is not after now (2027-01-15 12:00 UTC): a OneShot Schedule in the past would never be active; set startTime and endTime to a future window, or delete the Schedule`}},
	}, {
		name:    "@every",
		obj:     schedule("a", autoscalingv1alpha1.ScheduleSpec{Type: "Cron", Schedule: "@every 5m", Duration: "1m"}),
		objects: []Object{web},
		want: result{Errors: []string{`spec.schedule: Invalid value: "@every 5m": "@every 5m" is not supported: @every counts from when the controller started and ignores the time zone; ` +
			`use a 5-field schedule such as "*/5 * * * *"`}},
	}, {
		name:    "TZ= prefix",
		obj:     schedule("a", autoscalingv1alpha1.ScheduleSpec{Type: "Cron", Schedule: "TZ=Asia/Tokyo 0 9 * * *", Duration: "1h"}),
		objects: []Object{web},
		want: result{Errors: []string{`spec.schedule: Invalid value: "TZ=Asia/Tokyo 0 9 * * *": "TZ=Asia/Tokyo 0 9 * * *" sets a time zone inside the schedule: ` +
			`remove "TZ=Asia/Tokyo" and set the schedule's time zone to "Asia/Tokyo" instead`}},
	}, {
		name:    "cron that never fires, and a duration under a minute",
		obj:     schedule("a", autoscalingv1alpha1.ScheduleSpec{Type: "Cron", Schedule: "0 0 30 2 *", Duration: "30s"}),
		objects: []Object{web},
		want: result{Errors: []string{
			`spec.schedule: Invalid value: "0 0 30 2 *": ` + neverFires(t, "0 0 30 2 *"),
			`spec.duration: Invalid value: "30s": "30s" is shorter than one minute: expected a Go duration of at least 1m, e.g. "90m" or "2h30m"`,
		}},
	}, {
		name:    "DST gap and repeat",
		obj:     schedule("a", daily("02:30", "01:30", "America/New_York")),
		objects: []Object{web},
		want: result{Warnings: []string{
			"spec.startTime: 02:30 does not exist in America/New_York on 2027-03-14 (clocks jump from 02:00 to 03:00): the window starts at 03:00 EDT (07:00 UTC)",
			"spec.endTime: 01:30 occurs twice in America/New_York on 2027-11-07 (clocks go back from 02:00 to 01:00): the window ends at the first occurrence, 01:30 EDT (05:30 UTC)",
		}},
	}, {
		name:    "legacy zone name",
		obj:     schedule("a", daily("09:00", "17:00", "EST")),
		objects: []Object{web},
		want:    result{Warnings: []string{"spec.timeZone: EST is a fixed UTC-05:00 offset without daylight saving time; for US Eastern time use America/New_York"}},
	}, {
		name: "missing autoscaler",
		obj:  schedule("a", daily("09:00", "17:00", "UTC")),
		want: result{Warnings: []string{`spec.scaleTargetRef.name: ScheduledPodAutoscaler "web" does not exist in namespace "ns": this Schedule changes nothing until it is created`}},
	}, {
		name:    "overlap under Forbid",
		obj:     schedule("a", daily("16:00", "18:00", "Asia/Tokyo")),
		objects: []Object{forbid, nineToFive},
		want: result{Errors: []string{`spec: Forbidden: the windows overlap those of Schedule "office", and ScheduledPodAutoscaler "web" has overlapPolicy Forbid: ` +
			`both are active from 2027-01-16 16:00 to 17:00 Asia/Tokyo (2027-01-16 07:00 to 08:00 UTC); move or shorten one of the windows, or set the autoscaler's overlapPolicy to Max`}},
	}, {
		name:    "overlap under Forbid, first interval already open",
		obj:     schedule("a", daily("20:00", "22:00", "Asia/Tokyo")),
		objects: []Object{forbid, schedule("evening", daily("21:00", "23:00", "Asia/Tokyo"))},
		want: result{Errors: []string{`spec: Forbidden: the windows overlap those of Schedule "evening", and ScheduledPodAutoscaler "web" has overlapPolicy Forbid: ` +
			`both are active from 2027-01-15 21:00 to 22:00 Asia/Tokyo (2027-01-15 12:00 to 13:00 UTC); move or shorten one of the windows, or set the autoscaler's overlapPolicy to Max`}},
	}, {
		name:    "overlap under Forbid with another zone",
		obj:     schedule("a", daily("07:00", "09:00", "UTC")),
		objects: []Object{forbid, nineToFive},
		want: result{Errors: []string{`spec: Forbidden: the windows overlap those of Schedule "office", and ScheduledPodAutoscaler "web" has overlapPolicy Forbid: ` +
			`both are active from 2027-01-16 07:00 to 08:00 UTC; move or shorten one of the windows, or set the autoscaler's overlapPolicy to Max`}},
	}, {
		name:    "overlap under Forbid, update that leaves the window alone (ratcheted)",
		obj:     schedule("a", daily("16:00", "18:00", "Asia/Tokyo")),
		old:     schedule("a", daily("16:00", "18:00", "Asia/Tokyo")),
		objects: []Object{forbid, nineToFive},
		want:    result{Warnings: []string{`spec: the windows overlap those of Schedule "office" (overlapPolicy Forbid) from 2027-01-16 16:00 to 17:00 Asia/Tokyo (2027-01-16 07:00 to 08:00 UTC)`}},
	}, {
		name:    "touching windows do not overlap; the Schedule itself is not its sibling",
		obj:     schedule("office", daily("17:00", "18:00", "Asia/Tokyo")),
		objects: []Object{forbid, nineToFive, schedule("office", daily("09:00", "17:00", "Asia/Tokyo")), schedule("late", daily("18:00", "19:00", "Asia/Tokyo"))},
	}, {
		name:    "a suspended sibling counts",
		obj:     schedule("a", daily("16:00", "18:00", "Asia/Tokyo")),
		objects: []Object{forbid, suspended(nineToFive)},
		want: result{Errors: []string{`spec: Forbidden: the windows overlap those of Schedule "office", and ScheduledPodAutoscaler "web" has overlapPolicy Forbid: ` +
			`both are active from 2027-01-16 16:00 to 17:00 Asia/Tokyo (2027-01-16 07:00 to 08:00 UTC); move or shorten one of the windows, or set the autoscaler's overlapPolicy to Max`}},
	}, {
		name:    "siblings of another autoscaler do not count",
		obj:     schedule("a", daily("16:00", "18:00", "Asia/Tokyo")),
		objects: []Object{forbid, schedule("other", autoscalingv1alpha1.ScheduleSpec{ScaleTargetRef: autoscalingv1alpha1.ScaleTargetReference{Name: "api"}, Type: "Daily", StartTime: "09:00", EndTime: "17:00", TimeZone: "Asia/Tokyo"})},
	}, {
		name:    "overlap under Max is a warning",
		obj:     schedule("a", daily("16:00", "18:00", "Asia/Tokyo")),
		objects: []Object{web, nineToFive},
		want: result{Warnings: []string{`spec: the windows overlap those of Schedule "office" from 2027-01-16 16:00 to 17:00 Asia/Tokyo (2027-01-16 07:00 to 08:00 UTC); ` +
			`while both are active the largest minReplicas and the largest maxReplicas apply (overlapPolicy Max)`}},
	}, {
		name: "many overlaps are summarized",
		obj:  schedule("a", daily("00:00", "23:00", "UTC")),
		objects: []Object{forbid,
			schedule("s1", daily("01:00", "02:00", "UTC")), schedule("s2", daily("02:00", "03:00", "UTC")), schedule("s3", daily("03:00", "04:00", "UTC")),
			schedule("s4", daily("04:00", "05:00", "UTC")), schedule("s5", daily("05:00", "06:00", "UTC"))},
		want: result{Errors: []string{
			`spec: Forbidden: the windows overlap those of Schedule "s1", and ScheduledPodAutoscaler "web" has overlapPolicy Forbid: both are active from 2027-01-16 01:00 to 02:00 UTC; move or shorten one of the windows, or set the autoscaler's overlapPolicy to Max`,
			`spec: Forbidden: the windows overlap those of Schedule "s2", and ScheduledPodAutoscaler "web" has overlapPolicy Forbid: both are active from 2027-01-16 02:00 to 03:00 UTC; move or shorten one of the windows, or set the autoscaler's overlapPolicy to Max`,
			`spec: Forbidden: the windows overlap those of Schedule "s3", and ScheduledPodAutoscaler "web" has overlapPolicy Forbid: both are active from 2027-01-16 03:00 to 04:00 UTC; move or shorten one of the windows, or set the autoscaler's overlapPolicy to Max`,
			`spec: Forbidden: 2 more Schedules of ScheduledPodAutoscaler "web" overlap this one`,
		}},
	}, {
		name:    "daysOfWeek: a day that is not one, by its index",
		obj:     schedule("a", weekdays("09:00", "18:00", "Asia/Tokyo", "Monday", "Fryday")),
		objects: []Object{web},
		want: result{Errors: []string{`spec.daysOfWeek[1]: Invalid value: "Fryday": "Fryday" is not a day of the week (did you mean "Friday"?): ` +
			`expected Monday to Sunday, or Mon to Sun, e.g. "Friday"`}},
	}, {
		name: "daysOfWeek on a Weekly window",
		obj: schedule("a", autoscalingv1alpha1.ScheduleSpec{Type: "Weekly", StartDayOfWeek: "Monday", StartTime: "11:50", EndDayOfWeek: "Wednesday", EndTime: "13:00",
			DaysOfWeek: []string{"Monday", "Wednesday"}, TimeZone: "Asia/Tokyo"}),
		objects: []Object{web},
		want: result{Errors: []string{`spec.daysOfWeek: Invalid value: "Monday, Wednesday": "Monday, Wednesday" is set, but Weekly windows do not use this field: remove it; ` +
			`a Weekly window is one stretch from its start day and time to its end day and time, while type Daily with these days opens the same hours on each of them`}},
	}, {
		name:    "weekdays only: overlaps are found on the days both open",
		obj:     schedule("a", weekdays("16:00", "18:00", "Asia/Tokyo", "Saturday")),
		objects: []Object{forbid, schedule("office", weekdays("09:00", "17:00", "Asia/Tokyo", "Monday", "Tuesday", "Wednesday", "Thursday", "Friday", "Saturday"))},
		want: result{Errors: []string{`spec: Forbidden: the windows overlap those of Schedule "office", and ScheduledPodAutoscaler "web" has overlapPolicy Forbid: ` +
			`both are active from 2027-01-16 16:00 to 17:00 Asia/Tokyo (2027-01-16 07:00 to 08:00 UTC); move or shorten one of the windows, or set the autoscaler's overlapPolicy to Max`}},
	}, {
		name:    "no overlap when the days differ",
		obj:     schedule("a", weekdays("16:00", "18:00", "Asia/Tokyo", "Saturday", "Sunday")),
		objects: []Object{forbid, schedule("office", weekdays("09:00", "17:00", "Asia/Tokyo", "Monday", "Tuesday", "Wednesday", "Thursday", "Friday"))},
	}, {
		name:    "an update that changes only daysOfWeek is checked again (not ratcheted)",
		obj:     schedule("a", weekdays("16:00", "18:00", "Asia/Tokyo", "Saturday")),
		old:     schedule("a", weekdays("16:00", "18:00", "Asia/Tokyo", "Sunday")),
		objects: []Object{forbid, schedule("office", weekdays("09:00", "17:00", "Asia/Tokyo", "Saturday"))},
		want: result{Errors: []string{`spec: Forbidden: the windows overlap those of Schedule "office", and ScheduledPodAutoscaler "web" has overlapPolicy Forbid: ` +
			`both are active from 2027-01-16 16:00 to 17:00 Asia/Tokyo (2027-01-16 07:00 to 08:00 UTC); move or shorten one of the windows, or set the autoscaler's overlapPolicy to Max`}},
	}, {
		name: "a Weekly window over several days whose end time is after its start time: how long, and how to write each day",
		obj: schedule("a", autoscalingv1alpha1.ScheduleSpec{Type: "Weekly", StartDayOfWeek: "Monday", StartTime: "11:50", EndDayOfWeek: "Wednesday", EndTime: "13:00",
			TimeZone: "Asia/Tokyo"}),
		objects: []Object{web},
		want: result{Warnings: []string{`spec: a Weekly window is one stretch of time: Monday 11:50 to Wednesday 13:00 in Asia/Tokyo is open for 2 days 1 hour 10 minutes at a time, once a week. ` +
			`For 11:50 to 13:00 on each day from Monday to Wednesday, write type: Daily, startTime: "11:50", endTime: "13:00", daysOfWeek: [Monday, Tuesday, Wednesday] ` +
			"(scheduled-pod-autoscaler read Weekly fields that way; `almanac migrate` converts its manifests)"}},
	}, {
		name: "the same over the whole week says every day",
		obj: schedule("a", autoscalingv1alpha1.ScheduleSpec{Type: "Weekly", StartDayOfWeek: "Tuesday", StartTime: "09:00", EndDayOfWeek: "Monday", EndTime: "10:00",
			TimeZone: "UTC"}),
		objects: []Object{web},
		want: result{Warnings: []string{`spec: a Weekly window is one stretch of time: Tuesday 09:00 to Monday 10:00 in UTC is open for 6 days 1 hour at a time, once a week. ` +
			`For 09:00 to 10:00 on each day from Tuesday to Monday, write type: Daily, startTime: "09:00", endTime: "10:00" (every day) ` +
			"(scheduled-pod-autoscaler read Weekly fields that way; `almanac migrate` converts its manifests)"}},
	}, {
		name: "a weekend window (end time before start time) and a window on one day are not warned about",
		obj: schedule("a", autoscalingv1alpha1.ScheduleSpec{Type: "Weekly", StartDayOfWeek: "Friday", StartTime: "18:00", EndDayOfWeek: "Monday", EndTime: "08:00",
			TimeZone: "UTC"}),
		objects: []Object{web, schedule("b", autoscalingv1alpha1.ScheduleSpec{Type: "Weekly", StartDayOfWeek: "Tuesday", StartTime: "10:00", EndDayOfWeek: "Tuesday", EndTime: "19:00"})},
	}, {
		name: "being deleted",
		obj: func() *autoscalingv1alpha1.Schedule {
			s := schedule("a", past)
			s.DeletionTimestamp = &metav1.Time{Time: now}
			return s
		}(),
	}}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			errs, warnings, err := ValidateSchedule(context.Background(), tt.obj, tt.old, Env{Now: now, Objects: lookupOf(tt.objects...)})
			if err != nil {
				t.Fatal(err)
			}
			if diff := cmp.Diff(tt.want, toResult(errs, warnings)); diff != "" {
				t.Errorf("(-want +got):\n%s", diff)
			}
		})
	}
}

// cronSpec is a Cron window in UTC.
func cronSpec(schedule, duration string) autoscalingv1alpha1.ScheduleSpec {
	return autoscalingv1alpha1.ScheduleSpec{Type: "Cron", Schedule: schedule, Duration: duration, TimeZone: "UTC"}
}

// TestValidateScheduleLimits: what a hostile or careless tenant sends, next to the ordinary
// shapes: a Cron window that opens every other minute (refused on its own field, with the
// limit and the fix; only a warning on an update that leaves it alone), the Schedule one past
// the most an autoscaler may have, and, under Forbid, a Schedule next to siblings that cannot
// be compared (stored without these checks): refused, naming them; under Max a warning.
// Touching hourly windows, at the limit, are compared and admitted.
func TestValidateScheduleLimits(t *testing.T) {
	web, forbid := spa("web", "Max"), spa("web", "Forbid")
	dense := schedule("dense", cronSpec("*/2 * * * *", "1m"))
	hourlyAt := func(name string, minute int) *autoscalingv1alpha1.Schedule {
		return schedule(name, cronSpec(fmt.Sprintf("%d * * * *", minute), "1m"))
	}
	full := func(extra ...Object) []Object {
		objs := []Object{forbid}
		for i := range autoscalingv1alpha1.MaxSchedules {
			objs = append(objs, schedule(fmt.Sprintf("s%03d", i), cronSpec(fmt.Sprintf("%d %d * * *", i%60, i/60), "1m")))
		}
		return append(objs, extra...)
	}
	const tooFrequent = `spec.schedule: Invalid value: "*/2 * * * *": with a duration of 1m, this Cron window opens more than 8784 separate windows in the next 366 days, ` +
		`and a Schedule may open at most 8784 (one an hour on average): almanac compares each Schedule's windows with those of its siblings, which takes too long for windows this frequent. ` +
		`Open it at most once an hour (e.g. "0 * * * *"), or give it a duration that reaches the next firing, so that its windows touch and merge into one`
	tests := []struct {
		name    string
		obj     *autoscalingv1alpha1.Schedule
		old     *autoscalingv1alpha1.Schedule
		objects []Object
		want    result
	}{{
		name:    "touching hourly windows, at the limit, are compared and admitted",
		obj:     hourlyAt("m1", 1),
		objects: []Object{forbid, hourlyAt("m0", 0), hourlyAt("m2", 2)},
	}, {
		name:    "a window every other minute is refused",
		obj:     schedule("a", cronSpec("*/2 * * * *", "1m")),
		objects: []Object{web},
		want:    result{Errors: []string{tooFrequent}},
	}, {
		name:    "…but not when its windows touch and merge",
		obj:     schedule("a", cronSpec("*/2 * * * *", "2m")),
		objects: []Object{web},
	}, {
		name:    "…and only warned about on an update that leaves its timing alone",
		obj:     schedule("dense", cronSpec("*/2 * * * *", "1m")),
		old:     schedule("dense", cronSpec("*/2 * * * *", "1m")),
		objects: []Object{web},
		want: result{Warnings: []string{"spec.schedule: the Cron window opens more than 8784 windows in the next 366 days, more than almanac compares: " +
			"its overlaps with other Schedules are not checked"}},
	}, {
		name:    "under Forbid, a sibling that opens too many windows refuses a new Schedule, named",
		obj:     schedule("a", daily("09:30", "09:45", "UTC")),
		objects: []Object{forbid, dense, hourlyAt("m0", 0)},
		want: result{Errors: []string{`spec: Forbidden: the windows could not be compared with those of every other Schedule, and ScheduledPodAutoscaler "web" has overlapPolicy Forbid, ` +
			`so almanac cannot check that they overlap none: Schedule "dense" opens more than 8784 windows in the next 366 days (it was stored without this check): ` +
			`change its schedule or delete it; or set the autoscaler's overlapPolicy to Max`}},
	}, {
		name:    "under Max, the same is a warning",
		obj:     schedule("a", daily("09:00", "10:00", "UTC")),
		objects: []Object{web, dense},
		want: result{Warnings: []string{`spec: overlaps with some Schedules were not checked: Schedule "dense" opens more than 8784 windows in the next 366 days ` +
			`(it was stored without this check): change its schedule or delete it`}},
	}, {
		name:    "the Schedule past the most an autoscaler may have is refused",
		obj:     schedule("new", daily("20:00", "21:00", "UTC")),
		objects: full(),
		want: result{Errors: []string{`spec.scaleTargetRef.name: Forbidden: ScheduledPodAutoscaler "web" already has 100 Schedules, and an autoscaler may have at most 100 ` +
			`(almanac compares each Schedule's windows with those of all its siblings): delete Schedules whose windows have ended, or combine windows into fewer Schedules ` +
			`(a Daily window with daysOfWeek, a Cron window)`}},
	}, {
		name:    "…while one of them may still change",
		obj:     schedule("s000", cronSpec("0 20 * * *", "1m")),
		old:     schedule("s000", cronSpec("0 0 * * *", "1m")),
		objects: full(),
	}, {
		name: "with more siblings stored than admission compares, the rest are named under Forbid",
		obj:  schedule("s000", cronSpec("0 20 * * *", "1m")),
		old:  schedule("s000", cronSpec("0 0 * * *", "1m")),
		objects: full(schedule("s100", cronSpec("40 1 * * *", "1m")), schedule("s101", cronSpec("41 1 * * *", "1m")),
			schedule("s102", cronSpec("42 1 * * *", "1m")), schedule("s103", cronSpec("43 1 * * *", "1m"))),
		want: result{Errors: []string{`spec: Forbidden: the windows could not be compared with those of every other Schedule, and ScheduledPodAutoscaler "web" has overlapPolicy Forbid, ` +
			`so almanac cannot check that they overlap none: ScheduledPodAutoscaler "web" has more than 100 Schedules, and admission compares at most 99, ` +
			`so Schedule "s100", "s101", "s102" and 1 more was not compared: delete Schedules whose windows have ended; or set the autoscaler's overlapPolicy to Max`}},
	}}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			errs, warnings, err := ValidateSchedule(context.Background(), tt.obj, tt.old, Env{Now: now, Objects: lookupOf(tt.objects...)})
			if err != nil {
				t.Fatal(err)
			}
			if diff := cmp.Diff(tt.want, toResult(errs, warnings)); diff != "" {
				t.Errorf("(-want +got):\n%s", diff)
			}
		})
	}

	// A request that the API server gave up on stops comparing.
	ctx, cancel := context.WithCancel(context.Background())
	cancel()
	if _, _, err := ValidateSchedule(ctx, hourlyAt("m1", 1), nil, Env{Now: now, Objects: lookupOf(forbid, hourlyAt("m0", 0))}); !errors.Is(err, context.Canceled) {
		t.Errorf("with a done context: %v, want context.Canceled", err)
	}
}

func suspended(s *autoscalingv1alpha1.Schedule) *autoscalingv1alpha1.Schedule {
	s = s.DeepCopy()
	s.Spec.Suspend = true
	return s
}

// neverFires is the engine's message for a cron schedule that never fires (its wording is
// the engine's; this test checks that the webhook passes it on under spec.schedule).
func neverFires(t *testing.T, spec string) string {
	t.Helper()
	_, errs := (&autoscalingv1alpha1.ScheduleSpec{Type: "Cron", Schedule: spec, Duration: "1h"}).Timing().Compile()
	if len(errs) != 1 || !strings.Contains(errs[0].Detail, "never") {
		t.Fatalf("the engine did not reject %q as never firing: %v", spec, errs)
	}
	return errs[0].Detail
}

func scheduledJob(name string, spec batchv1alpha1.ScheduledJobSpec) *batchv1alpha1.ScheduledJob {
	if spec.TimeZone == "" {
		spec.TimeZone = "UTC"
	}
	if spec.JobTemplate.Spec.Template.Spec.RestartPolicy == "" {
		spec.JobTemplate.Spec.Template.Spec.RestartPolicy = corev1.RestartPolicyNever
	}
	return &batchv1alpha1.ScheduledJob{ObjectMeta: metav1.ObjectMeta{Name: name, Namespace: "ns"}, Spec: spec}
}

func TestValidateScheduledJob(t *testing.T) {
	name52 := strings.Repeat("a", 52)
	name53 := strings.Repeat("a", 53)
	alwaysRestart := scheduledJob("a", batchv1alpha1.ScheduledJobSpec{Schedule: "@hourly"})
	alwaysRestart.Spec.JobTemplate.Spec.Template.Spec.RestartPolicy = corev1.RestartPolicyAlways
	tests := []struct {
		name string
		obj  *batchv1alpha1.ScheduledJob
		old  *batchv1alpha1.ScheduledJob
		want result
	}{{
		name: "cron across DST",
		obj:  scheduledJob("a", batchv1alpha1.ScheduledJobSpec{Schedule: "30 2 * * *", TimeZone: "Europe/Berlin"}),
		want: result{Warnings: []string{
			"spec.schedule: the 02:30 run does not exist in Europe/Berlin on 2027-03-28 (clocks jump from 02:00 to 03:00): it runs at 03:00 CEST (01:00 UTC)",
			"spec.schedule: the 02:30 run occurs twice in Europe/Berlin on 2027-10-31 (clocks go back from 03:00 to 02:00): it runs once, at its first occurrence, 02:30 CEST (00:30 UTC)",
		}},
	}, {
		name: "a one-shot whose deadline passed (the migrated AT manifest)",
		obj:  scheduledJob("a", batchv1alpha1.ScheduledJobSpec{At: "2020-03-21T13:54", StartingDeadlineSeconds: ptr.To(int64(600))}),
		want: result{Errors: []string{`spec.at: Invalid value: "2020-03-21T13:54": the run was due at 2020-03-21 13:54 UTC and could start until 2020-03-21 14:04:00 UTC (startingDeadlineSeconds: 600), ` +
			`before now (2027-01-15 12:00:00 UTC), so the Job would never run: set at to a future wall time in UTC, e.g. "2027-01-15T13:00"`}},
	}, {
		name: "a one-shot whose deadline passed, in a zone",
		obj:  scheduledJob("a", batchv1alpha1.ScheduledJobSpec{At: "2027-01-15T20:00", TimeZone: "Asia/Tokyo", StartingDeadlineSeconds: ptr.To(int64(0))}),
		want: result{Errors: []string{`spec.at: Invalid value: "2027-01-15T20:00": the run was due at 2027-01-15 20:00 Asia/Tokyo (2027-01-15 11:00 UTC) and could start until 2027-01-15 20:00:00 Asia/Tokyo (2027-01-15 11:00:00 UTC) ` +
			`(startingDeadlineSeconds: 0), before now (2027-01-15 12:00:00 UTC), so the Job would never run: set at to a future wall time in Asia/Tokyo, e.g. "2027-01-15T22:00"`}},
	}, {
		name: "a one-shot whose deadline passed, in a zone with a half-hour offset (the example is on the local hour)",
		obj:  scheduledJob("a", batchv1alpha1.ScheduledJobSpec{At: "2027-01-15T17:00", TimeZone: "Asia/Kolkata", StartingDeadlineSeconds: ptr.To(int64(0))}),
		want: result{Errors: []string{`spec.at: Invalid value: "2027-01-15T17:00": the run was due at 2027-01-15 17:00 Asia/Kolkata (2027-01-15 11:30 UTC) and could start until 2027-01-15 17:00:00 Asia/Kolkata (2027-01-15 11:30:00 UTC) ` +
			`(startingDeadlineSeconds: 0), before now (2027-01-15 12:00:00 UTC), so the Job would never run: set at to a future wall time in Asia/Kolkata, e.g. "2027-01-15T18:00"`}},
	}, {
		name: "a one-shot whose deadline passed, label update (ratcheted)",
		obj:  scheduledJob("a", batchv1alpha1.ScheduledJobSpec{At: "2020-03-21T13:54", StartingDeadlineSeconds: ptr.To(int64(600))}),
		old:  scheduledJob("a", batchv1alpha1.ScheduledJobSpec{At: "2020-03-21T13:54", StartingDeadlineSeconds: ptr.To(int64(600))}),
		want: result{Warnings: []string{"spec.at: the run was due at 2020-03-21 13:54 UTC and its starting deadline has passed: this ScheduledJob will not run again; delete it when it is no longer needed"}},
	}, {
		name: "a one-shot to the second: messages show the seconds",
		obj:  scheduledJob("a", batchv1alpha1.ScheduledJobSpec{At: "2027-01-15T11:55:30", StartingDeadlineSeconds: ptr.To(int64(600))}),
		want: result{Warnings: []string{"spec.at: 2027-01-15 11:55:30 UTC is in the past, but within startingDeadlineSeconds (600): the Job starts right away"}},
	}, {
		name: "a one-shot to the second in a DST gap",
		obj:  scheduledJob("a", batchv1alpha1.ScheduledJobSpec{At: "2027-03-14T02:30:15", TimeZone: "America/New_York"}),
		want: result{Warnings: []string{"spec.at: 02:30:15 does not exist in America/New_York on 2027-03-14 (clocks jump from 02:00 to 03:00): the Job runs at 03:00 EDT (07:00 UTC)"}},
	}, {
		name: "a fraction of a second",
		obj:  scheduledJob("a", batchv1alpha1.ScheduledJobSpec{At: "2027-03-14T02:30:15.5"}),
		want: result{Errors: []string{`spec.at: Invalid value: "2027-03-14T02:30:15.5": "2027-03-14T02:30:15.5" has a fraction of a second: times are whole seconds, e.g. "2027-03-14T02:30:15"`}},
	}, {
		name: "a one-shot in the past but within its deadline",
		obj:  scheduledJob("a", batchv1alpha1.ScheduledJobSpec{At: "2027-01-15T11:55", StartingDeadlineSeconds: ptr.To(int64(600))}),
		want: result{Warnings: []string{"spec.at: 2027-01-15 11:55 UTC is in the past, but within startingDeadlineSeconds (600): the Job starts right away"}},
	}, {
		name: "a one-shot in a DST gap",
		obj:  scheduledJob("a", batchv1alpha1.ScheduledJobSpec{At: "2027-03-14T02:30", TimeZone: "America/New_York"}),
		want: result{Warnings: []string{"spec.at: 02:30 does not exist in America/New_York on 2027-03-14 (clocks jump from 02:00 to 03:00): the Job runs at 03:00 EDT (07:00 UTC)"}},
	}, {
		name: "an invalid date in schedule",
		obj:  scheduledJob("a", batchv1alpha1.ScheduledJobSpec{Schedule: "2027-02-29T10:00Z"}),
		want: result{Errors: []string{`spec.schedule: Invalid value: "2027-02-29T10:00Z": "2027-02-29T10:00Z" is not a valid date: February 2027 has 28 days; ` +
			`schedule takes a cron schedule; to run the Job once, write the time in at (yyyy-MM-ddTHH:mm, a wall time in timeZone)`}},
	}, {
		name: "@every",
		obj:  scheduledJob("a", batchv1alpha1.ScheduledJobSpec{Schedule: "@every 1h"}),
		want: result{Errors: []string{`spec.schedule: Invalid value: "@every 1h": "@every 1h" is not supported: @every counts from when the controller started and ignores the time zone; use a 5-field schedule such as "0 * * * *"`}},
	}, {
		name: "unknown zone",
		obj:  scheduledJob("a", batchv1alpha1.ScheduledJobSpec{Schedule: "@daily", TimeZone: "Europe/Berln"}),
		want: result{Errors: []string{`spec.timeZone: Invalid value: "Europe/Berln": "Europe/Berln" is not a known IANA time zone: did you mean "Europe/Berlin"?`}},
	}, {
		name: "longest name",
		obj:  scheduledJob(name52, batchv1alpha1.ScheduledJobSpec{Schedule: "@daily"}),
	}, {
		name: "name too long for the Jobs",
		obj:  scheduledJob(name53, batchv1alpha1.ScheduledJobSpec{Schedule: "@daily"}),
		want: result{Errors: []string{`metadata.name: Too long: 53 characters, but a ScheduledJob's name may have at most 52: its Jobs are named "<name>-<suffix>" with a suffix of up to 10 characters ` +
			`(the slot: the Unix minute of the run), and a Job's name must fit the 63-character job-name label of its Pods; shorten the name by 1 character`}},
	}, {
		name: "name too long, on update",
		obj:  scheduledJob(name53, batchv1alpha1.ScheduledJobSpec{Schedule: "@daily"}),
		old:  scheduledJob(name53, batchv1alpha1.ScheduledJobSpec{Schedule: "@daily"}),
		want: result{Warnings: []string{`metadata.name: 53 characters, but a ScheduledJob's name may have at most 52: its Jobs are named "<name>-<suffix>" with a suffix of up to 10 characters ` +
			`(the slot: the Unix minute of the run), and a Job's name must fit the 63-character job-name label of its Pods; shorten the name by 1 character (recreate it under a shorter name)`}},
	}, {
		name: "a run-now token",
		obj:  withRunNow(scheduledJob("a", batchv1alpha1.ScheduledJobSpec{Schedule: "@daily"}), "2027-01-15T12:00:00Z-1"),
	}, {
		name: "a run-now token too long (a careless script)",
		obj:  withRunNow(scheduledJob("a", batchv1alpha1.ScheduledJobSpec{Schedule: "@daily"}), strings.Repeat("x", 64)),
		want: result{Errors: []string{`metadata.annotations[batch.almanac.dev/run-now]: Invalid value: "` + strings.Repeat("x", 64) +
			`": has 64 characters, more than the 63 a run-now token may have: use a shorter token, such as the time of the request`}},
	}, {
		name: "a run-now token with a space",
		obj:  withRunNow(scheduledJob("a", batchv1alpha1.ScheduledJobSpec{Schedule: "@daily"}), "run now"),
		want: result{Errors: []string{`metadata.annotations[batch.almanac.dev/run-now]: Invalid value: "run now": has ' ' at position 3: ` +
			`a run-now token has only letters, digits, '.', '_', '-' and ':'`}},
	}, {
		name: "an empty run-now token",
		obj:  withRunNow(scheduledJob("a", batchv1alpha1.ScheduledJobSpec{Schedule: "@daily"}), ""),
		want: result{Errors: []string{`metadata.annotations[batch.almanac.dev/run-now]: Invalid value: "": is empty: give a token (1 to 63 letters, digits, '.', '_', '-' or ':'), ` +
			"such as the time of the request; `almanac run` sets one"}},
	}, {
		name: "an invalid run-now token kept, labels changed (ratcheted)",
		obj:  withRunNow(scheduledJob("a", batchv1alpha1.ScheduledJobSpec{Schedule: "@daily"}), "run now"),
		old:  withRunNow(scheduledJob("a", batchv1alpha1.ScheduledJobSpec{Schedule: "@daily"}), "run now"),
	}, {
		name: "Pods that always restart",
		obj:  alwaysRestart,
		want: result{Errors: []string{`spec.jobTemplate.spec.template.spec.restartPolicy: Unsupported value: "Always": supported values: "OnFailure", "Never": ` +
			`a Job's Pods restart OnFailure or Never (the Job API refuses other values when almanac creates the Job)`}},
	}, {
		name: "being deleted",
		obj: func() *batchv1alpha1.ScheduledJob {
			sj := scheduledJob("a", batchv1alpha1.ScheduledJobSpec{At: "2020-03-21T13:54"})
			sj.DeletionTimestamp = &metav1.Time{Time: now}
			return sj
		}(),
	}}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			errs, warnings, err := ValidateScheduledJob(context.Background(), tt.obj, tt.old, Env{Now: now})
			if err != nil {
				t.Fatal(err)
			}
			if diff := cmp.Diff(tt.want, toResult(errs, warnings)); diff != "" {
				t.Errorf("(-want +got):\n%s", diff)
			}
		})
	}
}

// TestAtDeadlineAgreesWithTheReconciler: admission rejects a one-shot exactly when the
// reconciler would no longer start it (both ask timing.WithinDeadline, lateness in whole
// seconds). Issue 11, finding 1: at at + startingDeadlineSeconds + 0.5 s the webhook said the
// Job "would never run" while the reconciler still ran it, and the message named the same
// minute for the deadline and for now.
func TestAtDeadlineAgreesWithTheReconciler(t *testing.T) {
	due := time.Date(2027, 1, 15, 10, 0, 0, 0, time.UTC)
	for _, late := range []time.Duration{0, 599 * time.Second, 600 * time.Second, 600*time.Second + 500*time.Millisecond,
		600*time.Second + 999*time.Millisecond, 601 * time.Second, 601*time.Second + 500*time.Millisecond, time.Hour} {
		sj := scheduledJob("a", batchv1alpha1.ScheduledJobSpec{At: "2027-01-15T10:00", StartingDeadlineSeconds: ptr.To(int64(600))})
		now := due.Add(late)
		errs, _, err := ValidateScheduledJob(context.Background(), sj, nil, Env{Now: now})
		if err != nil {
			t.Fatal(err)
		}
		if admitted, runs := len(errs) == 0, timing.WithinDeadline(due, now, 600); admitted != runs {
			t.Errorf("%v late: admitted %v, but the reconciler would start it: %v (%v)", late, admitted, runs, errs)
		}
	}
	sj := scheduledJob("a", batchv1alpha1.ScheduledJobSpec{At: "2027-01-15T10:00", StartingDeadlineSeconds: ptr.To(int64(600))})
	errs, _, _ := ValidateScheduledJob(context.Background(), sj, nil, Env{Now: due.Add(601*time.Second + 500*time.Millisecond)})
	want := `spec.at: Invalid value: "2027-01-15T10:00": the run was due at 2027-01-15 10:00 UTC and could start until 2027-01-15 10:10:00 UTC (startingDeadlineSeconds: 600), ` +
		`before now (2027-01-15 10:10:01 UTC), so the Job would never run: set at to a future wall time in UTC, e.g. "2027-01-15T11:00"`
	if diff := cmp.Diff(result{Errors: []string{want}}, toResult(errs, nil)); diff != "" {
		t.Errorf("(-want +got):\n%s", diff)
	}
}

func eventJob(name string, kind batchv1alpha1.TriggerKind, trigger string) *batchv1alpha1.EventJob {
	ej := &batchv1alpha1.EventJob{ObjectMeta: metav1.ObjectMeta{Name: name, Namespace: "ns"}}
	ej.Spec.Trigger = batchv1alpha1.Trigger{APIVersion: triggerAPIVersion(kind), Kind: kind, Name: trigger, Type: "Complete"}
	ej.Spec.JobTemplate.Spec.Template.Spec.RestartPolicy = corev1.RestartPolicyOnFailure
	return ej
}

// fanInJob is an EventJob whose triggers are the objects of the kinds and names given.
func fanInJob(name string, kinds []batchv1alpha1.TriggerKind, names ...string) *batchv1alpha1.EventJob {
	ej := eventJob(name, "CronJob", "x")
	ej.Spec.Trigger = batchv1alpha1.Trigger{}
	for i, n := range names {
		ej.Spec.Triggers = append(ej.Spec.Triggers, batchv1alpha1.Trigger{APIVersion: triggerAPIVersion(kinds[i]), Kind: kinds[i], Name: n, Type: "Complete"})
	}
	DefaultEventJob(ej)
	return ej
}

func TestValidateEventJob(t *testing.T) {
	hello := &batchv1.CronJob{ObjectMeta: metav1.ObjectMeta{Name: "hello"}}
	tests := []struct {
		name    string
		obj     *batchv1alpha1.EventJob
		old     *batchv1alpha1.EventJob
		objects []Object
		want    result
	}{{
		name:    "trigger exists",
		obj:     eventJob("a", "CronJob", "hello"),
		objects: []Object{hello},
	}, {
		name: "trigger missing",
		obj:  eventJob("a", "CronJob", "hello"),
		want: result{Warnings: []string{`spec.trigger.name: CronJob "hello" does not exist in namespace "ns": the EventJob starts no Job until it exists and one of its Jobs reaches the trigger condition`}},
	}, {
		name: "Job missing",
		obj:  eventJob("a", "Job", "migrate"),
		want: result{Warnings: []string{`spec.trigger.name: Job "migrate" does not exist in namespace "ns": the EventJob starts no Job until it exists and reaches the trigger condition`}},
	}, {
		name: "itself",
		obj:  eventJob("a", "EventJob", "a"),
		want: result{Errors: []string{`spec.trigger.name: Invalid value: "a": an EventJob cannot trigger on itself: each of its Jobs would start another one, forever; ` +
			`trigger on the Job, CronJob, ScheduledJob or EventJob that should start it`}},
	}, {
		name:    "A triggers on B triggers on A",
		obj:     eventJob("a", "EventJob", "b"),
		objects: []Object{eventJob("b", "EventJob", "a")},
		want: result{Errors: []string{`spec.trigger.name: Invalid value: "b": this trigger closes a cycle: EventJob "a" triggers on EventJob "b", which triggers on EventJob "a"; ` +
			`each Job would start the next one, forever: trigger on an object outside the cycle`}},
	}, {
		name:    "a longer cycle",
		obj:     eventJob("a", "EventJob", "b"),
		objects: []Object{eventJob("b", "EventJob", "c"), eventJob("c", "EventJob", "a")},
		want: result{Errors: []string{`spec.trigger.name: Invalid value: "b": this trigger closes a cycle: EventJob "a" triggers on EventJob "b", which triggers on EventJob "c", ` +
			`which triggers on EventJob "a"; each Job would start the next one, forever: trigger on an object outside the cycle`}},
	}, {
		name:    "a chain that ends elsewhere",
		obj:     eventJob("a", "EventJob", "b"),
		objects: []Object{eventJob("b", "EventJob", "c"), eventJob("c", "ScheduledJob", "nightly"), hello},
	}, {
		name:    "a cycle upstream that this EventJob does not close",
		obj:     eventJob("a", "EventJob", "b"),
		objects: []Object{eventJob("b", "EventJob", "c"), eventJob("c", "EventJob", "b")},
	}, {
		name:    "an update that keeps the trigger is not checked again",
		obj:     eventJob("a", "EventJob", "b"),
		old:     eventJob("a", "EventJob", "b"),
		objects: []Object{eventJob("b", "EventJob", "a")},
	}, {
		name:    "name too long for the Jobs",
		obj:     eventJob(strings.Repeat("e", 60), "CronJob", "hello"),
		objects: []Object{hello},
		want: result{Errors: []string{`metadata.name: Too long: 60 characters, but an EventJob's name may have at most 52: its Jobs are named "<name>-<suffix>" with a suffix of up to 10 characters ` +
			`(derived from the upstream Job's UID), and a Job's name must fit the 63-character job-name label of its Pods; shorten the name by 8 characters`}},
	}, {
		name:    "triggers that exist",
		obj:     fanInJob("r", []batchv1alpha1.TriggerKind{"CronJob", "EventJob"}, "hello", "b"),
		objects: []Object{hello, eventJob("b", "CronJob", "hello")},
	}, {
		name:    "a missing trigger among several",
		obj:     fanInJob("r", []batchv1alpha1.TriggerKind{"CronJob", "ScheduledJob"}, "hello", "nightly"),
		objects: []Object{hello},
		want:    result{Warnings: []string{`spec.triggers[1].name: ScheduledJob "nightly" does not exist in namespace "ns": the EventJob starts no Job until it exists and one of its Jobs ends`}},
	}, {
		name: "itself among several triggers",
		obj:  fanInJob("r", []batchv1alpha1.TriggerKind{"CronJob", "EventJob"}, "hello", "r"),
		want: result{Errors: []string{`spec.triggers[1].name: Invalid value: "r": an EventJob cannot trigger on itself: each of its Jobs would start another one, forever; ` +
			`trigger on the Job, CronJob, ScheduledJob or EventJob that should start it`}},
	}, {
		name:    "a cycle through the second of several triggers",
		obj:     fanInJob("r", []batchv1alpha1.TriggerKind{"EventJob", "EventJob"}, "b", "c"),
		objects: []Object{eventJob("b", "CronJob", "hello"), hello, eventJob("c", "EventJob", "r")},
		want: result{Errors: []string{`spec.triggers[1].name: Invalid value: "c": this trigger closes a cycle: EventJob "r" triggers on EventJob "c", which triggers on EventJob "r"; ` +
			`each Job would start the next one, forever: trigger on an object outside the cycle`}},
	}, {
		name:    "a named Job paired by slot",
		obj:     fanInJob("r", []batchv1alpha1.TriggerKind{"CronJob", "Job"}, "hello", "migrate"),
		objects: []Object{hello, &batchv1.Job{ObjectMeta: metav1.ObjectMeta{Name: "migrate"}}},
		want: result{Warnings: []string{`spec.triggers[1].kind: Job "migrate" pairs by slot only if it carries the annotation batch.almanac.dev/scheduled-time or ` +
			`batch.kubernetes.io/cronjob-scheduled-timestamp; a Job without a slot starts nothing (name the CronJob or ScheduledJob that creates it, or pair by window: fanIn.pairBy: Window)`}},
	}, {
		name:    "name too long for the Jobs of sets",
		obj:     fanInJob(strings.Repeat("e", 60), []batchv1alpha1.TriggerKind{"CronJob"}, "hello"),
		objects: []Object{hello},
		want: result{Errors: []string{`metadata.name: Too long: 60 characters, but an EventJob's name may have at most 52: its Jobs are named "<name>-<suffix>" with a suffix of up to 10 characters ` +
			`(derived from the set's slot or first run), and a Job's name must fit the 63-character job-name label of its Pods; shorten the name by 8 characters`}},
	}}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			errs, warnings, err := ValidateEventJob(context.Background(), tt.obj, tt.old, Env{Now: now, Objects: lookupOf(tt.objects...)})
			if err != nil {
				t.Fatal(err)
			}
			if diff := cmp.Diff(tt.want, toResult(errs, warnings)); diff != "" {
				t.Errorf("(-want +got):\n%s", diff)
			}
		})
	}
}

func TestValidateScheduledPodAutoscaler(t *testing.T) {
	base := func(mutate func(*autoscalingv2.HorizontalPodAutoscalerSpec)) *autoscalingv1alpha1.ScheduledPodAutoscaler {
		s := &autoscalingv1alpha1.ScheduledPodAutoscaler{ObjectMeta: metav1.ObjectMeta{Name: "web", Namespace: "ns"}}
		s.Spec.OverlapPolicy = "Max"
		s.Spec.HorizontalPodAutoscalerSpec = &autoscalingv2.HorizontalPodAutoscalerSpec{
			ScaleTargetRef: autoscalingv2.CrossVersionObjectReference{APIVersion: "apps/v1", Kind: "Deployment", Name: "web"},
			MinReplicas:    ptr.To(int32(1)), MaxReplicas: 5,
		}
		DefaultScheduledPodAutoscaler(s)
		if mutate != nil {
			mutate(s.Spec.HorizontalPodAutoscalerSpec)
		}
		return s
	}
	forbid := base(nil)
	forbid.Spec.OverlapPolicy = "Forbid"
	tests := []struct {
		name    string
		obj     *autoscalingv1alpha1.ScheduledPodAutoscaler
		old     *autoscalingv1alpha1.ScheduledPodAutoscaler
		objects []Object
		want    result
	}{{
		name: "valid",
		obj:  base(nil),
	}, {
		name: "a kind without apiVersion",
		obj: base(func(h *autoscalingv2.HorizontalPodAutoscalerSpec) {
			h.ScaleTargetRef = autoscalingv2.CrossVersionObjectReference{Kind: "Rollout", Name: "web"}
		}),
		want: result{Errors: []string{`spec.horizontalPodAutoscalerSpec.scaleTargetRef.apiVersion: Required value: the HorizontalPodAutoscaler needs the API version of kind "Rollout" ` +
			`to find its scale subresource, e.g. "apps/v1" (it is filled in only for Deployment, StatefulSet and ReplicaSet)`}},
	}, {
		name: "zero replicas",
		obj:  base(func(h *autoscalingv2.HorizontalPodAutoscalerSpec) { h.MinReplicas = ptr.To(int32(0)) }),
		want: result{Errors: []string{`spec.horizontalPodAutoscalerSpec.minReplicas: Invalid value: 0: must be at least 1: an autoscaled workload keeps at least one replica`}},
	}, {
		name: "metrics without their source or target",
		obj: base(func(h *autoscalingv2.HorizontalPodAutoscalerSpec) {
			h.Metrics = []autoscalingv2.MetricSpec{
				{Type: autoscalingv2.ResourceMetricSourceType},
				{Type: autoscalingv2.PodsMetricSourceType, Pods: &autoscalingv2.PodsMetricSource{Target: autoscalingv2.MetricTarget{Type: autoscalingv2.UtilizationMetricType}}},
				{Type: autoscalingv2.ResourceMetricSourceType, Resource: &autoscalingv2.ResourceMetricSource{Name: "cpu", Target: autoscalingv2.MetricTarget{Type: autoscalingv2.UtilizationMetricType}}},
				{Type: autoscalingv2.ExternalMetricSourceType, External: &autoscalingv2.ExternalMetricSource{Target: autoscalingv2.MetricTarget{Type: autoscalingv2.AverageValueMetricType}}},
			}
		}),
		want: result{Errors: []string{
			`spec.horizontalPodAutoscalerSpec.metrics[0].resource: Required value: a metric of type Resource describes its source in resource`,
			`spec.horizontalPodAutoscalerSpec.metrics[1].pods.target.type: Invalid value: "Utilization": a metric of type Pods takes a target of type Value or AverageValue`,
			`spec.horizontalPodAutoscalerSpec.metrics[2].resource.target.averageUtilization: Required value: a Utilization target needs averageUtilization, a percentage of the Pods' requests of at least 1, e.g. 80`,
			`spec.horizontalPodAutoscalerSpec.metrics[3].external.target.averageValue: Required value: an AverageValue target needs averageValue, a quantity per Pod, e.g. "500m"`,
		}},
	}, {
		name: "switching to Forbid while Schedules overlap",
		obj:  forbid,
		old:  base(nil),
		objects: []Object{
			schedule("early", daily("08:00", "10:00", "UTC")), schedule("office", daily("09:00", "17:00", "UTC")), schedule("night", daily("22:00", "06:00", "UTC")),
		},
		// Pairs are checked by name: early and night do not overlap, early and office do.
		want: result{Warnings: []string{`spec.overlapPolicy: Schedules "early" and "office" already overlap (both are active from 2027-01-16 09:00 to 10:00 UTC); ` +
			`Forbid applies to Schedules created or changed from now on, so change one of them to remove the overlap`}},
	}, {
		name:    "staying Forbid is not checked again",
		obj:     forbid,
		old:     forbid,
		objects: []Object{schedule("early", daily("08:00", "10:00", "UTC")), schedule("office", daily("09:00", "17:00", "UTC"))},
	}}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			errs, warnings, err := ValidateScheduledPodAutoscaler(context.Background(), tt.obj, tt.old, Env{Now: now, Objects: lookupOf(tt.objects...)})
			if err != nil {
				t.Fatal(err)
			}
			if diff := cmp.Diff(tt.want, toResult(errs, warnings)); diff != "" {
				t.Errorf("(-want +got):\n%s", diff)
			}
		})
	}
}

// attachedSPA is an autoscaler in namespace "ns" attached to the object of apiVersion, kind
// and name, with the baseline minReplicas and maxReplicas (0: omitted).
func attachedSPA(name, apiVersion, kind, target string, minReplicas, maxReplicas int32) *autoscalingv1alpha1.ScheduledPodAutoscaler {
	s := &autoscalingv1alpha1.ScheduledPodAutoscaler{ObjectMeta: metav1.ObjectMeta{Name: name, Namespace: "ns"}}
	s.Spec.OverlapPolicy = "Max"
	s.Spec.TargetRef = &autoscalingv1alpha1.TargetReference{APIVersion: apiVersion, Kind: kind, Name: target}
	s.Spec.MinReplicas = ptr.To(minReplicas)
	if maxReplicas > 0 {
		s.Spec.MaxReplicas = ptr.To(maxReplicas)
	}
	return s
}

// generatedSPA is an autoscaler in namespace "ns" that generates a HorizontalPodAutoscaler
// (named after it) for Deployment "web".
func generatedSPA(name string) *autoscalingv1alpha1.ScheduledPodAutoscaler {
	s := &autoscalingv1alpha1.ScheduledPodAutoscaler{ObjectMeta: metav1.ObjectMeta{Name: name, Namespace: "ns"}}
	s.Spec.HorizontalPodAutoscalerSpec = &autoscalingv2.HorizontalPodAutoscalerSpec{
		ScaleTargetRef: autoscalingv2.CrossVersionObjectReference{APIVersion: "apps/v1", Kind: "Deployment", Name: "web"}, MaxReplicas: 5,
	}
	DefaultScheduledPodAutoscaler(s)
	return s
}

// object is an object of another kind, as `almanac validate` reads it from a file.
func object(apiVersion, kind, name string) *unstructured.Unstructured {
	u := &unstructured.Unstructured{}
	u.SetAPIVersion(apiVersion)
	u.SetKind(kind)
	u.SetName(name)
	return u
}

// hpaFor is a HorizontalPodAutoscaler that scales the object of apiVersion, kind and target.
func hpaFor(name, apiVersion, kind, target string) *autoscalingv2.HorizontalPodAutoscaler {
	return &autoscalingv2.HorizontalPodAutoscaler{ObjectMeta: metav1.ObjectMeta{Name: name}, Spec: autoscalingv2.HorizontalPodAutoscalerSpec{
		ScaleTargetRef: autoscalingv2.CrossVersionObjectReference{APIVersion: apiVersion, Kind: kind, Name: target}, MaxReplicas: 5,
	}}
}

// TestValidateAttachedAutoscaler: an autoscaler attached to an object that exists
// (spec.targetRef), each rule with an ordinary case and what a careless or hostile writer
// sends.
func TestValidateAttachedAutoscaler(t *testing.T) {
	const (
		hpaV2 = "autoscaling/v2"
		keda  = "keda.sh/v1alpha1"
		apps  = "apps/v1"
	)
	withName := func(s *autoscalingv1alpha1.ScheduledPodAutoscaler, name string) *autoscalingv1alpha1.ScheduledPodAutoscaler {
		s.Name = name
		return s
	}
	deleting := func(s *autoscalingv1alpha1.ScheduledPodAutoscaler) *autoscalingv1alpha1.ScheduledPodAutoscaler {
		s.DeletionTimestamp = &metav1.Time{Time: now}
		return s
	}
	badVersion := func(apiVersion string) *autoscalingv1alpha1.ScheduledPodAutoscaler {
		return attachedSPA("web", apiVersion, "HorizontalPodAutoscaler", "web", 1, 5)
	}
	const versionHelp = `must be group/version, e.g. "autoscaling/v2", "keda.sh/v1alpha1" or "apps/v1" (only the core group is written as the version alone: "v1")`
	tests := []struct {
		name    string
		obj     *autoscalingv1alpha1.ScheduledPodAutoscaler
		old     *autoscalingv1alpha1.ScheduledPodAutoscaler
		objects []Object
		want    result
	}{{
		name:    "a HorizontalPodAutoscaler",
		obj:     attachedSPA("web", hpaV2, "HorizontalPodAutoscaler", "web", 2, 10),
		objects: []Object{object(hpaV2, "HorizontalPodAutoscaler", "web")},
	}, {
		name:    "a HorizontalPodAutoscaler of another version of its group",
		obj:     attachedSPA("web", "autoscaling/v1", "HorizontalPodAutoscaler", "web", 2, 10),
		objects: []Object{object(hpaV2, "HorizontalPodAutoscaler", "web")},
	}, {
		name:    "a HorizontalPodAutoscaler with minReplicas 0",
		obj:     attachedSPA("web", hpaV2, "HorizontalPodAutoscaler", "web", 0, 10),
		objects: []Object{object(hpaV2, "HorizontalPodAutoscaler", "web")},
		want: result{Errors: []string{`spec.minReplicas: Invalid value: 0: a HorizontalPodAutoscaler's minReplicas must be at least 1 ` +
			`(0 needs the alpha feature gate HPAScaleToZero, which almanac does not rely on): set minReplicas to 1, or, to scale to zero, ` +
			`attach to the workload itself (a Deployment or StatefulSet that no HorizontalPodAutoscaler scales) or to a KEDA ScaledObject`}},
	}, {
		name: "a HorizontalPodAutoscaler that does not exist",
		obj:  attachedSPA("web", hpaV2, "HorizontalPodAutoscaler", "web", 1, 10),
		// Another kind of the same name does not count.
		objects: []Object{object(apps, "Deployment", "web")},
		want: result{Warnings: []string{`spec.targetRef.name: HorizontalPodAutoscaler "web" (autoscaling/v2) does not exist in namespace "ns": ` +
			`this ScheduledPodAutoscaler changes nothing until it exists`}},
	}, {
		name:    "a ScaledObject with minReplicas 0",
		obj:     attachedSPA("worker", keda, "ScaledObject", "worker", 0, 20),
		objects: []Object{object(keda, "ScaledObject", "worker")},
	}, {
		name: "a ScaledObject that does not exist",
		obj:  attachedSPA("worker", keda, "ScaledObject", "worker", 0, 20),
		want: result{Warnings: []string{`spec.targetRef.name: ScaledObject "worker" (keda.sh/v1alpha1) does not exist in namespace "ns": ` +
			`this ScheduledPodAutoscaler changes nothing until it exists`}},
	}, {
		name: "a Deployment with minReplicas 0 and no maxReplicas: its existence is not looked up",
		obj:  attachedSPA("web", apps, "Deployment", "web", 0, 0),
	}, {
		name:    "a Deployment with maxReplicas",
		obj:     attachedSPA("web", apps, "Deployment", "web", 1, 8),
		objects: []Object{object(apps, "Deployment", "web")},
		want: result{Warnings: []string{`spec.maxReplicas: almanac sets the replicas of Deployment "web" through its scale subresource, which has no maximum: ` +
			`nothing enforces maxReplicas 8 on it, and almanac does not use it (the replicas are the largest minReplicas of the open Schedules, or the baseline's); remove maxReplicas`}},
	}, {
		name: "a Deployment that a HorizontalPodAutoscaler scales too",
		obj:  attachedSPA("web", apps, "Deployment", "web", 2, 0),
		objects: []Object{object(apps, "Deployment", "web"), hpaFor("web-cpu", "apps/v1", "Deployment", "web"),
			// Not the same workload: another group, another name.
			hpaFor("rollout", "argoproj.io/v1alpha1", "Rollout", "web"), hpaFor("api", "apps/v1", "Deployment", "api")},
		want: result{Warnings: []string{`spec.targetRef: HorizontalPodAutoscaler "web-cpu" scales Deployment "web" too, and would undo the replicas that almanac sets (and almanac its): ` +
			`attach to the HorizontalPodAutoscaler instead (targetRef apiVersion autoscaling/v2, kind HorizontalPodAutoscaler, name web-cpu), so that Schedules move its bounds`}},
	}, {
		name: "a Deployment that a HorizontalPodAutoscaler read by `almanac validate` scales, written with another version",
		obj:  attachedSPA("web", apps, "Deployment", "web", 2, 0),
		objects: []Object{func() Object {
			u := object("autoscaling/v1", "HorizontalPodAutoscaler", "legacy")
			_ = unstructured.SetNestedStringMap(u.Object, map[string]string{"apiVersion": "apps/v1beta2", "kind": "Deployment", "name": "web"}, "spec", "scaleTargetRef")
			return u
		}()},
		want: result{Warnings: []string{`spec.targetRef: HorizontalPodAutoscaler "legacy" scales Deployment "web" too, and would undo the replicas that almanac sets (and almanac its): ` +
			`attach to the HorizontalPodAutoscaler instead (targetRef apiVersion autoscaling/v2, kind HorizontalPodAutoscaler, name legacy), so that Schedules move its bounds`}},
	}, {
		name: "apiVersion with too many slashes",
		obj:  badVersion("not a version/x/y"),
		want: result{Errors: []string{`spec.targetRef.apiVersion: Invalid value: "not a version/x/y": ` + versionHelp}},
	}, {
		name: "apiVersion without a version",
		obj:  badVersion("autoscaling/"),
		want: result{Errors: []string{`spec.targetRef.apiVersion: Invalid value: "autoscaling/": ` + versionHelp}},
	}, {
		name: "apiVersion with an empty group",
		obj:  badVersion("/v2"),
		want: result{Errors: []string{`spec.targetRef.apiVersion: Invalid value: "/v2": ` + versionHelp}},
	}, {
		name: "apiVersion that is a group alone",
		obj:  badVersion("autoscaling"),
		want: result{Errors: []string{`spec.targetRef.apiVersion: Invalid value: "autoscaling": a version alone names the core group, whose only version is v1: ` +
			`write group/version, e.g. "apps/v1" or "autoscaling/v1"`}},
	}, {
		name: "apiVersion with an upper-case group",
		obj:  badVersion("Autoscaling/v2"),
		want: result{Errors: []string{`spec.targetRef.apiVersion: Invalid value: "Autoscaling/v2": the group "Autoscaling" is not a lower-case DNS subdomain, as API groups are: ` +
			`e.g. "autoscaling/v2", "keda.sh/v1alpha1" or "apps/v1"`}},
	}, {
		name: "apiVersion with a version that is no DNS label",
		obj:  badVersion("autoscaling/2.0"),
		want: result{Errors: []string{`spec.targetRef.apiVersion: Invalid value: "autoscaling/2.0": the version "2.0" is not a lower-case DNS label, as API versions are: ` +
			`e.g. "v1", "v2" or "v1alpha1"`}},
	}, {
		name: "the core group",
		obj:  attachedSPA("legacy", "v1", "ReplicationController", "legacy", 1, 0),
	}, {
		name:    "almanac's own kind",
		obj:     attachedSPA("loop", "autoscaling.almanac.dev/v1alpha1", "ScheduledPodAutoscaler", "web", 1, 5),
		objects: []Object{generatedSPA("web")},
		want: result{Errors: []string{`spec.targetRef.kind: Invalid value: "ScheduledPodAutoscaler": almanac's own kinds (group autoscaling.almanac.dev) have no scale subresource: ` +
			`attach to a HorizontalPodAutoscaler, a KEDA ScaledObject or a workload such as a Deployment`}},
	}, {
		name:    "a second autoscaler on one HorizontalPodAutoscaler",
		obj:     attachedSPA("web-2", hpaV2, "HorizontalPodAutoscaler", "web", 1, 10),
		objects: []Object{object(hpaV2, "HorizontalPodAutoscaler", "web"), attachedSPA("web", hpaV2, "HorizontalPodAutoscaler", "web", 2, 10)},
		want: result{Errors: []string{`spec.targetRef.name: Forbidden: ScheduledPodAutoscaler "web" is already attached to HorizontalPodAutoscaler "web": ` +
			`two autoscalers on one target would overwrite each other's bounds; give your Schedules spec.scaleTargetRef.name "web" instead, or delete that autoscaler first`}},
	}, {
		name: "a second autoscaler on one Deployment, written with another version",
		obj:  attachedSPA("b", "apps/v1beta1", "Deployment", "web", 1, 0),
		objects: []Object{object(apps, "Deployment", "web"), attachedSPA("a", apps, "Deployment", "web", 2, 0),
			// Other targets: another kind and another name.
			attachedSPA("c", "argoproj.io/v1alpha1", "Rollout", "web", 2, 0), attachedSPA("d", apps, "Deployment", "api", 2, 0)},
		want: result{Errors: []string{`spec.targetRef.name: Forbidden: ScheduledPodAutoscaler "a" is already attached to Deployment "web": ` +
			`two autoscalers on one target would overwrite each other's bounds; give your Schedules spec.scaleTargetRef.name "a" instead, or delete that autoscaler first`}},
	}, {
		name:    "moving a second autoscaler onto a target",
		obj:     attachedSPA("b", keda, "ScaledObject", "worker", 0, 10),
		old:     attachedSPA("b", keda, "ScaledObject", "other", 0, 10),
		objects: []Object{object(keda, "ScaledObject", "worker"), attachedSPA("a", keda, "ScaledObject", "worker", 0, 10)},
		want: result{Errors: []string{`spec.targetRef.name: Forbidden: ScheduledPodAutoscaler "a" is already attached to ScaledObject "worker": ` +
			`two autoscalers on one target would overwrite each other's bounds; give your Schedules spec.scaleTargetRef.name "a" instead, or delete that autoscaler first`}},
	}, {
		name:    "two autoscalers on one target that were admitted together: an update that leaves targetRef alone is a warning",
		obj:     attachedSPA("b", keda, "ScaledObject", "worker", 0, 12),
		old:     attachedSPA("b", keda, "ScaledObject", "worker", 0, 10),
		objects: []Object{object(keda, "ScaledObject", "worker"), attachedSPA("a", keda, "ScaledObject", "worker", 0, 10)},
		want: result{Warnings: []string{`spec.targetRef.name: ScheduledPodAutoscaler "a" is already attached to ScaledObject "worker": ` +
			`two autoscalers on one target would overwrite each other's bounds; give your Schedules spec.scaleTargetRef.name "a" instead, or delete that autoscaler first`}},
	}, {
		name:    "an autoscaler re-applied over itself",
		obj:     attachedSPA("a", keda, "ScaledObject", "worker", 0, 12),
		old:     attachedSPA("a", keda, "ScaledObject", "worker", 0, 10),
		objects: []Object{object(keda, "ScaledObject", "worker"), attachedSPA("a", keda, "ScaledObject", "worker", 0, 10)},
	}, {
		name:    "the other autoscaler on the target is being deleted",
		obj:     attachedSPA("b", keda, "ScaledObject", "worker", 0, 10),
		objects: []Object{object(keda, "ScaledObject", "worker"), deleting(attachedSPA("a", keda, "ScaledObject", "worker", 0, 10))},
	}, {
		name:    "the other autoscaler has moved away from the target (it still lets go of it)",
		obj:     attachedSPA("b", keda, "ScaledObject", "worker", 0, 10),
		objects: []Object{object(keda, "ScaledObject", "worker"), withStatusTarget(attachedSPA("a", keda, "ScaledObject", "other", 0, 10), keda, "ScaledObject", "worker")},
	}, {
		name:    "the HorizontalPodAutoscaler that another autoscaler generates",
		obj:     attachedSPA("mine", hpaV2, "HorizontalPodAutoscaler", "web", 2, 10),
		objects: []Object{object(hpaV2, "HorizontalPodAutoscaler", "web"), generatedSPA("web")},
		want: result{Errors: []string{`spec.targetRef.name: Forbidden: HorizontalPodAutoscaler "web" is generated by ScheduledPodAutoscaler "web", which sets its minReplicas and maxReplicas: ` +
			`two autoscalers would overwrite each other's bounds; give your Schedules spec.scaleTargetRef.name "web" instead`}},
	}, {
		name:    "a HorizontalPodAutoscaler named after an autoscaler that generates none",
		obj:     attachedSPA("mine", hpaV2, "HorizontalPodAutoscaler", "web", 2, 10),
		objects: []Object{object(hpaV2, "HorizontalPodAutoscaler", "web"), withName(attachedSPA("web", apps, "Deployment", "api", 1, 0), "web")},
	}, {
		name:    "being deleted",
		obj:     deleting(attachedSPA("b", hpaV2, "HorizontalPodAutoscaler", "web", 0, 10)),
		objects: []Object{attachedSPA("a", hpaV2, "HorizontalPodAutoscaler", "web", 2, 10)},
	}}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			errs, warnings, err := ValidateScheduledPodAutoscaler(context.Background(), tt.obj, tt.old, Env{Now: now, Objects: lookupOf(tt.objects...)})
			if err != nil {
				t.Fatal(err)
			}
			if diff := cmp.Diff(tt.want, toResult(errs, warnings)); diff != "" {
				t.Errorf("(-want +got):\n%s", diff)
			}
		})
	}
	// Offline without the other objects (env.Objects nil): only the rules of the object itself.
	errs, warnings, err := ValidateScheduledPodAutoscaler(context.Background(), attachedSPA("web", apps, "Deployment", "web", 0, 0), nil, Env{Now: now})
	if err != nil || len(errs) > 0 || len(warnings) > 0 {
		t.Errorf("without objects: %v %q %v", errs, warnings, err)
	}
}

func withStatusTarget(s *autoscalingv1alpha1.ScheduledPodAutoscaler, apiVersion, kind, name string) *autoscalingv1alpha1.ScheduledPodAutoscaler {
	s.Status.Target = &autoscalingv1alpha1.TargetReference{APIVersion: apiVersion, Kind: kind, Name: name}
	return s
}

// TestValidateScheduleZeroReplicas: a Schedule's minReplicas 0 is refused where the
// autoscaler's target cannot scale to zero, next to where it can.
func TestValidateScheduleZeroReplicas(t *testing.T) {
	zero := func(name string, min int32, mutate func(*autoscalingv1alpha1.ScheduleSpec)) *autoscalingv1alpha1.Schedule {
		spec := daily("09:00", "17:00", "UTC")
		spec.MinReplicas = ptr.To(min)
		if mutate != nil {
			mutate(&spec)
		}
		return schedule(name, spec)
	}
	const why = `a HorizontalPodAutoscaler's minReplicas must be at least 1 (0 needs the alpha feature gate HPAScaleToZero, which almanac does not rely on): ` +
		`set minReplicas to 1 or more; 0 works only where the target can scale to zero: a KEDA ScaledObject, or a workload without an autoscaler, attached through its scale subresource`
	generatedErr := `spec.minReplicas: Invalid value: 0: ScheduledPodAutoscaler "web" generates a HorizontalPodAutoscaler, and ` + why
	tests := []struct {
		name    string
		obj     *autoscalingv1alpha1.Schedule
		old     *autoscalingv1alpha1.Schedule
		objects []Object
		want    result
	}{{
		name:    "minReplicas 1 of a generated HorizontalPodAutoscaler",
		obj:     zero("a", 1, nil),
		objects: []Object{generatedSPA("web")},
	}, {
		name:    "minReplicas 0 of a generated HorizontalPodAutoscaler",
		obj:     zero("a", 0, nil),
		objects: []Object{generatedSPA("web")},
		want:    result{Errors: []string{generatedErr}},
	}, {
		name:    "minReplicas 0 of an autoscaler attached to a HorizontalPodAutoscaler",
		obj:     zero("a", 0, nil),
		objects: []Object{attachedSPA("web", "autoscaling/v2", "HorizontalPodAutoscaler", "web-hpa", 1, 10)},
		want:    result{Errors: []string{`spec.minReplicas: Invalid value: 0: ScheduledPodAutoscaler "web" is attached to HorizontalPodAutoscaler "web-hpa", and ` + why}},
	}, {
		name:    "minReplicas 0 of an autoscaler attached to a ScaledObject",
		obj:     zero("a", 0, nil),
		objects: []Object{attachedSPA("web", "keda.sh/v1alpha1", "ScaledObject", "web", 0, 10)},
	}, {
		name:    "minReplicas 0 of an autoscaler attached to a Deployment",
		obj:     zero("a", 0, nil),
		objects: []Object{attachedSPA("web", "apps/v1", "Deployment", "web", 1, 0)},
	}, {
		name: "minReplicas 0 of an autoscaler that does not exist",
		obj:  zero("a", 0, nil),
		want: result{Warnings: []string{
			`spec.minReplicas: ScheduledPodAutoscaler "web" does not exist, so almanac cannot tell whether 0 applies: 0 works only where the target can scale to zero: ` +
				`a KEDA ScaledObject, or a workload without an autoscaler, attached through its scale subresource; if the autoscaler generates a HorizontalPodAutoscaler or attaches to one, ` +
				`0 cannot apply (a HorizontalPodAutoscaler's minReplicas must be at least 1 (0 needs the alpha feature gate HPAScaleToZero, which almanac does not rely on))`,
			`spec.scaleTargetRef.name: ScheduledPodAutoscaler "web" does not exist in namespace "ns": this Schedule changes nothing until it is created`,
		}},
	}, {
		name:    "an update that sets minReplicas 0 and leaves the windows alone is refused all the same",
		obj:     zero("a", 0, nil),
		old:     zero("a", 2, nil),
		objects: []Object{generatedSPA("web")},
		want:    result{Errors: []string{generatedErr}},
	}, {
		name:    "an update that moves a Schedule with minReplicas 0 to a generated HorizontalPodAutoscaler",
		obj:     zero("a", 0, nil),
		old:     zero("a", 0, func(s *autoscalingv1alpha1.ScheduleSpec) { s.ScaleTargetRef.Name = "worker" }),
		objects: []Object{generatedSPA("web")},
		want:    result{Errors: []string{generatedErr}},
	}, {
		name:    "an update that leaves minReplicas 0 alone (the autoscaler changed underneath) is a warning",
		obj:     zero("a", 0, func(s *autoscalingv1alpha1.ScheduleSpec) { s.Suspend = true }),
		old:     zero("a", 0, nil),
		objects: []Object{generatedSPA("web")},
		want:    result{Warnings: []string{generatedErr + " (admitted because this field did not change)"}},
	}, {
		name: "the refusal stands next to ratcheted problems of the windows",
		obj: zero("a", 0, func(s *autoscalingv1alpha1.ScheduleSpec) {
			*s = autoscalingv1alpha1.ScheduleSpec{ScaleTargetRef: s.ScaleTargetRef, MinReplicas: s.MinReplicas,
				Type: "OneShot", StartTime: "2026-12-24T18:00", EndTime: "2026-12-26T00:00", TimeZone: "UTC"}
		}),
		old: zero("a", 2, func(s *autoscalingv1alpha1.ScheduleSpec) {
			*s = autoscalingv1alpha1.ScheduleSpec{ScaleTargetRef: s.ScaleTargetRef, MinReplicas: s.MinReplicas,
				Type: "OneShot", StartTime: "2026-12-24T18:00", EndTime: "2026-12-26T00:00", TimeZone: "UTC"}
		}),
		objects: []Object{generatedSPA("web")},
		want: result{
			Errors:   []string{generatedErr},
			Warnings: []string{"spec.endTime: the OneShot window ended at 2026-12-26 00:00 UTC: this Schedule will never be active again; delete it when it is no longer needed"},
		},
	}}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			errs, warnings, err := ValidateSchedule(context.Background(), tt.obj, tt.old, Env{Now: now, Objects: lookupOf(tt.objects...)})
			if err != nil {
				t.Fatal(err)
			}
			if diff := cmp.Diff(tt.want, toResult(errs, warnings)); diff != "" {
				t.Errorf("(-want +got):\n%s", diff)
			}
		})
	}
}

// TestValidationOnlyReadsTheLookup: the webhook's Lookup hands out objects shared with the
// manager's cache (shallow copies of the Schedules), so validation must not change them.
func TestValidationOnlyReadsTheLookup(t *testing.T) {
	objs := []Object{
		spa("web", "Forbid"),
		schedule("b", weekdays("09:00", "17:00", "europe/berlin", "fri", "mon")),
		schedule("a", daily("9:00", "12:00", "Asia/Tokyo")),
		schedule("c", autoscalingv1alpha1.ScheduleSpec{Type: "Weekly", StartDayOfWeek: "sun", StartTime: "10:00", EndDayOfWeek: "mon", EndTime: "11:00", TimeZone: "UTC"}),
	}
	env := Env{Now: now, Objects: lookupOf(objs...)}
	before := make([]Object, len(objs))
	for i, o := range objs {
		before[i] = o.DeepCopyObject().(Object)
	}
	ctx := context.Background()
	if _, _, err := ValidateSchedule(ctx, schedule("d", daily("10:00", "11:00", "UTC")), nil, env); err != nil {
		t.Fatal(err)
	}
	becomesForbid := spa("web", "Forbid")
	becomesForbid.Namespace = "ns"
	if _, _, err := ValidateScheduledPodAutoscaler(ctx, becomesForbid, spa("web", "Max"), env); err != nil {
		t.Fatal(err)
	}
	for i := range objs {
		if diff := cmp.Diff(before[i], objs[i]); diff != "" {
			t.Errorf("validation changed %s (-before +after):\n%s", objs[i].GetName(), diff)
		}
	}
}

func withRunNow(sj *batchv1alpha1.ScheduledJob, token string) *batchv1alpha1.ScheduledJob {
	metav1.SetMetaDataAnnotation(&sj.ObjectMeta, batchv1alpha1.AnnotationRunNow, token)
	return sj
}
