package admission

import (
	"context"
	"fmt"
	"strings"
	"testing"

	"github.com/google/go-cmp/cmp"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"

	autoscalingv1alpha1 "github.com/almanac-dev/almanac/api/autoscaling/v1alpha1"
	batchv1alpha1 "github.com/almanac-dev/almanac/api/batch/v1alpha1"
	calendarv1alpha1 "github.com/almanac-dev/almanac/api/calendar/v1alpha1"
)

func calendar(name, zone string, days []calendarv1alpha1.CalendarDay, periods ...calendarv1alpha1.CalendarPeriod) *calendarv1alpha1.Calendar {
	return &calendarv1alpha1.Calendar{ObjectMeta: metav1.ObjectMeta{Name: name, Namespace: "ns"},
		Spec: calendarv1alpha1.CalendarSpec{TimeZone: zone, Days: days, Periods: periods}}
}

func clusterCalendar(name, zone string, days []calendarv1alpha1.CalendarDay, periods ...calendarv1alpha1.CalendarPeriod) *calendarv1alpha1.ClusterCalendar {
	return &calendarv1alpha1.ClusterCalendar{ObjectMeta: metav1.ObjectMeta{Name: name},
		Spec: calendarv1alpha1.CalendarSpec{TimeZone: zone, Days: days, Periods: periods}}
}

func days(dates ...string) []calendarv1alpha1.CalendarDay {
	out := make([]calendarv1alpha1.CalendarDay, len(dates))
	for i, d := range dates {
		out[i] = calendarv1alpha1.CalendarDay{Date: d}
	}
	return out
}

func period(start, end string) calendarv1alpha1.CalendarPeriod {
	return calendarv1alpha1.CalendarPeriod{Start: start, End: end}
}

func TestDefaultCalendar(t *testing.T) {
	tests := []struct {
		name         string
		in, want     calendarv1alpha1.CalendarSpec
		wantWarnings []string
	}{{
		name: "zone filled in",
		in:   calendarv1alpha1.CalendarSpec{Days: days("12-25")},
		want: calendarv1alpha1.CalendarSpec{TimeZone: "UTC", Days: days("12-25")},
	}, {
		name: "canonical zone name; periods with an offset become wall times in the zone",
		in: calendarv1alpha1.CalendarSpec{TimeZone: "europe/berlin", Periods: []calendarv1alpha1.CalendarPeriod{
			period("2027-12-24T18:00:00+01:00", "2027-12-31T23:00:00Z"), period("2027-06-01T09:00", "2027-06-02T09:00"),
		}},
		want: calendarv1alpha1.CalendarSpec{TimeZone: "Europe/Berlin", Periods: []calendarv1alpha1.CalendarPeriod{
			period("2027-12-24T18:00", "2028-01-01T00:00"), period("2027-06-01T09:00", "2027-06-02T09:00"),
		}},
		wantWarnings: []string{`spec.periods[0].end: "2027-12-31T23:00:00Z" was stored as the wall time "2028-01-01T00:00" in Europe/Berlin, the time zone of this object`},
	}, {
		name: "what cannot be normalized is left for validation",
		in:   calendarv1alpha1.CalendarSpec{TimeZone: "Europe/Berln", Periods: []calendarv1alpha1.CalendarPeriod{period("2027-12-24T18:00:00+01:00", "soon")}},
		want: calendarv1alpha1.CalendarSpec{TimeZone: "Europe/Berln", Periods: []calendarv1alpha1.CalendarPeriod{period("2027-12-24T18:00:00+01:00", "soon")}},
	}}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			c := &calendarv1alpha1.Calendar{Spec: tt.in}
			warnings := DefaultCalendar(c)
			if diff := cmp.Diff(tt.want, c.Spec); diff != "" {
				t.Errorf("spec (-want +got):\n%s", diff)
			}
			if diff := cmp.Diff(tt.wantWarnings, warnings); diff != "" {
				t.Errorf("warnings (-want +got):\n%s", diff)
			}
			cc := &calendarv1alpha1.ClusterCalendar{Spec: *c.Spec.DeepCopy()}
			if w := DefaultClusterCalendar(cc); len(w) > 0 || !cmp.Equal(c.Spec, cc.Spec) {
				t.Errorf("defaulting is not idempotent: %v\n%s", w, cmp.Diff(c.Spec, cc.Spec))
			}
		})
	}
}

func TestValidateCalendar(t *testing.T) {
	leapDays := make([]string, calendarv1alpha1.MaxDays)
	for i := range leapDays {
		leapDays[i] = "02-29"
	}
	pastPeriods := make([]calendarv1alpha1.CalendarPeriod, 6)
	for i := range pastPeriods {
		pastPeriods[i] = period(fmt.Sprintf("2020-01-%02dT00:00", i+1), fmt.Sprintf("2020-01-%02dT12:00", i+1))
	}
	tests := []struct {
		name string
		obj  *calendarv1alpha1.Calendar
		old  *calendarv1alpha1.Calendar
		want result
	}{{
		name: "valid",
		obj: calendar("holidays", "Europe/Berlin", []calendarv1alpha1.CalendarDay{{Date: "12-25", Name: "Christmas Day"}, {Date: "2027-04-05", Name: "Easter Monday"}},
			calendarv1alpha1.CalendarPeriod{Start: "2027-12-20T00:00", End: "2028-01-03T00:00", Name: "Year-end freeze"}),
	}, {
		name: "unknown zone",
		obj:  calendar("holidays", "Europe/Berln", days("12-25")),
		want: result{Errors: []string{`spec.timeZone: Invalid value: "Europe/Berln": "Europe/Berln" is not a known IANA time zone: did you mean "Europe/Berlin"?`}},
	}, {
		name: "each wrong date by its index",
		obj:  calendar("holidays", "UTC", days("12-25", "2027-01-01", "2027-04-05", "2027-02-29", "13-01")),
		want: result{Errors: []string{
			`spec.days[3].date: Invalid value: "2027-02-29": "2027-02-29" is not a valid date: February 2027 has 28 days`,
			`spec.days[4].date: Invalid value: "13-01": "13-01" is not a valid date: months go from 01 to 12`,
		}},
	}, {
		name: "a period ending before it starts",
		obj:  calendar("freeze", "UTC", nil, period("2027-12-31T00:00", "2027-12-20T00:00")),
		want: result{Errors: []string{`spec.periods[0].end: Invalid value: "2027-12-20T00:00": 2027-12-20T00:00 is not after the start 2027-12-31T00:00: ` +
			`a period must end after it starts: set end to a later wall time than start (swap them if they were written the wrong way round)`}},
	}, {
		name: "a period that is no wall time",
		obj:  calendar("freeze", "UTC", nil, period("2027-02-01T00:00", "2027-03-01T00:00"), period("next week", "2027-12-20T25:00")),
		want: result{Errors: []string{
			`spec.periods[1].start: Invalid value: "next week": "next week" is not a date and time: expected yyyy-MM-ddTHH:mm (wall time in the time zone) or RFC 3339 with an offset, e.g. "2027-03-14T09:30" or "2027-03-14T09:30:00+09:00"`,
			`spec.periods[1].end: Invalid value: "2027-12-20T25:00": "2027-12-20T25:00" is not a valid time of day: expected HH:mm on a 24-hour clock from 00:00 to 23:59`,
		}},
	}, {
		name: "a date listed twice",
		obj:  calendar("holidays", "UTC", days("12-25", "2027-01-01", "12-25")),
		want: result{Warnings: []string{`spec.days[2].date: "12-25" is listed already at spec.days[0]: a day is in the calendar once, however often it is listed; remove one of them, or correct the date if another day was meant`}},
	}, {
		name: "1000 days, all 02-29: admitted, with a bounded number of warnings",
		obj:  calendar("leap", "UTC", days(leapDays...)),
		want: result{Warnings: []string{
			`spec.days[1].date: "02-29" is listed already at spec.days[0]: a day is in the calendar once, however often it is listed; remove one of them, or correct the date if another day was meant`,
			`spec.days[2].date: "02-29" is listed already at spec.days[0]: a day is in the calendar once, however often it is listed; remove one of them, or correct the date if another day was meant`,
			`spec.days[3].date: "02-29" is listed already at spec.days[0]: a day is in the calendar once, however often it is listed; remove one of them, or correct the date if another day was meant`,
			"spec.days: 996 more dates listed more than once besides those above",
		}},
	}, {
		name: "a period decades long",
		obj:  calendar("forever", "America/New_York", nil, period("2027-01-01T00:00", "2226-12-31T23:59")),
	}, {
		name: "a period wholly in the past is a warning",
		obj:  calendar("freeze", "Asia/Tokyo", nil, period("2026-12-20T00:00", "2027-01-03T00:00"), period("2027-01-10T00:00", "2027-01-20T00:00")),
		want: result{Warnings: []string{"spec.periods[0]: the period ended at 2027-01-03 00:00 Asia/Tokyo (2027-01-02 15:00 UTC), before now (2027-01-15 12:00 UTC): " +
			"it closes nothing any more; remove it when it is no longer needed"}},
	}, {
		name: "periods in the past: a bounded number of warnings",
		obj:  calendar("freeze", "UTC", nil, pastPeriods...),
		want: result{Warnings: []string{
			"spec.periods[0]: the period ended at 2020-01-01 12:00 UTC, before now (2027-01-15 12:00 UTC): it closes nothing any more; remove it when it is no longer needed",
			"spec.periods[1]: the period ended at 2020-01-02 12:00 UTC, before now (2027-01-15 12:00 UTC): it closes nothing any more; remove it when it is no longer needed",
			"spec.periods[2]: the period ended at 2020-01-03 12:00 UTC, before now (2027-01-15 12:00 UTC): it closes nothing any more; remove it when it is no longer needed",
			"spec.periods: 3 more periods ended before now besides those above",
		}},
	}, {
		name: "an update that leaves a wrong spec alone is admitted with a warning",
		obj:  withLabel(calendar("holidays", "UTC", days("2027-02-29"))),
		old:  calendar("holidays", "UTC", days("2027-02-29")),
		want: result{Warnings: []string{`spec.days[0].date: Invalid value: "2027-02-29": "2027-02-29" is not a valid date: February 2027 has 28 days (admitted because the spec did not change)`}},
	}, {
		name: "an update of the spec is validated",
		obj:  calendar("holidays", "UTC", days("2027-02-29")),
		old:  calendar("holidays", "UTC", days("2027-02-28")),
		want: result{Errors: []string{`spec.days[0].date: Invalid value: "2027-02-29": "2027-02-29" is not a valid date: February 2027 has 28 days`}},
	}}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			env := Env{Now: now, Objects: lookupOf()}
			errs, warnings, err := ValidateCalendar(context.Background(), tt.obj, tt.old, env)
			if err != nil {
				t.Fatal(err)
			}
			if diff := cmp.Diff(tt.want, toResult(errs, warnings)); diff != "" {
				t.Errorf("(-want +got):\n%s", diff)
			}
			// A ClusterCalendar is held to the same rules.
			cc := &calendarv1alpha1.ClusterCalendar{ObjectMeta: tt.obj.ObjectMeta, Spec: tt.obj.Spec}
			var old *calendarv1alpha1.ClusterCalendar
			if tt.old != nil {
				old = &calendarv1alpha1.ClusterCalendar{ObjectMeta: tt.old.ObjectMeta, Spec: tt.old.Spec}
			}
			errs, warnings, err = ValidateClusterCalendar(context.Background(), cc, old, env)
			if err != nil {
				t.Fatal(err)
			}
			if diff := cmp.Diff(tt.want, toResult(errs, warnings)); diff != "" {
				t.Errorf("ClusterCalendar (-want +got):\n%s", diff)
			}
		})
	}
}

func withLabel(c *calendarv1alpha1.Calendar) *calendarv1alpha1.Calendar {
	c.Labels = map[string]string{"team": "payments"}
	return c
}

func withCalendars(s *autoscalingv1alpha1.Schedule, skip, only []calendarv1alpha1.CalendarReference) *autoscalingv1alpha1.Schedule {
	s.Spec.Calendars = &calendarv1alpha1.Calendars{Skip: skip, Only: only}
	return s
}

func refs(names ...string) []calendarv1alpha1.CalendarReference {
	out := make([]calendarv1alpha1.CalendarReference, len(names))
	for i, n := range names {
		kind, name, ok := strings.Cut(n, "/")
		if !ok {
			kind, name = "", n
		}
		out[i] = calendarv1alpha1.CalendarReference{Kind: kind, Name: name}
	}
	return out
}

// mondaysInJanuary is a Calendar of the Mondays of January 2027 and 2028.
func mondaysInJanuary() *calendarv1alpha1.Calendar {
	return calendar("january-mondays", "UTC", days("2027-01-04", "2027-01-11", "2027-01-18", "2027-01-25",
		"2028-01-03", "2028-01-10", "2028-01-17", "2028-01-24", "2028-01-31"))
}

func TestValidateScheduleCalendars(t *testing.T) {
	forbid := spa("web", "Forbid")
	holidays := calendar("holidays", "UTC", days("12-25"))
	broken := calendar("broken", "UTC", days("2027-02-30")) // stored without the webhook
	otherNamespace := func(l *inputLookup) {
		c := calendar("elsewhere", "UTC", days("12-25"))
		c.Namespace = "other"
		l.all[objectKey(calendarv1alpha1.GroupVersion.WithKind("Calendar").GroupKind(), "other", c.Name)] = c
		l.admit(c)
	}
	tests := []struct {
		name    string
		obj     *autoscalingv1alpha1.Schedule
		old     *autoscalingv1alpha1.Schedule
		objects []Object
		setup   func(*inputLookup)
		noEnv   bool
		want    result
	}{{
		name:    "calendars that exist",
		obj:     withCalendars(schedule("a", daily("09:00", "18:00", "UTC")), refs("holidays", "ClusterCalendar/de"), nil),
		objects: []Object{forbid, holidays, clusterCalendar("de", "Europe/Berlin", days("10-03"))},
	}, {
		name:    "a missing Calendar in the namespace and a missing ClusterCalendar are warnings",
		obj:     withCalendars(schedule("a", daily("09:00", "18:00", "UTC")), refs("holidays", "nope"), refs("ClusterCalendar/trading")),
		objects: []Object{forbid, holidays},
		want: result{Warnings: []string{
			`spec.calendars.skip[1]: Calendar nope does not exist in namespace "ns": until it does, no window of this object opens and no run starts (a missing calendar holds it); create it, or correct the name or kind (Calendar or ClusterCalendar)`,
			`spec.calendars.only[0]: ClusterCalendar trading does not exist in the cluster: until it does, no window of this object opens and no run starts (a missing calendar holds it); create it, or correct the name or kind (Calendar or ClusterCalendar)`,
		}},
	}, {
		name:    "a Calendar of another namespace does not count",
		obj:     withCalendars(schedule("a", daily("09:00", "18:00", "UTC")), refs("elsewhere"), nil),
		objects: []Object{forbid, holidays},
		setup:   otherNamespace,
		want:    result{Warnings: []string{`spec.calendars.skip[0]: Calendar elsewhere does not exist in namespace "ns": until it does, no window of this object opens and no run starts (a missing calendar holds it); create it, or correct the name or kind (Calendar or ClusterCalendar)`}},
	}, {
		name:    "a calendar that does not compile is a warning",
		obj:     withCalendars(schedule("a", daily("09:00", "18:00", "UTC")), refs("broken"), nil),
		objects: []Object{forbid, broken},
		want: result{Warnings: []string{`spec.calendars.skip[0]: Calendar broken is invalid (spec.days[0].date: "2027-02-30" is not a valid date: February 2027 has 28 days): ` +
			`fix it; until then it holds this object as a missing calendar does`}},
	}, {
		name:    "the same calendar twice in one list is refused",
		obj:     withCalendars(schedule("a", daily("09:00", "18:00", "UTC")), refs("holidays", "ClusterCalendar/de", "Calendar/holidays"), refs("holidays")),
		objects: []Object{forbid, holidays, clusterCalendar("de", "UTC", days("10-03"))},
		want:    result{Errors: []string{`spec.calendars.skip[2]: Duplicate value: "Calendar holidays": Calendar holidays is named already at spec.calendars.skip[0]: remove one of them`}},
	}, {
		name:  "without objects, references are not looked up; duplicates are still refused",
		obj:   withCalendars(schedule("a", daily("09:00", "18:00", "UTC")), refs("nope", "nope"), nil),
		noEnv: true,
		want:  result{Errors: []string{`spec.calendars.skip[1]: Duplicate value: "Calendar nope": Calendar nope is named already at spec.calendars.skip[0]: remove one of them`}},
	}, {
		name: "overlap under Forbid without calendars",
		obj:  schedule("b", daily("09:00", "18:00", "UTC")),
		objects: []Object{forbid, mondaysInJanuary(),
			schedule("a", daily("09:00", "18:00", "UTC"))},
		want: result{Errors: []string{`spec: Forbidden: the windows overlap those of Schedule "a", and ScheduledPodAutoscaler "web" has overlapPolicy Forbid: both are active from 2027-01-15 09:00 to 18:00 UTC; ` +
			`move or shorten one of the windows, or set the autoscaler's overlapPolicy to Max`}},
	}, {
		name: "only and skip of the same calendar do not overlap",
		obj:  withCalendars(schedule("b", daily("09:00", "18:00", "UTC")), refs("january-mondays"), nil),
		objects: []Object{forbid, mondaysInJanuary(),
			withCalendars(schedule("a", daily("09:00", "18:00", "UTC")), nil, refs("january-mondays"))},
	}, {
		name: "the other way round",
		obj:  withCalendars(schedule("b", daily("09:00", "18:00", "UTC")), nil, refs("january-mondays")),
		objects: []Object{forbid, mondaysInJanuary(),
			withCalendars(schedule("a", daily("09:00", "18:00", "UTC")), refs("january-mondays"), nil)},
	}, {
		name: "only one of them cut: they overlap on the Mondays",
		obj:  schedule("b", daily("09:00", "18:00", "UTC")),
		objects: []Object{forbid, mondaysInJanuary(),
			withCalendars(schedule("a", daily("09:00", "18:00", "UTC")), nil, refs("january-mondays"))},
		want: result{Errors: []string{`spec: Forbidden: the windows overlap those of Schedule "a", and ScheduledPodAutoscaler "web" has overlapPolicy Forbid: both are active from 2027-01-18 09:00 to 18:00 UTC; ` +
			`move or shorten one of the windows, or set the autoscaler's overlapPolicy to Max`}},
	}, {
		name: "an update that only changes the calendars is not ratcheted",
		obj:  schedule("b", daily("09:00", "18:00", "UTC")),
		old:  withCalendars(schedule("b", daily("09:00", "18:00", "UTC")), refs("january-mondays"), nil),
		objects: []Object{forbid, mondaysInJanuary(),
			withCalendars(schedule("a", daily("09:00", "18:00", "UTC")), nil, refs("january-mondays"))},
		want: result{Errors: []string{`spec: Forbidden: the windows overlap those of Schedule "a", and ScheduledPodAutoscaler "web" has overlapPolicy Forbid: both are active from 2027-01-18 09:00 to 18:00 UTC; ` +
			`move or shorten one of the windows, or set the autoscaler's overlapPolicy to Max`}},
	}}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			l := lookupOf(tt.objects...)
			if tt.setup != nil {
				tt.setup(l)
				if c, _ := l.Calendar(context.Background(), "other", "elsewhere"); c == nil {
					t.Fatal("the Calendar of namespace other is not in the lookup")
				}
			}
			env := Env{Now: now, Objects: l}
			if tt.noEnv {
				env.Objects = nil
			}
			errs, warnings, err := ValidateSchedule(context.Background(), tt.obj, tt.old, env)
			if err != nil {
				t.Fatal(err)
			}
			if diff := cmp.Diff(tt.want, toResult(errs, warnings)); diff != "" {
				t.Errorf("(-want +got):\n%s", diff)
			}
		})
	}
}

// TestOverlapPolicyChangeHonorsCalendars: an autoscaler switched to Forbid is warned only
// about windows that overlap as their calendars cut them.
func TestOverlapPolicyChangeHonorsCalendars(t *testing.T) {
	ctx := context.Background()
	becomesForbid := spa("web", "Forbid")
	becomesForbid.Namespace = "ns"
	cut := lookupOf(mondaysInJanuary(),
		withCalendars(schedule("a", daily("09:00", "18:00", "UTC")), nil, refs("january-mondays")),
		withCalendars(schedule("b", daily("09:00", "18:00", "UTC")), refs("january-mondays"), nil))
	_, warnings, err := ValidateScheduledPodAutoscaler(ctx, becomesForbid, spa("web", "Max"), Env{Now: now, Objects: cut})
	if err != nil || len(warnings) > 0 {
		t.Errorf("cut by calendars: %v, warnings %q; want none", err, warnings)
	}
	uncut := lookupOf(schedule("a", daily("09:00", "18:00", "UTC")), schedule("b", daily("09:00", "18:00", "UTC")))
	_, warnings, err = ValidateScheduledPodAutoscaler(ctx, becomesForbid, spa("web", "Max"), Env{Now: now, Objects: uncut})
	if err != nil || len(warnings) != 1 || !strings.HasPrefix(warnings[0], "spec.overlapPolicy: ") {
		t.Errorf("without calendars: %v, warnings %q; want the overlap warning", err, warnings)
	}
}

func TestValidateScheduledJobCalendars(t *testing.T) {
	job := func(skip, only []calendarv1alpha1.CalendarReference) *batchv1alpha1.ScheduledJob {
		sj := scheduledJob("report", batchv1alpha1.ScheduledJobSpec{Schedule: "0 9 * * *"})
		sj.Spec.Calendars = &calendarv1alpha1.Calendars{Skip: skip, Only: only}
		return sj
	}
	tests := []struct {
		name    string
		obj     *batchv1alpha1.ScheduledJob
		old     *batchv1alpha1.ScheduledJob
		objects []Object
		want    result
	}{{
		name:    "calendars that exist",
		obj:     job(refs("holidays"), refs("ClusterCalendar/trading")),
		objects: []Object{calendar("holidays", "UTC", days("12-25")), clusterCalendar("trading", "UTC", days("2027-01-18"))},
	}, {
		name: "missing calendars are warnings",
		obj:  job(refs("holidays"), refs("ClusterCalendar/trading")),
		want: result{Warnings: []string{
			`spec.calendars.skip[0]: Calendar holidays does not exist in namespace "ns": until it does, no window of this object opens and no run starts (a missing calendar holds it); create it, or correct the name or kind (Calendar or ClusterCalendar)`,
			`spec.calendars.only[0]: ClusterCalendar trading does not exist in the cluster: until it does, no window of this object opens and no run starts (a missing calendar holds it); create it, or correct the name or kind (Calendar or ClusterCalendar)`,
		}},
	}, {
		name:    "the same calendar twice is refused",
		obj:     job(nil, refs("ClusterCalendar/trading", "ClusterCalendar/trading")),
		objects: []Object{clusterCalendar("trading", "UTC", days("2027-01-18"))},
		want:    result{Errors: []string{`spec.calendars.only[1]: Duplicate value: "ClusterCalendar trading": ClusterCalendar trading is named already at spec.calendars.only[0]: remove one of them`}},
	}, {
		name:    "ratcheted when the calendars did not change",
		obj:     withTeamLabel(job(nil, refs("ClusterCalendar/trading", "ClusterCalendar/trading"))),
		old:     job(nil, refs("ClusterCalendar/trading", "ClusterCalendar/trading")),
		objects: []Object{clusterCalendar("trading", "UTC", days("2027-01-18"))},
		want: result{Warnings: []string{`spec.calendars.only[1]: Duplicate value: "ClusterCalendar trading": ClusterCalendar trading is named already at spec.calendars.only[0]: remove one of them ` +
			`(admitted because spec.calendars did not change)`}},
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

func withTeamLabel(sj *batchv1alpha1.ScheduledJob) *batchv1alpha1.ScheduledJob {
	sj.Labels = map[string]string{"team": "payments"}
	return sj
}
