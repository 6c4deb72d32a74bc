package monitoring

import (
	"bytes"
	"encoding/json"
	"os"
	"path/filepath"
	"strings"
	"testing"

	corev1 "k8s.io/api/core/v1"
	"sigs.k8s.io/yaml"

	"github.com/almanac-dev/almanac/api/index"
	"github.com/almanac-dev/almanac/test/testenv"
)

const dashboardFile = "charts/almanac/files/grafana-dashboard.json"

// dashboard is the part of a Grafana dashboard that the tests read.
type dashboard struct {
	UID    string  `json:"uid"`
	Title  string  `json:"title"`
	Panels []panel `json:"panels"`
	// Templating holds the variables the expressions use ($datasource, $job).
	Templating struct {
		List []struct {
			Name string `json:"name"`
		} `json:"list"`
	} `json:"templating"`
}

type panel struct {
	Type       string `json:"type"`
	Title      string `json:"title"`
	Datasource *struct {
		UID string `json:"uid"`
	} `json:"datasource"`
	Targets []struct {
		Expr string `json:"expr"`
	} `json:"targets"`
}

func readDashboard(t *testing.T) ([]byte, dashboard) {
	t.Helper()
	data, err := os.ReadFile(filepath.Join(testenv.RepoRoot(), dashboardFile))
	if err != nil {
		t.Fatal(err)
	}
	var d dashboard
	if err := json.Unmarshal(data, &d); err != nil {
		t.Fatalf("%s: %v", dashboardFile, err)
	}
	return data, d
}

// TestDashboardConfigMap: the chart's ConfigMap carries the dashboard file byte for byte, with
// the Grafana sidecar's label, only when dashboard.enabled; and the file is canonical JSON
// (two-space indentation), so that a change to it reads as a small diff.
func TestDashboardConfigMap(t *testing.T) {
	data, _ := readDashboard(t)
	var indented bytes.Buffer
	if err := json.Indent(&indented, bytes.TrimSpace(data), "", "  "); err != nil {
		t.Fatal(err)
	}
	if indented.String()+"\n" != string(data) {
		t.Errorf("%s is not indented with two spaces and ending in a newline; reformat it (e.g. jq . < file)", dashboardFile)
	}

	manifest := helmTemplate(t, "templates/dashboard.yaml", "--set", "dashboard.enabled=true", "--set", "dashboard.namespace=monitoring",
		"--set", "dashboard.annotations.grafana_folder=Platform")
	var cm corev1.ConfigMap
	if err := yaml.UnmarshalStrict([]byte(manifest), &cm); err != nil {
		t.Fatalf("%v\n%s", err, manifest)
	}
	if cm.Kind != "ConfigMap" || cm.Labels["grafana_dashboard"] != "1" || cm.Namespace != "monitoring" || cm.Annotations["grafana_folder"] != "Platform" {
		t.Errorf("rendered %s in %q, labels %v, annotations %v: want a ConfigMap in monitoring with grafana_dashboard: \"1\" and the folder annotation",
			cm.Kind, cm.Namespace, cm.Labels, cm.Annotations)
	}
	if got := cm.Data["almanac.json"]; got != strings.TrimSuffix(string(data), "\n") {
		t.Errorf("the ConfigMap's almanac.json differs from %s (%d and %d bytes)", dashboardFile, len(got), len(data))
	}

	// Off by default, as the PrometheusRule.
	out, err := run(t, "", tool(t, "HELM", "helm"), "template", release, "charts/almanac", "--namespace", releaseNS)
	if err != nil {
		t.Fatalf("%v\n%s", err, out)
	}
	for _, kind := range []string{"kind: PrometheusRule", "grafana_dashboard"} {
		if strings.Contains(out, kind) {
			t.Errorf("the default render has %q; the alerts and the dashboard are off by default", kind)
		}
	}
}

// TestDashboardPanels: the dashboard shows what an operator looks for, each panel from the
// dashboard's data source variable and almanac's job variable.
func TestDashboardPanels(t *testing.T) {
	_, d := readDashboard(t)
	if d.UID == "" || d.Title == "" {
		t.Error("the dashboard needs a uid and a title (the sidecar and links find it by uid)")
	}
	vars := map[string]bool{}
	for _, v := range d.Templating.List {
		vars[v.Name] = true
	}
	if !vars["datasource"] || !vars["job"] {
		t.Errorf("variables %v, want datasource and job", vars)
	}
	all := ""
	for _, p := range d.Panels {
		if p.Type == "row" {
			continue
		}
		if p.Datasource == nil || p.Datasource.UID != "${datasource}" || len(p.Targets) == 0 {
			t.Errorf("panel %q: no targets or not on ${datasource}", p.Title)
		}
		for _, tg := range p.Targets {
			if !strings.Contains(tg.Expr, `job=~"$job"`) {
				t.Errorf("panel %q: %q does not select job=~\"$job\"", p.Title, tg.Expr)
			}
			all += tg.Expr + "\n"
		}
	}
	// One metric per topic of the dashboard (issue 27): boundaries and their lag, active
	// schedules, runs started/missed/skipped, trigger lag, webhook rate/errors/latency,
	// leader, certificate expiry, suspensions and overrides.
	for _, m := range []string{
		"almanac_autoscaler_transitions_applied_total", "almanac_autoscaler_transition_lag_seconds_bucket",
		"almanac_autoscaler_active_schedules", "almanac_job_runs_started_total", "almanac_job_runs_missed_total",
		"almanac_job_runs_skipped_total", "almanac_job_trigger_lag_seconds_bucket", "controller_runtime_webhook_requests_total",
		"controller_runtime_webhook_latency_seconds_bucket", "leader_election_master_status",
		"almanac_webhook_serving_certificate_expiry_timestamp_seconds", "almanac_suspended_since_timestamp_seconds",
		"almanac_override_start_timestamp_seconds",
	} {
		if !strings.Contains(all, m+"{") {
			t.Errorf("no panel shows %s", m)
		}
	}
	// The dashboard is a file the chart ships as it is (no template): the Lease it selects is
	// checked against its one home, the manager's (api/index).
	if want := `name="` + index.LeaderElectionID + `"`; !strings.Contains(all, "leader_election_master_status{job=~\"$job\", "+want+"}") {
		t.Errorf("the leader panel does not select %s, the manager's Lease (index.LeaderElectionID)", want)
	}
}
