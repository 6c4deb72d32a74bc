package preview

import (
	"bytes"
	"encoding/json"
	"os"
	"path/filepath"
	"regexp"
	"strings"
	"testing"
	"time"

	"github.com/google/go-cmp/cmp"
)

// attachedExample is the example of autoscalers attached to what a team already runs: the
// HorizontalPodAutoscaler api (2–6, 4–12 in Berlin business hours) and the Deployment
// reports (0 replicas, 1 from 07:00 to 19:00 Berlin time on weekdays).
var attachedExample = filepath.Join("..", "..", "examples", "scheduledpodautoscaler-attached.yaml")

// attachedNow is the instant at which admission runs in these tests: before every range.
var attachedNow = time.Date(2027, time.March, 24, 12, 0, 0, 0, time.UTC)

// previewAttached previews the attached example over [from, from+length) in format.
func previewAttached(t *testing.T, format, from, length string) string {
	t.Helper()
	var stdout, stderr bytes.Buffer
	opts := options{files: []string{attachedExample}, from: from, duration: length, output: format}
	if err := run(nil, &stdout, &stderr, opts, attachedNow); err != nil {
		t.Fatal(err)
	}
	if stderr.Len() > 0 {
		t.Errorf("stderr: %s", stderr.String())
	}
	return stdout.String()
}

// jsonAttachedReport is `almanac preview -o json` with the fields of attached autoscalers, to
// decode strictly: no field that the documentation does not name.
type jsonAttachedReport struct {
	Autoscalers []struct {
		Namespace, Name string
		Target          *struct {
			APIVersion  string `json:"apiVersion"`
			Kind, Name  string
			Mode        string
			Fields      []string
			MaxReplicas *int32 `json:"maxReplicas"`
		}
		Segments []struct {
			Start, End               string
			MinReplicas, MaxReplicas int32
			Schedules                []string
			Target                   map[string]int32
		}
	}
	Jobs []json.RawMessage
}

func decodeAttached(t *testing.T, out string) jsonAttachedReport {
	t.Helper()
	var got jsonAttachedReport
	dec := json.NewDecoder(strings.NewReader(out))
	dec.DisallowUnknownFields()
	if err := dec.Decode(&got); err != nil {
		t.Fatalf("%v\n%s", err, out)
	}
	return got
}

// window is a stretch of a segment list: [start, end) with what the target is given.
type window struct {
	start, end string
	target     map[string]int32
	schedules  []string
}

// TestAttachedExampleAcrossSpringForward previews the attached example over the week from
// Thursday 25 March 2027, across Berlin's spring-forward on Sunday 28 March (02:00 CET →
// 03:00 CEST): the windows are wall-clock times in Europe/Berlin, so they open an hour
// earlier in UTC from Monday 29 March; none opens on the weekend. api's HorizontalPodAutoscaler
// gets minReplicas 4 and maxReplicas 12 from 08:00 to 18:00 and its baseline 2 and 6
// otherwise; reports gets replicas 0 → 1 at 07:00 → 0 at 19:00, and no maximum.
func TestAttachedExampleAcrossSpringForward(t *testing.T) {
	const from, length, to = "2027-03-25T00:00:00Z", "7d", "2027-04-01T00:00:00Z"
	got := decodeAttached(t, previewAttached(t, "json", from, length))
	if len(got.Autoscalers) != 2 || got.Autoscalers[0].Name != "api" || got.Autoscalers[1].Name != "reports" {
		t.Fatalf("autoscalers %+v, want api and reports", got.Autoscalers)
	}

	// The days of the week and the UTC hours of the Berlin windows: CET (UTC+1) on
	// Thursday and Friday, CEST (UTC+2) from Monday.
	days := []struct {
		date   string
		offset int
	}{{"2027-03-25", 1}, {"2027-03-26", 1}, {"2027-03-29", 2}, {"2027-03-30", 2}, {"2027-03-31", 2}}
	at := func(date string, berlinHour, offset int) string {
		d, err := time.Parse("2006-01-02", date)
		if err != nil {
			t.Fatal(err)
		}
		return d.Add(time.Duration(berlinHour-offset) * time.Hour).Format(time.RFC3339)
	}
	expect := func(openHour, closeHour int, open, closed map[string]int32, schedule string) []window {
		var out []window
		prev := from
		for _, d := range days {
			start, end := at(d.date, openHour, d.offset), at(d.date, closeHour, d.offset)
			out = append(out, window{prev, start, closed, []string{}}, window{start, end, open, []string{schedule}})
			prev = end
		}
		return append(out, window{prev, to, closed, []string{}})
	}

	for _, tt := range []struct {
		name       string
		apiVersion string
		kind, mode string
		fields     []string
		want       []window
	}{{
		name: "api", apiVersion: "autoscaling/v2", kind: "HorizontalPodAutoscaler", mode: "HorizontalPodAutoscaler",
		fields: []string{"spec.minReplicas", "spec.maxReplicas"},
		want: expect(8, 18, map[string]int32{"minReplicas": 4, "maxReplicas": 12}, map[string]int32{"minReplicas": 2, "maxReplicas": 6},
			"api-business-hours"),
	}, {
		name: "reports", apiVersion: "apps/v1", kind: "Deployment", mode: "Scale",
		fields: []string{"spec.replicas"},
		want:   expect(7, 19, map[string]int32{"replicas": 1}, map[string]int32{"replicas": 0}, "reports-office-hours"),
	}} {
		t.Run(tt.name, func(t *testing.T) {
			a := got.Autoscalers[0]
			if tt.name == "reports" {
				a = got.Autoscalers[1]
			}
			if a.Target == nil {
				t.Fatalf("no target in %+v", a)
			}
			if a.Target.APIVersion != tt.apiVersion || a.Target.Kind != tt.kind || a.Target.Name != tt.name || a.Target.Mode != tt.mode ||
				!cmp.Equal(a.Target.Fields, tt.fields) || a.Target.MaxReplicas != nil {
				t.Errorf("target %+v, want %s %s %s, mode %s, fields %v, no maxReplicas", *a.Target, tt.apiVersion, tt.kind, tt.name, tt.mode, tt.fields)
			}
			var windows []window
			for _, s := range a.Segments {
				windows = append(windows, window{s.Start, s.End, s.Target, s.Schedules})
				// The target's values are the effective bounds by other names.
				if v, ok := s.Target["replicas"]; ok && v != s.MinReplicas {
					t.Errorf("segment %s: replicas %d, minReplicas %d", s.Start, v, s.MinReplicas)
				}
				if v, ok := s.Target["minReplicas"]; ok && (v != s.MinReplicas || s.Target["maxReplicas"] != s.MaxReplicas) {
					t.Errorf("segment %s: target %v, bounds %d-%d", s.Start, s.Target, s.MinReplicas, s.MaxReplicas)
				}
			}
			if diff := cmp.Diff(tt.want, windows, cmp.AllowUnexported(window{})); diff != "" {
				t.Errorf("segments (-want +got):\n%s", diff)
			}
		})
	}

	// The text says the same, in UTC and in Berlin time, with the zone abbreviation that
	// tells the two offsets apart.
	text := previewAttached(t, "text", from, length)
	for _, want := range []string{
		`ScheduledPodAutoscaler default/api, attached to HorizontalPodAutoscaler api \(autoscaling/v2\): baseline minReplicas 2, maxReplicas 6\n`,
		`  Thu 2027-03-25 07:00 UTC +Thu 2027-03-25 08:00 CET +minReplicas 4, maxReplicas 12 +api-business-hours\n`,
		`  Fri 2027-03-26 17:00 UTC +Fri 2027-03-26 18:00 CET +minReplicas 2, maxReplicas 6 +-\n`,
		`  Mon 2027-03-29 06:00 UTC +Mon 2027-03-29 08:00 CEST +minReplicas 4, maxReplicas 12 +api-business-hours\n`,
		`ScheduledPodAutoscaler default/reports, attached to Deployment reports \(apps/v1\) through its scale subresource: baseline replicas 0\n`,
		`  SCHEDULE +WINDOW +TIME ZONE +REPLICAS\n  reports-office-hours +Daily 07:00-19:00 on Monday, Tuesday, Wednesday, Thursday, Friday +Europe/Berlin +1\n`,
		`  FROM \(UTC\) +FROM \(Europe/Berlin\) +TARGET GETS +ACTIVE SCHEDULES\n  Thu 2027-03-25 00:00 UTC +Thu 2027-03-25 01:00 CET +replicas 0 +-\n`,
		`  Thu 2027-03-25 06:00 UTC +Thu 2027-03-25 07:00 CET +replicas 1 +reports-office-hours\n`,
		`  Fri 2027-03-26 18:00 UTC +Fri 2027-03-26 19:00 CET +replicas 0 +-\n  Mon 2027-03-29 05:00 UTC +Mon 2027-03-29 07:00 CEST +replicas 1 +reports-office-hours\n`,
		`  Mon 2027-03-29 17:00 UTC +Mon 2027-03-29 19:00 CEST +replicas 0 +-\n`,
	} {
		if !regexp.MustCompile(want).MatchString(text) {
			t.Errorf("the text does not match %q:\n%s", want, text)
		}
	}
	// A scale subresource has no maximum: no maxReplicas is said about reports.
	if _, reports, _ := strings.Cut(text, "ScheduledPodAutoscaler default/reports"); strings.Contains(reports, "max") || strings.Contains(reports, "MAX") {
		t.Errorf("reports is attached through a scale subresource, yet a maximum is shown:\n%s", reports)
	}
}

// TestAttachedExampleAcrossFallBack: the Monday after Berlin's fall-back (Sunday 31 October
// 2027, 03:00 CEST → 02:00 CET) the windows open an hour later in UTC than the Friday before.
func TestAttachedExampleAcrossFallBack(t *testing.T) {
	got := decodeAttached(t, previewAttached(t, "json", "2027-10-29T00:00:00Z", "4d"))
	var starts []string
	for _, s := range got.Autoscalers[1].Segments {
		if s.Target["replicas"] == 1 {
			starts = append(starts, s.Start+" "+s.End)
		}
	}
	want := []string{"2027-10-29T05:00:00Z 2027-10-29T17:00:00Z", "2027-11-01T06:00:00Z 2027-11-01T18:00:00Z"}
	if !cmp.Equal(starts, want) {
		t.Errorf("reports has replicas 1 over %v, want %v (07:00-19:00 CEST, then CET)", starts, want)
	}
}

// TestAttachedGolden compares the text, JSON and SVG previews of the attached example over the
// spring-forward week with testdata/attached-spring-2027.*.golden (regenerate with -update).
func TestAttachedGolden(t *testing.T) {
	for _, format := range []string{"text", "json", "svg"} {
		t.Run(format, func(t *testing.T) {
			out := previewAttached(t, format, "2027-03-25T00:00:00Z", "7d")
			golden := filepath.Join("testdata", "attached-spring-2027."+map[string]string{"text": "txt", "json": "json", "svg": "svg"}[format]+".golden")
			if *update {
				if err := os.WriteFile(golden, []byte(out), 0o600); err != nil {
					t.Fatal(err)
				}
			}
			want, err := os.ReadFile(golden)
			if err != nil {
				t.Fatalf("%v (run with -update to create it)", err)
			}
			if diff := cmp.Diff(string(want), out); diff != "" {
				t.Errorf("%s (-want +got):\n%s", golden, diff)
			}
		})
	}
}

// TestAttachedTargetKinds: a KEDA ScaledObject is given minReplicaCount and maxReplicaCount;
// a workload attached with spec.maxReplicas is given only replicas, and the preview says that
// the maximum is not applied and when replicas are above it (a Schedule's minReplicas is
// applied as is: api/scaling raises the maximum to the minimum, and a scale subresource
// has none).
func TestAttachedTargetKinds(t *testing.T) {
	input := `apiVersion: keda.sh/v1alpha1
kind: ScaledObject
metadata: {name: worker}
spec: {scaleTargetRef: {name: worker}, minReplicaCount: 0, maxReplicaCount: 10, triggers: [{type: cron, metadata: {timezone: UTC, start: "0 9 * * *", end: "0 17 * * *", desiredReplicas: "3"}}]}
---
apiVersion: autoscaling.almanac.dev/v1alpha1
kind: ScheduledPodAutoscaler
metadata: {name: worker}
spec:
  targetRef: {apiVersion: keda.sh/v1alpha1, kind: ScaledObject, name: worker}
  minReplicas: 0
  maxReplicas: 10
---
apiVersion: autoscaling.almanac.dev/v1alpha1
kind: Schedule
metadata: {name: worker-day}
spec: {scaleTargetRef: {name: worker}, minReplicas: 2, maxReplicas: 20, type: Daily, startTime: "09:00", endTime: "17:00"}
---
apiVersion: autoscaling.almanac.dev/v1alpha1
kind: ScheduledPodAutoscaler
metadata: {name: batch}
spec:
  targetRef: {apiVersion: apps/v1, kind: StatefulSet, name: batch}
  minReplicas: 1
  maxReplicas: 3
---
apiVersion: autoscaling.almanac.dev/v1alpha1
kind: Schedule
metadata: {name: batch-night}
spec: {scaleTargetRef: {name: batch}, minReplicas: 5, type: Daily, startTime: "22:00", endTime: "02:00"}
`
	preview := func(format string) string {
		var stdout, stderr bytes.Buffer
		opts := options{files: []string{"-"}, from: "2027-01-04T00:00:00Z", duration: "24h", output: format}
		if err := run(strings.NewReader(input), &stdout, &stderr, opts, attachedNow); err != nil {
			t.Fatalf("%v\n%s", err, stderr.String())
		}
		return stdout.String()
	}
	text := preview("text")
	for _, want := range []string{
		`ScheduledPodAutoscaler default/batch, attached to StatefulSet batch \(apps/v1\) through its scale subresource: baseline replicas 1 \(maxReplicas 3 is not applied: a scale subresource has no maximum\)\n`,
		`  Mon 2027-01-04 00:00 UTC +replicas 5 \(above maxReplicas 3\) +batch-night\n  Mon 2027-01-04 02:00 UTC +replicas 1 +-\n`,
		`ScheduledPodAutoscaler default/worker, attached to ScaledObject worker \(keda.sh/v1alpha1\): baseline minReplicaCount 0, maxReplicaCount 10\n`,
		`  SCHEDULE +WINDOW +TIME ZONE +MIN +MAX\n  worker-day +Daily 09:00-17:00 +UTC +2 +20\n`,
		`  Mon 2027-01-04 09:00 UTC +minReplicaCount 2, maxReplicaCount 20 +worker-day\n  Mon 2027-01-04 17:00 UTC +minReplicaCount 0, maxReplicaCount 10 +-\n`,
	} {
		if !regexp.MustCompile(want).MatchString(text) {
			t.Errorf("the text does not match %q:\n%s", want, text)
		}
	}

	got := decodeAttached(t, preview("json"))
	if len(got.Autoscalers) != 2 {
		t.Fatalf("autoscalers %+v", got.Autoscalers)
	}
	batch, worker := got.Autoscalers[0], got.Autoscalers[1]
	if batch.Target == nil || batch.Target.Mode != "Scale" || batch.Target.MaxReplicas == nil || *batch.Target.MaxReplicas != 3 {
		t.Errorf("batch target %+v, want mode Scale and maxReplicas 3", batch.Target)
	}
	if want := map[string]int32{"replicas": 5}; !cmp.Equal(batch.Segments[0].Target, want) {
		t.Errorf("batch at 00:00: target %v, want %v", batch.Segments[0].Target, want)
	}
	if worker.Target == nil || worker.Target.Mode != "ScaledObject" || !cmp.Equal(worker.Target.Fields, []string{"spec.minReplicaCount", "spec.maxReplicaCount"}) {
		t.Errorf("worker target %+v", worker.Target)
	}
	if want := map[string]int32{"minReplicaCount": 2, "maxReplicaCount": 20}; len(worker.Segments) != 3 || !cmp.Equal(worker.Segments[1].Target, want) {
		t.Errorf("worker segments %+v, want the window given %v", worker.Segments, want)
	}

	svg := preview("svg")
	for _, want := range []string{
		`>attached to ScaledObject worker (keda.sh/v1alpha1): baseline minReplicaCount 0, maxReplicaCount 10</text>`,
		`>minReplicaCount</text>`, `>maxReplicaCount</text>`,
		`<title>Mon 01-04 09:00 – Mon 01-04 17:00 UTC: worker gets minReplicaCount 2, maxReplicaCount 20</title>`,
		`<title>Mon 01-04 00:00 – Mon 01-04 02:00 UTC: batch gets replicas 5 (above maxReplicas 3)</title>`,
	} {
		if !strings.Contains(svg, want) {
			t.Errorf("the SVG has no %q", want)
		}
	}
	// batch's panel draws no maximum: one step line, the replicas.
	_, panel, _ := strings.Cut(svg, `id="default/batch"`)
	panel, _, _ = strings.Cut(panel, "</g>")
	if n := strings.Count(panel, "<path "); n != 1 || strings.Contains(panel, maxColor) {
		t.Errorf("batch's panel has %d step lines (want 1, the replicas) or the maximum's colour:\n%s", n, panel)
	}
}
