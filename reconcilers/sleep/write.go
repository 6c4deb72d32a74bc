package sleep

import (
	"context"
	"fmt"
	"sync"
	"time"

	apierrors "k8s.io/apimachinery/pkg/api/errors"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
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

// writer adapts the reconciler's client to sleeping.Writer.
type writer struct{ c client.Client }

func (w writer) Patch(ctx context.Context, obj *unstructured.Unstructured, subresource string, pt types.PatchType, data []byte, opts metav1.PatchOptions) error {
	po := client.PatchOptions{FieldManager: opts.FieldManager, Force: opts.Force}
	if subresource == "" {
		return w.c.Patch(ctx, obj, client.RawPatch(pt, data), &po)
	}
	return w.c.SubResource(subresource).Patch(ctx, obj, client.RawPatch(pt, data), &client.SubResourcePatchOptions{PatchOptions: po})
}

// run executes one step.
func (r *Reconciler) run(ctx context.Context, h *holder, o *outcome, now time.Time) {
	w, rec := o.step.W, o.step.Record
	switch o.step.Action {
	case sleeping.ActSleep:
		o.err = sleeping.Sleep(ctx, writer{r.Client}, w, rec, index.FieldManager)
	case sleeping.ActWake:
		o.err = sleeping.Wake(ctx, writer{r.Client}, w, rec, index.FieldManager)
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

// putBack handles a held workload that someone woke: it reads the workload around the cache
// (who changed it is in managedFields, which the cache does not keep), and asks
// sleeping.PutBack whether to put it back to sleep (recording the new wish) or to stop and
// record the contest.
func (r *Reconciler) putBack(ctx context.Context, h *holder, o *outcome, now time.Time) error {
	w, rec := o.step.W, o.step.Record
	u := sleeping.Object(w)
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
		return sleeping.Record(ctx, writer{r.Client}, &fresh, next, index.FieldManager)
	}
	return sleeping.Sleep(ctx, writer{r.Client}, &fresh, next, index.FieldManager)
}
