package install

import (
	"context"
	"errors"
	"fmt"
	"slices"
	"strings"
	"testing"
	"time"

	admissionregistrationv1 "k8s.io/api/admissionregistration/v1"
	corev1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/types"
	"k8s.io/utils/ptr"
	"sigs.k8s.io/controller-runtime/pkg/client"

	autoscalingv1alpha1 "github.com/almanac-dev/almanac/api/autoscaling/v1alpha1"
	batchv1alpha1 "github.com/almanac-dev/almanac/api/batch/v1alpha1"
	"github.com/almanac-dev/almanac/commands/check"
	"github.com/almanac-dev/almanac/test/testenv"
)

// unansweredWebhooks installs config/webhook's configurations as the chart does (failurePolicy
// Fail, match.Conditions), named id and pointed at a port where nothing answers: what
// the API server meets while the manager is scaled to 0, as `almanac release --stop-manager`
// leaves it during an uninstall. It returns once they are in the path (an update of a label of
// probe, one of almanac's objects, is refused for want of an answer), and removes them when
// the test ends, waiting until such an update passes again.
func unansweredWebhooks(t *testing.T, id string, probe client.Object) {
	t.Helper()
	ctx := context.Background()
	if n, err := testenv.InstallWebhookConfigurations(ctx, env.Client, testenv.RepoRoot(), id, freePort(t)); err != nil || n == 0 {
		t.Fatalf("installing config/webhook's configurations: %d webhooks, %v", n, err)
	}
	touch := func() error {
		patch := fmt.Sprintf(`{"metadata":{"labels":{"touched":%q}}}`, time.Now().Format("150405.000000"))
		return env.Client.Patch(ctx, probe.DeepCopyObject().(client.Object), client.RawPatch(types.MergePatchType, []byte(patch)))
	}
	t.Cleanup(func() {
		_ = env.Client.Delete(ctx, &admissionregistrationv1.MutatingWebhookConfiguration{ObjectMeta: metav1.ObjectMeta{Name: id}})
		_ = env.Client.Delete(ctx, &admissionregistrationv1.ValidatingWebhookConfiguration{ObjectMeta: metav1.ObjectMeta{Name: id}})
		eventually(t, 30*time.Second, "almanac's webhooks out of the path again", touch)
	})
	// The API server's view of new webhook configurations lags their creation briefly.
	eventually(t, 30*time.Second, "almanac's webhooks in the path, unanswered", func() error {
		switch err := touch(); {
		case err == nil:
			return errors.New("a label update was admitted, want a failed webhook call")
		case !strings.Contains(err.Error(), "failed calling webhook"):
			return fmt.Errorf("a label update = %w, want a failed webhook call", err)
		}
		return nil
	})
}

// TestOnlyFinalizerRemovalsSkipTheWebhooks: while almanac's webhooks are in the path and no
// replica answers them (the manager scaled to 0), an update that only removes finalizers is
// not sent to them (match.Conditions) and is admitted, by a JSON patch as `almanac
// release` sends it and by a whole-object update as controllers send it; every update that
// changes anything else with it (the spec, a label, a ScheduledJob's run-now token, an added
// finalizer) is sent to them and refused. So nobody skips admission by removing a finalizer:
// admission has nothing to say about that alone. Issue 38, item 1: the release finalizer's
// removal was refused once the manager was stopped, and `helm uninstall` aborted.
func TestOnlyFinalizerRemovalsSkipTheWebhooks(t *testing.T) {
	ctx := context.Background()
	c := env.Client
	const ns = "webhooks-down"
	if err := c.Create(ctx, &corev1.Namespace{ObjectMeta: metav1.ObjectMeta{Name: ns}}); err != nil {
		t.Fatal(err)
	}
	ref := autoscalingv1alpha1.TargetReference{APIVersion: "autoscaling/v2", Kind: "HorizontalPodAutoscaler", Name: "web"}
	spa := &autoscalingv1alpha1.ScheduledPodAutoscaler{
		ObjectMeta: metav1.ObjectMeta{Namespace: ns, Name: "web", Finalizers: []string{autoscalingv1alpha1.ReleaseFinalizer, "example.com/keep", "example.com/last"}},
		Spec:       autoscalingv1alpha1.ScheduledPodAutoscalerSpec{TargetRef: &ref, MinReplicas: ptr.To[int32](2), MaxReplicas: ptr.To[int32](5)},
	}
	sj := check.ProbeObject(ns)
	sj.GenerateName, sj.Name, sj.Finalizers = "", "nightly", []string{"example.com/keep"}
	for _, o := range []client.Object{spa, sj} {
		if err := c.Create(ctx, o); err != nil {
			t.Fatal(err)
		}
	}
	t.Cleanup(func() {
		for _, o := range []client.Object{spa, sj} {
			_ = c.Patch(ctx, o, client.RawPatch(types.MergePatchType, []byte(`{"metadata":{"finalizers":null}}`)))
			_ = c.Delete(ctx, o)
		}
	})
	unansweredWebhooks(t, "webhooks-down", sj)

	patch := func(obj client.Object, ops string) error {
		return c.Patch(ctx, obj.DeepCopyObject().(client.Object), client.RawPatch(types.JSONPatchType, []byte(ops)))
	}
	removeFirst := `{"op":"test","path":"/metadata/finalizers/0","value":"` + autoscalingv1alpha1.ReleaseFinalizer + `"},{"op":"remove","path":"/metadata/finalizers/0"}`
	for _, tc := range []struct {
		what string
		obj  client.Object
		ops  string
	}{
		{"the release finalizer removed and spec.minReplicas changed", spa, `[` + removeFirst + `,{"op":"replace","path":"/spec/minReplicas","value":7}]`},
		{"the release finalizer removed and a label added", spa, `[` + removeFirst + `,{"op":"add","path":"/metadata/labels","value":{"team":"a"}}]`},
		{"the release finalizer removed and an annotation added", spa, `[` + removeFirst + `,{"op":"add","path":"/metadata/annotations","value":{"team":"a"}}]`},
		{"a finalizer added", spa, `[{"op":"add","path":"/metadata/finalizers/-","value":"example.com/more"}]`},
		{"a finalizer swapped for another", spa, `[{"op":"replace","path":"/metadata/finalizers/1","value":"example.com/other"}]`},
		{"a ScheduledJob's finalizer removed with a run-now token", sj,
			`[{"op":"remove","path":"/metadata/finalizers/0"},{"op":"add","path":"/metadata/annotations","value":{"` + batchv1alpha1.AnnotationRunNow + `":"t1"}}]`},
	} {
		if err := patch(tc.obj, tc.ops); err == nil || !strings.Contains(err.Error(), "failed calling webhook") {
			t.Errorf("%s while no replica answers: %v, want it sent to the webhooks (failed calling webhook)", tc.what, err)
		}
	}

	// What almanac release sends: the release finalizer's removal, tested at its index.
	removal, _ := autoscalingv1alpha1.ReleaseFinalizerRemoval(spa.Finalizers)
	if err := patch(spa, string(removal)); err != nil {
		t.Fatalf("removing the release finalizer while no replica answers: %v, want it admitted", err)
	}
	// A controller's whole-object update that removes a finalizer.
	latest := &autoscalingv1alpha1.ScheduledPodAutoscaler{}
	if err := c.Get(ctx, client.ObjectKeyFromObject(spa), latest); err != nil {
		t.Fatal(err)
	}
	latest.Finalizers = slices.DeleteFunc(latest.Finalizers, func(f string) bool { return f == "example.com/keep" })
	if err := c.Update(ctx, latest); err != nil {
		t.Fatalf("an update that removes a finalizer while no replica answers: %v, want it admitted", err)
	}
	// The last one, by a merge patch that drops the list.
	if err := c.Patch(ctx, latest, client.RawPatch(types.MergePatchType, []byte(`{"metadata":{"finalizers":null}}`))); err != nil {
		t.Fatalf("removing the last finalizer while no replica answers: %v, want it admitted", err)
	}
	if err := c.Get(ctx, client.ObjectKeyFromObject(spa), latest); err != nil || len(latest.Finalizers) != 0 || ptr.Deref(latest.Spec.MinReplicas, 0) != 2 || len(latest.Labels) != 0 {
		t.Errorf("the autoscaler is %+v (%v), want no finalizer and nothing else changed", latest.ObjectMeta, err)
	}
	if err := c.Get(ctx, client.ObjectKeyFromObject(sj), sj); err != nil {
		t.Fatal(err)
	}
	if err := patch(sj, `[{"op":"remove","path":"/metadata/finalizers/0"}]`); err != nil {
		t.Errorf("removing a ScheduledJob's finalizer while no replica answers: %v, want it admitted", err)
	}
}
