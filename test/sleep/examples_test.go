package sleep_test

import (
	"os"
	"path/filepath"
	"strings"
	"testing"

	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"
	"sigs.k8s.io/yaml"

	"github.com/almanac-dev/almanac/test/testenv"
)

// TestExamplesAreAdmitted creates the sleep examples (examples/sleep) through the webhooks:
// both are admitted as written, and stored with their kinds defaulted.
func TestExamplesAreAdmitted(t *testing.T) {
	t.Parallel()
	ns := newNamespace(t, nil)
	files, err := filepath.Glob(filepath.Join(testenv.RepoRoot(), "examples", "sleep", "*.yaml"))
	if err != nil || len(files) != 2 {
		t.Fatalf("examples: %v %v", files, err)
	}
	for _, file := range files {
		data, err := os.ReadFile(file)
		if err != nil {
			t.Fatal(err)
		}
		u := &unstructured.Unstructured{}
		if err := yaml.Unmarshal(data, &u.Object); err != nil {
			t.Fatal(err)
		}
		if u.GetKind() == "Sleep" {
			u.SetNamespace(ns)
		} else {
			u.SetName(u.GetName() + "-" + ns) // cluster-wide: a name of its own
		}
		if err := env.Client.Create(bg, u); err != nil {
			t.Fatalf("%s: %v", filepath.Base(file), err)
		}
		t.Cleanup(func() { _ = env.Client.Delete(bg, u) })
		kinds, _, _ := unstructured.NestedSlice(u.Object, "spec", "kinds")
		if len(kinds) != 7 || !strings.Contains(toJSON(kinds), "ScaledObject") {
			t.Errorf("%s stored with kinds %v", filepath.Base(file), kinds)
		}
	}
}
