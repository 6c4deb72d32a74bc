package index

import (
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
