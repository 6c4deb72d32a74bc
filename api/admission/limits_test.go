package webhooks

import (
	"io/fs"
	"sort"
	"strings"
	"testing"

	"github.com/google/go-cmp/cmp"
	apiextensionsv1 "k8s.io/apiextensions-apiserver/pkg/apis/apiextensions/v1"
	"sigs.k8s.io/yaml"

	batchv1alpha1 "github.com/almanac-dev/almanac/api/batch/v1alpha1"
	"github.com/almanac-dev/almanac/config/crd"
)

// TestSchemaMaxima: every number of a ScheduledJob's and an EventJob's spec that almanac
// computes with (outside the Job template, which the Job API checks) has a schema maximum, and
// the maxima are those of api/batch/v1alpha1 (the kubebuilder markers repeat the numbers).
func TestSchemaMaxima(t *testing.T) {
	want := map[string]float64{
		"scheduledjobs spec.startingDeadlineSeconds":    float64(batchv1alpha1.MaxStartingDeadlineSeconds),
		"scheduledjobs spec.successfulJobsHistoryLimit": float64(batchv1alpha1.MaxJobsHistoryLimit),
		"scheduledjobs spec.failedJobsHistoryLimit":     float64(batchv1alpha1.MaxJobsHistoryLimit),
		"eventjobs spec.successfulJobsHistoryLimit":     float64(batchv1alpha1.MaxJobsHistoryLimit),
		"eventjobs spec.failedJobsHistoryLimit":         float64(batchv1alpha1.MaxJobsHistoryLimit),
	}
	got := map[string]float64{}
	err := fs.WalkDir(crd.Bases, ".", func(path string, d fs.DirEntry, err error) error {
		if err != nil || d.IsDir() || !strings.HasPrefix(d.Name(), "batch.") {
			return err
		}
		data, err := fs.ReadFile(crd.Bases, path)
		if err != nil {
			return err
		}
		c := &apiextensionsv1.CustomResourceDefinition{}
		if err := yaml.Unmarshal(data, c); err != nil {
			return err
		}
		spec := c.Spec.Versions[0].Schema.OpenAPIV3Schema.Properties["spec"]
		var walk func(prefix string, s apiextensionsv1.JSONSchemaProps)
		walk = func(prefix string, s apiextensionsv1.JSONSchemaProps) {
			names := make([]string, 0, len(s.Properties))
			for name := range s.Properties {
				names = append(names, name)
			}
			sort.Strings(names)
			for _, name := range names {
				p := s.Properties[name]
				if prefix == "spec" && name == "jobTemplate" {
					continue
				}
				switch p.Type {
				case "integer", "number":
					key := c.Spec.Names.Plural + " " + prefix + "." + name
					if p.Maximum == nil {
						t.Errorf("%s has no schema maximum", key)
						continue
					}
					got[key] = *p.Maximum
				case "object":
					walk(prefix+"."+name, p)
				}
			}
		}
		walk("spec", spec)
		return nil
	})
	if err != nil {
		t.Fatal(err)
	}
	if diff := cmp.Diff(want, got); diff != "" {
		t.Errorf("schema maxima (-want +got):\n%s", diff)
	}
}

// TestStartingDeadlineBeyondTheMaximum: `almanac validate` refuses a startingDeadlineSeconds
// above the maximum with the schema's message (the field path and the limit), as the API
// server does (test/crds, test/webhooks' parity corpus), and admits the maximum.
func TestStartingDeadlineBeyondTheMaximum(t *testing.T) {
	sj := func(name, deadline string) string {
		return `
---
apiVersion: batch.almanac.dev/v1alpha1
kind: ScheduledJob
metadata: {name: ` + name + `}
spec:
  schedule: "* * * * *"
  startingDeadlineSeconds: ` + deadline + jobTemplateYAML
	}
	report := validateString(t, sj("forever", "9999999999")+sj("longest", "315360000")+sj("overflowing", "9223372036854775807"))
	want := []verdictLine{{
		Object: "ScheduledJob default/forever",
		Errors: []ResultError{{Field: "spec.startingDeadlineSeconds", Type: "FieldValueInvalid",
			Message: "Invalid value: 9999999999: spec.startingDeadlineSeconds in body should be less than or equal to 315360000"}},
		Warnings: []string{},
	}, {
		Object: "ScheduledJob default/longest", Allowed: true, Errors: []ResultError{}, Warnings: []string{},
	}, {
		Object: "ScheduledJob default/overflowing",
		Errors: []ResultError{{Field: "spec.startingDeadlineSeconds", Type: "FieldValueInvalid",
			Message: "Invalid value: 9223372036854775807: spec.startingDeadlineSeconds in body should be less than or equal to 315360000"}},
		Warnings: []string{},
	}}
	if diff := cmp.Diff(want, verdicts(report)); diff != "" {
		t.Errorf("verdicts (-want +got):\n%s", diff)
	}
}
