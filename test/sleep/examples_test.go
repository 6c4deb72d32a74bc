package sleep_test

import (
	"os"
	"path/filepath"
	"strings"
	"sync"
	"testing"
	"time"

	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"
	"k8s.io/client-go/rest"
	"sigs.k8s.io/controller-runtime/pkg/client"
	"sigs.k8s.io/yaml"

	"github.com/almanac-dev/almanac/api/scheme"
	sleepv1alpha1 "github.com/almanac-dev/almanac/api/sleep/v1alpha1"
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

// warnings collects the warnings the API server returns.
type warnings struct {
	mu  sync.Mutex
	got []string
}

func (w *warnings) HandleWarningHeader(_ int, _ string, text string) {
	w.mu.Lock()
	defer w.mu.Unlock()
	w.got = append(w.got, text)
}

// TestSelectingNothingWarns: a Sleep whose selector selects no workload of its kinds now is
// admitted with a warning that says so; one that selects a Deployment is not.
func TestSelectingNothingWarns(t *testing.T) {
	t.Parallel()
	ns := newNamespace(t, nil)
	w := &warnings{}
	cfg := rest.CopyConfig(env.Config)
	cfg.WarningHandler = w
	c, err := client.New(cfg, client.Options{Scheme: scheme.Scheme})
	if err != nil {
		t.Fatal(err)
	}
	spec := sleepv1alpha1.SleepSpec{Asleep: []sleepv1alpha1.Window{window(monday, monday.Add(time.Hour))}, Selector: metaSelectorPtr("team", "a")}
	if err := c.Create(bg, newSleep(ns, "none", spec)); err != nil {
		t.Fatal(err)
	}
	if got := strings.Join(w.got, "\n"); !strings.Contains(got, "spec.selector: no Deployment, StatefulSet, ReplicaSet, CronJob, ScheduledJob, EventJob, ScaledObject in namespace") {
		t.Errorf("warnings %q", got)
	}
	create(t, deployment(ns, "web", 1, map[string]string{"team": "a"}))
	w.got = nil
	if err := c.Create(bg, newSleep(ns, "web", spec)); err != nil {
		t.Fatal(err)
	}
	if len(w.got) != 0 {
		t.Errorf("warnings %q for a selector that selects web", w.got)
	}
}
