//go:build e2e

package e2e

import (
	"fmt"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"k8s.io/client-go/tools/clientcmd"
)

// shopChart is a small chart as a team would have: a Deployment and its HPA, whose
// minReplicas the chart renders.
var shopChart = map[string]string{
	"Chart.yaml":  "apiVersion: v2\nname: shop\nversion: 0.1.0\n",
	"values.yaml": "minReplicas: 1\nmaxReplicas: 2\nrevision: one\n",
	"templates/deployment.yaml": `apiVersion: apps/v1
kind: Deployment
metadata: {name: shop, annotations: {revision: "{{ .Values.revision }}"}}
spec:
  selector: {matchLabels: {app: shop}}
  template:
    metadata: {labels: {app: shop}}
    spec:
      terminationGracePeriodSeconds: 1
      containers:
      - name: httpd
        image: ` + busybox + `
        imagePullPolicy: Never
        command: [/bin/sh, -c, "mkdir -p /www && hostname > /www/index.html && exec httpd -f -p 8080 -h /www"]
        readinessProbe: {httpGet: {path: /index.html, port: 8080}, periodSeconds: 1}
        resources: {requests: {cpu: 10m, memory: 16Mi}, limits: {memory: 32Mi}}
`,
	"templates/hpa.yaml": `apiVersion: autoscaling/v2
kind: HorizontalPodAutoscaler
metadata: {name: shop, annotations: {revision: "{{ .Values.revision }}"}}
spec:
  scaleTargetRef: {apiVersion: apps/v1, kind: Deployment, name: shop}
  minReplicas: {{ .Values.minReplicas }}
  maxReplicas: {{ .Values.maxReplicas }}
  metrics:
  - type: Resource
    resource: {name: cpu, target: {type: Utilization, averageUtilization: 80}}
`,
}

// testAttached: almanac attached to what a team already runs. An HPA installed by Helm from a
// small chart is raised at a boundary, with Pods to match; a `helm upgrade` inside the window
// (Helm 4 applies server-side: without --force-conflicts it is refused on the field almanac
// owns; with it, it writes its value and almanac puts the window's back at once); a Deployment
// without an HPA goes to 0 replicas in a window and back.
func testAttached(t *testing.T) {
	ns := namespace(t, "e2e-attached")
	dir := t.TempDir()
	for name, body := range shopChart {
		path := filepath.Join(dir, "shop", name)
		if err := os.MkdirAll(filepath.Dir(path), 0o755); err != nil {
			t.Fatal(err)
		}
		if err := os.WriteFile(path, []byte(body), 0o644); err != nil {
			t.Fatal(err)
		}
	}
	chart := filepath.Join(dir, "shop")
	mustHelm(t, "install", "shop", chart, "-n", ns, "--wait", "--timeout", "2m")

	start := nextBoundary(40 * time.Second)
	end := start.Add(2 * time.Minute)
	mustApply(t, ns, sleepDeployment("nightly")+`
---
apiVersion: autoscaling.almanac.dev/v1alpha1
kind: ScheduledPodAutoscaler
metadata: {name: shop}
spec:
  targetRef: {apiVersion: autoscaling/v2, kind: HorizontalPodAutoscaler, name: shop}
  minReplicas: 1
  maxReplicas: 2
`+oneShot("shop-sale", "shop", start, end, 3, 4)+`
---
apiVersion: autoscaling.almanac.dev/v1alpha1
kind: ScheduledPodAutoscaler
metadata: {name: nightly}
spec:
  targetRef: {apiVersion: apps/v1, kind: Deployment, name: nightly}
  minReplicas: 1
`+oneShot("nightly-off", "nightly", start, end, 0, 0))
	bounds := hpaBounds(ns, "shop")
	replicas := func() (int32, int32, error) { return deploymentReplicas(ns, "nightly") }
	seen := watchBounds(bounds, end.Add(90*time.Second))
	nightly := watchBounds(replicas, end.Add(90*time.Second))
	t.Logf("Helm's HPA shop at 1-2 and Deployment nightly at 1; the windows open at %s and close at %s", start.Format(time.TimeOnly), end.Format(time.TimeOnly))

	opened, ok := seen.first(3, 4, time.Time{})
	if !ok {
		t.Fatalf("Helm's HPA never had bounds 3-4; it went through %v", seen.all())
	}
	if opened.Before(start) {
		t.Errorf("bounds 3-4 at %s, before the window opened at %s", opened.Format(time.StampMilli), start.Format(time.StampMilli))
	}
	t.Logf("Helm's HPA at 3-4 %s after the boundary", opened.Sub(start).Round(time.Millisecond))
	waitReady(t, ns, "shop", 3)
	t.Logf("Deployment shop reached 3 ready Pods %s after the boundary", time.Since(start).Round(time.Second))
	off, ok := nightly.first(0, 0, time.Time{})
	if !ok || off.Before(start) {
		t.Errorf("Deployment nightly: want 0 replicas from %s, got %v", start.Format(time.StampMilli), nightly.all())
	} else {
		t.Logf("Deployment nightly at 0 replicas (none ready) %s after the boundary", off.Sub(start).Round(time.Millisecond))
	}

	// A helm upgrade inside the window. Helm 4 applies server-side: the chart's minReplicas 1
	// conflicts with almanac's 3, and Helm refuses the upgrade, naming almanac.
	r := helm(t, "upgrade", "shop", chart, "-n", ns, "--set", "revision=two")
	if r.code == 0 || !strings.Contains(r.stdout+r.stderr, "almanac") {
		t.Errorf("helm upgrade inside the window: want it refused by a conflict with almanac's minReplicas, got %s", r)
	} else {
		t.Logf("helm upgrade without --force-conflicts: %s", firstLines(strings.TrimSpace(r.stderr), 3))
	}
	// With --force-conflicts Helm takes the fields and writes 1-2; almanac puts 3-4 back at
	// once, with an event that names Helm.
	before := time.Now()
	mustHelm(t, "upgrade", "shop", chart, "-n", ns, "--set", "revision=three", "--force-conflicts")
	eventually(t, 10*time.Second, "an event naming helm", func() error {
		out := mustKubectl(t, "get", "events", "-n", ns, "--field-selector", "involvedObject.name=shop,reason=TargetChanged", "-o", "jsonpath={.items[*].message}")
		if !strings.Contains(out, `helm`) {
			return fmt.Errorf("TargetChanged events: %q", out)
		}
		t.Logf("event: %s", firstLines(out, 1))
		return nil
	})
	time.Sleep(time.Second)
	checked := time.Now()
	if minR, maxR, err := bounds(); err != nil || minR != 3 || maxR != 4 {
		t.Errorf("after helm upgrade --force-conflicts: bounds %d-%d (%v), want the window's 3-4 back", minR, maxR, err)
	}
	switch stood := seen.held(1, 2, before, checked); {
	case stood > 3*time.Second:
		t.Errorf("Helm's 1-2 stood for %s before almanac put 3-4 back, want one reconcile (well under 3 s): %v", stood, seen.all())
	case stood > 0:
		t.Logf("helm upgrade --force-conflicts wrote 1-2; almanac put 3-4 back after %s", stood.Round(time.Millisecond))
	default:
		t.Logf("helm upgrade --force-conflicts wrote 1-2; almanac put 3-4 back before a 100 ms poll saw it")
	}

	// `almanac override`, the binary, against the cluster, as a user runs it: a user who may
	// only view is refused; then Deployment nightly gets 2 replicas until the window's end,
	// the override is listed, and the controller deletes it once it has ended (checked below).
	viewer := viewerKubeconfig(t, ns)
	if r := exe(t, "", almanacBin, "override", "spa/nightly", "--min", "2", "--for", "10m", "-n", ns, "--kubeconfig", viewer); r.code != 1 || !strings.Contains(r.stderr, "you may not create Schedules") {
		t.Errorf("almanac override as a user who may only view: want exit 1 and \"you may not create Schedules\", got %s", r)
	} else {
		t.Logf("almanac override as a viewer: %s", firstLines(strings.TrimSpace(r.stderr), 1))
	}
	overridden := false
	if left := time.Until(end); left > 20*time.Second {
		r = exe(t, "", almanacBin, "override", "spa/nightly", "--min", "2", "--until", end.UTC().Format(time.RFC3339), "-n", ns)
		if r.code != 0 {
			t.Errorf("almanac override spa/nightly --min 2: %s", r)
		} else {
			overridden = true
			t.Logf("almanac override: %s", firstLines(strings.TrimSpace(r.stdout), 2))
			eventually(t, 10*time.Second, "Deployment nightly at 2 replicas during the override", func() error {
				n, _, err := replicas()
				if err != nil {
					return err
				}
				if n != 2 {
					return fmt.Errorf("%d replicas", n)
				}
				return nil
			})
			if r := exe(t, "", almanacBin, "override", "--list", "-n", ns); r.code != 0 || !strings.Contains(r.stdout, "nightly") {
				t.Errorf("almanac override --list: want the override of nightly, got %s", r)
			} else {
				t.Logf("almanac override --list:\n%s", strings.TrimSpace(r.stdout))
			}
		}
	} else {
		t.Errorf("no time left in the window for an override (%s): the steps before it took too long", left)
	}

	closed, ok := seen.first(1, 2, checked)
	if !ok || closed.Before(end) {
		t.Errorf("the baseline 1-2: want it from %s, got %v", end.Format(time.StampMilli), seen.all())
	} else {
		t.Logf("Helm's HPA back at 1-2 %s after the window closed", closed.Sub(end).Round(time.Millisecond))
	}
	on, ok := nightly.first(1, 1, off)
	if !ok || on.Before(end) {
		t.Errorf("Deployment nightly: want 1 ready replica again after %s, got %v", end.Format(time.StampMilli), nightly.all())
	} else {
		t.Logf("Deployment nightly back at 1 ready replica %s after the window closed", on.Sub(end).Round(time.Millisecond))
	}

	if overridden {
		eventually(t, time.Minute, "the ended override deleted by the controller", func() error {
			if out := mustKubectl(t, "get", "schedules", "-n", ns, "-l", "autoscaling.almanac.dev/override=true", "-o", "name"); out != "" {
				return fmt.Errorf("still there: %s", out)
			}
			return nil
		})
		t.Logf("the override was deleted after it ended, %s after the window closed", time.Since(end).Round(time.Second))
	}
	// An override removed before it ends: nightly goes to 3 and back to its baseline 1.
	r = exe(t, "", almanacBin, "override", "spa/nightly", "--min", "3", "--for", "30m", "-n", ns)
	if r.code != 0 {
		t.Errorf("almanac override spa/nightly --min 3 --for 30m: %s", r)
	} else {
		eventually(t, 10*time.Second, "Deployment nightly at 3 replicas during the second override", func() error {
			n, _, err := replicas()
			if err != nil {
				return err
			}
			if n != 3 {
				return fmt.Errorf("%d replicas", n)
			}
			return nil
		})
		name := mustKubectl(t, "get", "schedules", "-n", ns, "-l", "autoscaling.almanac.dev/override=true", "-o", "jsonpath={.items[0].metadata.name}")
		if r := exe(t, "", almanacBin, "override", "--remove", name, "-n", ns); r.code != 0 {
			t.Errorf("almanac override --remove %s: %s", name, r)
		}
		eventually(t, 10*time.Second, "Deployment nightly back at 1 replica after the override was removed", func() error {
			n, _, err := replicas()
			if err != nil {
				return err
			}
			if n != 1 {
				return fmt.Errorf("%d replicas", n)
			}
			return nil
		})
		t.Logf("almanac override --remove %s: Deployment nightly back at its baseline 1", name)
	}

	// Deleting the autoscaler leaves Helm's HPA at the baseline, minReplicas still set, and
	// owned by no almanac field manager.
	mustKubectl(t, "delete", "scheduledpodautoscaler", "shop", "-n", ns, "--wait=true", "--timeout=60s")
	managers := mustKubectl(t, "get", "hpa", "shop", "-n", ns, "-o", "jsonpath={.metadata.managedFields[*].manager}")
	if strings.Contains(" "+managers+" ", " almanac ") {
		t.Errorf("after the autoscaler was deleted, the HPA's field managers are %q, want no almanac", managers)
	}
	if minR := mustKubectl(t, "get", "hpa", "shop", "-n", ns, "-o", "jsonpath={.spec.minReplicas}"); minR != "1" {
		t.Errorf("after the autoscaler was deleted, the HPA's minReplicas is %q, want 1", minR)
	}
}

// held returns how long the bounds (min, max) were seen between from and to: from each time
// they were first seen after from to the next change (or to).
func (l *boundsLog) held(minR, maxR int32, from, to time.Time) time.Duration {
	l.mu.Lock()
	defer l.mu.Unlock()
	var total time.Duration
	for i, s := range l.seen {
		if s.min != minR || s.max != maxR || s.at.Before(from) || s.at.After(to) {
			continue
		}
		until := to
		if i+1 < len(l.seen) && l.seen[i+1].at.Before(to) {
			until = l.seen[i+1].at
		}
		total += until.Sub(s.at)
	}
	return total
}

// viewerKubeconfig writes a kubeconfig that acts as the user e2e-viewer, who holds the built-in
// view role in ns (which almanac's chart extends to read its kinds) and nothing else: what
// almanac's CLI may do with it is what that user may do.
func viewerKubeconfig(t *testing.T, ns string) string {
	t.Helper()
	mustKubectl(t, "create", "rolebinding", "e2e-viewer", "-n", ns, "--clusterrole=view", "--user=e2e-viewer")
	cfg, err := clientcmd.LoadFromFile(cluster.kubeconfig)
	if err != nil {
		t.Fatal(err)
	}
	for _, auth := range cfg.AuthInfos {
		auth.Impersonate = "e2e-viewer"
	}
	path := filepath.Join(t.TempDir(), "viewer.kubeconfig")
	if err := clientcmd.WriteToFile(*cfg, path); err != nil {
		t.Fatal(err)
	}
	return path
}
