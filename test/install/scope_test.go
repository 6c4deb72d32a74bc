package install

import (
	"bufio"
	"bytes"
	"context"
	"fmt"
	"strconv"
	"strings"
	"testing"
	"time"

	admissionregistrationv1 "k8s.io/api/admissionregistration/v1"
	corev1 "k8s.io/api/core/v1"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/client-go/kubernetes"
	"sigs.k8s.io/controller-runtime/pkg/client"

	batchv1alpha1 "github.com/almanac-dev/almanac/api/batch/v1alpha1"
	"github.com/almanac-dev/almanac/commands/check"
	"github.com/almanac-dev/almanac/test/testenv"
)

// watches counts the watches the API server is serving for a resource, cluster-wide and in
// single namespaces (its apiserver_longrunning_requests gauge): what every client has
// informers for, seen from the server.
func watches(t *testing.T, group, resource string) (cluster, namespaced int) {
	t.Helper()
	cs, err := kubernetes.NewForConfig(env.Config)
	if err != nil {
		t.Fatal(err)
	}
	raw, err := cs.RESTClient().Get().AbsPath("/metrics").DoRaw(context.Background())
	if err != nil {
		t.Fatalf("GET /metrics of the API server: %v", err)
	}
	sc := bufio.NewScanner(bytes.NewReader(raw))
	sc.Buffer(make([]byte, 1<<20), 1<<20)
	for sc.Scan() {
		line := sc.Text()
		if !strings.HasPrefix(line, "apiserver_longrunning_requests{") || !strings.Contains(line, `verb="WATCH"`) ||
			!strings.Contains(line, `group="`+group+`"`) || !strings.Contains(line, `resource="`+resource+`"`) || !strings.Contains(line, `subresource=""`) {
			continue
		}
		fields := strings.Fields(line)
		n, err := strconv.ParseFloat(fields[len(fields)-1], 64)
		if err != nil {
			t.Fatalf("%q: %v", line, err)
		}
		switch {
		case strings.Contains(line, `scope="cluster"`):
			cluster += int(n)
		case strings.Contains(line, `scope="namespace"`):
			namespaced += int(n)
		}
	}
	return cluster, namespaced
}

// managerArgs are the flags of an `almanac manager` in self-managed mode whose webhooks
// (configurations and CA Secret named id) the API server calls at port.
func managerArgs(id string, port int, more ...string) []string {
	return append([]string{
		"--metrics-bind-address=0",
		"--webhook-port=" + strconv.Itoa(port),
		"--cert-mode=self-managed",
		"--cert-namespace=" + ns,
		"--cert-ca-secret=" + id + "-ca",
		"--webhook-service=" + id,
		"--webhook-dns-names=localhost",
		"--mutating-webhook-configuration=" + id,
		"--validating-webhook-configuration=" + id,
	}, more...)
}

func installWebhooks(t *testing.T, id string, port int) {
	t.Helper()
	n, err := testenv.InstallWebhookConfigurations(context.Background(), env.Client, testenv.RepoRoot(), id, port)
	if err != nil || n == 0 {
		t.Fatalf("installing config/webhook's configurations: %d webhooks, %v", n, err)
	}
	t.Cleanup(func() {
		_ = env.Client.Delete(context.Background(), &admissionregistrationv1.MutatingWebhookConfiguration{ObjectMeta: metav1.ObjectMeta{Name: id}})
		_ = env.Client.Delete(context.Background(), &admissionregistrationv1.ValidatingWebhookConfiguration{ObjectMeta: metav1.ObjectMeta{Name: id}})
	})
}

func createNamespace(t *testing.T, name string) {
	t.Helper()
	n := &corev1.Namespace{ObjectMeta: metav1.ObjectMeta{Name: name}}
	if err := env.Client.Create(context.Background(), n); err != nil && !apierrors.IsAlreadyExists(err) {
		t.Fatal(err)
	}
}

// TestOnlyTheLeaderCachesJobsAndHPAs runs two `almanac manager` replicas with leader
// election, as the chart does. Both serve the webhooks, so both watch almanac's kinds; only
// the leader, which runs the reconcilers, watches Jobs and HorizontalPodAutoscalers (a
// cluster's Jobs can be many, and every replica used to cache them all). Once the leader
// stops, the other replica takes over and opens those watches. What is counted is what the
// API server serves.
func TestOnlyTheLeaderCachesJobsAndHPAs(t *testing.T) {
	const id = "leaders"
	const leaseNS = "leaders"
	createNamespace(t, leaseNS)
	port := freePort(t)
	installWebhooks(t, id, port)
	election := []string{"--leader-elect", "--leader-election-namespace=" + leaseNS}
	before := map[string]int{}
	for _, r := range []string{"scheduledjobs", "jobs", "horizontalpodautoscalers"} {
		group := map[string]string{"scheduledjobs": "batch.almanac.dev", "jobs": "batch", "horizontalpodautoscalers": "autoscaling"}[r]
		c, n := watches(t, group, r)
		before[r] = c + n
	}
	count := func(group, resource string) int {
		c, n := watches(t, group, resource)
		return c + n - before[resource]
	}
	want := func(what string, sj, jobs, hpas int) {
		t.Helper()
		eventually(t, 30*time.Second, what, func() error {
			got := []int{count("batch.almanac.dev", "scheduledjobs"), count("batch", "jobs"), count("autoscaling", "horizontalpodautoscalers")}
			if got[0] != sj || got[1] != jobs || got[2] != hpas {
				return fmt.Errorf("watches of ScheduledJobs, Jobs, HPAs: %v, want [%d %d %d]", got, sj, jobs, hpas)
			}
			return nil
		})
	}
	if before["scheduledjobs"] != 0 || before["jobs"] != 0 {
		t.Logf("watches open before the test (other clients): %v", before)
	}

	leader := startManagerBinary(t, managerArgs(id, port, election...)...)
	leader.waitReady(t)
	want("the leader watching", 1, 1, 1)
	other := startManagerBinary(t, managerArgs(id, freePort(t), election...)...)
	want("the second replica serving webhooks", 2, 1, 1)
	// Still so once it has started all it starts without the lease (the fence: its readiness,
	// after its caches synced and its webhook server started): the second replica opens no
	// watch of Jobs or HPAs.
	other.waitReady(t)
	want("the second replica, ready, still without Jobs and HPAs", 2, 1, 1)
	t.Log("two replicas: 2 watches of ScheduledJobs, 1 of Jobs, 1 of HPAs (the leader's)")

	leader.stop(t)
	eventually(t, 30*time.Second, "the second replica leading", func() error {
		if !strings.Contains(strings.ToLower(other.logs()), "successfully acquired lease") {
			return fmt.Errorf("no \"Successfully acquired lease\" in its log")
		}
		return nil
	})
	want("the second replica watching Jobs and HPAs", 1, 1, 1)
	t.Log("the leader stopped: the other replica leads and watches Jobs and HPAs")
}

// TestManagerBinaryWatchNamespaces runs `almanac manager --watch-namespaces=scope-a,scope-b`
// with almanac's webhooks installed: it watches only those namespaces (the API server serves
// it namespaced watches, none cluster-wide), reconciles a ScheduledJob in scope-a but never one
// in scope-c (stored before the webhooks were installed), and its webhooks refuse almanac's
// objects in scope-c, on create and on update, with a message that names the namespaces served
// and the chart value. `almanac check` in scope-c counts that refusal as the webhooks answering.
func TestManagerBinaryWatchNamespaces(t *testing.T) {
	const id = "scoped"
	ctx := context.Background()
	for _, n := range []string{"scope-a", "scope-b", "scope-c"} {
		createNamespace(t, n)
	}
	probe := func(namespace, name string) *batchv1alpha1.ScheduledJob {
		o := check.ProbeObject(namespace)
		o.GenerateName, o.Name, o.Spec.Suspend = "", name, false
		return o
	}
	// Stored while no webhook is in the way: a ScheduledJob in a namespace the manager will
	// not serve.
	unserved := probe("scope-c", "stray")
	if err := env.Client.Create(ctx, unserved); err != nil {
		t.Fatal(err)
	}
	before, _ := watches(t, "batch", "jobs")

	port := freePort(t)
	installWebhooks(t, id, port)
	m := startManagerBinary(t, managerArgs(id, port, "--watch-namespaces=scope-a,scope-b")...)
	m.waitReady(t)

	served := probe("scope-a", "nightly")
	if err := env.Client.Create(ctx, served); err != nil {
		t.Fatalf("a ScheduledJob in a served namespace: %v", err)
	}
	eventually(t, 30*time.Second, "the ScheduledJob in scope-a reconciled", func() error {
		o := &batchv1alpha1.ScheduledJob{}
		if err := env.Client.Get(ctx, client.ObjectKeyFromObject(served), o); err != nil {
			return err
		}
		if o.Status.ObservedGeneration == 0 {
			return fmt.Errorf("status %+v", o.Status)
		}
		return nil
	})

	want := `ScheduledJob "refused" is in namespace "scope-c", which this almanac does not serve (it serves "scope-a", "scope-b"; chart value watchNamespaces)`
	err := env.Client.Create(ctx, probe("scope-c", "refused"))
	if err == nil || !apierrors.IsForbidden(err) || !strings.Contains(err.Error(), want) {
		t.Errorf("a ScheduledJob created in scope-c: %v, want Forbidden with %q", err, want)
	}
	stray := &batchv1alpha1.ScheduledJob{}
	if err := env.Client.Get(ctx, client.ObjectKeyFromObject(unserved), stray); err != nil {
		t.Fatal(err)
	}
	stray.Labels = map[string]string{"touched": "yes"}
	want = `ScheduledJob "stray" is in namespace "scope-c", which this almanac does not serve (it serves "scope-a", "scope-b"; chart value watchNamespaces)`
	if err := env.Client.Update(ctx, stray); err == nil || !apierrors.IsForbidden(err) || !strings.Contains(err.Error(), want) {
		t.Errorf("an update of a ScheduledJob in scope-c: %v, want Forbidden with %q", err, want)
	}
	// Never reconciled: nothing of scope-c is watched.
	if err := env.Client.Get(ctx, client.ObjectKeyFromObject(unserved), stray); err != nil {
		t.Fatal(err)
	}
	if stray.Status.ObservedGeneration != 0 || stray.Status.Phase != "" {
		t.Errorf("the ScheduledJob in scope-c was reconciled: %+v", stray.Status)
	}
	if cluster, namespaced := watches(t, "batch", "jobs"); cluster != before || namespaced < 2 {
		t.Errorf("watches of Jobs: %d cluster-wide (%d before the manager), %d in namespaces; want none cluster-wide and one per watched namespace", cluster, before, namespaced)
	}
	// It can still be deleted (a deletion is never refused).
	if err := env.Client.Delete(ctx, stray); err != nil {
		t.Errorf("deleting the ScheduledJob in scope-c: %v", err)
	}

	out, code := runAlmanac(t, "check", "--kubeconfig="+env.KubeconfigPath, "--namespace=scope-c",
		"--mutating-webhook-configuration="+id, "--validating-webhook-configuration="+id)
	t.Logf("almanac check in scope-c (exit %d):\n%s", code, out)
	if code != 0 || !strings.Contains(out, "this almanac does not serve that namespace") {
		t.Errorf("almanac check in an unserved namespace: exit %d, want 0, the refusal counted as the webhooks answering", code)
	}
}
