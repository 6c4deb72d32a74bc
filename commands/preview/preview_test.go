package preview

import (
	"bytes"
	"encoding/json"
	"errors"
	"flag"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/google/go-cmp/cmp"

	"github.com/almanac-dev/almanac/commands/manifest"
)

var update = flag.Bool("update", false, "rewrite the golden files in testdata/ with the current output")

// goldenCases are a week (and a bit) across daylight-saving changes in two zones each, and
// December 2027 of the calendar examples: the holidays and the year-end freeze that
// examples/calendar.yaml closes, shown by name.
var goldenCases = []struct {
	name     string
	files    []string // the input; testdata/<name>.yaml when empty
	from, to string
	length   string
}{
	{name: "fall-2027", from: "2027-10-30T00:00:00Z", to: "2027-11-08T00:00:00Z"},
	{name: "spring-2027-us", from: "2027-03-10T00:00:00Z", length: "7d"},
	{name: "calendars-december-2027", files: calendarExamples, from: "2027-12-01T00:00:00Z", to: "2028-01-01T00:00:00Z"},
}

// calendarExamples are the examples of spec.calendars: the holidays Calendar, a Schedule of the
// nginx autoscaler and a ScheduledJob that skip it.
var calendarExamples = []string{
	filepath.Join("..", "..", "examples", "calendar.yaml"),
	filepath.Join("..", "..", "examples", "scheduledpodautoscaler.yaml"),
	filepath.Join("..", "..", "examples", "schedule-calendars.yaml"),
	filepath.Join("..", "..", "examples", "scheduledjob-calendars.yaml"),
}

// TestGolden compares the text, JSON and SVG previews with testdata/*.golden. Regenerate them
// with `go test ./commands/preview -update` and review the diff (open the SVGs in a
// browser).
func TestGolden(t *testing.T) {
	for _, tc := range goldenCases {
		for _, format := range []string{"text", "json", "svg"} {
			t.Run(tc.name+"/"+format, func(t *testing.T) {
				var stdout, stderr bytes.Buffer
				files := tc.files
				if len(files) == 0 {
					files = []string{filepath.Join("testdata", tc.name+".yaml")}
				}
				opts := options{files: files, from: tc.from, to: tc.to, duration: tc.length, output: format}
				if err := run(nil, &stdout, &stderr, opts, time.Time{}); err != nil {
					t.Fatal(err)
				}
				if stderr.Len() > 0 {
					t.Errorf("warnings: %s", stderr.String())
				}
				ext := map[string]string{"text": "txt", "json": "json", "svg": "svg"}[format]
				golden := filepath.Join("testdata", tc.name+"."+ext+".golden")
				if *update {
					if err := os.WriteFile(golden, stdout.Bytes(), 0o600); err != nil {
						t.Fatal(err)
					}
				}
				want, err := os.ReadFile(golden)
				if err != nil {
					t.Fatalf("%v (run with -update to create it)", err)
				}
				if diff := cmp.Diff(string(want), stdout.String()); diff != "" {
					t.Errorf("%s (-want +got):\n%s", golden, diff)
				}
			})
		}
	}
}

// TestJSONShape checks the documented JSON contract on the golden input independently of the
// golden file: segments contiguous over [from, to), in UTC, schedules sorted and never null,
// adjacent segments differing, and the DST facts the input describes.
func TestJSONShape(t *testing.T) {
	var stdout bytes.Buffer
	opts := options{files: []string{"testdata/fall-2027.yaml"}, from: "2027-10-30T00:00:00Z", to: "2027-11-08T00:00:00Z", output: "json"}
	if err := run(nil, &stdout, &bytes.Buffer{}, opts, time.Time{}); err != nil {
		t.Fatal(err)
	}
	var got struct {
		Autoscalers []struct {
			Namespace, Name string
			Segments        []struct {
				Start, End               string
				MinReplicas, MaxReplicas int32
				Schedules                []string
			}
		}
		Jobs []struct {
			Namespace, Name string
			Runs            []string
		}
	}
	raw := stdout.String()
	dec := json.NewDecoder(&stdout)
	dec.DisallowUnknownFields()
	if err := dec.Decode(&got); err != nil {
		t.Fatal(err)
	}
	if !strings.Contains(raw, `"schedules": []`) {
		t.Error(`a segment without active Schedules should have "schedules": []`)
	}
	for _, a := range got.Autoscalers {
		prevEnd := opts.from
		for i, s := range a.Segments {
			if s.Start != prevEnd {
				t.Errorf("%s segment %d starts at %s, want %s (contiguous)", a.Name, i, s.Start, prevEnd)
			}
			if !strings.HasSuffix(s.Start, "Z") || !strings.HasSuffix(s.End, "Z") {
				t.Errorf("%s segment %d: times not in UTC: %s %s", a.Name, i, s.Start, s.End)
			}
			if s.Schedules == nil {
				t.Errorf("%s segment %d: schedules is null", a.Name, i)
			}
			if i > 0 {
				p := a.Segments[i-1]
				if p.MinReplicas == s.MinReplicas && p.MaxReplicas == s.MaxReplicas && cmp.Equal(p.Schedules, s.Schedules) {
					t.Errorf("%s segments %d and %d are equal and should have been merged", a.Name, i-1, i)
				}
			}
			if s.MinReplicas > s.MaxReplicas {
				t.Errorf("%s segment %d: min %d > max %d", a.Name, i, s.MinReplicas, s.MaxReplicas)
			}
			prevEnd = s.End
		}
		if prevEnd != opts.to {
			t.Errorf("%s: the last segment ends at %s, want %s", a.Name, prevEnd, opts.to)
		}
	}
	if len(got.Autoscalers) != 2 || got.Autoscalers[0].Name != "search" || got.Autoscalers[1].Name != "shop" {
		t.Fatalf("autoscalers %+v, want search and shop, sorted", got.Autoscalers)
	}
	shop := got.Autoscalers[1]
	find := func(start string) (int32, int32, []string) {
		for _, s := range shop.Segments {
			if s.Start == start {
				return s.MinReplicas, s.MaxReplicas, s.Schedules
			}
		}
		t.Fatalf("no segment of shop starts at %s", start)
		return 0, 0, nil
	}
	// 7 November: the night batch opens at the first 01:30 (EDT) and closes at 02:30 EST.
	if minR, maxR, active := find("2027-11-07T05:30:00Z"); minR != 3 || maxR != 30 || !cmp.Equal(active, []string{"us-night-batch", "weekend-sale"}) {
		t.Errorf("2027-11-07T05:30Z: %d-%d %v", minR, maxR, active)
	}
	if _, _, active := find("2027-11-07T07:30:00Z"); !cmp.Equal(active, []string{"eu-office", "weekend-sale"}) {
		t.Errorf("2027-11-07T07:30Z (02:30 EST): active %v, want the night batch closed", active)
	}
	// 1 November 09:00 Berlin (CET): month-report and eu-office overlap: largest min and max.
	if minR, maxR, _ := find("2027-11-01T08:00:00Z"); minR != 8 || maxR != 16 {
		t.Errorf("2027-11-01T08:00Z: %d-%d, want 8-16", minR, maxR)
	}
	runs := map[string][]string{}
	for _, j := range got.Jobs {
		runs[j.Name] = j.Runs
	}
	if !cmp.Equal(runs["sunday-cleanup"], []string{"2027-10-31T00:30:00Z", "2027-11-07T01:30:00Z"}) {
		t.Errorf("sunday-cleanup runs %v: 02:30 on 31 October is repeated and runs once, at its first occurrence", runs["sunday-cleanup"])
	}
	if r := runs["nightly-export"]; len(r) != 9 || r[8] != "2027-11-07T05:30:00Z" {
		t.Errorf("nightly-export runs %v: one a day, 7 November at 05:30Z", r)
	}
	if !cmp.Equal(runs["launch-warmup"], []string{"2027-11-03T13:30:00Z"}) {
		t.Errorf("launch-warmup runs %v", runs["launch-warmup"])
	}
}

func TestWarningsAndErrors(t *testing.T) {
	input := `apiVersion: autoscaling.almanac.dev/v1alpha1
kind: ScheduledPodAutoscaler
metadata: {name: web}
spec:
  horizontalPodAutoscalerSpec: {scaleTargetRef: {apiVersion: apps/v1, kind: Deployment, name: web}, maxReplicas: 4}
---
apiVersion: autoscaling.almanac.dev/v1alpha1
kind: Schedule
metadata: {name: broken}
spec: {scaleTargetRef: {name: web}, minReplicas: 9, type: Daily, startTime: "09:00", endTime: "17:00", timeZone: Mars/Olympus}
---
apiVersion: autoscaling.almanac.dev/v1alpha1
kind: Schedule
metadata: {name: good}
spec: {scaleTargetRef: {name: web}, minReplicas: 3, type: Daily, startTime: "09:00", endTime: "17:00"}
---
apiVersion: autoscaling.almanac.dev/v1alpha1
kind: Schedule
metadata: {name: orphan, namespace: other}
spec: {scaleTargetRef: {name: web}, minReplicas: 3, type: Daily, startTime: "09:00", endTime: "17:00"}
---
apiVersion: v1
kind: ConfigMap
metadata: {name: ignored}
`
	var stdout, stderr bytes.Buffer
	opts := options{files: []string{"-"}, from: "2027-01-04T00:00:00Z", duration: "1d", output: "json"}
	// The Schedule in an unknown zone is refused by admission, as almanac validate says, and
	// not previewed; the others are, and the exit status says that something was refused.
	err := run(strings.NewReader(input), &stdout, &stderr, opts, time.Time{})
	var exit *manifest.ExitError
	if !errors.As(err, &exit) || exit.ExitCode() != ExitRefused {
		t.Fatalf("run = %v, want exit status %d", err, ExitRefused)
	}
	for _, want := range []string{
		"-#1: Schedule default/broken: rejected\n  error: spec.timeZone: Invalid value: \"Mars/Olympus\": ",
		"1 object refused by admission and not previewed",
		`Warning: Schedule other/orphan: its ScheduledPodAutoscaler "web" is not in the input`,
	} {
		if !strings.Contains(stderr.String(), want) {
			t.Errorf("stderr %q does not contain %q", stderr.String(), want)
		}
	}
	want := `{
  "autoscalers": [
    {
      "namespace": "default",
      "name": "web",
      "segments": [
        {
          "start": "2027-01-04T00:00:00Z",
          "end": "2027-01-04T09:00:00Z",
          "minReplicas": 1,
          "maxReplicas": 4,
          "schedules": []
        },
        {
          "start": "2027-01-04T09:00:00Z",
          "end": "2027-01-04T17:00:00Z",
          "minReplicas": 3,
          "maxReplicas": 4,
          "schedules": [
            "good"
          ]
        },
        {
          "start": "2027-01-04T17:00:00Z",
          "end": "2027-01-05T00:00:00Z",
          "minReplicas": 1,
          "maxReplicas": 4,
          "schedules": []
        }
      ]
    }
  ],
  "jobs": []
}
`
	if diff := cmp.Diff(want, stdout.String()); diff != "" {
		t.Errorf("(-want +got):\n%s", diff)
	}

	for _, tt := range []struct {
		opts options
		want string
	}{
		{options{output: "text"}, "no input"},
		{options{files: []string{"-"}, output: "yaml"}, `-o "yaml" is not an output format`},
		{options{files: []string{"-"}, output: "text", from: "tomorrow"}, `--from "tomorrow" is not an RFC 3339 time`},
		{options{files: []string{"-"}, output: "text", to: "2027-01-01T00:00:00Z", duration: "1d"}, "--to and --for both set"},
		{options{files: []string{"-"}, output: "text", duration: "-3h"}, `--for "-3h" is not a positive length`},
		{options{files: []string{"-"}, output: "text", from: "2027-01-02T00:00:00Z", to: "2027-01-01T00:00:00Z"}, "the range is empty"},
	} {
		err := run(strings.NewReader(""), &bytes.Buffer{}, &bytes.Buffer{}, tt.opts, time.Now())
		if err == nil || !strings.Contains(err.Error(), tt.want) {
			t.Errorf("%+v: error %v, want one containing %q", tt.opts, err, tt.want)
		}
	}
}

func TestSuspendedAutoscalerIsPreviewedAtItsBaseline(t *testing.T) {
	input := `apiVersion: autoscaling.almanac.dev/v1alpha1
kind: ScheduledPodAutoscaler
metadata: {name: web}
spec:
  suspend: true
  horizontalPodAutoscalerSpec: {scaleTargetRef: {apiVersion: apps/v1, kind: Deployment, name: web}, minReplicas: 2, maxReplicas: 4}
---
apiVersion: autoscaling.almanac.dev/v1alpha1
kind: Schedule
metadata: {name: always}
spec: {scaleTargetRef: {name: web}, minReplicas: 9, maxReplicas: 9, type: Daily, startTime: "00:00", endTime: "23:59"}
`
	var stdout bytes.Buffer
	opts := options{files: []string{"-"}, from: "2027-01-04T00:00:00Z", duration: "48h", output: "json"}
	if err := run(strings.NewReader(input), &stdout, &bytes.Buffer{}, opts, time.Time{}); err != nil {
		t.Fatal(err)
	}
	if got := strings.Count(stdout.String(), `"start"`); got != 1 || !strings.Contains(stdout.String(), `"minReplicas": 2`) {
		t.Errorf("want one baseline segment, got:\n%s", stdout.String())
	}
}

// TestInputsAndDefaultRange: -f reads files and directories (nested ones only with -R) and
// standard input; without --from the range starts now (whole seconds, UTC) and without --to
// or --for it lasts 7 days.
func TestInputsAndDefaultRange(t *testing.T) {
	dir := t.TempDir()
	spa := `apiVersion: autoscaling.almanac.dev/v1alpha1
kind: ScheduledPodAutoscaler
metadata: {name: web, namespace: shop}
spec:
  horizontalPodAutoscalerSpec: {scaleTargetRef: {apiVersion: apps/v1, kind: Deployment, name: web}, minReplicas: 2, maxReplicas: 4}
`
	schedule := `apiVersion: autoscaling.almanac.dev/v1alpha1
kind: Schedule
metadata: {name: office, namespace: shop}
spec: {scaleTargetRef: {name: web}, minReplicas: 3, type: Daily, startTime: "09:00", endTime: "17:00", timeZone: Europe/Berlin}
`
	if err := os.MkdirAll(filepath.Join(dir, "nested"), 0o750); err != nil {
		t.Fatal(err)
	}
	if err := os.WriteFile(filepath.Join(dir, "spa.yaml"), []byte(spa), 0o600); err != nil {
		t.Fatal(err)
	}
	if err := os.WriteFile(filepath.Join(dir, "nested", "schedule.yaml"), []byte(schedule), 0o600); err != nil {
		t.Fatal(err)
	}
	now := time.Date(2027, 1, 4, 6, 30, 15, 500, time.FixedZone("UTC+2", 2*3600)) // Monday 04:30:15Z
	preview := func(opts options, stdin string) (segments []map[string]any, stderr string) {
		t.Helper()
		var out, errOut bytes.Buffer
		opts.output = "json"
		if err := run(strings.NewReader(stdin), &out, &errOut, opts, now); err != nil {
			t.Fatal(err)
		}
		var got struct {
			Autoscalers []struct {
				Segments []map[string]any
			}
		}
		if err := json.Unmarshal(out.Bytes(), &got); err != nil {
			t.Fatal(err)
		}
		if len(got.Autoscalers) != 1 {
			t.Fatalf("%d autoscalers, want 1:\n%s", len(got.Autoscalers), out.String())
		}
		return got.Autoscalers[0].Segments, errOut.String()
	}

	// Without -R the nested Schedule is not read: the baseline over the default range.
	segs, _ := preview(options{files: []string{dir}}, "")
	if len(segs) != 1 || segs[0]["start"] != "2027-01-04T04:30:15Z" || segs[0]["end"] != "2027-01-11T04:30:15Z" {
		t.Errorf("without -R: %v, want one baseline segment over [now, now+7d) in UTC", segs)
	}
	// With -R it is: 7 daily windows, 08:00Z–16:00Z (CET), and the baseline around them.
	segs, _ = preview(options{files: []string{dir}, recursive: true}, "")
	if len(segs) != 15 || segs[1]["start"] != "2027-01-04T08:00:00Z" || segs[1]["end"] != "2027-01-04T16:00:00Z" || segs[14]["end"] != "2027-01-11T04:30:15Z" {
		t.Errorf("with -R: %v, want 15 segments, the first window 08:00Z-16:00Z", segs)
	}
	// The autoscaler from a file and its Schedule from standard input.
	segs, stderr := preview(options{files: []string{filepath.Join(dir, "spa.yaml"), "-"}, from: "2027-01-04T00:00:00Z", duration: "24h"}, schedule)
	if len(segs) != 3 || segs[1]["start"] != "2027-01-04T08:00:00Z" || stderr != "" {
		t.Errorf("file and stdin: %v (stderr %q), want the window from the Schedule read on stdin", segs, stderr)
	}
}
