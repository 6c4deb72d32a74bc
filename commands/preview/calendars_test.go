package preview

import (
	"encoding/json"
	"fmt"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/google/go-cmp/cmp"

	"github.com/almanac-dev/almanac/commands/manifest"
)

const holidaysYAML = `apiVersion: almanac.dev/v1alpha1
kind: Calendar
metadata: {name: holidays}
spec:
  days:
  - {date: "12-25", name: Christmas Day}
`

// previewFile writes input to a file and previews it with args; it returns standard output,
// standard error and the exit status.
func previewFile(t *testing.T, input string, args ...string) (string, string, int) {
	t.Helper()
	file := filepath.Join(t.TempDir(), "input.yaml")
	if err := os.WriteFile(file, []byte(input), 0o600); err != nil {
		t.Fatal(err)
	}
	return run2(t, NewCommand(), append([]string{"-f", file}, args...)...)
}

// jsonPreview is the JSON of a preview with the fields that calendars add.
type jsonPreview struct {
	Autoscalers []struct {
		Namespace, Name string
		Segments        []struct {
			Start, End               string
			MinReplicas, MaxReplicas int32
			Schedules                []string
		}
		Skipped []struct{ Schedule, Start, End, Reason string }
		Notes   []string
	}
	Jobs []struct {
		Namespace, Name string
		Runs            []string
		Skipped         []struct{ Time, Reason string }
		Notes           []string
	}
}

func decodePreview(t *testing.T, out string) jsonPreview {
	t.Helper()
	var got jsonPreview
	dec := json.NewDecoder(strings.NewReader(out))
	dec.DisallowUnknownFields()
	if err := dec.Decode(&got); err != nil {
		t.Fatalf("%v\n%s", err, out)
	}
	return got
}

// TestSkippedSlotIsShownWithItsReason: a slot that a calendar of the input skips is not a
// run; it is listed apart, with the name of the day that skips it, in JSON and in text.
func TestSkippedSlotIsShownWithItsReason(t *testing.T) {
	input := holidaysYAML + `---
apiVersion: batch.almanac.dev/v1alpha1
kind: ScheduledJob
metadata: {name: export}
spec:
  schedule: "0 6 * * *"
  calendars: {skip: [{name: holidays}]}` + jobTemplateYAML + "\n"
	rng := []string{"--from", "2027-12-24T00:00:00Z", "--to", "2027-12-27T00:00:00Z"}
	stdout, stderr, code := previewFile(t, input, append(rng, "-o", "json")...)
	if code != 0 || stderr != "" {
		t.Fatalf("exit %d, stderr %s", code, stderr)
	}
	got := decodePreview(t, stdout)
	if len(got.Jobs) != 1 {
		t.Fatalf("jobs: %+v", got.Jobs)
	}
	j := got.Jobs[0]
	if diff := cmp.Diff([]string{"2027-12-24T06:00:00Z", "2027-12-26T06:00:00Z"}, j.Runs); diff != "" {
		t.Errorf("runs (-want +got):\n%s", diff)
	}
	if diff := cmp.Diff([]struct{ Time, Reason string }{{"2027-12-25T06:00:00Z", "Christmas Day (Calendar holidays)"}}, j.Skipped); diff != "" {
		t.Errorf("skipped (-want +got):\n%s", diff)
	}
	if len(j.Notes) != 0 {
		t.Errorf("notes: %q", j.Notes)
	}

	stdout, _, _ = previewFile(t, input, rng...)
	if want := "  Sat 2027-12-25 06:00 UTC  skipped — Christmas Day (Calendar holidays)\n"; !strings.Contains(stdout, want) {
		t.Errorf("the text does not list the skipped slot %q:\n%s", want, stdout)
	}
}

// TestSkippedWindowIsShownWithItsReason: the part of a Schedule's window that a calendar
// closes leaves the bounds at the baseline and is listed, by name, after the segments.
func TestSkippedWindowIsShownWithItsReason(t *testing.T) {
	input := holidaysYAML + "---\n" + autoscalerYAML + `---
apiVersion: autoscaling.almanac.dev/v1alpha1
kind: Schedule
metadata: {name: peak}
spec:
  scaleTargetRef: {name: web}
  minReplicas: 3
  type: Daily
  startTime: "20:00"
  endTime: "04:00"
  calendars: {skip: [{kind: Calendar, name: holidays}]}
`
	rng := []string{"--from", "2027-12-24T00:00:00Z", "--to", "2027-12-26T12:00:00Z"}
	stdout, stderr, code := previewFile(t, input, append(rng, "-o", "json")...)
	if code != 0 || stderr != "" {
		t.Fatalf("exit %d, stderr %s", code, stderr)
	}
	got := decodePreview(t, stdout)
	a := got.Autoscalers[0]
	// The window of the 24th runs into Christmas Day at midnight; that of the 25th is all in it.
	want := []struct{ Schedule, Start, End, Reason string }{
		{"peak", "2027-12-25T00:00:00Z", "2027-12-25T04:00:00Z", "Christmas Day (Calendar holidays)"},
		{"peak", "2027-12-25T20:00:00Z", "2027-12-26T00:00:00Z", "Christmas Day (Calendar holidays)"},
	}
	if diff := cmp.Diff(want, a.Skipped); diff != "" {
		t.Errorf("skipped (-want +got):\n%s", diff)
	}
	for _, s := range a.Segments {
		if s.Start >= "2027-12-25T00:00:00Z" && s.Start < "2027-12-26T00:00:00Z" && len(s.Schedules) > 0 {
			t.Errorf("a segment on Christmas Day has Schedules active: %+v", s)
		}
	}
	stdout, _, _ = previewFile(t, input, rng...)
	if want := "  skipped: Schedule peak 2027-12-25 00:00 to 04:00 UTC — Christmas Day (Calendar holidays)\n"; !strings.Contains(stdout, want) {
		t.Errorf("the text does not list %q:\n%s", want, stdout)
	}
}

// TestCalendarNotInTheInput: a calendar that a Schedule or ScheduledJob names and that the
// input does not hold (a Calendar of another namespace is not it) is said, per object, with
// the fix; the preview still shows what the controller does: it holds the object (no window
// opens, no run starts).
func TestCalendarNotInTheInput(t *testing.T) {
	input := strings.Replace(holidaysYAML, "metadata: {name: holidays}", "metadata: {name: holidays, namespace: other}", 1) + "---\n" + autoscalerYAML + `---
apiVersion: autoscaling.almanac.dev/v1alpha1
kind: Schedule
metadata: {name: peak}
spec: {scaleTargetRef: {name: web}, minReplicas: 3, type: Daily, startTime: "09:00", endTime: "17:00", calendars: {skip: [{name: holidays}]}}
---
apiVersion: batch.almanac.dev/v1alpha1
kind: ScheduledJob
metadata: {name: export}
spec:
  schedule: "0 6 * * *"
  calendars: {only: [{kind: ClusterCalendar, name: trading-days}]}` + jobTemplateYAML + "\n"
	rng := []string{"--from", "2027-12-01T00:00:00Z", "--for", "2d"}
	scheduleNote := `Schedule default/peak: spec.calendars.skip[0]: Calendar holidays (namespace "default") is not in the input: ` +
		`the controller holds this Schedule (no window opens) until it exists; add the file with the calendar (-f), or correct the name or kind (Calendar or ClusterCalendar)`
	jobNote := `ScheduledJob default/export: spec.calendars.only[0]: ClusterCalendar trading-days is not in the input: ` +
		`the controller holds this ScheduledJob (no run starts) until it exists; add the file with the calendar (-f), or correct the name or kind (Calendar or ClusterCalendar)`

	stdout, stderr, code := previewFile(t, input, rng...)
	if code != 0 {
		t.Fatalf("exit %d: %s", code, stderr)
	}
	for _, note := range []string{scheduleNote, jobNote} {
		if !strings.Contains(stdout, "  note: "+note+"\n") {
			t.Errorf("the text does not say %q:\n%s", note, stdout)
		}
		if !strings.Contains(stderr, "Warning: "+note+"\n") {
			t.Errorf("standard error does not say %q:\n%s", note, stderr)
		}
	}
	if !strings.Contains(stdout, "skipped: Schedule peak 2027-12-01 09:00 to 17:00 UTC — Calendar holidays does not exist\n") {
		t.Errorf("the held window is not listed:\n%s", stdout)
	}

	stdout, _, _ = previewFile(t, input, append(rng, "-o", "json")...)
	got := decodePreview(t, stdout)
	a, j := got.Autoscalers[0], got.Jobs[0]
	if diff := cmp.Diff([]string{scheduleNote}, a.Notes); diff != "" {
		t.Errorf("autoscaler notes (-want +got):\n%s", diff)
	}
	if len(a.Segments) != 1 || a.Segments[0].MinReplicas != 2 || len(a.Segments[0].Schedules) != 0 {
		t.Errorf("the held Schedule changed the bounds: %+v", a.Segments)
	}
	if len(a.Skipped) != 2 {
		t.Errorf("skipped windows: %+v, want the 2 windows of the range", a.Skipped)
	}
	if diff := cmp.Diff([]string{jobNote}, j.Notes); diff != "" {
		t.Errorf("job notes (-want +got):\n%s", diff)
	}
	if len(j.Runs) != 0 || len(j.Skipped) != 2 || j.Skipped[0].Reason != "outside ClusterCalendar trading-days (which does not exist)" {
		t.Errorf("the held ScheduledJob: runs %q, skipped %+v; want no run and 2 skipped slots", j.Runs, j.Skipped)
	}
}

// TestRefusedCalendar: a calendar that admission would refuse (a date that does not exist, a
// field the schema does not have) is reported with its file and field, the exit status says
// an object was refused, and it is missing for the objects that name it.
func TestRefusedCalendar(t *testing.T) {
	for _, tt := range []struct{ name, calendar, want string }{{
		name:     "a date that does not exist",
		calendar: strings.Replace(holidaysYAML, `"12-25"`, `"2027-02-30"`, 1),
		want:     "  error: spec.days[0].date: ",
	}, {
		name:     "an unknown field",
		calendar: strings.Replace(holidaysYAML, "spec:\n", "spec:\n  timezone: UTC\n", 1),
		want:     `spec.timezone: Forbidden: unknown field "timezone"`,
	}, {
		name:     "an empty timeZone",
		calendar: strings.Replace(holidaysYAML, "spec:\n", "spec:\n  timeZone: \"\"\n", 1),
		want:     "  error: spec.timeZone: ",
	}} {
		t.Run(tt.name, func(t *testing.T) {
			input := tt.calendar + "---\n" + autoscalerYAML + `---
apiVersion: autoscaling.almanac.dev/v1alpha1
kind: Schedule
metadata: {name: peak}
spec: {scaleTargetRef: {name: web}, minReplicas: 3, type: Daily, startTime: "09:00", endTime: "17:00", calendars: {skip: [{name: holidays}]}}
`
			stdout, stderr, code := previewFile(t, input, "--from", "2027-12-01T00:00:00Z", "--for", "1d")
			if code != ExitRefused {
				t.Errorf("exit %d, want %d", code, ExitRefused)
			}
			if !strings.Contains(stderr, "input.yaml#0: Calendar default/holidays: rejected\n") || !strings.Contains(stderr, tt.want) {
				t.Errorf("standard error does not refuse the calendar with %q:\n%s", tt.want, stderr)
			}
			if !strings.Contains(stdout, `Calendar holidays (namespace "default") is in the input but refused (see above)`) {
				t.Errorf("the Schedule's note does not say the calendar was refused:\n%s", stdout)
			}
		})
	}
}

// TestCalendarsWithinTheBudget: the largest calendar there may be (1000 days) closing the
// windows of a Schedule that opens every hour and the slots of ScheduledJobs that run every
// minute, over the longest range that preview takes (400 days): the preview is drawn within
// its budget, or stops with a message that says why and what to do.
func TestCalendarsWithinTheBudget(t *testing.T) {
	if testing.Short() {
		t.Skip("a large preview")
	}
	var b strings.Builder
	b.WriteString("apiVersion: almanac.dev/v1alpha1\nkind: ClusterCalendar\nmetadata: {name: many}\nspec:\n  timeZone: Europe/Berlin\n  days:\n")
	first := time.Date(2027, 1, 1, 0, 0, 0, 0, time.UTC)
	for i := range 1000 {
		fmt.Fprintf(&b, "  - {date: %q, name: day %d}\n", first.AddDate(0, 0, 2*i).Format(time.DateOnly), i)
	}
	b.WriteString("---\n" + autoscalerYAML + `---
apiVersion: autoscaling.almanac.dev/v1alpha1
kind: Schedule
metadata: {name: hourly}
spec: {scaleTargetRef: {name: web}, minReplicas: 3, type: Cron, schedule: "0 * * * *", duration: 30m, timeZone: Europe/Berlin,
  calendars: {skip: [{kind: ClusterCalendar, name: many}]}}
`)
	job := func(name string) string {
		return `---
apiVersion: batch.almanac.dev/v1alpha1
kind: ScheduledJob
metadata: {name: ` + name + `}
spec:
  schedule: "* * * * *"
  calendars: {skip: [{kind: ClusterCalendar, name: many}]}` + jobTemplateYAML + "\n"
	}
	rng := []string{"--from", "2027-01-01T00:00:00Z", "--for", "400d", "-o", "json"}

	// One ScheduledJob: within the budget.
	stdout, stderr, code := previewFile(t, b.String()+job("minutely"), rng...)
	if code != 0 {
		t.Fatalf("exit %d: %s", code, stderr)
	}
	got := decodePreview(t, stdout)
	j := got.Jobs[0]
	if n := len(j.Runs) + len(j.Skipped); n != 400*24*60 {
		t.Errorf("%d runs and %d skipped slots, want %d in all", len(j.Runs), len(j.Skipped), 400*24*60)
	}
	if len(j.Skipped) == 0 || j.Skipped[0].Reason != "day 0 (ClusterCalendar many)" {
		t.Errorf("the first skipped slot: %+v", j.Skipped[:min(1, len(j.Skipped))])
	}
	if len(got.Autoscalers[0].Skipped) == 0 {
		t.Error("no skipped window")
	}

	// Three: more runs than a preview draws; it stops and says so.
	_, stderr, code = previewFile(t, b.String()+job("a")+job("b")+job("c"), rng...)
	if code != 2 || !strings.Contains(stderr, "the preview stopped: the work budget is spent") || !strings.Contains(stderr, "preview a shorter range (--for, --to)") {
		t.Errorf("exit %d, want 2 and the budget's message: %s", code, stderr)
	}
}

// TestBuildReadsTheCalendarsOfItsInput: Build, which other commands and tests call with
// documents as read, takes the calendars from them too; one that does not compile is a
// warning, and missing for the objects that name it.
func TestBuildReadsTheCalendarsOfItsInput(t *testing.T) {
	input := holidaysYAML + `---
apiVersion: almanac.dev/v1alpha1
kind: ClusterCalendar
metadata: {name: broken}
spec: {days: [{date: "13-01"}]}
---
apiVersion: batch.almanac.dev/v1alpha1
kind: ScheduledJob
metadata: {name: export}
spec:
  schedule: "0 6 * * *"
  calendars: {skip: [{name: holidays}]}` + jobTemplateYAML + "\n"
	docs, err := manifest.Read([]string{"-"}, false, strings.NewReader(input))
	if err != nil {
		t.Fatal(err)
	}
	report, warnings, err := Build(docs, Range{From: time.Date(2027, 12, 25, 0, 0, 0, 0, time.UTC), To: time.Date(2027, 12, 26, 0, 0, 0, 0, time.UTC)})
	if err != nil {
		t.Fatal(err)
	}
	if len(warnings) != 1 || !strings.HasPrefix(warnings[0], "ClusterCalendar broken is not used: spec.days[0].date: ") {
		t.Errorf("warnings %q, want one for the broken ClusterCalendar", warnings)
	}
	if j := report.Jobs[0]; len(j.Runs) != 0 || len(j.Skipped) != 1 || j.Skipped[0].Reason != "Christmas Day (Calendar holidays)" {
		t.Errorf("runs %v, skipped %+v; want the slot of Christmas Day skipped", j.Runs, j.Skipped)
	}
}
