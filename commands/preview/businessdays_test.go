package preview

import (
	"strings"
	"testing"

	"github.com/google/go-cmp/cmp"
)

const businessHolidaysYAML = `apiVersion: almanac.dev/v1alpha1
kind: Calendar
metadata: {name: holidays}
spec:
  timeZone: Europe/Berlin
  days:
  - {date: "12-24", name: Christmas Eve}
  - {date: "12-25", name: Christmas Day}
  - {date: "12-26", name: Boxing Day}
  - {date: "12-31", name: New Year's Eve}
  - {date: "01-01", name: New Year's Day}
  - {date: "2028-02-29", name: Leap day off}
`

// TestPreviewBusinessDays: `almanac preview` draws the runs and windows of the day forms as
// the reconcilers will: the last business day before a holiday at the month's end, the second
// business day after New Year, the first Monday, the last day of a leap February; and the
// window header says which days are business days.
func TestPreviewBusinessDays(t *testing.T) {
	input := businessHolidaysYAML + `---
apiVersion: batch.almanac.dev/v1alpha1
kind: ScheduledJob
metadata: {name: month-close}
spec:
  schedule: "0 18 LW * *"
  timeZone: Europe/Berlin
  calendars: {skip: [{name: holidays}]}` + jobTemplateYAML + `
---
apiVersion: batch.almanac.dev/v1alpha1
kind: ScheduledJob
metadata: {name: payroll}
spec:
  schedule: "0 6 W#2 * *"
  timeZone: Europe/Berlin
  businessDays: [Monday, Tuesday, Wednesday, Thursday]
  calendars: {skip: [{name: holidays}]}` + jobTemplateYAML + `
---
apiVersion: batch.almanac.dev/v1alpha1
kind: ScheduledJob
metadata: {name: first-monday}
spec:
  schedule: "0 9 * * MON#1"
  timeZone: Europe/Berlin
  calendars: {skip: [{name: holidays}]}` + jobTemplateYAML + `
---
apiVersion: batch.almanac.dev/v1alpha1
kind: ScheduledJob
metadata: {name: leap}
spec:
  schedule: "0 0 L 2 *"` + jobTemplateYAML + `
---
` + autoscalerYAML + `---
apiVersion: autoscaling.almanac.dev/v1alpha1
kind: Schedule
metadata: {name: month-end}
spec:
  scaleTargetRef: {name: web}
  minReplicas: 4
  type: Cron
  schedule: "0 8 LW * *"
  duration: 10h
  timeZone: Europe/Berlin
  calendars: {skip: [{name: holidays}]}
`
	rng := []string{"--from", "2027-12-01T00:00:00Z", "--to", "2028-03-01T00:00:00Z"}
	stdout, stderr, code := previewFile(t, input, append(rng, "-o", "json")...)
	if code != 0 || stderr != "" {
		t.Fatalf("exit %d, stderr %s", code, stderr)
	}
	got := decodePreview(t, stdout)
	runs := map[string][]string{}
	for _, j := range got.Jobs {
		runs[j.Name] = j.Runs
		if len(j.Skipped) > 0 {
			t.Errorf("%s: slots skipped by the calendar: %v", j.Name, j.Skipped)
		}
	}
	want := map[string][]string{
		// 2027-12-31 is New Year's Eve, 2028-02-29 a day off: the days before.
		"month-close": {"2027-12-30T17:00:00Z", "2028-01-31T17:00:00Z", "2028-02-28T17:00:00Z"},
		// Monday to Thursday: 2027-12-01 (Wed) is the first, 12-02 the second; 2028-01-03 (Mon)
		// the first after New Year's Day; February 1 (Tue), 2 (Wed).
		"payroll": {"2027-12-02T05:00:00Z", "2028-01-04T05:00:00Z", "2028-02-02T05:00:00Z"},
		// A first Monday that is a holiday would be skipped, not moved; none is here.
		"first-monday": {"2027-12-06T08:00:00Z", "2028-01-03T08:00:00Z", "2028-02-07T08:00:00Z"},
		"leap":         {"2028-02-29T00:00:00Z"},
	}
	if diff := cmp.Diff(want, runs); diff != "" {
		t.Errorf("runs (-want +got):\n%s", diff)
	}
	if len(got.Autoscalers) != 1 {
		t.Fatalf("autoscalers: %+v", got.Autoscalers)
	}
	var raised []string
	for _, s := range got.Autoscalers[0].Segments {
		if s.MinReplicas == 4 {
			raised = append(raised, s.Start+" "+s.End)
		}
	}
	wantRaised := []string{
		"2027-12-30T07:00:00Z 2027-12-30T17:00:00Z",
		"2028-01-31T07:00:00Z 2028-01-31T17:00:00Z",
		"2028-02-28T07:00:00Z 2028-02-28T17:00:00Z",
	}
	if diff := cmp.Diff(wantRaised, raised); diff != "" {
		t.Errorf("windows (-want +got):\n%s", diff)
	}

	stdout, _, _ = previewFile(t, input, rng...)
	for _, line := range []string{
		`month-end  Cron "0 8 LW * *" for 10h0m0s on business days Monday to Friday  Europe/Berlin`,
		`ScheduledJob default/payroll: cron "0 6 W#2 * *" on business days Monday to Thursday in Europe/Berlin`,
		`ScheduledJob default/first-monday: cron "0 9 * * MON#1" in Europe/Berlin`,
	} {
		if !strings.Contains(stdout, line) {
			t.Errorf("the text lacks %q:\n%s", line, stdout)
		}
	}
}
