// Package bench_test measures almanac as users run it, next to the limit or the peer it
// should be compared with, in one run, and prints one table (`make bench`).
//
// Everything runs for real: a kube-apiserver and etcd (test/testenv), the `almanac manager`
// binary built from this checkout and started as the chart starts it (leader election,
// self-managed webhook certificates, the webhooks in the API server's path), and, for the
// slot burst, kube-controller-manager's CronJob controller (`hack/envtest.sh --with-kcm`).
// The harness sees every write on a watch, as `kubectl get -w` would; almanac, the raw client
// and the peer are all timed the same way, from the instant that should trigger them to the
// change arriving on that watch.
//
// The figures (each a Benchmark, each adding a row):
//
//   - boundary burst: N autoscalers share a boundary → each HPA's new bounds seen; the limit
//     is N server-side-apply patches of other HPAs fired at once by a bare client with the
//     manager's client settings and as many workers as the autoscaler controller has;
//   - slot burst: N ScheduledJobs and N CronJobs on `* * * * *` in UTC → each Job seen, from
//     the slot's instant;
//   - trigger burst: N upstream Jobs complete at once → each EventJob's Job seen; the limit is
//     the same status writes, each followed at once by a Job create from a bare client;
//   - scale: N autoscalers × 5 Schedules, the manager started cold → converged; the floor is
//     the writes almanac must make (the HPAs and the statuses) issued by a bare client at the
//     manager's concurrency; the manager's peak resident memory; writes while quiet;
//   - admission: a server-side dry-run create of a Schedule whose autoscaler has
//     overlapPolicy Forbid and 99 other Schedules (the most it may have), with the webhooks in
//     the path and without; the floors are the same create through a pair of no-op webhooks,
//     and through a pair whose mutating webhook answers with the patch almanac's does;
//   - tenants: what a tenant's Schedules cost, as admission latency and manager CPU: 40
//     Schedules with touching one-minute windows that open every hour, 40 that open every
//     other minute (refused), and the same stored past admission, next to 40 ordinary ones
//     (windows that open once a day), under each overlap policy, and the memo of overlaps on
//     and off.
//   - write cost: the API server's CPU per request for an autoscaler's status patch and an
//     HPA apply, each issued alone, the floor under the boundary figure's CPU ratio.
//   - noisy neighbour: N autoscalers share a boundary on an API server of its own with 30
//     seats, the manager running as the chart's ServiceAccount, while other tenants'
//     ServiceAccounts flood it with lists; quiet, noisy, and both again with the chart's
//     FlowSchema and PriorityLevelConfiguration installed, three runs of each (noisy_test.go).
//
// Sizes come from the environment (ALMANAC_BENCH_*, see sizes); `make bench` runs every
// figure once at its default size. Profiles of the manager (CPU, during each burst) go to
// ALMANAC_BENCH_PROFILES (default: a temporary folder, printed under the table), and the
// table goes to ALMANAC_BENCH_MARKDOWN as Markdown when set.
//
// TestBenchHarnessSmoke runs every figure at a tiny size in `go test ./...`, so that the
// harness cannot rot; like every test, it asserts nothing about speed.
package bench_test

import (
	"context"
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"testing"

	"go.uber.org/zap/zapcore"
	admissionregistrationv1 "k8s.io/api/admissionregistration/v1"
	corev1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/client-go/rest"
	ctrl "sigs.k8s.io/controller-runtime"
	"sigs.k8s.io/controller-runtime/pkg/client"
	"sigs.k8s.io/controller-runtime/pkg/log/zap"

	"github.com/almanac-dev/almanac/certs"
	"github.com/almanac-dev/almanac/test/testenv"
)

// systemNamespace is where the manager "runs": its CA Secret and its leader Lease.
const systemNamespace = "almanac-system"

// noWebhooksLabel on a namespace keeps the API server from calling almanac's webhooks for
// objects in it: the admission figure's "without", and the scale figure's bulk creates.
const noWebhooksLabel = "bench.almanac.dev/no-webhooks"

var (
	env *testenv.Env
	// almanacBinary is the manager under test: built from this checkout, or
	// ALMANAC_BENCH_BINARY (to measure another build with the same harness).
	almanacBinary string
	// webhookPort is where the installed webhook configurations call the manager.
	webhookPort int
	// workDir holds the processes' logs; profileDir the CPU profiles.
	workDir, profileDir string
	table               = &results{}
)

func TestMain(m *testing.M) {
	if patch, ok := os.LookupEnv(serveNoopEnv); ok {
		os.Exit(serveNoopWebhooks([]byte(patch)))
	}
	os.Exit(run(m))
}

func run(m *testing.M) int {
	ctrl.SetLogger(zap.New(zap.Level(zapcore.ErrorLevel)))
	var err error
	if workDir, err = os.MkdirTemp("", "almanac-bench-"); err != nil {
		fmt.Fprintln(os.Stderr, err)
		return 1
	}
	defer func() { _ = os.RemoveAll(workDir) }()
	if profileDir = os.Getenv("ALMANAC_BENCH_PROFILES"); profileDir == "" {
		profileDir = filepath.Join(os.TempDir(), "almanac-bench-profiles")
	}
	if err := os.MkdirAll(profileDir, 0o750); err != nil {
		fmt.Fprintln(os.Stderr, err)
		return 1
	}
	if almanacBinary = os.Getenv("ALMANAC_BENCH_BINARY"); almanacBinary == "" {
		almanacBinary = filepath.Join(workDir, "almanac")
		cmd := exec.Command("go", "build", "-o", almanacBinary, ".")
		cmd.Dir = testenv.RepoRoot()
		if out, err := cmd.CombinedOutput(); err != nil {
			fmt.Fprintf(os.Stderr, "go build: %v\n%s", err, out)
			return 1
		}
	}
	if env, err = testenv.Start(); err != nil {
		fmt.Fprintln(os.Stderr, err)
		return 1
	}
	defer func() {
		if err := env.Stop(); err != nil {
			fmt.Fprintln(os.Stderr, err)
		}
	}()
	if err := installWebhooks(context.Background()); err != nil {
		fmt.Fprintln(os.Stderr, err)
		return 1
	}
	code := m.Run()
	if !table.empty() {
		fmt.Println()
		_ = table.text(os.Stdout)
		fmt.Printf("  CPU profiles of the manager: %s (go tool pprof -top FILE)\n", profileDir)
		if path := os.Getenv("ALMANAC_BENCH_MARKDOWN"); path != "" {
			f, err := os.Create(path)
			if err == nil {
				err = table.markdown(f)
				_ = f.Close()
			}
			if err != nil {
				fmt.Fprintln(os.Stderr, err)
				return 1
			}
		}
	}
	return code
}

// installWebhooks creates the manager's namespace and installs config/webhook's
// configurations as the chart does, calling the manager on a local port by URL, except in
// namespaces labelled noWebhooksLabel.
func installWebhooks(ctx context.Context) error {
	if err := env.Client.Create(ctx, &corev1.Namespace{ObjectMeta: metav1.ObjectMeta{Name: systemNamespace}}); err != nil {
		return err
	}
	var err error
	if webhookPort, err = freePort(); err != nil {
		return err
	}
	n, err := testenv.InstallWebhookConfigurations(ctx, env.Client, testenv.RepoRoot(), certs.DefaultWebhookConfigName, webhookPort)
	if err != nil || n == 0 {
		return fmt.Errorf("installing config/webhook's configurations: %d webhooks, %w", n, err)
	}
	selector := &metav1.LabelSelector{MatchExpressions: []metav1.LabelSelectorRequirement{{Key: noWebhooksLabel, Operator: metav1.LabelSelectorOpDoesNotExist}}}
	mutating := &admissionregistrationv1.MutatingWebhookConfiguration{}
	if err := env.Client.Get(ctx, client.ObjectKey{Name: certs.DefaultWebhookConfigName}, mutating); err != nil {
		return err
	}
	for i := range mutating.Webhooks {
		mutating.Webhooks[i].NamespaceSelector = selector
	}
	if err := env.Client.Update(ctx, mutating); err != nil {
		return err
	}
	validating := &admissionregistrationv1.ValidatingWebhookConfiguration{}
	if err := env.Client.Get(ctx, client.ObjectKey{Name: certs.DefaultWebhookConfigName}, validating); err != nil {
		return err
	}
	for i := range validating.Webhooks {
		validating.Webhooks[i].NamespaceSelector = selector
	}
	return env.Client.Update(ctx, validating)
}

// harnessConfig is how the harness itself talks to the API server: as the cluster
// administrator, without a client-side rate limit.
func harnessConfig() *rest.Config {
	cfg := rest.CopyConfig(env.Config)
	cfg.QPS, cfg.Burst = -1, 0
	return cfg
}

// rawConfig is the bare client that measures a limit: the administrator, with the client
// settings the manager reported.
func rawConfig(s settings) *rest.Config {
	cfg := rest.CopyConfig(env.Config)
	cfg.QPS, cfg.Burst = s.QPS, s.Burst
	return cfg
}

// newNamespace creates a namespace for one figure; noWebhooks keeps almanac's webhooks out of
// the path of its objects, and each of labels is set to "true" on it.
func newNamespace(tb testing.TB, name string, noWebhooks bool, labels ...string) string {
	tb.Helper()
	ns := &corev1.Namespace{ObjectMeta: metav1.ObjectMeta{GenerateName: name + "-", Labels: map[string]string{}}}
	if noWebhooks {
		ns.Labels[noWebhooksLabel] = "true"
	}
	for _, l := range labels {
		ns.Labels[l] = "true"
	}
	if err := env.Client.Create(context.Background(), ns); err != nil {
		tb.Fatal(err)
	}
	return ns.Name
}
