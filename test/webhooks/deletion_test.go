package webhooks_test

import (
	"context"
	"testing"
	"time"

	"github.com/google/go-cmp/cmp"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"
	"sigs.k8s.io/controller-runtime/pkg/client"
)

// TestObjectsBeingDeletedAreNotChecked shows, for each kind, that neither webhook stands
// between an object being deleted and its removal: an update of a terminating object is
// admitted unchanged even when it would be refused otherwise (here: a change that the
// validating webhook rejects, left un-normalized because the mutating webhook skips it too),
// and removing the last finalizer removes the object.
func TestObjectsBeingDeletedAreNotChecked(t *testing.T) {
	ns := newNamespace(t)
	tests := []struct {
		name     string
		manifest string
		// path and value of a change that the webhooks reject on a live object
		path  []string
		value any
	}{{
		name: "Schedule",
		manifest: `
apiVersion: autoscaling.almanac.dev/v1alpha1
kind: Schedule
metadata: {name: leaving, finalizers: [example.com/keep]}
spec: {scaleTargetRef: {name: web}, minReplicas: 2, type: Daily, startTime: "09:00", endTime: "17:00"}`,
		path: []string{"spec", "timeZone"}, value: "mars/olympus",
	}, {
		name: "ScheduledJob",
		manifest: `
apiVersion: batch.almanac.dev/v1alpha1
kind: ScheduledJob
metadata: {name: leaving, finalizers: [example.com/keep]}
spec:
  schedule: "@daily"` + jobTemplate,
		path: []string{"spec", "schedule"}, value: "TZ=",
	}, {
		name: "EventJob",
		manifest: `
apiVersion: batch.almanac.dev/v1alpha1
kind: EventJob
metadata: {name: leaving, finalizers: [example.com/keep]}
spec:
  trigger: {kind: CronJob, name: backup}` + jobTemplate,
		path: []string{"spec", "trigger"}, value: map[string]any{"kind": "EventJob", "name": "leaving", "type": "Complete"},
	}, {
		name: "ScheduledPodAutoscaler",
		manifest: `
apiVersion: autoscaling.almanac.dev/v1alpha1
kind: ScheduledPodAutoscaler
metadata: {name: leaving, finalizers: [example.com/keep]}
spec: {horizontalPodAutoscalerSpec: {scaleTargetRef: {kind: Deployment, name: web}, maxReplicas: 5}}`,
		path:  []string{"spec", "horizontalPodAutoscalerSpec", "metrics"},
		value: []any{map[string]any{"type": "Resource", "resource": map[string]any{"name": "cpu", "target": map[string]any{"type": "Utilization"}}}},
	}}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			ctx := context.Background()
			c, warnings := newClient(t)
			obj := mustCreate(t, ns, tt.manifest)

			// The change is refused while the object is live.
			live := obj.DeepCopy()
			if err := unstructured.SetNestedField(live.Object, tt.value, tt.path...); err != nil {
				t.Fatal(err)
			}
			if err := c.Update(ctx, live); err == nil {
				t.Fatalf("the webhooks admitted the change on a live %s", tt.name)
			}

			if err := c.Delete(ctx, obj); err != nil {
				t.Fatal(err)
			}
			terminating := waitTerminating(t, obj)
			if err := unstructured.SetNestedField(terminating.Object, tt.value, tt.path...); err != nil {
				t.Fatal(err)
			}
			warnings.take()
			if err := c.Update(ctx, terminating); err != nil {
				t.Fatalf("an update of a %s being deleted: %v", tt.name, err)
			}
			if got := warnings.take(); len(got) != 0 {
				t.Errorf("warnings for an object being deleted: %q", got)
			}
			stored, _, _ := unstructured.NestedFieldNoCopy(terminating.Object, tt.path...)
			if diff := cmp.Diff(tt.value, stored); diff != "" {
				t.Errorf("the mutating webhook changed an object being deleted (-sent +stored):\n%s", diff)
			}

			terminating.SetFinalizers(nil)
			if err := c.Update(ctx, terminating); err != nil {
				t.Fatalf("removing the finalizer of a %s being deleted: %v", tt.name, err)
			}
			assertNotFound(t, obj)
		})
	}
}

// waitTerminating reads obj until the API server has set its deletionTimestamp.
func waitTerminating(t *testing.T, obj *unstructured.Unstructured) *unstructured.Unstructured {
	t.Helper()
	got := &unstructured.Unstructured{}
	got.SetGroupVersionKind(obj.GroupVersionKind())
	deadline := time.Now().Add(30 * time.Second)
	for time.Now().Before(deadline) {
		if err := env.Client.Get(context.Background(), client.ObjectKeyFromObject(obj), got); err == nil && got.GetDeletionTimestamp() != nil {
			return got
		}
		time.Sleep(20 * time.Millisecond)
	}
	t.Fatalf("%s %s did not become terminating", obj.GetKind(), obj.GetName())
	return nil
}

// TestRatchetingScheduledJob checks that a one-shot ScheduledJob whose starting deadline
// passed after it was created can still be labelled, suspended and have its finalizer
// removed, while moving its time into the past is refused.
func TestRatchetingScheduledJob(t *testing.T) {
	ns := newNamespace(t)
	obj := mustCreate(t, ns, `
apiVersion: batch.almanac.dev/v1alpha1
kind: ScheduledJob
metadata: {name: once, finalizers: [example.com/keep]}
spec:
  at: "2027-01-15T13:00"`+jobTemplate)
	setClock(t, now.Add(3*time.Hour))
	c, warnings := newClient(t)
	ctx := context.Background()

	obj.SetLabels(map[string]string{"team": "batch"})
	if err := unstructured.SetNestedField(obj.Object, true, "spec", "suspend"); err != nil {
		t.Fatal(err)
	}
	if err := c.Update(ctx, obj); err != nil {
		t.Fatalf("a label and suspend on an aged ScheduledJob: %v", err)
	}
	wantWarnings := []string{"spec.at: the run was due at 2027-01-15 13:00 UTC and its starting deadline has passed: " +
		"this ScheduledJob will not run again; delete it when it is no longer needed"}
	if diff := cmp.Diff(wantWarnings, warnings.take()); diff != "" {
		t.Errorf("warnings (-want +got):\n%s", diff)
	}

	changed := obj.DeepCopy()
	if err := unstructured.SetNestedField(changed.Object, "2027-01-15T14:00", "spec", "at"); err != nil {
		t.Fatal(err)
	}
	err := c.Update(ctx, changed)
	if cs := causes(t, err); len(cs) != 1 || cs[0].Field != "spec.at" || cs[0].Type != metav1.CauseTypeFieldValueInvalid {
		t.Errorf("a change of at into the past: causes %+v", cs)
	}

	if err := c.Delete(ctx, obj); err != nil {
		t.Fatal(err)
	}
	terminating := waitTerminating(t, obj)
	terminating.SetFinalizers(nil)
	if err := c.Update(ctx, terminating); err != nil {
		t.Fatalf("removing the finalizer of an aged ScheduledJob being deleted: %v", err)
	}
	assertNotFound(t, obj)
}
