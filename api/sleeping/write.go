package sleeping

import (
	"context"
	"fmt"

	apierrors "k8s.io/apimachinery/pkg/api/errors"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"
	"k8s.io/apimachinery/pkg/runtime/schema"
	"k8s.io/apimachinery/pkg/types"

	sleepv1alpha1 "github.com/almanac-dev/almanac/api/sleep/v1alpha1"
)

// Putting a workload to sleep and waking it: the one implementation that the reconciler (at
// every boundary) and `almanac release` (when almanac is uninstalled) both run, through
// Writer, which each adapts its client to.

// Writer is the API access that a sleep's writes need, in apimachinery's terms so that api/
// needs no client library.
//
// +kubebuilder:object:generate=false
type Writer interface {
	// Patch patches obj, or its subresource when subresource is not empty, with data of type
	// pt and opts (the field manager), and decodes the answer into obj.
	Patch(ctx context.Context, obj *unstructured.Unstructured, subresource string, pt types.PatchType, data []byte, opts metav1.PatchOptions) error
}

// Object is the workload w as an object to patch.
func Object(w *Workload) *unstructured.Unstructured {
	u := &unstructured.Unstructured{}
	u.SetGroupVersionKind(w.GVK)
	u.SetNamespace(w.Namespace)
	u.SetName(w.Name)
	return u
}

// Sleep records w (rec) and puts it to sleep as manager: one patch (SleepPatch), or, through
// a scale subresource, the record first (RecordPatch) and then the replicas (ScalePatch): a
// crash in between leaves a record of a workload still awake, which the next reconcile puts to
// sleep without counting it as a put-back (its old owner wrote before almanac's record).
func Sleep(ctx context.Context, c Writer, w *Workload, rec *sleepv1alpha1.Record, manager string) error {
	opts := metav1.PatchOptions{FieldManager: manager}
	if w.Handling != sleepv1alpha1.HandleScale {
		return c.Patch(ctx, Object(w), "", types.MergePatchType, SleepPatch(w, rec), opts)
	}
	if err := c.Patch(ctx, Object(w), "", types.MergePatchType, RecordPatch(w, rec), opts); err != nil {
		return err
	}
	return c.Patch(ctx, Object(w), "scale", types.MergePatchType, ScalePatch(0), opts)
}

// Record writes rec to w as manager and changes nothing else (a put-back given up).
func Record(ctx context.Context, c Writer, w *Workload, rec *sleepv1alpha1.Record, manager string) error {
	return c.Patch(ctx, Object(w), "", types.MergePatchType, RecordPatch(w, rec), metav1.PatchOptions{FieldManager: manager})
}

// Wake puts back what rec recorded of w, removes the record, and removes manager's entries
// from w's managedFields (DisownPatch), so that almanac owns no field of an awake workload.
// Through a scale subresource the replicas go first and the record after them: a crash in
// between leaves a record of a workload already awake, which the next reconcile (or release)
// wakes again. A workload that is gone needs nothing.
func Wake(ctx context.Context, c Writer, w *Workload, rec *sleepv1alpha1.Record, manager string) error {
	opts := metav1.PatchOptions{FieldManager: manager}
	patchFor := w
	if w.Handling == sleepv1alpha1.HandleScale {
		if rec.Replicas != nil {
			if err := c.Patch(ctx, Object(w), "scale", types.MergePatchType, ScalePatch(*rec.Replicas), opts); err != nil {
				return ignoreGone(err)
			}
		}
		unconditional := *w
		unconditional.ResourceVersion = "" // the scale write changed it; the record is almanac's to remove
		patchFor = &unconditional
	}
	u := Object(w)
	if err := c.Patch(ctx, u, "", types.MergePatchType, WakePatch(patchFor, rec), opts); err != nil {
		return ignoreGone(err)
	}
	// The answer holds the workload's managedFields: manager's entries are dropped, each
	// tested first, so that a concurrent change fails the patch rather than dropping
	// another's. One that fails so (Invalid) leaves the entries until the workload's next
	// sleep and wake; its values are right either way.
	if patch := DisownPatch(u.GetManagedFields(), manager); patch != nil {
		if err := c.Patch(ctx, u, "", types.JSONPatchType, patch, metav1.PatchOptions{}); err != nil && !apierrors.IsNotFound(err) && !apierrors.IsInvalid(err) {
			return fmt.Errorf("failed to remove %s's field ownership: %w", manager, err)
		}
	}
	return nil
}

func ignoreGone(err error) error {
	if apierrors.IsNotFound(err) {
		return nil
	}
	return err
}

// FromObject is a workload, as Wake needs it, read from its metadata alone: what `almanac
// release` lists. Its kind's Handling says how it wakes; its record says to what.
func FromObject(obj metav1.Object, gvk schema.GroupVersionKind) Workload {
	return Workload{GVK: gvk, Handling: sleepv1alpha1.HandlingOf(gvk.GroupKind()), Namespace: obj.GetNamespace(), Name: obj.GetName(),
		ResourceVersion: obj.GetResourceVersion(), Labels: obj.GetLabels(), Annotations: obj.GetAnnotations()}
}
