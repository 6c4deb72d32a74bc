package bench_test

import (
	"bufio"
	"cmp"
	"context"
	"crypto/tls"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"net"
	"net/http"
	"os"
	"os/exec"
	"path/filepath"
	"strconv"
	"strings"
	"syscall"
	"testing"
	"time"

	corev1 "k8s.io/api/core/v1"
	"sigs.k8s.io/yaml"

	"github.com/almanac-dev/almanac/certs"
	"github.com/almanac-dev/almanac/test/testenv"
)

// process is a child process (the almanac manager, kube-controller-manager) with its log in
// a file.
type process struct {
	name    string
	cmd     *exec.Cmd
	logPath string
	log     *os.File
	done    chan struct{}
	err     error
}

func startProcess(name, logPath string, env []string, bin string, args ...string) (*process, error) {
	logFile, err := os.Create(logPath)
	if err != nil {
		return nil, err
	}
	cmd := exec.Command(bin, args...)
	cmd.Env = append(os.Environ(), env...)
	cmd.Stdout, cmd.Stderr = logFile, logFile
	cmd.SysProcAttr = &syscall.SysProcAttr{Setpgid: true}
	if err := cmd.Start(); err != nil {
		_ = logFile.Close()
		return nil, fmt.Errorf("failed to start %s: %w", bin, err)
	}
	p := &process{name: name, cmd: cmd, logPath: logPath, log: logFile, done: make(chan struct{})}
	go func() { p.err = cmd.Wait(); close(p.done) }()
	return p, nil
}

func (p *process) pid() int { return p.cmd.Process.Pid }

func (p *process) exited() error {
	select {
	case <-p.done:
		err := p.err
		if err == nil {
			err = errors.New("exit status 0")
		}
		return fmt.Errorf("%s exited: %w; its log ends with:\n%s", p.name, err, tail(p.logPath, 30))
	default:
		return nil
	}
}

// stop sends SIGTERM and waits up to 20 s before killing the process.
func (p *process) stop() {
	select {
	case <-p.done:
	default:
		_ = p.cmd.Process.Signal(syscall.SIGTERM)
		select {
		case <-p.done:
		case <-time.After(20 * time.Second):
			_ = p.cmd.Process.Kill()
			<-p.done
		}
	}
	_ = p.log.Close()
}

func tail(path string, n int) string {
	data, err := os.ReadFile(path)
	if err != nil {
		return err.Error()
	}
	lines := strings.Split(strings.TrimRight(string(data), "\n"), "\n")
	return strings.Join(lines[max(0, len(lines)-n):], "\n")
}

// settings are what the manager reports at start: the workers of each controller and the
// client's rate limit. The raw bursts use the same, so that the comparison is at equal
// concurrency and with the same client settings.
type settings struct {
	// Workers maps a controller name (scheduledpodautoscaler, schedule, scheduledjob,
	// eventjob) to its number of workers.
	Workers map[string]int
	// QPS and Burst are the client's rate limit; QPS < 0 means none.
	QPS   float32
	Burst int
}

// manager is the almanac manager binary running against the test API server, as the chart
// runs it: leader election, self-managed webhook certificates, webhooks served to the API
// server, permission check on. pprof is served on a loopback port for the profiles.
type manager struct {
	*process
	probePort, pprofPort int
	settings             settings
}

// startManager starts `almanac manager` (with the flags extra besides the chart's) and waits
// until its webhooks are ready and its four controllers have started their workers (it is the
// leader and its caches are synced).
func startManager(tb testing.TB, name string, extra ...string) *manager {
	tb.Helper()
	m, err := launchManager(name, extra...)
	if err != nil {
		tb.Fatal(err)
	}
	tb.Cleanup(m.stop)
	if err := m.waitStarted(3 * time.Minute); err != nil {
		tb.Fatal(err)
	}
	return m
}

// managerKubeconfig, when set, is the kubeconfig the manager is started with instead of the
// administrator's (the noisy-neighbour figure runs it as the chart's ServiceAccount).
var managerKubeconfig string

func launchManager(name string, extra ...string) (*manager, error) {
	probe, err := freePort()
	if err != nil {
		return nil, err
	}
	pprof, err := freePort()
	if err != nil {
		return nil, err
	}
	args := append([]string{"manager",
		"--leader-elect",
		"--leader-election-namespace=" + systemNamespace,
		"--metrics-bind-address=0",
		"--health-probe-bind-address=127.0.0.1:" + strconv.Itoa(probe),
		"--pprof-bind-address=127.0.0.1:" + strconv.Itoa(pprof),
		"--webhook-port=" + strconv.Itoa(webhookPort),
		"--cert-mode=self-managed",
		"--cert-namespace=" + systemNamespace,
		"--webhook-dns-names=localhost",
		"--mutating-webhook-configuration=" + certs.DefaultWebhookConfigName,
		"--validating-webhook-configuration=" + certs.DefaultWebhookConfigName,
	}, extra...)
	p, err := startProcess("the almanac manager", filepath.Join(workDir, name+"-manager.log"),
		[]string{"KUBECONFIG=" + cmp.Or(managerKubeconfig, env.KubeconfigPath), "POD_NAMESPACE=" + systemNamespace, "GOMEMLIMIT=" + goMemoryLimit()},
		almanacBinary, args...)
	if err != nil {
		return nil, err
	}
	return &manager{process: p, probePort: probe, pprofPort: pprof}, nil
}

// goMemoryLimit is the Go memory limit that the manager gives itself in the chart's Pod: 90%
// of the container's memory limit, the chart's default resources.limits.memory (main.go's
// setMemoryLimit; test/e2e checks it on the real cluster). Here the manager runs outside a
// container, so the harness sets it.
func goMemoryLimit() string {
	data, err := os.ReadFile(filepath.Join(testenv.RepoRoot(), "charts", "almanac", "values.yaml"))
	if err != nil {
		panic(err)
	}
	var values struct {
		Resources corev1.ResourceRequirements `json:"resources"`
	}
	if err := yaml.Unmarshal(data, &values); err != nil {
		panic(err)
	}
	limit := values.Resources.Limits.Memory()
	if limit.IsZero() {
		return "off"
	}
	return strconv.FormatInt(limit.Value()/10*9, 10)
}

// controllers are the four controllers of the manager.
var controllers = []string{"scheduledpodautoscaler", "schedule", "scheduledjob", "eventjob"}

func (m *manager) waitStarted(timeout time.Duration) error {
	deadline := time.Now().Add(timeout)
	for ; time.Now().Before(deadline); time.Sleep(100 * time.Millisecond) {
		if err := m.exited(); err != nil {
			return err
		}
		s, ok := readSettings(m.logPath)
		if !ok {
			continue
		}
		resp, err := http.Get(fmt.Sprintf("http://127.0.0.1:%d/readyz", m.probePort)) //nolint:noctx // a local URL
		if err != nil {
			continue
		}
		_ = resp.Body.Close()
		if resp.StatusCode == http.StatusOK {
			m.settings = s
			return nil
		}
	}
	return fmt.Errorf("the manager did not start its controllers and webhooks within %s; its log ends with:\n%s", timeout, tail(m.logPath, 30))
}

// readSettings reads the settings from the manager's log: the worker count of each
// controller (controller-runtime's "Starting workers") and the client's rate limit (the
// manager's "Starting the manager"). It reports whether every controller has started.
func readSettings(logPath string) (settings, bool) {
	s := settings{Workers: map[string]int{}, QPS: -1}
	f, err := os.Open(logPath)
	if err != nil {
		return s, false
	}
	defer func() { _ = f.Close() }()
	sc := bufio.NewScanner(f)
	sc.Buffer(make([]byte, 1<<20), 1<<20)
	for sc.Scan() {
		var line struct {
			Msg        string   `json:"msg"`
			Controller string   `json:"controller"`
			Workers    int      `json:"worker count"`
			QPS        *float32 `json:"kubeAPIQPS"`
			Burst      int      `json:"kubeAPIBurst"`
		}
		if json.Unmarshal(sc.Bytes(), &line) != nil {
			continue
		}
		switch line.Msg {
		case "Starting workers":
			s.Workers[line.Controller] = line.Workers
		case "Starting the manager":
			// A manager built before these flags existed does not report them: it ran with
			// controller-runtime's default (no client-side rate limit).
			if line.QPS != nil {
				s.QPS, s.Burst = *line.QPS, line.Burst
			}
		}
	}
	for _, c := range controllers {
		if s.Workers[c] == 0 {
			return s, false
		}
	}
	return s, true
}

// profile records a CPU profile of the manager for d into the profiles folder, in the
// background; wait returns its path (empty when it failed: profiles are a diagnosis, not a
// result, so a failure is logged and the benchmark goes on).
func (m *manager) profile(tb testing.TB, name string, d time.Duration) (wait func() string) {
	path := filepath.Join(profileDir, name+".pprof")
	url := fmt.Sprintf("http://127.0.0.1:%d/debug/pprof/profile?seconds=%d", m.pprofPort, max(1, int(d.Round(time.Second)/time.Second)))
	done := make(chan string, 1)
	go func() {
		done <- fetch(tb.Logf, url, nil, path)
	}()
	return func() string { return <-done }
}

func fetch(logf func(string, ...any), url string, client *http.Client, path string) string {
	if client == nil {
		client = http.DefaultClient
	}
	resp, err := client.Get(url) //nolint:noctx // a local URL
	if err != nil {
		logf("profile %s: %v", url, err)
		return ""
	}
	defer func() { _ = resp.Body.Close() }()
	if resp.StatusCode != http.StatusOK {
		body, _ := io.ReadAll(resp.Body)
		logf("profile %s: %s: %s", url, resp.Status, body)
		return ""
	}
	f, err := os.Create(path)
	if err != nil {
		logf("profile %s: %v", path, err)
		return ""
	}
	defer func() { _ = f.Close() }()
	if _, err := io.Copy(f, resp.Body); err != nil {
		logf("profile %s: %v", path, err)
		return ""
	}
	return path
}

// memory returns the manager's peak resident set (VmHWM) and its current one (VmRSS).
func memory(pid int) (peak, now int64, err error) {
	data, err := os.ReadFile(fmt.Sprintf("/proc/%d/status", pid))
	if err != nil {
		return 0, 0, err
	}
	for _, line := range strings.Split(string(data), "\n") {
		f := strings.Fields(line)
		if len(f) < 2 {
			continue
		}
		kb, _ := strconv.ParseInt(f[1], 10, 64)
		switch f[0] {
		case "VmHWM:":
			peak = kb << 10
		case "VmRSS:":
			now = kb << 10
		}
	}
	if peak == 0 {
		return 0, 0, fmt.Errorf("no VmHWM in /proc/%d/status", pid)
	}
	return peak, now, nil
}

// cpuTime returns the CPU time (user and system) that process pid has used.
func cpuTime(pid int) time.Duration {
	data, err := os.ReadFile(fmt.Sprintf("/proc/%d/stat", pid))
	if err != nil {
		return 0
	}
	// The command name is in parentheses and may hold spaces: count fields after it.
	s := string(data)
	f := strings.Fields(s[strings.LastIndexByte(s, ')')+1:])
	if len(f) < 13 {
		return 0
	}
	utime, _ := strconv.ParseInt(f[11], 10, 64)
	stime, _ := strconv.ParseInt(f[12], 10, 64)
	return time.Duration(utime+stime) * time.Second / clockTicks
}

// clockTicks is USER_HZ, the unit of /proc/*/stat's times: 100 on every Linux build that Go
// supports.
const clockTicks = 100

// children returns the PIDs of this process's children by command name (kube-apiserver and
// etcd, started by envtest).
func children() map[string]int {
	out := map[string]int{}
	dirs, _ := os.ReadDir("/proc")
	self := os.Getpid()
	for _, d := range dirs {
		pid, err := strconv.Atoi(d.Name())
		if err != nil {
			continue
		}
		data, err := os.ReadFile(fmt.Sprintf("/proc/%d/stat", pid))
		if err != nil {
			continue
		}
		s := string(data)
		open, closing := strings.IndexByte(s, '('), strings.LastIndexByte(s, ')')
		if open < 0 || closing < open {
			continue
		}
		f := strings.Fields(s[closing+1:])
		if len(f) < 2 {
			continue
		}
		if ppid, _ := strconv.Atoi(f[1]); ppid == self {
			out[s[open+1:closing]] = pid
		}
	}
	return out
}

// cpuUse is the CPU time (user and system) used by each process of a benchmark, by name.
type cpuUse map[string]time.Duration

// cpuNow reads the CPU time each process has used so far.
func cpuNow(pids map[string]int) cpuUse {
	u := cpuUse{}
	for name, pid := range pids {
		u[name] = cpuTime(pid)
	}
	return u
}

// since returns what each process used between then and u.
func (u cpuUse) since(then cpuUse) cpuUse {
	out := cpuUse{}
	for name, t := range u {
		out[name] = t - then[name]
	}
	return out
}

// add adds v to u.
func (u cpuUse) add(v cpuUse) {
	for name, t := range v {
		u[name] += t
	}
}

func (u cpuUse) String() string {
	var parts []string
	for _, name := range []string{"almanac", "kube-controller-manager", "kube-apiserver", "etcd", "harness"} {
		if t, ok := u[name]; ok {
			parts = append(parts, fmt.Sprintf("%s %s", name, ms(t)))
		}
	}
	return strings.Join(parts, ", ")
}

// pids are the processes whose CPU time the benchmarks report.
func pids(m *manager, kcm *process) map[string]int {
	out := map[string]int{"harness": os.Getpid()}
	for name, pid := range children() {
		if name == "kube-apiserver" || name == "etcd" {
			out[name] = pid
		}
	}
	if m != nil {
		out["almanac"] = m.pid()
	}
	if kcm != nil {
		out["kube-controller-manager"] = kcm.pid()
	}
	return out
}

// startKCM starts kube-controller-manager from KUBEBUILDER_ASSETS with the CronJob
// controller only (the Job controller would only add Pods that nothing runs), against the
// test API server as the cluster administrator, with its default client settings. It
// returns nil when the binary is missing (`hack/envtest.sh --with-kcm` builds it).
func startKCM(tb testing.TB, name string) *process {
	tb.Helper()
	bin := filepath.Join(os.Getenv("KUBEBUILDER_ASSETS"), "kube-controller-manager")
	if _, err := os.Stat(bin); err != nil {
		return nil
	}
	port, err := freePort()
	if err != nil {
		tb.Fatal(err)
	}
	p, err := startProcess("kube-controller-manager", filepath.Join(workDir, name+"-kcm.log"), nil, bin,
		"--kubeconfig="+env.KubeconfigPath,
		"--authentication-kubeconfig="+env.KubeconfigPath,
		"--authorization-kubeconfig="+env.KubeconfigPath,
		"--controllers=cronjob-controller",
		"--leader-elect=false",
		"--bind-address=127.0.0.1",
		"--secure-port="+strconv.Itoa(port),
	)
	if err != nil {
		tb.Fatal(err)
	}
	tb.Cleanup(p.stop)
	insecure := &http.Client{Timeout: 2 * time.Second, Transport: &http.Transport{TLSClientConfig: &tls.Config{InsecureSkipVerify: true}}}
	deadline := time.Now().Add(time.Minute)
	for ; time.Now().Before(deadline); time.Sleep(200 * time.Millisecond) {
		if err := p.exited(); err != nil {
			tb.Fatal(err)
		}
		resp, err := insecure.Get(fmt.Sprintf("https://127.0.0.1:%d/healthz", port)) //nolint:noctx // a local URL
		if err != nil {
			continue
		}
		_ = resp.Body.Close()
		if resp.StatusCode == http.StatusOK {
			return p
		}
	}
	tb.Fatalf("kube-controller-manager did not become healthy within a minute; its log ends with:\n%s", tail(p.logPath, 30))
	return nil
}

func freePort() (int, error) {
	l, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		return 0, err
	}
	defer func() { _ = l.Close() }()
	return l.Addr().(*net.TCPAddr).Port, nil
}

// eventually polls f every interval until it returns nil, and fails tb after timeout.
func eventually(tb testing.TB, timeout, interval time.Duration, f func() error) {
	tb.Helper()
	deadline := time.Now().Add(timeout)
	for {
		err := f()
		if err == nil {
			return
		}
		if time.Now().After(deadline) {
			tb.Fatalf("after %s: %v", timeout, err)
		}
		time.Sleep(interval)
	}
}

// sleepUntil sleeps until t (or returns at once when ctx ends).
func sleepUntil(ctx context.Context, t time.Time) {
	select {
	case <-ctx.Done():
	case <-time.After(time.Until(t)):
	}
}
