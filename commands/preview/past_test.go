package preview

import (
	"encoding/json"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/almanac-dev/almanac/commands/validate"
)

// TestPreviewOfAPastRange (issue 38, item 11): admission in preview judges as of the start of
// a past range (or --now), so that a preview of a past range draws a one-shot of that time: a
// ScheduledJob's at, a OneShot Schedule's window, k8s-at's sample as almanac migrate converts
// it (examples/migrate/almanac/k8s-at.yaml, at 2020-03-21T13:53:55). On the main before it,
// admission judged as of the real now and refused each of them (a passed starting deadline, a
// stale window): nothing was drawn and preview exited 1. almanac validate still judges as of
// now, and so does preview of a future range: a one-shot due before it is admitted (applied
// now, it runs) and draws nothing in the range.
func TestPreviewOfAPastRange(t *testing.T) {
	dir := t.TempDir()
	incident := filepath.Join(dir, "incident.yaml")
	if err := os.WriteFile(incident, []byte(autoscalerYAML+`---
apiVersion: autoscaling.almanac.dev/v1alpha1
kind: Schedule
metadata: {name: launch}
spec: {scaleTargetRef: {name: web}, minReplicas: 5, maxReplicas: 8, type: OneShot, startTime: "2018-05-01T09:00", endTime: "2018-05-01T12:00", timeZone: UTC}
---
apiVersion: batch.almanac.dev/v1alpha1
kind: ScheduledJob
metadata: {name: warm-cache}
spec:
  at: "2018-05-01T08:30"
  timeZone: UTC`+jobTemplateYAML+`
`), 0o600); err != nil {
		t.Fatal(err)
	}
	type preview struct {
		Autoscalers []struct {
			Segments []struct {
				Start, End  string
				MinReplicas int32 `json:"minReplicas"`
			}
		}
		Jobs []struct {
			Name string
			Runs []string
		}
	}
	decode := func(t *testing.T, out string) preview {
		t.Helper()
		var p preview
		if err := json.Unmarshal([]byte(out), &p); err != nil {
			t.Fatalf("%v\n%s", err, out)
		}
		return p
	}

	t.Run("as of the range's start", func(t *testing.T) {
		out, stderr, exit := run2(t, NewCommand(), "-f", incident, "--from", "2018-05-01T00:00:00Z", "--for", "1d", "-o", "json")
		if exit != ExitPreviewed {
			t.Fatalf("exit %d, want %d (every object admitted as of the range's start):\n%s", exit, ExitPreviewed, stderr)
		}
		p := decode(t, out)
		if len(p.Jobs) != 1 || strings.Join(p.Jobs[0].Runs, " ") != "2018-05-01T08:30:00Z" {
			t.Errorf("jobs %+v, want warm-cache running at 2018-05-01T08:30:00Z", p.Jobs)
		}
		raised := false
		for _, a := range p.Autoscalers {
			for _, s := range a.Segments {
				if s.Start == "2018-05-01T09:00:00Z" && s.End == "2018-05-01T12:00:00Z" && s.MinReplicas == 5 {
					raised = true
				}
			}
		}
		if !raised {
			t.Errorf("no segment at minReplicas 5 over the launch window 09:00-12:00:\n%s", out)
		}
	})

	t.Run("as of --now", func(t *testing.T) {
		// A month later, the job's deadline has passed and the window is stale: refused,
		// with validate's lines.
		_, stderr, exit := run2(t, NewCommand(), "-f", incident, "--from", "2018-05-01T00:00:00Z", "--for", "1d", "--now", "2018-06-01T00:00:00Z", "-o", "json")
		if exit != ExitRefused || !strings.Contains(stderr, "warm-cache") || !strings.Contains(stderr, "launch") {
			t.Errorf("exit %d, want %d with warm-cache and launch refused:\n%s", exit, ExitRefused, stderr)
		}
		if _, stderr, exit := run2(t, NewCommand(), "--cluster", "--now", "2018-06-01T00:00:00Z"); exit != 2 || !strings.Contains(stderr, "--now is for -f") {
			t.Errorf("--now with --cluster: exit %d, %q; want a usage error", exit, stderr)
		}
		if _, stderr, exit := run2(t, NewCommand(), "-f", incident, "--now", "yesterday"); exit != 2 || !strings.Contains(stderr, `--now "yesterday" is not an RFC 3339 time`) {
			t.Errorf("--now yesterday: exit %d, %q; want an error naming the format", exit, stderr)
		}
	})

	t.Run("a future range: as of now", func(t *testing.T) {
		tomorrow := time.Now().UTC().Add(24 * time.Hour).Format("2006-01-02T15:04")
		soon := filepath.Join(dir, "soon.yaml")
		if err := os.WriteFile(soon, []byte(`apiVersion: batch.almanac.dev/v1alpha1
kind: ScheduledJob
metadata: {name: soon}
spec:
  at: "`+tomorrow+`"
  timeZone: UTC`+jobTemplateYAML+`
`), 0o600); err != nil {
			t.Fatal(err)
		}
		from := time.Now().UTC().Add(30 * 24 * time.Hour).Format(time.RFC3339)
		out, stderr, exit := run2(t, NewCommand(), "-f", soon, "--from", from, "--for", "1d", "-o", "json")
		if exit != ExitPreviewed {
			t.Fatalf("exit %d, want %d: a one-shot due tomorrow is admitted now, and a range a month ahead draws no run of it:\n%s", exit, ExitPreviewed, stderr)
		}
		if p := decode(t, out); len(p.Jobs) != 1 || len(p.Jobs[0].Runs) != 0 {
			t.Errorf("jobs %+v, want soon with no run in the range", p.Jobs)
		}
	})

	t.Run("validate judges as of now", func(t *testing.T) {
		out, _, exit := run2(t, validate.NewCommand(), "-f", incident)
		if exit != validate.ExitRejected || !strings.Contains(out, "warm-cache") {
			t.Errorf("validate: exit %d, want %d with warm-cache refused (its deadline passed long ago):\n%s", exit, validate.ExitRejected, out)
		}
	})

	t.Run("k8s-at's sample, migrated", func(t *testing.T) {
		sample := filepath.Join("..", "..", "examples", "migrate", "almanac", "k8s-at.yaml")
		out, stderr, exit := run2(t, NewCommand(), "-f", sample, "--from", "2020-03-21T00:00:00Z", "--for", "1d", "-o", "json")
		if exit != ExitPreviewed {
			t.Fatalf("exit %d, want %d:\n%s", exit, ExitPreviewed, stderr)
		}
		if p := decode(t, out); len(p.Jobs) != 1 || strings.Join(p.Jobs[0].Runs, " ") != "2020-03-21T13:53:55Z" {
			t.Errorf("jobs %+v, want at-sample running at 2020-03-21T13:53:55Z", p.Jobs)
		}
	})
}
