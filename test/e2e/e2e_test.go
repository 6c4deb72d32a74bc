//go:build e2e

package e2e

import (
	"bytes"
	"context"
	"errors"
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"regexp"
	"slices"
	"strconv"
	"strings"
	"sync"
	"sync/atomic"
	"testing"
	"time"

	"github.com/go-logr/logr"
	appsv1 "k8s.io/api/apps/v1"
	autoscalingv2 "k8s.io/api/autoscaling/v2"
	batchv1 "k8s.io/api/batch/v1"
	coordinationv1 "k8s.io/api/coordination/v1"
	corev1 "k8s.io/api/core/v1"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"
	"k8s.io/apimachinery/pkg/runtime"
	"k8s.io/apimachinery/pkg/runtime/schema"
	clientgoscheme "k8s.io/client-go/kubernetes/scheme"
	"k8s.io/client-go/tools/clientcmd"
	"k8s.io/utils/ptr"
	"sigs.k8s.io/controller-runtime/pkg/client"
	ctrllog "sigs.k8s.io/controller-runtime/pkg/log"

	"github.com/almanac-dev/almanac/api/index"
	"github.com/almanac-dev/almanac/commands/check"
)

const (
	release   = "almanac"
	releaseNS = "almanac-system"
	// leaseName is the manager's leader-election Lease.
	leaseName = index.LeaderElectionID
	// busybox is the test image hack/cluster.sh imports (Debian's busybox-static).
	busybox = "docker.io/library/busybox:almanac-e2e"
)

// kube is a direct client of the cluster (no cache) for what kubectl does not do well:
// watching and timing.
var kube client.Client

func newClient(t *testing.T) client.Client {
	t.Helper()
	if kube != nil {
		return kube
	}
	cfg, err := clientcmd.BuildConfigFromFlags("", cluster.kubeconfig)
	if err != nil {
		t.Fatal(err)
	}
	cfg.QPS, cfg.Burst = 100, 200
	ctrllog.SetLogger(logr.Discard())
	s := runtime.NewScheme()
	if err := clientgoscheme.AddToScheme(s); err != nil {
		t.Fatal(err)
	}
	if kube, err = client.New(cfg, client.Options{Scheme: s}); err != nil {
		t.Fatal(err)
	}
	return kube
}

// TestE2E is the whole story, in the order a user lives it: the image, an install with the
// chart's default values, the webhooks through the Service, scaling and Jobs that really
// run, a leader failover at a boundary, the fault suite (faults_test.go), an upgrade under
// load, an uninstall, and an install with external certificates.
func TestE2E(t *testing.T) {
	newClient(t)
	// A registry on loopback, as a user's own: `make image-push` pushes there for the upgrade,
	// and the install with external certificates takes its image from there too. (Once the
	// kubelet has pulled an image from a registry, it verifies by pulling again before it runs
	// that image under another name, as the chart's default one.)
	reg := startRegistry(t)
	step(t, "image", testImage)
	if !step(t, "install with the chart's default values", testInstall) {
		t.FailNow()
	}
	step(t, "webhooks through the Service", testWebhooks)
	step(t, "permission check through the Service", testPermissionCheck)
	step(t, "admission policy: no manager Jobs in kube-system", testManagerJobsPolicy)
	step(t, "priority and fairness: the manager's requests in its own level", testPriorityAndFairness)
	step(t, "scaling and Jobs", func(t *testing.T) {
		t.Run("scaling", func(t *testing.T) { t.Parallel(); testScaling(t) })
		t.Run("EventJob after three ScheduledJobs of a slot (fan-in)", func(t *testing.T) { t.Parallel(); testFanIn(t) })
		t.Run("attached to Helm's HPA and a Deployment", func(t *testing.T) { t.Parallel(); testAttached(t) })
		t.Run("attached to KEDA's ScaledObject", func(t *testing.T) { t.Parallel(); testKEDA(t) })
		t.Run("ScheduledJob at an instant", func(t *testing.T) { t.Parallel(); testScheduledJobAt(t) })
		t.Run("ScheduledJob on a cron schedule", func(t *testing.T) { t.Parallel(); testScheduledJobCron(t) })
		t.Run("ScheduledJob replaced while its Job runs", func(t *testing.T) { t.Parallel(); testScheduledJobReplaced(t) })
		t.Run("EventJob after a CronJob's Job", func(t *testing.T) { t.Parallel(); testEventJob(t) })
		t.Run("almanac run: a ScheduledJob's Job now", func(t *testing.T) { t.Parallel(); testRunNow(t) })
		t.Run("calendars: a freeze skips a slot", func(t *testing.T) { t.Parallel(); testCalendar(t) })
		t.Run("kstatus: InProgress, Current, Failed", func(t *testing.T) { t.Parallel(); testKstatus(t) })
		t.Run("kubectl almanac: next, suspend, resume", func(t *testing.T) { t.Parallel(); testKubectlPlugin(t) })
	})
	step(t, "leader failover at a boundary", testFailover)
	step(t, "faults: API server restart, etcd stop, leader kills, refused records", testFaults)
	step(t, "upgrade while a client applies objects", func(t *testing.T) { testUpgrade(t, reg) })
	step(t, "uninstall", testUninstall)
	step(t, "install with external certificates and two watched namespaces", func(t *testing.T) { testExternalCertificates(t, reg) })
}

// --- running commands ----------------------------------------------------------------------

type result struct {
	stdout, stderr string
	code           int
}

func (r result) String() string {
	return fmt.Sprintf("exit %d\nstdout:\n%s\nstderr:\n%s", r.code, r.stdout, r.stderr)
}

// exe runs a command (with the cluster's kubeconfig) and returns what it printed.
func exe(t *testing.T, stdin string, name string, args ...string) result {
	t.Helper()
	cmd := command(name, args...)
	if stdin != "" {
		cmd.Stdin = strings.NewReader(stdin)
	}
	var out, errOut bytes.Buffer
	cmd.Stdout, cmd.Stderr = &out, &errOut
	err := cmd.Run()
	r := result{stdout: out.String(), stderr: errOut.String()}
	var exit *exec.ExitError
	switch {
	case err == nil:
	case errors.As(err, &exit):
		r.code = exit.ExitCode()
	default:
		t.Fatalf("%s %s: %v", name, strings.Join(args, " "), err)
	}
	return r
}

func kubectl(t *testing.T, args ...string) result {
	t.Helper()
	return exe(t, "", "kubectl", args...)
}

// mustKubectl runs kubectl and fails the test when it fails.
func mustKubectl(t *testing.T, args ...string) string {
	t.Helper()
	r := kubectl(t, args...)
	if r.code != 0 {
		t.Fatalf("kubectl %s: %s", strings.Join(args, " "), r)
	}
	return r.stdout
}

// apply applies manifests with kubectl, as a user does.
func apply(t *testing.T, namespace, manifests string) result {
	t.Helper()
	return exe(t, manifests, "kubectl", "apply", "-n", namespace, "-f", "-")
}

func mustApply(t *testing.T, namespace, manifests string) {
	t.Helper()
	if r := apply(t, namespace, manifests); r.code != 0 {
		t.Fatalf("kubectl apply: %s\n%s", r, manifests)
	}
}

func helm(t *testing.T, args ...string) result {
	t.Helper()
	return exe(t, "", os.Getenv("HELM"), args...)
}

func mustHelm(t *testing.T, args ...string) string {
	t.Helper()
	r := helm(t, args...)
	if r.code != 0 {
		t.Fatalf("helm %s: %s", strings.Join(args, " "), r)
	}
	return r.stdout
}

// eventually polls ok until it returns nil or the timeout passes.
func eventually(t *testing.T, timeout time.Duration, what string, ok func() error) {
	t.Helper()
	deadline := time.Now().Add(timeout)
	for {
		err := ok()
		if err == nil {
			return
		}
		if time.Now().After(deadline) {
			t.Fatalf("not %s within %s: %v", what, timeout, err)
		}
		time.Sleep(250 * time.Millisecond)
	}
}

// namespace creates a namespace for one test, deleted afterwards; when the test fails, what
// went wrong is printed first: the namespace's objects and events, and the logs of almanac
// and of the cluster's components.
func namespace(t *testing.T, name string) string {
	t.Helper()
	ns := &corev1.Namespace{ObjectMeta: metav1.ObjectMeta{Name: name}}
	if err := kube.Create(context.Background(), ns); err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() {
		if t.Failed() {
			dumpLogs(t, name)
		}
		_ = kube.Delete(context.Background(), ns)
	})
	return name
}

var (
	klogHeader = regexp.MustCompile(`^E\d{4} [\d:.]+\s+\d+ `)
	logrusTime = regexp.MustCompile(`time="[^"]*" `)
)

// dumpLogs prints what a reader needs to see why a test failed.
func dumpLogs(t *testing.T, namespaces ...string) {
	t.Helper()
	namespaces = append(namespaces, releaseNS)
	for _, ns := range namespaces {
		t.Logf("objects in %s:\n%s", ns, kubectl(t, "get", "all,almanac,leases,events", "-n", ns, "-o", "wide").stdout)
	}
	pods := kubectl(t, "get", "pods", "-n", releaseNS, "-l", "app.kubernetes.io/instance="+release, "-o", "name").stdout
	for _, p := range strings.Fields(pods) {
		t.Logf("logs of %s (last 60 lines):\n%s", p, kubectl(t, "logs", "-n", releaseNS, p, "--tail=60").stdout)
		if prev := kubectl(t, "logs", "-n", releaseNS, p, "--previous", "--tail=30"); prev.code == 0 {
			t.Logf("logs of %s before its last restart:\n%s", p, prev.stdout)
		}
	}
	for _, c := range []string{"kubelet", "kube-controller-manager", "containerd", "kube-apiserver"} {
		data, err := os.ReadFile(filepath.Join(cluster.logs, c+".log"))
		if err != nil {
			continue
		}
		// The distinct errors (klog's or logrus's), the last ones last.
		lines := strings.Split(strings.TrimRight(string(data), "\n"), "\n")
		var errs []string
		seen := map[string]bool{}
		for i := len(lines) - 1; i >= 0 && len(errs) < 15; i-- {
			l := lines[i]
			if !strings.HasPrefix(l, "E") && !strings.Contains(l, "level=error") {
				continue
			}
			key := klogHeader.ReplaceAllString(l, "")
			key = logrusTime.ReplaceAllString(key, "")
			if !seen[key] {
				seen[key] = true
				errs = append(errs, l)
			}
		}
		slices.Reverse(errs)
		t.Logf("%s: the last %d distinct errors (log: %s):\n%s", c, len(errs), filepath.Join(cluster.logs, c+".log"), strings.Join(errs, "\n"))
	}
}

// nextBoundary is the first whole minute at least lead from now: Schedules and ScheduledJobs
// are written to the minute.
func nextBoundary(lead time.Duration) time.Time {
	return time.Now().UTC().Add(lead).Truncate(time.Minute).Add(time.Minute)
}

// oneShot is a OneShot Schedule of autoscaler spa, from start to end in UTC, with minReplicas
// minR and, when it is not 0, maxReplicas maxR.
func oneShot(name, spa string, start, end time.Time, minR, maxR int32) string {
	m := ""
	if maxR != 0 {
		m = fmt.Sprintf("\n  maxReplicas: %d", maxR)
	}
	return fmt.Sprintf(`
---
apiVersion: autoscaling.almanac.dev/v1alpha1
kind: Schedule
metadata: {name: %s}
spec:
  scaleTargetRef: {name: %s}
  type: OneShot
  startTime: %q
  endTime: %q
  timeZone: UTC
  minReplicas: %d%s
`, name, spa, wall(start), wall(end), minR, m)
}

func wall(t time.Time) string { return t.UTC().Format("2006-01-02T15:04") }
func hm(t time.Time) string   { return t.UTC().Format("15:04") }

// --- install ---------------------------------------------------------------------------------

func testInstall(t *testing.T) {
	t.Cleanup(func() {
		if t.Failed() {
			dumpLogs(t)
		}
	})
	// No --set at all: hack/cluster.sh imported the image under the chart's default name.
	out := mustHelm(t, "install", release, "charts/almanac", "-n", releaseNS, "--create-namespace", "--wait", "--timeout", "5m")
	t.Logf("helm install:\n%s", firstLines(out, 6))
	ctx := context.Background()

	dep := &appsv1.Deployment{}
	if err := kube.Get(ctx, client.ObjectKey{Namespace: releaseNS, Name: release}, dep); err != nil {
		t.Fatal(err)
	}
	if dep.Status.ReadyReplicas != 2 || dep.Status.Replicas != 2 {
		t.Errorf("Deployment %s: %d of %d replicas ready, want 2 of 2", release, dep.Status.ReadyReplicas, dep.Status.Replicas)
	}
	if img := dep.Spec.Template.Spec.Containers[0].Image; img != "ghcr.io/almanac-dev/almanac:"+chartAppVersion(t) {
		t.Errorf("the chart's default image is %s, want ghcr.io/almanac-dev/almanac:%s (what make image builds)", img, chartAppVersion(t))
	}
	pods := almanacPods(t)
	leader := leaderPod(t)
	if !slices.Contains(pods, leader) {
		t.Errorf("the Lease %s is held by %q, which is none of the replicas %v", leaseName, leader, pods)
	}
	t.Logf("2 replicas ready (%s), one leader: %s", strings.Join(pods, ", "), leader)

	// The manager gives the Go runtime 90% of its container's memory limit as a soft limit
	// (it reads its cgroup's memory.max), so that it collects instead of being OOM-killed.
	if lim := dep.Spec.Template.Spec.Containers[0].Resources.Limits.Memory(); !lim.IsZero() {
		want := lim.Value() / 10 * 9
		logs := mustKubectl(t, "logs", "-n", releaseNS, leader)
		m := regexp.MustCompile(`goMemoryLimit"?[:=]\s*"?(\d+)`).FindStringSubmatch(logs)
		if m == nil || m[1] != strconv.FormatInt(want, 10) {
			t.Errorf("the manager's Go memory limit is %v, want %d (90%% of the container's %s); its start:\n%s", m, want, lim, firstLines(logs, 20))
		} else {
			t.Logf("the manager's Go memory limit: %s bytes, 90%% of the container's %s", m[1], lim)
		}
	}

	// The post-install hook ran `almanac check --wait` in the image, with a read-only root,
	// and passed (helm deletes it once it succeeded; its events remain).
	ev := mustKubectl(t, "get", "events", "-n", releaseNS, "--field-selector", "involvedObject.kind=Job,involvedObject.name=almanac-check,reason=Completed", "-o", "name")
	if strings.TrimSpace(ev) == "" {
		t.Errorf("no Completed event of the post-install hook Job almanac-check:\n%s", kubectl(t, "get", "events", "-n", releaseNS).stdout)
	} else {
		t.Log("the post-install hook Job almanac-check completed")
	}

	r := exe(t, "", almanacBin, "check", "-n", releaseNS)
	if r.code != 0 {
		t.Fatalf("almanac check from outside the cluster: %s", r)
	}
	t.Logf("almanac check from outside the cluster:\n%s", r.stdout)
}

func chartAppVersion(t *testing.T) string {
	t.Helper()
	data, err := os.ReadFile(filepath.Join(repoRoot(), "charts", "almanac", "Chart.yaml"))
	if err != nil {
		t.Fatal(err)
	}
	for _, l := range strings.Split(string(data), "\n") {
		if v, ok := strings.CutPrefix(l, "appVersion:"); ok {
			return strings.Trim(strings.TrimSpace(v), `"`)
		}
	}
	t.Fatal("Chart.yaml has no appVersion")
	return ""
}

// almanacPods names the manager's running Pods.
func almanacPods(t *testing.T) []string {
	t.Helper()
	list := &corev1.PodList{}
	if err := kube.List(context.Background(), list, client.InNamespace(releaseNS), client.MatchingLabels{
		"app.kubernetes.io/instance": release, "app.kubernetes.io/component": "manager",
	}); err != nil {
		t.Fatal(err)
	}
	var out []string
	for _, p := range list.Items {
		if p.DeletionTimestamp == nil {
			out = append(out, p.Name)
		}
	}
	slices.Sort(out)
	return out
}

// leaderPod is the Pod that holds the leader-election Lease ("" when none does).
func leaderPod(t *testing.T) string {
	t.Helper()
	lease := &coordinationv1.Lease{}
	if err := kube.Get(context.Background(), client.ObjectKey{Namespace: releaseNS, Name: leaseName}, lease); err != nil {
		t.Fatal(err)
	}
	if lease.Spec.HolderIdentity == nil {
		return ""
	}
	pod, _, _ := strings.Cut(*lease.Spec.HolderIdentity, "_")
	return pod
}

func firstLines(s string, n int) string {
	lines := strings.Split(strings.TrimSpace(s), "\n")
	if len(lines) > n {
		lines = lines[:n]
	}
	return strings.Join(lines, "\n")
}

// --- webhooks ------------------------------------------------------------------------------

func testWebhooks(t *testing.T) {
	ns := namespace(t, "e2e-webhooks")
	// Every example, as the README applies them.
	r := exe(t, "", "kubectl", "apply", "-n", ns, "-f", "examples/")
	if r.code != 0 {
		t.Fatalf("kubectl apply -f examples/: %s", r)
	}
	t.Logf("kubectl apply -f examples/:\n%s", r.stdout)
	// The mutating webhook normalized what was stored.
	if tz := mustKubectl(t, "get", "scheduledjob", "nightly-report", "-n", ns, "-o", "jsonpath={.spec.concurrencyPolicy}"); tz == "" {
		t.Errorf("the ScheduledJob nightly-report has no concurrencyPolicy: the mutating webhook did not default it")
	}

	// Refused by the validating webhook, with the field path and a hint.
	r = apply(t, ns, `
apiVersion: autoscaling.almanac.dev/v1alpha1
kind: Schedule
metadata: {name: tokio}
spec: {scaleTargetRef: {name: nginx}, minReplicas: 2, type: Daily, startTime: "9:00", endTime: "17:00", timeZone: asia/tokio}`)
	// Only the validating webhook knows the IANA zones: the schema takes any string.
	want := `The Schedule "tokio" is invalid: spec.timeZone: Invalid value: "asia/tokio": "asia/tokio" is not a known IANA time zone: did you mean "Asia/Tokyo"?`
	if r.code == 0 || !strings.Contains(r.stderr, want) {
		t.Errorf("a Schedule in an unknown zone: want it refused by the webhook with %q, got %s", want, r)
	} else {
		t.Logf("refused: %s", strings.TrimSpace(r.stderr))
	}

	// Admitted with a warning on a server-side dry run, and not stored.
	r = exe(t, `
apiVersion: autoscaling.almanac.dev/v1alpha1
kind: Schedule
metadata: {name: orphan}
spec: {scaleTargetRef: {name: nobody}, minReplicas: 2, type: Daily, startTime: "09:00", endTime: "17:00", timeZone: UTC}`,
		"kubectl", "apply", "-n", ns, "--dry-run=server", "-f", "-")
	want = `Warning: spec.scaleTargetRef.name: ScheduledPodAutoscaler "nobody" does not exist in namespace "` + ns + `"`
	if r.code != 0 || !strings.Contains(r.stderr, want) {
		t.Errorf("a Schedule of a missing autoscaler on --dry-run=server: want it admitted with %q, got %s", want, r)
	} else {
		t.Logf("dry run: %s %s", strings.TrimSpace(r.stdout), strings.TrimSpace(r.stderr))
	}
	if kubectl(t, "get", "schedule", "orphan", "-n", ns).code == 0 {
		t.Error("the dry-run Schedule was stored")
	}
}

// testPermissionCheck: a user who may use almanac's kinds but may not create Jobs is refused
// a ScheduledJob through the Service (no confused deputy); one bound to edit is admitted.
func testPermissionCheck(t *testing.T) {
	ns := namespace(t, "e2e-permissions")
	mustKubectl(t, "create", "rolebinding", "amy-almanac-edit", "--clusterrole=almanac-edit", "--user=amy", "-n", ns)
	mustKubectl(t, "create", "rolebinding", "bob-edit", "--clusterrole=edit", "--user=bob", "-n", ns)
	job := `
apiVersion: batch.almanac.dev/v1alpha1
kind: ScheduledJob
metadata: {name: deputy}
spec:
  schedule: "0 3 * * *"
  timeZone: UTC
  jobTemplate:
    spec:
      template:
        spec:
          restartPolicy: Never
          containers: [{name: c, image: ` + busybox + `, command: [/bin/true]}]`
	// The aggregation controller copies almanac-edit's rules into edit.
	eventually(t, time.Minute, "edit aggregating almanac's kinds", func() error {
		if r := kubectl(t, "auth", "can-i", "create", "scheduledjobs.batch.almanac.dev", "--as=bob", "-n", ns); strings.TrimSpace(r.stdout) != "yes" {
			return fmt.Errorf("kubectl auth can-i create scheduledjobs --as=bob: %s", strings.TrimSpace(r.stdout+r.stderr))
		}
		return nil
	})
	r := exe(t, job, "kubectl", "apply", "--as=amy", "-n", ns, "-f", "-")
	for _, want := range []string{
		`admission webhook "vscheduledjob.batch.almanac.dev" denied the request`,
		`user "amy" may not create Jobs (batch/v1 jobs) in namespace "` + ns + `"`,
		`kubectl create rolebinding amy-edit --clusterrole=edit --user=amy --namespace=` + ns,
	} {
		if r.code == 0 || !strings.Contains(r.stderr, want) {
			t.Errorf("a ScheduledJob from a user who may not create Jobs: want it refused with %q, got %s", want, r)
		}
	}
	if kubectl(t, "get", "scheduledjob", "deputy", "-n", ns).code == 0 {
		t.Error("the refused ScheduledJob was stored")
	}
	if r := exe(t, job, "kubectl", "apply", "--as=bob", "-n", ns, "-f", "-"); r.code != 0 {
		t.Errorf("a ScheduledJob from a user bound to edit: %s", r)
	}
	t.Log("amy (almanac-edit, no Jobs) was refused; bob (edit) was admitted")
}

// testManagerJobsPolicy: the chart's ValidatingAdmissionPolicy refuses a Job that the
// manager's ServiceAccount creates in kube-system, although its ClusterRole allows it; the same
// Job elsewhere is admitted (a server-side dry run), so it is the policy that refuses, not RBAC.
func testManagerJobsPolicy(t *testing.T) {
	as := "--as=system:serviceaccount:" + releaseNS + ":" + release
	if r := kubectl(t, "auth", "can-i", "create", "jobs.batch", as, "-n", "kube-system"); strings.TrimSpace(r.stdout) != "yes" {
		t.Fatalf("the manager's ServiceAccount may not create Jobs in kube-system by RBAC, so this shows nothing: %s", r)
	}
	r := kubectl(t, "create", "job", "almanac-vap-probe", "-n", "kube-system", "--image="+busybox, as)
	want := `almanac's manager (system:serviceaccount:` + releaseNS + `:` + release + `) may not create Jobs in namespace "kube-system": a Job there could run Pods as any of its ServiceAccounts`
	if r.code == 0 || !strings.Contains(r.stderr, "ValidatingAdmissionPolicy 'almanac-manager-jobs'") || !strings.Contains(r.stderr, want) {
		t.Errorf("a Job in kube-system created as the manager's ServiceAccount: want it refused by the policy with %q, got %s", want, r)
	} else {
		t.Logf("refused: %s", strings.TrimSpace(r.stderr))
	}
	if kubectl(t, "get", "job", "almanac-vap-probe", "-n", "kube-system").code == 0 {
		t.Error("the refused Job was stored in kube-system")
		kubectl(t, "delete", "job", "almanac-vap-probe", "-n", "kube-system")
	}
	if r := kubectl(t, "create", "job", "almanac-vap-probe", "-n", "default", "--image="+busybox, as, "--dry-run=server"); r.code != 0 {
		t.Errorf("a Job in default created (dry run) as the manager's ServiceAccount: %s", r)
	}
}

// testPriorityAndFairness: the API server has dispatched requests of the running manager (its
// Pods' ServiceAccount token: leader election, watches, webhook certificate reads) through
// the chart's FlowSchema into the chart's priority level, by its own counters.
func testPriorityAndFairness(t *testing.T) {
	name := release + "-manager"
	eventually(t, time.Minute, "requests dispatched through FlowSchema "+name, func() error {
		metrics := mustKubectl(t, "get", "--raw", "/metrics")
		for line := range strings.Lines(metrics) {
			rest, ok := strings.CutPrefix(line, "apiserver_flowcontrol_dispatched_requests_total{")
			if !ok {
				continue
			}
			labels, value, _ := strings.Cut(strings.TrimSpace(rest), "} ")
			if !strings.Contains(","+labels+",", fmt.Sprintf(",flow_schema=%q,", name)) || !strings.Contains(","+labels+",", fmt.Sprintf(",priority_level=%q,", name)) {
				continue
			}
			if n, err := strconv.ParseFloat(value, 64); err == nil && n > 0 {
				t.Logf("the API server dispatched %s requests through FlowSchema %s into priority level %s", value, name, name)
				return nil
			}
		}
		return fmt.Errorf("the API server's apiserver_flowcontrol_dispatched_requests_total has no requests of FlowSchema %s in priority level %s", name, name)
	})
}

// --- scaling -------------------------------------------------------------------------------

// testScaling: a real Deployment whose autoscaler gets a Schedule that opens within the next
// minute. At the boundary the HPA's bounds change and the Deployment reaches the new minimum
// of ready Pods; when the window closes the baseline comes back and the Deployment goes back
// within it.
func testScaling(t *testing.T) {
	ns := namespace(t, "e2e-scaling")
	start := nextBoundary(40 * time.Second)
	end := start.Add(2 * time.Minute)
	mustApply(t, ns, `
apiVersion: apps/v1
kind: Deployment
metadata: {name: web}
spec:
  replicas: 1
  selector: {matchLabels: {app: web}}
  template:
    metadata: {labels: {app: web}}
    spec:
      terminationGracePeriodSeconds: 1
      containers:
      - name: httpd
        image: `+busybox+`
        imagePullPolicy: Never
        command: [/bin/sh, -c, "mkdir -p /www && hostname > /www/index.html && exec httpd -f -p 8080 -h /www"]
        readinessProbe: {httpGet: {path: /index.html, port: 8080}, periodSeconds: 1}
        resources: {requests: {cpu: 10m, memory: 16Mi}, limits: {memory: 32Mi}}
---
apiVersion: autoscaling.almanac.dev/v1alpha1
kind: ScheduledPodAutoscaler
metadata: {name: web}
spec:
  horizontalPodAutoscalerSpec:
    scaleTargetRef: {apiVersion: apps/v1, kind: Deployment, name: web}
    minReplicas: 1
    maxReplicas: 2
`+oneShot("launch", "web", start, end, 3, 4))
	bounds := hpaBounds(ns, "web")
	eventually(t, time.Minute, "the HPA created with the baseline", func() error {
		minR, maxR, err := bounds()
		if err == nil && (minR != 1 || maxR != 2) {
			err = fmt.Errorf("bounds %d-%d, want 1-2", minR, maxR)
		}
		return err
	})
	t.Logf("HPA web at the baseline 1-2; the window opens at %s and closes at %s", start.Format(time.TimeOnly), end.Format(time.TimeOnly))

	seen := watchBounds(bounds, end.Add(90*time.Second))
	opened, ok := seen.first(3, 4, time.Time{})
	if !ok {
		t.Fatalf("the HPA never had bounds 3-4; it went through %v", seen.all())
	}
	if opened.Before(start) {
		t.Errorf("the HPA had bounds 3-4 at %s, before the window opened at %s", opened.Format(time.StampMilli), start.Format(time.StampMilli))
	}
	t.Logf("bounds 3-4 seen %s after the boundary", opened.Sub(start).Round(time.Millisecond))
	waitReady(t, ns, "web", 3)
	t.Logf("the Deployment reached 3 ready Pods %s after the boundary", time.Since(start).Round(time.Second))

	closed, ok := seen.first(1, 2, opened)
	if !ok {
		t.Fatalf("the baseline 1-2 never came back after the window; the HPA went through %v", seen.all())
	}
	if closed.Before(end) {
		t.Errorf("the baseline came back at %s, before the window closed at %s", closed.Format(time.StampMilli), end.Format(time.StampMilli))
	}
	t.Logf("baseline 1-2 seen %s after the window closed", closed.Sub(end).Round(time.Millisecond))
	waitReplicasAtMost(t, ns, "web", 2)
}

// deploymentReplicas reads a Deployment's replicas (1 when unset) and how many are ready.
func deploymentReplicas(ns, name string) (int32, int32, error) {
	d := &appsv1.Deployment{}
	if err := kube.Get(context.Background(), client.ObjectKey{Namespace: ns, Name: name}, d); err != nil {
		return 0, 0, err
	}
	return ptr.Deref(d.Spec.Replicas, 1), d.Status.ReadyReplicas, nil
}

// waitReady waits up to 90 s until Deployment ns/name has at least n ready replicas.
func waitReady(t *testing.T, ns, name string, n int32) {
	t.Helper()
	eventually(t, 90*time.Second, fmt.Sprintf("Deployment %s at %d ready replicas", name, n), func() error {
		_, ready, err := deploymentReplicas(ns, name)
		if err != nil {
			return err
		}
		if ready < n {
			return fmt.Errorf("%d ready", ready)
		}
		return nil
	})
}

// waitReplicasAtMost waits up to 90 s until Deployment ns/name asks for at most n replicas.
func waitReplicasAtMost(t *testing.T, ns, name string, n int32) {
	t.Helper()
	eventually(t, 90*time.Second, fmt.Sprintf("Deployment %s at %d replicas at most", name, n), func() error {
		replicas, _, err := deploymentReplicas(ns, name)
		if err != nil {
			return err
		}
		if replicas > n {
			return fmt.Errorf("%d replicas", replicas)
		}
		return nil
	})
}

// sleepDeployment is a Deployment of one busybox Pod that sleeps, for the tests that scale
// a workload but never reach it.
func sleepDeployment(name string) string {
	return `
apiVersion: apps/v1
kind: Deployment
metadata: {name: ` + name + `}
spec:
  replicas: 1
  selector: {matchLabels: {app: ` + name + `}}
  template:
    metadata: {labels: {app: ` + name + `}}
    spec:
      terminationGracePeriodSeconds: 1
      containers:
      - name: sleep
        image: ` + busybox + `
        imagePullPolicy: Never
        command: [/bin/sleep, "3600"]
        resources: {requests: {cpu: 10m, memory: 16Mi}, limits: {memory: 32Mi}}
`
}

// hpaBounds reads an HPA's minReplicas (1 when unset, as the HPA controller reads it) and
// maxReplicas.
func hpaBounds(ns, name string) func() (int32, int32, error) {
	return func() (int32, int32, error) {
		h := &autoscalingv2.HorizontalPodAutoscaler{}
		if err := kube.Get(context.Background(), client.ObjectKey{Namespace: ns, Name: name}, h); err != nil {
			return 0, 0, err
		}
		minR := int32(1)
		if h.Spec.MinReplicas != nil {
			minR = *h.Spec.MinReplicas
		}
		return minR, h.Spec.MaxReplicas, nil
	}
}

// boundsLog records each distinct (min, max) of an HPA and when a reader first saw it.
type boundsLog struct {
	mu   sync.Mutex
	seen []boundsAt
	done chan struct{}
}

type boundsAt struct {
	min, max int32
	at       time.Time
}

// watchBounds polls the HPA's bounds every 100 ms until the deadline: the times are those a
// client reading the HPA sees.
func watchBounds(bounds func() (int32, int32, error), until time.Time) *boundsLog {
	l := &boundsLog{done: make(chan struct{})}
	go func() {
		defer close(l.done)
		for time.Now().Before(until) {
			if minR, maxR, err := bounds(); err == nil {
				l.mu.Lock()
				if n := len(l.seen); n == 0 || l.seen[n-1].min != minR || l.seen[n-1].max != maxR {
					l.seen = append(l.seen, boundsAt{minR, maxR, time.Now()})
				}
				l.mu.Unlock()
			}
			time.Sleep(100 * time.Millisecond)
		}
	}()
	return l
}

// first waits until the HPA has had bounds (min, max) after the given time, and says when
// it was first seen so; false when the log ended without them.
func (l *boundsLog) first(minR, maxR int32, after time.Time) (time.Time, bool) {
	for {
		l.mu.Lock()
		for _, s := range l.seen {
			if s.min == minR && s.max == maxR && s.at.After(after) {
				l.mu.Unlock()
				return s.at, true
			}
		}
		l.mu.Unlock()
		select {
		case <-l.done:
			return l.firstSeen(minR, maxR, after)
		case <-time.After(100 * time.Millisecond):
		}
	}
}

func (l *boundsLog) firstSeen(minR, maxR int32, after time.Time) (time.Time, bool) {
	l.mu.Lock()
	defer l.mu.Unlock()
	for _, s := range l.seen {
		if s.min == minR && s.max == maxR && s.at.After(after) {
			return s.at, true
		}
	}
	return time.Time{}, false
}

func (l *boundsLog) all() []string {
	l.mu.Lock()
	defer l.mu.Unlock()
	var out []string
	for _, s := range l.seen {
		out = append(out, fmt.Sprintf("%d-%d at %s", s.min, s.max, s.at.Format(time.StampMilli)))
	}
	return out
}

// --- Jobs ----------------------------------------------------------------------------------

func jobTemplate(command string) string {
	return `
  jobTemplate:
    spec:
      backoffLimit: 0
      template:
        spec:
          restartPolicy: Never
          terminationGracePeriodSeconds: 1
          containers:
          - name: run
            image: ` + busybox + `
            imagePullPolicy: Never
            command: [/bin/sh, -c, "` + command + `"]`
}

// slotEnv gives jobTemplate's container the variable SLOT: the instant its Job runs for, read
// with the downward API from the annotation almanac puts on the Job's Pods.
const slotEnv = `
            env:
            - name: SLOT
              valueFrom: {fieldRef: {fieldPath: "metadata.annotations['batch.almanac.dev/scheduled-time']"}}`

// jobsOf lists the Jobs whose controller is the named object of the given kind.
func jobsOf(t *testing.T, ns, kind, name string) []batchv1.Job {
	t.Helper()
	list := &batchv1.JobList{}
	if err := kube.List(context.Background(), list, client.InNamespace(ns)); err != nil {
		t.Fatal(err)
	}
	var out []batchv1.Job
	for _, j := range list.Items {
		if ref := metav1.GetControllerOf(&j); ref != nil && ref.Kind == kind && ref.Name == name {
			out = append(out, j)
		}
	}
	slices.SortFunc(out, func(a, b batchv1.Job) int { return strings.Compare(a.Name, b.Name) })
	return out
}

func jobComplete(j batchv1.Job) bool { return jobCondition(j, batchv1.JobComplete) }

// jobCondition says whether the Job has the condition of type t, true.
func jobCondition(j batchv1.Job, t batchv1.JobConditionType) bool {
	for _, c := range j.Status.Conditions {
		if c.Type == t && c.Status == corev1.ConditionTrue {
			return true
		}
	}
	return false
}

// almanacField reads a field of an almanac object with kubectl's JSONPath.
func almanacField(t *testing.T, ns, resource, name, path string) string {
	t.Helper()
	return strings.TrimSpace(kubectl(t, "get", resource, name, "-n", ns, "-o", "jsonpath={"+path+"}").stdout)
}

// testScheduledJobAt: a ScheduledJob at a minute ahead runs its Job, whose Pod really runs,
// and ends Succeeded.
func testScheduledJobAt(t *testing.T) {
	ns := namespace(t, "e2e-at")
	at := nextBoundary(40 * time.Second)
	mustApply(t, ns, `
apiVersion: batch.almanac.dev/v1alpha1
kind: ScheduledJob
metadata: {name: once}
spec:
  at: "`+wall(at)+`"
  timeZone: UTC`+jobTemplate("echo ran once at $(date -u +%H:%M:%S) for the slot $SLOT")+slotEnv)
	if phase := almanacField(t, ns, "scheduledjob", "once", ".status.phase"); phase != "" && phase != "Pending" {
		t.Errorf("before its instant the ScheduledJob is %s, want Pending", phase)
	}
	eventually(t, time.Until(at)+2*time.Minute, "the ScheduledJob Succeeded", func() error {
		if phase := almanacField(t, ns, "scheduledjob", "once", ".status.phase"); phase != "Succeeded" {
			return fmt.Errorf("phase %q", phase)
		}
		return nil
	})
	jobs := jobsOf(t, ns, "ScheduledJob", "once")
	if len(jobs) != 1 {
		t.Fatalf("%d Jobs, want exactly 1", len(jobs))
	}
	created := jobs[0].CreationTimestamp.Time
	if created.Before(at) {
		t.Errorf("Job %s created at %s, before its instant %s", jobs[0].Name, created, at)
	}
	logs := mustKubectl(t, "logs", "-n", ns, "job/"+jobs[0].Name)
	// The Pod read the slot it runs for with the downward API: the nominal instant, not the
	// moment the Job was created.
	if want := "for the slot " + at.UTC().Format(time.RFC3339); !strings.Contains(logs, "ran once at") || !strings.Contains(logs, want) {
		t.Errorf("the Job's Pod printed %q, want %q in it (the scheduled-time annotation through the downward API)", logs, want)
	}
	t.Logf("Job %s created %s after its instant; its Pod printed %q; phase Succeeded", jobs[0].Name,
		created.Sub(at).Round(time.Second), strings.TrimSpace(logs))
}

// testScheduledJobReplaced: `kubectl replace --force` of a one-shot while its Job runs (holding
// almanac's outcome finalizer), with the cluster's garbage collector: the old ScheduledJob's
// Job is released and goes, and the new ScheduledJob's run of the same at, whose Job has the
// same name, waits for that and then runs to Succeeded (issue 38: the old Job stayed
// Terminating forever, and the new one-shot got JobConflict and was Missed).
func testScheduledJobReplaced(t *testing.T) {
	ns := namespace(t, "e2e-replace")
	at := nextBoundary(40 * time.Second)
	manifest := `
apiVersion: batch.almanac.dev/v1alpha1
kind: ScheduledJob
metadata: {name: once}
spec:
  at: "` + wall(at) + `"
  timeZone: UTC` + jobTemplate("sleep 15")
	mustApply(t, ns, manifest)
	var old batchv1.Job
	eventually(t, time.Until(at)+time.Minute, "the one-shot's Job created", func() error {
		jobs := jobsOf(t, ns, "ScheduledJob", "once")
		if len(jobs) != 1 {
			return fmt.Errorf("%d Jobs", len(jobs))
		}
		old = jobs[0]
		return nil
	})
	replaced := time.Now()
	if r := exe(t, manifest, "kubectl", "replace", "--force", "-n", ns, "-f", "-"); r.code != 0 {
		t.Fatalf("kubectl replace --force: %s", r)
	}
	eventually(t, 2*time.Minute, "the new ScheduledJob Succeeded, with a Job of its own", func() error {
		if phase := almanacField(t, ns, "scheduledjob", "once", ".status.phase"); phase != "Succeeded" {
			return fmt.Errorf("phase %q", phase)
		}
		jobs := jobsOf(t, ns, "ScheduledJob", "once")
		if len(jobs) != 1 || jobs[0].UID == old.UID || jobs[0].Name != old.Name {
			return fmt.Errorf("%d Jobs; want one, named %s, not the old one", len(jobs), old.Name)
		}
		return nil
	})
	if missed := almanacField(t, ns, "scheduledjob", "once", ".status.missedRuns"); missed != "" && missed != "0" {
		t.Errorf("status.missedRuns %s, want none", missed)
	}
	t.Logf("replaced %s after the Job of %s was created; the new ScheduledJob's run Succeeded %s after the replace",
		replaced.Sub(old.CreationTimestamp.Time).Round(time.Second), wall(at), time.Since(replaced).Round(time.Second))
}

// testRunNow: `almanac run`, the binary, as a user runs it: a ScheduledJob whose schedule is
// far away runs one Job now, with a real Pod that reads the instant of the request from the
// downward API; --wait returns once the Job completed; the schedule's record is untouched.
func testRunNow(t *testing.T) {
	ns := namespace(t, "e2e-run")
	mustApply(t, ns, `
apiVersion: batch.almanac.dev/v1alpha1
kind: ScheduledJob
metadata: {name: report}
spec:
  schedule: "0 3 1 1 *"
  timeZone: UTC`+jobTemplate("echo report for $SLOT")+slotEnv)
	asked := time.Now()
	r := exe(t, "", almanacBin, "run", "sj/report", "-n", ns, "--wait", "--timeout", "2m")
	if r.code != 0 {
		t.Fatalf("almanac run sj/report --wait: %s", r)
	}
	name := strings.TrimSpace(r.stdout)
	t.Logf("almanac run printed %q after %s:\n%s", name, time.Since(asked).Round(time.Millisecond), strings.TrimSpace(r.stderr))
	jobs := jobsOf(t, ns, "ScheduledJob", "report")
	if len(jobs) != 1 || jobs[0].Name != name || !jobComplete(jobs[0]) {
		t.Fatalf("Jobs of report: %d (want exactly 1, %s, complete)", len(jobs), name)
	}
	rec := mustKubectl(t, "get", "scheduledjob", "report", "-n", ns, "-o", "jsonpath={.status.runNow.jobName} {.status.runNow.time} {.status.lastScheduleTime}")
	fields := strings.Fields(rec)
	if len(fields) != 2 || fields[0] != name {
		t.Errorf("status.runNow.jobName, time and lastScheduleTime: %q, want %s, a time, and no lastScheduleTime", rec, name)
	}
	logs := mustKubectl(t, "logs", "-n", ns, "job/"+name)
	if len(fields) == 2 && !strings.Contains(logs, "report for "+fields[1]) {
		t.Errorf("the Job's Pod printed %q, want the instant of the request %s (the downward API)", logs, fields[1])
	}
	t.Logf("its Pod printed %q", strings.TrimSpace(logs))
}

// testScheduledJobCron: a cron ScheduledJob runs two slots, each Job to completion.
func testScheduledJobCron(t *testing.T) {
	ns := namespace(t, "e2e-cron")
	mustApply(t, ns, `
apiVersion: batch.almanac.dev/v1alpha1
kind: ScheduledJob
metadata: {name: every-minute}
spec:
  schedule: "* * * * *"
  timeZone: UTC
  concurrencyPolicy: Forbid`+jobTemplate("echo tick"))
	first := nextBoundary(0)
	eventually(t, time.Until(first)+3*time.Minute, "two Jobs of two slots complete", func() error {
		var done []string
		for _, j := range jobsOf(t, ns, "ScheduledJob", "every-minute") {
			if jobComplete(j) {
				done = append(done, j.Name)
			}
		}
		if len(done) < 2 {
			return fmt.Errorf("completed: %v", done)
		}
		return nil
	})
	jobs := jobsOf(t, ns, "ScheduledJob", "every-minute")
	slots := map[string]bool{}
	for _, j := range jobs {
		slot := j.Annotations["batch.almanac.dev/scheduled-time"]
		if slot == "" {
			t.Errorf("Job %s has no batch.almanac.dev/scheduled-time annotation", j.Name)
		}
		if slots[slot] {
			t.Errorf("two Jobs for the slot %s", slot)
		}
		slots[slot] = true
	}
	var names []string
	for _, j := range jobs {
		names = append(names, fmt.Sprintf("%s (created %s)", j.Name, j.CreationTimestamp.UTC().Format(time.TimeOnly)))
	}
	t.Logf("Jobs: %s", strings.Join(names, ", "))
	if last := almanacField(t, ns, "scheduledjob", "every-minute", ".status.lastScheduleTime"); last == "" {
		t.Error("status.lastScheduleTime is empty")
	}
}

// testEventJob: an EventJob fires when a real CronJob's Job completes (the controller
// manager's CronJob and Job controllers do that work), and its own Job runs to completion.
func testEventJob(t *testing.T) {
	ns := namespace(t, "e2e-eventjob")
	mustApply(t, ns, `
apiVersion: batch/v1
kind: CronJob
metadata: {name: upstream}
spec:
  schedule: "* * * * *"
  concurrencyPolicy: Forbid
  successfulJobsHistoryLimit: 5
  jobTemplate:
    spec:
      backoffLimit: 0
      template:
        spec:
          restartPolicy: Never
          terminationGracePeriodSeconds: 1
          containers:
          - {name: up, image: `+busybox+`, imagePullPolicy: Never, command: [/bin/sh, -c, "echo upstream done"]}
---
apiVersion: batch.almanac.dev/v1alpha1
kind: EventJob
metadata: {name: after-upstream}
spec:
  trigger: {apiVersion: batch/v1, kind: CronJob, name: upstream, type: Complete}`+jobTemplate("echo after upstream"))
	var upstream batchv1.Job
	eventually(t, 3*time.Minute, "a Job of the CronJob complete", func() error {
		list := &batchv1.JobList{}
		if err := kube.List(context.Background(), list, client.InNamespace(ns)); err != nil {
			return err
		}
		for _, j := range list.Items {
			if ref := metav1.GetControllerOf(&j); ref != nil && ref.Kind == "CronJob" && jobComplete(j) {
				upstream = j
				return nil
			}
		}
		return errors.New("none yet")
	})
	eventually(t, 90*time.Second, "the EventJob's Job complete", func() error {
		for _, j := range jobsOf(t, ns, "EventJob", "after-upstream") {
			if jobComplete(j) {
				return nil
			}
		}
		return fmt.Errorf("EventJob Jobs: %d", len(jobsOf(t, ns, "EventJob", "after-upstream")))
	})
	// Once per upstream Job: never more of its Jobs than upstream Jobs that completed.
	mustKubectl(t, "patch", "cronjob", "upstream", "-n", ns, "--type=merge", "-p", `{"spec":{"suspend":true}}`)
	fenceSpec(t, ns, "eventjob", "after-upstream")
	completed := 0
	list := &batchv1.JobList{}
	if err := kube.List(context.Background(), list, client.InNamespace(ns)); err != nil {
		t.Fatal(err)
	}
	for _, j := range list.Items {
		if ref := metav1.GetControllerOf(&j); ref != nil && ref.Kind == "CronJob" && jobComplete(j) {
			completed++
		}
	}
	if own := len(jobsOf(t, ns, "EventJob", "after-upstream")); own > completed {
		t.Errorf("the EventJob made %d Jobs for %d completed upstream Jobs", own, completed)
	}
	t.Logf("upstream Job %s completed; the EventJob ran its Job to completion (%d upstream, %d downstream)",
		upstream.Name, completed, len(jobsOf(t, ns, "EventJob", "after-upstream")))
}

// --- failover ------------------------------------------------------------------------------

// testFailover deletes the leader Pod shortly before a boundary and a Job slot: the other
// replica takes over, applies the boundary and runs the slot — once, and no later than the
// takeover.
func testFailover(t *testing.T) {
	ns := namespace(t, "e2e-failover")
	boundary := nextBoundary(45 * time.Second)
	mustApply(t, ns, `
apiVersion: autoscaling.almanac.dev/v1alpha1
kind: ScheduledPodAutoscaler
metadata: {name: app}
spec:
  horizontalPodAutoscalerSpec:
    scaleTargetRef: {apiVersion: apps/v1, kind: Deployment, name: app}
    minReplicas: 1
    maxReplicas: 2
---
apiVersion: autoscaling.almanac.dev/v1alpha1
kind: Schedule
metadata: {name: window}
spec:
  scaleTargetRef: {name: app}
  type: Daily
  startTime: "`+hm(boundary)+`"
  endTime: "`+hm(boundary.Add(30*time.Minute))+`"
  timeZone: UTC
  minReplicas: 5
  maxReplicas: 6
---
apiVersion: batch.almanac.dev/v1alpha1
kind: ScheduledJob
metadata: {name: slot}
spec:
  at: "`+wall(boundary)+`"
  timeZone: UTC`+jobTemplate("echo slot"))
	bounds := hpaBounds(ns, "app")
	eventually(t, time.Minute, "the HPA at the baseline", func() error {
		minR, _, err := bounds()
		if err == nil && minR != 1 {
			err = fmt.Errorf("min %d", minR)
		}
		return err
	})
	seen := watchBounds(bounds, boundary.Add(time.Minute))

	// The Pod is deleted as `kubectl delete pod` does, with its grace period: the preStop
	// drain, then SIGTERM, and the old leader gives up its Lease on the way out.
	time.Sleep(time.Until(boundary.Add(-12 * time.Second)))
	old := leaderPod(t)
	if old == "" {
		t.Fatal("no leader")
	}
	deleted := time.Now()
	mustKubectl(t, "delete", "pod", old, "-n", releaseNS, "--wait=false")
	var tookOver time.Time
	var newLeader string
	eventually(t, time.Minute, "another replica leading", func() error {
		if l := leaderPod(t); l != "" && l != old {
			tookOver, newLeader = time.Now(), l
			return nil
		}
		return errors.New("not yet")
	})
	takeover := tookOver.Sub(deleted)
	t.Logf("deleted the leader %s at boundary−%s; %s took over %s later", old, boundary.Sub(deleted).Round(time.Second), newLeader, takeover.Round(100*time.Millisecond))

	applied, ok := seen.first(5, 6, time.Time{})
	if !ok {
		t.Fatalf("the boundary was never applied; the HPA went through %v", seen.all())
	}
	// Late by no more than the takeover: it is applied at the boundary, or, if the new leader
	// took over after it, as soon as it leads (a reconcile of slack).
	latest := boundary
	if tookOver.After(latest) {
		latest = tookOver
	}
	const slack = 3 * time.Second
	if applied.Before(boundary) || applied.After(latest.Add(slack)) {
		t.Errorf("the boundary at %s was applied at %s; want between the boundary and %s (takeover at %s, %s slack)",
			boundary.Format(time.StampMilli), applied.Format(time.StampMilli), latest.Add(slack).Format(time.StampMilli), tookOver.Format(time.StampMilli), slack)
	}
	t.Logf("the boundary was applied %s after it passed", applied.Sub(boundary).Round(time.Millisecond))

	eventually(t, time.Minute, "the slot's Job", func() error {
		if n := len(jobsOf(t, ns, "ScheduledJob", "slot")); n == 0 {
			return errors.New("none")
		}
		return nil
	})
	jobs := jobsOf(t, ns, "ScheduledJob", "slot")
	created := jobs[0].CreationTimestamp.Time
	if created.After(latest.Add(slack).Add(time.Second)) { // creationTimestamp has whole seconds
		t.Errorf("the slot's Job was created at %s; want by %s", created, latest.Add(slack))
	}
	// Once: still one Job once both replicas (the new one, and the old one's replacement) run
	// and the leader has reconciled the ScheduledJob again (the fence: a change of its spec,
	// observed in its status).
	eventually(t, 2*time.Minute, "2 replicas ready again", func() error {
		if p := almanacPods(t); len(p) != 2 {
			return fmt.Errorf("%v", p)
		}
		return waitDeploymentReady(t)
	})
	fenceSpec(t, ns, "scheduledjob", "slot")
	if jobs = jobsOf(t, ns, "ScheduledJob", "slot"); len(jobs) != 1 {
		t.Errorf("%d Jobs for one slot, want 1: %v", len(jobs), jobs)
	}
}

// fenceSpec is the end of a check that almanac did nothing more: a change of the spec of the
// Job owner (a label of its Job template, which changes no run) brings a reconcile, and once
// its status shows the new generation, that reconcile, and whatever came before it, is over.
func fenceSpec(t *testing.T, ns, kind, name string) {
	t.Helper()
	mustKubectl(t, "patch", kind, name, "-n", ns, "--type=merge",
		"-p", `{"spec":{"jobTemplate":{"metadata":{"labels":{"almanac.test/fence":"`+strconv.FormatInt(time.Now().UnixNano(), 10)+`"}}}}}`)
	eventually(t, time.Minute, kind+" "+name+" observed its new generation", func() error {
		out := mustKubectl(t, "get", kind, name, "-n", ns, "-o", "jsonpath={.metadata.generation} {.status.observedGeneration}")
		if f := strings.Fields(out); len(f) != 2 || f[0] != f[1] {
			return fmt.Errorf("generation and observedGeneration: %q", out)
		}
		return nil
	})
}

func waitDeploymentReady(t *testing.T) error {
	t.Helper()
	dep := &appsv1.Deployment{}
	if err := kube.Get(context.Background(), client.ObjectKey{Namespace: releaseNS, Name: release}, dep); err != nil {
		return err
	}
	if dep.Status.ReadyReplicas != 2 || dep.Status.UpdatedReplicas != 2 || dep.Status.Replicas != 2 {
		return fmt.Errorf("%d ready, %d updated, %d in all", dep.Status.ReadyReplicas, dep.Status.UpdatedReplicas, dep.Status.Replicas)
	}
	return nil
}

// --- upgrade -------------------------------------------------------------------------------

// testUpgrade pushes the image to a registry with `make image-push` and upgrades the release
// to it while a client keeps applying almanac objects: no request fails.
func testUpgrade(t *testing.T, reg string) {
	ns := namespace(t, "e2e-upgrade")
	r := exe(t, "", "make", "-s", "image-push", "IMAGE_REGISTRY="+reg, "IMAGE_ARCHIVE="+os.Getenv("ALMANAC_IMAGE_ARCHIVE"))
	if r.code != 0 {
		t.Fatalf("make image-push IMAGE_REGISTRY=%s: %s", reg, r)
	}
	pushed := strings.TrimSpace(r.stdout)
	_, digest, _ := strings.Cut(pushed, "@")
	archiveDigest := archiveIndexDigest(t, os.Getenv("ALMANAC_IMAGE_ARCHIVE"))
	if digest != archiveDigest {
		t.Errorf("make image-push pushed %s, but make image wrote %s: the same source must give the same digest", digest, archiveDigest)
	}
	t.Logf("make image-push: %s", pushed)

	var sent, failed atomic.Int64
	var failures sync.Map
	stop := make(chan struct{})
	var wg sync.WaitGroup
	for w := range 2 {
		wg.Add(1)
		go func() {
			defer wg.Done()
			for i := 0; ; i++ {
				select {
				case <-stop:
					return
				default:
				}
				name := fmt.Sprintf("load-%d-%d", w, i%20)
				u := &unstructured.Unstructured{}
				u.SetGroupVersionKind(schema.GroupVersionKind{Group: "batch.almanac.dev", Version: "v1alpha1", Kind: "ScheduledJob"})
				u.SetNamespace(ns)
				u.SetName(name)
				_ = unstructured.SetNestedField(u.Object, "0 3 * * *", "spec", "schedule")
				_ = unstructured.SetNestedField(u.Object, "Europe/Berlin", "spec", "timeZone")
				_ = unstructured.SetNestedField(u.Object, strconv.Itoa(i), "metadata", "labels", "round")
				_ = unstructured.SetNestedSlice(u.Object, []any{map[string]any{
					"name": "c", "image": busybox, "command": []any{"/bin/true"},
				}}, "spec", "jobTemplate", "spec", "template", "spec", "containers")
				_ = unstructured.SetNestedField(u.Object, "Never", "spec", "jobTemplate", "spec", "template", "spec", "restartPolicy")
				ctx, cancel := context.WithTimeout(context.Background(), 15*time.Second)
				err := kube.Patch(ctx, u, client.Apply, client.FieldOwner("e2e-load"), client.ForceOwnership) //nolint:staticcheck // SSA of an unstructured object
				cancel()
				sent.Add(1)
				if err != nil {
					failed.Add(1)
					failures.Store(time.Now().Format(time.StampMilli), err.Error())
				}
				time.Sleep(50 * time.Millisecond)
			}
		}()
	}
	loadStarted := time.Now()
	time.Sleep(3 * time.Second)
	before := almanacPods(t)
	out := mustHelm(t, "upgrade", release, "charts/almanac", "-n", releaseNS, "--reuse-values",
		"--set", "image.repository="+reg+"/almanac", "--wait", "--timeout", "5m")
	t.Logf("helm upgrade:\n%s", firstLines(out, 5))
	eventually(t, 2*time.Minute, "the rollout finished", func() error { return waitDeploymentReady(t) })
	time.Sleep(5 * time.Second)
	close(stop)
	wg.Wait()
	after := almanacPods(t)
	for _, p := range after {
		if slices.Contains(before, p) {
			t.Errorf("Pod %s was not replaced by the upgrade", p)
		}
		pod := &corev1.Pod{}
		if err := kube.Get(context.Background(), client.ObjectKey{Namespace: releaseNS, Name: p}, pod); err != nil {
			t.Fatal(err)
		}
		if st := pod.Status.ContainerStatuses; len(st) == 0 || !strings.Contains(st[0].ImageID, reg) {
			t.Errorf("Pod %s runs %v, want the image pulled from %s", p, st, reg)
		}
	}
	t.Logf("%d applies through the webhooks in %s while the release rolled from %v to %v; %d failed",
		sent.Load(), time.Since(loadStarted).Round(time.Second), before, after, failed.Load())
	if failed.Load() > 0 {
		failures.Range(func(k, v any) bool {
			t.Errorf("at %s: %v", k, v)
			return true
		})
	}
	if r := exe(t, "", almanacBin, "check", "-n", releaseNS); r.code != 0 {
		t.Errorf("almanac check after the upgrade: %s", r)
	}
}

// --- uninstall -----------------------------------------------------------------------------

// testUninstall: after helm uninstall nothing of almanac's is left but the CRDs (and the
// objects users created, which the CRDs keep). It runs with what a cluster has when almanac
// goes: autoscalers attached in a window, to an HPA and to a Deployment through /scale, and a
// one-shot's Job still running. The uninstall succeeds (its pre-delete hook, almanac release,
// removes almanac's finalizers after it has stopped the manager, while the webhooks are still
// in the path: issue 38, item 1), each target is left at its baseline with no almanac field
// manager, and the namespace deletes within a minute.
func testUninstall(t *testing.T) {
	ns := namespace(t, "e2e-uninstall")
	// The one-shot runs a few seconds ahead (at takes seconds); the windows are written to the
	// minute, so they opened this minute and are open at once.
	at := time.Now().UTC().Add(8 * time.Second).Truncate(time.Second)
	opened := time.Now().UTC().Truncate(time.Minute)
	mustApply(t, ns, `
apiVersion: batch.almanac.dev/v1alpha1
kind: ScheduledJob
metadata: {name: long}
spec:
  at: "`+at.Format("2006-01-02T15:04:05")+`"
  timeZone: UTC`+jobTemplate("sleep 600")+`
---`+sleepDeployment("front")+`
---
apiVersion: autoscaling/v2
kind: HorizontalPodAutoscaler
metadata: {name: front}
spec:
  scaleTargetRef: {apiVersion: apps/v1, kind: Deployment, name: front}
  minReplicas: 1
  maxReplicas: 2
---
apiVersion: autoscaling.almanac.dev/v1alpha1
kind: ScheduledPodAutoscaler
metadata: {name: front}
spec:
  targetRef: {apiVersion: autoscaling/v2, kind: HorizontalPodAutoscaler, name: front}
  minReplicas: 1
  maxReplicas: 2
`+oneShot("front-peak", "front", opened, opened.Add(time.Hour), 2, 3)+`
---`+sleepDeployment("batch")+`
---
apiVersion: autoscaling.almanac.dev/v1alpha1
kind: ScheduledPodAutoscaler
metadata: {name: batch}
spec:
  targetRef: {apiVersion: apps/v1, kind: Deployment, name: batch}
  minReplicas: 1
`+oneShot("batch-peak", "batch", opened, opened.Add(time.Hour), 2, 0))
	eventually(t, 30*time.Second, "the targets at the window's bounds, held by almanac", func() error {
		minR, maxR, err := hpaBounds(ns, "front")()
		if err != nil {
			return err
		}
		n, _, err := deploymentReplicas(ns, "batch")
		if err != nil {
			return err
		}
		if minR != 2 || maxR != 3 || n != 2 {
			return fmt.Errorf("HPA front at %d-%d, Deployment batch at %d replicas; want 2-3 and 2", minR, maxR, n)
		}
		for _, name := range []string{"front", "batch"} {
			if f := almanacField(t, ns, "scheduledpodautoscaler", name, ".metadata.finalizers"); !strings.Contains(f, "autoscaling.almanac.dev/release-target") {
				return fmt.Errorf("ScheduledPodAutoscaler %s has finalizers %q", name, f)
			}
		}
		return nil
	})
	eventually(t, time.Until(at)+time.Minute, "the one-shot's Job created, with almanac's finalizer", func() error {
		jobs := jobsOf(t, ns, "ScheduledJob", "long")
		if len(jobs) != 1 || !slices.Contains(jobs[0].Finalizers, "batch.almanac.dev/outcome") {
			return fmt.Errorf("%d Jobs", len(jobs))
		}
		return nil
	})

	mustHelm(t, "uninstall", release, "-n", releaseNS, "--wait", "--timeout", "3m")
	// The manager's Pods go once they have drained (terminationDrainSeconds).
	var left []string
	eventually(t, time.Minute, "nothing of almanac's left but the CRDs", func() error {
		left = leftovers(t)
		if len(left) > 0 {
			return fmt.Errorf("left: %s", strings.Join(left, ", "))
		}
		return nil
	})
	crds := strings.Fields(mustKubectl(t, "get", "crds", "-o", "name"))
	var ours []string
	for _, c := range crds {
		if strings.HasSuffix(c, ".almanac.dev") {
			ours = append(ours, strings.TrimPrefix(c, "customresourcedefinition.apiextensions.k8s.io/"))
		}
	}
	slices.Sort(ours)
	if want := check.CRDNames(); !slices.Equal(ours, want) {
		t.Errorf("after helm uninstall almanac's CRDs left are %v, want all of them (crds.keep): %v", ours, want)
	}
	t.Logf("nothing of almanac's left in %s or cluster-wide; the CRDs stay: %s", releaseNS, strings.Join(ours, ", "))

	// The pre-delete hook released the Job and the autoscalers, and left each target at its
	// baseline, owned by no almanac field manager: deleting the namespace completes.
	if jobs := jobsOf(t, ns, "ScheduledJob", "long"); len(jobs) != 1 || len(jobs[0].Finalizers) != 0 {
		t.Errorf("after helm uninstall the one-shot's Job is %v, want it there without almanac's finalizer", jobs)
	}
	if minR, maxR, err := hpaBounds(ns, "front")(); err != nil || minR != 1 || maxR != 2 {
		t.Errorf("after helm uninstall HPA front is at %d-%d (%v), want its baseline 1-2", minR, maxR, err)
	}
	if n, _, err := deploymentReplicas(ns, "batch"); err != nil || n != 1 {
		t.Errorf("after helm uninstall Deployment batch has %d replicas (%v), want its baseline 1", n, err)
	}
	for _, target := range []string{"hpa/front", "deployment/batch"} {
		if managers := mustKubectl(t, "get", target, "-n", ns, "-o", "jsonpath={.metadata.managedFields[*].manager}"); slices.Contains(strings.Fields(managers), "almanac") {
			t.Errorf("after helm uninstall the field managers of %s are %q, want no almanac", target, managers)
		}
	}
	if f := mustKubectl(t, "get", "scheduledpodautoscalers", "-n", ns, "-o", "jsonpath={.items[*].metadata.finalizers}"); f != "" {
		t.Errorf("after helm uninstall the ScheduledPodAutoscalers have finalizers %q, want none", f)
	}
	t.Logf("HPA front and Deployment batch at their baselines, owned by no almanac field manager; the autoscalers released")
	start := time.Now()
	if err := kube.Delete(context.Background(), &corev1.Namespace{ObjectMeta: metav1.ObjectMeta{Name: ns}}); err != nil {
		t.Fatal(err)
	}
	eventually(t, time.Minute, "namespace "+ns+" deleted", func() error {
		err := kube.Get(context.Background(), client.ObjectKey{Name: ns}, &corev1.Namespace{})
		if apierrors.IsNotFound(err) {
			return nil
		}
		return fmt.Errorf("still there (%w)", err)
	})
	t.Logf("namespace %s, with the Job almanac had started and the autoscalers attached in a window, deleted %s after the uninstall", ns, time.Since(start).Round(time.Second))
}

// leftovers lists almanac's cluster-scoped objects, and every object in the release
// namespace of every kind that can be listed, except what Kubernetes puts in every namespace
// and Events (records, which expire by themselves).
func leftovers(t *testing.T) []string {
	t.Helper()
	var left []string
	for _, kind := range []string{"clusterroles", "clusterrolebindings", "mutatingwebhookconfigurations", "validatingwebhookconfigurations",
		"flowschemas.flowcontrol.apiserver.k8s.io", "prioritylevelconfigurations.flowcontrol.apiserver.k8s.io"} {
		for _, n := range strings.Fields(mustKubectl(t, "get", kind, "-o", "name")) {
			if strings.Contains(n, "/almanac") {
				left = append(left, n)
			}
		}
	}
	var listable []string
	for _, k := range strings.Fields(mustKubectl(t, "api-resources", "--namespaced=true", "--verbs=list", "-o", "name")) {
		if k != "events" && k != "events.events.k8s.io" {
			listable = append(listable, k)
		}
	}
	for _, n := range strings.Fields(mustKubectl(t, "get", strings.Join(listable, ","), "-n", releaseNS, "-o", "name", "--ignore-not-found")) {
		switch n {
		case "configmap/kube-root-ca.crt", "serviceaccount/default":
			continue
		}
		left = append(left, releaseNS+": "+n)
	}
	return left
}

// --- external certificates, scoped to two namespaces ------------------------------------------

// testExternalCertificates installs the chart with a certificate the user provides (a Secret
// and its CA bundle), the image from the user's registry (pushed by the upgrade step), and
// watchNamespaces={e2e-scope-a,e2e-scope-b}. It shows that the API server reaches the webhooks
// with that certificate, and what the scope means on a real cluster: the manager, with Roles
// in those two namespaces only, reconciles there and runs a Job; a ScheduledJob in e2e-scope-c
// is refused by the webhook with a message naming the value; and one stored in e2e-scope-c
// before the install (no webhook was in the way) is never reconciled.
func testExternalCertificates(t *testing.T, reg string) {
	a, b, c := namespace(t, "e2e-scope-a"), namespace(t, "e2e-scope-b"), namespace(t, "e2e-scope-c")
	// Stored while no almanac is installed: an every-minute ScheduledJob, which a manager that
	// watched e2e-scope-c would give a status at once.
	mustApply(t, c, `
apiVersion: batch.almanac.dev/v1alpha1
kind: ScheduledJob
metadata: {name: stray}
spec:
  schedule: "* * * * *"
  timeZone: UTC`+jobTemplate("echo stray"))

	caPEM, certPEM, keyPEM := serviceCertificate(t, "almanac-webhook", releaseNS)
	dir := t.TempDir()
	caFile := filepath.Join(dir, "ca.crt")
	if err := os.WriteFile(caFile, caPEM, 0o600); err != nil {
		t.Fatal(err)
	}
	secret := &corev1.Secret{
		ObjectMeta: metav1.ObjectMeta{Name: "almanac-webhook-tls", Namespace: releaseNS},
		Type:       corev1.SecretTypeTLS,
		Data:       map[string][]byte{corev1.TLSCertKey: certPEM, corev1.TLSPrivateKeyKey: keyPEM},
	}
	if err := kube.Create(context.Background(), secret); err != nil && !apierrors.IsAlreadyExists(err) {
		t.Fatal(err)
	}
	defer func() { _ = kube.Delete(context.Background(), secret) }()
	mustHelm(t, "install", release, "charts/almanac", "-n", releaseNS, "--set", "image.repository="+reg+"/almanac",
		"--set", "certificates.mode=external", "--set", "certificates.external.secretName=almanac-webhook-tls",
		"--set-file", "certificates.external.caBundle="+caFile,
		"--set", "watchNamespaces={"+a+","+b+"}", "--wait", "--timeout", "5m")
	defer func() {
		if t.Failed() {
			dumpLogs(t, a, c)
		}
		mustHelm(t, "uninstall", release, "-n", releaseNS, "--wait", "--timeout", "3m")
	}()
	if err := waitDeploymentReady(t); err != nil {
		t.Errorf("after helm install --wait: %v", err)
	}
	// The release namespace is not served: the check's probe there is refused, which proves
	// that the webhooks answer.
	r := exe(t, "", almanacBin, "check", "-n", releaseNS)
	if r.code != 0 || !strings.Contains(r.stdout, "does not serve that namespace") {
		t.Fatalf("almanac check with external certificates, watchNamespaces={%s,%s}: %s", a, b, r)
	}
	if roles := mustKubectl(t, "get", "clusterrole", "almanac-manager", "-o", "jsonpath={.rules[*].resources}"); strings.Contains(roles, "jobs") {
		t.Errorf("the manager's ClusterRole grants %s in namespaced mode", roles)
	}
	if r := kubectl(t, "auth", "can-i", "create", "jobs.batch", "--as=system:serviceaccount:"+releaseNS+":"+release, "-n", c); strings.TrimSpace(r.stdout) != "no" {
		t.Errorf("the manager may create Jobs in %s, which it does not watch: %s", c, r)
	}

	// A ScheduledJob in a watched namespace, at the next minute: normalized by the mutating
	// webhook, run by the manager through its Role there.
	at := nextBoundary(20 * time.Second)
	mustApply(t, a, `
apiVersion: batch.almanac.dev/v1alpha1
kind: ScheduledJob
metadata: {name: ext}
spec:
  at: "`+wall(at)+`"
  timeZone: utc`+jobTemplate("echo scoped"))
	if tz := almanacField(t, a, "scheduledjob", "ext", ".spec.timeZone"); tz != "UTC" {
		t.Errorf("timeZone stored as %q, want UTC (normalized by the mutating webhook)", tz)
	}

	// Refused in a namespace that is not watched, with the message.
	r = apply(t, c, `
apiVersion: batch.almanac.dev/v1alpha1
kind: ScheduledJob
metadata: {name: elsewhere}
spec:
  schedule: "0 3 * * *"
  timeZone: UTC`+jobTemplate("true"))
	want := `ScheduledJob "elsewhere" is in namespace "` + c + `", which this almanac does not serve (it serves "` + a + `", "` + b + `"; chart value watchNamespaces)`
	if r.code == 0 || !strings.Contains(r.stderr, "denied the request") || !strings.Contains(r.stderr, want) {
		t.Errorf("a ScheduledJob in %s: want it refused by the webhook with %q, got %s", c, want, r)
	} else {
		t.Logf("refused: %s", strings.TrimSpace(r.stderr))
	}
	if kubectl(t, "get", "scheduledjob", "elsewhere", "-n", c).code == 0 {
		t.Error("the refused ScheduledJob was stored")
	}

	eventually(t, time.Until(at)+2*time.Minute, "the scoped ScheduledJob Succeeded", func() error {
		if phase := almanacField(t, a, "scheduledjob", "ext", ".status.phase"); phase != "Succeeded" {
			return fmt.Errorf("phase %q", phase)
		}
		return nil
	})
	if n := len(jobsOf(t, a, "ScheduledJob", "ext")); n != 1 {
		t.Errorf("%d Jobs of the scoped ScheduledJob, want 1", n)
	}
	// By now the manager has reconciled e2e-scope-a for over a minute; the every-minute
	// ScheduledJob in e2e-scope-c has only the status the schema defaults (observedGeneration
	// 0, which kstatus reads as InProgress) and no Job: the manager never saw it.
	if st := mustKubectl(t, "get", "scheduledjob", "stray", "-n", c, "-o", "jsonpath={.status}"); !slices.Contains([]string{"", "{}", `{"observedGeneration":0}`}, strings.TrimSpace(st)) {
		t.Errorf("the ScheduledJob in %s, which is not watched, has a status beyond the schema's default: %s", c, st)
	}
	if n := len(jobsOf(t, c, "ScheduledJob", "stray")); n != 0 {
		t.Errorf("%d Jobs of the ScheduledJob in %s, which is not watched", n, c)
	}
	t.Logf("installed with certificates.mode=external and watchNamespaces={%s,%s}: almanac check passed; the ScheduledJob in %s ran; "+
		"one in %s was refused, and the one stored there before was never reconciled", a, b, a, c)
}

// testCalendar: a Calendar's freeze period covers one minute of an every-minute ScheduledJob:
// that slot is recorded as skipped with the period's name and starts no Job, and the slot
// after the freeze runs a Job whose Pod completes.
func testCalendar(t *testing.T) {
	ns := namespace(t, "e2e-calendar")
	frozen := nextBoundary(45 * time.Second)
	after := frozen.Add(time.Minute)
	mustApply(t, ns, fmt.Sprintf(`
apiVersion: almanac.dev/v1alpha1
kind: Calendar
metadata: {name: freeze}
spec:
  periods:
  - {start: %q, end: %q, name: e2e freeze}
---
apiVersion: batch.almanac.dev/v1alpha1
kind: ScheduledJob
metadata: {name: every-minute}
spec:
  schedule: "* * * * *"
  calendars:
    skip: [{name: freeze}]`, frozen.Format("2006-01-02T15:04"), after.Format("2006-01-02T15:04"))+jobTemplate("echo tick"))
	slotJob := func(slot time.Time) *batchv1.Job {
		for _, j := range jobsOf(t, ns, "ScheduledJob", "every-minute") {
			if j.Annotations["batch.almanac.dev/scheduled-time"] == slot.Format(time.RFC3339) {
				return &j
			}
		}
		return nil
	}
	eventually(t, time.Until(after)+2*time.Minute, "the slot after the freeze completes", func() error {
		if j := slotJob(after); j == nil || !jobComplete(*j) {
			return fmt.Errorf("no completed Job for %s yet", after.Format(time.RFC3339))
		}
		return nil
	})
	if j := slotJob(frozen); j != nil {
		t.Errorf("Job %s ran in the freeze", j.Name)
	}
	if got := almanacField(t, ns, "scheduledjob", "every-minute", ".status.lastSkippedReason"); got != "e2e freeze (Calendar freeze)" {
		t.Errorf("status.lastSkippedReason %q, want the freeze's name", got)
	}
	if got := almanacField(t, ns, "scheduledjob", "every-minute", ".status.lastSkippedTime"); got != frozen.Format(time.RFC3339) {
		t.Errorf("status.lastSkippedTime %q, want %s", got, frozen.Format(time.RFC3339))
	}

	// A calendar that does not exist: kubectl prints the webhook's warning, and the condition
	// Calendars says the ScheduledJob is held.
	r := apply(t, ns, `
apiVersion: batch.almanac.dev/v1alpha1
kind: ScheduledJob
metadata: {name: held}
spec:
  schedule: "0 3 * * *"
  calendars:
    skip: [{name: nowhere}]`+jobTemplate("echo held"))
	if r.code != 0 || !strings.Contains(r.stderr, "spec.calendars.skip[0]: Calendar nowhere does not exist") {
		t.Errorf("applying a ScheduledJob that names a missing calendar: %s", r)
	}
	eventually(t, 30*time.Second, "condition Calendars False on the held ScheduledJob", func() error {
		if got := almanacField(t, ns, "scheduledjob", "held", `.status.conditions[?(@.type=="Calendars")].reason`); got != "CalendarNotUsable" {
			return fmt.Errorf("condition Calendars reason %q", got)
		}
		return nil
	})
}
