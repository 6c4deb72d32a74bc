package main

import (
	"errors"
	"fmt"
	"net/url"
	"os"
	"path/filepath"
	"regexp"
	"slices"
	"strings"
	"testing"

	"github.com/google/go-containerregistry/pkg/name"
	"sigs.k8s.io/yaml"
)

// validateArtifactHub checks the artifacthub.io annotations of a Chart.yaml as Artifact Hub
// reads them (its Helm tracker, internal/tracker/source/helm, EnrichPackageFromAnnotations,
// which `ah lint` runs), against the documented format
// (https://artifacthub.io/docs/topics/annotations/helm/), a little stricter: unknown keys
// and unknown fields are errors, and every entry's documented fields must be set.
func validateArtifactHub(annotations map[string]string) []error {
	var errs []error
	fail := func(key, format string, args ...any) {
		errs = append(errs, fmt.Errorf("%s: %s", key, fmt.Sprintf(format, args...)))
	}
	for key, v := range annotations {
		if !strings.HasPrefix(key, "artifacthub.io/") {
			continue
		}
		switch key {
		case "artifacthub.io/category":
			if !slices.Contains([]string{"ai-machine-learning", "database", "integration-delivery", "monitoring-logging",
				"networking", "security", "storage", "streaming-messaging", "skip-prediction"}, v) {
				fail(key, "%q is not one of Artifact Hub's categories", v)
			}
		case "artifacthub.io/changes":
			var plain []string
			if yaml.UnmarshalStrict([]byte(v), &plain) == nil {
				continue
			}
			var changes []struct {
				Kind        string   `json:"kind"`
				Description string   `json:"description"`
				Links       []ahLink `json:"links"`
			}
			if err := yaml.UnmarshalStrict([]byte(v), &changes); err != nil {
				fail(key, "neither a list of strings nor of {kind, description, links}: %v", err)
				continue
			}
			for i, c := range changes {
				if !slices.Contains([]string{"added", "changed", "deprecated", "removed", "fixed", "security"}, c.Kind) || c.Description == "" {
					fail(key, "entry %d: kind %q (added, changed, deprecated, removed, fixed or security) and a description are required", i, c.Kind)
				}
			}
		case "artifacthub.io/crds":
			var crds []ahCRD
			if err := yaml.UnmarshalStrict([]byte(v), &crds); err != nil {
				fail(key, "not a list of {kind, version, name, displayName, description}: %v", err)
				continue
			}
			for i, c := range crds {
				if c.Kind == "" || c.Version == "" || c.Name == "" || c.DisplayName == "" || c.Description == "" {
					fail(key, "entry %d (%+v) lacks one of kind, version, name, displayName, description", i, c)
				}
			}
		case "artifacthub.io/crdsExamples":
			var examples []map[string]any
			if err := yaml.UnmarshalStrict([]byte(v), &examples); err != nil {
				fail(key, "not a list of objects: %v", err)
				continue
			}
			for i, e := range examples {
				meta, _ := e["metadata"].(map[string]any)
				if e["apiVersion"] == nil || e["kind"] == nil || meta == nil || meta["name"] == nil {
					fail(key, "entry %d has no apiVersion, kind or metadata.name", i)
				}
			}
		case "artifacthub.io/images":
			var images []ahImage
			if err := yaml.UnmarshalStrict([]byte(v), &images); err != nil {
				fail(key, "not a list of {name, image, whitelisted, platforms}: %v", err)
				continue
			}
			for i, img := range images {
				// Artifact Hub parses each reference with go-containerregistry, as here.
				if _, err := name.ParseReference(img.Image); err != nil || img.Name == "" {
					fail(key, "entry %d: name %q, image %q: %v", i, img.Name, img.Image, err)
				}
			}
		case "artifacthub.io/license":
			if !regexp.MustCompile(`^[A-Za-z0-9][A-Za-z0-9.+-]*$`).MatchString(v) {
				fail(key, "%q is not an SPDX identifier", v)
			}
		case "artifacthub.io/links":
			var links []ahLink
			if err := yaml.UnmarshalStrict([]byte(v), &links); err != nil {
				fail(key, "not a list of {name, url}: %v", err)
				continue
			}
			for i, l := range links {
				if u, err := url.Parse(l.URL); err != nil || u.Scheme != "https" || u.Host == "" || l.Name == "" {
					fail(key, "entry %d: name %q and an https url are required, got %q", i, l.Name, l.URL)
				}
			}
		default:
			fail(key, "not an annotation Artifact Hub reads (a typo?)")
		}
	}
	return errs
}

func readChartAnnotations(t *testing.T, path string) map[string]string {
	t.Helper()
	data, err := os.ReadFile(path)
	if err != nil {
		t.Fatal(err)
	}
	var chart struct {
		Annotations map[string]string `json:"annotations"`
	}
	if err := yaml.Unmarshal(data, &chart); err != nil {
		t.Fatal(err)
	}
	return chart.Annotations
}

// TestArtifactHubAnnotations checks the chart's annotations in Artifact Hub's format, and
// that they list every CRD of config/ with an example and the image of the default values.
func TestArtifactHubAnnotations(t *testing.T) {
	annotations := readChartAnnotations(t, "../../charts/almanac/Chart.yaml")
	for _, err := range validateArtifactHub(annotations) {
		t.Error(err)
	}
	crds, err := readCRDs("../../config")
	if err != nil {
		t.Fatal(err)
	}
	var listed []ahCRD
	if err := yaml.Unmarshal([]byte(annotations["artifacthub.io/crds"]), &listed); err != nil {
		t.Fatal(err)
	}
	var examples []map[string]any
	if err := yaml.Unmarshal([]byte(annotations["artifacthub.io/crdsExamples"]), &examples); err != nil {
		t.Fatal(err)
	}
	if len(listed) != len(crds) || len(examples) != len(crds) {
		t.Errorf("config/crd/bases has %d CRDs; the annotations list %d and %d examples", len(crds), len(listed), len(examples))
	}
	for _, c := range crds {
		if !slices.ContainsFunc(listed, func(l ahCRD) bool { return l.Name == c.Name && l.Kind == c.Spec.Names.Kind }) {
			t.Errorf("artifacthub.io/crds does not list %s", c.Name)
		}
		if !slices.ContainsFunc(examples, func(e map[string]any) bool { return e["kind"] == c.Spec.Names.Kind }) {
			t.Errorf("artifacthub.io/crdsExamples has no %s", c.Spec.Names.Kind)
		}
	}
	var images []ahImage
	if err := yaml.Unmarshal([]byte(annotations["artifacthub.io/images"]), &images); err != nil {
		t.Fatal(err)
	}
	values, err := os.ReadFile("../../charts/almanac/values.yaml")
	if err != nil {
		t.Fatal(err)
	}
	if len(images) != 1 || !strings.Contains(string(values), "repository: "+strings.Split(images[0].Image, ":")[0]) {
		t.Errorf("artifacthub.io/images is %+v; want the one image of values.yaml's image.repository", images)
	}
}

// TestValidateArtifactHubRefuses shows that the format check above catches the mistakes it
// is there for.
func TestValidateArtifactHubRefuses(t *testing.T) {
	for name, annotations := range map[string]map[string]string{
		"typo in key":        {"artifacthub.io/crd": "- kind: A"},
		"crds missing field": {"artifacthub.io/crds": "- kind: A\n  version: v1\n  name: as.example.com\n  displayName: A\n"},
		"crds not a list":    {"artifacthub.io/crds": "kind: A"},
		"example no name":    {"artifacthub.io/crdsExamples": "- apiVersion: example.com/v1\n  kind: A\n"},
		"bad image":          {"artifacthub.io/images": "- name: almanac\n  image: 'ghcr.io/Almanac:'\n"},
		"image unknown key":  {"artifacthub.io/images": "- name: almanac\n  image: ghcr.io/a/b:1\n  tag: 1\n"},
		"http link":          {"artifacthub.io/links": "- name: docs\n  url: http://example.com\n"},
		"license":            {"artifacthub.io/license": "Apache 2.0"},
		"category":           {"artifacthub.io/category": "scheduling"},
		"change kind":        {"artifacthub.io/changes": "- kind: breaking\n  description: x\n"},
	} {
		if errs := validateArtifactHub(annotations); len(errs) == 0 {
			t.Errorf("%s: %v passed", name, annotations)
		}
	}
	if errs := validateArtifactHub(map[string]string{"artifacthub.io/changes": "- Added a thing\n"}); len(errs) > 0 {
		t.Errorf("a plain list of changes is valid: %v", errs)
	}
}

// TestChartYAMLFollowsSources: a bumped appVersion changes the image, a kind without an
// example is refused, and the rest of Chart.yaml is kept as written.
func TestChartYAMLFollowsSources(t *testing.T) {
	dir := t.TempDir()
	chart, examples := filepath.Join(dir, "chart"), filepath.Join(dir, "examples")
	for _, d := range []string{chart, examples} {
		if err := os.MkdirAll(d, 0o755); err != nil {
			t.Fatal(err)
		}
	}
	write := func(path, content string) {
		t.Helper()
		if err := os.WriteFile(path, []byte(content), 0o644); err != nil {
			t.Fatal(err)
		}
	}
	write(filepath.Join(chart, "Chart.yaml"), "apiVersion: v2\nname: x\nversion: 1.0.0\nappVersion: \"9.9.9\"\nhome: https://example.com/x\n# kept\nannotations:\n  artifacthub.io/license: MIT\n")
	write(filepath.Join(chart, "values.yaml"), "image:\n  repository: registry.example.com/almanac\n  tag: \"\"\n")
	_, err := ChartYAML(chart, "../../config", examples)
	if err == nil || !strings.Contains(err.Error(), "examples/ has no") {
		t.Fatalf("with no examples: %v, want a refusal naming the missing kind", err)
	}
	real, err := filepath.Glob("../../examples/*.yaml")
	if err != nil {
		t.Fatal(err)
	}
	for _, p := range append(real, "../../examples/calendars/de-berlin-holidays.yaml", "../../examples/sleep/office-hours.yaml", "../../examples/sleep/nights-and-weekends.yaml") {
		b, err := os.ReadFile(p)
		if err != nil {
			t.Fatal(err)
		}
		write(filepath.Join(examples, filepath.Base(p)), string(b))
	}
	got, err := ChartYAML(chart, "../../config", examples)
	if err != nil {
		t.Fatal(err)
	}
	for _, want := range []string{"name: x\n", "# kept\n", "image: registry.example.com/almanac:9.9.9", "artifacthub.io/license: Apache-2.0"} {
		if !strings.Contains(string(got), want) {
			t.Errorf("generated Chart.yaml lacks %q:\n%s", want, got)
		}
	}
	if strings.Contains(string(got), "MIT") {
		t.Errorf("the old annotations block was kept:\n%s", got)
	}
	// Generating twice gives the same file.
	write(filepath.Join(chart, "Chart.yaml"), string(got))
	again, err := ChartYAML(chart, "../../config", examples)
	if err != nil {
		t.Fatal(err)
	}
	if string(again) != string(got) {
		t.Errorf("a second run changed Chart.yaml:\n%s", again)
	}
	var chartDoc struct {
		Annotations map[string]string `json:"annotations"`
	}
	if err := yaml.Unmarshal(got, &chartDoc); err != nil {
		t.Fatal(err)
	}
	if errs := validateArtifactHub(chartDoc.Annotations); len(errs) > 0 {
		t.Error(errors.Join(errs...))
	}
}
