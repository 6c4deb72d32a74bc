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
	// Still so a while later: the second replica opens no watch of Jobs or HPAs.
	time.Sleep(3 * time.Second)
	want("the second replica still without Jobs and HPAs", 2, 1, 1)
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
