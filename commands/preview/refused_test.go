package preview

import (
	"bytes"
	"errors"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/google/go-cmp/cmp"
	"github.com/spf13/cobra"

	"github.com/almanac-dev/almanac/commands/manifest"
	"github.com/almanac-dev/almanac/commands/validate"
)

const (
	autoscalerYAML = `apiVersion: autoscaling.almanac.dev/v1alpha1
kind: ScheduledPodAutoscaler
metadata: {name: web}
spec:
  horizontalPodAutoscalerSpec: {scaleTargetRef: {apiVersion: apps/v1, kind: Deployment, name: web}, minReplicas: 2, maxReplicas: 4}
`
	jobTemplateYAML = `
  jobTemplate: {spec: {template: {spec: {restartPolicy: Never, containers: [{name: c, image: busybox}]}}}}`
)

// verdictLines are the lines of a report that say which objects were rejected and why.
func verdictLines(out string) []string {
	var lines []string
	for _, l := range strings.Split(out, "\n") {
		if strings.HasSuffix(l, ": rejected") || strings.HasPrefix(l, "  error: ") {
			lines = append(lines, l)
		}
	}
	return lines
}

// TestPreviewRefusesWhatValidateRefuses: `almanac preview` first runs what `almanac validate`
// runs, and of a manifest that validate refuses it previews nothing of the refused objects: it
// reports them with validate's very lines and exits 1, as validate does; the objects that are
// admitted are previewed. Issue 22: a Schedule with minReplicas 0 (which a
// HorizontalPodAutoscaler cannot have) or an autoscaler with an unknown field was drawn
// without a word. Attached autoscalers go through the same admission.
func TestPreviewRefusesWhatValidateRefuses(t *testing.T) {
	for _, tt := range []struct {
		name, input string
		previewed   string // a JSON fragment of what is still previewed
	}{{
		name: "a Schedule with minReplicas 0",
		input: autoscalerYAML + `---
apiVersion: autoscaling.almanac.dev/v1alpha1
kind: Schedule
metadata: {name: night}
spec: {scaleTargetRef: {name: web}, minReplicas: 0, maxReplicas: 4, type: Daily, startTime: "22:00", endTime: "06:00"}
`,
		previewed: `"minReplicas": 2`,
	}, {
		name: "an autoscaler attached to a HorizontalPodAutoscaler with minReplicas 0",
		input: `apiVersion: autoscaling.almanac.dev/v1alpha1
kind: ScheduledPodAutoscaler
metadata: {name: api}
spec:
  targetRef: {apiVersion: autoscaling/v2, kind: HorizontalPodAutoscaler, name: api}
  minReplicas: 0
  maxReplicas: 6
`,
		previewed: `"autoscalers": []`,
	}, {
		name: "a Schedule with minReplicas 0 on an autoscaler attached to a HorizontalPodAutoscaler",
		input: `apiVersion: autoscaling.almanac.dev/v1alpha1
kind: ScheduledPodAutoscaler
metadata: {name: api}
spec:
  targetRef: {apiVersion: autoscaling/v2, kind: HorizontalPodAutoscaler, name: api}
  minReplicas: 2
  maxReplicas: 6
---
apiVersion: autoscaling.almanac.dev/v1alpha1
kind: Schedule
metadata: {name: night}
spec: {scaleTargetRef: {name: api}, minReplicas: 0, type: Daily, startTime: "22:00", endTime: "06:00"}
`,
		previewed: `"mode": "HorizontalPodAutoscaler"`,
	}, {
		name: "an autoscaler with an unknown field",
		input: `apiVersion: autoscaling.almanac.dev/v1alpha1
kind: ScheduledPodAutoscaler
metadata: {name: web}
spec:
  overlapPolcy: Forbid
  horizontalPodAutoscalerSpec: {scaleTargetRef: {apiVersion: apps/v1, kind: Deployment, name: web}, minReplicas: 2, maxReplicas: 4}
`,
		previewed: `"autoscalers": []`,
	}, {
		name: "a ScheduledJob whose startingDeadlineSeconds is far too large",
		input: `apiVersion: batch.almanac.dev/v1alpha1
kind: ScheduledJob
metadata: {name: forever}
spec:
  schedule: "* * * * *"
  startingDeadlineSeconds: 9999999999` + jobTemplateYAML + `
`,
		previewed: `"jobs": []`,
	}, {
		name: "Schedules a careless tenant writes: 25 o'clock, @every, a zone on Mars",
		input: autoscalerYAML + `---
apiVersion: autoscaling.almanac.dev/v1alpha1
kind: Schedule
metadata: {name: late}
spec: {scaleTargetRef: {name: web}, minReplicas: 3, type: Daily, startTime: "25:00", endTime: "06:00"}
---
apiVersion: autoscaling.almanac.dev/v1alpha1
kind: Schedule
metadata: {name: hourly}
spec: {scaleTargetRef: {name: web}, minReplicas: 3, type: Cron, schedule: "@every 1h", duration: 30m}
---
apiVersion: autoscaling.almanac.dev/v1alpha1
kind: Schedule
metadata: {name: mars}
spec: {scaleTargetRef: {name: web}, minReplicas: 3, type: Daily, startTime: "09:00", endTime: "17:00", timeZone: Mars/Olympus_Mons}
---
apiVersion: autoscaling.almanac.dev/v1alpha1
kind: Schedule
metadata: {name: fine}
spec: {scaleTargetRef: {name: web}, minReplicas: 3, type: Daily, startTime: "09:00", endTime: "17:00"}
`,
		previewed: `"fine"`,
	}, {
		name: "an EventJob that triggers on itself",
		input: `apiVersion: batch.almanac.dev/v1alpha1
kind: EventJob
metadata: {name: again}
spec:
  trigger: {kind: EventJob, name: again}` + jobTemplateYAML + `
`,
		previewed: `"jobs": []`,
	}} {
		t.Run(tt.name, func(t *testing.T) {
			file := filepath.Join(t.TempDir(), "input.yaml")
			if err := os.WriteFile(file, []byte(tt.input), 0o600); err != nil {
				t.Fatal(err)
			}
			validateOut, _, validateExit := run2(t, validate.NewCommand(), "-f", file)
			previewOut, previewErr, previewExit := run2(t, NewCommand(), "-f", file, "--from", "2027-01-04T00:00:00Z", "--for", "2d", "-o", "json")
			if validateExit != validate.ExitRejected || previewExit != ExitRefused {
				t.Errorf("exit status: validate %d, preview %d; want %d and %d", validateExit, previewExit, validate.ExitRejected, ExitRefused)
			}
			want := verdictLines(validateOut)
			if len(want) == 0 {
				t.Fatalf("validate refused nothing:\n%s", validateOut)
			}
			if diff := cmp.Diff(want, verdictLines(previewErr)); diff != "" {
				t.Errorf("preview's refusals differ from validate's (-validate +preview):\n%s\npreview's standard error:\n%s", diff, previewErr)
			}
			if !strings.Contains(previewOut, tt.previewed) {
				t.Errorf("the preview does not hold %s:\n%s", tt.previewed, previewOut)
			}
			for _, l := range want {
				if name := strings.TrimSuffix(l, ": rejected"); name != l {
					name = name[strings.LastIndex(name, "/")+1:]
					if strings.Contains(previewOut, `"name": "`+name+`"`) || strings.Contains(previewOut, `"`+name+`"`) {
						t.Errorf("the refused %s is previewed:\n%s", name, previewOut)
					}
				}
			}
		})
	}
}

// run2 runs an almanac command and returns its standard output, standard error and exit
// status (an ExitError's code; 2 for any other error, as main does).
func run2(t *testing.T, cmd *cobra.Command, args ...string) (string, string, int) {
	t.Helper()
	var stdout, stderr bytes.Buffer
	cmd.SilenceUsage, cmd.SilenceErrors = true, true // as the root command of main
	cmd.SetArgs(args)
	cmd.SetOut(&stdout)
	cmd.SetErr(&stderr)
	err := cmd.Execute()
	var exit *manifest.ExitError
	switch {
	case err == nil:
		return stdout.String(), stderr.String(), 0
	case errors.As(err, &exit):
		return stdout.String(), stderr.String(), exit.ExitCode()
	}
	return stdout.String(), stderr.String() + err.Error(), 2
}
