package validate

import (
	"testing"

	"github.com/google/go-cmp/cmp"

	"github.com/almanac-dev/almanac/api/admission"
)

// TestStartingDeadlineBeyondTheMaximum: `almanac validate` refuses a startingDeadlineSeconds
// above the maximum with the schema's message (the field path and the limit), as the API
// server does (test/crds, test/webhooks' parity corpus), and admits the maximum.
func TestStartingDeadlineBeyondTheMaximum(t *testing.T) {
	sj := func(name, deadline string) string {
		return `
---
apiVersion: batch.almanac.dev/v1alpha1
kind: ScheduledJob
metadata: {name: ` + name + `}
spec:
  schedule: "* * * * *"
  startingDeadlineSeconds: ` + deadline + jobTemplateYAML
	}
	report := validateString(t, sj("forever", "9999999999")+sj("longest", "315360000")+sj("overflowing", "9223372036854775807"))
	want := []verdictLine{{
		Object: "ScheduledJob default/forever",
		Errors: []admission.ResultError{{Field: "spec.startingDeadlineSeconds", Type: "FieldValueInvalid",
			Message: "Invalid value: 9999999999: spec.startingDeadlineSeconds in body should be less than or equal to 315360000"}},
		Warnings: []string{},
	}, {
		Object: "ScheduledJob default/longest", Allowed: true, Errors: []admission.ResultError{}, Warnings: []string{},
	}, {
		Object: "ScheduledJob default/overflowing",
		Errors: []admission.ResultError{{Field: "spec.startingDeadlineSeconds", Type: "FieldValueInvalid",
			Message: "Invalid value: 9223372036854775807: spec.startingDeadlineSeconds in body should be less than or equal to 315360000"}},
		Warnings: []string{},
	}}
	if diff := cmp.Diff(want, verdicts(report)); diff != "" {
		t.Errorf("verdicts (-want +got):\n%s", diff)
	}
}
