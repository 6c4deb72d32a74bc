package monitoring

import (
	"os"
	"path/filepath"
	"slices"
	"strings"
	"testing"

	"sigs.k8s.io/yaml"
)

// ruleFile is a Prometheus rule file: the spec of a PrometheusRule.
type ruleFile struct {
	Groups []struct {
		Name  string `json:"name"`
		Rules []rule `json:"rules"`
	} `json:"groups"`
}

type rule struct {
	Alert       string            `json:"alert,omitempty"`
	Record      string            `json:"record,omitempty"`
	Expr        string            `json:"expr"`
	For         string            `json:"for,omitempty"`
	Labels      map[string]string `json:"labels,omitempty"`
	Annotations map[string]string `json:"annotations,omitempty"`
}

// renderRules renders the chart's PrometheusRule with extra helm arguments and returns its
// spec as a Prometheus rule file: what the chart ships, for promtool.
func renderRules(t *testing.T, args ...string) []byte {
	t.Helper()
	manifest := helmTemplate(t, "templates/prometheusrule.yaml", append([]string{"--set", "prometheusRule.enabled=true"}, args...)...)
	var pr struct {
		APIVersion string         `json:"apiVersion"`
		Kind       string         `json:"kind"`
		Metadata   map[string]any `json:"metadata"`
		Spec       ruleFile       `json:"spec"`
	}
	if err := yaml.UnmarshalStrict([]byte(manifest), &pr); err != nil {
		t.Fatalf("the rendered PrometheusRule does not decode: %v\n%s", err, manifest)
	}
	if pr.APIVersion != "monitoring.coreos.com/v1" || pr.Kind != "PrometheusRule" || len(pr.Spec.Groups) == 0 {
		t.Fatalf("rendered %s %s with %d groups, want a monitoring.coreos.com/v1 PrometheusRule with rules", pr.APIVersion, pr.Kind, len(pr.Spec.Groups))
	}
	out, err := yaml.Marshal(pr.Spec)
	if err != nil {
		t.Fatal(err)
	}
	return out
}

func parseRules(t *testing.T, data []byte) []rule {
	t.Helper()
	var f ruleFile
	if err := yaml.UnmarshalStrict(data, &f); err != nil {
		t.Fatal(err)
	}
	var out []rule
	for _, g := range f.Groups {
		out = append(out, g.Rules...)
	}
	return out
}

// promtoolRules writes rules as rules.yaml next to a copy of testdata/rules_test.yaml (which
// names rules.yaml) and runs `promtool check rules` and `promtool test rules` there.
func promtoolRules(t *testing.T, rules []byte) (checkOut string, checkErr error, testOut string, testErr error) {
	t.Helper()
	dir := t.TempDir()
	tests, err := os.ReadFile(filepath.Join("testdata", "rules_test.yaml"))
	if err != nil {
		t.Fatal(err)
	}
	if err := os.WriteFile(filepath.Join(dir, "rules.yaml"), rules, 0o644); err != nil {
		t.Fatal(err)
	}
	if err := os.WriteFile(filepath.Join(dir, "rules_test.yaml"), tests, 0o644); err != nil {
		t.Fatal(err)
	}
	promtool := tool(t, "PROMTOOL", "promtool")
	checkOut, checkErr = run(t, dir, promtool, "check", "rules", "rules.yaml")
	testOut, testErr = run(t, dir, promtool, "test", "rules", "rules_test.yaml")
	return
}

// TestRulesPassPromtool: the rules the chart ships, with its default values, are valid and
// pass their unit tests.
func TestRulesPassPromtool(t *testing.T) {
	checkOut, checkErr, testOut, testErr := promtoolRules(t, renderRules(t))
	if checkErr != nil {
		t.Errorf("promtool check rules: %v\n%s", checkErr, checkOut)
	}
	if testErr != nil {
		t.Errorf("promtool test rules: %v\n%s", testErr, testOut)
	}
	t.Logf("promtool check rules:\n%s\npromtool test rules:\n%s", checkOut, testOut)
}

// TestBrokenRulesFailPromtool: rules with a wrong threshold, selector, metric name or
// comparison are still valid rules (promtool check rules passes) but fail the unit tests,
// naming the alert that went wrong: the tests can tell a right rule from a wrong one.
func TestBrokenRulesFailPromtool(t *testing.T) {
	cases := []struct {
		name string
		// args are helm arguments; replace, pairs of old and new text in the rendered rules.
		args    []string
		replace []string
		// alert is the alert whose test must fail.
		alert string
	}{
		{name: "boundary lag threshold too high", args: []string{"--set", "prometheusRule.thresholds.transitionLagSeconds=120"}, alert: "AlmanacBoundaryAppliedLate"},
		{name: "certificate threshold too low", args: []string{"--set", "prometheusRule.thresholds.certificateExpiryHours=1"}, alert: "AlmanacWebhookCertificateExpiring"},
		{name: "suspension threshold too low", args: []string{"--set", "prometheusRule.thresholds.suspendedHours=1"}, alert: "AlmanacSuspendedTooLong"},
		{name: "selector of another job", args: []string{"--set", `prometheusRule.selector=job="prometheus"`}, alert: "AlmanacNoLeader"},
		{name: "missed runs compared the wrong way", replace: []string{
			"increase(almanac_job_runs_missed_total{" + `job="almanac-metrics"` + "}[15m])) > 0",
			"increase(almanac_job_runs_missed_total{" + `job="almanac-metrics"` + "}[15m])) < 0",
		}, alert: "AlmanacJobRunsMissed"},
		{name: "webhook errors counted from the successes", replace: []string{`code!~"2.."`, `code=~"2.."`}, alert: "AlmanacWebhookErrors"},
		{name: "override metric misspelled", replace: []string{"almanac_override_start_timestamp_seconds", "almanac_override_started_timestamp_seconds"}, alert: "AlmanacOverrideInForceTooLong"},
		{name: "no-leader annotation without the namespace", replace: []string{"No almanac replica in namespace {{ $labels.namespace }} holds", "No almanac replica holds"}, alert: "AlmanacNoLeader"},
	}
	for _, tc := range cases {
		t.Run(tc.name, func(t *testing.T) {
			rules := string(renderRules(t, tc.args...))
			for i := 0; i < len(tc.replace); i += 2 {
				if !strings.Contains(rules, tc.replace[i]) {
					t.Fatalf("the rendered rules lack %q: the case no longer breaks anything; update it", tc.replace[i])
				}
				rules = strings.ReplaceAll(rules, tc.replace[i], tc.replace[i+1])
			}
			checkOut, checkErr, testOut, testErr := promtoolRules(t, []byte(rules))
			if checkErr != nil {
				t.Fatalf("promtool check rules refuses the broken copy, want it valid (only wrong): %v\n%s", checkErr, checkOut)
			}
			if testErr == nil {
				t.Fatalf("promtool test rules passes the broken copy, want a failure of %s\n%s", tc.alert, testOut)
			}
			if !strings.Contains(testOut, "alertname: "+tc.alert) {
				t.Errorf("promtool test rules failed, but not on %s:\n%s", tc.alert, testOut)
			}
		})
	}
}

// TestEveryAlertIsDocumentedAndTested: every alert has a severity, a summary and a
// description, the summary names the object or the manager's namespace, every alert has a
// firing case in testdata/rules_test.yaml, and docs/observability.md lists it.
func TestEveryAlertIsDocumentedAndTested(t *testing.T) {
	rules := parseRules(t, renderRules(t))
	testsData, err := os.ReadFile(filepath.Join("testdata", "rules_test.yaml"))
	if err != nil {
		t.Fatal(err)
	}
	var tests struct {
		Tests []struct {
			AlertRuleTest []struct {
				Alertname string `json:"alertname"`
				ExpAlerts []any  `json:"exp_alerts"`
			} `json:"alert_rule_test"`
		} `json:"tests"`
	}
	if err := yaml.Unmarshal(testsData, &tests); err != nil {
		t.Fatal(err)
	}
	firing := map[string]bool{}
	for _, tg := range tests.Tests {
		for _, at := range tg.AlertRuleTest {
			if len(at.ExpAlerts) > 0 {
				firing[at.Alertname] = true
			}
		}
	}
	doc, err := os.ReadFile(filepath.Join("..", "..", "docs", "observability.md"))
	if err != nil {
		t.Fatal(err)
	}
	var alerts []string
	for _, r := range rules {
		if r.Alert == "" {
			continue
		}
		alerts = append(alerts, r.Alert)
		if !slices.Contains([]string{"critical", "warning", "info"}, r.Labels["severity"]) {
			t.Errorf("%s: severity %q, want critical, warning or info", r.Alert, r.Labels["severity"])
		}
		if r.Annotations["summary"] == "" || len(r.Annotations["description"]) < 80 {
			t.Errorf("%s: a summary and a description that says what to do are required: %v", r.Alert, r.Annotations)
		}
		if !strings.Contains(r.Annotations["summary"]+r.Annotations["description"], "$labels.namespace") && r.Alert != "AlmanacMetricsAbsent" {
			t.Errorf("%s: the annotations do not name the namespace ($labels.namespace)", r.Alert)
		}
		if !firing[r.Alert] {
			t.Errorf("%s has no firing case in testdata/rules_test.yaml", r.Alert)
		}
		if !strings.Contains(string(doc), "`"+r.Alert+"`") {
			t.Errorf("%s is not listed in docs/observability.md", r.Alert)
		}
	}
	if len(alerts) < 9 {
		t.Errorf("%d alerts (%v), want every alert of files/prometheus-rules.yaml", len(alerts), alerts)
	}
}
