//go:build e2e

// Package e2e runs almanac the way its users run it: the image that `make image` builds,
// installed by Helm with the chart's default values on a real single-node cluster
// (hack/cluster.sh: kubelet, containerd, scheduler, controller manager), with real Pods, Jobs
// and Deployments. `make e2e` runs it (and `make test`, so CI does).
//
// TestMain takes a snapshot of the machine (sysctls, links, routes, iptables and nftables,
// network namespaces, cgroups, mounts, folders, processes), brings the cluster up, runs the
// tests, takes it down, and fails when the machine is not as it was before.
//
// Settings (environment): ALMANAC_IMAGE_ARCHIVE (the OCI archive of `make image`, required),
// ALMANAC_KEDA_ARCHIVE (KEDA's operator image from hack/keda-image.sh, required), HELM (the
// pinned Helm), ALMANAC_E2E_KEEP=1 (leave the cluster up after the run, for a look).
package e2e

import (
	"bytes"
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"runtime"
	"strconv"
	"strings"
	"sync"
	"syscall"
	"testing"
	"time"
)

// cluster is what hack/cluster.sh env says about the running cluster.
var cluster struct {
	kubeconfig, dir, bin, hostIP, containerd, logs string
}

// repoRoot is the almanac checkout.
func repoRoot() string {
	_, file, _, _ := runtime.Caller(0)
	return filepath.Join(filepath.Dir(file), "..", "..")
}

// almanacBin is the almanac binary, built from the checkout, that runs `almanac check` from
// outside the cluster as a user would.
var almanacBin string

func TestMain(m *testing.M) {
	os.Exit(run(m))
}

func run(m *testing.M) int {
	if os.Geteuid() != 0 {
		fmt.Fprintln(os.Stderr, "the end-to-end suite needs root: it runs a kubelet, containerd and kube-proxy (links, netns, iptables, cgroups, mounts)")
		return 1
	}
	archive, kedaArchive := os.Getenv("ALMANAC_IMAGE_ARCHIVE"), os.Getenv("ALMANAC_KEDA_ARCHIVE")
	if archive == "" || kedaArchive == "" || os.Getenv("HELM") == "" {
		fmt.Fprintln(os.Stderr, "ALMANAC_IMAGE_ARCHIVE, ALMANAC_KEDA_ARCHIVE and HELM are not set: run the suite with `make e2e`, which builds the images (almanac's, and KEDA's operator with hack/keda-image.sh) and installs Helm")
		return 1
	}
	tmp, err := os.MkdirTemp("", "almanac-e2e-")
	if err != nil {
		fmt.Fprintln(os.Stderr, err)
		return 1
	}
	defer func() { _ = os.RemoveAll(tmp) }()
	almanacBin = filepath.Join(tmp, "almanac")
	if out, err := command("go", "build", "-o", almanacBin, ".").CombinedOutput(); err != nil {
		fmt.Fprintf(os.Stderr, "go build: %v\n%s", err, out)
		return 1
	}

	if err := readClusterEnv(); err != nil {
		fmt.Fprintln(os.Stderr, err)
		return 1
	}
	// What the cluster needs once (packages, binaries, test images) is not a change to undo.
	// A run that was killed may have left a cluster behind: take it down before the
	// snapshot, so that "before" is the machine without it.
	start := time.Now()
	if err := clusterScript("prepare"); err != nil {
		fmt.Fprintln(os.Stderr, err)
		return 1
	}
	steps.add("cluster prepared (packages, Kubernetes binaries)", time.Since(start))
	if err := clusterScript("down"); err != nil {
		fmt.Fprintln(os.Stderr, err)
		return 1
	}
	before, err := takeSnapshot()
	if err != nil {
		fmt.Fprintln(os.Stderr, "snapshot of the machine:", err)
		return 1
	}
	code := 1
	start = time.Now()
	if err := clusterScript("up", archive, kedaArchive); err != nil {
		fmt.Fprintln(os.Stderr, err)
	} else {
		steps.add("cluster up (with the almanac and KEDA images imported)", time.Since(start))
		code = m.Run()
	}
	if os.Getenv("ALMANAC_E2E_KEEP") != "" {
		fmt.Fprintf(os.Stderr, "ALMANAC_E2E_KEEP is set: the cluster stays up (eval \"$(hack/cluster.sh env)\"; hack/cluster.sh down when done)\n")
		steps.print()
		return code
	}
	start = time.Now()
	if err := clusterScript("down"); err != nil {
		fmt.Fprintln(os.Stderr, err)
		code = 1
	}
	steps.add("cluster down", time.Since(start))
	after, err := takeSnapshot()
	if err != nil {
		fmt.Fprintln(os.Stderr, "snapshot of the machine:", err)
		return 1
	}
	if diff := before.diff(after); diff != "" {
		fmt.Fprintf(os.Stderr, "FAIL: the machine is not as it was before the cluster came up:\n%s", diff)
		code = 1
	} else {
		fmt.Printf("The machine is as it was before the cluster: %s.\n", after.summary())
	}

	// Once more, as when a run is killed: a cluster with a Pod running, every component
	// killed with SIGKILL (containerd, its shims and the containers keep nothing in order),
	// then down.
	start = time.Now()
	if err := killedRun(); err != nil {
		fmt.Fprintln(os.Stderr, "FAIL: down after a killed run:", err)
		code = 1
	} else if after, err = takeSnapshot(); err != nil {
		fmt.Fprintln(os.Stderr, "snapshot of the machine:", err)
		code = 1
	} else if diff := before.diff(after); diff != "" {
		fmt.Fprintf(os.Stderr, "FAIL: after a killed run and down, the machine is not as it was before:\n%s", diff)
		code = 1
	} else {
		fmt.Println("After a killed run and down, the machine is as it was before, too.")
	}
	steps.add("a killed run: up, a Pod, SIGKILL to everything, down", time.Since(start))
	steps.print()
	return code
}

// killedRun brings a cluster up, runs a Pod, kills every process the cluster started with
// SIGKILL, and runs down.
func killedRun() error {
	if err := clusterScript("up"); err != nil {
		return err
	}
	pod := command("kubectl", "run", "sleeper", "--image="+busybox, "--image-pull-policy=Never", "--restart=Never", "--", "sleep", "3600")
	if out, err := pod.CombinedOutput(); err != nil {
		return fmt.Errorf("kubectl run: %w\n%s", err, out)
	}
	wait := command("kubectl", "wait", "--for=condition=Ready", "pod/sleeper", "--timeout=90s")
	if out, err := wait.CombinedOutput(); err != nil {
		return fmt.Errorf("kubectl wait: %w\n%s", err, out)
	}
	pids, err := filepath.Glob(filepath.Join(cluster.dir, "pids", "*"))
	if err != nil {
		return err
	}
	var killed []string
	for _, f := range pids {
		data, err := os.ReadFile(f)
		if err != nil {
			return err
		}
		pid, err := strconv.Atoi(strings.TrimSpace(string(data)))
		if err != nil {
			return fmt.Errorf("%s: %w", f, err)
		}
		if err := syscall.Kill(pid, syscall.SIGKILL); err == nil {
			killed = append(killed, filepath.Base(f))
		}
	}
	fmt.Fprintf(os.Stderr, "killed %s with SIGKILL, with the Pod sleeper running\n", strings.Join(killed, ", "))
	return clusterScript("down")
}

// clusterScript runs hack/cluster.sh with its progress on stderr.
func clusterScript(args ...string) error {
	cmd := command(filepath.Join(repoRoot(), "hack", "cluster.sh"), args...)
	cmd.Stdout, cmd.Stderr = os.Stderr, os.Stderr
	if err := cmd.Run(); err != nil {
		return fmt.Errorf("hack/cluster.sh %s: %w", strings.Join(args, " "), err)
	}
	return nil
}

func readClusterEnv() error {
	out, err := command(filepath.Join(repoRoot(), "hack", "cluster.sh"), "env").Output()
	if err != nil {
		return fmt.Errorf("hack/cluster.sh env: %w", err)
	}
	for _, line := range strings.Split(string(out), "\n") {
		k, v, ok := strings.Cut(strings.TrimPrefix(line, "export "), "=")
		if !ok {
			continue
		}
		switch k {
		case "KUBECONFIG":
			cluster.kubeconfig = v
		case "ALMANAC_CLUSTER_DIR":
			cluster.dir = v
		case "ALMANAC_CLUSTER_BIN":
			cluster.bin = v
		case "ALMANAC_CLUSTER_HOST_IP":
			cluster.hostIP = v
		case "ALMANAC_CLUSTER_CONTAINERD":
			cluster.containerd = v
		case "ALMANAC_CLUSTER_LOGS":
			cluster.logs = v
		}
	}
	if cluster.kubeconfig == "" || cluster.bin == "" {
		return fmt.Errorf("hack/cluster.sh env said nothing usable:\n%s", out)
	}
	return nil
}

// command is exec.Command in the checkout, with the cluster's kubeconfig and kubectl, and
// Helm's and kubectl's caches in the cluster's state folder.
func command(name string, args ...string) *exec.Cmd {
	cmd := exec.Command(name, args...)
	cmd.Dir = repoRoot()
	cmd.Env = os.Environ()
	if cluster.kubeconfig != "" {
		home := filepath.Join(cluster.dir, "client-home")
		cmd.Env = append(cmd.Env, "KUBECONFIG="+cluster.kubeconfig, "KUBECACHEDIR="+filepath.Join(home, "kube-cache"),
			"HELM_CACHE_HOME="+home, "HELM_CONFIG_HOME="+home, "HELM_DATA_HOME="+home, "PATH="+cluster.bin+":"+os.Getenv("PATH"))
	}
	return cmd
}

// steps records how long each step took, printed at the end of the run.
var steps stepLog

type stepLog struct {
	mu    sync.Mutex
	lines []string
}

func (s *stepLog) add(what string, d time.Duration) {
	s.mu.Lock()
	defer s.mu.Unlock()
	s.lines = append(s.lines, fmt.Sprintf("  %8.1fs  %s", d.Seconds(), what))
}

func (s *stepLog) print() {
	s.mu.Lock()
	defer s.mu.Unlock()
	var b bytes.Buffer
	b.WriteString("How long each step took:\n")
	for _, l := range s.lines {
		b.WriteString(l + "\n")
	}
	fmt.Print(b.String())
}

// step runs fn as a subtest, logs and records how long it took.
func step(t *testing.T, name string, fn func(t *testing.T)) bool {
	t.Helper()
	start := time.Now()
	ok := t.Run(name, fn)
	t.Logf("%s: %.1fs", name, time.Since(start).Seconds())
	status := "ok  "
	if !ok {
		status = "FAIL"
	}
	steps.add(status+" "+t.Name()+"/"+name, time.Since(start))
	return ok
}
