package preview

import (
	"bytes"
	"encoding/json"
	"strings"
	"testing"
	"time"

	"github.com/google/go-cmp/cmp"
)

// spreadInput has the same cron schedule in three ScheduledJobs with spec.spread: each runs
// at its own offset, derived from its namespace and name (no namespace means default, as
// where `kubectl apply` would put it).
const spreadInput = `
apiVersion: batch.almanac.dev/v1alpha1
kind: ScheduledJob
metadata: {name: nightly, namespace: team-a}
spec:
  schedule: "30 2 * * *"
  timeZone: Europe/Berlin
  spread: 5m
  jobTemplate: {spec: {template: {spec: {restartPolicy: Never, containers: [{name: c, image: busybox}]}}}}
---
apiVersion: batch.almanac.dev/v1alpha1
kind: ScheduledJob
metadata: {name: nightly, namespace: team-b}
spec:
  schedule: "30 2 * * *"
  timeZone: Europe/Berlin
  spread: 5m
  jobTemplate: {spec: {template: {spec: {restartPolicy: Never, containers: [{name: c, image: busybox}]}}}}
---
apiVersion: batch.almanac.dev/v1alpha1
kind: ScheduledJob
metadata: {name: nightly}
spec:
  schedule: "30 2 * * *"
  timeZone: Europe/Berlin
  spread: 5m
  jobTemplate: {spec: {template: {spec: {restartPolicy: Never, containers: [{name: c, image: busybox}]}}}}
---
apiVersion: batch.almanac.dev/v1alpha1
kind: ScheduledJob
metadata: {name: unspread, namespace: team-a}
spec:
  schedule: "30 2 * * *"
  timeZone: Europe/Berlin
  jobTemplate: {spec: {template: {spec: {restartPolicy: Never, containers: [{name: c, image: busybox}]}}}}
`

func previewSpread(t *testing.T, output string) string {
	t.Helper()
	var stdout, stderr bytes.Buffer
	opts := options{files: []string{"-"}, from: "2027-03-27T00:00:00Z", to: "2027-03-29T00:00:00Z", output: output}
	if err := run(strings.NewReader(spreadInput), &stdout, &stderr, opts, time.Time{}); err != nil {
		t.Fatal(err)
	}
	if stderr.Len() > 0 {
		t.Errorf("warnings: %s", stderr.String())
	}
	return stdout.String()
}

// TestPreviewSpread: `almanac preview` shows the runs of a ScheduledJob with spec.spread at
// its shifted instants, offline, as the reconciler runs them: 02:30 CET on the 27th is 01:30Z,
// and 02:30 on the 28th, in the spring-forward gap, is the jump instant 01:00Z; each plus the
// ScheduledJob's offset (team-a/nightly +1m28s, team-b/nightly +4m45s, default/nightly
// +3m32s).
func TestPreviewSpread(t *testing.T) {
	var got previewJobs
	if err := json.Unmarshal([]byte(previewSpread(t, "json")), &got); err != nil {
		t.Fatal(err)
	}
	runs := map[string][]string{}
	for _, j := range got.Jobs {
		runs[j.Namespace+"/"+j.Name] = j.Runs
	}
	want := map[string][]string{
		"default/nightly": {"2027-03-27T01:33:32Z", "2027-03-28T01:03:32Z"},
		"team-a/nightly":  {"2027-03-27T01:31:28Z", "2027-03-28T01:01:28Z"},
		"team-b/nightly":  {"2027-03-27T01:34:45Z", "2027-03-28T01:04:45Z"},
		"team-a/unspread": {"2027-03-27T01:30:00Z", "2027-03-28T01:00:00Z"},
	}
	if diff := cmp.Diff(want, runs); diff != "" {
		t.Errorf("runs (-want +got):\n%s", diff)
	}

	text := previewSpread(t, "text")
	for _, want := range []string{
		"ScheduledJob team-b/nightly: cron \"30 2 * * *\" spread 5m0s (+4m45s) in Europe/Berlin\n" +
			"  RUN (UTC)                    RUN (Europe/Berlin)\n" +
			"  Sat 2027-03-27 01:34:45 UTC  Sat 2027-03-27 02:34:45 CET\n" +
			"  Sun 2027-03-28 01:04:45 UTC  Sun 2027-03-28 03:04:45 CEST\n",
		// Without spread, runs stay on the minute.
		"ScheduledJob team-a/unspread: cron \"30 2 * * *\" in Europe/Berlin\n" +
			"  RUN (UTC)                 RUN (Europe/Berlin)\n" +
			"  Sat 2027-03-27 01:30 UTC  Sat 2027-03-27 02:30 CET\n",
	} {
		if !strings.Contains(text, want) {
			t.Errorf("the text output has no\n%s\nin\n%s", want, text)
		}
	}
}
