package scaling_test

import (
	"context"
	"fmt"
	"slices"
	"strings"
	"sync/atomic"
	"testing"
	"time"

	appsv1 "k8s.io/api/apps/v1"
	autoscalingv2 "k8s.io/api/autoscaling/v2"
	corev1 "k8s.io/api/core/v1"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	"k8s.io/apimachinery/pkg/api/meta"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"
	"k8s.io/utils/ptr"
	"sigs.k8s.io/controller-runtime/pkg/client"

	autoscalingv1alpha1 "github.com/almanac-dev/almanac/api/autoscaling/v1alpha1"
	"github.com/almanac-dev/almanac/api/index"
)

// attached is a ScheduledPodAutoscaler attached to an existing object.
func attached(ns, name string, ref autoscalingv1alpha1.TargetReference, minReplicas int32, maxReplicas *int32) *autoscalingv1alpha1.ScheduledPodAutoscaler {
	return &autoscalingv1alpha1.ScheduledPodAutoscaler{
		ObjectMeta: metav1.ObjectMeta{Namespace: ns, Name: name},
		Spec: autoscalingv1alpha1.ScheduledPodAutoscalerSpec{
			TargetRef:     &ref,
			MinReplicas:   ptr.To(minReplicas),
			MaxReplicas:   maxReplicas,
			OverlapPolicy: autoscalingv1alpha1.OverlapPolicyMax,
		},
	}
}

// userHPA is an HPA that someone else (manager "helm") created, as a chart would.
func userHPA(t testing.TB, ns, name string, minReplicas, maxReplicas int32) {
	t.Helper()
	hpa := &autoscalingv2.HorizontalPodAutoscaler{
		ObjectMeta: metav1.ObjectMeta{Namespace: ns, Name: name, Labels: map[string]string{"app.kubernetes.io/managed-by": "Helm"}},
		Spec: autoscalingv2.HorizontalPodAutoscalerSpec{
			ScaleTargetRef: autoscalingv2.CrossVersionObjectReference{APIVersion: "apps/v1", Kind: "Deployment", Name: name},
			MinReplicas:    ptr.To(minReplicas),
			MaxReplicas:    maxReplicas,
		},
	}
	if err := env.Client.Create(context.Background(), hpa, client.FieldOwner("helm")); err != nil {
		t.Fatal(err)
	}
}

// userDeployment is a Deployment with replicas, created by manager "kubectl".
func userDeployment(t testing.TB, ns, name string, replicas int32) {
	t.Helper()
	labels := map[string]string{"app": name}
	d := &appsv1.Deployment{
		ObjectMeta: metav1.ObjectMeta{Namespace: ns, Name: name},
		Spec: appsv1.DeploymentSpec{
			Replicas: ptr.To(replicas),
			Selector: &metav1.LabelSelector{MatchLabels: labels},
			Template: corev1.PodTemplateSpec{
				ObjectMeta: metav1.ObjectMeta{Labels: labels},
				Spec:       corev1.PodSpec{Containers: []corev1.Container{{Name: "app", Image: "busybox"}}},
			},
		},
	}
	if err := env.Client.Create(context.Background(), d, client.FieldOwner("kubectl")); err != nil {
		t.Fatal(err)
	}
}

// userScaledObject is a KEDA ScaledObject (KEDA's own CRD; no KEDA operator runs here).
func userScaledObject(t testing.TB, ns, name string, minReplicas, maxReplicas int64) {
	t.Helper()
	so := &unstructured.Unstructured{Object: map[string]any{
		"apiVersion": "keda.sh/v1alpha1",
		"kind":       "ScaledObject",
		"metadata":   map[string]any{"namespace": ns, "name": name},
		"spec": map[string]any{
			"scaleTargetRef":  map[string]any{"name": name},
			"minReplicaCount": minReplicas,
			"maxReplicaCount": maxReplicas,
			"triggers":        []any{map[string]any{"type": "cpu", "metricType": "Utilization", "metadata": map[string]any{"value": "60"}}},
		},
	}}
	if err := env.Client.Create(context.Background(), so, client.FieldOwner("argocd-controller")); err != nil {
		t.Fatal(err)
	}
}

func getUnstructured(ns, apiVersion, kind, name string) (*unstructured.Unstructured, error) {
	u := &unstructured.Unstructured{}
	u.SetAPIVersion(apiVersion)
	u.SetKind(kind)
	err := env.Client.Get(context.Background(), client.ObjectKey{Namespace: ns, Name: name}, u)
	return u, err
}

// targetHas is a condition for eventually: the target's fields at minPath and maxPath (max
// nil: not checked) have the values.
func targetHas(ns string, ref autoscalingv1alpha1.TargetReference, minPath []string, minWant int64, maxPath []string, maxWant int64) func() error {
	return func() error {
		u, err := getUnstructured(ns, ref.APIVersion, ref.Kind, ref.Name)
		if err != nil {
			return err
		}
		got, ok, _ := unstructured.NestedInt64(u.Object, minPath...)
		if !ok || got != minWant {
			return fmt.Errorf("%s: %s = %d (set %v), want %d", ref, strings.Join(minPath, "."), got, ok, minWant)
		}
		if maxPath != nil {
			if got, ok, _ := unstructured.NestedInt64(u.Object, maxPath...); !ok || got != maxWant {
				return fmt.Errorf("%s: %s = %d (set %v), want %d", ref, strings.Join(maxPath, "."), got, ok, maxWant)
			}
		}
		return nil
	}
}

// almanacManages returns the managedFields entries of almanac on the object.
func almanacManages(ns string, ref autoscalingv1alpha1.TargetReference) ([]metav1.ManagedFieldsEntry, error) {
	u, err := getUnstructured(ns, ref.APIVersion, ref.Kind, ref.Name)
	if err != nil {
		return nil, err
	}
	return slices.DeleteFunc(u.GetManagedFields(), func(e metav1.ManagedFieldsEntry) bool { return e.Manager != index.FieldManager }), nil
}

// TestAttachedTargetsFollowTheWindows: an autoscaler attached to an HPA that Helm created, one
// attached to a KEDA ScaledObject and one attached to a Deployment without autoscaler (to 0
// outside the window) each follow a window at its boundaries, and almanac owns only the
// fields that carry the bounds.
func TestAttachedTargetsFollowTheWindows(t *testing.T) {
	t.Parallel()
	ns := newNamespace(t)
	open := time.Date(2030, 1, 7, 10, 0, 0, 0, time.UTC)
	closing := open.Add(time.Minute)
	clk := newOffsetClock(open.Add(-8 * time.Second))

	hpaRef := autoscalingv1alpha1.TargetReference{APIVersion: "autoscaling/v2", Kind: "HorizontalPodAutoscaler", Name: "api"}
	soRef := autoscalingv1alpha1.TargetReference{APIVersion: "keda.sh/v1alpha1", Kind: "ScaledObject", Name: "worker"}
	depRef := autoscalingv1alpha1.TargetReference{APIVersion: "apps/v1", Kind: "Deployment", Name: "batch"}
	userHPA(t, ns, "api", 1, 4)
	userScaledObject(t, ns, "worker", 1, 4)
	userDeployment(t, ns, "batch", 3)
	create(t,
		attached(ns, "api", hpaRef, 2, ptr.To[int32](10)),
		attached(ns, "worker", soRef, 0, ptr.To[int32](10)),
		attached(ns, "batch", depRef, 0, nil),
		oneShot(ns, "api-launch", "api", open, closing, 5, 20),
		oneShot(ns, "worker-launch", "worker", open, closing, 3, 30),
		oneShot(ns, "batch-launch", "batch", open, closing, 4, 4),
	)
	startManager(t, clk, ns)

	hpaMin, hpaMax := []string{"spec", "minReplicas"}, []string{"spec", "maxReplicas"}
	soMin, soMax := []string{"spec", "minReplicaCount"}, []string{"spec", "maxReplicaCount"}
	replicas := []string{"spec", "replicas"}
	check := func(when string, hpaB, soB [2]int64, dep int64) {
		t.Helper()
		for _, c := range []func() error{
			targetHas(ns, hpaRef, hpaMin, hpaB[0], hpaMax, hpaB[1]),
			targetHas(ns, soRef, soMin, soB[0], soMax, soB[1]),
			targetHas(ns, depRef, replicas, dep, nil, 0),
		} {
			eventually(t, 5*time.Second, func() error {
				if err := c(); err != nil {
					return fmt.Errorf("%s: %w", when, err)
				}
				return nil
			})
		}
	}
	check("before the window", [2]int64{2, 10}, [2]int64{0, 10}, 0)
	clk.sleepUntil(open.Add(boundaryTolerance))
	check("in the window", [2]int64{5, 20}, [2]int64{3, 30}, 4)
	clk.sleepUntil(closing.Add(boundaryTolerance))
	check("after the window", [2]int64{2, 10}, [2]int64{0, 10}, 0)

	// almanac owns the bounds and nothing else; the other fields stay with their owners.
	hpa, err := getHPA(ns, "api")
	if err != nil {
		t.Fatal(err)
	}
	if len(hpa.OwnerReferences) != 0 || hpa.Labels["app.kubernetes.io/managed-by"] != "Helm" || hpa.Spec.ScaleTargetRef.Name != "api" {
		t.Errorf("attached HPA = %+v, want Helm's HPA with no owner reference", hpa.ObjectMeta)
	}
	for _, ref := range []autoscalingv1alpha1.TargetReference{hpaRef, soRef} {
		entries, err := almanacManages(ns, ref)
		if err != nil {
			t.Fatal(err)
		}
		if len(entries) != 1 || entries[0].Operation != metav1.ManagedFieldsOperationApply {
			t.Fatalf("%s: almanac's managedFields = %+v, want one apply entry", ref, entries)
		}
		fields := entries[0].FieldsV1.GetRawString()
		if strings.Contains(fields, "scaleTargetRef") || strings.Contains(fields, "triggers") || !strings.Contains(fields, "Replica") {
			t.Errorf("%s: almanac owns %s, want only the bounds", ref, fields)
		}
	}
	spa := &autoscalingv1alpha1.ScheduledPodAutoscaler{}
	if err := env.Client.Get(context.Background(), client.ObjectKey{Namespace: ns, Name: "batch"}, spa); err != nil {
		t.Fatal(err)
	}
	if spa.Status.Target == nil || *spa.Status.Target != depRef || !slices.Contains(spa.Finalizers, autoscalingv1alpha1.ReleaseFinalizer) {
		t.Errorf("status.target = %v, finalizers %v, want %s and the release finalizer", spa.Status.Target, spa.Finalizers, depRef)
	}
	if c := meta.FindStatusCondition(spa.Status.Conditions, autoscalingv1alpha1.ConditionReady); c == nil || c.Status != metav1.ConditionTrue || !strings.Contains(c.Message, "Deployment batch") {
		t.Errorf("Ready = %+v, want True naming Deployment batch", c)
	}
}

// helmSetsMin writes minReplicas of HPA name as field manager "helm", as a Helm upgrade that
// renders the field does.
func helmSetsMin(t testing.TB, ns, name string, minReplicas int32) {
	t.Helper()
	hpa, err := getHPA(ns, name)
	if err != nil {
		t.Fatal(err)
	}
	patch := client.MergeFrom(hpa.DeepCopy())
	hpa.Spec.MinReplicas = ptr.To(minReplicas)
	if err := env.Client.Patch(context.Background(), hpa, patch, client.FieldOwner("helm")); err != nil {
		t.Fatal(err)
	}
}

// fightUntilConflict attaches autoscaler "api" (baseline 3-9) to an HPA that Helm created
// (1-4), in a namespace of its own with a manager, and has Helm set minReplicas, and almanac
// put it back, until the fight rule stops almanac: it returns the namespace and the autoscaler
// with the Conflict condition True.
func fightUntilConflict(t testing.TB) (string, *autoscalingv1alpha1.ScheduledPodAutoscaler) {
	t.Helper()
	ns := newNamespace(t)
	clk := newOffsetClock(time.Date(2030, 1, 7, 10, 0, 0, 0, time.UTC))
	ref := autoscalingv1alpha1.TargetReference{APIVersion: "autoscaling/v2", Kind: "HorizontalPodAutoscaler", Name: "api"}
	userHPA(t, ns, "api", 1, 4)
	create(t, attached(ns, "api", ref, 3, ptr.To[int32](9)))
	startManager(t, clk, ns)
	eventually(t, 10*time.Second, hasBounds(ns, "api", 3, 9))
	for i := range autoscalingv1alpha1.MaxPutBacks {
		helmSetsMin(t, ns, "api", int32(1+i%2))
		eventually(t, 10*time.Second, hasBounds(ns, "api", 3, 9))
	}
	// One more: a fight.
	helmSetsMin(t, ns, "api", 1)
	spa := &autoscalingv1alpha1.ScheduledPodAutoscaler{}
	eventually(t, 10*time.Second, func() error {
		if err := env.Client.Get(context.Background(), client.ObjectKey{Namespace: ns, Name: "api"}, spa); err != nil {
			return err
		}
		c := meta.FindStatusCondition(spa.Status.Conditions, autoscalingv1alpha1.ConditionConflict)
		if c == nil || c.Status != metav1.ConditionTrue || !strings.Contains(c.Message, `"helm"`) || !strings.Contains(c.Message, "spec.minReplicas") || !strings.Contains(c.Message, "ignoreDifferences") {
			return fmt.Errorf("Conflict = %+v, want True naming helm, spec.minReplicas and ignoreDifferences", c)
		}
		return nil
	})
	return ns, spa
}

// TestAnotherManagersWriteIsPutBackUntilTheyFight: a Helm upgrade that sets an attached HPA's
// minReplicas back is undone, with an event naming Helm; when it keeps happening almanac stops
// and says so in the Conflict condition, and a change of the spec resumes.
func TestAnotherManagersWriteIsPutBackUntilTheyFight(t *testing.T) {
	t.Parallel()
	ns := newNamespace(t)
	clk := newOffsetClock(time.Date(2030, 1, 7, 10, 0, 0, 0, time.UTC))
	ref := autoscalingv1alpha1.TargetReference{APIVersion: "autoscaling/v2", Kind: "HorizontalPodAutoscaler", Name: "api"}
	userHPA(t, ns, "api", 1, 4)
	create(t, attached(ns, "api", ref, 3, ptr.To[int32](9)))
	reconciles := startCountedManager(t, clk, ns)
	eventually(t, 10*time.Second, hasBounds(ns, "api", 3, 9))

	helmUpgrade := func(minReplicas int32) {
		t.Helper()
		hpa, err := getHPA(ns, "api")
		if err != nil {
			t.Fatal(err)
		}
		patch := client.MergeFrom(hpa.DeepCopy())
		hpa.Spec.MinReplicas = ptr.To(minReplicas)
		if err := env.Client.Patch(context.Background(), hpa, patch, client.FieldOwner("helm")); err != nil {
			t.Fatal(err)
		}
	}
	for i := range autoscalingv1alpha1.MaxPutBacks {
		helmUpgrade(int32(1 + i%2))
		eventually(t, 10*time.Second, hasBounds(ns, "api", 3, 9))
	}
	eventually(t, 5*time.Second, func() error {
		for _, m := range eventMessages(t, ns, "api") {
			if strings.Contains(m, `field manager "helm" changed spec.minReplicas`) {
				return nil
			}
		}
		return fmt.Errorf("no event names helm: %q", eventMessages(t, ns, "api"))
	})

	// One more: a fight. almanac leaves Helm's value and says what to configure. The fence:
	// Helm's write brings a reconcile; once it is over, and the controller idle, the value is
	// still Helm's.
	reconciles.Fence(t, "scheduledpodautoscaler", client.ObjectKey{Namespace: ns, Name: "api"}, func() { helmUpgrade(1) })
	spa := &autoscalingv1alpha1.ScheduledPodAutoscaler{}
	eventually(t, 10*time.Second, func() error {
		if err := env.Client.Get(context.Background(), client.ObjectKey{Namespace: ns, Name: "api"}, spa); err != nil {
			return err
		}
		c := meta.FindStatusCondition(spa.Status.Conditions, autoscalingv1alpha1.ConditionConflict)
		if c == nil || c.Status != metav1.ConditionTrue || !strings.Contains(c.Message, `"helm"`) || !strings.Contains(c.Message, "spec.minReplicas") || !strings.Contains(c.Message, "ignoreDifferences") {
			return fmt.Errorf("Conflict = %+v, want True naming helm, spec.minReplicas and ignoreDifferences", c)
		}
		return nil
	})
	reconciles.WaitIdle(t, "scheduledpodautoscaler")
	if err := hasBounds(ns, "api", 1, 9)(); err != nil {
		t.Errorf("during the conflict: %v, want Helm's value left alone", err)
	}

	// A change of the spec resumes.
	patch := client.MergeFrom(spa.DeepCopy())
	spa.Spec.MinReplicas = ptr.To[int32](4)
	if err := env.Client.Patch(context.Background(), spa, patch); err != nil {
		t.Fatal(err)
	}
	eventually(t, 10*time.Second, hasBounds(ns, "api", 4, 9))
	eventually(t, 5*time.Second, func() error {
		if err := env.Client.Get(context.Background(), client.ObjectKey{Namespace: ns, Name: "api"}, spa); err != nil {
			return err
		}
		if c := meta.FindStatusCondition(spa.Status.Conditions, autoscalingv1alpha1.ConditionConflict); c != nil {
			return fmt.Errorf("Conflict = %+v after the spec changed, want none", c)
		}
		return nil
	})
}

// TestResumeAfterAConflictStartsTheCountAgain: the Conflict condition asks the user to stop
// the other manager and then change the autoscaler's spec to resume. A change that does not
// move the bounds (here overlapPolicy) resumes too: almanac puts its value back once, the
// condition goes, and the next write of the other manager is put back again rather than
// stopping almanac at once (the put-backs before the resume are not counted). Issue 38, item 4:
// the resume met the old put-backs and set Conflict again without writing the target.
func TestResumeAfterAConflictStartsTheCountAgain(t *testing.T) {
	t.Parallel()
	ctx := context.Background()
	ns, spa := fightUntilConflict(t)

	// The user resumes with a change of the spec that leaves the bounds as they are.
	patch := client.MergeFrom(spa.DeepCopy())
	spa.Spec.OverlapPolicy = autoscalingv1alpha1.OverlapPolicyForbid
	if err := env.Client.Patch(ctx, spa, patch); err != nil {
		t.Fatal(err)
	}
	resumed := spa.Generation
	// The reconcile of the new generation shows in status (the fence); then the condition must
	// be gone and almanac's value back.
	eventually(t, 10*time.Second, func() error {
		if err := env.Client.Get(ctx, client.ObjectKeyFromObject(spa), spa); err != nil {
			return err
		}
		if spa.Status.ObservedGeneration != resumed {
			return fmt.Errorf("observedGeneration %d, want %d", spa.Status.ObservedGeneration, resumed)
		}
		return nil
	})
	if c := meta.FindStatusCondition(spa.Status.Conditions, autoscalingv1alpha1.ConditionConflict); c != nil {
		t.Fatalf("after the resume (generation %d) Conflict = %s %s: %s; want none, and almanac's value put back", resumed, c.Status, c.Reason, c.Message)
	}
	eventually(t, 10*time.Second, hasBounds(ns, "api", 3, 9))

	// The count starts again: the next write of Helm is put back.
	helmSetsMin(t, ns, "api", 2)
	eventually(t, 10*time.Second, hasBounds(ns, "api", 3, 9))
	if err := env.Client.Get(ctx, client.ObjectKeyFromObject(spa), spa); err != nil {
		t.Fatal(err)
	}
	if c := meta.FindStatusCondition(spa.Status.Conditions, autoscalingv1alpha1.ConditionConflict); c != nil {
		t.Errorf("after one more write of Helm, Conflict = %+v, want none (one put-back since the resume)", c)
	}
}

// TestLettingGoLeavesTheBaseline: retargeting an autoscaler, and deleting it, leave each
// target at the baseline, with its bounds still set (minReplicas not removed) and owned by no
// almanac field manager, also while a window is open.
func TestLettingGoLeavesTheBaseline(t *testing.T) {
	t.Parallel()
	ns := newNamespace(t)
	open := time.Date(2030, 1, 7, 10, 0, 0, 0, time.UTC)
	clk := newOffsetClock(open.Add(30 * time.Second)) // inside the window
	first := autoscalingv1alpha1.TargetReference{APIVersion: "autoscaling/v2", Kind: "HorizontalPodAutoscaler", Name: "blue"}
	second := autoscalingv1alpha1.TargetReference{APIVersion: "apps/v1", Kind: "Deployment", Name: "green"}
	userHPA(t, ns, "blue", 1, 4)
	userDeployment(t, ns, "green", 1)
	create(t, attached(ns, "web", first, 2, ptr.To[int32](6)), oneShot(ns, "launch", "web", open, open.Add(time.Hour), 5, 8))
	startManager(t, clk, ns)
	eventually(t, 10*time.Second, hasBounds(ns, "blue", 5, 8))

	spa := &autoscalingv1alpha1.ScheduledPodAutoscaler{}
	if err := env.Client.Get(context.Background(), client.ObjectKey{Namespace: ns, Name: "web"}, spa); err != nil {
		t.Fatal(err)
	}
	patch := client.MergeFrom(spa.DeepCopy())
	spa.Spec.TargetRef = &second
	spa.Spec.MaxReplicas = nil
	if err := env.Client.Patch(context.Background(), spa, patch); err != nil {
		t.Fatal(err)
	}
	// The old target is at the (new) baseline and no longer almanac's; the new one follows the
	// window.
	eventually(t, 10*time.Second, targetHas(ns, second, []string{"spec", "replicas"}, 5, nil, 0))
	eventually(t, 10*time.Second, func() error {
		if err := hasBounds(ns, "blue", 2, 4)(); err != nil {
			// maxReplicas: the new spec has none; the old target keeps its last value of it.
			if err2 := hasBounds(ns, "blue", 2, 8)(); err2 != nil {
				return err
			}
		}
		entries, err := almanacManages(ns, first)
		if err != nil || len(entries) > 0 {
			return fmt.Errorf("almanac still manages %v of the old target (err %w)", entries, err)
		}
		return nil
	})

	if err := env.Client.Delete(context.Background(), spa); err != nil {
		t.Fatal(err)
	}
	eventually(t, 10*time.Second, func() error {
		err := env.Client.Get(context.Background(), client.ObjectKey{Namespace: ns, Name: "web"}, &autoscalingv1alpha1.ScheduledPodAutoscaler{})
		if err == nil {
			return fmt.Errorf("the ScheduledPodAutoscaler is still there")
		}
		return client.IgnoreNotFound(err)
	})
	if err := targetHas(ns, second, []string{"spec", "replicas"}, 2, nil, 0)(); err != nil {
		t.Errorf("after delete: %v, want the baseline", err)
	}
	if entries, err := almanacManages(ns, second); err != nil || len(entries) > 0 {
		t.Errorf("after delete almanac still manages %+v (err %v)", entries, err)
	}
	hpa, err := getHPA(ns, "blue")
	if err != nil || hpa.Spec.MinReplicas == nil {
		t.Errorf("the old HPA lost minReplicas: %+v (err %v)", hpa.Spec, err)
	}
}

// hiccupReader fails every read of the object named failing (none when empty) with 503, as an
// API server that is restarting or overloaded answers, and counts those failures.
type hiccupReader struct {
	client.Reader
	failing  atomic.Pointer[string]
	failures atomic.Int64
}

func (r *hiccupReader) Get(ctx context.Context, key client.ObjectKey, obj client.Object, opts ...client.GetOption) error {
	if name := r.failing.Load(); name != nil && *name == key.Name {
		r.failures.Add(1)
		return apierrors.NewServiceUnavailable("the test's API server hiccup")
	}
	return r.Reader.Get(ctx, key, obj, opts...)
}

// fail makes reads of name fail (name "": none) and returns the failures so far.
func (r *hiccupReader) fail(name string) int64 {
	r.failing.Store(&name)
	return r.failures.Load()
}

// TestLetGoDuringAnAPIHiccupKeepsTheTarget: retargeting an attached autoscaler, and deleting
// it, while its target cannot be read (503) lets go of nothing and says nothing was let go:
// status.target and the release finalizer stay, the target keeps the window's bounds, and the
// reconciler retries; once the target can be read, it is left at the baseline and owned by no
// almanac field manager, and only then does status.target move on or the autoscaler go.
// Issue 38, item 2: a let-go that could not read its target reported success, and left it at
// the scheduled peak, owned by almanac for good.
func TestLetGoDuringAnAPIHiccupKeepsTheTarget(t *testing.T) {
	t.Parallel()
	ctx := context.Background()
	ns := newNamespace(t)
	open := time.Date(2030, 1, 7, 10, 0, 0, 0, time.UTC)
	clk := newOffsetClock(open.Add(30 * time.Second)) // inside the window
	blue := autoscalingv1alpha1.TargetReference{APIVersion: "autoscaling/v2", Kind: "HorizontalPodAutoscaler", Name: "blue"}
	green := autoscalingv1alpha1.TargetReference{APIVersion: "apps/v1", Kind: "Deployment", Name: "green"}
	userHPA(t, ns, "blue", 1, 4)
	userDeployment(t, ns, "green", 1)
	create(t, attached(ns, "web", blue, 2, ptr.To[int32](6)), oneShot(ns, "launch", "web", open, open.Add(time.Hour), 5, 8))
	reader := &hiccupReader{}
	startManagerOpts(t, clk, managerOpts{wrapReader: func(r client.Reader) client.Reader { reader.Reader = r; return reader }}, ns)
	eventually(t, 10*time.Second, hasBounds(ns, "blue", 5, 8))

	spa := &autoscalingv1alpha1.ScheduledPodAutoscaler{}
	get := func() error { return env.Client.Get(ctx, client.ObjectKey{Namespace: ns, Name: "web"}, spa) }
	if err := get(); err != nil {
		t.Fatal(err)
	}
	stillAlmanacs := func(ref autoscalingv1alpha1.TargetReference, minPath []string, minWant int64, maxPath []string, maxWant int64) {
		t.Helper()
		if err := targetHas(ns, ref, minPath, minWant, maxPath, maxWant)(); err != nil {
			t.Errorf("during the hiccup: %v, want the window's value kept", err)
		}
		if entries, err := almanacManages(ns, ref); err != nil || len(entries) == 0 {
			t.Errorf("during the hiccup almanac no longer manages %s (err %v), want it still held", ref, err)
		}
	}

	// Retarget while blue cannot be read. The fence: the let-go was tried again (a retry comes
	// only after the first attempt failed), or status.target moved on.
	before := reader.fail("blue")
	patch := client.MergeFrom(spa.DeepCopy())
	spa.Spec.TargetRef = &green
	spa.Spec.MaxReplicas = nil
	if err := env.Client.Patch(ctx, spa, patch); err != nil {
		t.Fatal(err)
	}
	eventually(t, 10*time.Second, func() error {
		if err := get(); err != nil {
			return err
		}
		if n := reader.failures.Load() - before; n < 2 && (spa.Status.Target == nil || *spa.Status.Target == blue) {
			return fmt.Errorf("%d failed reads of blue, status.target %v", n, spa.Status.Target)
		}
		return nil
	})
	if spa.Status.Target == nil || *spa.Status.Target != blue {
		t.Errorf("during the hiccup status.target moved to %v: blue was never let go of", spa.Status.Target)
	}
	stillAlmanacs(blue, []string{"spec", "minReplicas"}, 5, []string{"spec", "maxReplicas"}, 8)

	// The API server answers again: blue at the new baseline (minReplicas 2, its maximum kept),
	// owned by no almanac field manager; green follows the window.
	reader.fail("")
	eventually(t, 10*time.Second, func() error {
		if err := get(); err != nil {
			return err
		}
		if spa.Status.Target == nil || *spa.Status.Target != green {
			return fmt.Errorf("status.target %v, want green", spa.Status.Target)
		}
		if err := hasBounds(ns, "blue", 2, 8)(); err != nil {
			return err
		}
		if entries, err := almanacManages(ns, blue); err != nil || len(entries) > 0 {
			return fmt.Errorf("almanac still manages %v of blue (err %w)", entries, err)
		}
		return targetHas(ns, green, []string{"spec", "replicas"}, 5, nil, 0)()
	})

	// Delete while green cannot be read: the autoscaler stays, with its finalizer, until it
	// can.
	before = reader.fail("green")
	if err := env.Client.Delete(ctx, spa); err != nil {
		t.Fatal(err)
	}
	gone := false
	eventually(t, 10*time.Second, func() error {
		err := get()
		if apierrors.IsNotFound(err) {
			gone = true
			return nil
		}
		if err != nil {
			return err
		}
		if n := reader.failures.Load() - before; n < 2 {
			return fmt.Errorf("%d failed reads of green", n)
		}
		return nil
	})
	if gone || !slices.Contains(spa.Finalizers, autoscalingv1alpha1.ReleaseFinalizer) {
		t.Fatalf("deleted during the hiccup, the autoscaler is gone (%v) or lost its finalizer (%v): green was never let go of", gone, spa.Finalizers)
	}
	stillAlmanacs(green, []string{"spec", "replicas"}, 5, nil, 0)

	reader.fail("")
	eventually(t, 10*time.Second, func() error {
		if err := get(); !apierrors.IsNotFound(err) {
			return fmt.Errorf("the autoscaler is still there (%w)", err)
		}
		return nil
	})
	if err := targetHas(ns, green, []string{"spec", "replicas"}, 2, nil, 0)(); err != nil {
		t.Errorf("after the delete: %v, want the baseline", err)
	}
	if entries, err := almanacManages(ns, green); err != nil || len(entries) > 0 {
		t.Errorf("after the delete almanac still manages %+v of green (err %v)", entries, err)
	}
}
