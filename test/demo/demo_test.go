// Package demo tests `make demo` (hack/demo) as a user runs it: it must get almanac ready on
// a local API server, show what almanac does, and — however it is stopped — stop every
// process it started and remove its folder.
package demo

import (
	"bytes"
	"fmt"
	"io"
	"os"
	"os/exec"
	"path/filepath"
	"strconv"
	"strings"
	"sync"
	"syscall"
	"testing"
	"time"

	"github.com/almanac-dev/almanac/test/testenv"
)

// bin holds the almanac and demo binaries, built once by TestMain.
var bin string

func TestMain(m *testing.M) {
	if os.Getenv("KUBEBUILDER_ASSETS") == "" {
		fmt.Fprintln(os.Stderr, "KUBEBUILDER_ASSETS is not set: run the tests with `make unit`, or export KUBEBUILDER_ASSETS=$(hack/envtest.sh)")
		os.Exit(1)
	}
	dir, err := os.MkdirTemp("", "almanac-demo-test-")
	if err != nil {
		fmt.Fprintln(os.Stderr, err)
		os.Exit(1)
	}
	bin = dir
	code := 1
	if err := build(); err != nil {
		fmt.Fprintln(os.Stderr, err)
	} else {
		code = m.Run()
	}
	_ = os.RemoveAll(dir)
	os.Exit(code)
}

func build() error {
	for out, pkg := range map[string]string{"almanac": ".", "demo": "./hack/demo"} {
		cmd := exec.Command("go", "build", "-o", filepath.Join(bin, out), pkg)
		cmd.Dir = testenv.RepoRoot()
		if b, err := cmd.CombinedOutput(); err != nil {
			return fmt.Errorf("go build %s: %w\n%s", pkg, err, b)
		}
	}
	return nil
}

// demo is one run of the demo, in its own process group (as a shell starts a pipeline), with
// its folder given by --dir so that the test knows what must be gone afterwards.
type demo struct {
	t    *testing.T
	cmd  *exec.Cmd
	dir  string
	out  *syncBuffer
	done chan error
	// pipe is the read end of the demo's stdout when it writes to a pipe.
	pipe  *os.File
	procs []int
}

func startDemo(t *testing.T, pipe bool, extra ...string) *demo {
	t.Helper()
	d := &demo{t: t, dir: filepath.Join(t.TempDir(), "demo"), out: &syncBuffer{}, done: make(chan error, 1)}
	args := append([]string{"--root=" + testenv.RepoRoot(), "--almanac=" + filepath.Join(bin, "almanac"), "--dir=" + d.dir, "--interval=1s"}, extra...)
	d.cmd = exec.Command(filepath.Join(bin, "demo"), args...)
	d.cmd.Stderr = d.out
	d.cmd.SysProcAttr = &syscall.SysProcAttr{Setpgid: true}
	var w *os.File
	if pipe {
		r, pw, err := os.Pipe()
		if err != nil {
			t.Fatal(err)
		}
		d.pipe, w = r, pw
		d.cmd.Stdout = pw
		go func() { _, _ = io.Copy(d.out, r) }()
	} else {
		d.cmd.Stdout = d.out
	}
	if err := d.cmd.Start(); err != nil {
		t.Fatal(err)
	}
	if w != nil {
		_ = w.Close() // the demo holds the only write end
	}
	go func() { d.done <- d.cmd.Wait() }()
	t.Cleanup(func() {
		if d.done != nil {
			_ = syscall.Kill(-d.cmd.Process.Pid, syscall.SIGKILL)
			if err := <-d.done; err != nil {
				t.Logf("the demo, killed at the end of the test: %v", err)
			}
			for _, p := range d.procs {
				_ = syscall.Kill(p, syscall.SIGKILL)
			}
		}
		if t.Failed() {
			t.Logf("the demo printed:\n%s", d.out.String())
		}
	})
	return d
}

// waitFor waits until the output satisfies ok.
func (d *demo) waitFor(timeout time.Duration, what string, ok func(string) bool) {
	d.t.Helper()
	deadline := time.Now().Add(timeout)
	for !ok(d.out.String()) {
		select {
		case err := <-d.done:
			d.done = nil
			d.t.Fatalf("the demo exited (%v) before %s", err, what)
		case <-time.After(200 * time.Millisecond):
		}
		if time.Now().After(deadline) {
			d.t.Fatalf("the demo: not %s within %s", what, timeout)
		}
	}
}

func (d *demo) waitRunning() {
	d.t.Helper()
	d.waitFor(3*time.Minute, "showing the state", func(s string) bool { return strings.Contains(s, "State at ") })
	d.procs = descendants(d.cmd.Process.Pid)
	if len(d.procs) < 3 {
		d.t.Errorf("the demo runs %d processes, want at least etcd, kube-apiserver and the manager", len(d.procs))
	}
}

// waitStopped waits for the demo to exit, then checks that it exited 0, that no process it
// started outlived it, and that its folder is gone.
func (d *demo) waitStopped(how string) {
	d.t.Helper()
	select {
	case err := <-d.done:
		d.done = nil
		if err != nil {
			d.t.Errorf("the demo exited with %v after %s, want 0", err, how)
		}
	case <-time.After(90 * time.Second):
		d.t.Fatalf("the demo did not exit within 90s of %s", how)
	}
	// The processes may take a moment to be reaped by init after their parent has gone.
	deadline := time.Now().Add(10 * time.Second)
	for {
		var left []string
		for _, p := range d.procs {
			if ok, what := alive(p); ok {
				left = append(left, what)
			}
		}
		if len(left) == 0 {
			break
		}
		if time.Now().After(deadline) {
			d.t.Errorf("after %s, these processes outlived the demo: %s", how, strings.Join(left, ", "))
			break
		}
		time.Sleep(200 * time.Millisecond)
	}
	if _, err := os.Stat(d.dir); !os.IsNotExist(err) {
		d.t.Errorf("after %s, the demo's folder %s is still there (%v)", how, d.dir, err)
	}
}

// TestDemo runs the demo as a user does: it must start a local API server and the manager,
// pass `almanac check`, apply the examples, create a Job of a demo ScheduledJob within about
// a minute, and on Ctrl-C (SIGINT to its process group, as a terminal sends it) exit 0
// leaving no process and no folder behind.
func TestDemo(t *testing.T) {
	d := startDemo(t, false, "--lead=1s")
	d.waitRunning()
	for _, want := range []string{"ready: the webhooks answer with a certificate the API server trusts", "✓ Admission", "almanac is ready.", "export KUBECONFIG=" + d.dir} {
		if !strings.Contains(d.out.String(), want) {
			t.Errorf("the demo printed no %q", want)
		}
	}
	if strings.Contains(d.out.String(), "  ! ") {
		t.Errorf("the demo reported a problem (lines starting with !)")
	}
	// demo-at runs at the next full minute after now+1s.
	d.waitFor(150*time.Second, "creating a Job of a demo ScheduledJob", func(s string) bool {
		for _, l := range strings.Split(s, "\n") {
			if strings.Contains(l, "Job demo-") && strings.Contains(l, "created") && strings.Contains(l, "owner=ScheduledJob/demo-") {
				return true
			}
		}
		return false
	})
	if err := syscall.Kill(-d.cmd.Process.Pid, syscall.SIGINT); err != nil {
		t.Fatal(err)
	}
	d.waitStopped("Ctrl-C")
	for _, want := range []string{"» Stopping the manager", "» Stopping kube-apiserver and etcd", "  removed " + d.dir} {
		if !strings.Contains(d.out.String(), want) {
			t.Errorf("the demo printed no %q on Ctrl-C", want)
		}
	}
	t.Logf("the demo printed:\n%s", d.out.String())
}

// TestDemoCleansUp stops the demo in each way it can end besides Ctrl-C in a terminal; each
// time every process it started must stop and its folder must go.
func TestDemoCleansUp(t *testing.T) {
	for _, tc := range []struct {
		name string
		pipe bool
		stop func(d *demo)
	}{{
		// `kill PID`, or a supervisor stopping it: only the demo gets the signal.
		name: "SIGTERM",
		stop: func(d *demo) { _ = syscall.Kill(d.cmd.Process.Pid, syscall.SIGTERM) },
	}, {
		// The terminal closes: the whole process group gets SIGHUP.
		name: "SIGHUP",
		stop: func(d *demo) { _ = syscall.Kill(-d.cmd.Process.Pid, syscall.SIGHUP) },
	}, {
		// `make demo | head`: the reader goes away while the demo has nothing to say.
		name: "closed pipe",
		pipe: true,
		stop: func(d *demo) { _ = d.pipe.Close() },
	}, {
		// `make demo | tee log`, then Ctrl-C: tee dies of the SIGINT too, so every line the
		// demo prints while it cleans up goes to a pipe without a reader.
		name: "Ctrl-C with a pipe",
		pipe: true,
		stop: func(d *demo) {
			_ = d.pipe.Close()
			_ = syscall.Kill(-d.cmd.Process.Pid, syscall.SIGINT)
		},
	}, {
		// Asked twice: the demo hurries, but still stops everything and removes its folder.
		name: "Ctrl-C twice",
		stop: func(d *demo) {
			_ = syscall.Kill(-d.cmd.Process.Pid, syscall.SIGINT)
			time.Sleep(100 * time.Millisecond)
			_ = syscall.Kill(-d.cmd.Process.Pid, syscall.SIGINT)
		},
	}} {
		t.Run(tc.name, func(t *testing.T) {
			d := startDemo(t, tc.pipe)
			d.waitRunning()
			tc.stop(d)
			d.waitStopped(tc.name)
		})
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

// alive reports whether pid runs (a zombie waiting to be reaped does not), and names it.
func alive(pid int) (bool, string) {
	stat, err := os.ReadFile(filepath.Join("/proc", strconv.Itoa(pid), "stat"))
	if err != nil {
		return false, ""
	}
	i := bytes.LastIndexByte(stat, ')')
	fields := strings.Fields(string(stat[i+1:]))
	return len(fields) > 0 && fields[0] != "Z", string(stat[:i+1])
}
