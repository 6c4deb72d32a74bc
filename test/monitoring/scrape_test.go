package monitoring

import (
	"bufio"
	"context"
	"crypto/tls"
	"fmt"
	"io"
	"net"
	"net/http"
	"os"
	"os/exec"
	"path/filepath"
	"slices"
	"sort"
	"strconv"
	"strings"
	"sync"
	"syscall"
	"testing"
	"time"

	"github.com/prometheus/prometheus/promql/parser"
	admissionregistrationv1 "k8s.io/api/admissionregistration/v1"
	authenticationv1 "k8s.io/api/authentication/v1"
	autoscalingv2 "k8s.io/api/autoscaling/v2"
	batchv1 "k8s.io/api/batch/v1"
	corev1 "k8s.io/api/core/v1"
	rbacv1 "k8s.io/api/rbac/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/client-go/kubernetes"
	"k8s.io/utils/ptr"
	"sigs.k8s.io/controller-runtime/pkg/client"

	autoscalingv1alpha1 "github.com/almanac-dev/almanac/api/autoscaling/v1alpha1"
	batchv1alpha1 "github.com/almanac-dev/almanac/api/batch/v1alpha1"
	sleepv1alpha1 "github.com/almanac-dev/almanac/api/sleep/v1alpha1"
	"github.com/almanac-dev/almanac/test/testenv"
)

// expression is one PromQL expression of the rules or of a dashboard panel.
type expression struct {
	where, expr string
}

// grafanaVariables are replaced in the panels' expressions by what Grafana would put there.
var grafanaVariables = strings.NewReplacer(`$job`, job, `$__rate_interval`, "5m")

// expressions returns the expressions of the rules the chart ships (default values) and of
// the dashboard's panels.
func expressions(t *testing.T) []expression {
	t.Helper()
	var out []expression
	for _, r := range parseRules(t, renderRules(t)) {
		out = append(out, expression{where: "alert " + r.Alert, expr: r.Expr})
	}
	_, d := readDashboard(t)
	for _, p := range d.Panels {
		for _, tg := range p.Targets {
			out = append(out, expression{where: "panel " + p.Title, expr: grafanaVariables.Replace(tg.Expr)})
		}
	}
	return out
}

// metricNames parses expr with Prometheus's parser and returns the metric names it selects.
func metricNames(expr string) ([]string, error) {
	node, err := parser.NewParser(parser.Options{}).ParseExpr(expr)
	if err != nil {
		return nil, err
	}
	var names []string
	parser.Inspect(node, func(n parser.Node, _ []parser.Node) error {
		if vs, ok := n.(*parser.VectorSelector); ok {
			name := vs.Name
			for _, m := range vs.LabelMatchers {
				if m.Name == "__name__" {
					name = m.Value
				}
			}
			if name != "" && !slices.Contains(names, name) {
				names = append(names, name)
			}
		}
		return nil
	})
	return names, nil
}

// referencedMetrics returns every metric name that the rules and panels select, with where.
func referencedMetrics(t *testing.T) map[string][]string {
	t.Helper()
	refs := map[string][]string{}
	for _, e := range expressions(t) {
		names, err := metricNames(e.expr)
		if err != nil {
			t.Errorf("%s: %q does not parse: %v", e.where, e.expr, err)
			continue
		}
		if len(names) == 0 {
			t.Errorf("%s: %q selects no metric", e.where, e.expr)
		}
		for _, n := range names {
			refs[n] = append(refs[n], e.where)
		}
	}
	return refs
}

// TestExpressionsParse: every expression of the rules and of the panels parses with
// Prometheus's parser, and a broken one does not (the check can fail).
func TestExpressionsParse(t *testing.T) {
	refs := referencedMetrics(t)
	if len(refs) < 10 {
		t.Errorf("the rules and panels select %d metrics, want all of almanac's: %v", len(refs), refs)
	}
	if _, err := metricNames(`sum by (namespace (rate(almanac_job_runs_started_total[5m]))`); err == nil {
		t.Error("a broken expression parses")
	}
}

// TestMetricsExported runs the almanac manager (the binary, as the image runs it) against a
// test API server, with leader election and self-managed certificates, creates a suspended
// ScheduledJob, a ScheduledPodAutoscaler and an override through the admission webhooks, and
// scrapes /metrics as an account bound to the metrics-reader role: every metric that an
// alert or a panel selects is there (a histogram with its _bucket, _sum and _count), other
// than up, which Prometheus itself writes.
func TestMetricsExported(t *testing.T) {
	refs := referencedMetrics(t)
	e := apiServer(t)
	ctx := context.Background()
	const id = "monitoring"
	for _, n := range []string{releaseNS, "team-a"} {
		if err := e.Client.Create(ctx, &corev1.Namespace{ObjectMeta: metav1.ObjectMeta{Name: n}}); err != nil {
			t.Fatal(err)
		}
	}
	webhookPort, metricsPort, probePort := freePort(t), freePort(t), freePort(t)
	if n, err := testenv.InstallWebhookConfigurations(ctx, e.Client, testenv.RepoRoot(), id, webhookPort); err != nil || n == 0 {
		t.Fatalf("installing config/webhook's configurations: %d webhooks, %v", n, err)
	}
	t.Cleanup(func() {
		_ = e.Client.Delete(context.Background(), &admissionregistrationv1.MutatingWebhookConfiguration{ObjectMeta: metav1.ObjectMeta{Name: id}})
		_ = e.Client.Delete(context.Background(), &admissionregistrationv1.ValidatingWebhookConfiguration{ObjectMeta: metav1.ObjectMeta{Name: id}})
	})
	startManager(t, e, probePort,
		"--metrics-bind-address=127.0.0.1:"+strconv.Itoa(metricsPort),
		"--webhook-port="+strconv.Itoa(webhookPort),
		"--leader-elect", "--leader-election-namespace="+releaseNS,
		"--cert-mode=self-managed", "--cert-namespace="+releaseNS, "--cert-ca-secret="+id+"-ca",
		"--webhook-service="+id, "--webhook-dns-names=localhost",
		"--mutating-webhook-configuration="+id, "--validating-webhook-configuration="+id,
	)

	// Objects whose series exist only while they do: created through the webhooks, which
	// also gives the webhook latency histogram its first series.
	now := time.Now().UTC()
	objs := []client.Object{
		&batchv1alpha1.ScheduledJob{
			ObjectMeta: metav1.ObjectMeta{Name: "nightly-report", Namespace: "team-a"},
			Spec: batchv1alpha1.ScheduledJobSpec{
				Schedule: "30 2 * * *",
				JobPolicy: batchv1alpha1.JobPolicy{
					Suspend: true,
					JobTemplate: batchv1.JobTemplateSpec{Spec: batchv1.JobSpec{Template: corev1.PodTemplateSpec{Spec: corev1.PodSpec{
						RestartPolicy: corev1.RestartPolicyOnFailure,
						Containers:    []corev1.Container{{Name: "report", Image: "busybox"}},
					}}}},
				},
			},
		},
		&autoscalingv1alpha1.ScheduledPodAutoscaler{
			ObjectMeta: metav1.ObjectMeta{Name: "web", Namespace: "team-a"},
			Spec: autoscalingv1alpha1.ScheduledPodAutoscalerSpec{
				HorizontalPodAutoscalerSpec: &autoscalingv2.HorizontalPodAutoscalerSpec{
					ScaleTargetRef: autoscalingv2.CrossVersionObjectReference{APIVersion: "apps/v1", Kind: "Deployment", Name: "web"},
					MinReplicas:    ptr.To[int32](2),
					MaxReplicas:    10,
				},
			},
		},
		// A Sleep, awake now: its series (workloads by state, what it keeps asleep, what it
		// reclaimed) exist from its first status.
		&sleepv1alpha1.Sleep{
			ObjectMeta: metav1.ObjectMeta{Name: "nights", Namespace: "team-a"},
			Spec: sleepv1alpha1.SleepSpec{
				Asleep: []sleepv1alpha1.Window{{Type: sleepv1alpha1.WindowOneShot, TimeZone: "UTC",
					StartTime: now.Add(24 * time.Hour).Format("2006-01-02T15:04"), EndTime: now.Add(25 * time.Hour).Format("2006-01-02T15:04")}},
				Kinds: []sleepv1alpha1.WorkloadKind{{APIVersion: "apps/v1", Kind: "Deployment"}},
			},
		},
		&autoscalingv1alpha1.Schedule{
			ObjectMeta: metav1.ObjectMeta{Name: "web-override", Namespace: "team-a", Labels: map[string]string{autoscalingv1alpha1.OverrideLabel: "true"}},
			Spec: autoscalingv1alpha1.ScheduleSpec{
				ScaleTargetRef: autoscalingv1alpha1.ScaleTargetReference{Name: "web"},
				MinReplicas:    ptr.To[int32](5),
				Type:           autoscalingv1alpha1.ScheduleTypeOneShot,
				StartTime:      now.Truncate(time.Minute).Format("2006-01-02T15:04"),
				EndTime:        now.Add(2 * time.Hour).Truncate(time.Minute).Format("2006-01-02T15:04"),
				TimeZone:       "UTC",
			},
		},
	}
	for _, o := range objs {
		eventually(t, 30*time.Second, "creating "+o.GetName()+" through the webhooks", func() error {
			err := e.Client.Create(ctx, o)
			if err != nil && strings.Contains(err.Error(), "already exists") {
				return nil
			}
			return err
		})
	}

	token := metricsReaderToken(t, e)
	httpc := &http.Client{Timeout: 10 * time.Second, Transport: &http.Transport{
		// The metrics endpoint serves a self-signed certificate unless one is mounted.
		TLSClientConfig: &tls.Config{InsecureSkipVerify: true},
	}}
	var exported map[string]bool
	var samples []string
	eventually(t, 90*time.Second, "every metric of the rules and panels exported", func() error {
		var err error
		if exported, samples, err = scrape(ctx, httpc, "https://127.0.0.1:"+strconv.Itoa(metricsPort)+"/metrics", token); err != nil {
			return err
		}
		var missing []string
		for name := range refs {
			if name == "up" {
				continue
			}
			want := []string{name}
			if base, ok := strings.CutSuffix(name, "_bucket"); ok {
				want = append(want, base+"_sum", base+"_count")
			}
			for _, w := range want {
				if !exported[w] {
					missing = append(missing, fmt.Sprintf("%s (%s)", w, strings.Join(refs[name], ", ")))
				}
			}
		}
		if len(missing) > 0 {
			sort.Strings(missing)
			return fmt.Errorf("not exported: %s", strings.Join(missing, "; "))
		}
		return nil
	})
	// The check can fail: a name that no collector exports is not found.
	if exported["almanac_no_such_metric"] {
		t.Error("the scrape claims a metric nobody exports")
	}

	// The values of almanac's own gauges: the suspension from the create's managedFields
	// time (whole seconds, at or before now), the override's window as written, the
	// certificate's notAfter in the future.
	sj := &batchv1alpha1.ScheduledJob{}
	if err := e.Client.Get(ctx, client.ObjectKey{Namespace: "team-a", Name: "nightly-report"}, sj); err != nil {
		t.Fatal(err)
	}
	created := float64(sj.CreationTimestamp.Unix())
	checks := []struct {
		prefix   string
		min, max float64
	}{
		{`almanac_suspended_since_timestamp_seconds{kind="ScheduledJob",name="nightly-report",namespace="team-a"}`, created, created},
		{`almanac_override_start_timestamp_seconds{autoscaler="web",name="web-override",namespace="team-a"}`, float64(now.Truncate(time.Minute).Unix()), float64(now.Truncate(time.Minute).Unix())},
		{`almanac_override_end_timestamp_seconds{autoscaler="web",name="web-override",namespace="team-a"}`, float64(now.Add(2 * time.Hour).Truncate(time.Minute).Unix()), float64(now.Add(2 * time.Hour).Truncate(time.Minute).Unix())},
		{`almanac_webhook_serving_certificate_expiry_timestamp_seconds`, float64(time.Now().Add(time.Hour).Unix()), float64(time.Now().Add(8 * 24 * time.Hour).Unix())},
	}
	for _, c := range checks {
		var found bool
		for _, line := range samples {
			v, ok := strings.CutPrefix(line, c.prefix+" ")
			if !ok {
				continue
			}
			found = true
			f, err := strconv.ParseFloat(v, 64)
			if err != nil || f < c.min || f > c.max {
				t.Errorf("%s = %s, want between %.0f and %.0f", c.prefix, v, c.min, c.max)
			}
		}
		if !found {
			t.Errorf("no sample %s", c.prefix)
		}
	}
}

// scrape GETs the metrics endpoint with a bearer token and returns the names of the samples.
func scrape(ctx context.Context, c *http.Client, url, token string) (map[string]bool, []string, error) {
	req, err := http.NewRequestWithContext(ctx, http.MethodGet, url, nil)
	if err != nil {
		return nil, nil, err
	}
	req.Header.Set("Authorization", "Bearer "+token)
	resp, err := c.Do(req)
	if err != nil {
		return nil, nil, err
	}
	defer func() { _ = resp.Body.Close() }()
	if resp.StatusCode != http.StatusOK {
		body, _ := io.ReadAll(resp.Body)
		return nil, nil, fmt.Errorf("GET %s: %s: %s", url, resp.Status, body)
	}
	names := map[string]bool{}
	var lines []string
	sc := bufio.NewScanner(resp.Body)
	sc.Buffer(make([]byte, 1<<20), 1<<20)
	for sc.Scan() {
		line := sc.Text()
		if line == "" || strings.HasPrefix(line, "#") {
			continue
		}
		if i := strings.IndexAny(line, "{ "); i > 0 {
			names[line[:i]] = true
		}
		lines = append(lines, line)
	}
	return names, lines, sc.Err()
}

// metricsReaderToken returns the token of a ServiceAccount bound to a ClusterRole like the
// chart's <release>-metrics-reader.
func metricsReaderToken(t *testing.T, e *testenv.Env) string {
	t.Helper()
	ctx := context.Background()
	cs, err := kubernetes.NewForConfig(e.Config)
	if err != nil {
		t.Fatal(err)
	}
	if _, err := cs.CoreV1().ServiceAccounts(releaseNS).Create(ctx, &corev1.ServiceAccount{ObjectMeta: metav1.ObjectMeta{Name: "prometheus"}}, metav1.CreateOptions{}); err != nil {
		t.Fatal(err)
	}
	reader := &rbacv1.ClusterRole{ObjectMeta: metav1.ObjectMeta{Name: "monitoring-metrics-reader"}, Rules: []rbacv1.PolicyRule{{NonResourceURLs: []string{"/metrics"}, Verbs: []string{"get"}}}}
	binding := &rbacv1.ClusterRoleBinding{
		ObjectMeta: metav1.ObjectMeta{Name: "monitoring-metrics-reader"},
		RoleRef:    rbacv1.RoleRef{APIGroup: rbacv1.GroupName, Kind: "ClusterRole", Name: reader.Name},
		Subjects:   []rbacv1.Subject{{Kind: rbacv1.ServiceAccountKind, Name: "prometheus", Namespace: releaseNS}},
	}
	for _, o := range []client.Object{reader, binding} {
		if err := e.Client.Create(ctx, o); err != nil {
			t.Fatal(err)
		}
	}
	tr, err := cs.CoreV1().ServiceAccounts(releaseNS).CreateToken(ctx, "prometheus", &authenticationv1.TokenRequest{Spec: authenticationv1.TokenRequestSpec{ExpirationSeconds: ptr.To[int64](600)}}, metav1.CreateOptions{})
	if err != nil {
		t.Fatal(err)
	}
	return tr.Status.Token
}

// binaryDir holds the built binary; TestMain removes it.
var binaryDir string

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

// logBuffer collects the manager's output.
type logBuffer struct {
	mu  sync.Mutex
	buf strings.Builder
}

func (l *logBuffer) Write(b []byte) (int, error) {
	l.mu.Lock()
	defer l.mu.Unlock()
	return l.buf.Write(b)
}

func (l *logBuffer) String() string {
	l.mu.Lock()
	defer l.mu.Unlock()
	return l.buf.String()
}

// startManager runs `almanac manager` against the test API server until the test ends, and
// waits for it to be ready.
func startManager(t *testing.T, e *testenv.Env, probePort int, args ...string) {
	t.Helper()
	bin, err := almanacBinary()
	if err != nil {
		t.Fatal(err)
	}
	logs := &logBuffer{}
	cmd := exec.Command(bin, append([]string{"manager", "--health-probe-bind-address=127.0.0.1:" + strconv.Itoa(probePort)}, args...)...)
	cmd.Env = append(os.Environ(), "KUBECONFIG="+e.KubeconfigPath)
	cmd.Stdout, cmd.Stderr = logs, logs
	if err := cmd.Start(); err != nil {
		t.Fatal(err)
	}
	done := make(chan struct{})
	go func() { _ = cmd.Wait(); close(done) }()
	t.Cleanup(func() {
		_ = cmd.Process.Signal(syscall.SIGTERM)
		select {
		case <-done:
		case <-time.After(30 * time.Second):
			_ = cmd.Process.Kill()
			<-done
		}
		if t.Failed() {
			t.Logf("the manager's log:\n%s", logs.String())
		}
	})
	url := "http://127.0.0.1:" + strconv.Itoa(probePort) + "/readyz"
	eventually(t, 90*time.Second, "the manager ready", func() error {
		select {
		case <-done:
			t.Fatalf("the manager exited:\n%s", logs.String())
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

func freePort(t testing.TB) int {
	t.Helper()
	l, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	defer func() { _ = l.Close() }()
	return l.Addr().(*net.TCPAddr).Port
}

func eventually(t testing.TB, timeout time.Duration, what string, f func() error) {
	t.Helper()
	deadline := time.Now().Add(timeout)
	var err error
	for time.Now().Before(deadline) {
		if err = f(); err == nil {
			return
		}
		time.Sleep(200 * time.Millisecond)
	}
	t.Fatalf("%s: not within %s: %v", what, timeout, err)
}
