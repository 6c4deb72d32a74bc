package bench_test

import (
	"context"
	"errors"
	"fmt"
	"io"
	"path/filepath"
	"strconv"
	"strings"
	"sync"
	"sync/atomic"
	"testing"
	"time"

	autoscalingv2 "k8s.io/api/autoscaling/v2"
	corev1 "k8s.io/api/core/v1"
	rbacv1 "k8s.io/api/rbac/v1"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"
	"k8s.io/client-go/kubernetes"
	"k8s.io/client-go/rest"
	"k8s.io/client-go/tools/clientcmd"
	clientcmdapi "k8s.io/client-go/tools/clientcmd/api"
	"k8s.io/utils/ptr"
	"sigs.k8s.io/controller-runtime/pkg/client"

	autoscalingv1alpha1 "github.com/almanac-dev/almanac/api/autoscaling/v1alpha1"
	"github.com/almanac-dev/almanac/test/testenv"
)

// noisyAPIServerFlags make the noisy-neighbour figure's API server small, so that API
// Priority and Fairness queues on a 2-core machine: 30 seats in all (a default API server has
// 600), which APF divides among its priority levels by their shares.
var noisyAPIServerFlags = map[string]string{
	"max-requests-inflight":          "20",
	"max-mutating-requests-inflight": "10",
}

// noisyConfig is one configuration of the noisy-neighbour figure.
type noisyConfig struct {
	Name string
	// Noise: the tenants flood the API server from before the boundary until its last HPA
	// is seen. APF: the chart's FlowSchema and PriorityLevelConfiguration are installed.
	Noise, APF bool
}

// noisyConfigs run in this order in each run: the chart's objects are created before the
// third and deleted after the fourth.
var noisyConfigs = []noisyConfig{
	{Name: "quiet"},
	{Name: "noisy neighbour", Noise: true},
	{Name: "noisy neighbour, with the chart's APF objects", Noise: true, APF: true},
	{Name: "quiet, with the chart's APF objects", APF: true},
}

// noisySizes are the noisy-neighbour figure's sizes.
type noisySizes struct {
	// N autoscalers share the boundary of each measurement; Runs runs of every
	// configuration.
	N, Runs int
	// Tenants ServiceAccounts, each in a namespace of its own with ConfigMaps ConfigMaps,
	// each listing them with Workers goroutines, back to back.
	Tenants, Workers, ConfigMaps int
	// Warmup is how long the noise runs at least before the boundary: long enough for the
	// API server to re-divide its seats among the busy levels (every 10 s), as under a
	// neighbour that floods for minutes.
	Warmup time.Duration
}

// noisyRun is one measurement: one boundary of N autoscalers under one configuration.
type noisyRun struct {
	Lat dist
	// Lists the tenants completed and the requests of theirs that failed (the API server
	// refused them with 429 once their queues were full, after client-go's retries), from
	// the start of the noise to the boundary's last HPA seen.
	Lists, Refused int64
	// Seats is the API server's current concurrency limit of each priority level 1 s before
	// the boundary (apiserver_flowcontrol_current_limit_seats).
	Seats map[string]float64
}

type noisyResult struct {
	Sizes noisySizes
	// Level is the chart's priority level.
	Level string
	Runs  map[string][]noisyRun
}

// BenchmarkNoisyNeighbour: ALMANAC_BENCH_NOISY_N autoscalers (100) share a boundary, on an API
// server with 30 seats (noisyAPIServerFlags) and the manager running as the chart's
// ServiceAccount (a token of its own, as in its Pod), while ALMANAC_BENCH_NOISY_TENANTS other
// ServiceAccounts (8) list ALMANAC_BENCH_NOISY_CONFIGMAPS ConfigMaps (200) each in their
// namespaces with ALMANAC_BENCH_NOISY_WORKERS goroutines each (8), back to back; with and
// without the chart's FlowSchema and PriorityLevelConfiguration (priorityAndFairness), and
// without the noise, ALMANAC_BENCH_NOISY_RUNS runs (3) of each configuration in one run.
//
//	go test ./test/bench -run '^$' -bench NoisyNeighbour -benchtime 1x -timeout 30m   # make bench-noisy
func BenchmarkNoisyNeighbour(b *testing.B) {
	sz := noisySizes{
		N:          size(b, "ALMANAC_BENCH_NOISY_N", 100),
		Runs:       size(b, "ALMANAC_BENCH_NOISY_RUNS", 3),
		Tenants:    size(b, "ALMANAC_BENCH_NOISY_TENANTS", 8),
		Workers:    size(b, "ALMANAC_BENCH_NOISY_WORKERS", 8),
		ConfigMaps: size(b, "ALMANAC_BENCH_NOISY_CONFIGMAPS", 200),
		Warmup:     10 * time.Second,
	}
	for range b.N {
		res := noisyNeighbour(b, sz)
		for _, c := range noisyConfigs {
			p99 := spreadOf(res.measures(c.Name), "p99")
			b.ReportMetric(p99.Median, strings.NewReplacer(" ", "-", ",", "", "'", "").Replace(c.Name)+"-p99-ms")
		}
		res.report()
	}
}

// TestNoisyNeighbourHarnessSmoke runs the noisy-neighbour figure at a tiny size: each
// configuration measures its boundary, the tenants make requests only when they should, and
// the API server classifies the manager's requests into the chart's FlowSchema exactly when
// its objects are installed (checked inside, before every measurement). It asserts nothing
// about speed.
func TestNoisyNeighbourHarnessSmoke(t *testing.T) {
	if testing.Short() {
		t.Skip("starts an API server and the manager binary")
	}
	res := noisyNeighbour(t, noisySizes{N: 2, Runs: 1, Tenants: 1, Workers: 1, ConfigMaps: 3, Warmup: time.Second})
	for _, c := range noisyConfigs {
		runs := res.Runs[c.Name]
		if len(runs) != 1 || runs[0].Lat.N != 2 {
			t.Errorf("%s: %+v, want one run with 2 samples", c.Name, runs)
			continue
		}
		if got := runs[0].Lists > 0; got != c.Noise {
			t.Errorf("%s: the tenants listed %d times, want lists only with noise", c.Name, runs[0].Lists)
		}
		if runs[0].Seats["workload-low"] <= 0 || (c.APF && runs[0].Seats[res.Level] <= 0) {
			t.Errorf("%s: seats of the priority levels %v, want workload-low's and, with the chart's objects, %s's", c.Name, runs[0].Seats, res.Level)
		}
	}
}

func (res noisyResult) measures(config string) []measure {
	var out []measure
	for _, r := range res.Runs[config] {
		out = append(out, measure{
			"p50": float64(r.Lat.P50) / float64(time.Millisecond),
			"p99": float64(r.Lat.P99) / float64(time.Millisecond),
			"max": float64(r.Lat.Max) / float64(time.Millisecond),
		})
	}
	return out
}

func (res noisyResult) report() {
	sz := res.Sizes
	figure := func(c noisyConfig) string {
		return fmt.Sprintf("noisy neighbour: %d autoscalers × 1 boundary → HPA seen, API server of 30 seats, %s (median of %d, lowest to highest)", sz.N, c.Name, sz.Runs)
	}
	describe := func(config string) string {
		ms := res.measures(config)
		return fmt.Sprintf("p50 %s; p99 %s; last %s", spreadOf(ms, "p50").format(" ms"), spreadOf(ms, "p99").format(" ms"), spreadOf(ms, "max").format(" ms"))
	}
	quiet := spreadOf(res.measures("quiet"), "p99")
	noisy := spreadOf(res.measures("noisy neighbour"), "p99")
	for _, c := range noisyConfigs {
		p99 := spreadOf(res.measures(c.Name), "p99")
		r := row{Figure: figure(c), Almanac: describe(c.Name)}
		if c.Name != "quiet" {
			r.Other = "quiet: " + describe("quiet")
			r.Ratio = "p99 " + times(p99.Median/quiet.Median)
		}
		switch {
		case c.Noise && c.APF: // what the objects are for
			r.Goal = "p99 below every noisy run's without the objects"
			r.Met = yes(p99.High < noisy.Low)
		case c.APF: // what they cost
			r.Goal = "p99 not above every quiet run's without the objects"
			r.Met = yes(p99.Low <= quiet.High)
		}
		table.add(r)
		level := "workload-low"
		if c.APF {
			level = res.Level
		}
		var lists, refused int64
		var managerSeats, sharedSeats []string
		for _, run := range res.Runs[c.Name] {
			lists, refused = lists+run.Lists, refused+run.Refused
			managerSeats = append(managerSeats, strconv.FormatFloat(run.Seats[level], 'f', -1, 64))
			sharedSeats = append(sharedSeats, strconv.FormatFloat(run.Seats["workload-low"], 'f', -1, 64))
		}
		text := fmt.Sprintf("the manager's priority level %s had %s seats 1 s before the boundary (each run)", level, strings.Join(managerSeats, ", "))
		if c.APF {
			text += fmt.Sprintf(", workload-low %s", strings.Join(sharedSeats, ", "))
		}
		if c.Noise {
			text += fmt.Sprintf("; the tenants (in workload-low) completed %d lists and had %d requests refused over the %d runs", lists, refused, len(res.Runs[c.Name]))
		}
		table.note(figure(c), "%s", text)
	}
}

// noisyNeighbour runs the figure: an API server of its own (the package's env is swapped
// for it until tb ends), the tenants, the manager as the chart's ServiceAccount, then every
// configuration sz.Runs times.
func noisyNeighbour(tb testing.TB, sz noisySizes) noisyResult {
	tb.Helper()
	ctx := context.Background()
	small, err := testenv.StartWith(testenv.Options{APIServerFlags: noisyAPIServerFlags})
	if err != nil {
		tb.Fatal(err)
	}
	// Registered first, so that it runs last: after the manager has stopped and the
	// namespaces were cleaned up on this API server.
	oldEnv, oldPort, oldKubeconfig := env, webhookPort, managerKubeconfig
	tb.Cleanup(func() {
		env, webhookPort, managerKubeconfig = oldEnv, oldPort, oldKubeconfig
		if err := small.Stop(); err != nil {
			tb.Log(err)
		}
	})
	env = small
	if err := installWebhooks(ctx); err != nil {
		tb.Fatal(err)
	}

	// The chart's objects as `helm install almanac --namespace almanac-system` renders them.
	objs, err := testenv.RenderChart("almanac", systemNamespace, []string{"templates/serviceaccount.yaml", "templates/flowcontrol.yaml"})
	if err != nil {
		tb.Fatal(err)
	}
	var saName, flowSchema, level string
	var flowControl []*unstructured.Unstructured
	for _, o := range objs {
		switch o.GetKind() {
		case "ServiceAccount":
			saName = o.GetName()
		case "FlowSchema":
			flowSchema = o.GetName()
			flowControl = append(flowControl, o)
		case "PriorityLevelConfiguration":
			level = o.GetName()
			flowControl = append(flowControl, o)
		}
	}
	if saName == "" || flowSchema == "" || len(flowControl) != 2 {
		tb.Fatalf("the chart rendered %d objects without its ServiceAccount, FlowSchema or PriorityLevelConfiguration: is priorityAndFairness.enabled off in values.yaml?", len(objs))
	}
	managerCfg := serviceAccount(tb, systemNamespace, saName, "cluster-admin", "")
	managerKubeconfig = writeKubeconfig(tb, managerCfg, "manager")
	suggested, err := testenv.FlowSchemaUIDs(ctx, env.Config, "service-accounts")
	if err != nil {
		tb.Fatal(err)
	}

	// What a tenant may do in its namespace (the built-in "edit" is aggregated by
	// kube-controller-manager, which does not run here).
	if err := env.Client.Create(ctx, &rbacv1.ClusterRole{
		ObjectMeta: metav1.ObjectMeta{Name: tenantRole},
		Rules:      []rbacv1.PolicyRule{{APIGroups: []string{""}, Resources: []string{"configmaps"}, Verbs: []string{"get", "list", "watch", "create", "update", "patch", "delete"}}},
	}); err != nil {
		tb.Fatal(err)
	}
	tenants := make([]tenant, sz.Tenants)
	for i := range tenants {
		tenants[i] = newTenant(tb, i, sz.ConfigMaps)
		classifiedAs(tb, tenants[i].cfg, "tenant "+tenants[i].ns, suggested)
	}

	m := startManager(tb, "noisy")
	res := noisyResult{Sizes: sz, Level: level, Runs: map[string][]noisyRun{}}
	for run := range sz.Runs {
		installed := false
		for _, c := range noisyConfigs {
			if c.APF != installed {
				if c.APF {
					for _, o := range flowControl {
						if err := env.Client.Create(ctx, o.DeepCopy()); err != nil {
							tb.Fatal(err)
						}
					}
				} else {
					deleteObjects(tb, flowControl)
				}
				installed = c.APF
			}
			want := suggested
			if c.APF {
				if want, err = testenv.FlowSchemaUIDs(ctx, env.Config, flowSchema); err != nil {
					tb.Fatal(err)
				}
			}
			classifiedAs(tb, managerCfg, "the manager", want)
			var noise []tenant
			if c.Noise {
				noise = tenants
			}
			r := noisyBoundary(tb, m, sz, noise)
			tb.Logf("run %d, %s: %s; tenants' lists %d, refused %d; seats %v", run+1, c.Name, r.Lat, r.Lists, r.Refused, r.Seats)
			res.Runs[c.Name] = append(res.Runs[c.Name], r)
		}
		if installed {
			deleteObjects(tb, flowControl)
		}
	}
	return res
}

// classifiedAs waits until a request of cfg's user is classified as want by the API server
// (its flow-control configuration follows changes within seconds).
func classifiedAs(tb testing.TB, cfg *rest.Config, who string, want testenv.Classification) {
	tb.Helper()
	eventually(tb, 30*time.Second, 200*time.Millisecond, func() error {
		got, err := testenv.Classify(context.Background(), cfg)
		if err != nil {
			return err
		}
		if got != want {
			return fmt.Errorf("a request of %s was classified as %+v, want %+v", who, got, want)
		}
		return nil
	})
}

func deleteObjects(tb testing.TB, objs []*unstructured.Unstructured) {
	tb.Helper()
	for _, o := range objs {
		if err := env.Client.Delete(context.Background(), o.DeepCopy()); err != nil && !apierrors.IsNotFound(err) {
			tb.Fatal(err)
		}
	}
}

// serviceAccount returns a config of a token of the ServiceAccount namespace/name, bound to
// the ClusterRole role, cluster-wide or (in namespace bindIn) in one namespace.
func serviceAccount(tb testing.TB, namespace, name, role, bindIn string) *rest.Config {
	tb.Helper()
	ctx := context.Background()
	cfg, err := testenv.ServiceAccountConfig(ctx, env.Config, namespace, name)
	if err != nil {
		tb.Fatal(err)
	}
	subjects := []rbacv1.Subject{{Kind: rbacv1.ServiceAccountKind, Name: name, Namespace: namespace}}
	ref := rbacv1.RoleRef{APIGroup: rbacv1.GroupName, Kind: "ClusterRole", Name: role}
	var binding client.Object = &rbacv1.ClusterRoleBinding{ObjectMeta: metav1.ObjectMeta{Name: "bench-" + namespace + "-" + name}, Subjects: subjects, RoleRef: ref}
	if bindIn != "" {
		binding = &rbacv1.RoleBinding{ObjectMeta: metav1.ObjectMeta{Name: "bench-" + name, Namespace: bindIn}, Subjects: subjects, RoleRef: ref}
	}
	if err := env.Client.Create(ctx, binding); err != nil {
		tb.Fatal(err)
	}
	cfg.QPS, cfg.Burst = -1, 0
	return cfg
}

// writeKubeconfig writes cfg (a server and a token) as a kubeconfig file.
func writeKubeconfig(tb testing.TB, cfg *rest.Config, name string) string {
	tb.Helper()
	kc := clientcmdapi.NewConfig()
	kc.Clusters["bench"] = &clientcmdapi.Cluster{Server: cfg.Host, CertificateAuthorityData: cfg.CAData}
	kc.AuthInfos[name] = &clientcmdapi.AuthInfo{Token: cfg.BearerToken}
	kc.Contexts[name] = &clientcmdapi.Context{Cluster: "bench", AuthInfo: name}
	kc.CurrentContext = name
	path := filepath.Join(tb.TempDir(), "kubeconfig")
	if err := clientcmd.WriteToFile(*kc, path); err != nil {
		tb.Fatal(err)
	}
	return path
}

// tenantRole is the ClusterRole bound to each tenant in its namespace.
const tenantRole = "bench-tenant"

// tenant is another workload of the cluster: a ServiceAccount of its own namespace, which it
// may edit, with ConfigMaps there.
type tenant struct {
	ns  string
	cfg *rest.Config
	cs  kubernetes.Interface
}

func newTenant(tb testing.TB, i, configMaps int) tenant {
	tb.Helper()
	ctx := context.Background()
	ns := newNamespace(tb, fmt.Sprintf("tenant-%d", i), true)
	cfg := serviceAccount(tb, ns, "app", tenantRole, ns)
	cfg.ContentType = "application/vnd.kubernetes.protobuf"
	cfg.AcceptContentTypes = cfg.ContentType
	cs, err := kubernetes.NewForConfig(cfg)
	if err != nil {
		tb.Fatal(err)
	}
	data := map[string]string{"config": strings.Repeat("x", 512)}
	if err := parallel(16, configMaps, func(k int) error {
		return env.Client.Create(ctx, &corev1.ConfigMap{ObjectMeta: objectMeta(ns, fmt.Sprintf("config-%04d", k)), Data: data})
	}); err != nil {
		tb.Fatal(err)
	}
	return tenant{ns: ns, cfg: cfg, cs: cs}
}

// currentSeats reads the API server's current concurrency limit of each priority level
// (seats), which it re-divides every 10 s by the levels' shares, lendable and borrowed seats,
// and demand.
func currentSeats(tb testing.TB) map[string]float64 {
	tb.Helper()
	cs, err := kubernetes.NewForConfig(harnessConfig())
	if err != nil {
		tb.Fatal(err)
	}
	raw, err := cs.Discovery().RESTClient().Get().AbsPath("/metrics").DoRaw(context.Background())
	if err != nil {
		tb.Fatalf("failed to read the API server's metrics: %v", err)
	}
	out := map[string]float64{}
	for line := range strings.Lines(string(raw)) {
		rest, ok := strings.CutPrefix(line, "apiserver_flowcontrol_current_limit_seats{")
		if !ok {
			continue
		}
		labels, value, ok := strings.Cut(strings.TrimSpace(rest), "} ")
		if v, err := strconv.ParseFloat(value, 64); ok && err == nil {
			out[parseLabels(labels)["priority_level"]] = v
		}
	}
	return out
}

// list lists the tenant's ConfigMaps, reading the response without decoding it: the
// tenants' clients stand for programs elsewhere, whose CPU is not the API server's machine's.
func list(ctx context.Context, t tenant) error {
	body, err := t.cs.CoreV1().RESTClient().Get().Namespace(t.ns).Resource("configmaps").Stream(ctx)
	if err != nil {
		return err
	}
	_, err = io.Copy(io.Discard, body)
	return errors.Join(err, body.Close())
}

// flood starts workers goroutines per tenant, each listing its tenant's ConfigMaps back to
// back, and returns a stop that ends them and returns the lists completed, the requests
// that failed and the first error.
func flood(tenants []tenant, workers int) (stop func() (lists, refused int64, first error)) {
	ctx, cancel := context.WithCancel(context.Background())
	var wg sync.WaitGroup
	var lists, refused atomic.Int64
	var firstErr atomic.Pointer[error]
	for _, t := range tenants {
		for range workers {
			wg.Go(func() {
				for ctx.Err() == nil {
					err := list(ctx, t)
					switch {
					case err == nil:
						lists.Add(1)
					case ctx.Err() == nil:
						if refused.Add(1) == 1 {
							firstErr.Store(&err)
						}
					}
				}
			})
		}
	}
	return func() (int64, int64, error) {
		cancel()
		wg.Wait()
		var first error
		if p := firstErr.Load(); p != nil {
			first = *p
		}
		return lists.Load(), refused.Load(), first
	}
}

// noisyBoundary measures one boundary of sz.N autoscalers (the end of a Cron window, as in
// boundaryBurst), with the tenants in noise flooding the API server from before it until
// its last HPA is seen.
func noisyBoundary(tb testing.TB, m *manager, sz noisySizes, noise []tenant) noisyRun {
	tb.Helper()
	ctx := context.Background()
	n := sz.N
	ns := newNamespace(tb, "noisy", false)
	cleanup(tb, ns)
	c := newClient(tb, harnessConfig())
	names := make([]string, n)
	for i := range names {
		names[i] = fmt.Sprintf("app-%03d", i)
	}
	if err := parallel(16, n, func(i int) error { return c.Create(ctx, newAutoscaler(ns, names[i])) }); err != nil {
		tb.Fatal(err)
	}
	// The noise starts once the HPAs have the open window's bounds, at least warmup before
	// the boundary.
	warmup := sz.Warmup
	lead := warmup + 5*time.Second + time.Duration(n)*60*time.Millisecond
	now := time.Now()
	fired := now.UTC().Truncate(time.Minute).Add(-time.Minute)
	at := now.Add(lead).Truncate(time.Second).Add(time.Second)
	if err := parallel(16, n, func(i int) error {
		return c.Create(ctx, &autoscalingv1alpha1.Schedule{
			ObjectMeta: objectMeta(ns, names[i]),
			Spec: autoscalingv1alpha1.ScheduleSpec{
				ScaleTargetRef: autoscalingv1alpha1.ScaleTargetReference{Name: names[i]},
				Type:           autoscalingv1alpha1.ScheduleTypeCron,
				Schedule:       fmt.Sprintf("%d %d * * *", fired.Minute(), fired.Hour()),
				Duration:       at.Sub(fired).String(),
				TimeZone:       "UTC",
				MinReplicas:    ptr.To[int32](3),
			},
		})
	}); err != nil {
		tb.Fatal(err)
	}
	eventually(tb, time.Until(at.Add(-warmup)), 100*time.Millisecond, func() error {
		hpas := &autoscalingv2.HorizontalPodAutoscalerList{}
		if err := c.List(ctx, hpas, client.InNamespace(ns)); err != nil {
			return err
		}
		ready := 0
		for _, h := range hpas.Items {
			if ptr.Deref(h.Spec.MinReplicas, 0) == 3 {
				ready++
			}
		}
		if ready < n {
			return fmt.Errorf("%d of %d HPAs have the open window's bounds, %s the boundary: raise the lead", ready, n, until(at))
		}
		return nil
	})
	rec := record(tb, ns, true, "HorizontalPodAutoscaler")
	if _, err := rec.quiet(300*time.Millisecond, time.Until(at.Add(-warmup))); err != nil {
		tb.Fatalf("setup did not settle %s before the boundary: %v", warmup, err)
	}
	stop := func() (int64, int64, error) { return 0, 0, nil }
	if len(noise) > 0 {
		stop = flood(noise, sz.Workers)
	}
	sleepUntil(ctx, at.Add(-time.Second))
	seats := currentSeats(tb)
	lat, err := firstSeen(rec, at, names, 2, time.Until(at)+2*time.Minute)
	lists, refused, first := stop()
	if err != nil {
		tb.Fatalf("boundary at %s: %v", at.Format(time.RFC3339), errors.Join(err, m.exited()))
	}
	if first != nil {
		tb.Logf("the tenants' first failed request: %v", first)
	}
	return noisyRun{Lat: summarize(lat), Lists: lists, Refused: refused, Seats: seats}
}
