//go:build e2e

package e2e

import (
	"context"
	"fmt"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"
	"k8s.io/apimachinery/pkg/runtime/schema"
	"sigs.k8s.io/controller-runtime/pkg/client"

	"github.com/almanac-dev/almanac/test/testenv"
)

// kedaImage is the reference hack/keda-image.sh gives KEDA's operator image.
var kedaImage = "ghcr.io/kedacore/keda:" + strings.TrimPrefix(testenv.KEDAVersion, "v")

// installKEDA installs KEDA's operator (testenv.KEDAVersion) with KEDA's own manifests, taken
// from its module: the namespace, service account, RBAC, every CRD, and the operator's
// Deployment with three changes that running an image built here needs (the image built by
// hack/keda-image.sh, not pulled; ko's entrypoint; no webhook or APIService to patch, since
// neither KEDA's admission webhooks nor its metrics server run here: the chain from a
// ScaledObject to Pods needs only the operator). It is installed after almanac, as a team
// that adds KEDA to a running cluster would. KEDA goes when the test ends.
func installKEDA(t *testing.T) {
	t.Helper()
	dir, err := testenv.KEDADir()
	if err != nil {
		t.Fatal(err)
	}
	config := filepath.Join(dir, "config")
	mustKubectl(t, "apply",
		"-f", filepath.Join(config, "general", "namespace.yaml"),
		"-f", filepath.Join(config, "service_account", "service_account.yaml"),
		"-f", filepath.Join(config, "rbac", "role.yaml"),
		"-f", filepath.Join(config, "rbac", "role_binding.yaml"))
	mustKubectl(t, "apply", "--server-side", "-f", filepath.Join(config, "crd", "bases"))
	manifest, err := os.ReadFile(filepath.Join(config, "manager", "manager.yaml"))
	if err != nil {
		t.Fatal(err)
	}
	deployment := string(manifest)
	for _, r := range [][2]string{
		{"image: ghcr.io/kedacore/keda:latest", "image: " + kedaImage},
		{"imagePullPolicy: Always", "imagePullPolicy: Never"},
		{"- /keda\n", "- /ko-app/operator\n"},
		{"- --enable-cert-rotation=true\n", "- --enable-cert-rotation=true\n            - --enable-webhook-patching=false\n            - --enable-apiservice-patching=false\n"},
	} {
		if !strings.Contains(deployment, r[0]) {
			t.Fatalf("KEDA %s's config/manager/manager.yaml has no %q: the e2e suite's changes to it need updating", testenv.KEDAVersion, r[0])
		}
		deployment = strings.Replace(deployment, r[0], r[1], 1)
	}
	if r := apply(t, "keda", deployment); r.code != 0 {
		t.Fatalf("installing KEDA's operator: %s", r)
	}
	t.Cleanup(func() {
		// ScaledObjects carry KEDA's finalizer: they go while the operator still runs.
		kubectl(t, "delete", "scaledobjects", "--all", "--all-namespaces", "--wait=true", "--timeout=60s")
		kubectl(t, "delete", "namespace", "keda", "--wait=false")
	})
	start := time.Now()
	if r := kubectl(t, "rollout", "status", "deployment/keda-operator", "-n", "keda", "--timeout=3m"); r.code != 0 {
		t.Logf("KEDA's operator, last lines:\n%s", kubectl(t, "logs", "-n", "keda", "deployment/keda-operator", "--tail=40").stdout)
		t.Fatalf("KEDA's operator did not become ready: %s", r)
	}
	t.Logf("KEDA %s's operator ready after %s", testenv.KEDAVersion, time.Since(start).Round(time.Second))
}

// scaledObjectBounds reads a ScaledObject's minReplicaCount (KEDA's default 0 when unset) and
// maxReplicaCount (100 when unset), as unstructured: the suite has no KEDA Go types either.
func scaledObjectBounds(ns, name string) func() (int32, int32, error) {
	return func() (int32, int32, error) {
		so := &unstructured.Unstructured{}
		so.SetGroupVersionKind(schema.GroupVersionKind{Group: "keda.sh", Version: "v1alpha1", Kind: "ScaledObject"})
		if err := kube.Get(context.Background(), client.ObjectKey{Namespace: ns, Name: name}, so); err != nil {
			return 0, 0, err
		}
		minR, _, _ := unstructured.NestedInt64(so.Object, "spec", "minReplicaCount")
		maxR, found, _ := unstructured.NestedInt64(so.Object, "spec", "maxReplicaCount")
		if !found {
			maxR = 100
		}
		return int32(minR), int32(maxR), nil
	}
}

// testKEDA: almanac attached to a KEDA ScaledObject, with KEDA's operator running. At the
// boundary almanac writes the ScaledObject's minReplicaCount and maxReplicaCount, KEDA's
// operator carries them to the HPA it owns (keda-hpa-NAME), and the HPA controller to the
// Deployment's Pods; after the window the chain goes back to the baseline; deleting the
// autoscaler leaves the ScaledObject at the baseline with no almanac field manager.
func testKEDA(t *testing.T) {
	installKEDA(t)
	ns := namespace(t, "e2e-keda")
	// The cron trigger is active a minute a year, on 1 January: the operator finds it inactive,
	// and with minReplicaCount above 0 it leaves the replicas to the HPA.
	mustApply(t, ns, sleepDeployment("queue")+`
---
apiVersion: keda.sh/v1alpha1
kind: ScaledObject
metadata: {name: queue}
spec:
  scaleTargetRef: {name: queue}
  minReplicaCount: 1
  maxReplicaCount: 2
  triggers:
  - type: cron
    metadata: {timezone: UTC, start: "0 0 1 1 *", end: "1 0 1 1 *", desiredReplicas: "2"}
`)
	kedaHPA := hpaBounds(ns, "keda-hpa-queue")
	eventually(t, 2*time.Minute, "KEDA's HPA keda-hpa-queue at 1-2", func() error {
		minR, maxR, err := kedaHPA()
		if err != nil {
			return err
		}
		if minR != 1 || maxR != 2 {
			return fmt.Errorf("%d-%d", minR, maxR)
		}
		return nil
	})

	start := nextBoundary(40 * time.Second)
	end := start.Add(2 * time.Minute)
	mustApply(t, ns, `
apiVersion: autoscaling.almanac.dev/v1alpha1
kind: ScheduledPodAutoscaler
metadata: {name: queue}
spec:
  targetRef: {apiVersion: keda.sh/v1alpha1, kind: ScaledObject, name: queue}
  minReplicas: 1
  maxReplicas: 2
`+oneShot("queue-peak", "queue", start, end, 3, 4))
	so := watchBounds(scaledObjectBounds(ns, "queue"), end.Add(90*time.Second))
	hpa := watchBounds(kedaHPA, end.Add(90*time.Second))
	t.Logf("ScaledObject queue and KEDA's HPA at 1-2; the window opens at %s and closes at %s", start.Format(time.TimeOnly), end.Format(time.TimeOnly))

	soOpened, ok := so.first(3, 4, time.Time{})
	if !ok || soOpened.Before(start) {
		t.Fatalf("ScaledObject queue: want 3-4 from %s, it went through %v", start.Format(time.StampMilli), so.all())
	}
	hpaOpened, ok := hpa.first(3, 4, time.Time{})
	if !ok {
		t.Fatalf("KEDA's HPA never had bounds 3-4; it went through %v", hpa.all())
	}
	t.Logf("ScaledObject at 3-4 %s after the boundary; KEDA's HPA %s after it", soOpened.Sub(start).Round(time.Millisecond), hpaOpened.Sub(start).Round(time.Millisecond))
	waitReady(t, ns, "queue", 3)
	t.Logf("Deployment queue reached 3 ready Pods %s after the boundary", time.Since(start).Round(time.Second))

	soClosed, ok := so.first(1, 2, soOpened)
	if !ok || soClosed.Before(end) {
		t.Fatalf("ScaledObject queue: want the baseline 1-2 from %s, it went through %v", end.Format(time.StampMilli), so.all())
	}
	hpaClosed, ok := hpa.first(1, 2, hpaOpened)
	if !ok {
		t.Fatalf("KEDA's HPA: want the baseline 1-2 after %s, it went through %v", end.Format(time.StampMilli), hpa.all())
	}
	t.Logf("ScaledObject back at 1-2 %s after the window closed; KEDA's HPA %s after it", soClosed.Sub(end).Round(time.Millisecond), hpaClosed.Sub(end).Round(time.Millisecond))
	// Above its new maximum, the HPA brings the Deployment down to 2.
	waitReplicasAtMost(t, ns, "queue", 2)
	t.Logf("Deployment queue at 2 replicas at most %s after the window closed", time.Since(end).Round(time.Second))

	// Deleting the autoscaler leaves the ScaledObject at the baseline, minReplicaCount still
	// set, and owned by no almanac field manager.
	mustKubectl(t, "delete", "scheduledpodautoscaler", "queue", "-n", ns, "--wait=true", "--timeout=60s")
	managers := mustKubectl(t, "get", "scaledobject", "queue", "-n", ns, "-o", "jsonpath={.metadata.managedFields[*].manager}")
	if strings.Contains(" "+managers+" ", " almanac ") {
		t.Errorf("after the autoscaler was deleted, the ScaledObject's field managers are %q, want no almanac", managers)
	}
	if minR := mustKubectl(t, "get", "scaledobject", "queue", "-n", ns, "-o", "jsonpath={.spec.minReplicaCount}"); minR != "1" {
		t.Errorf("after the autoscaler was deleted, the ScaledObject's minReplicaCount is %q, want 1", minR)
	}
}
