package plugin_test

import (
	"bytes"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"sigs.k8s.io/yaml"

	"github.com/almanac-dev/almanac/commands/preview"
)

// TestPreviewCluster: `almanac preview --cluster -n NS` draws, from the live objects, the
// timeline that `almanac preview -f` draws from the manifests they were created from: the same
// JSON, byte for byte, over a range with a calendar's skip, a window and a missing calendar.
func TestPreviewCluster(t *testing.T) {
	ns := env.NewNamespace(t, "preview")
	createObjects(t, ns)
	var manifests bytes.Buffer
	for _, o := range objects(ns) {
		data, err := yaml.Marshal(o)
		if err != nil {
			t.Fatal(err)
		}
		manifests.WriteString("---\n")
		manifests.Write(data)
	}
	file := filepath.Join(t.TempDir(), "objects.yaml")
	if err := os.WriteFile(file, manifests.Bytes(), 0o600); err != nil {
		t.Fatal(err)
	}
	rng := []string{"--from", "2030-12-23T00:00:00Z", "--to", "2030-12-27T00:00:00Z"}
	for _, format := range []string{"json", "text"} {
		fromFile, _, err := runPreview(t, append([]string{"-f", file, "-o", format}, rng...)...)
		if err != nil {
			t.Fatalf("preview -f -o %s: %v", format, err)
		}
		live, warnings, err := runPreview(t, append([]string{"--cluster", "--kubeconfig", env.KubeconfigPath, "-n", ns, "-o", format}, rng...)...)
		if err != nil {
			t.Fatalf("preview --cluster -o %s: %v", format, err)
		}
		// The notes on Calendar nope, which neither holds, say where it is missing: in the
		// input (-f) or in the cluster. Everything else is the same.
		if !strings.Contains(live, "does not exist in the cluster") || !strings.Contains(fromFile, "is not in the input") {
			t.Errorf("preview -o %s: the notes do not say where Calendar nope is missing:\n--cluster:\n%s\n-f:\n%s", format, live, fromFile)
		}
		if withoutNotes(live) != withoutNotes(fromFile) {
			t.Errorf("preview --cluster -o %s differs from preview -f of the same objects:\n--cluster:\n%s\n-f:\n%s", format, live, fromFile)
		}
		if format == "json" {
			for _, want := range []string{`"name": "web"`, `"reason": "Christmas Eve (Calendar holidays)"`, `"name": "report"`, `"2030-12-25T08:00:00Z"`} {
				if !strings.Contains(live, want) {
					t.Errorf("preview --cluster -o json lacks %s:\n%s", want, live)
				}
			}
			if !strings.Contains(warnings, "spec.calendars.skip[0]: Calendar nope (namespace \""+ns+"\") does not exist in the cluster") {
				t.Errorf("preview --cluster does not say that Calendar nope does not exist in the cluster:\n%s", warnings)
			}
		}
	}
	_, _, err := runPreview(t, "--cluster", "-f", file)
	wantExit(t, err, 2, "--cluster and -f both given")
	_, _, err = runPreview(t, "-f", file, "-n", ns)
	wantExit(t, err, 2, "are for --cluster")
}

// withoutNotes is a preview without the lines of its notes on Calendar nope.
func withoutNotes(preview string) string {
	var keep []string
	for _, l := range strings.Split(preview, "\n") {
		if !strings.Contains(l, "spec.calendars.skip[0]: Calendar nope") {
			keep = append(keep, l)
		}
	}
	return strings.Join(keep, "\n")
}

// runPreview runs the `almanac preview` command with args and returns its standard output and
// error.
func runPreview(t *testing.T, args ...string) (string, string, error) {
	t.Helper()
	cmd := preview.NewCommand()
	var out, errOut bytes.Buffer
	cmd.SetArgs(args)
	cmd.SetOut(&out)
	cmd.SetErr(&errOut)
	cmd.SilenceUsage, cmd.SilenceErrors = true, true
	err := cmd.Execute()
	return out.String(), errOut.String(), err
}
