package validate

import (
	"context"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/google/go-cmp/cmp"
	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"

	"github.com/almanac-dev/almanac/api/admission"
	"github.com/almanac-dev/almanac/commands/manifest"
)

// FuzzValidate runs `almanac validate`'s whole pipeline (strict decoding, schema defaulting,
// the mutating webhook's normalization, OpenAPI schema and CEL validation, the validating
// webhook) on arbitrary manifests of every kind: it never panics or fails internally, and
// normalization is idempotent end to end: an admitted object, validated again as it would be
// stored, is admitted again and stored unchanged.
func FuzzValidate(f *testing.F) {
	for _, pattern := range []string{"../../examples/*.yaml", "../../test/webhooks/testdata/parity/*.yaml"} {
		files, _ := filepath.Glob(pattern)
		for _, file := range files {
			data, err := os.ReadFile(file)
			if err != nil {
				f.Fatal(err)
			}
			for _, doc := range strings.Split(string(data), "\n---\n") {
				f.Add(doc)
			}
		}
	}
	f.Add("apiVersion: batch.almanac.dev/v1alpha1\nkind: ScheduledJob\nmetadata: {name: tz}\nspec:\n  schedule: \"TZ=\"" + jobTemplateYAML)
	f.Add("apiVersion: autoscaling.almanac.dev/v1alpha1\nkind: Schedule\nmetadata: {generateName: g-}\nspec: {scaleTargetRef: {name: w}, minReplicas: 1, type: Cron, schedule: \"CRON_TZ=\", duration: 1h, timeZone: \"TZ=\"}")
	f.Fuzz(func(t *testing.T, input string) {
		docs, err := manifest.Read([]string{"-"}, false, strings.NewReader(input))
		if err != nil {
			return
		}
		report, err := admission.Validate(context.Background(), docs, now)
		if err != nil {
			t.Fatalf("Validate failed: %v", err)
		}
		for _, r := range report.Results {
			if r.Allowed != (len(r.Errors) == 0) {
				t.Fatalf("%s %s: allowed %v with errors %v", r.Kind, r.Name, r.Allowed, r.Errors)
			}
			if !r.Allowed {
				continue
			}
			stored := &unstructured.Unstructured{Object: r.Defaulted}
			raw, err := stored.MarshalJSON()
			if err != nil {
				t.Fatal(err)
			}
			again, err := admission.Validate(context.Background(), []manifest.Document{{File: "-", Object: stored, Raw: raw}}, now)
			if err != nil {
				t.Fatalf("Validate failed on the stored form: %v", err)
			}
			if len(again.Results) != 1 || !again.Results[0].Allowed {
				t.Fatalf("%s %s was admitted, but its stored form is not: %+v", r.Kind, r.Name, again.Results)
			}
			if diff := cmp.Diff(r.Defaulted, again.Results[0].Defaulted); diff != "" {
				t.Fatalf("%s %s: normalizing the stored form changed it (-first +second):\n%s", r.Kind, r.Name, diff)
			}
		}
	})
}
