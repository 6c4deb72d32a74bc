package install

import (
	"bytes"
	"context"
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"slices"
	"testing"
	"time"

	appsv1 "k8s.io/api/apps/v1"
	autoscalingv2 "k8s.io/api/autoscaling/v2"
	batchv1 "k8s.io/api/batch/v1"
	corev1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/types"
	"k8s.io/client-go/tools/clientcmd"
	"k8s.io/utils/ptr"
	"sigs.k8s.io/controller-runtime/pkg/client"

	autoscalingv1alpha1 "github.com/almanac-dev/almanac/api/autoscaling/v1alpha1"
	batchv1alpha1 "github.com/almanac-dev/almanac/api/batch/v1alpha1"
	"github.com/almanac-dev/almanac/api/index"
)

// runReleaseHook stands in for the Job controller and the kubelet for the chart's pre-delete
// hook (a Job of component release): it runs the almanac binary with the Job's arguments, as
// the Job's ServiceAccount (impersonated: exactly its permissions), as the Pod would, and
// returns its error with its output. The hook's ServiceAccount and roles, hooks of a lower
// weight, exist by then.
func runReleaseHook(bin, kubeconfig string, j *batchv1.Job) (string, error) {
	if j.Labels["app.kubernetes.io/component"] != "release" {
		return "", nil
	}
	cfg, err := clientcmd.LoadFromFile(kubeconfig)
	if err != nil {
		return "", err
	}
	for _, a := range cfg.AuthInfos {
		a.Impersonate = "system:serviceaccount:" + j.Namespace + ":" + j.Spec.Template.Spec.ServiceAccountName
	}
	dir, err := os.MkdirTemp("", "almanac-hook-")
	if err != nil {
		return "", err
	}
	defer func() { _ = os.RemoveAll(dir) }()
	path := filepath.Join(dir, "kubeconfig")
	if err := clientcmd.WriteToFile(*cfg, path); err != nil {
		return "", err
	}
	cmd := exec.Command(bin, append(slices.Clone(j.Spec.Template.Spec.Containers[0].Args), "--kubeconfig="+path)...)
	var out bytes.Buffer
	cmd.Stdout, cmd.Stderr = &out, &out
	err = cmd.Run()
	return out.String(), err
}

// attachedInWindow is what a cluster holds when almanac goes in the middle of a window: an
// HPA that Helm created, raised by almanac, and a Deployment without an HPA, scaled by almanac
// through its scale subresource, each with its attached ScheduledPodAutoscaler (the release
// finalizer on, status.target set, as the reconciler leaves them), and a Job that almanac
// started whose outcome is not recorded yet.
type attachedInWindow struct {
	ns          string
	hpa         *autoscalingv2.HorizontalPodAutoscaler
	dep         *appsv1.Deployment
	job         *batchv1.Job
	autoscalers []*autoscalingv1alpha1.ScheduledPodAutoscaler
}

// newAttachedInWindow creates, in namespace ns, the targets and the Job, as almanac left them
// in the window; the caller creates the autoscalers (objects), which almanac's webhooks must
// let through, and then holds them (hold).
func newAttachedInWindow(t *testing.T, c client.Client, ns string) *attachedInWindow {
	t.Helper()
	ctx := context.Background()
	a := &attachedInWindow{ns: ns}
	if err := c.Create(ctx, &corev1.Namespace{ObjectMeta: metav1.ObjectMeta{Name: a.ns}}); err != nil {
		t.Fatal(err)
	}
	a.hpa = &autoscalingv2.HorizontalPodAutoscaler{
		ObjectMeta: metav1.ObjectMeta{Namespace: a.ns, Name: "web"},
		Spec: autoscalingv2.HorizontalPodAutoscalerSpec{
			ScaleTargetRef: autoscalingv2.CrossVersionObjectReference{APIVersion: "apps/v1", Kind: "Deployment", Name: "web"},
			MinReplicas:    ptr.To[int32](2),
			MaxReplicas:    5,
		},
	}
	if err := c.Create(ctx, a.hpa, client.FieldOwner("helm")); err != nil {
		t.Fatal(err)
	}
	hpaRef := autoscalingv1alpha1.TargetReference{APIVersion: "autoscaling/v2", Kind: "HorizontalPodAutoscaler", Name: "web"}
	raised := autoscalingv1alpha1.BoundsApply(hpaRef, a.ns, string(a.hpa.UID), 6, 10)
	if err := c.Apply(ctx, client.ApplyConfigurationFromUnstructured(raised), client.FieldOwner(index.FieldManager), client.ForceOwnership); err != nil {
		t.Fatal(err)
	}
	labels := map[string]string{"app": "batch"}
	a.dep = &appsv1.Deployment{
		ObjectMeta: metav1.ObjectMeta{Namespace: a.ns, Name: "batch"},
		Spec: appsv1.DeploymentSpec{
			Replicas: ptr.To[int32](1),
			Selector: &metav1.LabelSelector{MatchLabels: labels},
			Template: corev1.PodTemplateSpec{
				ObjectMeta: metav1.ObjectMeta{Labels: labels},
				Spec:       corev1.PodSpec{Containers: []corev1.Container{{Name: "c", Image: "busybox"}}},
			},
		},
	}
	if err := c.Create(ctx, a.dep, client.FieldOwner("kubectl")); err != nil {
		t.Fatal(err)
	}
	if err := c.SubResource("scale").Patch(ctx, a.dep.DeepCopy(), client.RawPatch(types.MergePatchType, autoscalingv1alpha1.ScalePatch(4)), client.FieldOwner(index.FieldManager)); err != nil {
		t.Fatal(err)
	}
	depRef := autoscalingv1alpha1.TargetReference{APIVersion: "apps/v1", Kind: "Deployment", Name: "batch"}
	a.job = &batchv1.Job{
		ObjectMeta: metav1.ObjectMeta{Namespace: a.ns, Name: "launch-29000000", Finalizers: []string{batchv1alpha1.FinalizerOutcome}},
		Spec: batchv1.JobSpec{Template: corev1.PodTemplateSpec{Spec: corev1.PodSpec{
			RestartPolicy: corev1.RestartPolicyNever, Containers: []corev1.Container{{Name: "c", Image: "busybox"}},
		}}},
	}
	if err := c.Create(ctx, a.job); err != nil {
		t.Fatal(err)
	}
	spa := func(name string, ref autoscalingv1alpha1.TargetReference, minReplicas int32, maxReplicas *int32) *autoscalingv1alpha1.ScheduledPodAutoscaler {
		return &autoscalingv1alpha1.ScheduledPodAutoscaler{
			ObjectMeta: metav1.ObjectMeta{Namespace: a.ns, Name: name, Finalizers: []string{autoscalingv1alpha1.ReleaseFinalizer}},
			Spec:       autoscalingv1alpha1.ScheduledPodAutoscalerSpec{TargetRef: &ref, MinReplicas: &minReplicas, MaxReplicas: maxReplicas},
			Status:     autoscalingv1alpha1.ScheduledPodAutoscalerStatus{Target: &ref},
		}
	}
	a.autoscalers = []*autoscalingv1alpha1.ScheduledPodAutoscaler{spa("web", hpaRef, 3, ptr.To[int32](5)), spa("batch", depRef, 2, nil)}
	return a
}

// objects are the autoscalers, to create.
func (a *attachedInWindow) objects() []client.Object {
	out := make([]client.Object, len(a.autoscalers))
	for i, s := range a.autoscalers {
		out[i] = s
	}
	return out
}

// hold writes status.target of the autoscalers once created (the status subresource: no
// webhook intercepts it).
func (a *attachedInWindow) hold(t *testing.T, c client.Client) {
	t.Helper()
	for _, s := range a.autoscalers {
		latest := &autoscalingv1alpha1.ScheduledPodAutoscaler{}
		if err := c.Get(context.Background(), client.ObjectKeyFromObject(s), latest); err != nil {
			t.Fatal(err)
		}
		latest.Status.Target = s.Spec.TargetRef
		if err := c.Status().Update(context.Background(), latest); err != nil {
			t.Fatal(err)
		}
	}
}

// check: once almanac is released, each target is at its autoscaler's baseline and owned by
// no almanac field manager, and nothing of almanac's holds the autoscalers or the Job:
// deleted, they go (envtest runs no namespace controller, so they are deleted one by one).
func (a *attachedInWindow) check(t *testing.T, c client.Client) {
	t.Helper()
	ctx := context.Background()
	almanacs := func(entries []metav1.ManagedFieldsEntry) bool {
		return slices.ContainsFunc(entries, func(e metav1.ManagedFieldsEntry) bool { return e.Manager == index.FieldManager })
	}
	hpa := &autoscalingv2.HorizontalPodAutoscaler{}
	if err := c.Get(ctx, client.ObjectKeyFromObject(a.hpa), hpa); err != nil {
		t.Fatal(err)
	}
	if ptr.Deref(hpa.Spec.MinReplicas, -1) != 3 || hpa.Spec.MaxReplicas != 5 || almanacs(hpa.ManagedFields) {
		t.Errorf("once released, the HPA has bounds %d-%d, almanac's managedFields %v; want the baseline 3-5 and none",
			ptr.Deref(hpa.Spec.MinReplicas, -1), hpa.Spec.MaxReplicas, almanacs(hpa.ManagedFields))
	}
	dep := &appsv1.Deployment{}
	if err := c.Get(ctx, client.ObjectKeyFromObject(a.dep), dep); err != nil {
		t.Fatal(err)
	}
	if ptr.Deref(dep.Spec.Replicas, -1) != 2 || almanacs(dep.ManagedFields) {
		t.Errorf("once released, the Deployment has %d replicas, almanac's managedFields %v; want the baseline 2 and none", ptr.Deref(dep.Spec.Replicas, -1), almanacs(dep.ManagedFields))
	}
	gone := []client.Object{a.job}
	for _, s := range a.autoscalers {
		gone = append(gone, s)
	}
	for _, o := range gone {
		if err := c.Delete(ctx, o, client.PropagationPolicy(metav1.DeletePropagationBackground)); err != nil {
			t.Fatal(err)
		}
		eventually(t, 10*time.Second, fmt.Sprintf("%T %s gone once deleted", o, o.GetName()), func() error {
			err := c.Get(ctx, client.ObjectKeyFromObject(o), o)
			if err == nil {
				return fmt.Errorf("still there, finalizers %v", o.GetFinalizers())
			}
			return client.IgnoreNotFound(err)
		})
	}
}
