// Package monitoring tests the chart's alerts and dashboard: the PrometheusRule that the chart
// renders passes `promtool check rules` and the unit tests of testdata/rules_test.yaml
// (`promtool test rules`), and a deliberately broken copy of it fails them; the dashboard
// ConfigMap carries files/grafana-dashboard.json as it is; every expression of the rules and
// of the dashboard's panels parses with Prometheus's parser; and every metric they name is
// exported by a running manager (the almanac binary against a test API server, scraped over
// its authenticated /metrics endpoint).
package monitoring

import (
	"bytes"
	"fmt"
	"os"
	"os/exec"
	"strings"
	"sync"
	"testing"

	"github.com/almanac-dev/almanac/test/testenv"
)

const (
	release   = "almanac"
	releaseNS = "almanac-system"
	// job is the job label of the chart's ServiceMonitor for release "almanac": what the
	// rules select by default, and what the rule tests' series carry.
	job = "almanac-metrics"
)

var (
	envOnce sync.Once
	env     *testenv.Env
	envErr  error
)

// apiServer starts the test API server once, for the tests that need one.
func apiServer(t *testing.T) *testenv.Env {
	t.Helper()
	envOnce.Do(func() { env, envErr = testenv.Start() })
	if envErr != nil {
		t.Fatal(envErr)
	}
	return env
}

func TestMain(m *testing.M) {
	code := m.Run()
	if env != nil {
		_ = env.Stop()
	}
	if binaryDir != "" {
		_ = os.RemoveAll(binaryDir)
	}
	os.Exit(code)
}

// tool returns the binary that the Makefile installs and exports as the variable name.
func tool(t *testing.T, name, target string) string {
	t.Helper()
	p := os.Getenv(name)
	if p == "" {
		t.Fatalf("%s is not set: run these tests through `make unit` or `make monitoring-test`, which install the pinned tool and export %s, or set it", name, name)
	}
	if _, err := os.Stat(p); err != nil {
		t.Fatalf("%s=%s: %v: run `make %s`", name, p, err, target)
	}
	return p
}

// run runs a command in dir and returns its combined output.
func run(t *testing.T, dir, bin string, args ...string) (string, error) {
	t.Helper()
	cmd := exec.Command(bin, args...)
	cmd.Dir = dir
	var out bytes.Buffer
	cmd.Stdout, cmd.Stderr = &out, &out
	if dir == "" {
		cmd.Dir = testenv.RepoRoot()
	}
	home := t.TempDir()
	cmd.Env = append(os.Environ(), "HELM_CACHE_HOME="+home, "HELM_CONFIG_HOME="+home, "HELM_DATA_HOME="+home)
	err := cmd.Run()
	if err != nil {
		err = fmt.Errorf("%s %s: %w", bin, strings.Join(args, " "), err)
	}
	return out.String(), err
}

// helmTemplate renders one template of the chart (release "almanac" in almanac-system) with
// extra helm arguments.
func helmTemplate(t *testing.T, template string, args ...string) string {
	t.Helper()
	out, err := run(t, "", tool(t, "HELM", "helm"), append([]string{"template", release, "charts/almanac", "--namespace", releaseNS, "--show-only", template}, args...)...)
	if err != nil {
		t.Fatalf("%v\n%s", err, out)
	}
	return out
}
