package webhooks_test

import (
	"bytes"
	"encoding/json"
	"os"
	"os/exec"
	"path/filepath"
	"testing"
	"time"

	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"
	"sigs.k8s.io/yaml"

	"github.com/almanac-dev/almanac/api/timing"
)

// TestLegacyTimestampsAgree: a timestamp written in a ScheduledJob's schedule (the "AT"
// controller's form) means the same instant to the live webhooks (which move it to at),
// `almanac validate --show-defaulted` and `almanac preview`, run as the real binary. Issue 11,
// finding 6: preview skipped "2027-06-01T10:00:30Z" ("has 1 fields") while admission moved it.
func TestLegacyTimestampsAgree(t *testing.T) {
	almanac := buildAlmanac(t)
	for _, written := range []string{"2027-06-01T10:00:30Z", "2027-06-01T10:00:00+02:00", "2027-06-01T10:00"} {
		t.Run(written, func(t *testing.T) {
			ns := newNamespace(t)
			manifest := `
apiVersion: batch.almanac.dev/v1alpha1
kind: ScheduledJob
metadata: {name: legacy}
spec:
  schedule: "` + written + `"
  timeZone: Asia/Tokyo` + jobTemplate
			live, _, err := create(t, ns, manifest)
			if err != nil {
				t.Fatal(err)
			}
			at, _, _ := unstructured.NestedString(live.Object, "spec", "at")
			stored := instantOf(t, at, "Asia/Tokyo")

			file := filepath.Join(t.TempDir(), "legacy.yaml")
			if err := os.WriteFile(file, []byte(manifest), 0o600); err != nil {
				t.Fatal(err)
			}
			out, err := exec.Command(almanac, "validate", "-f", file, "--show-defaulted", "--now", now.Format(time.RFC3339)).Output()
			if err != nil {
				t.Fatalf("almanac validate: %v", err)
			}
			var defaulted struct {
				Spec struct{ At, Schedule string }
			}
			if err := yaml.Unmarshal(out, &defaulted); err != nil {
				t.Fatal(err)
			}
			if defaulted.Spec.At != at || defaulted.Spec.Schedule != "" {
				t.Errorf("validate stores at %q, schedule %q; the API server stored at %q", defaulted.Spec.At, defaulted.Spec.Schedule, at)
			}

			var stdout, stderr bytes.Buffer
			cmd := exec.Command(almanac, "preview", "-f", file, "-o", "json", "--from", "2027-05-01T00:00:00Z", "--for", "60d")
			cmd.Stdout, cmd.Stderr = &stdout, &stderr
			if err := cmd.Run(); err != nil {
				t.Fatalf("almanac preview: %v\n%s", err, stderr.String())
			}
			var preview struct {
				Jobs []struct{ Runs []string }
			}
			if err := json.Unmarshal(stdout.Bytes(), &preview); err != nil {
				t.Fatal(err)
			}
			if len(preview.Jobs) != 1 || len(preview.Jobs[0].Runs) != 1 || preview.Jobs[0].Runs[0] != stored.Format(time.RFC3339) || stderr.Len() > 0 {
				t.Errorf("preview runs %+v (stderr %q), want one run at %s, where the API server stored at %q", preview.Jobs, stderr.String(), stored.Format(time.RFC3339), at)
			}
		})
	}
}

func instantOf(t *testing.T, wall, zone string) time.Time {
	t.Helper()
	z, err := timing.NormalizeZone(zone)
	if err != nil {
		t.Fatal(err)
	}
	l, err := timing.ParseAt(wall, z.Location)
	if err != nil {
		t.Fatalf("the stored at %q: %v", wall, err)
	}
	return l.In(z.Location)
}
