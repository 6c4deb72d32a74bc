// Command demo is `make demo`: almanac on a local kube-apiserver and etcd, without a
// cluster. It is the interactive twin of test/testenv — the same binaries (hack/envtest.sh),
// the same CRDs — with the real manager running as a separate process (`bin/almanac manager`,
// self-managed certificates, leader election: the code path of a cluster install), the
// examples applied next to Schedules and ScheduledJobs whose windows open within the next
// minutes, and the live state printed until Ctrl-C.
//
// It is a development tool, not part of the shipped binary: it links controller-runtime's
// envtest, whose package init writes to the user's cache folder, which a read-only root (the
// chart's Pods) refuses.
package main

import (
	"context"
	"fmt"
	"io"
	"net"
	"net/http"
	"os"
	"os/exec"
	"path/filepath"
	"slices"
	"strconv"
	"strings"
	"syscall"
	"time"

	autoscalingv2 "k8s.io/api/autoscaling/v2"
	batchv1 "k8s.io/api/batch/v1"
	corev1 "k8s.io/api/core/v1"
	apiextensionsv1 "k8s.io/apiextensions-apiserver/pkg/apis/apiextensions/v1"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"
	"k8s.io/client-go/util/jsonpath"
	"sigs.k8s.io/controller-runtime/pkg/client"
	"sigs.k8s.io/controller-runtime/pkg/envtest"

	"github.com/almanac-dev/almanac/api/scheme"
	"github.com/almanac-dev/almanac/certs"
	"github.com/almanac-dev/almanac/commands/check"
	"github.com/almanac-dev/almanac/commands/manifest"
	"github.com/almanac-dev/almanac/test/testenv"
)

// namespace is where the manager "runs": its CA Secret and its Lease.
const namespace = "almanac-system"

// options are the demo's flags.
type options struct {
	// root is the almanac checkout (config/, examples/, hack/envtest.sh).
	root string
	// almanac is the almanac binary that runs the manager (default: root/bin/almanac).
	almanac string
	// dir holds the kubeconfig, the manager's log and the control plane's data (default: a
	// new temporary folder, removed on exit).
	dir string
	// keep leaves dir in place on exit.
	keep bool
	// lead is how far ahead the first generated window opens.
	lead time.Duration
	// interval is how often the live state is refreshed.
	interval time.Duration
}

type printer struct{ w io.Writer }

func (p printer) step(format string, a ...any) {
	_, _ = fmt.Fprintf(p.w, "» "+format+"\n", a...)
}

func (p printer) line(format string, a ...any) {
	_, _ = fmt.Fprintf(p.w, format+"\n", a...)
}

// run runs the demo until ctx ends, then stops everything it started and removes its folder.
// hurry is closed when the user asks a second time: the remaining processes are killed
// rather than stopped gracefully (the folder is removed all the same).
func run(ctx context.Context, opts options, out io.Writer, hurry <-chan struct{}) (err error) {
	p := printer{out}
	root, err := filepath.Abs(opts.root)
	if err != nil {
		return err
	}
	for _, need := range []string{"hack/envtest.sh", "config/crd/bases", "examples"} {
		if _, err := os.Stat(filepath.Join(root, need)); err != nil {
			return fmt.Errorf("%s is not an almanac checkout (%s is missing): run `make demo` in the clone, or pass --root", root, need)
		}
	}
	almanac := opts.almanac
	if almanac == "" {
		almanac = filepath.Join(root, "bin", "almanac")
	}
	if _, err := os.Stat(almanac); err != nil {
		return fmt.Errorf("the almanac binary %s: %w: run `make demo` (it builds bin/almanac), or pass --almanac", almanac, err)
	}
	if opts.lead <= 0 {
		opts.lead = time.Minute
	}
	if opts.interval <= 0 {
		opts.interval = 2 * time.Second
	}
	dir := opts.dir
	if dir == "" {
		if dir, err = os.MkdirTemp("", "almanac-demo-"); err != nil {
			return err
		}
	} else if err := os.MkdirAll(dir, 0o700); err != nil {
		return err
	}
	if !opts.keep {
		// Registered first, so it runs last: after every process has stopped.
		defer func() {
			if rmErr := os.RemoveAll(dir); rmErr != nil {
				p.line("  ! could not remove %s: %v", dir, rmErr)
			}
		}()
	}

	p.step("Finding kube-apiserver and etcd (hack/envtest.sh builds them on first use: several minutes, once)")
	assets, err := envtestAssets(ctx, root)
	if err != nil {
		return err
	}

	p.step("Starting kube-apiserver and etcd")
	// The control plane's data and certificates live in dir too, so that one folder holds
	// everything the demo writes.
	env := &envtest.Environment{
		BinaryAssetsDirectory: assets,
		CRDDirectoryPaths:     []string{filepath.Join(root, "config", "crd", "bases")},
		ErrorIfCRDPathMissing: true,
		Scheme:                scheme.Scheme,
	}
	etcdDir, certDir := filepath.Join(dir, "etcd"), filepath.Join(dir, "kube-apiserver")
	for _, d := range []string{etcdDir, certDir} {
		if err := os.MkdirAll(d, 0o700); err != nil {
			return err
		}
	}
	env.ControlPlane.Etcd = &envtest.Etcd{DataDir: etcdDir}
	env.ControlPlane.APIServer = &envtest.APIServer{CertDir: certDir}
	stopControlPlane := func() {
		p.step("Stopping kube-apiserver and etcd")
		if err := env.Stop(); err != nil {
			p.line("  ! %v", err)
		}
		if opts.keep {
			p.line("  kept %s", dir)
		} else {
			p.line("  removed %s", dir)
		}
	}
	cfg, err := env.Start()
	if err != nil {
		stopControlPlane()
		return fmt.Errorf("failed to start kube-apiserver and etcd from %s: %w", assets, err)
	}
	defer stopControlPlane()
	kubeconfig := filepath.Join(dir, "kubeconfig")
	if err := os.WriteFile(kubeconfig, env.KubeConfig, 0o600); err != nil {
		return err
	}
	c, err := client.New(cfg, client.Options{Scheme: scheme.Scheme})
	if err != nil {
		return err
	}
	p.line("  API server %s, CRDs from config/crd/bases installed", cfg.Host)

	if err := c.Create(ctx, &corev1.Namespace{ObjectMeta: metav1.ObjectMeta{Name: namespace}}); err != nil {
		return err
	}
	webhookPort, err := freePort()
	if err != nil {
		return err
	}
	probePort, err := freePort()
	if err != nil {
		return err
	}
	n, err := testenv.InstallWebhookConfigurations(ctx, c, root, certs.DefaultWebhookConfigName, webhookPort)
	if err != nil {
		return err
	}
	p.step("Installed the webhook configurations from config/webhook (%d webhooks, calling https://localhost:%d)", n, webhookPort)

	logPath := filepath.Join(dir, "manager.log")
	p.step("Starting the manager (%s manager --cert-mode=self-managed; log: %s)", relative(root, almanac), logPath)
	mgr, err := startManager(almanac, kubeconfig, logPath, webhookPort, probePort, n > 0)
	if err != nil {
		return err
	}
	defer func() {
		p.step("Stopping the manager")
		mgr.stop(hurry)
	}()
	if err := mgr.waitReady(ctx, probePort, 90*time.Second); err != nil {
		return fmt.Errorf("%w; the manager's log ends with:\n%s", err, tail(logPath, 20))
	}
	p.line("  ready: the webhooks answer with a certificate the API server trusts (CA in Secret %s/%s)", namespace, certs.DefaultCASecretName)

	p.step("almanac check (what the chart runs after an install)")
	if err := check.Run(ctx, check.Options{
		Kubeconfig: kubeconfig, Namespace: metav1.NamespaceDefault, Timeout: 30 * time.Second, Interval: time.Second, Wait: true,
		MutatingWebhookConfiguration: webhookName(n), ValidatingWebhookConfiguration: webhookName(n),
	}, indentWriter{out}); err != nil {
		return fmt.Errorf("almanac check failed against the local API server: %w", err)
	}

	now := time.Now()
	applied, err := applyExamples(ctx, c, root, now, opts.lead, p)
	if err != nil {
		return err
	}
	p.step("Applied %d objects from examples/ and generated ones that open within the next minutes", applied)

	p.line("")
	p.line("almanac runs on a local API server. In another terminal:")
	p.line("")
	p.line("  export KUBECONFIG=%s", kubeconfig)
	p.line("  kubectl get schedules,scheduledpodautoscalers,hpa,scheduledjobs,eventjobs,jobs")
	p.line("  kubectl describe scheduledpodautoscaler nginx")
	p.line("  kubectl apply -f examples/scheduledjob-cron.yaml --dry-run=server")
	p.line("  bin/almanac check")
	p.line("")
	p.line("There is no kube-controller-manager here: Deployments get no Pods and Jobs do not run;")
	p.line("what almanac does (HPA bounds, status, Jobs created) is all there. Ctrl-C stops everything.")
	p.line("")

	return watch(ctx, c, opts.interval, mgr, logPath, p)
}

// relative names path relative to root when it is inside it (bin/almanac), else in full.
func relative(root, path string) string {
	if rel, err := filepath.Rel(root, path); err == nil && !strings.HasPrefix(rel, "..") {
		return rel
	}
	return path
}

func webhookName(webhooks int) string {
	if webhooks == 0 {
		return ""
	}
	return certs.DefaultWebhookConfigName
}

// indentWriter indents what `almanac check` prints under the demo's step line.
type indentWriter struct{ w io.Writer }

func (i indentWriter) Write(b []byte) (int, error) {
	s := strings.TrimRight(string(b), "\n")
	s = "  " + strings.ReplaceAll(s, "\n", "\n  ") + "\n"
	if _, err := io.WriteString(i.w, s); err != nil {
		return 0, err
	}
	return len(b), nil
}

func envtestAssets(ctx context.Context, root string) (string, error) {
	if dir := os.Getenv("KUBEBUILDER_ASSETS"); dir != "" {
		return dir, nil
	}
	cmd := exec.CommandContext(ctx, filepath.Join(root, "hack", "envtest.sh")) //nolint:gosec // the checkout's own script
	cmd.Dir = root
	cmd.Stderr = os.Stderr // its progress
	out, err := cmd.Output()
	if err != nil {
		return "", fmt.Errorf("hack/envtest.sh failed: %w", err)
	}
	return strings.TrimSpace(string(out)), nil
}

func freePort() (int, error) {
	l, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		return 0, err
	}
	defer func() { _ = l.Close() }()
	return l.Addr().(*net.TCPAddr).Port, nil
}

type managerProcess struct {
	cmd  *exec.Cmd
	done chan error
	log  *os.File
}

// startManager runs `almanac manager` against the local API server, in its own process group
// so that the terminal's Ctrl-C reaches only us and we stop it in order.
func startManager(almanac, kubeconfig, logPath string, webhookPort, probePort int, webhooks bool) (*managerProcess, error) {
	logFile, err := os.Create(logPath) //nolint:gosec // our own temporary folder
	if err != nil {
		return nil, err
	}
	mutating, validating := certs.DefaultWebhookConfigName, certs.DefaultWebhookConfigName
	if !webhooks {
		mutating, validating = "", ""
	}
	cmd := exec.Command(almanac, "manager", //nolint:gosec // the checkout's own binary
		"--leader-elect",
		"--leader-election-namespace="+namespace,
		"--metrics-bind-address=0",
		"--health-probe-bind-address=127.0.0.1:"+strconv.Itoa(probePort),
		"--webhook-port="+strconv.Itoa(webhookPort),
		"--cert-mode=self-managed",
		"--cert-namespace="+namespace,
		"--webhook-dns-names=localhost",
		"--mutating-webhook-configuration="+mutating,
		"--validating-webhook-configuration="+validating,
	)
	cmd.Env = append(os.Environ(), "KUBECONFIG="+kubeconfig, "POD_NAMESPACE="+namespace)
	cmd.Stdout, cmd.Stderr = logFile, logFile
	cmd.SysProcAttr = &syscall.SysProcAttr{Setpgid: true}
	if err := cmd.Start(); err != nil {
		_ = logFile.Close()
		return nil, fmt.Errorf("failed to start %s manager: %w", almanac, err)
	}
	m := &managerProcess{cmd: cmd, done: make(chan error, 1), log: logFile}
	go func() { m.done <- cmd.Wait() }()
	return m, nil
}

func (m *managerProcess) waitReady(ctx context.Context, probePort int, timeout time.Duration) error {
	url := fmt.Sprintf("http://127.0.0.1:%d/readyz", probePort)
	deadline := time.Now().Add(timeout)
	for time.Now().Before(deadline) {
		select {
		case err := <-m.done:
			m.done <- err
			return fmt.Errorf("the manager exited: %w", err)
		case <-ctx.Done():
			return ctx.Err()
		case <-time.After(300 * time.Millisecond):
		}
		req, _ := http.NewRequestWithContext(ctx, http.MethodGet, url, nil)
		resp, err := http.DefaultClient.Do(req)
		if err != nil {
			continue
		}
		_ = resp.Body.Close()
		if resp.StatusCode == http.StatusOK {
			return nil
		}
	}
	return fmt.Errorf("the manager was not ready within %s", timeout)
}

// stop sends SIGTERM and waits for the manager to exit; it kills it after 15 s, or at once
// when hurry is closed.
func (m *managerProcess) stop(hurry <-chan struct{}) {
	_ = m.cmd.Process.Signal(syscall.SIGTERM)
	select {
	case err := <-m.done:
		m.done <- err
	case <-hurry:
		_ = m.cmd.Process.Kill()
		m.done <- <-m.done
	case <-time.After(15 * time.Second):
		_ = m.cmd.Process.Kill()
		m.done <- <-m.done
	}
	_ = m.log.Close()
}

func tail(path string, n int) string {
	data, err := os.ReadFile(path) //nolint:gosec // our own log
	if err != nil {
		return err.Error()
	}
	lines := strings.Split(strings.TrimRight(string(data), "\n"), "\n")
	if len(lines) > n {
		lines = lines[len(lines)-n:]
	}
	return strings.Join(lines, "\n")
}

// demoObjects are Schedules and ScheduledJobs relative to now (in UTC, written as UTC wall
// times), so that something happens within minutes: a one-shot window for nginx from
// now+lead for 2 minutes, a daily window that overlaps it and ends later (the larger bounds
// win; alone, its minimum above the baseline's maximum raises the maximum), a ScheduledJob
// at now+lead and one every two minutes. Their bounds are above those of examples/, so the
// HPA visibly follows them whatever example window is active at the time.
func demoObjects(now time.Time, lead time.Duration) string {
	start := now.UTC().Add(lead).Truncate(time.Minute).Add(time.Minute)
	wall := func(t time.Time) string { return t.Format("2006-01-02T15:04") }
	hm := func(t time.Time) string { return t.Format("15:04") }
	return fmt.Sprintf(`apiVersion: autoscaling.almanac.dev/v1alpha1
kind: Schedule
metadata:
  name: demo-oneshot
spec:
  scaleTargetRef: {name: nginx}
  type: OneShot
  startTime: "%[1]s"
  endTime: "%[2]s"
  timeZone: UTC
  minReplicas: 30
  maxReplicas: 60
---
apiVersion: autoscaling.almanac.dev/v1alpha1
kind: Schedule
metadata:
  name: demo-daily
spec:
  scaleTargetRef: {name: nginx}
  type: Daily
  startTime: "%[3]s"
  endTime: "%[4]s"
  timeZone: UTC
  minReplicas: 45
---
apiVersion: batch.almanac.dev/v1alpha1
kind: ScheduledJob
metadata:
  name: demo-at
spec:
  at: "%[1]s"
  timeZone: UTC
  jobTemplate:
    spec:
      template:
        spec:
          containers:
          - {name: hello, image: busybox, command: [/bin/sh, -c, "echo hello from almanac"]}
          restartPolicy: Never
---
apiVersion: batch.almanac.dev/v1alpha1
kind: ScheduledJob
metadata:
  name: demo-every-2m
spec:
  schedule: "*/2 * * * *"
  timeZone: UTC
  concurrencyPolicy: Allow
  jobTemplate:
    spec:
      template:
        spec:
          containers:
          - {name: tick, image: busybox, command: [/bin/sh, -c, date]}
          restartPolicy: Never
`, wall(start), wall(start.Add(2*time.Minute)), hm(start.Add(time.Minute)), hm(start.Add(4*time.Minute)))
}

// applyExamples creates examples/*.yaml and the demo objects in the default namespace. An
// object the API server refuses is reported and skipped.
func applyExamples(ctx context.Context, c client.Client, root string, now time.Time, lead time.Duration, p printer) (int, error) {
	docs, err := manifest.Read([]string{filepath.Join(root, "examples")}, false, nil)
	if err != nil {
		return 0, err
	}
	demo, err := manifest.Read([]string{"-"}, false, strings.NewReader(demoObjects(now, lead)))
	if err != nil {
		return 0, err
	}
	n := 0
	for _, d := range append(docs, demo...) {
		u := d.Object.DeepCopy()
		if u.GetNamespace() == "" {
			u.SetNamespace(metav1.NamespaceDefault)
		}
		if err := c.Create(ctx, u); err != nil && !apierrors.IsAlreadyExists(err) {
			p.line("  ! %s %s (%s): %v", u.GetKind(), u.GetName(), filepath.Base(d.File), err)
			continue
		}
		n++
	}
	return n, nil
}

// watch prints the state once, then every change, until ctx ends or the manager exits.
func watch(ctx context.Context, c client.Client, interval time.Duration, mgr *managerProcess, logPath string, p printer) error {
	var last map[string]map[string]string
	ticker := time.NewTicker(interval)
	defer ticker.Stop()
	for {
		state, err := snapshot(ctx, c)
		if err != nil && ctx.Err() == nil {
			p.line("  ! reading the state: %v", err)
		}
		if err == nil {
			if last == nil {
				p.line("State at %s (then each change as it happens):", time.Now().Format("15:04:05"))
				for _, k := range sortedKeys(state) {
					p.line("  %-58s %s", k, format(state[k]))
				}
			} else {
				printChanges(p, last, state)
			}
			last = state
		}
		select {
		case <-ctx.Done():
			p.line("")
			return nil
		case err := <-mgr.done:
			mgr.done <- err
			return fmt.Errorf("the manager exited (%w); its log ends with:\n%s", err, tail(logPath, 20))
		case <-ticker.C:
		}
	}
}

func sortedKeys[V any](m map[string]V) []string {
	keys := make([]string, 0, len(m))
	for k := range m {
		keys = append(keys, k)
	}
	slices.Sort(keys)
	return keys
}

func format(cols map[string]string) string {
	var parts []string
	for _, k := range sortedKeys(cols) {
		if cols[k] != "" {
			parts = append(parts, k+"="+cols[k])
		}
	}
	return strings.Join(parts, " ")
}

func printChanges(p printer, before, after map[string]map[string]string) {
	ts := time.Now().Format("15:04:05")
	for _, k := range sortedKeys(after) {
		old, existed := before[k]
		if !existed {
			p.line("%s  %-50s created  %s", ts, k, format(after[k]))
			continue
		}
		var changes []string
		for _, col := range sortedKeys(union(old, after[k])) {
			if old[col] != after[k][col] {
				changes = append(changes, fmt.Sprintf("%s %s → %s", col, orDash(old[col]), orDash(after[k][col])))
			}
		}
		if len(changes) > 0 {
			p.line("%s  %-50s %s", ts, k, strings.Join(changes, ", "))
		}
	}
	for _, k := range sortedKeys(before) {
		if _, ok := after[k]; !ok {
			p.line("%s  %-50s deleted", ts, k)
		}
	}
}

func union(a, b map[string]string) map[string]string {
	out := map[string]string{}
	for k := range a {
		out[k] = ""
	}
	for k := range b {
		out[k] = ""
	}
	return out
}

func orDash(s string) string {
	if s == "" {
		return "-"
	}
	return s
}

// snapshot reads almanac's objects (summarized by their CRDs' printer columns, so that it
// follows the API without knowing it), the HPAs' bounds and the Jobs.
func snapshot(ctx context.Context, c client.Client) (map[string]map[string]string, error) {
	out := map[string]map[string]string{}
	crds := &apiextensionsv1.CustomResourceDefinitionList{}
	if err := c.List(ctx, crds); err != nil {
		return nil, err
	}
	for _, crd := range crds.Items {
		if !strings.HasSuffix(crd.Spec.Group, ".almanac.dev") {
			continue
		}
		for _, v := range crd.Spec.Versions {
			if !v.Storage {
				continue
			}
			list := &unstructured.UnstructuredList{}
			list.SetAPIVersion(crd.Spec.Group + "/" + v.Name)
			list.SetKind(crd.Spec.Names.ListKind)
			if err := c.List(ctx, list); err != nil {
				return nil, err
			}
			for _, item := range list.Items {
				cols := map[string]string{}
				for _, col := range v.AdditionalPrinterColumns {
					if col.Name == "Age" || col.Priority > 0 {
						continue
					}
					cols[col.Name] = evalJSONPath(col.JSONPath, item.Object)
				}
				out[fmt.Sprintf("%s %s", crd.Spec.Names.Kind, item.GetName())] = cols
			}
		}
	}
	hpas := &autoscalingv2.HorizontalPodAutoscalerList{}
	if err := c.List(ctx, hpas); err != nil {
		return nil, err
	}
	for _, h := range hpas.Items {
		minReplicas := ""
		if h.Spec.MinReplicas != nil {
			minReplicas = strconv.Itoa(int(*h.Spec.MinReplicas))
		}
		out["HorizontalPodAutoscaler "+h.Name] = map[string]string{"min": minReplicas, "max": strconv.Itoa(int(h.Spec.MaxReplicas))}
	}
	jobs := &batchv1.JobList{}
	if err := c.List(ctx, jobs); err != nil {
		return nil, err
	}
	for _, j := range jobs.Items {
		owner := ""
		if ref := metav1.GetControllerOf(&j); ref != nil {
			owner = ref.Kind + "/" + ref.Name
		}
		out["Job "+j.Name] = map[string]string{"owner": owner}
	}
	return out, nil
}

func evalJSONPath(path string, obj map[string]any) string {
	jp := jsonpath.New("col").AllowMissingKeys(true)
	if err := jp.Parse("{" + path + "}"); err != nil {
		return ""
	}
	var b strings.Builder
	if err := jp.Execute(&b, obj); err != nil {
		return ""
	}
	return b.String()
}
