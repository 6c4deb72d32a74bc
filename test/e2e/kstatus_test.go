//go:build e2e

package e2e

import (
	"context"
	"fmt"
	"strings"
	"testing"
	"time"

	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"
	"sigs.k8s.io/cli-utils/pkg/kstatus/status"
	"sigs.k8s.io/controller-runtime/pkg/client"
	"sigs.k8s.io/yaml"
)

// testKstatus: kstatus (sigs.k8s.io/cli-utils/pkg/kstatus/status.Compute, what Flux's
// `wait: true` and health checks run) on live objects of the installed chart's CRDs and
// manager. Each object, as the API server answers its creation (before almanac has seen it),
// is InProgress; once reconciled a cron ScheduledJob and an autoscaler with its Schedule are
// Current, and a ScheduledJob that names a missing calendar and an autoscaler attached to a
// missing HPA (admission warns about both, and lets them in) are Failed. Creating the missing
// calendar makes its ScheduledJob Current; a spec edit is InProgress until reconciled.
func testKstatus(t *testing.T) {
	ns := namespace(t, "e2e-kstatus")
	ctx := context.Background()
	objs := parseObjects(t, `
apiVersion: batch.almanac.dev/v1alpha1
kind: ScheduledJob
metadata: {name: report}
spec:
  schedule: "0 3 1 1 *"
  timeZone: UTC`+jobTemplate("echo report")+`
---
apiVersion: autoscaling.almanac.dev/v1alpha1
kind: ScheduledPodAutoscaler
metadata: {name: web}
spec:
  horizontalPodAutoscalerSpec:
    scaleTargetRef: {apiVersion: apps/v1, kind: Deployment, name: web}
    minReplicas: 1
    maxReplicas: 3
---
apiVersion: autoscaling.almanac.dev/v1alpha1
kind: Schedule
metadata: {name: web-business-hours}
spec:
  scaleTargetRef: {name: web}
  type: Daily
  startTime: "08:00"
  endTime: "18:00"
  timeZone: UTC
  minReplicas: 2
---
apiVersion: batch.almanac.dev/v1alpha1
kind: ScheduledJob
metadata: {name: export}
spec:
  schedule: "0 3 1 1 *"
  timeZone: UTC
  calendars:
    skip: [{name: holidays}]`+jobTemplate("echo export")+`
---
apiVersion: autoscaling.almanac.dev/v1alpha1
kind: ScheduledPodAutoscaler
metadata: {name: shop}
spec:
  targetRef: {apiVersion: autoscaling/v2, kind: HorizontalPodAutoscaler, name: shop}
  minReplicas: 1
  maxReplicas: 3
`)
	for _, u := range objs {
		u.SetNamespace(ns)
		if err := kube.Create(ctx, u); err != nil {
			t.Fatalf("create %s %s: %v", u.GetKind(), u.GetName(), err)
		}
		// The API server's answer is the object as stored: no controller has written its
		// status yet, and the CRD's default gives it observedGeneration 0.
		if got := kstatusOf(t, u); got.Status != status.InProgressStatus {
			t.Errorf("%s %s as created: kstatus %s (%q), want InProgress", u.GetKind(), u.GetName(), got.Status, got.Message)
		}
	}

	want := map[string]status.Status{
		"ScheduledJob/report":         status.CurrentStatus,
		"ScheduledPodAutoscaler/web":  status.CurrentStatus,
		"Schedule/web-business-hours": status.CurrentStatus,
		"ScheduledJob/export":         status.FailedStatus, // Calendar holidays does not exist
		"ScheduledPodAutoscaler/shop": status.FailedStatus, // HorizontalPodAutoscaler shop does not exist
	}
	for _, u := range objs {
		key := u.GetKind() + "/" + u.GetName()
		waitKstatus(t, u, want[key])
	}

	// The missing calendar appears: the ScheduledJob that names it is Current, with no edit.
	mustApply(t, ns, `
apiVersion: almanac.dev/v1alpha1
kind: Calendar
metadata: {name: holidays}
spec:
  days: [{date: "12-25", name: Christmas Day}]
`)
	waitKstatus(t, objs[3], status.CurrentStatus)

	// A spec edit: InProgress in the API server's answer, Current once almanac has seen it.
	report := objs[0]
	if err := kube.Get(ctx, client.ObjectKeyFromObject(report), report); err != nil {
		t.Fatal(err)
	}
	if err := unstructured.SetNestedField(report.Object, "0 4 1 1 *", "spec", "schedule"); err != nil {
		t.Fatal(err)
	}
	if err := kube.Update(ctx, report); err != nil {
		t.Fatal(err)
	}
	if got := kstatusOf(t, report); got.Status != status.InProgressStatus {
		t.Errorf("ScheduledJob report just edited (generation %d): kstatus %s (%q), want InProgress", report.GetGeneration(), got.Status, got.Message)
	}
	waitKstatus(t, report, status.CurrentStatus)
}

// waitKstatus waits until kstatus says want about the live object u, once almanac has
// observed its generation, and logs what kstatus said.
func waitKstatus(t *testing.T, u *unstructured.Unstructured, want status.Status) {
	t.Helper()
	live := &unstructured.Unstructured{}
	live.SetGroupVersionKind(u.GroupVersionKind())
	var res *status.Result
	eventually(t, time.Minute, fmt.Sprintf("%s %s %s", u.GetKind(), u.GetName(), want), func() error {
		if err := kube.Get(context.Background(), client.ObjectKeyFromObject(u), live); err != nil {
			return err
		}
		res = kstatusOf(t, live)
		observed, _, _ := unstructured.NestedInt64(live.Object, "status", "observedGeneration")
		if observed != live.GetGeneration() || res.Status != want {
			return fmt.Errorf("generation %d, observed %d: kstatus %s (%q)", live.GetGeneration(), observed, res.Status, res.Message)
		}
		return nil
	})
	t.Logf("%s %s: kstatus %s: %s", u.GetKind(), u.GetName(), res.Status, res.Message)
}

func kstatusOf(t *testing.T, u *unstructured.Unstructured) *status.Result {
	t.Helper()
	res, err := status.Compute(u)
	if err != nil {
		t.Fatalf("kstatus of %s %s: %v", u.GetKind(), u.GetName(), err)
	}
	return res
}

// parseObjects reads a YAML stream of objects.
func parseObjects(t *testing.T, docs string) []*unstructured.Unstructured {
	t.Helper()
	var out []*unstructured.Unstructured
	for _, doc := range strings.Split(docs, "\n---\n") {
		u := &unstructured.Unstructured{}
		if err := yaml.Unmarshal([]byte(doc), &u.Object); err != nil {
			t.Fatalf("%v in\n%s", err, doc)
		}
		out = append(out, u)
	}
	return out
}
