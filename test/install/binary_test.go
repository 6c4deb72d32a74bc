package install

import (
	"bytes"
	"context"
	"crypto/tls"
	"errors"
	"fmt"
	"io"
	"net/http"
	"os"
	"os/exec"
	"path/filepath"
	"strconv"
	"strings"
	"sync"
	"syscall"
	"testing"
	"time"

	admissionregistrationv1 "k8s.io/api/admissionregistration/v1"
	authenticationv1 "k8s.io/api/authentication/v1"
	corev1 "k8s.io/api/core/v1"
	rbacv1 "k8s.io/api/rbac/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/client-go/kubernetes"
	"k8s.io/utils/ptr"

	"github.com/almanac-dev/almanac/test/testenv"
)

// binaryDir holds the built binary; TestMain removes it.
var binaryDir string

// almanacBinary builds the almanac binary once per test run: these tests run what a user
// runs (`almanac manager`, `almanac check`), flags, exit codes and all.
var almanacBinary = sync.OnceValues(func() (string, error) {
	dir, err := os.MkdirTemp("", "almanac-bin-")
	if err != nil {
		return "", err
	}
	binaryDir = dir
	bin := filepath.Join(dir, "almanac")
	cmd := exec.Command("go", "build", "-o", bin, ".")
	cmd.Dir = testenv.RepoRoot()
	if out, err := cmd.CombinedOutput(); err != nil {
		return "", fmt.Errorf("go build: %w\n%s", err, out)
	}
	return bin, nil
})

func buildAlmanac(t *testing.T) string {
	t.Helper()
	bin, err := almanacBinary()
	if err != nil {
		t.Fatal(err)
	}
	return bin
}

// managerProcess is `almanac manager` running against the test API server.
type managerProcess struct {
	cmd       *exec.Cmd
	done      chan struct{}
	err       error
	log       bytes.Buffer
	mu        sync.Mutex
	probePort int
}

func (m *managerProcess) Write(b []byte) (int, error) {
	m.mu.Lock()
	defer m.mu.Unlock()
	return m.log.Write(b)
}

func (m *managerProcess) logs() string {
	m.mu.Lock()
	defer m.mu.Unlock()
	return m.log.String()
}

func startManagerBinary(t *testing.T, args ...string) *managerProcess {
	t.Helper()
	m := &managerProcess{done: make(chan struct{}), probePort: freePort(t)}
	m.cmd = exec.Command(buildAlmanac(t), append([]string{"manager", "--health-probe-bind-address=127.0.0.1:" + strconv.Itoa(m.probePort)}, args...)...)
	m.cmd.Env = append(os.Environ(), "KUBECONFIG="+env.KubeconfigPath)
	m.cmd.Stdout, m.cmd.Stderr = m, m
	if err := m.cmd.Start(); err != nil {
		t.Fatal(err)
	}
	go func() { m.err = m.cmd.Wait(); close(m.done) }()
	t.Cleanup(func() {
		m.stop(t)
		if t.Failed() {
			t.Logf("the manager's log:\n%s", m.logs())
		}
	})
	return m
}

// stop sends SIGTERM and waits for the manager to exit.
func (m *managerProcess) stop(t *testing.T) {
	t.Helper()
	select {
	case <-m.done:
		return
	default:
	}
	_ = m.cmd.Process.Signal(syscall.SIGTERM)
	select {
	case <-m.done:
	case <-time.After(30 * time.Second):
		_ = m.cmd.Process.Kill()
		<-m.done
		t.Error("the manager did not exit within 30s of SIGTERM")
	}
}

func (m *managerProcess) waitReady(t *testing.T) {
	t.Helper()
	url := "http://127.0.0.1:" + strconv.Itoa(m.probePort) + "/readyz"
	eventually(t, 90*time.Second, "the manager ready", func() error {
		select {
		case <-m.done:
			t.Fatalf("the manager exited: %v\n%s", m.err, m.logs())
		default:
		}
		resp, err := http.Get(url) //nolint:noctx // a local test URL
		if err != nil {
			return err
		}
		defer func() { _ = resp.Body.Close() }()
		body, _ := io.ReadAll(resp.Body)
		if resp.StatusCode != http.StatusOK {
			return fmt.Errorf("/readyz: %s: %s", resp.Status, body)
		}
		return nil
	})
}

// runAlmanac runs the almanac binary and returns its combined output and exit code.
func runAlmanac(t *testing.T, args ...string) (string, int) {
	t.Helper()
	cmd := exec.Command(buildAlmanac(t), args...)
	out, err := cmd.CombinedOutput()
	var exit *exec.ExitError
	switch {
	case err == nil:
		return string(out), 0
	case errors.As(err, &exit):
		return string(out), exit.ExitCode()
	default:
		t.Fatalf("almanac %v: %v", args, err)
		return "", -1
	}
}

// TestManagerBinary runs `almanac manager` as a user runs it, with almanac's real webhooks
// installed as the chart installs them (pointed at the process by URL), and shows:
//   - the metrics endpoint answers only authenticated and authorized scrapes (401 without a
//     token, 403 for an account without the metrics-reader ClusterRole, 200 with it), and no
//     debug endpoint (pprof) is served on any port;
//   - `almanac check` exits 0 against it, and 1 with a clear message once it is stopped.
func TestManagerBinary(t *testing.T) {
	const id = "binary"
	ctx := context.Background()
	webhookPort, metricsPort := freePort(t), freePort(t)
	n, err := testenv.InstallWebhookConfigurations(ctx, env.Client, testenv.RepoRoot(), id, webhookPort)
	if err != nil || n == 0 {
		t.Fatalf("installing config/webhook's configurations: %d webhooks, %v", n, err)
	}
	t.Cleanup(func() {
		_ = env.Client.Delete(context.Background(), &admissionregistrationv1.MutatingWebhookConfiguration{ObjectMeta: metav1.ObjectMeta{Name: id}})
		_ = env.Client.Delete(context.Background(), &admissionregistrationv1.ValidatingWebhookConfiguration{ObjectMeta: metav1.ObjectMeta{Name: id}})
	})
	m := startManagerBinary(t,
		"--metrics-bind-address=127.0.0.1:"+strconv.Itoa(metricsPort),
		"--webhook-port="+strconv.Itoa(webhookPort),
		"--cert-mode=self-managed",
		"--cert-namespace="+ns,
		"--cert-ca-secret="+id+"-ca",
		"--webhook-service="+id,
		"--webhook-dns-names=localhost",
		"--mutating-webhook-configuration="+id,
		"--validating-webhook-configuration="+id,
	)
	m.waitReady(t)

	t.Run("metrics need authentication and authorization", func(t *testing.T) {
		cs, err := kubernetes.NewForConfig(env.Config)
		if err != nil {
			t.Fatal(err)
		}
		token := func(sa string) string {
			if _, err := cs.CoreV1().ServiceAccounts(ns).Create(ctx, &corev1.ServiceAccount{ObjectMeta: metav1.ObjectMeta{Name: sa}}, metav1.CreateOptions{}); err != nil {
				t.Fatal(err)
			}
			tr, err := cs.CoreV1().ServiceAccounts(ns).CreateToken(ctx, sa, &authenticationv1.TokenRequest{Spec: authenticationv1.TokenRequestSpec{ExpirationSeconds: ptr.To[int64](600)}}, metav1.CreateOptions{})
			if err != nil {
				t.Fatal(err)
			}
			return tr.Status.Token
		}
		scraper, nobody := token("scraper"), token("nobody")
		// The chart's <release>-metrics-reader ClusterRole, bound to the scraper.
		reader := &rbacv1.ClusterRole{ObjectMeta: metav1.ObjectMeta{Name: "binary-metrics-reader"}, Rules: []rbacv1.PolicyRule{{NonResourceURLs: []string{"/metrics"}, Verbs: []string{"get"}}}}
		binding := &rbacv1.ClusterRoleBinding{
			ObjectMeta: metav1.ObjectMeta{Name: "binary-metrics-reader"},
			RoleRef:    rbacv1.RoleRef{APIGroup: rbacv1.GroupName, Kind: "ClusterRole", Name: reader.Name},
			Subjects:   []rbacv1.Subject{{Kind: rbacv1.ServiceAccountKind, Name: "scraper", Namespace: ns}},
		}
		for _, o := range []any{reader, binding} {
			var err error
			switch o := o.(type) {
			case *rbacv1.ClusterRole:
				err = env.Client.Create(ctx, o)
			case *rbacv1.ClusterRoleBinding:
				err = env.Client.Create(ctx, o)
			}
			if err != nil {
				t.Fatal(err)
			}
		}
		t.Cleanup(func() {
			_ = env.Client.Delete(context.Background(), binding)
			_ = env.Client.Delete(context.Background(), reader)
		})

		httpc := &http.Client{Timeout: 10 * time.Second, Transport: &http.Transport{
			// The metrics endpoint serves a self-signed certificate unless one is mounted.
			TLSClientConfig: &tls.Config{InsecureSkipVerify: true},
		}}
		get := func(url, token string) (int, string) {
			req, err := http.NewRequestWithContext(ctx, http.MethodGet, url, nil)
			if err != nil {
				t.Fatal(err)
			}
			if token != "" {
				req.Header.Set("Authorization", "Bearer "+token)
			}
			resp, err := httpc.Do(req)
			if err != nil {
				t.Fatalf("GET %s: %v", url, err)
			}
			defer func() { _ = resp.Body.Close() }()
			body, _ := io.ReadAll(resp.Body)
			return resp.StatusCode, string(body)
		}
		metrics := "https://127.0.0.1:" + strconv.Itoa(metricsPort) + "/metrics"
		if code, _ := get(metrics, ""); code != http.StatusUnauthorized {
			t.Errorf("GET /metrics without a token: %d, want 401", code)
		}
		// controller-runtime's filter answers 500 when the TokenReview rejects a token
		// ("Authentication failed"); what matters is that nothing is served.
		if code, body := get(metrics, "not-a-token"); code == http.StatusOK || strings.Contains(body, "controller_runtime_") {
			t.Errorf("GET /metrics with an invalid token: %d, want a refusal", code)
		}
		if code, _ := get(metrics, nobody); code != http.StatusForbidden {
			t.Errorf("GET /metrics as an account without the metrics-reader role: %d, want 403", code)
		}
		// RBAC changes reach the authorizer quickly, but not instantly.
		eventually(t, 30*time.Second, "the scraper reads the metrics", func() error {
			code, body := get(metrics, scraper)
			if code != http.StatusOK || !strings.Contains(body, "controller_runtime_") {
				return fmt.Errorf("GET /metrics as the scraper: %d", code)
			}
			return nil
		})
		// No debug listener: pprof is neither on the metrics port nor on the probe port.
		for _, url := range []string{
			"https://127.0.0.1:" + strconv.Itoa(metricsPort) + "/debug/pprof/",
			"http://127.0.0.1:" + strconv.Itoa(m.probePort) + "/debug/pprof/",
		} {
			if code, _ := get(url, scraper); code == http.StatusOK {
				t.Errorf("GET %s: 200, want no debug endpoint", url)
			}
		}
	})

	checkArgs := []string{"check", "--kubeconfig=" + env.KubeconfigPath, "--namespace=default",
		"--mutating-webhook-configuration=" + id, "--validating-webhook-configuration=" + id}
	out, code := runAlmanac(t, append(checkArgs, "--wait", "--timeout=60s")...)
	t.Logf("almanac check against the running manager (exit %d):\n%s", code, out)
	if code != 0 || !strings.Contains(out, "✓ Admission") || !strings.Contains(out, "almanac is ready.") {
		t.Fatalf("almanac check against a running manager: exit %d, want 0 and \"almanac is ready.\"", code)
	}

	m.stop(t)
	out, code = runAlmanac(t, append(checkArgs, "--timeout=5s")...)
	t.Logf("almanac check against the stopped manager (exit %d):\n%s", code, out)
	if code != 1 {
		t.Errorf("almanac check against a stopped manager: exit %d, want 1", code)
	}
	for _, want := range []string{"✗ Admission", "failed calling webhook", "connection refused", "hint: no manager replica answers", "almanac is not ready: 1 of 4 checks failed."} {
		if !strings.Contains(out, want) {
			t.Errorf("the output lacks %q", want)
		}
	}
	if out, code := runAlmanac(t, "check", "--kubeconfig=/does/not/exist"); code != 2 {
		t.Errorf("almanac check with a missing kubeconfig: exit %d, want 2\n%s", code, out)
	}
}

// TestShippedBinaryHasNoTestCode: the almanac binary (what the image runs) links no test or
// development code: not controller-runtime's envtest (whose package init creates a folder,
// which a read-only root refuses), nothing under test/ or hack/.
func TestShippedBinaryHasNoTestCode(t *testing.T) {
	cmd := exec.Command("go", "list", "-deps", ".")
	cmd.Dir = testenv.RepoRoot()
	out, err := cmd.Output()
	if err != nil {
		t.Fatalf("go list -deps .: %v", err)
	}
	for _, pkg := range strings.Fields(string(out)) {
		switch {
		case strings.HasPrefix(pkg, "sigs.k8s.io/controller-runtime/pkg/envtest"),
			strings.HasPrefix(pkg, "github.com/almanac-dev/almanac/test/"),
			strings.HasPrefix(pkg, "github.com/almanac-dev/almanac/hack/"):
			t.Errorf("the shipped binary imports %s", pkg)
		}
	}
}

// TestBinaryRunsOnAReadOnlyRoot runs the binary as the chart's Pods do, with a read-only
// root filesystem (a private mount namespace where / is remounted read-only): nothing in its
// import graph may write at start-up. Every command must start; `almanac check` against a
// kubeconfig that does not exist must fail with its own usage error (exit 2), not a panic.
// The binary once linked envtest, whose init panicked here with
// "mkdir /tmp/kubebuilder-envtest: read-only file system".
func TestBinaryRunsOnAReadOnlyRoot(t *testing.T) {
	if os.Geteuid() != 0 {
		t.Skip("needs root for a private mount namespace (CI runs as root)")
	}
	bin := buildAlmanac(t)
	examples := filepath.Join(testenv.RepoRoot(), "examples")
	for _, args := range [][]string{
		{"--help"},
		{"manager", "--help"},
		{"check", "--help"},
		{"validate", "-f", examples},
		{"preview", "-f", examples, "--from", "2036-08-31T00:00:00Z", "--for", "1d"},
	} {
		out, code := runReadOnly(t, bin, args...)
		if code != 0 {
			t.Errorf("almanac %s on a read-only root: exit %d\n%s", strings.Join(args, " "), code, out)
		}
	}
	out, code := runReadOnly(t, bin, "check", "--kubeconfig=/does/not/exist")
	if code != 2 || strings.Contains(out, "panic") {
		t.Errorf("almanac check on a read-only root: exit %d, want 2 without a panic\n%s", code, out)
	}
}

// TestPprofOnlyOnLoopback: pprof answers without authentication, so `almanac manager`
// refuses to serve it on any address other hosts could reach (usage error, exit 2) and
// serves it on a loopback address only when asked (the benchmarks, test/bench).
func TestPprofOnlyOnLoopback(t *testing.T) {
	for _, addr := range []string{":6060", "0.0.0.0:6060", "10.0.0.1:6060", "example.com:6060", "[::]:6060", "6060"} {
		out, code := runAlmanac(t, "manager", "--pprof-bind-address="+addr)
		if code != 2 || !strings.Contains(out, "loopback") {
			t.Errorf("almanac manager --pprof-bind-address=%s: exit %d, want 2 and a message about loopback addresses\n%s", addr, code, out)
		}
	}
}

// TestManagerRefusesBadTuning: a controller without workers, a negative rate limit, or a
// --watch-namespaces that is not a list of namespace names, is a usage error (exit 2) that
// names the flag, not a manager that silently never reconciles.
func TestManagerRefusesBadTuning(t *testing.T) {
	for _, tc := range []struct{ flag, want string }{
		{"--scheduledpodautoscaler-workers=0", "--scheduledpodautoscaler-workers=0"},
		{"--schedule-workers=0", "--schedule-workers=0"},
		{"--scheduledjob-workers=-1", "--scheduledjob-workers=-1"},
		{"--eventjob-workers=0", "--eventjob-workers=0"},
		{"--kube-api-qps=-5", "--kube-api-qps=-5"},
		{"--kube-api-burst=-1", "--kube-api-burst=-1"},
		{"--watch-namespaces=a,,b", "--watch-namespaces=a,,b: entry 2 is empty"},
		{"--watch-namespaces=a,b,a", `"a" is listed twice`},
		{"--watch-namespaces=Team_A", `"Team_A" is not a namespace name`},
	} {
		out, code := runAlmanac(t, "manager", tc.flag)
		if code != 2 || !strings.Contains(out, tc.want) {
			t.Errorf("almanac manager %s: exit %d, want 2 and a message naming %s\n%s", tc.flag, code, tc.want, out)
		}
	}
}

// runReadOnly runs bin with args in a private mount namespace whose root is read-only, with
// HOME and TMPDIR on that root (as in a container with readOnlyRootFilesystem).
func runReadOnly(t *testing.T, bin string, args ...string) (string, int) {
	t.Helper()
	script := `mount --make-rprivate / && mount -o remount,bind,ro / && exec "$0" "$@"`
	cmd := exec.Command("unshare", append([]string{"--mount", "sh", "-c", script, bin}, args...)...)
	cmd.Env = append(os.Environ(), "HOME=/nonexistent", "TMPDIR=/tmp", "XDG_CACHE_HOME=")
	out, err := cmd.CombinedOutput()
	var exit *exec.ExitError
	switch {
	case err == nil:
		return string(out), 0
	case errors.As(err, &exit):
		return string(out), exit.ExitCode()
	default:
		t.Fatalf("unshare: %v", err)
		return "", -1
	}
}
