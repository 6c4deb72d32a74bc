package main

import (
	"io"
	"math"
	"os/exec"
	"path/filepath"
	"runtime/debug"
	"slices"
	"strings"
	"testing"
	"testing/fstest"

	"k8s.io/utils/clock"

	"github.com/almanac-dev/almanac/commands/kube"
	"github.com/almanac-dev/almanac/reconcilers/base"
)

// TestVersionText: `almanac --version` names the tz database release that the time engine
// reads, so that two binaries that answer differently for a zone can be told apart; the
// image's version and revision come first (test/e2e reads that prefix).
func TestVersionText(t *testing.T) {
	if got, want := versionText("devel", "", "2025c"), "devel (tz 2025c)"; got != want {
		t.Errorf("versionText = %q, want %q", got, want)
	}
	if got, want := versionText("0.1.0", "0123abc", "2025c"), "0.1.0 (revision 0123abc, tz 2025c)"; got != want {
		t.Errorf("versionText = %q, want %q", got, want)
	}
}

// The time engine reads its own copy of the tz database; the libraries in the binary that call
// time.LoadLocation need the one time/tzdata embeds, since the image has no zoneinfo.
func TestBinaryEmbedsTimeTZData(t *testing.T) {
	if _, err := exec.LookPath("go"); err != nil {
		t.Skip("the go tool is not on PATH")
	}
	out, err := exec.Command("go", "list", "-deps", ".").Output()
	if err != nil {
		t.Fatalf("go list -deps: %v", err)
	}
	if deps := strings.Fields(string(out)); !slices.Contains(deps, "time/tzdata") {
		t.Fatal("the almanac binary does not import time/tzdata: libraries that call time.LoadLocation would fail in the image")
	}
}

// TestSetMemoryLimit: the manager's Go memory limit is 90% of its cgroup's, unless
// GOMEMLIMIT is set or there is no cgroup limit; it returns the limit in force (the log line
// that test/e2e reads in the chart's Pod).
func TestSetMemoryLimit(t *testing.T) {
	prev := debug.SetMemoryLimit(-1)
	t.Cleanup(func() { debug.SetMemoryLimit(prev) })
	limited := fstest.MapFS{
		"proc/self/cgroup":         {Data: []byte("0::/\n")},
		"sys/fs/cgroup/memory.max": {Data: []byte("268435456\n")},
	}
	unlimited := fstest.MapFS{
		"proc/self/cgroup":         {Data: []byte("0::/\n")},
		"sys/fs/cgroup/memory.max": {Data: []byte("max\n")},
	}

	t.Setenv("GOMEMLIMIT", "")
	debug.SetMemoryLimit(math.MaxInt64)
	if got, want := setMemoryLimit(limited), int64(241591905); got != want || debug.SetMemoryLimit(-1) != want {
		t.Errorf("with a 256Mi cgroup: setMemoryLimit() = %d, runtime %d; want %d", got, debug.SetMemoryLimit(-1), want)
	}
	debug.SetMemoryLimit(math.MaxInt64)
	if got := setMemoryLimit(unlimited); got != math.MaxInt64 {
		t.Errorf("without a cgroup limit: setMemoryLimit() = %d, want no limit", got)
	}
	t.Setenv("GOMEMLIMIT", "1GiB")
	debug.SetMemoryLimit(1 << 30)
	if got := setMemoryLimit(limited); got != 1<<30 {
		t.Errorf("with GOMEMLIMIT=1GiB: setMemoryLimit() = %d, want %d (GOMEMLIMIT wins)", got, 1<<30)
	}
}

func TestCgroupMemoryLimit(t *testing.T) {
	for _, tc := range []struct {
		name  string
		files map[string]string
		want  int64
		ok    bool
	}{
		{
			name:  "a container with its own cgroup namespace",
			files: map[string]string{"proc/self/cgroup": "0::/\n", "sys/fs/cgroup/memory.max": "268435456\n"},
			want:  268435456, ok: true,
		},
		{
			name: "a process in a cgroup of the host's tree",
			files: map[string]string{
				"proc/self/cgroup": "0::/kubepods.slice/pod1/cri-abc\n",
				"sys/fs/cgroup/kubepods.slice/pod1/cri-abc/memory.max": "536870912\n",
				"sys/fs/cgroup/memory.max":                             "1024\n",
			},
			want: 536870912, ok: true,
		},
		{
			name:  "no limit",
			files: map[string]string{"proc/self/cgroup": "0::/\n", "sys/fs/cgroup/memory.max": "max\n"},
		},
		{
			name: "cgroup v1 in a container: the host's path, the container's cgroup at the top",
			files: map[string]string{
				"proc/self/cgroup":                           "12:memory:/kubepods/burstable/pod1/abc\n1:name=systemd:/kubepods/burstable/pod1/abc\n0::/\n",
				"sys/fs/cgroup/memory/memory.limit_in_bytes": "268435456\n",
			},
			want: 268435456, ok: true,
		},
		{
			name: "cgroup v1 on the host",
			files: map[string]string{
				"proc/self/cgroup": "4:memory:/process_api/x\n0::/\n",
				"sys/fs/cgroup/memory/process_api/x/memory.limit_in_bytes": "1073741824\n",
				"sys/fs/cgroup/memory/memory.limit_in_bytes":               "9223372036854771712\n",
			},
			want: 1073741824, ok: true,
		},
		{
			name: "cgroup v1 without a limit",
			files: map[string]string{
				"proc/self/cgroup":                           "4:cpu,memory:/\n",
				"sys/fs/cgroup/memory/memory.limit_in_bytes": "9223372036854771712\n",
			},
		},
		{
			name:  "no memory controller",
			files: map[string]string{"proc/self/cgroup": "0::/x\n"},
		},
		{name: "no proc"},
	} {
		t.Run(tc.name, func(t *testing.T) {
			fsys := fstest.MapFS{}
			for name, data := range tc.files {
				fsys[name] = &fstest.MapFile{Data: []byte(data)}
			}
			got, ok := cgroupMemoryLimit(fsys)
			if got != tc.want || ok != tc.ok {
				t.Errorf("cgroupMemoryLimit() = %d, %v; want %d, %v", got, ok, tc.want, tc.ok)
			}
		})
	}
}

// TestWatchNamespaces: --watch-namespaces as the manager parses it (comma-separated, the flag
// repeatable; empty: every namespace), and what it refuses, each problem named.
func TestWatchNamespaces(t *testing.T) {
	for _, tc := range []struct {
		name    string
		args    []string
		want    []string
		wantErr []string
	}{
		{name: "not given: every namespace"},
		{name: "empty: every namespace", args: []string{"--watch-namespaces="}},
		{name: "a list", args: []string{"--watch-namespaces=team-a,team-b"}, want: []string{"team-a", "team-b"}},
		{name: "repeated", args: []string{"--watch-namespaces=team-a", "--watch-namespaces=team-b"}, want: []string{"team-a", "team-b"}},
		{name: "an empty entry", args: []string{"--watch-namespaces=a,,b"}, wantErr: []string{"--watch-namespaces=a,,b: entry 2 is empty"}},
		{name: "a trailing comma", args: []string{"--watch-namespaces=a,"}, wantErr: []string{"entry 2 is empty"}},
		{name: "a duplicate", args: []string{"--watch-namespaces=a,b,a"}, wantErr: []string{`"a" is listed twice`}},
		{name: "not a DNS-1123 label", args: []string{"--watch-namespaces=Team_A,ok,-x"}, wantErr: []string{
			`"Team_A" is not a namespace name: a lowercase RFC 1123 label must consist of`, `"-x" is not a namespace name`,
			"list namespace names separated by commas, each once, or leave it empty to watch every namespace",
		}},
		{name: "too long", args: []string{"--watch-namespaces=" + strings.Repeat("n", 64)}, wantErr: []string{"must be no more than 63 characters"}},
	} {
		t.Run(tc.name, func(t *testing.T) {
			cmd := newManagerCommand()
			if err := cmd.ParseFlags(tc.args); err != nil {
				t.Fatal(err)
			}
			list, err := cmd.Flags().GetStringSlice("watch-namespaces")
			if err != nil {
				t.Fatal(err)
			}
			got, err := checkWatchNamespaces(list)
			if len(tc.wantErr) > 0 {
				for _, want := range tc.wantErr {
					if err == nil || !strings.Contains(err.Error(), want) {
						t.Errorf("checkWatchNamespaces(%q) = %v, want an error containing %q", list, err, want)
					}
				}
				// The command refuses to start with it, before it reads a kubeconfig.
				cmd = newManagerCommand()
				cmd.SetArgs(tc.args)
				cmd.SetOut(io.Discard)
				cmd.SetErr(io.Discard)
				if err := cmd.Execute(); err == nil || !strings.Contains(err.Error(), tc.wantErr[0]) {
					t.Errorf("almanac manager %v = %v, want an error containing %q", tc.args, err, tc.wantErr[0])
				}
				return
			}
			if err != nil || !slices.Equal(got, tc.want) {
				t.Errorf("checkWatchNamespaces(%q) = %q, %v; want %q", list, got, err, tc.want)
			}
			// The cache watches exactly those namespaces (none: all of them).
			opts := cacheOptions(got)
			if len(opts.DefaultNamespaces) != len(tc.want) {
				t.Errorf("cache namespaces %v, want %v", opts.DefaultNamespaces, tc.want)
			}
			for _, ns := range tc.want {
				if _, ok := opts.DefaultNamespaces[ns]; !ok {
					t.Errorf("cache namespaces %v lack %q", opts.DefaultNamespaces, ns)
				}
			}
		})
	}
}

// TestLanesOff: the benchmark's ablation switches parts of the ordering off by name, or all
// of it; a name that is not a part is refused with the names that are.
func TestLanesOff(t *testing.T) {
	clk := clock.RealClock{}
	for _, off := range [][]string{nil, {"defer"}, {"recording", "events"}, {"lanes"}} {
		opt, err := newLanes(clk, off)
		if err != nil {
			t.Fatalf("--lanes-off=%v: %v", off, err)
		}
		var b base.Base
		opt(&b)
		if none := slices.Equal(off, []string{"lanes"}); (b.Lanes == nil) != none {
			t.Errorf("--lanes-off=%v: Lanes %v, want none: %v", off, b.Lanes, none)
		}
	}
	_, err := newLanes(clk, []string{"urgent"})
	if err == nil || !strings.Contains(err.Error(), `"urgent"`) || !strings.Contains(err.Error(), "defer") {
		t.Errorf("--lanes-off=urgent: %v, want a refusal naming the parts", err)
	}
}

// TestPluginName: run as kubectl's plugin (the binary named kubectl-almanac), the usage and
// examples of every command say `kubectl almanac ...`; run as almanac, they do not.
func TestPluginName(t *testing.T) {
	defer func(c string) { kube.Command = c }(kube.Command)
	help := func(argv0 string, args ...string) string {
		root := newRoot(argv0)
		var out strings.Builder
		root.SetOut(&out)
		root.SetArgs(append(args, "--help"))
		if err := root.Execute(); err != nil {
			t.Fatal(err)
		}
		return out.String()
	}
	plugin := filepath.Join(t.TempDir(), ".krew", "bin", "kubectl-almanac") // krew links it so
	for args, want := range map[string][]string{
		"":         {"kubectl almanac [command]", `Use "kubectl almanac [command] --help"`},
		"next":     {"kubectl almanac next [-n NAMESPACE | -A]", "  kubectl almanac next -n shop"},
		"suspend":  {"kubectl almanac suspend KIND/NAME...", "  kubectl almanac suspend sj/nightly-report -n reports"},
		"resume":   {"kubectl almanac resume KIND/NAME..."},
		"run":      {"kubectl almanac run scheduledjob/NAME", "  kubectl almanac run sj/nightly-report -n reports --wait --timeout 30m"},
		"override": {"kubectl almanac override scheduledpodautoscaler/NAME", "  kubectl almanac override --list -A"},
		"preview":  {"kubectl almanac preview (-f FILE|DIR|- | --cluster", "| kubectl almanac preview -f - -o svg", "  kubectl almanac preview --cluster -n shop"},
	} {
		var argv []string
		if args != "" {
			argv = []string{args}
		}
		got := help(plugin, argv...)
		for _, w := range want {
			if !strings.Contains(got, w) {
				t.Errorf("kubectl almanac %s --help lacks %q:\n%s", args, w, got)
			}
		}
		for _, line := range strings.Split(got, "\n") {
			if strings.HasPrefix(strings.TrimSpace(line), "almanac ") {
				t.Errorf("kubectl almanac %s --help has a line that runs almanac itself: %q", args, line)
			}
		}
	}
	kube.Command = "almanac"
	if got := help("/usr/local/bin/almanac", "next"); strings.Contains(got, "kubectl almanac") || !strings.Contains(got, "  almanac next -n shop") {
		t.Errorf("almanac next --help:\n%s", got)
	}
}
