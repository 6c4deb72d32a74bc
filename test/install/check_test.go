package install

import (
	"bytes"
	"context"
	"errors"
	"strings"
	"testing"
	"time"

	admissionregistrationv1 "k8s.io/api/admissionregistration/v1"

	batchv1alpha1 "github.com/almanac-dev/almanac/api/batch/v1alpha1"
	"github.com/almanac-dev/almanac/commands/check"
)

// TestCheck runs `almanac check` against a running manager (ready, exit 0), then against
// the same installation with the manager stopped (a clear error naming the webhook and the
// cause, exit 1), with and without --wait.
func TestCheck(t *testing.T) {
	const id = "check"
	paths := []string{"/mutate", "/validate"}
	r := startReplica(t, "a", replicaConfig{id: id, webhooks: paths})
	rule := admissionregistrationv1.Rule{
		APIGroups: []string{batchv1alpha1.GroupVersion.Group}, APIVersions: []string{batchv1alpha1.GroupVersion.Version}, Resources: []string{"scheduledjobs"},
	}
	webhookConfigurations(t, id, r.url("/mutate"), r.url("/validate"), rule, nil)
	opts := check.Options{
		Kubeconfig:                     env.KubeconfigPath,
		Namespace:                      "default",
		MutatingWebhookConfiguration:   id,
		ValidatingWebhookConfiguration: id,
		Timeout:                        30 * time.Second,
		Interval:                       500 * time.Millisecond,
		Wait:                           true,
	}

	var out bytes.Buffer
	if err := check.Run(context.Background(), opts, &out); err != nil {
		t.Fatalf("check against a running manager: %v\n%s", err, out.String())
	}
	t.Logf("ready:\n%s", out.String())
	for _, want := range []string{"✓ API server", "✓ CRDs", "8 established", "✓ Webhooks", "- Certificate", "✓ Admission", "almanac is ready."} {
		if !strings.Contains(out.String(), want) {
			t.Errorf("output lacks %q:\n%s", want, out.String())
		}
	}
	if r.calls.Load() < 2 {
		t.Errorf("the dry-run create called the webhooks %d times, want at least 2 (mutating and validating)", r.calls.Load())
	}

	r.stop()
	for _, wait := range []bool{false, true} {
		out.Reset()
		opts.Wait, opts.Timeout = wait, 2*time.Second
		err := check.Run(context.Background(), opts, &out)
		var ce *check.Error
		if !errors.As(err, &ce) || ce.ExitCode() != check.ExitNotReady {
			t.Fatalf("check against a stopped manager (wait=%v) = %v, want exit code %d\n%s", wait, err, check.ExitNotReady, out.String())
		}
		t.Logf("stopped (wait=%v):\n%s", wait, out.String())
		for _, want := range []string{"✗ Admission", `failed calling webhook "m.check.almanac.dev"`, "connection refused", "hint: no manager replica answers", "almanac is not ready: 1 of 4 checks failed."} {
			if !strings.Contains(out.String(), want) {
				t.Errorf("output (wait=%v) lacks %q:\n%s", wait, want, out.String())
			}
		}
		if wait && !strings.Contains(out.String(), "attempt 1") {
			t.Errorf("with --wait the output shows no retry:\n%s", out.String())
		}
	}

	// A kubeconfig that cannot be read is a usage error.
	out.Reset()
	err := check.Run(context.Background(), check.Options{Kubeconfig: "/does/not/exist"}, &out)
	var ce *check.Error
	if !errors.As(err, &ce) || ce.ExitCode() != check.ExitUsage {
		t.Fatalf("check with a missing kubeconfig = %v, want exit code %d", err, check.ExitUsage)
	}
}
