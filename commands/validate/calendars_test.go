package validate

import (
	"slices"
	"strings"
	"testing"

	"github.com/google/go-cmp/cmp"

	"github.com/almanac-dev/almanac/api/admission"
)

const calendarsYAML = `
apiVersion: almanac.dev/v1alpha1
kind: Calendar
metadata: {name: holidays, namespace: prod}
spec:
  timeZone: europe/berlin
  days: [{date: "12-25", name: Christmas Day}, {date: "2027-04-05", name: Easter Monday}]
  periods: [{start: "2027-12-24T18:00:00+01:00", end: "2027-12-31T23:00:00Z", name: Year-end freeze}]
---
apiVersion: almanac.dev/v1alpha1
kind: ClusterCalendar
metadata: {name: de-public, namespace: prod}
spec:
  days: [{date: "10-03", name: Tag der Deutschen Einheit}]
`

const calendarScheduleYAML = `
apiVersion: autoscaling.almanac.dev/v1alpha1
kind: ScheduledPodAutoscaler
metadata: {name: web, namespace: prod}
spec: {horizontalPodAutoscalerSpec: {scaleTargetRef: {kind: Deployment, name: web}, maxReplicas: 10}}
---
apiVersion: autoscaling.almanac.dev/v1alpha1
kind: Schedule
metadata: {name: office, namespace: prod}
spec:
  scaleTargetRef: {name: web}
  minReplicas: 2
  type: Daily
  startTime: "09:00"
  endTime: "18:00"
  calendars:
    skip: [{name: holidays}, {kind: ClusterCalendar, name: de-public}]
`

// TestValidateCalendars: `almanac validate` admits Calendars and ClusterCalendars as the
// webhooks do (defaulted, compiled, refused at the field path), and resolves the calendars
// that Schedules and ScheduledJobs name from its input.
func TestValidateCalendars(t *testing.T) {
	missing := func(path, ref, where string) string {
		return path + ": " + ref + " does not exist " + where + ": until it does, no window of this object opens and no run starts (a missing calendar holds it); " +
			"create it, or correct the name or kind (Calendar or ClusterCalendar)"
	}
	tests := []struct {
		name      string
		input     string
		want      []verdictLine
		wantNotes []string
	}{{
		name:  "calendars in the input resolve the references, before or after the Schedule",
		input: calendarScheduleYAML + "---" + calendarsYAML,
		want: []verdictLine{
			{Object: "ScheduledPodAutoscaler prod/web", Allowed: true, Errors: []admission.ResultError{}, Warnings: []string{}},
			{Object: "Schedule prod/office", Allowed: true, Errors: []admission.ResultError{}, Warnings: []string{}},
			{Object: "Calendar prod/holidays", Allowed: true, Errors: []admission.ResultError{}, Warnings: []string{
				`spec.periods[0].end: "2027-12-31T23:00:00Z" was stored as the wall time "2028-01-01T00:00" in Europe/Berlin, the time zone of this object`,
			}},
			// A ClusterCalendar has no namespace, whatever the manifest says.
			{Object: "ClusterCalendar /de-public", Allowed: true, Errors: []admission.ResultError{}, Warnings: []string{}},
		},
		wantNotes: []string{admission.PermissionsNotChecked},
	}, {
		name:  "calendars absent from the input are warned about, with a note",
		input: calendarScheduleYAML,
		want: []verdictLine{
			{Object: "ScheduledPodAutoscaler prod/web", Allowed: true, Errors: []admission.ResultError{}, Warnings: []string{}},
			{Object: "Schedule prod/office", Allowed: true, Errors: []admission.ResultError{}, Warnings: []string{
				missing("spec.calendars.skip[0]", "Calendar holidays", `in namespace "prod"`),
				missing("spec.calendars.skip[1]", "ClusterCalendar de-public", "in the cluster"),
			}},
		},
		wantNotes: []string{admission.PermissionsNotChecked, admission.CalendarsFromInput},
	}, {
		name:  "a Calendar of another namespace does not count",
		input: strings.ReplaceAll(calendarScheduleYAML, "namespace: prod", "namespace: dev") + "---" + calendarsYAML,
		want: []verdictLine{
			{Object: "ScheduledPodAutoscaler dev/web", Allowed: true, Errors: []admission.ResultError{}, Warnings: []string{}},
			{Object: "Schedule dev/office", Allowed: true, Errors: []admission.ResultError{}, Warnings: []string{
				missing("spec.calendars.skip[0]", "Calendar holidays", `in namespace "dev"`),
			}},
			{Object: "Calendar prod/holidays", Allowed: true, Errors: []admission.ResultError{}, Warnings: []string{
				`spec.periods[0].end: "2027-12-31T23:00:00Z" was stored as the wall time "2028-01-01T00:00" in Europe/Berlin, the time zone of this object`,
			}},
			{Object: "ClusterCalendar /de-public", Allowed: true, Errors: []admission.ResultError{}, Warnings: []string{}},
		},
		wantNotes: []string{admission.PermissionsNotChecked, admission.CalendarsFromInput},
	}, {
		name: "a refused calendar does not exist for the objects that name it",
		input: `
apiVersion: almanac.dev/v1alpha1
kind: Calendar
metadata: {name: holidays, namespace: prod}
spec:
  days: [{date: "12-25"}, {date: "2027-02-29"}, {date: "12-25"}]
  periods: [{start: "2027-12-31T00:00", end: "2027-12-20T00:00"}]
---
apiVersion: batch.almanac.dev/v1alpha1
kind: ScheduledJob
metadata: {name: report, namespace: prod}
spec:
  schedule: "0 9 * * *"
  calendars: {skip: [{name: holidays}]}` + jobTemplateYAML,
		want: []verdictLine{
			{Object: "Calendar prod/holidays", Errors: []admission.ResultError{
				{Field: "spec.days[1].date", Type: "FieldValueInvalid", Message: `Invalid value: "2027-02-29": "2027-02-29" is not a valid date: February 2027 has 28 days`},
				{Field: "spec.periods[0].end", Type: "FieldValueInvalid", Message: `Invalid value: "2027-12-20T00:00": 2027-12-20T00:00 is not after the start 2027-12-31T00:00: ` +
					`a period must end after it starts: set end to a later wall time than start (swap them if they were written the wrong way round)`},
			}, Warnings: []string{
				`spec.days[2].date: "12-25" is listed already at spec.days[0]: a day is in the calendar once, however often it is listed; remove one of them, or correct the date if another day was meant`,
			}},
			{Object: "ScheduledJob prod/report", Allowed: true, Errors: []admission.ResultError{}, Warnings: []string{
				missing("spec.calendars.skip[0]", "Calendar holidays", `in namespace "prod"`),
			}},
		},
		wantNotes: []string{admission.PermissionsNotChecked, admission.CalendarsFromInput},
	}, {
		name: "names, dates and lists are bounded by the schema",
		input: `
apiVersion: almanac.dev/v1alpha1
kind: ClusterCalendar
metadata: {name: huge}
spec:
  days: [{date: "2027-1-5", name: ` + strings.Repeat("x", 129) + `}]
  periods: [{start: "` + strings.Repeat("2", 65) + `", end: "2027-01-01T00:00"}]`,
		want: []verdictLine{{Object: "ClusterCalendar /huge", Errors: []admission.ResultError{
			{Field: "<nil>", Type: "FieldValueInvalid", Message: "Invalid value: null: some validation rules were not checked because the object was invalid; correct the existing errors to complete validation"},
			{Field: "spec.days[0].date", Type: "FieldValueInvalid", Message: `Invalid value: "2027-1-5": spec.days[0].date in body should match '^([0-9]{4}-)?[0-9]{2}-[0-9]{2}$'`},
			{Field: "spec.days[0].name", Type: "FieldValueTooLong", Message: "Too long: may not be more than 128 bytes"},
			{Field: "spec.periods[0].start", Type: "FieldValueTooLong", Message: "Too long: may not be more than 64 bytes"},
		}, Warnings: []string{}}},
		wantNotes: []string{},
	}, {
		name: "an empty zone is not UTC",
		input: `
apiVersion: almanac.dev/v1alpha1
kind: Calendar
metadata: {name: empty-zone}
spec: {timeZone: "", days: [{date: "12-25"}]}`,
		want: []verdictLine{{Object: "Calendar default/empty-zone", Errors: []admission.ResultError{
			{Field: "spec.timeZone", Type: "FieldValueInvalid", Message: `Invalid value: "": timeZone is empty: omit the field for UTC, or write an IANA time zone name such as "Europe/Berlin"`},
		}, Warnings: []string{}}},
		wantNotes: []string{},
	}}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			report := validateString(t, tt.input)
			got := verdicts(report)
			for _, v := range got {
				// The schema's errors come in no fixed order.
				slices.SortStableFunc(v.Errors, func(a, b admission.ResultError) int { return strings.Compare(a.Field, b.Field) })
			}
			if diff := cmp.Diff(tt.want, got); diff != "" {
				t.Errorf("(-want +got):\n%s", diff)
			}
			if diff := cmp.Diff(tt.wantNotes, report.Notes); diff != "" {
				t.Errorf("notes (-want +got):\n%s", diff)
			}
		})
	}
}

// TestValidateCalendarsOverlap: two Schedules of an autoscaler with overlapPolicy Forbid, the
// same hours every day, one kept to a calendar and the other skipping it, do not overlap; the
// calendar is in the input.
func TestValidateCalendarsOverlap(t *testing.T) {
	input := func(calendars bool) string {
		schedule := func(name, list string) string {
			s := `
apiVersion: autoscaling.almanac.dev/v1alpha1
kind: Schedule
metadata: {name: ` + name + `, namespace: prod}
spec: {scaleTargetRef: {name: web}, minReplicas: 2, type: Daily, startTime: "09:00", endTime: "18:00"`
			if calendars {
				s += `, calendars: {` + list + `: [{name: january-mondays}]}`
			}
			return s + "}\n"
		}
		return `apiVersion: autoscaling.almanac.dev/v1alpha1
kind: ScheduledPodAutoscaler
metadata: {name: web, namespace: prod}
spec: {overlapPolicy: Forbid, horizontalPodAutoscalerSpec: {scaleTargetRef: {kind: Deployment, name: web}, maxReplicas: 10}}
---
apiVersion: almanac.dev/v1alpha1
kind: Calendar
metadata: {name: january-mondays, namespace: prod}
spec:
  days: [{date: "2027-01-18"}, {date: "2027-01-25"}, {date: "2028-01-03"}, {date: "2028-01-10"}]
---` + schedule("mondays", "only") + "---" + schedule("other-days", "skip")
	}
	report := validateString(t, input(true))
	for _, res := range report.Results {
		if !res.Allowed || len(res.Warnings) > 0 {
			t.Errorf("with calendars: %s %s: %v %q", res.Kind, res.Name, res.Errors, res.Warnings)
		}
	}
	report = validateString(t, input(false))
	last := report.Results[len(report.Results)-1]
	if last.Allowed || len(last.Errors) != 1 || !strings.Contains(last.Errors[0].Message, `the windows overlap those of Schedule "mondays"`) {
		t.Errorf("without calendars: %+v, want the overlap refused", last)
	}
}
