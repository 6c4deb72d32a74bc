package preview

import (
	"bytes"
	"encoding/json"
	"strings"
	"testing"
	"time"

	"github.com/google/go-cmp/cmp"
)

// fanInInput: three extracts at 02:00 in Berlin, one of which a calendar skips on Christmas
// Day and one that runs on weekdays only, an AllOf and an AnyOf EventJob over them, and one
// that also waits for a CronJob.
const fanInInput = `
apiVersion: almanac.dev/v1alpha1
kind: Calendar
metadata: {name: holidays, namespace: etl}
spec: {timeZone: Europe/Berlin, days: [{date: "12-25", name: Christmas Day}]}
---
apiVersion: batch.almanac.dev/v1alpha1
kind: ScheduledJob
metadata: {name: extract-a, namespace: etl}
spec:
  schedule: "0 2 * * *"
  timeZone: Europe/Berlin
  jobTemplate: {spec: {template: {spec: {restartPolicy: Never, containers: [{name: c, image: busybox}]}}}}
---
apiVersion: batch.almanac.dev/v1alpha1
kind: ScheduledJob
metadata: {name: extract-b, namespace: etl}
spec:
  schedule: "0 2 * * *"
  timeZone: Europe/Berlin
  calendars: {skip: [{name: holidays}]}
  jobTemplate: {spec: {template: {spec: {restartPolicy: Never, containers: [{name: c, image: busybox}]}}}}
---
apiVersion: batch.almanac.dev/v1alpha1
kind: ScheduledJob
metadata: {name: extract-c, namespace: etl}
spec:
  schedule: "0 2 * * MON-FRI"
  timeZone: Europe/Berlin
  jobTemplate: {spec: {template: {spec: {restartPolicy: Never, containers: [{name: c, image: busybox}]}}}}
---
apiVersion: batch.almanac.dev/v1alpha1
kind: EventJob
metadata: {name: report, namespace: etl}
spec:
  triggers:
  - {kind: ScheduledJob, name: extract-a}
  - {kind: ScheduledJob, name: extract-b}
  - {kind: ScheduledJob, name: extract-c}
  jobTemplate: {spec: {template: {spec: {restartPolicy: Never, containers: [{name: c, image: busybox}]}}}}
---
apiVersion: batch.almanac.dev/v1alpha1
kind: EventJob
metadata: {name: any, namespace: etl}
spec:
  triggers:
  - {kind: ScheduledJob, name: extract-b}
  - {kind: ScheduledJob, name: extract-c}
  fanIn: {require: AnyOf}
  jobTemplate: {spec: {template: {spec: {restartPolicy: Never, containers: [{name: c, image: busybox}]}}}}
---
apiVersion: batch.almanac.dev/v1alpha1
kind: EventJob
metadata: {name: with-cron, namespace: etl}
spec:
  triggers:
  - {kind: ScheduledJob, name: extract-a}
  - {kind: CronJob, name: legacy}
  jobTemplate: {spec: {template: {spec: {restartPolicy: Never, containers: [{name: c, image: busybox}]}}}}
`

// TestPreviewFanIn: `almanac preview` draws the sets of a fan-in EventJob by slot from the
// runs of its upstream ScheduledJobs in the input: a slot that one of them does not run
// (Christmas Day skipped by a calendar, a Saturday off the schedule) expires under AllOf, and
// runs under AnyOf when another runs it; a trigger that is not a ScheduledJob of the input is
// named in a note.
func TestPreviewFanIn(t *testing.T) {
	var stdout, stderr bytes.Buffer
	// 2027-12-24 is a Friday, the 25th a Saturday.
	opts := options{files: []string{"-"}, from: "2027-12-24T00:00:00Z", to: "2027-12-26T00:00:00Z", output: "text"}
	if err := run(strings.NewReader(fanInInput), &stdout, &stderr, opts, time.Date(2027, 12, 1, 0, 0, 0, 0, time.UTC)); err != nil {
		t.Fatal(err)
	}
	text := stdout.String()
	for _, want := range []string{
		"EventJob etl/report: starts a Job once each of ScheduledJob extract-a, ScheduledJob extract-b and ScheduledJob extract-c has a Job that completed, for the same slot " +
			"(a set waits 86400 s after its slot; a Job that ended otherwise skips its set)\n" +
			"  SLOT (UTC)                SET\n" +
			"  Fri 2027-12-24 01:00 UTC  runs after ScheduledJob extract-a, ScheduledJob extract-b, ScheduledJob extract-c\n" +
			"  Sat 2027-12-25 01:00 UTC  expires — no run of ScheduledJob extract-b (skipped — Christmas Day (Calendar holidays)), ScheduledJob extract-c (no run at that slot)\n",
		"  note: EventJob etl/with-cron: CronJob legacy is not a ScheduledJob of the input, so preview does not know its runs",
		"  Sat 2027-12-25 01:00 UTC  runs after ScheduledJob extract-a, once CronJob legacy ran it too\n",
	} {
		if !strings.Contains(text, want) {
			t.Errorf("the preview lacks\n%s\n--- it reads:\n%s", want, text)
		}
	}
	if !strings.Contains(stderr.String(), "Warning: EventJob etl/with-cron: CronJob legacy is not a ScheduledJob of the input") {
		t.Errorf("stderr: %s", stderr.String())
	}

	stdout.Reset()
	stderr.Reset()
	opts.output = "json"
	if err := run(strings.NewReader(fanInInput), &stdout, &stderr, opts, time.Date(2027, 12, 1, 0, 0, 0, 0, time.UTC)); err != nil {
		t.Fatal(err)
	}
	var got struct {
		EventJobs []jsonFanIn `json:"eventJobs"`
	}
	if err := jsonDecode(stdout.Bytes(), &got); err != nil {
		t.Fatal(err)
	}
	var anyOf *jsonFanIn
	for i := range got.EventJobs {
		if got.EventJobs[i].Name == "any" {
			anyOf = &got.EventJobs[i]
		}
	}
	// The AnyOf EventJob has no set on Saturday: neither of its ScheduledJobs runs then.
	want := []jsonFanInSet{
		{Slot: "2027-12-24T01:00:00Z", Runs: true, Upstream: []string{"ScheduledJob extract-b", "ScheduledJob extract-c"}},
	}
	if anyOf == nil {
		t.Fatalf("no EventJob any in %+v", got)
	}
	if diff := cmp.Diff(want, anyOf.Sets); diff != "" {
		t.Errorf("AnyOf sets (-want +got):\n%s", diff)
	}
}

func jsonDecode(data []byte, into any) error { return json.Unmarshal(data, into) }
