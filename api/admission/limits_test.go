package admission

import (
	"fmt"
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
		"eventjobs spec.fanIn.horizonSeconds":           float64(batchv1alpha1.MaxFanInHorizonSeconds),
		"eventjobs spec.fanIn.windowSeconds":            float64(batchv1alpha1.MaxFanInWindowSeconds),
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

// TestFanInSchemaBounds: the lists of an EventJob's fan-in are bounded in the schema by the
// numbers the reconciler bounds them by in code (a status list bounded only by the schema
// wedges the controller once it passes the bound), and horizonSeconds' minimum is
// MinFanInHorizonSeconds.
func TestFanInSchemaBounds(t *testing.T) {
	data, err := fs.ReadFile(crd.Bases, "bases/batch.almanac.dev_eventjobs.yaml")
	if err != nil {
		t.Fatal(err)
	}
	c := &apiextensionsv1.CustomResourceDefinition{}
	if err := yaml.Unmarshal(data, c); err != nil {
		t.Fatal(err)
	}
	root := c.Spec.Versions[0].Schema.OpenAPIV3Schema
	at := func(path ...string) apiextensionsv1.JSONSchemaProps {
		s := *root
		for _, p := range path {
			if p == "[]" {
				s = *s.Items.Schema
				continue
			}
			s = s.Properties[p]
		}
		return s
	}
	for _, tt := range []struct {
		path []string
		want int64
	}{
		{[]string{"spec", "triggers"}, batchv1alpha1.MaxTriggers},
		{[]string{"status", "fanIn", "sets"}, batchv1alpha1.MaxFanInSets},
		{[]string{"status", "fanIn", "sets", "[]", "members"}, batchv1alpha1.MaxTriggers},
	} {
		if got := at(tt.path...).MaxItems; got == nil || *got != tt.want {
			t.Errorf("%s: maxItems %v, want %d", strings.Join(tt.path, "."), got, tt.want)
		}
	}
	if rules := at("spec", "fanIn", "horizonSeconds").XValidations; len(rules) != 1 || rules[0].Rule != fmt.Sprintf("self >= %d", batchv1alpha1.MinFanInHorizonSeconds) {
		t.Errorf("spec.fanIn.horizonSeconds: rules %v, want self >= %d", rules, batchv1alpha1.MinFanInHorizonSeconds)
	}
	if got := at("status", "fanIn", "sets", "[]", "members", "[]", "trigger").Maximum; got == nil || *got != batchv1alpha1.MaxTriggers-1 {
		t.Errorf("status.fanIn.sets[].members[].trigger: maximum %v, want %d", got, batchv1alpha1.MaxTriggers-1)
	}
}
