package validate

import (
	"bytes"
	"context"
	"encoding/json"
	"encoding/xml"
	"errors"
	"os"
	"path/filepath"
	"regexp"
	"strings"
	"testing"
	"time"

	"github.com/google/go-cmp/cmp"

	"github.com/almanac-dev/almanac/api/admission"
	"github.com/almanac-dev/almanac/commands/manifest"
)

var now = time.Date(2027, time.January, 15, 12, 0, 0, 0, time.UTC)

const nowFlag = "--now=2027-01-15T12:00:00Z"

// validateString runs admission.Validate on a multi-document manifest.
func validateString(t *testing.T, input string) *admission.Report {
	t.Helper()
	docs, err := manifest.Read([]string{"-"}, false, strings.NewReader(input))
	if err != nil {
		t.Fatal(err)
	}
	report, err := admission.Validate(context.Background(), docs, now)
	if err != nil {
		t.Fatal(err)
	}
	return report
}

// verdicts summarizes a report as "Kind/name: errors... | warnings..." lines.
type verdictLine struct {
	Object   string
	Allowed  bool
	Errors   []admission.ResultError
	Warnings []string
}

func verdicts(r *admission.Report) []verdictLine {
	var out []verdictLine
	for _, res := range r.Results {
		out = append(out, verdictLine{Object: res.Kind + " " + res.Namespace + "/" + res.Name, Allowed: res.Allowed, Errors: res.Errors, Warnings: res.Warnings})
	}
	return out
}

const jobTemplateYAML = `
  jobTemplate: {spec: {template: {spec: {containers: [{name: c, image: busybox}], restartPolicy: Never}}}}`

func TestValidateMirrorsTheAPIServer(t *testing.T) {
	tests := []struct {
		name        string
		input       string
		want        []verdictLine
		wantSkipped int
	}{{
		name: "unknown fields are rejected, with the field probably meant",
		input: `
apiVersion: autoscaling.almanac.dev/v1alpha1
kind: Schedule
metadata: {name: typo, labels: {a: b}, annotation: {x: y}}
spec:
  scaleTargetRef: {name: web}
  minReplicas: 2
  type: Daily
  startTme: "09:00"
  endTime: "17:00"`,
		want: []verdictLine{{Object: "Schedule default/typo", Errors: []admission.ResultError{
			{Field: "metadata.annotation", Type: "FieldValueForbidden", Message: `Forbidden: unknown field "annotation": the Schedule schema has no such field here (did you mean "annotations"?); the API server rejects it under strict field validation, kubectl's default`},
			{Field: "spec.startTme", Type: "FieldValueForbidden", Message: `Forbidden: unknown field "startTme": the Schedule schema has no such field here (did you mean "startTime"?); the API server rejects it under strict field validation, kubectl's default`},
		}, Warnings: []string{}}},
	}, {
		name: "unknown fields deep in the Job template",
		input: `
apiVersion: batch.almanac.dev/v1alpha1
kind: ScheduledJob
metadata: {name: deep}
spec:
  schedule: "@daily"
  jobTemplate: {spec: {template: {spec: {containers: [{name: c, image: busybox, imagePullPolcy: Always}], restartPolicy: Never}}}}`,
		want: []verdictLine{{Object: "ScheduledJob default/deep", Errors: []admission.ResultError{
			{Field: "spec.jobTemplate.spec.template.spec.containers[0].imagePullPolcy", Type: "FieldValueForbidden", Message: `Forbidden: unknown field "imagePullPolcy": the ScheduledJob schema has no such field here (did you mean "imagePullPolicy"?); the API server rejects it under strict field validation, kubectl's default`},
		}, Warnings: []string{}}},
	}, {
		name: "CEL rules run after the mutating webhook, with the API server's messages",
		input: `
apiVersion: autoscaling.almanac.dev/v1alpha1
kind: Schedule
metadata: {name: cel}
spec:
  scaleTargetRef: {name: web}
  minReplicas: 10
  maxReplicas: 3
  type: Daily
  startTime: "9:00"
  endTime: "25:00"`,
		want: []verdictLine{{Object: "Schedule default/cel", Errors: []admission.ResultError{
			{Field: "spec.minReplicas", Type: "FieldValueInvalid", Message: "Invalid value: minReplicas must not be greater than maxReplicas"},
			{Field: "spec.endTime", Type: "FieldValueInvalid", Message: `Invalid value: type Daily takes endTime as HH:mm on a 24-hour clock, e.g. "18:00"`},
		}, Warnings: []string{}}},
	}, {
		name: "schema errors keep the CEL rules from running",
		input: `
apiVersion: autoscaling.almanac.dev/v1alpha1
kind: Schedule
metadata: {name: enum}
spec:
  scaleTargetRef: {name: web}
  minReplicas: 2
  type: Monthly`,
		want: []verdictLine{{Object: "Schedule default/enum", Errors: []admission.ResultError{
			{Field: "spec.type", Type: "FieldValueNotSupported", Message: `Unsupported value: "Monthly": supported values: "Daily", "Weekly", "OneShot", "Cron"`},
			{Field: "<nil>", Type: "FieldValueInvalid", Message: "Invalid value: null: some validation rules were not checked because the object was invalid; correct the existing errors to complete validation"},
		}, Warnings: []string{}}},
	}, {
		name: "metadata is validated",
		input: `
apiVersion: batch.almanac.dev/v1alpha1
kind: EventJob
metadata: {name: Not_A_Name}
spec:
  trigger: {kind: Job, name: up}` + jobTemplateYAML,
		want: []verdictLine{{Object: "EventJob default/Not_A_Name", Errors: []admission.ResultError{
			{Field: "metadata.name", Type: "FieldValueInvalid", Message: `Invalid value: "Not_A_Name": a lowercase RFC 1123 subdomain must consist of lower case alphanumeric characters, '-' or '.', and must start and end with an alphanumeric character (e.g. 'example.com', regex used for validation is '[a-z0-9]([-a-z0-9]*[a-z0-9])?(\.[a-z0-9]([-a-z0-9]*[a-z0-9])?)*')`},
		}, Warnings: []string{}}}, // a schema error ends the request before the validating webhook
	}, {
		name: "an unknown almanac kind",
		input: `
apiVersion: autoscaling.almanac.dev/v1
kind: Schedule
metadata: {name: v1}`,
		want: []verdictLine{{Object: "Schedule default/v1", Errors: []admission.ResultError{{
			Field: "kind", Type: "FieldValueNotSupported",
			Message: `Unsupported value: "autoscaling.almanac.dev/v1 Schedule": the API server has no Schedule in autoscaling.almanac.dev/v1; supported: autoscaling.almanac.dev/v1alpha1 Schedule, autoscaling.almanac.dev/v1alpha1 ScheduledPodAutoscaler`,
		}}, Warnings: []string{}}},
	}, {
		name: "an overlap is reported once, at the later Schedule, as kubectl apply would meet it; other kinds are skipped",
		input: `
apiVersion: apps/v1
kind: Deployment
metadata: {name: web}
---
apiVersion: autoscaling.almanac.dev/v1alpha1
kind: ScheduledPodAutoscaler
metadata: {name: web, namespace: prod}
spec:
  overlapPolicy: Forbid
  horizontalPodAutoscalerSpec: {scaleTargetRef: {kind: Deployment, name: web}, maxReplicas: 10}
---
apiVersion: autoscaling.almanac.dev/v1alpha1
kind: Schedule
metadata: {name: office, namespace: prod}
spec: {scaleTargetRef: {name: web}, minReplicas: 4, type: Daily, startTime: "09:00", endTime: "17:00", timeZone: Asia/Tokyo}
---
apiVersion: autoscaling.almanac.dev/v1alpha1
kind: Schedule
metadata: {name: late, namespace: prod}
spec: {scaleTargetRef: {name: web}, minReplicas: 4, type: Daily, startTime: "16:00", endTime: "18:00", timeZone: Asia/Tokyo}`,
		wantSkipped: 1,
		want: []verdictLine{
			{Object: "ScheduledPodAutoscaler prod/web", Allowed: true, Errors: []admission.ResultError{}, Warnings: []string{}},
			{Object: "Schedule prod/office", Allowed: true, Errors: []admission.ResultError{}, Warnings: []string{}},
			{Object: "Schedule prod/late", Errors: []admission.ResultError{{
				Field: "spec", Type: "FieldValueForbidden",
				Message: `Forbidden: the windows overlap those of Schedule "office", and ScheduledPodAutoscaler "web" has overlapPolicy Forbid: both are active from 2027-01-16 16:00 to 17:00 Asia/Tokyo (2027-01-16 07:00 to 08:00 UTC); move or shorten one of the windows, or set the autoscaler's overlapPolicy to Max`,
			}}, Warnings: []string{}},
		},
	}, {
		// On the API server the Schedules are created before their autoscaler exists, so its
		// overlapPolicy Forbid does not apply to them yet: their overlap is a warning, and the
		// autoscaler is admitted with a warning that its Schedules already overlap.
		name: "an autoscaler later in the input does not forbid overlaps of the Schedules before it",
		input: `
apiVersion: autoscaling.almanac.dev/v1alpha1
kind: Schedule
metadata: {name: office, namespace: prod}
spec: {scaleTargetRef: {name: web}, minReplicas: 4, type: Daily, startTime: "09:00", endTime: "17:00", timeZone: Asia/Tokyo}
---
apiVersion: autoscaling.almanac.dev/v1alpha1
kind: Schedule
metadata: {name: late, namespace: prod}
spec: {scaleTargetRef: {name: web}, minReplicas: 4, type: Daily, startTime: "16:00", endTime: "18:00", timeZone: Asia/Tokyo}
---
apiVersion: autoscaling.almanac.dev/v1alpha1
kind: ScheduledPodAutoscaler
metadata: {name: web, namespace: prod}
spec:
  overlapPolicy: Forbid
  horizontalPodAutoscalerSpec: {scaleTargetRef: {kind: Deployment, name: web}, maxReplicas: 10}`,
		want: []verdictLine{
			{Object: "Schedule prod/office", Allowed: true, Errors: []admission.ResultError{}, Warnings: []string{}},
			{Object: "Schedule prod/late", Allowed: true, Errors: []admission.ResultError{}, Warnings: []string{
				`spec: the windows overlap those of Schedule "office" from 2027-01-16 16:00 to 17:00 Asia/Tokyo (2027-01-16 07:00 to 08:00 UTC); ` +
					`while both are active the largest minReplicas and the largest maxReplicas apply (overlapPolicy Max)`,
			}},
			{Object: "ScheduledPodAutoscaler prod/web", Allowed: true, Errors: []admission.ResultError{}, Warnings: []string{
				`spec.overlapPolicy: Schedules "late" and "office" already overlap (both are active from 2027-01-16 16:00 to 17:00 Asia/Tokyo (2027-01-16 07:00 to 08:00 UTC)); ` +
					`Forbid applies to Schedules created or changed from now on, so change one of them to remove the overlap`,
			}},
		},
	}, {
		name: "an object that was rejected does not exist for the objects after it",
		input: `
apiVersion: autoscaling.almanac.dev/v1alpha1
kind: ScheduledPodAutoscaler
metadata: {name: rollout, namespace: prod}
spec:
  horizontalPodAutoscalerSpec: {scaleTargetRef: {kind: Rollout, name: web}, maxReplicas: 5}
---
apiVersion: autoscaling.almanac.dev/v1alpha1
kind: Schedule
metadata: {name: office, namespace: prod}
spec: {scaleTargetRef: {name: rollout}, minReplicas: 4, type: Daily, startTime: "09:00", endTime: "17:00"}
---
apiVersion: batch.almanac.dev/v1alpha1
kind: ScheduledJob
metadata: {name: every, namespace: prod}
spec:
  schedule: "@every 1h"` + jobTemplateYAML + `
---
apiVersion: batch.almanac.dev/v1alpha1
kind: EventJob
metadata: {name: after-every, namespace: prod}
spec:
  trigger: {kind: ScheduledJob, name: every}` + jobTemplateYAML,
		want: []verdictLine{
			{Object: "ScheduledPodAutoscaler prod/rollout", Errors: []admission.ResultError{{
				Field: "spec.horizontalPodAutoscalerSpec.scaleTargetRef.apiVersion", Type: "FieldValueRequired",
				Message: `Required value: the HorizontalPodAutoscaler needs the API version of kind "Rollout" to find its scale subresource, e.g. "apps/v1" (it is filled in only for Deployment, StatefulSet and ReplicaSet)`,
			}}, Warnings: []string{}},
			{Object: "Schedule prod/office", Allowed: true, Errors: []admission.ResultError{}, Warnings: []string{
				`spec.scaleTargetRef.name: ScheduledPodAutoscaler "rollout" does not exist in namespace "prod": this Schedule changes nothing until it is created`,
			}},
			{Object: "ScheduledJob prod/every", Errors: []admission.ResultError{{
				Field: "spec.schedule", Type: "FieldValueInvalid",
				Message: `Invalid value: "@every 1h": "@every 1h" is not supported: @every counts from when the controller started and ignores the time zone; use a 5-field schedule such as "0 * * * *"`,
			}}, Warnings: []string{}},
			{Object: "EventJob prod/after-every", Allowed: true, Errors: []admission.ResultError{}, Warnings: []string{
				`spec.trigger.name: ScheduledJob "every" does not exist in namespace "prod": the EventJob starts no Job until it exists and one of its Jobs reaches the trigger condition`,
			}},
		},
	}, {
		name: "a cycle is reported at the EventJob that closes it; a CronJob in the input is a trigger that exists",
		input: `
apiVersion: batch.almanac.dev/v1alpha1
kind: EventJob
metadata: {name: a}
spec:
  trigger: {kind: EventJob, name: b}` + jobTemplateYAML + `
---
apiVersion: batch.almanac.dev/v1alpha1
kind: EventJob
metadata: {name: b}
spec:
  trigger: {kind: EventJob, name: a}` + jobTemplateYAML + `
---
apiVersion: batch.almanac.dev/v1alpha1
kind: EventJob
metadata: {name: c}
spec:
  trigger: {kind: CronJob, name: hello}` + jobTemplateYAML + `
---
apiVersion: batch/v1
kind: CronJob
metadata: {name: hello}`,
		wantSkipped: 1,
		want: []verdictLine{
			{Object: "EventJob default/a", Allowed: true, Errors: []admission.ResultError{}, Warnings: []string{}},
			{Object: "EventJob default/b", Errors: []admission.ResultError{{
				Field: "spec.trigger.name", Type: "FieldValueInvalid",
				Message: `Invalid value: "a": this trigger closes a cycle: EventJob "b" triggers on EventJob "a", which triggers on EventJob "b"; each Job would start the next one, forever: trigger on an object outside the cycle`,
			}}, Warnings: []string{}},
			{Object: "EventJob default/c", Allowed: true, Errors: []admission.ResultError{}, Warnings: []string{}},
		},
	}, {
		name: "the migrated AT manifest is moved to at, then rejected as stale",
		input: `
apiVersion: batch.almanac.dev/v1alpha1
kind: ScheduledJob
metadata: {name: at-sample}
spec:
  schedule: "2020-03-21T13:53:55Z"` + jobTemplateYAML,
		want: []verdictLine{{
			Object:   "ScheduledJob default/at-sample",
			Errors:   []admission.ResultError{{Field: "spec.at", Type: "FieldValueInvalid", Message: `Invalid value: "2020-03-21T13:53:55": the run was due at 2020-03-21 13:53:55 UTC and could start until 2020-03-21 14:03:55 UTC (startingDeadlineSeconds: 600), before now (2027-01-15 12:00:00 UTC), so the Job would never run: set at to a future wall time in UTC, e.g. "2027-01-15T13:00"`}},
			Warnings: []string{`spec.schedule: "2020-03-21T13:53:55Z" is a date and time, not a cron schedule: it was moved to spec.at as "2020-03-21T13:53:55", a wall time in UTC`},
		}},
	}}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			report := validateString(t, tt.input)
			if diff := cmp.Diff(tt.want, verdicts(report)); diff != "" {
				t.Errorf("(-want +got):\n%s", diff)
			}
			if report.Summary.Skipped != tt.wantSkipped {
				t.Errorf("skipped = %d, want %d", report.Summary.Skipped, tt.wantSkipped)
			}
		})
	}
}

// runCommand runs `almanac validate` with args and stdin, and returns stdout, stderr and the
// exit status.
func runCommand(t *testing.T, stdin string, args ...string) (string, string, int) {
	t.Helper()
	cmd := NewCommand()
	var stdout, stderr bytes.Buffer
	cmd.SetArgs(args)
	cmd.SetIn(strings.NewReader(stdin))
	cmd.SetOut(&stdout)
	cmd.SetErr(&stderr)
	cmd.SilenceErrors, cmd.SilenceUsage = true, true
	err := cmd.ExecuteContext(context.Background())
	code := 0
	if err != nil {
		var coded *manifest.ExitError
		if !errors.As(err, &coded) {
			code = ExitUsage // cobra's own flag errors; main.go exits 2 for them
		} else {
			code = coded.ExitCode()
		}
		if msg := err.Error(); msg != "" {
			stderr.WriteString("Error: " + msg + "\n")
		}
	}
	return stdout.String(), stderr.String(), code
}

func writeFile(t *testing.T, dir, name, content string) string {
	t.Helper()
	path := filepath.Join(dir, name)
	if err := os.MkdirAll(filepath.Dir(path), 0o755); err != nil {
		t.Fatal(err)
	}
	if err := os.WriteFile(path, []byte(content), 0o600); err != nil {
		t.Fatal(err)
	}
	return path
}

const validSchedule = `apiVersion: autoscaling.almanac.dev/v1alpha1
kind: Schedule
metadata: {name: ok, namespace: prod}
spec: {scaleTargetRef: {name: web}, minReplicas: 2, type: Weekly, startDayOfWeek: fri, endDayOfWeek: mon, startTime: "18:00", endTime: "8:00", timeZone: asia/tokyo}
`

const spaYAML = `apiVersion: autoscaling.almanac.dev/v1alpha1
kind: ScheduledPodAutoscaler
metadata: {name: web, namespace: prod}
spec: {horizontalPodAutoscalerSpec: {scaleTargetRef: {kind: Deployment, name: web}, maxReplicas: 10}}
`

const badZone = `apiVersion: batch.almanac.dev/v1alpha1
kind: ScheduledJob
metadata: {name: bad}
spec:
  schedule: "0 9 * * *"
  timeZone: Europe/Berln` + jobTemplateYAML + "\n"

func TestValidateCommandExitStatus(t *testing.T) {
	dir := t.TempDir()
	ok := writeFile(t, dir, "ok/schedule.yaml", validSchedule+"---\n"+spaYAML)
	writeFile(t, dir, "ok/nested/more.yaml", badZone)
	bad := writeFile(t, dir, "bad.yaml", badZone)
	warns := writeFile(t, dir, "warns.yaml", strings.ReplaceAll(validSchedule+"---\n"+spaYAML, "asia/tokyo", "EST"))
	malformed := writeFile(t, dir, "malformed.yaml", "kind: [unclosed\n")
	examples := filepath.Join("..", "..", "examples")
	// A v1 List in YAML and in JSON: each item is an object of its own.
	list := writeFile(t, dir, "list.yaml", "apiVersion: v1\nkind: List\nitems:\n- "+strings.ReplaceAll(strings.TrimSpace(spaYAML), "\n", "\n  ")+
		"\n- "+strings.ReplaceAll(strings.TrimSpace(badZone), "\n", "\n  ")+"\n")
	jsonList := writeFile(t, dir, "list.json", `{"apiVersion": "v1", "kind": "List", "items": [`+
		`{"apiVersion": "autoscaling.almanac.dev/v1alpha1", "kind": "ScheduledPodAutoscaler", "metadata": {"name": "web"}, "spec": {"horizontalPodAutoscalerSpec": {"scaleTargetRef": {"kind": "Deployment", "name": "web"}, "maxReplicas": 3}}},`+
		`{"apiVersion": "autoscaling.almanac.dev/v1alpha1", "kind": "Schedule", "metadata": {"name": "s"}, "spec": {"scaleTargetRef": {"name": "web"}, "minReplicas": 2, "type": "Daily", "startTime": "9:00", "endTime": "17:00"}}]}`)
	oneShot := writeFile(t, dir, "oneshot.yaml", `apiVersion: autoscaling.almanac.dev/v1alpha1
kind: Schedule
metadata: {name: launch}
spec: {scaleTargetRef: {name: web}, minReplicas: 2, type: OneShot, startTime: "2027-06-01T09:00", endTime: "2027-06-01T17:00"}
`)

	tests := []struct {
		name       string
		stdin      string
		args       []string
		want       int
		wantStdout string // a substring
		wantStderr string // a substring
	}{
		{"examples are admitted", "", []string{"-f", examples, nowFlag}, ExitAdmitted, "0 rejected", ""},
		{"a directory, not recursive", "", []string{"-f", filepath.Join(dir, "ok"), nowFlag}, ExitAdmitted, "2 objects: 2 admitted, 0 rejected, 0 warnings; 0 skipped", ""},
		{"a directory, recursive", "", []string{"-f", filepath.Join(dir, "ok"), "-R", nowFlag}, ExitRejected, "3 objects: 2 admitted, 1 rejected", ""},
		{"a rejected object", "", []string{"-f", bad, nowFlag}, ExitRejected, `error: spec.timeZone: Invalid value: "Europe/Berln"`, ""},
		{"standard input", badZone, []string{"-f", "-", nowFlag}, ExitRejected, "-#0: ScheduledJob default/bad: rejected", ""},
		{"repeated -f", "", []string{"-f", ok, "-f", bad, nowFlag}, ExitRejected, "3 objects: 2 admitted, 1 rejected", ""},
		{"warnings are fine", "", []string{"-f", warns, nowFlag}, ExitAdmitted, "warning: spec.timeZone: EST is a fixed UTC-05:00 offset", ""},
		{"unless they are errors", "", []string{"-f", warns, nowFlag, "--warnings-as-errors"}, ExitRejected, "1 warnings", ""},
		{"a YAML List", "", []string{"-f", list, nowFlag}, ExitRejected, "2 objects: 1 admitted, 1 rejected", ""},
		{"a JSON List", "", []string{"-f", jsonList, nowFlag}, ExitAdmitted, "2 objects: 2 admitted, 0 rejected", ""},
		{"--now before a OneShot's end", "", []string{"-f", oneShot, "--now", "2027-06-01T16:59:00+02:00"}, ExitAdmitted, "1 objects: 1 admitted", ""},
		{"--now after a OneShot's end", "", []string{"-f", oneShot, "--now", "2027-06-01T17:00:00Z"}, ExitRejected, "which is not after now (2027-06-01 17:00 UTC)", ""},
		{"no input", "", []string{nowFlag}, ExitUsage, "", "Error: no input"},
		{"a missing file", "", []string{"-f", filepath.Join(dir, "nope.yaml")}, ExitUsage, "", "no such file"},
		{"malformed YAML", "", []string{"-f", malformed}, ExitUsage, "", "malformed.yaml: document 0"},
		{"a bad --now", "", []string{"-f", ok, "--now", "tomorrow"}, ExitUsage, "", `--now "tomorrow" is not an RFC 3339 time`},
		{"a bad -o", "", []string{"-f", ok, "-o", "yaml"}, ExitUsage, "", `-o "yaml" is not a report format`},
		{"an unknown flag", "", []string{"-f", ok, "--strict"}, ExitUsage, "", "unknown flag"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			stdout, stderr, code := runCommand(t, tt.stdin, tt.args...)
			if code != tt.want {
				t.Errorf("exit status %d, want %d\nstdout:\n%s\nstderr:\n%s", code, tt.want, stdout, stderr)
			}
			if !strings.Contains(stdout, tt.wantStdout) {
				t.Errorf("stdout does not contain %q:\n%s", tt.wantStdout, stdout)
			}
			if !strings.Contains(stderr, tt.wantStderr) {
				t.Errorf("stderr does not contain %q:\n%s", tt.wantStderr, stderr)
			}
		})
	}
}

func TestValidateCommandJSON(t *testing.T) {
	input := validSchedule + "---\n" + spaYAML + "---\n" + badZone + "---\napiVersion: v1\nkind: ConfigMap\nmetadata: {name: c}\n"
	stdout, _, code := runCommand(t, input, "-f", "-", "-o", "json", nowFlag)
	if code != ExitRejected {
		t.Errorf("exit status %d, want %d", code, ExitRejected)
	}
	// Decode into plain maps, so that the test checks the exact shape of the output.
	var got map[string]any
	if err := json.Unmarshal([]byte(stdout), &got); err != nil {
		t.Fatalf("not JSON: %v\n%s", err, stdout)
	}
	want := map[string]any{
		"results": []any{
			map[string]any{"file": "-", "index": 0.0, "apiVersion": "autoscaling.almanac.dev/v1alpha1", "kind": "Schedule", "namespace": "prod", "name": "ok",
				"allowed": true, "errors": []any{}, "warnings": []any{}},
			map[string]any{"file": "-", "index": 1.0, "apiVersion": "autoscaling.almanac.dev/v1alpha1", "kind": "ScheduledPodAutoscaler", "namespace": "prod", "name": "web",
				"allowed": true, "errors": []any{}, "warnings": []any{}},
			map[string]any{"file": "-", "index": 2.0, "apiVersion": "batch.almanac.dev/v1alpha1", "kind": "ScheduledJob", "namespace": "default", "name": "bad",
				"allowed": false, "errors": []any{map[string]any{
					"field": "spec.timeZone", "type": "FieldValueInvalid",
					"message": `Invalid value: "Europe/Berln": "Europe/Berln" is not a known IANA time zone: did you mean "Europe/Berlin"?`,
				}}, "warnings": []any{}},
		},
		"summary":  map[string]any{"objects": 3.0, "rejected": 1.0, "warnings": 0.0, "skipped": 1.0},
		"notes":    []any{admission.PermissionsNotChecked},
		"replaced": []any{},
	}
	if diff := cmp.Diff(want, got); diff != "" {
		t.Errorf("(-want +got):\n%s", diff)
	}
}

// dkuroSchedule is a Schedule of scheduled-pod-autoscaler, which almanac replaces.
const dkuroSchedule = `apiVersion: autoscaling.d-kuro.github.io/v1
kind: Schedule
metadata: {name: nginx-push-notification, namespace: web}
spec:
  scaleTargetRef: {apiVersion: autoscaling.d-kuro.github.io/v1, kind: ScheduledPodAutoscaler, name: nginx}
  minReplicas: 10
  type: Weekly
  startDayOfWeek: Monday
  startTime: "11:50"
  endDayOfWeek: Wednesday
  endTime: "13:00"
`

// TestValidateNamesTheMigrateCommand checks that an object of a replaced system is not only
// skipped: every report format says which command converts it.
func TestValidateNamesTheMigrateCommand(t *testing.T) {
	input := dkuroSchedule + "---\napiVersion: v1\nkind: ConfigMap\nmetadata: {name: c}\n"
	hint := "a Schedule (autoscaling.d-kuro.github.io/v1) of scheduled-pod-autoscaler, which almanac replaces: " +
		"`almanac migrate -f -` converts it into an almanac Schedule with the same behaviour"

	stdout, _, code := runCommand(t, input, "-f", "-", nowFlag)
	if code != ExitAdmitted {
		t.Errorf("exit status %d, want %d (skipped objects are not rejected)", code, ExitAdmitted)
	}
	want := "-#0: Schedule web/nginx-push-notification: skipped: " + hint + "\n" +
		"0 objects: 0 admitted, 0 rejected, 0 warnings; 2 skipped (not almanac kinds)\n"
	if diff := cmp.Diff(want, stdout); diff != "" {
		t.Errorf("text report (-want +got):\n%s", diff)
	}

	stdout, _, _ = runCommand(t, input, "-f", "-", "-o", "json", nowFlag)
	var report struct {
		Replaced []map[string]any `json:"replaced"`
	}
	if err := json.Unmarshal([]byte(stdout), &report); err != nil {
		t.Fatal(err)
	}
	wantJSON := []map[string]any{{"file": "-", "index": 0.0, "apiVersion": "autoscaling.d-kuro.github.io/v1", "kind": "Schedule",
		"namespace": "web", "name": "nginx-push-notification", "hint": hint}}
	if diff := cmp.Diff(wantJSON, report.Replaced); diff != "" {
		t.Errorf("JSON report (-want +got):\n%s", diff)
	}

	stdout, _, _ = runCommand(t, input, "-f", "-", "-o", "junit", nowFlag)
	var suites junitSuites
	if err := xml.Unmarshal([]byte(stdout), &suites); err != nil {
		t.Fatal(err)
	}
	var messages []string
	for _, c := range suites.Suites[0].Cases {
		messages = append(messages, c.Skipped.Message)
	}
	if diff := cmp.Diff([]string{hint, "v1 ConfigMap is not an almanac kind"}, messages); diff != "" {
		t.Errorf("JUnit skipped messages (-want +got):\n%s", diff)
	}
}

func TestValidateCommandJUnit(t *testing.T) {
	input := validSchedule + "---\n" + spaYAML + "---\n" + badZone + "---\napiVersion: v1\nkind: ConfigMap\nmetadata: {name: c}\n"
	stdout, _, code := runCommand(t, input, "-f", "-", "-o", "junit", nowFlag)
	if code != ExitRejected {
		t.Errorf("exit status %d, want %d", code, ExitRejected)
	}
	var got junitSuites
	if err := xml.Unmarshal([]byte(stdout), &got); err != nil {
		t.Fatalf("not JUnit XML: %v\n%s", err, stdout)
	}
	if got.Tests != 4 || got.Failures != 1 || got.Skipped != 1 || len(got.Suites) != 1 || len(got.Suites[0].Cases) != 4 {
		t.Fatalf("counts: %+v", got)
	}
	failed := got.Suites[0].Cases[2]
	if failed.Name != "ScheduledJob default/bad (document 2)" || failed.Failure == nil ||
		!strings.HasPrefix(failed.Failure.Text, `spec.timeZone: Invalid value: "Europe/Berln"`) || failed.Failure.Type != "FieldValueInvalid" {
		t.Errorf("failed case: %+v", failed)
	}
	if skipped := got.Suites[0].Cases[3]; skipped.Skipped == nil || skipped.Skipped.Message != "v1 ConfigMap is not an almanac kind" {
		t.Errorf("skipped case: %+v", skipped)
	}
}

func TestValidateCommandShowDefaulted(t *testing.T) {
	stdout, stderr, code := runCommand(t, validSchedule, "-f", "-", "--show-defaulted", nowFlag)
	if code != ExitAdmitted {
		t.Errorf("exit status %d", code)
	}
	want := `---
# -#0
apiVersion: autoscaling.almanac.dev/v1alpha1
kind: Schedule
metadata:
  name: ok
  namespace: prod
spec:
  endDayOfWeek: Monday
  endTime: "08:00"
  minReplicas: 2
  scaleTargetRef:
    apiVersion: autoscaling.almanac.dev/v1alpha1
    kind: ScheduledPodAutoscaler
    name: web
  startDayOfWeek: Friday
  startTime: "18:00"
  timeZone: Asia/Tokyo
  type: Weekly
`
	if diff := cmp.Diff(want, stdout); diff != "" {
		t.Errorf("stdout (-want +got):\n%s", diff)
	}
	if !strings.Contains(stderr, "-#0: Schedule prod/ok: admitted") {
		t.Errorf("the report is not on stderr:\n%s", stderr)
	}
}

// TestValidateAsUpdate: with --as-update every object is an UPDATE of itself as stored. A
// OneShot window and an at that have passed since their objects were created are admitted
// with a warning (ratcheting), as `kubectl apply` of the unchanged manifests is admitted by the
// API server; overlaps with any Schedule of the input are warnings too, and every object of the
// input exists. Issue 11, finding 2: validate always checked a CREATE, so a GitOps pipeline
// rejected, forever, manifests that the cluster re-admits.
func TestValidateAsUpdate(t *testing.T) {
	input := `
apiVersion: autoscaling.almanac.dev/v1alpha1
kind: Schedule
metadata: {name: launch}
spec:
  scaleTargetRef: {name: web}
  type: OneShot
  startTime: "2026-06-01T10:00"
  endTime: "2026-06-01T18:00"
  minReplicas: 5
---
apiVersion: autoscaling.almanac.dev/v1alpha1
kind: ScheduledPodAutoscaler
metadata: {name: web}
spec:
  overlapPolicy: Forbid
  horizontalPodAutoscalerSpec:
    scaleTargetRef: {kind: Deployment, name: web}
    maxReplicas: 10
---
apiVersion: batch.almanac.dev/v1alpha1
kind: ScheduledJob
metadata: {name: at-sample}
spec:
  schedule: "2020-03-21T13:53:55Z"` + jobTemplateYAML
	docs, err := manifest.Read([]string{"-"}, false, strings.NewReader(input))
	if err != nil {
		t.Fatal(err)
	}
	create, err := admission.Validate(context.Background(), docs, now)
	if err != nil {
		t.Fatal(err)
	}
	if create.Summary.Rejected != 2 {
		t.Fatalf("as creates: %d rejected, want the stale Schedule and ScheduledJob: %+v", create.Summary.Rejected, verdicts(create))
	}
	update, err := admission.ValidateUpdate(context.Background(), docs, now)
	if err != nil {
		t.Fatal(err)
	}
	want := []verdictLine{{
		Object: "Schedule default/launch", Allowed: true, Errors: []admission.ResultError{},
		Warnings: []string{"spec.endTime: the OneShot window ended at 2026-06-01 18:00 UTC: this Schedule will never be active again; delete it when it is no longer needed"},
	}, {
		Object: "ScheduledPodAutoscaler default/web", Allowed: true, Errors: []admission.ResultError{}, Warnings: []string{},
	}, {
		Object: "ScheduledJob default/at-sample", Allowed: true, Errors: []admission.ResultError{},
		Warnings: []string{
			`spec.schedule: "2020-03-21T13:53:55Z" is a date and time, not a cron schedule: it was moved to spec.at as "2020-03-21T13:53:55", a wall time in UTC`,
			"spec.at: the run was due at 2020-03-21 13:53:55 UTC and its starting deadline has passed: this ScheduledJob will not run again; delete it when it is no longer needed",
		},
	}}
	if diff := cmp.Diff(want, verdicts(update)); diff != "" {
		t.Errorf("as updates (-want +got):\n%s", diff)
	}
	stdout, stderr, code := runCommand(t, input, "-f", "-", "--as-update", nowFlag)
	if code != 0 || !strings.Contains(stdout, "3 objects: 3 admitted, 0 rejected, 3 warnings") {
		t.Errorf("almanac validate --as-update: exit %d\n%s%s", code, stdout, stderr)
	}
}

// TestEmptyValuesAreRejected: an explicitly empty timeZone is not UTC, and an empty schedule
// without at never runs; both are rejected with the field and a hint. Issue 11, finding 7:
// both were admitted (timeZone: "" stored as UTC, while " " was rejected).
func TestEmptyValuesAreRejected(t *testing.T) {
	report := validateString(t, `
apiVersion: batch.almanac.dev/v1alpha1
kind: ScheduledJob
metadata: {name: empty-schedule}
spec:
  schedule: ""`+jobTemplateYAML+`
---
apiVersion: batch.almanac.dev/v1alpha1
kind: ScheduledJob
metadata: {name: empty-zone}
spec:
  schedule: "@daily"
  timeZone: ""`+jobTemplateYAML+`
---
apiVersion: autoscaling.almanac.dev/v1alpha1
kind: Schedule
metadata: {name: empty-zone}
spec:
  scaleTargetRef: {name: web}
  type: Daily
  startTime: "09:00"
  endTime: "17:00"
  minReplicas: 2
  timeZone: ""
`)
	emptyZone := admission.ResultError{Field: "spec.timeZone", Type: "FieldValueInvalid",
		Message: `Invalid value: "": timeZone is empty: omit the field for UTC, or write an IANA time zone name such as "Europe/Berlin"`}
	want := []verdictLine{{
		Object: "ScheduledJob default/empty-schedule", Errors: []admission.ResultError{{Field: "spec.schedule", Type: "FieldValueInvalid",
			Message: `Invalid value: "": neither at nor schedule is set, so the Job would never run: set schedule to a cron schedule, e.g. "30 2 * * *", ` +
				`or at to a wall time in the time zone to run it once, e.g. "2027-09-01T10:00"`}}, Warnings: []string{},
	}, {
		Object: "ScheduledJob default/empty-zone", Errors: []admission.ResultError{emptyZone}, Warnings: []string{},
	}, {
		Object: "Schedule default/empty-zone", Errors: []admission.ResultError{emptyZone}, Warnings: []string{},
	}}
	if diff := cmp.Diff(want, verdicts(report)); diff != "" {
		t.Errorf("(-want +got):\n%s", diff)
	}
}

// TestValidateSaysPermissionsAreNotChecked: offline there is no user to ask about, and the
// report says so once (not per object, and not as a failure), only when the input has an
// object that the webhook's permission check covers.
func TestValidateSaysPermissionsAreNotChecked(t *testing.T) {
	const note = "note: " + admission.PermissionsNotChecked + "\n"
	examples := filepath.Join("..", "..", "examples")
	stdout, stderr, code := runCommand(t, "", "-f", examples, nowFlag)
	if code != ExitAdmitted {
		t.Fatalf("exit status %d, want %d\n%s%s", code, ExitAdmitted, stdout, stderr)
	}
	if n := strings.Count(stdout, "note: "); n != 1 || !strings.Contains(stdout, note) {
		t.Errorf("the text report has %d notes, want the permission note once:\n%s", n, stdout)
	}
	// Every object of examples/ is admitted (how many there are changes with the examples).
	if i := strings.Index(stdout, note); i < 0 || !regexp.MustCompile(`^(\d+) objects: (\d+) admitted, 0 rejected`).MatchString(stdout[i+len(note):]) {
		t.Errorf("the note is not right before the summary:\n%s", stdout)
	}

	// Schedules alone: nothing for the permission check, no note.
	stdout, _, _ = runCommand(t, validSchedule, "-f", "-", nowFlag)
	if strings.Contains(stdout, "note: ") {
		t.Errorf("a Schedule alone got a note:\n%s", stdout)
	}

	// JUnit: the XML stays valid; the note goes to standard error, once.
	stdout, stderr, code = runCommand(t, "", "-f", examples, nowFlag, "-o", "junit")
	if code != ExitAdmitted {
		t.Errorf("junit: exit status %d, want %d", code, ExitAdmitted)
	}
	var suites junitSuites
	if err := xml.Unmarshal([]byte(stdout), &suites); err != nil || suites.Failures != 0 {
		t.Errorf("junit: %v, %d failures\n%s", err, suites.Failures, stdout)
	}
	if stderr != note {
		t.Errorf("junit: stderr %q, want the note once", stderr)
	}
}
