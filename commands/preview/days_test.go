package preview

import (
	"bytes"
	"encoding/json"
	"strings"
	"testing"
	"time"

	"github.com/google/go-cmp/cmp"
)

// weekdaysInput is an autoscaler with a weekday-only Schedule, and a one-shot ScheduledJob to
// the second.
const weekdaysInput = `
apiVersion: autoscaling.almanac.dev/v1alpha1
kind: ScheduledPodAutoscaler
metadata: {name: web}
spec:
  horizontalPodAutoscalerSpec:
    scaleTargetRef: {apiVersion: apps/v1, kind: Deployment, name: web}
    minReplicas: 2
    maxReplicas: 4
---
apiVersion: autoscaling.almanac.dev/v1alpha1
kind: Schedule
metadata: {name: office-hours}
spec:
  scaleTargetRef: {name: web}
  minReplicas: 6
  type: Daily
  startTime: "09:00"
  endTime: "18:00"
  daysOfWeek: [fri, Monday, tue, wed, thu]
  timeZone: Europe/Berlin
---
apiVersion: batch.almanac.dev/v1alpha1
kind: ScheduledJob
metadata: {name: at-second}
spec:
  at: "2027-04-02T13:53:55"
  jobTemplate: {spec: {template: {spec: {restartPolicy: Never, containers: [{name: c, image: busybox}]}}}}
`

// TestPreviewDaysOfWeek previews a weekday-only Daily Schedule from Thursday to Tuesday:
// open on Thursday, Friday and Monday, not on the weekend; the text names the days; a one-shot
// to the second runs at that second.
func TestPreviewDaysOfWeek(t *testing.T) {
	opts := options{files: []string{"-"}, from: "2027-04-01T00:00:00Z", to: "2027-04-06T00:00:00Z", output: "json"}
	var stdout, stderr bytes.Buffer
	if err := run(strings.NewReader(weekdaysInput), &stdout, &stderr, opts, time.Time{}); err != nil {
		t.Fatal(err)
	}
	if stderr.Len() > 0 {
		t.Errorf("warnings: %s", stderr.String())
	}
	var got struct {
		Autoscalers []struct {
			Segments []jsonSegment `json:"segments"`
		} `json:"autoscalers"`
		Jobs []jsonJob `json:"jobs"`
	}
	if err := json.Unmarshal(stdout.Bytes(), &got); err != nil {
		t.Fatal(err)
	}
	open := func(start, end string) []jsonSegment {
		return []jsonSegment{{Start: start, End: end, MinReplicas: 6, MaxReplicas: 6, Schedules: []string{"office-hours"}}}
	}
	closed := func(start, end string) []jsonSegment {
		return []jsonSegment{{Start: start, End: end, MinReplicas: 2, MaxReplicas: 4, Schedules: []string{}}}
	}
	var want []jsonSegment
	for _, part := range [][]jsonSegment{
		closed("2027-04-01T00:00:00Z", "2027-04-01T07:00:00Z"),
		open("2027-04-01T07:00:00Z", "2027-04-01T16:00:00Z"), // Thursday 09:00-18:00 CEST
		closed("2027-04-01T16:00:00Z", "2027-04-02T07:00:00Z"),
		open("2027-04-02T07:00:00Z", "2027-04-02T16:00:00Z"),   // Friday
		closed("2027-04-02T16:00:00Z", "2027-04-05T07:00:00Z"), // the weekend
		open("2027-04-05T07:00:00Z", "2027-04-05T16:00:00Z"),   // Monday
		closed("2027-04-05T16:00:00Z", "2027-04-06T00:00:00Z"),
	} {
		want = append(want, part...)
	}
	if len(got.Autoscalers) != 1 {
		t.Fatalf("%d autoscalers, want 1", len(got.Autoscalers))
	}
	if diff := cmp.Diff(want, got.Autoscalers[0].Segments); diff != "" {
		t.Errorf("segments (-want +got):\n%s", diff)
	}
	if diff := cmp.Diff([]jsonJob{{Namespace: "default", Name: "at-second", Runs: []string{"2027-04-02T13:53:55Z"}}}, got.Jobs); diff != "" {
		t.Errorf("jobs (-want +got):\n%s", diff)
	}

	opts.output = "text"
	stdout.Reset()
	if err := run(strings.NewReader(weekdaysInput), &stdout, &stderr, opts, time.Time{}); err != nil {
		t.Fatal(err)
	}
	for _, want := range []string{
		"office-hours  Daily 09:00-18:00 on Monday, Tuesday, Wednesday, Thursday, Friday  Europe/Berlin  6    baseline",
		"ScheduledJob default/at-second: at 2027-04-02T13:53:55 in UTC",
	} {
		if !strings.Contains(stdout.String(), want) {
			t.Errorf("the text preview does not contain %q:\n%s", want, stdout.String())
		}
	}
}
