// Package schemas checks the JSON schemas in config/schemas (`make schemas`) with
// kubeconform's own validator, offline: the examples pass, and the mistakes a schema can see
// (unknown fields, wrong types, enums, patterns, bounds) are refused with the field named.
// No cluster and no network: kinds outside almanac's groups have no schema here and are
// skipped.
package schemas

import (
	"io"
	"io/fs"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/yannh/kubeconform/pkg/validator"
)

// location is the template the docs (docs/ci.md) give, on the checkout's folder.
const location = "{{ .Group }}/{{ .ResourceKind }}_{{ .ResourceAPIVersion }}.json"

func root(t *testing.T) string {
	t.Helper()
	r, err := filepath.Abs(filepath.Join("..", ".."))
	if err != nil {
		t.Fatal(err)
	}
	return r
}

// newValidator validates against config/schemas only, strictly; ignoreMissing skips the
// kinds that have no schema there (everything outside almanac's groups).
func newValidator(t *testing.T, ignoreMissing bool) validator.Validator {
	t.Helper()
	v, err := validator.New(
		[]string{filepath.Join(root(t), "config", "schemas") + "/" + location},
		validator.Opts{Strict: true, IgnoreMissingSchemas: ignoreMissing},
	)
	if err != nil {
		t.Fatal(err)
	}
	return v
}

func validate(t *testing.T, v validator.Validator, name, manifest string) []validator.Result {
	t.Helper()
	return v.Validate(name, io.NopCloser(strings.NewReader(manifest)))
}

func almanacGroup(apiVersion string) bool {
	group, _, ok := strings.Cut(apiVersion, "/")
	return ok && (group == "almanac.dev" || strings.HasSuffix(group, ".almanac.dev"))
}

var statusNames = map[validator.Status]string{
	validator.Error: "error", validator.Skipped: "skipped", validator.Valid: "valid",
	validator.Invalid: "invalid", validator.Empty: "empty",
}

func describe(r validator.Result) string {
	var b strings.Builder
	b.WriteString(statusNames[r.Status])
	if r.Err != nil {
		b.WriteString(": " + r.Err.Error())
	}
	for _, e := range r.ValidationErrors {
		b.WriteString("\n\t" + e.Path + ": " + e.Msg)
	}
	return b.String()
}

// TestExamplesValid: every almanac object in examples/ (calendars and the output of
// `almanac migrate` included) passes strict validation; the rest (Deployments, the
// originals that `almanac migrate` converts) has no schema here and is skipped.
func TestExamplesValid(t *testing.T) {
	v := newValidator(t, true)
	kinds := map[string]int{}
	err := filepath.WalkDir(filepath.Join(root(t), "examples"), func(p string, d fs.DirEntry, err error) error {
		if err != nil || d.IsDir() || (filepath.Ext(p) != ".yaml" && filepath.Ext(p) != ".yml") {
			return err
		}
		f, err := os.Open(p)
		if err != nil {
			return err
		}
		rel, _ := filepath.Rel(root(t), p)
		for _, r := range v.Validate(rel, f) {
			if r.Status == validator.Empty {
				continue
			}
			sig, err := r.Resource.Signature()
			if err != nil {
				t.Errorf("%s: %v", rel, err)
				continue
			}
			switch {
			case !almanacGroup(sig.Version):
				if r.Status != validator.Skipped {
					t.Errorf("%s: %s %s: want skipped (no schema offline), got %s", rel, sig.Version, sig.Kind, describe(r))
				}
			case r.Status != validator.Valid:
				t.Errorf("%s: %s %s %s: %s", rel, sig.Version, sig.Kind, sig.Name, describe(r))
			default:
				kinds[sig.Version+" "+sig.Kind]++
			}
		}
		return nil
	})
	if err != nil {
		t.Fatal(err)
	}
	for _, k := range []string{
		"batch.almanac.dev/v1alpha1 ScheduledJob",
		"batch.almanac.dev/v1alpha1 EventJob",
		"autoscaling.almanac.dev/v1alpha1 ScheduledPodAutoscaler",
		"autoscaling.almanac.dev/v1alpha1 Schedule",
		"almanac.dev/v1alpha1 ClusterCalendar",
	} {
		if kinds[k] == 0 {
			t.Errorf("no valid %s among the examples; got %v", k, kinds)
		}
	}
	t.Logf("valid almanac objects in examples/: %v", kinds)
}

// TestEverySchemaCompiles: kubeconform silently skips a schema it cannot compile (and
// with IgnoreMissingSchemas the object with it), so each file must give a verdict.
func TestEverySchemaCompiles(t *testing.T) {
	v := newValidator(t, false)
	dir := filepath.Join(root(t), "config", "schemas")
	files, err := filepath.Glob(filepath.Join(dir, "*", "*.json"))
	if err != nil || len(files) == 0 {
		t.Fatalf("no schemas in config/schemas (%v): run `make schemas`", err)
	}
	for _, f := range files {
		group := filepath.Base(filepath.Dir(f))
		kind, version, ok := strings.Cut(strings.TrimSuffix(filepath.Base(f), ".json"), "_")
		if !ok {
			t.Errorf("%s: not <kind>_<version>.json", f)
			continue
		}
		// kubeconform lowercases the kind for the file name; the lowercased kind finds it.
		rs := validate(t, v, f, "apiVersion: "+group+"/"+version+"\nkind: "+kind+"\nmetadata: {name: x}\n")
		if len(rs) != 1 || (rs[0].Status != validator.Valid && rs[0].Status != validator.Invalid) {
			for _, r := range rs {
				t.Errorf("%s: %s", f, describe(r))
			}
		}
	}
}

const scheduledJob = `apiVersion: batch.almanac.dev/v1alpha1
kind: ScheduledJob
metadata:
  name: nightly
spec:
  schedule: "30 2 * * *"
  %s
  jobTemplate:
    spec:
      template:
        spec:
          containers:
          - {name: report, image: busybox}
          restartPolicy: OnFailure
`

// TestRefused: the mistakes a schema can see are refused, and the message names the field.
func TestRefused(t *testing.T) {
	v := newValidator(t, true)
	for _, tc := range []struct {
		name, manifest string
		path, msg      string // the wanted ValidationError: its path and a part of its message
	}{{
		name:     "misspelled field",
		manifest: strings.Replace(scheduledJob, "%s", "timezone: Europe/Berlin", 1),
		path:     "/spec", msg: "'timezone'",
	}, {
		name:     "misspelled top-level field",
		manifest: strings.Replace(strings.Replace(scheduledJob, "spec:\n  schedule", "sepc:\n  schedule", 1), "%s", "", 1),
		path:     "", msg: "'sepc'",
	}, {
		name:     "misspelled field deep in the Job template",
		manifest: strings.Replace(strings.Replace(scheduledJob, "%s", "", 1), "restartPolicy", "restartpolicy", 1),
		path:     "/spec/jobTemplate/spec/template/spec", msg: "'restartpolicy'",
	}, {
		name:     "enum",
		manifest: strings.Replace(scheduledJob, "%s", "concurrencyPolicy: forbid", 1),
		path:     "/spec/concurrencyPolicy", msg: "Allow",
	}, {
		name:     "bound",
		manifest: strings.Replace(scheduledJob, "%s", "successfulJobsHistoryLimit: -1", 1),
		path:     "/spec/successfulJobsHistoryLimit", msg: "minimum",
	}, {
		name: "wrong type: a string minReplicas",
		manifest: `apiVersion: autoscaling.almanac.dev/v1alpha1
kind: ScheduledPodAutoscaler
metadata: {name: nginx}
spec:
  horizontalPodAutoscalerSpec:
    scaleTargetRef: {apiVersion: apps/v1, kind: Deployment, name: nginx}
    minReplicas: "3"
    maxReplicas: 10
`,
		path: "/spec/horizontalPodAutoscalerSpec/minReplicas", msg: "want integer",
	}, {
		name: "pattern",
		manifest: `apiVersion: autoscaling.almanac.dev/v1alpha1
kind: Schedule
metadata: {name: lunch}
spec:
  scaleTargetRef: {name: nginx}
  type: Weekly
  duration: 1 hour
`,
		path: "/spec/duration", msg: "does not match pattern",
	}, {
		name: "a required field is missing",
		manifest: `apiVersion: almanac.dev/v1alpha1
kind: Calendar
metadata: {name: holidays}
spec:
  days:
  - name: New Year
`,
		path: "/spec/days/0", msg: "'date'",
	}} {
		t.Run(tc.name, func(t *testing.T) {
			rs := validate(t, v, tc.name, tc.manifest)
			if len(rs) != 1 {
				t.Fatalf("want 1 result, got %d", len(rs))
			}
			r := rs[0]
			if r.Status != validator.Invalid {
				t.Fatalf("want invalid, got %s", describe(r))
			}
			for _, e := range r.ValidationErrors {
				if e.Path == tc.path && strings.Contains(e.Msg, tc.msg) {
					t.Logf("%s: %s", e.Path, e.Msg)
					return
				}
			}
			t.Errorf("no error at %q containing %q: %s", tc.path, tc.msg, describe(r))
		})
	}
	t.Run("enum in a list, maxItems", func(t *testing.T) {
		r := validate(t, v, "list", `apiVersion: autoscaling.almanac.dev/v1alpha1
kind: Schedule
metadata: {name: lunch}
spec:
  scaleTargetRef: {name: nginx}
  type: Weekly
  daysOfWeek: [Monday, Tuesday, Wednesday, Thursday, Friday, Saturday, Sunday, Mon]
`)[0]
		got := describe(r)
		for _, want := range []string{"/spec/daysOfWeek: maxItems", "/spec/daysOfWeek/7: value must be one of"} {
			if !strings.Contains(got, want) {
				t.Errorf("want %q in: %s", want, got)
			}
		}
	})
}

// TestUnknownKindMissing: a kind (or version) in almanac's groups that has no schema is
// reported missing when missing schemas are not ignored, and only skipped when they are.
func TestUnknownKindMissing(t *testing.T) {
	for _, manifest := range []string{
		"apiVersion: batch.almanac.dev/v1alpha1\nkind: CronTab\nmetadata: {name: x}\nspec: {}\n",
		"apiVersion: batch.almanac.dev/v1\nkind: ScheduledJob\nmetadata: {name: x}\nspec: {}\n",
		"apiVersion: almanac.dev/v1alpha1\nkind: Holiday\nmetadata: {name: x}\n",
	} {
		r := validate(t, newValidator(t, false), "unknown", manifest)[0]
		if r.Status != validator.Error || r.Err == nil || !strings.Contains(r.Err.Error(), "could not find schema") {
			t.Errorf("%s: want an error \"could not find schema\", got %s", manifest, describe(r))
		}
		if r := validate(t, newValidator(t, true), "unknown", manifest)[0]; r.Status != validator.Skipped {
			t.Errorf("%s: with IgnoreMissingSchemas, want skipped, got %s", manifest, describe(r))
		}
	}
}
