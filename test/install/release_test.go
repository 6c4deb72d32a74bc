package install

import (
	"bytes"
	"context"
	"errors"
	"path/filepath"
	"slices"
	"strings"
	"testing"
	"time"

	appsv1 "k8s.io/api/apps/v1"
	batchv1 "k8s.io/api/batch/v1"
	corev1 "k8s.io/api/core/v1"
	rbacv1 "k8s.io/api/rbac/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/types"
	"k8s.io/client-go/tools/clientcmd"
	"k8s.io/utils/ptr"
	"sigs.k8s.io/controller-runtime/pkg/client"

	autoscalingv1alpha1 "github.com/almanac-dev/almanac/api/autoscaling/v1alpha1"
	batchv1alpha1 "github.com/almanac-dev/almanac/api/batch/v1alpha1"
	"github.com/almanac-dev/almanac/commands/check"
	releasecmd "github.com/almanac-dev/almanac/commands/release"
)

// TestRelease runs `almanac release` as the chart's pre-delete hook does: it scales the
// manager's Deployment to 0 and waits until the Deployment's own Pods are gone (not for a
// hook's Pod that carries the same labels), then removes almanac's finalizer from every Job
// that carries it, in every namespace, and from nothing else; a second run changes nothing.
// With --namespace it touches only those namespaces. Issue 24.
func TestRelease(t *testing.T) {
	ctx := context.Background()
	c := env.Client
	for _, ns := range []string{"release-sys", "release-a", "release-b"} {
		if err := c.Create(ctx, &corev1.Namespace{ObjectMeta: metav1.ObjectMeta{Name: ns}}); err != nil {
			t.Fatal(err)
		}
	}
	labels := map[string]string{"app.kubernetes.io/name": "almanac", "app.kubernetes.io/instance": "almanac"}
	dep := &appsv1.Deployment{
		ObjectMeta: metav1.ObjectMeta{Namespace: "release-sys", Name: "almanac"},
		Spec: appsv1.DeploymentSpec{
			Replicas: ptr.To[int32](2),
			Selector: &metav1.LabelSelector{MatchLabels: labels},
			Template: corev1.PodTemplateSpec{
				ObjectMeta: metav1.ObjectMeta{Labels: labels},
				Spec:       corev1.PodSpec{Containers: []corev1.Container{{Name: "manager", Image: "almanac"}}},
			},
		},
	}
	if err := c.Create(ctx, dep); err != nil {
		t.Fatal(err)
	}
	pod := func(name, ownerKind string) *corev1.Pod {
		return &corev1.Pod{
			ObjectMeta: metav1.ObjectMeta{Namespace: "release-sys", Name: name, Labels: labels,
				OwnerReferences: []metav1.OwnerReference{{APIVersion: "apps/v1", Kind: ownerKind, Name: name, UID: types.UID("uid-" + ownerKind), Controller: ptr.To(true)}}},
			Spec: corev1.PodSpec{Containers: []corev1.Container{{Name: "c", Image: "almanac"}}},
		}
	}
	manager := pod("almanac-7d9f-x", "ReplicaSet")
	hook := pod("almanac-release-x", "Job") // the hook's own Pod: not waited for
	for _, p := range []*corev1.Pod{manager, hook} {
		if err := c.Create(ctx, p); err != nil {
			t.Fatal(err)
		}
	}
	job := func(ns, name string, finalizers ...string) *batchv1.Job {
		j := &batchv1.Job{
			ObjectMeta: metav1.ObjectMeta{Namespace: ns, Name: name, Finalizers: finalizers},
			Spec: batchv1.JobSpec{Template: corev1.PodTemplateSpec{Spec: corev1.PodSpec{
				RestartPolicy: corev1.RestartPolicyNever, Containers: []corev1.Container{{Name: "c", Image: "busybox"}},
			}}},
		}
		if err := c.Create(ctx, j); err != nil {
			t.Fatal(err)
		}
		return j
	}
	held := []*batchv1.Job{
		job("release-a", "nightly-29000000", batchv1alpha1.FinalizerOutcome),
		job("release-a", "shared", "example.com/keep", batchv1alpha1.FinalizerOutcome),
		job("release-b", "after-nightly-1a2b3c", batchv1alpha1.FinalizerOutcome),
	}
	other := job("release-b", "theirs", "example.com/keep")
	// A Job being deleted, held only by almanac's finalizer: released, it goes.
	deleting := job("release-b", "deleted-29000001", batchv1alpha1.FinalizerOutcome)
	if err := c.Delete(ctx, deleting, client.PropagationPolicy(metav1.DeletePropagationBackground)); err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() {
		for _, j := range append(held, other, deleting) {
			latest := &batchv1.Job{}
			if c.Get(ctx, client.ObjectKeyFromObject(j), latest) == nil {
				latest.Finalizers = nil
				_ = c.Update(ctx, latest)
			}
		}
	})

	// Only release-b, and the manager still has a Pod: the Pod's deletion is waited for.
	go func() {
		time.Sleep(2 * time.Second)
		_ = c.Delete(ctx, manager)
	}()
	var out bytes.Buffer
	opts := releasecmd.Options{Kubeconfig: env.KubeconfigPath, Namespaces: []string{"release-b"}, StopManager: "release-sys/almanac", Timeout: 30 * time.Second}
	start := time.Now()
	if err := releasecmd.Run(ctx, opts, &out); err != nil {
		t.Fatalf("almanac release: %v\n%s", err, out.String())
	}
	t.Logf("%s", out.String())
	if waited := time.Since(start); waited < 2*time.Second {
		t.Errorf("almanac release returned after %s, before the manager's Pod was gone", waited)
	}
	got := &appsv1.Deployment{}
	if err := c.Get(ctx, client.ObjectKeyFromObject(dep), got); err != nil || ptr.Deref(got.Spec.Replicas, -1) != 0 {
		t.Errorf("the manager's Deployment has replicas %v (%v), want 0", got.Spec.Replicas, err)
	}
	finalizers := func(j *batchv1.Job) ([]string, bool) {
		latest := &batchv1.Job{}
		if err := c.Get(ctx, client.ObjectKeyFromObject(j), latest); err != nil {
			return nil, false
		}
		return latest.Finalizers, true
	}
	if f, _ := finalizers(held[0]); !slices.Equal(f, []string{batchv1alpha1.FinalizerOutcome}) {
		t.Errorf("Job release-a/%s has %v: --namespace release-b released it", held[0].Name, f)
	}
	if f, _ := finalizers(held[2]); len(f) != 0 {
		t.Errorf("Job release-b/%s still has %v", held[2].Name, f)
	}
	if f, _ := finalizers(other); !slices.Equal(f, []string{"example.com/keep"}) {
		t.Errorf("Job release-b/theirs has %v, want its own finalizer kept", f)
	}
	eventually(t, 10*time.Second, "the deleted Job gone once released", func() error {
		if _, ok := finalizers(deleting); ok {
			return errors.New("still there")
		}
		return nil
	})
	if !strings.Contains(out.String(), "Stopped the manager") || !strings.Contains(out.String(), "Released 2 Jobs") {
		t.Errorf("output:\n%s", out.String())
	}

	// Every namespace, without touching the manager; then again: nothing left to do.
	for i, want := range []string{"Released 2 Jobs", "Released 0 Jobs"} {
		out.Reset()
		if err := releasecmd.Run(ctx, releasecmd.Options{Kubeconfig: env.KubeconfigPath, Timeout: 30 * time.Second}, &out); err != nil {
			t.Fatalf("run %d: %v\n%s", i, err, out.String())
		}
		if !strings.Contains(out.String(), want) {
			t.Errorf("run %d: output %q, want %q", i, out.String(), want)
		}
	}
	if f, _ := finalizers(held[1]); !slices.Equal(f, []string{"example.com/keep"}) {
		t.Errorf("Job release-a/shared has %v, want only example.com/keep left", f)
	}

	for _, bad := range []releasecmd.Options{
		{Kubeconfig: env.KubeconfigPath, StopManager: "almanac", Timeout: time.Second},
		{Kubeconfig: env.KubeconfigPath, Timeout: 0},
	} {
		err := releasecmd.Run(ctx, bad, &out)
		var re *releasecmd.Error
		if !errors.As(err, &re) || re.ExitCode() != 2 {
			t.Errorf("almanac release %+v = %v, want a usage error (exit 2)", bad, err)
		}
	}
}

// TestReleaseAutoscalers: `almanac release` lets go of the targets of every attached
// ScheduledPodAutoscaler as the reconciler does when one is deleted (an HPA raised in a window
// goes back to the baseline, a Deployment's scale to the baseline minReplicas; almanac's
// managedFields entries go, the fields stay), then removes autoscaling.almanac.dev/release-target,
// so that deleting the autoscaler completes; a second run changes nothing. almanac's webhooks
// are in the path and nothing answers them, as when the chart's hook has stopped the manager:
// the finalizer's removal does not need them (issue 38, item 1: it failed, and `helm
// uninstall` aborted with almanac at 0 replicas).
func TestReleaseAutoscalers(t *testing.T) {
	ctx := context.Background()
	c := env.Client
	a := newAttachedInWindow(t, c, "release-spa")
	for _, o := range a.objects() {
		if err := c.Create(ctx, o); err != nil {
			t.Fatal(err)
		}
	}
	a.hold(t, c)
	t.Cleanup(func() {
		for _, o := range append(a.objects(), a.job) {
			_ = c.Patch(ctx, o, client.RawPatch(types.MergePatchType, []byte(`{"metadata":{"finalizers":null}}`)))
		}
	})
	// almanac's webhooks in the path, unanswered, as the hook leaves them once it has stopped
	// the manager: removing the release finalizer must not need them (issue 38, item 1).
	probe := check.ProbeObject(a.ns)
	if err := c.Create(ctx, probe); err != nil {
		t.Fatal(err)
	}
	unansweredWebhooks(t, "release-spa", probe)

	var out bytes.Buffer
	if err := releasecmd.Run(ctx, releasecmd.Options{Kubeconfig: env.KubeconfigPath, Namespaces: []string{a.ns}, Timeout: 30 * time.Second}, &out); err != nil {
		t.Fatalf("almanac release: %v\n%s", err, out.String())
	}
	t.Logf("%s", out.String())
	if !strings.Contains(out.String(), "Released 2 ScheduledPodAutoscalers") {
		t.Errorf("output:\n%s", out.String())
	}
	a.check(t, c)

	// Again: nothing left to do.
	out.Reset()
	if err := releasecmd.Run(ctx, releasecmd.Options{Kubeconfig: env.KubeconfigPath, Namespaces: []string{a.ns}, Timeout: 30 * time.Second}, &out); err != nil {
		t.Fatalf("second run: %v\n%s", err, out.String())
	}
	if !strings.Contains(out.String(), "Released 0 ScheduledPodAutoscalers") {
		t.Errorf("second run: output %q", out.String())
	}
}

// TestReleaseThatFailsRestartsTheManager: when `almanac release --stop-manager` cannot release
// everything (here an autoscaler attached to a StatefulSet, which its user may not read), it
// exits 1 naming the autoscaler and the cause, and scales the manager's Deployment back to the
// replicas it had, so that the uninstall that Helm stops on the hook's failure leaves almanac
// working rather than installed with no replica (issue 38, item 1: no boundaries, no Jobs,
// every write to almanac's kinds refused). The autoscaler keeps its finalizer.
func TestReleaseThatFailsRestartsTheManager(t *testing.T) {
	ctx := context.Background()
	c := env.Client
	const sys, ns, user = "release-fail-sys", "release-fail", "release-limited"
	for _, n := range []string{sys, ns} {
		if err := c.Create(ctx, &corev1.Namespace{ObjectMeta: metav1.ObjectMeta{Name: n}}); err != nil {
			t.Fatal(err)
		}
	}
	labels := map[string]string{"app": "almanac"}
	template := corev1.PodTemplateSpec{
		ObjectMeta: metav1.ObjectMeta{Labels: labels},
		Spec:       corev1.PodSpec{Containers: []corev1.Container{{Name: "c", Image: "almanac"}}},
	}
	dep := &appsv1.Deployment{
		ObjectMeta: metav1.ObjectMeta{Namespace: sys, Name: "almanac"},
		Spec:       appsv1.DeploymentSpec{Replicas: ptr.To[int32](2), Selector: &metav1.LabelSelector{MatchLabels: labels}, Template: template},
	}
	db := &appsv1.StatefulSet{
		ObjectMeta: metav1.ObjectMeta{Namespace: ns, Name: "db"},
		Spec:       appsv1.StatefulSetSpec{Replicas: ptr.To[int32](1), Selector: &metav1.LabelSelector{MatchLabels: labels}, Template: template},
	}
	ref := autoscalingv1alpha1.TargetReference{APIVersion: "apps/v1", Kind: "StatefulSet", Name: "db"}
	spa := &autoscalingv1alpha1.ScheduledPodAutoscaler{
		ObjectMeta: metav1.ObjectMeta{Namespace: ns, Name: "db", Finalizers: []string{autoscalingv1alpha1.ReleaseFinalizer}},
		Spec:       autoscalingv1alpha1.ScheduledPodAutoscalerSpec{TargetRef: &ref, MinReplicas: ptr.To[int32](1)},
	}
	// What the release needs, but statefulsets.
	role := &rbacv1.ClusterRole{ObjectMeta: metav1.ObjectMeta{Name: user}, Rules: []rbacv1.PolicyRule{
		{APIGroups: []string{"apps"}, Resources: []string{"deployments"}, Verbs: []string{"get", "patch"}},
		{APIGroups: []string{""}, Resources: []string{"pods"}, Verbs: []string{"list"}},
		{APIGroups: []string{"batch"}, Resources: []string{"jobs"}, Verbs: []string{"list", "patch"}},
		{APIGroups: []string{autoscalingv1alpha1.GroupVersion.Group}, Resources: []string{"scheduledpodautoscalers"}, Verbs: []string{"list", "patch"}},
	}}
	binding := &rbacv1.ClusterRoleBinding{
		ObjectMeta: metav1.ObjectMeta{Name: user},
		RoleRef:    rbacv1.RoleRef{APIGroup: rbacv1.GroupName, Kind: "ClusterRole", Name: user},
		Subjects:   []rbacv1.Subject{{Kind: rbacv1.UserKind, APIGroup: rbacv1.GroupName, Name: user}},
	}
	for _, o := range []client.Object{dep, db, spa, role, binding} {
		if err := c.Create(ctx, o); err != nil {
			t.Fatal(err)
		}
	}
	t.Cleanup(func() {
		_ = c.Patch(ctx, spa, client.RawPatch(types.MergePatchType, []byte(`{"metadata":{"finalizers":null}}`)))
		_ = c.Delete(ctx, binding)
		_ = c.Delete(ctx, role)
	})
	cfg, err := clientcmd.LoadFromFile(env.KubeconfigPath)
	if err != nil {
		t.Fatal(err)
	}
	for _, a := range cfg.AuthInfos {
		a.Impersonate = user
	}
	kubeconfig := filepath.Join(t.TempDir(), "kubeconfig")
	if err := clientcmd.WriteToFile(*cfg, kubeconfig); err != nil {
		t.Fatal(err)
	}

	var out bytes.Buffer
	err = releasecmd.Run(ctx, releasecmd.Options{Kubeconfig: kubeconfig, Namespaces: []string{ns}, StopManager: sys + "/almanac", Timeout: 30 * time.Second}, &out)
	t.Logf("almanac release (error %v):\n%s", err, out.String())
	var re *releasecmd.Error
	if !errors.As(err, &re) || re.ExitCode() != 1 {
		t.Fatalf("almanac release = %v, want exit 1", err)
	}
	for _, want := range []string{ns + "/db", "forbidden", "scaled back to 2 replicas"} {
		if !strings.Contains(err.Error(), want) {
			t.Errorf("the error lacks %q", want)
		}
	}
	got := &appsv1.Deployment{}
	if err := c.Get(ctx, client.ObjectKeyFromObject(dep), got); err != nil || ptr.Deref(got.Spec.Replicas, -1) != 2 {
		t.Errorf("after the failed release the manager's Deployment has replicas %d (%v), want 2 again", ptr.Deref(got.Spec.Replicas, -1), err)
	}
	latest := &autoscalingv1alpha1.ScheduledPodAutoscaler{}
	if err := c.Get(ctx, client.ObjectKeyFromObject(spa), latest); err != nil || !slices.Contains(latest.Finalizers, autoscalingv1alpha1.ReleaseFinalizer) {
		t.Errorf("the autoscaler that could not be released has finalizers %v (%v), want the release finalizer kept", latest.Finalizers, err)
	}
}
