package migrate_test

import (
	"bytes"
	"context"
	"flag"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/google/go-cmp/cmp"
	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"

	"github.com/almanac-dev/almanac/api/admission"
	"github.com/almanac-dev/almanac/commands/manifest"
	"github.com/almanac-dev/almanac/commands/migrate"
)

var update = flag.Bool("update", false, "rewrite examples/migrate/almanac/ with the current output of almanac migrate")

// repo is the repository root, from this package's folder.
var repo = filepath.Join("..", "..")

// migrateFile runs almanac migrate's conversion on one file and returns its stdout.
func migrateFile(t *testing.T, file string) (string, migrate.Result) {
	t.Helper()
	docs, err := manifest.Read([]string{file}, false, nil)
	if err != nil {
		t.Fatal(err)
	}
	res := migrate.Convert(docs)
	var out bytes.Buffer
	if err := migrate.Write(&out, res.Objects, "yaml"); err != nil {
		t.Fatal(err)
	}
	return out.String(), res
}

// TestExamplesGolden runs almanac migrate on each original manifest in examples/migrate/ (the
// replaced systems' own samples) and compares the output with examples/migrate/almanac/, which
// the README and docs/migrate.md show. Regenerate with `go test ./commands/migrate -update` and
// review the diff. Each conversion must be complete (no errors), each note must be quoted in
// docs/migrate.md, and the output must be admitted by `almanac validate`.
func TestExamplesGolden(t *testing.T) {
	originals, err := filepath.Glob(filepath.Join(repo, "examples", "migrate", "*.yaml"))
	if err != nil || len(originals) != 5 {
		t.Fatalf("want the five systems' samples in examples/migrate/, found %v (%v)", originals, err)
	}
	guide, err := os.ReadFile(filepath.Join(repo, "docs", "migrate.md"))
	if err != nil {
		t.Fatal(err)
	}
	for _, original := range originals {
		t.Run(filepath.Base(original), func(t *testing.T) {
			got, res := migrateFile(t, original)
			if len(res.Errors) > 0 {
				t.Errorf("not every object converted: %q", res.Errors)
			}
			golden := filepath.Join(repo, "examples", "migrate", "almanac", filepath.Base(original))
			if *update {
				if err := os.WriteFile(golden, []byte(got), 0o600); err != nil {
					t.Fatal(err)
				}
			}
			want, err := os.ReadFile(golden)
			if err != nil {
				t.Fatalf("%v (run with -update to create it)", err)
			}
			if diff := cmp.Diff(string(want), got); diff != "" {
				t.Errorf("%s is not what almanac migrate writes (-committed +now); regenerate with -update:\n%s", golden, diff)
			}
			for _, note := range res.Notes {
				if !bytes.Contains(guide, []byte(note)) {
					t.Errorf("docs/migrate.md does not quote the note:\n%s", note)
				}
			}

			// The k8s-at sample's instant is in 2020; validate as of an hour before it.
			now := time.Date(2020, time.March, 21, 13, 0, 0, 0, time.UTC)
			docs, err := manifest.Read([]string{golden}, false, nil)
			if err != nil {
				t.Fatal(err)
			}
			report, err := admission.Validate(context.Background(), docs, now, admission.ReplacedBy(migrate.Hint))
			if err != nil {
				t.Fatal(err)
			}
			for _, r := range report.Results {
				if !r.Allowed || len(r.Warnings) > 0 {
					t.Errorf("almanac validate: %s %s: allowed %v, errors %v, warnings %q", r.Kind, r.Name, r.Allowed, r.Errors, r.Warnings)
				}
			}
			if len(report.Replaced) > 0 {
				t.Errorf("the output still has objects of replaced systems: %+v", report.Replaced)
			}
		})
	}
}

// TestExamplesShowMigratedObjects checks that the objects of examples/ that say they come from a
// replaced system are what almanac migrate makes of that system's sample: the push
// notification Schedule and its autoscaler, kitagry's EventJob with its CronJob, and the k8s-at
// sample (moved from 2020 to 2036 so that it can still be applied).
func TestExamplesShowMigratedObjects(t *testing.T) {
	migrated := map[string]*unstructured.Unstructured{}
	for _, file := range []string{"scheduled-pod-autoscaler.yaml", "kitagry-eventjob.yaml", "k8s-at.yaml"} {
		docs, err := manifest.Read([]string{filepath.Join(repo, "examples", "migrate", "almanac", file)}, false, nil)
		if err != nil {
			t.Fatal(err)
		}
		for _, d := range docs {
			migrated[d.Object.GetKind()+"/"+d.Object.GetName()] = d.Object
		}
	}
	examples, err := manifest.Read([]string{filepath.Join(repo, "examples")}, false, nil)
	if err != nil {
		t.Fatal(err)
	}
	found := map[string]bool{}
	for _, d := range examples {
		key := d.Object.GetKind() + "/" + d.Object.GetName()
		want, ok := migrated[key]
		if !ok {
			continue
		}
		found[key] = true
		got := d.Object.DeepCopy()
		if key == "ScheduledJob/at-sample" {
			at, _, _ := unstructured.NestedString(got.Object, "spec", "at")
			if !strings.HasPrefix(at, "2036-") {
				t.Errorf("examples/%s: at %q, want the migrated instant moved to 2036", filepath.Base(d.File), at)
			}
			_ = unstructured.SetNestedField(got.Object, "2020-"+strings.TrimPrefix(at, "2036-"), "spec", "at")
		}
		if diff := cmp.Diff(want.Object, got.Object); diff != "" {
			t.Errorf("examples/%s: %s differs from what almanac migrate makes of the original (-migrated +example):\n%s", filepath.Base(d.File), key, diff)
		}
	}
	for key := range migrated {
		if !found[key] {
			t.Errorf("examples/ has no %s, which the README shows as migrated", key)
		}
	}
}
