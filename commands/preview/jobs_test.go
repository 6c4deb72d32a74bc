package preview

import (
	"bytes"
	"context"
	"encoding/json"
	"strings"
	"testing"
	"time"

	"github.com/google/go-cmp/cmp"
	corev1 "k8s.io/api/core/v1"

	"github.com/almanac-dev/almanac/api/admission"
	batchv1alpha1 "github.com/almanac-dev/almanac/api/batch/v1alpha1"
	"github.com/almanac-dev/almanac/api/timing"
	"github.com/almanac-dev/almanac/commands/manifest"
)

// jobsInput has ScheduledJobs around the daylight-saving changes of 2027 in two zones.
const jobsInput = `
apiVersion: batch.almanac.dev/v1alpha1
kind: ScheduledJob
metadata: {name: berlin-gap, namespace: ops}
spec:
  schedule: "*/30 1-3 * * *"
  timeZone: Europe/Berlin
  jobTemplate: {spec: {template: {spec: {restartPolicy: Never, containers: [{name: c, image: busybox}]}}}}
---
apiVersion: batch.almanac.dev/v1alpha1
kind: ScheduledJob
metadata: {name: ny-repeat}
spec:
  at: "2027-11-07T01:30"
  timeZone: America/New_York
  jobTemplate: {spec: {template: {spec: {restartPolicy: Never, containers: [{name: c, image: busybox}]}}}}
---
apiVersion: batch.almanac.dev/v1alpha1
kind: ScheduledJob
metadata: {name: legacy-at, namespace: ops}
spec:
  schedule: "2027-03-28T02:15:00+01:00"
  timeZone: Europe/Berlin
  jobTemplate: {spec: {template: {spec: {restartPolicy: Never, containers: [{name: c, image: busybox}]}}}}
---
apiVersion: batch.almanac.dev/v1alpha1
kind: ScheduledJob
metadata: {name: paused, namespace: ops}
spec:
  schedule: "* * * * *"
  suspend: true
  jobTemplate: {spec: {template: {spec: {restartPolicy: Never, containers: [{name: c, image: busybox}]}}}}
`

type previewJobs struct {
	Jobs []struct {
		Namespace string   `json:"namespace"`
		Name      string   `json:"name"`
		Runs      []string `json:"runs"`
	} `json:"jobs"`
}

func previewJobsJSON(t *testing.T, input, from, to string) map[string][]string {
	t.Helper()
	var stdout, stderr bytes.Buffer
	opts := options{files: []string{"-"}, from: from, to: to, output: "json"}
	if err := run(strings.NewReader(input), &stdout, &stderr, opts, time.Time{}); err != nil {
		t.Fatal(err)
	}
	if stderr.Len() > 0 {
		t.Errorf("warnings: %s", stderr.String())
	}
	var got previewJobs
	dec := json.NewDecoder(&stdout)
	if err := dec.Decode(&got); err != nil {
		t.Fatal(err)
	}
	out := map[string][]string{}
	var order []string
	for _, j := range got.Jobs {
		if j.Runs == nil {
			t.Errorf("%s/%s: runs is null, want []", j.Namespace, j.Name)
		}
		out[j.Namespace+"/"+j.Name] = j.Runs
		order = append(order, j.Namespace+"/"+j.Name)
	}
	if want := []string{"default/ny-repeat", "ops/berlin-gap", "ops/legacy-at", "ops/paused"}; !cmp.Equal(want, order) {
		t.Errorf("jobs in order %v, want %v (sorted by namespace/name; no namespace means default)", order, want)
	}
	return out
}

// The "jobs" listing of `almanac preview -o json` has the nominal run instants of each
// ScheduledJob in [from, to), in UTC, after the DST rule: the gap's slots run once at the jump
// instant, a repeated wall time runs once at its first occurrence; a timestamp given as
// schedule is a one-shot; a suspended ScheduledJob has no runs.
func TestPreviewJobRuns(t *testing.T) {
	// Berlin, 28 March 2027: 02:00 CET jumps to 03:00 CEST (01:00Z).
	got := previewJobsJSON(t, jobsInput, "2027-03-28T00:00:00Z", "2027-03-28T01:30:00Z")
	want := map[string][]string{
		// 01:00 and 01:30 CET; 02:00, 02:30 (gap) and 03:00 CEST all resolve to 01:00Z and run
		// once; 03:30 CEST is 01:30Z, which is the end of the range and excluded.
		"ops/berlin-gap": {"2027-03-28T00:00:00Z", "2027-03-28T00:30:00Z", "2027-03-28T01:00:00Z"},
		// 2027-03-28T02:15:00+01:00 is 01:15Z: 03:15 CEST in Berlin.
		"ops/legacy-at":     {"2027-03-28T01:15:00Z"},
		"ops/paused":        {},
		"default/ny-repeat": {},
	}
	if diff := cmp.Diff(want, got); diff != "" {
		t.Errorf("runs (-want +got):\n%s", diff)
	}

	// The range is half-open: a run at from is in, a run at to is out.
	got = previewJobsJSON(t, jobsInput, "2027-03-28T00:30:00Z", "2027-03-28T01:00:00Z")
	if diff := cmp.Diff([]string{"2027-03-28T00:30:00Z"}, got["ops/berlin-gap"]); diff != "" {
		t.Errorf("berlin-gap in [00:30Z, 01:00Z) (-want +got):\n%s", diff)
	}

	// New York, 7 November 2027: 01:30 occurs in EDT (05:30Z) and again in EST (06:30Z); the
	// one-shot runs at the first.
	got = previewJobsJSON(t, jobsInput, "2027-11-07T00:00:00Z", "2027-11-08T00:00:00Z")
	if diff := cmp.Diff([]string{"2027-11-07T05:30:00Z"}, got["default/ny-repeat"]); diff != "" {
		t.Errorf("ny-repeat (-want +got):\n%s", diff)
	}
	// Berlin on 7 November (CET): 01:00, 01:30, 02:00, 02:30, 03:00, 03:30 local, once each.
	wantBerlin := []string{"2027-11-07T00:00:00Z", "2027-11-07T00:30:00Z", "2027-11-07T01:00:00Z",
		"2027-11-07T01:30:00Z", "2027-11-07T02:00:00Z", "2027-11-07T02:30:00Z"}
	if diff := cmp.Diff(wantBerlin, got["ops/berlin-gap"]); diff != "" {
		t.Errorf("berlin-gap on 7 November (-want +got):\n%s", diff)
	}
}

// Berlin, 31 October 2027: 02:00-03:00 CEST repeats as 02:00-03:00 CET. Each wall-clock slot
// runs once, at its first occurrence.
func TestPreviewJobRunsFallBack(t *testing.T) {
	got := previewJobsJSON(t, jobsInput, "2027-10-30T23:00:00Z", "2027-10-31T03:00:00Z")
	want := []string{
		"2027-10-30T23:00:00Z", "2027-10-30T23:30:00Z", // 01:00, 01:30 CEST
		"2027-10-31T00:00:00Z", "2027-10-31T00:30:00Z", // 02:00, 02:30 CEST (not again in CET)
		"2027-10-31T02:00:00Z", "2027-10-31T02:30:00Z", // 03:00, 03:30 CET
	}
	if diff := cmp.Diff(want, got["ops/berlin-gap"]); diff != "" {
		t.Errorf("berlin-gap (-want +got):\n%s", diff)
	}
}

// TestLegacyTimestampsRunWhereAdmissionStoresThem: a timestamp written in a ScheduledJob's
// schedule (the "AT" controller's form) runs in the preview exactly where admission stores it
// in at, to the second; one that admission cannot move (a fraction of a second: at is whole
// seconds) is refused by the validating webhook and skipped by the preview, for the same
// reason. Issue 11, finding 6: preview skipped "2027-06-01T10:00:30Z" ("has 1 fields") while
// admission moved it to at.
func TestLegacyTimestampsRunWhereAdmissionStoresThem(t *testing.T) {
	const fraction = `has a fraction of a second: times are whole seconds`
	for _, tt := range []struct {
		written, at, refused string
	}{
		{written: "2027-06-01T10:00:30Z", at: "2027-06-01T19:00:30"},
		{written: "2027-06-01T10:00:00Z", at: "2027-06-01T19:00"},
		{written: "2027-06-01T10:00", at: "2027-06-01T10:00"},
		{written: "2027-06-01T19:00:30+09:00", at: "2027-06-01T19:00:30"},
		{written: "2027-06-01T19:00:30.5+09:00", refused: fraction},
		{written: "2027-06-01T10:00:59.999", refused: fraction},
	} {
		t.Run(tt.written, func(t *testing.T) {
			input := `
apiVersion: batch.almanac.dev/v1alpha1
kind: ScheduledJob
metadata: {name: legacy}
spec:
  schedule: "` + tt.written + `"
  timeZone: Asia/Tokyo
  jobTemplate: {spec: {template: {spec: {restartPolicy: Never, containers: [{name: c, image: busybox}]}}}}
`
			sj := &batchv1alpha1.ScheduledJob{Spec: batchv1alpha1.ScheduledJobSpec{Schedule: tt.written, TimeZone: "Asia/Tokyo"}}
			sj.Spec.JobTemplate.Spec.Template.Spec.RestartPolicy = corev1.RestartPolicyNever
			admission.DefaultScheduledJob(sj)
			if sj.Spec.At != tt.at {
				t.Fatalf("admission stored at %q, want %q", sj.Spec.At, tt.at)
			}
			docs, err := manifest.Read([]string{"-"}, false, strings.NewReader(input))
			if err != nil {
				t.Fatal(err)
			}
			report, warnings, err := Build(docs, Range{From: time.Date(2027, 5, 1, 0, 0, 0, 0, time.UTC), To: time.Date(2027, 7, 1, 0, 0, 0, 0, time.UTC)})
			if err != nil {
				t.Fatal(err)
			}

			if tt.refused != "" {
				errs, _, err := admission.ValidateScheduledJob(context.Background(), sj, nil, admission.Env{Now: time.Date(2027, 5, 1, 0, 0, 0, 0, time.UTC)})
				if err != nil || len(errs) != 1 || !strings.Contains(errs[0].Error(), tt.refused) {
					t.Errorf("admission: %v %v, want it refused: %s", errs, err, tt.refused)
				}
				if len(report.Jobs) != 0 || len(warnings) != 1 || !strings.Contains(warnings[0], tt.refused) {
					t.Errorf("preview: jobs %+v, warnings %q; want it skipped: %s", report.Jobs, warnings, tt.refused)
				}
				return
			}
			stored, err := timing.ParseAt(sj.Spec.At, mustZone(t, "Asia/Tokyo"))
			if err != nil {
				t.Fatal(err)
			}
			want := stored.In(mustZone(t, "Asia/Tokyo")).Format(time.RFC3339)
			if len(warnings) > 0 {
				t.Fatalf("Build: %v", warnings)
			}
			if len(report.Jobs) != 1 || len(report.Jobs[0].Runs) != 1 || report.Jobs[0].Runs[0].Format(time.RFC3339) != want {
				t.Errorf("preview runs %+v, want one run at %s (admission stores at %q)", report.Jobs, want, sj.Spec.At)
			}
		})
	}
}

func mustZone(t *testing.T, name string) *time.Location {
	t.Helper()
	z, err := timing.NormalizeZone(name)
	if err != nil {
		t.Fatal(err)
	}
	return z.Location
}
