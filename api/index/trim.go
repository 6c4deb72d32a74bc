package index

import (
	appsv1 "k8s.io/api/apps/v1"
	autoscalingv2 "k8s.io/api/autoscaling/v2"
	batchv1 "k8s.io/api/batch/v1"
	corev1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
)

// What the manager's cache keeps. The manager watches every Job, HPA and almanac object in the
// cluster (an EventJob may follow any Job), so what it keeps of each is what its memory holds:
// only what almanac's reconcilers and webhooks read. A field dropped here reads as empty from
// the cache; code that needs it must read the object through the API server (APIReader).
//
//   - Every object: no managedFields (nothing reads them: status writes are patches computed
//     between two copies of the same cached object), and no
//     kubectl.kubernetes.io/last-applied-configuration annotation (a copy of the object).
//   - Jobs: no spec. almanac reads a Job's metadata (name, UID, owners, labels, annotations,
//     finalizers, creation and deletion timestamps) and its status conditions; the Pod
//     template is most of a Job.
//   - HorizontalPodAutoscalers: no status (the HPA controller's metrics, rewritten every
//     15 s), and no managedFields but almanac's own entries: the autoscaler reconciler reads
//     its entry to see which fields it owns and whether a change was its own write. almanac
//     reads the spec and the owners.
//   - Deployments, StatefulSets, ReplicaSets (the leader watches them for sleeps): their
//     metadata, replicas, selector and status, and of the Pod template only each container's
//     resource requests (what a sleep reports as reclaimed). CronJobs: their metadata and
//     spec.suspend and schedule, without the Job template.
//
// api/ imports no controller-runtime or client-go, so these are data, as the indexes are: the
// manager (main.go; test/testenv for the tests' managers) turns them into its cache options.

// Transform is one kind's cache transform (a client-go TransformFunc).
type Transform struct {
	// Object is an empty object of the transformed kind.
	Object Object
	// Func trims an object of that kind as it enters the cache.
	Func func(any) (any, error)
}

// Transforms returns the transforms of the kinds trimmed beyond TrimObject, each with a fresh
// Object. Every other kind gets TrimObject.
func Transforms() []Transform {
	return []Transform{
		{Object: &batchv1.Job{}, Func: TrimJob},
		{Object: &autoscalingv2.HorizontalPodAutoscaler{}, Func: TrimHPA},
		{Object: &appsv1.Deployment{}, Func: TrimWorkload},
		{Object: &appsv1.StatefulSet{}, Func: TrimWorkload},
		{Object: &appsv1.ReplicaSet{}, Func: TrimWorkload},
		{Object: &batchv1.CronJob{}, Func: TrimCronJob},
	}
}

// TrimObject drops what no part of almanac reads from any object: managedFields and the
// last-applied-configuration annotation. Other values (a DeletedFinalStateUnknown) pass
// unchanged; trimming twice changes nothing.
func TrimObject(in any) (any, error) {
	obj, ok := in.(metav1.Object)
	if !ok {
		return in, nil
	}
	obj.SetManagedFields(nil)
	trimAnnotations(obj)
	return in, nil
}

// trimAnnotations drops the last-applied-configuration annotation.
func trimAnnotations(obj metav1.Object) {
	if a := obj.GetAnnotations(); a != nil {
		if _, ok := a[corev1.LastAppliedConfigAnnotation]; ok {
			trimmed := make(map[string]string, len(a)-1)
			for k, v := range a {
				if k != corev1.LastAppliedConfigAnnotation {
					trimmed[k] = v
				}
			}
			obj.SetAnnotations(trimmed)
		}
	}
}

// TrimJob is TrimObject without the Job's spec.
func TrimJob(in any) (any, error) {
	if j, ok := in.(*batchv1.Job); ok {
		j.Spec = batchv1.JobSpec{}
	}
	return TrimObject(in)
}

// TrimHPA keeps of a HorizontalPodAutoscaler its metadata without the last-applied copy, its
// spec, and almanac's managedFields entries.
func TrimHPA(in any) (any, error) {
	h, ok := in.(*autoscalingv2.HorizontalPodAutoscaler)
	if !ok {
		return TrimObject(in)
	}
	h.Status = autoscalingv2.HorizontalPodAutoscalerStatus{}
	var ours []metav1.ManagedFieldsEntry
	for _, e := range h.ManagedFields {
		if e.Manager == FieldManager {
			ours = append(ours, e)
		}
	}
	h.ManagedFields = ours
	trimAnnotations(h)
	return h, nil
}

// TrimWorkload keeps of a Deployment, StatefulSet or ReplicaSet what a sleep reads: metadata
// (without managedFields and the last-applied copy), replicas, selector, status, and of the
// Pod template the labels and each container's resource requests.
func TrimWorkload(in any) (any, error) {
	switch w := in.(type) {
	case *appsv1.Deployment:
		w.Spec = appsv1.DeploymentSpec{Replicas: w.Spec.Replicas, Selector: w.Spec.Selector, Template: requestsOnly(w.Spec.Template)}
	case *appsv1.StatefulSet:
		w.Spec = appsv1.StatefulSetSpec{Replicas: w.Spec.Replicas, Selector: w.Spec.Selector, Template: requestsOnly(w.Spec.Template)}
	case *appsv1.ReplicaSet:
		w.Spec = appsv1.ReplicaSetSpec{Replicas: w.Spec.Replicas, Selector: w.Spec.Selector, Template: requestsOnly(w.Spec.Template)}
	}
	return TrimObject(in)
}

// requestsOnly is a Pod template with its labels and its containers' requests only.
func requestsOnly(t corev1.PodTemplateSpec) corev1.PodTemplateSpec {
	out := corev1.PodTemplateSpec{ObjectMeta: metav1.ObjectMeta{Labels: t.Labels}}
	for _, c := range t.Spec.Containers {
		out.Spec.Containers = append(out.Spec.Containers, corev1.Container{Name: c.Name, Resources: corev1.ResourceRequirements{Requests: c.Resources.Requests}})
	}
	return out
}

// TrimCronJob keeps of a CronJob its metadata, spec.suspend and spec.schedule.
func TrimCronJob(in any) (any, error) {
	if c, ok := in.(*batchv1.CronJob); ok {
		c.Spec = batchv1.CronJobSpec{Schedule: c.Spec.Schedule, Suspend: c.Spec.Suspend}
	}
	return TrimObject(in)
}
