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

	"github.com/almanac-dev/almanac/reconcilers/devenv"
	"github.com/almanac-dev/almanac/test/testenv"
)

// binaryDir holds the built binary; TestMain removes it.
var binaryDir string

// almanacBinary builds the almanac binary once per test run: these tests run what a user
// runs (`almanac manager`, `almanac check`, `almanac dev`), flags, exit codes and all.
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
	n, err := devenv.InstallWebhookConfigurations(ctx, env.Client, testenv.RepoRoot(), id, webhookPort)
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

// syncBuffer is an io.Writer that a test reads while a process writes to it.
type syncBuffer struct {
	mu sync.Mutex
	b  bytes.Buffer
}

func (s *syncBuffer) Write(p []byte) (int, error) {
	s.mu.Lock()
	defer s.mu.Unlock()
	return s.b.Write(p)
}

func (s *syncBuffer) String() string {
	s.mu.Lock()
	defer s.mu.Unlock()
	return s.b.String()
}

// descendants lists the processes below pid (from /proc).
func descendants(pid int) []int {
	parent := map[int]int{}
	entries, _ := os.ReadDir("/proc")
	for _, e := range entries {
		p, err := strconv.Atoi(e.Name())
		if err != nil {
			continue
		}
		stat, err := os.ReadFile(filepath.Join("/proc", e.Name(), "stat"))
		if err != nil {
			continue
		}
		// pid (comm) state ppid …; comm may contain spaces, so parse after the last ')'.
		fields := strings.Fields(string(stat[bytes.LastIndexByte(stat, ')')+1:]))
		if len(fields) > 1 {
			if pp, err := strconv.Atoi(fields[1]); err == nil {
				parent[p] = pp
			}
		}
	}
	var out []int
	in := map[int]bool{pid: true}
	for changed := true; changed; {
		changed = false
		for p, pp := range parent {
			if in[pp] && !in[p] {
				in[p], changed = true, true
				out = append(out, p)
			}
		}
	}
	return out
}

// alive reports whether pid runs (a zombie waiting to be reaped does not).
func alive(pid int) (bool, string) {
	stat, err := os.ReadFile(filepath.Join("/proc", strconv.Itoa(pid), "stat"))
	if err != nil {
		return false, ""
	}
	i := bytes.LastIndexByte(stat, ')')
	fields := strings.Fields(string(stat[i+1:]))
	return len(fields) > 0 && fields[0] != "Z", string(stat[:i+1])
}

// TestDev runs `almanac dev` (what `make demo` runs) as a user does: it must start a local
// API server and the manager, pass `almanac check`, apply the examples, create a Job of a
// demo ScheduledJob within about a minute, and on Ctrl-C (SIGINT to its process group, as a
// terminal sends it) exit 0 leaving no process and no temporary folder behind.
func TestDev(t *testing.T) {
	out := &syncBuffer{}
	cmd := exec.Command(buildAlmanac(t), "dev", "--root="+testenv.RepoRoot(), "--lead=1s", "--interval=1s")
	cmd.Stdout, cmd.Stderr = out, out
	cmd.SysProcAttr = &syscall.SysProcAttr{Setpgid: true}
	if err := cmd.Start(); err != nil {
		t.Fatal(err)
	}
	done := make(chan error, 1)
	go func() { done <- cmd.Wait() }()
	exited := false
	defer func() {
		if !exited {
			_ = syscall.Kill(-cmd.Process.Pid, syscall.SIGKILL)
			t.Logf("almanac dev killed: %v", <-done)
		}
		if t.Failed() {
			t.Logf("almanac dev printed:\n%s", out.String())
		}
	}()
	waitFor := func(timeout time.Duration, what string, ok func(string) bool) {
		t.Helper()
		deadline := time.Now().Add(timeout)
		for !ok(out.String()) {
			select {
			case err := <-done:
				exited = true
				t.Fatalf("almanac dev exited (%v) before %s", err, what)
			case <-time.After(200 * time.Millisecond):
			}
			if time.Now().After(deadline) {
				t.Fatalf("almanac dev: not %s within %s", what, timeout)
			}
		}
	}
	waitFor(3*time.Minute, "showing the state", func(s string) bool { return strings.Contains(s, "State at ") })
	for _, want := range []string{"ready: the webhooks answer with a certificate the API server trusts", "✓ Admission", "almanac is ready.", "export KUBECONFIG="} {
		if !strings.Contains(out.String(), want) {
			t.Errorf("almanac dev printed no %q", want)
		}
	}
	if strings.Contains(out.String(), "  ! ") {
		t.Errorf("almanac dev reported a problem (lines starting with !)")
	}
	// demo-at runs at the next full minute after now+1s.
	waitFor(150*time.Second, "creating a Job of a demo ScheduledJob", func(s string) bool {
		for _, l := range strings.Split(s, "\n") {
			if strings.Contains(l, "Job demo-") && strings.Contains(l, "created") && strings.Contains(l, "owner=ScheduledJob/demo-") {
				return true
			}
		}
		return false
	})

	procs := descendants(cmd.Process.Pid)
	if len(procs) < 3 {
		t.Errorf("almanac dev runs %d processes, want at least etcd, kube-apiserver and the manager", len(procs))
	}
	if err := syscall.Kill(-cmd.Process.Pid, syscall.SIGINT); err != nil {
		t.Fatal(err)
	}
	select {
	case err := <-done:
		exited = true
		if err != nil {
			t.Errorf("almanac dev exited with %v after Ctrl-C, want 0", err)
		}
	case <-time.After(90 * time.Second):
		t.Fatal("almanac dev did not exit within 90s of Ctrl-C")
	}
	for _, p := range procs {
		if ok, what := alive(p); ok {
			t.Errorf("process %s outlived almanac dev", what)
		}
	}
	for _, want := range []string{"» Stopping the manager", "» Stopping kube-apiserver and etcd", "  removed /"} {
		if !strings.Contains(out.String(), want) {
			t.Errorf("almanac dev printed no %q on Ctrl-C", want)
		}
	}
	for _, l := range strings.Split(out.String(), "\n") {
		if dir, ok := strings.CutPrefix(l, "  removed "); ok {
			if _, err := os.Stat(dir); !os.IsNotExist(err) {
				t.Errorf("the temporary folder %s is still there: %v", dir, err)
			}
		}
	}
	t.Logf("almanac dev printed:\n%s", out.String())
}
