package sleep

import (
	"context"
	"fmt"
	"sync"
	"time"

	apierrors "k8s.io/apimachinery/pkg/api/errors"
	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"
	"k8s.io/apimachinery/pkg/types"
	ctrl "sigs.k8s.io/controller-runtime"
	"sigs.k8s.io/controller-runtime/pkg/client"

	"github.com/almanac-dev/almanac/api/index"
	"github.com/almanac-dev/almanac/api/putback"
	sleepv1alpha1 "github.com/almanac-dev/almanac/api/sleep/v1alpha1"
	"github.com/almanac-dev/almanac/api/sleeping"
	"github.com/almanac-dev/almanac/reconcilers/base"
)

// outcome is what became of one step.
type outcome struct {
	step sleeping.Step
	// err is the write's failure (nil: done, or the workload is gone).
	err error
	// changedBy, for a put-back, are the other field managers that woke the workload; and
	// contested is set when almanac stopped putting it back.
	changedBy []string
	contested *sleepv1alpha1.Contest
	// skipped: nothing was written (a put-back that found the workload asleep again).
	skipped bool
}

// execute runs the steps, Writes at a time, and returns what became of each, in order.
func (r *Reconciler) execute(ctx context.Context, h *holder, steps []sleeping.Step, now time.Time) []outcome {
	out := make([]outcome, len(steps))
	writes := max(r.Writes, 1)
	sem := make(chan struct{}, writes)
	var wg sync.WaitGroup
	for i := range steps {
		out[i].step = steps[i]
		sem <- struct{}{}
		wg.Add(1)
		go func(o *outcome) {
			defer func() { <-sem; wg.Done() }()
			r.run(ctx, h, o, now)
			if apierrors.IsNotFound(o.err) {
				o.err = nil // gone meanwhile: nothing to sleep or wake
			}
		}(&out[i])
	}
	wg.Wait()
	return out
}

// firstFailure returns the failure to report and retry: a refusal first (it waits a minute,
// and the condition says so), then any other.
func firstFailure(outcomes []outcome) error {
	var first error
	for _, o := range outcomes {
		if o.err == nil {
			continue
		}
		if base.Refused(o.err) {
			return o.err
		}
		if first == nil {
			first = o.err
		}
	}
	return first
}

// object is the workload w as an object to patch.
func object(w *sleeping.Workload) *unstructured.Unstructured {
	u := &unstructured.Unstructured{}
	u.SetGroupVersionKind(w.GVK)
	u.SetNamespace(w.Namespace)
	u.SetName(w.Name)
	return u
}

var owner = client.FieldOwner(index.FieldManager)

// run executes one step.
func (r *Reconciler) run(ctx context.Context, h *holder, o *outcome, now time.Time) {
	w, rec := o.step.W, o.step.Record
	switch o.step.Action {
	case sleeping.ActSleep:
		o.err = r.sleep(ctx, w, rec)
	case sleeping.ActWake:
		o.err = r.wake(ctx, w, rec)
	case sleeping.ActResleep:
		o.err = r.putBack(ctx, h, o, now)
	}
	if o.err != nil {
		o.err = fmt.Errorf("failed to %s %s: %w", verb(o.step.Action), w.Ref(), o.err)
		return
	}
	ctrl.LoggerFrom(ctx).V(1).Info("Wrote a workload", "action", o.step.Action, "workload", w.Ref(), "why", o.step.Why)
}

func verb(a sleeping.Action) string {
	switch a {
	case sleeping.ActSleep:
		return "put to sleep"
	case sleeping.ActWake:
		return "wake"
	}
	return "put back to sleep"
}

// sleep records w and puts it to sleep: one patch, or, through a scale subresource, the
// record first and then the replicas (a crash in between leaves a record of a workload still
// awake, which the next reconcile puts to sleep without counting it as a put-back).
func (r *Reconciler) sleep(ctx context.Context, w *sleeping.Workload, rec *sleepv1alpha1.Record) error {
	u := object(w)
	if w.Handling != sleepv1alpha1.HandleScale {
		return r.Client.Patch(ctx, u, client.RawPatch(types.MergePatchType, sleeping.SleepPatch(w, rec)), owner)
	}
	if err := r.Client.Patch(ctx, u, client.RawPatch(types.MergePatchType, sleeping.RecordPatch(w, rec)), owner); err != nil {
		return err
	}
	return r.Client.SubResource("scale").Patch(ctx, object(w), client.RawPatch(types.MergePatchType, sleeping.ScalePatch(0)), owner)
}

// wake puts back what rec recorded, removes it, and removes almanac's managedFields entries
// of the workload (sleeping.DisownPatch), so that it owns no field of an awake workload.
// Through a scale subresource the replicas go first and the record after them: a crash in
// between leaves a record of a workload already awake, which the next reconcile wakes again.
func (r *Reconciler) wake(ctx context.Context, w *sleeping.Workload, rec *sleepv1alpha1.Record) error {
	u := object(w)
	patchFor := w
	if w.Handling == sleepv1alpha1.HandleScale {
		if rec.Replicas != nil {
			if err := r.Client.SubResource("scale").Patch(ctx, object(w), client.RawPatch(types.MergePatchType, sleeping.ScalePatch(*rec.Replicas)), owner); err != nil {
				return err
			}
		}
		unconditional := *w
		unconditional.ResourceVersion = "" // the scale write changed it; the record is ours to remove
		patchFor = &unconditional
	}
	if err := r.Client.Patch(ctx, u, client.RawPatch(types.MergePatchType, sleeping.WakePatch(patchFor, rec)), owner); err != nil {
		return err
	}
	// The answer holds the workload's managedFields: almanac's entries are dropped, each
	// tested first, so a concurrent change fails the patch rather than dropping another's.
	if patch := sleeping.DisownPatch(u.GetManagedFields(), index.FieldManager); patch != nil {
		if err := r.Client.Patch(ctx, u, client.RawPatch(types.JSONPatchType, patch)); err != nil && !apierrors.IsNotFound(err) && !apierrors.IsInvalid(err) {
			// Invalid: a test failed (someone wrote meanwhile); the entries stay until the
			// workload's next sleep and wake. Its values are right either way.
			return fmt.Errorf("failed to remove almanac's field ownership: %w", err)
		}
	}
	return nil
}

// putBack handles a held workload that someone woke: it reads the workload around the cache
// (who changed it is in managedFields, which the cache does not keep), and asks
// sleeping.PutBack whether to put it back to sleep (recording the new wish) or to stop and
// record the contest.
func (r *Reconciler) putBack(ctx context.Context, h *holder, o *outcome, now time.Time) error {
	w, rec := o.step.W, o.step.Record
	u := object(w)
	if err := r.APIReader.Get(ctx, client.ObjectKeyFromObject(u), u); err != nil {
		return err
	}
	fresh := *w
	fresh.ResourceVersion, fresh.Annotations = u.GetResourceVersion(), u.GetAnnotations()
	switch w.Handling {
	case sleepv1alpha1.HandleReplicas, sleepv1alpha1.HandleScale:
		if v, ok, _ := unstructured.NestedInt64(u.Object, "spec", "replicas"); ok {
			fresh.Replicas = new(int32(v))
		}
	case sleepv1alpha1.HandleSuspend:
		v, _, _ := unstructured.NestedBool(u.Object, "spec", "suspend")
		fresh.Suspend = &v
	}
	current, err := sleepv1alpha1.DecodeRecord(fresh.Annotations)
	if err != nil || current == nil || current.By != rec.By || fresh.Asleep() {
		o.skipped = true // changed meanwhile: the next reconcile decides again
		return nil
	}
	o.changedBy = putback.ChangedSinceOwn(u.GetManagedFields(), index.FieldManager, sleeping.Field(w.Handling))
	next, resleep := sleeping.PutBack(current, &fresh, o.changedBy, h.obj.GetGeneration(), now)
	if !resleep {
		o.contested = next.Contested
		return r.Client.Patch(ctx, object(w), client.RawPatch(types.MergePatchType, sleeping.RecordPatch(&fresh, next)), owner)
	}
	return r.sleep(ctx, &fresh, next)
}
