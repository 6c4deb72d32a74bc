package validate

import (
	"slices"
	"strings"
	"testing"

	"github.com/google/go-cmp/cmp"

	"github.com/almanac-dev/almanac/api/admission"
)

// TestValidateBusinessDays: `almanac validate` runs the day forms and businessDays through the
// API server's steps (the schema's enum, minItems and CEL rules) and the webhooks' (the time
// engine), as the cluster would.
func TestValidateBusinessDays(t *testing.T) {
	job := func(name, spec string) string {
		return "---\napiVersion: batch.almanac.dev/v1alpha1\nkind: ScheduledJob\nmetadata: {name: " + name + ", namespace: prod}\nspec:\n" + spec + jobTemplateYAML + "\n"
	}
	input := `
apiVersion: almanac.dev/v1alpha1
kind: Calendar
metadata: {name: freeze, namespace: prod}
spec:
  periods: [{start: "2020-01-01T00:00", end: "2045-01-01T00:00", name: Freeze}]
` + job("close", `  schedule: "0 18 LW * *"
  timeZone: Europe/Berlin
  businessDays: [fri, mon, tue, wed, thu]`) +
		job("frozen", `  schedule: "0 18 LW * *"
  calendars: {skip: [{name: freeze}]}`) +
		job("once", `  at: "2030-01-01T09:00"
  businessDays: [Monday]`) +
		job("funday", `  schedule: "0 9 LW * *"
  businessDays: [Funday]`) +
		job("none", `  schedule: "0 9 LW * *"
  businessDays: []`) +
		job("w24", `  schedule: "0 9 W#24 * *"`) + `---
apiVersion: autoscaling.almanac.dev/v1alpha1
kind: ScheduledPodAutoscaler
metadata: {name: web, namespace: prod}
spec: {horizontalPodAutoscalerSpec: {scaleTargetRef: {kind: Deployment, name: web}, maxReplicas: 10}}
---
apiVersion: autoscaling.almanac.dev/v1alpha1
kind: Schedule
metadata: {name: daily, namespace: prod}
spec: {scaleTargetRef: {name: web}, minReplicas: 4, type: Daily, startTime: "09:00", endTime: "10:00", businessDays: [Monday]}
---
apiVersion: autoscaling.almanac.dev/v1alpha1
kind: Schedule
metadata: {name: month-end, namespace: prod}
spec: {scaleTargetRef: {name: web}, minReplicas: 4, type: Cron, schedule: "0 8 LW * *", duration: 10h, businessDays: [Monday, Tuesday]}
`
	report := validateString(t, input)
	got := verdicts(report)
	for _, v := range got {
		slices.SortStableFunc(v.Errors, func(a, b admission.ResultError) int { return strings.Compare(a.Field, b.Field) })
	}
	want := []verdictLine{
		{Object: "Calendar prod/freeze", Allowed: true, Errors: []admission.ResultError{}, Warnings: []string{}},
		{Object: "ScheduledJob prod/close", Allowed: true, Errors: []admission.ResultError{}, Warnings: []string{}},
		{Object: "ScheduledJob prod/frozen", Allowed: true, Errors: []admission.ResultError{}, Warnings: []string{
			`spec.calendars: "0 18 LW * *" has no slot within eight years after 2027-01-15 12:00 UTC: its business days (Monday to Friday, at 18:00) are all closed by Calendar freeze, ` +
				`so its business-day forms find no day; check the calendars (spec.calendars) and the business days (spec.businessDays)`,
		}},
		{Object: "ScheduledJob prod/once", Errors: []admission.ResultError{
			{Field: "spec.businessDays", Type: "FieldValueInvalid", Message: "Invalid value: businessDays are for the business-day forms of a cron schedule (LW, 15W, W#2): set them only with schedule"},
		}, Warnings: []string{}},
		{Object: "ScheduledJob prod/funday", Errors: []admission.ResultError{
			{Field: "<nil>", Type: "FieldValueInvalid", Message: "Invalid value: null: some validation rules were not checked because the object was invalid; correct the existing errors to complete validation"},
			{Field: "spec.businessDays[0]", Type: "FieldValueNotSupported", Message: `Unsupported value: "Funday": supported values: "Monday", "Tuesday", "Wednesday", "Thursday", "Friday", "Saturday", "Sunday"`},
		}, Warnings: []string{}},
		{Object: "ScheduledJob prod/none", Errors: []admission.ResultError{
			{Field: "spec.businessDays", Type: "FieldValueInvalid", Message: "Invalid value: 0: spec.businessDays in body should have at least 1 items"},
		}, Warnings: []string{}},
		{Object: "ScheduledJob prod/w24", Errors: []admission.ResultError{
			{Field: "spec.schedule", Type: "FieldValueInvalid", Message: `Invalid value: "0 9 W#24 * *": "0 9 W#24 * *" never fires: no date matches its day-of-month, month and day-of-week fields ` +
				`with the business days Monday to Friday (a month has 28 to 31 days, at most 5 of each weekday and, counting Monday to Friday, at most 23 business days); check those fields`},
		}, Warnings: []string{}},
		{Object: "ScheduledPodAutoscaler prod/web", Allowed: true, Errors: []admission.ResultError{}, Warnings: []string{}},
		{Object: "Schedule prod/daily", Errors: []admission.ResultError{
			{Field: "spec.businessDays", Type: "FieldValueInvalid", Message: "Invalid value: businessDays is only used by type Cron, with a business-day form in schedule (LW, 15W, W#2)"},
		}, Warnings: []string{}},
		{Object: "Schedule prod/month-end", Allowed: true, Errors: []admission.ResultError{}, Warnings: []string{}},
	}
	if diff := cmp.Diff(want, got); diff != "" {
		t.Errorf("(-want +got):\n%s", diff)
	}
	// What is stored: businessDays as full names, Monday first.
	for _, r := range report.Results {
		if r.Name == "close" {
			spec, _ := r.Defaulted["spec"].(map[string]any)
			if diff := cmp.Diff([]any{"Monday", "Tuesday", "Wednesday", "Thursday", "Friday"}, spec["businessDays"]); diff != "" {
				t.Errorf("close's stored businessDays (-want +got):\n%s", diff)
			}
		}
	}
}
