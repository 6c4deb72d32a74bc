package admission

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
