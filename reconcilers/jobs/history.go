package jobs

import (
	"context"
	"fmt"
	"slices"
	"sort"
	"sync"

	batchv1 "k8s.io/api/batch/v1"
	corev1 "k8s.io/api/core/v1"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/runtime"
	"k8s.io/apimachinery/pkg/runtime/schema"
	"k8s.io/apimachinery/pkg/types"
	"k8s.io/client-go/tools/events"
	"k8s.io/utils/ptr"
	"sigs.k8s.io/controller-runtime/pkg/client"

	batchv1alpha1 "github.com/almanac-dev/almanac/api/batch/v1alpha1"
)

// HistoryLimits returns the policy's history limits, with the defaults for omitted ones.
func HistoryLimits(p *batchv1alpha1.JobPolicy) (succeeded, failed int) {
	return int(ptr.Deref(p.SuccessfulJobsHistoryLimit, batchv1alpha1.DefaultSuccessfulJobsHistoryLimit)),
		int(ptr.Deref(p.FailedJobsHistoryLimit, batchv1alpha1.DefaultFailedJobsHistoryLimit))
}

// ToPrune returns the finished Jobs beyond the history limits: all but the `succeeded`
// newest completed Jobs and all but the `failed` newest failed Jobs, oldest first. Running
// Jobs are never pruned. "Newest" is by the time the Job finished, then by name.
//
// The callers delete them only after status records their runs, so that deleting a Job never
// makes its run happen again.
func ToPrune(jobs []*batchv1.Job, succeeded, failed int) []*batchv1.Job {
	var ok, bad []*batchv1.Job
	for _, j := range jobs {
		switch OutcomeOf(j).Type {
		case batchv1.JobComplete:
			ok = append(ok, j)
		case batchv1.JobFailed:
			bad = append(bad, j)
		}
	}
	return append(oldest(ok, succeeded), oldest(bad, failed)...)
}

// oldest returns all but the newest `keep` Jobs, oldest first.
func oldest(jobs []*batchv1.Job, keep int) []*batchv1.Job {
	if keep < 0 {
		keep = 0
	}
	if len(jobs) <= keep {
		return nil
	}
	sort.SliceStable(jobs, func(a, b int) bool {
		ta, tb := OutcomeOf(jobs[a]).Time, OutcomeOf(jobs[b]).Time
		if !ta.Equal(tb) {
			return ta.Before(tb)
		}
		return jobs[a].Name < jobs[b].Name
	})
	return jobs[:len(jobs)-keep]
}

// Prune deletes owner's finished Jobs in current beyond policy's history limits, with an
// event on owner for each. Callers run it only after status records the runs of those Jobs
// (ScheduledJob: lastScheduleTime; EventJob: the watermark), so pruning never makes a run
// happen again.
func Prune(ctx context.Context, c client.Client, rec events.EventRecorder, owner runtime.Object, policy *batchv1alpha1.JobPolicy, current []*batchv1.Job) error {
	succeeded, failed := HistoryLimits(policy)
	for _, j := range ToPrune(current, succeeded, failed) {
		if err := Delete(ctx, c, j); err != nil {
			return err
		}
		rec.Eventf(owner, j, corev1.EventTypeNormal, EventJobPruned, ActionDelete,
			"Deleted finished Job %s (history limits: %d succeeded, %d failed)", j.Name, succeeded, failed)
	}
	return nil
}

// Delete deletes a Job and, in the background, its Pods; a Job already gone, or replaced by
// another of the same name, is left alone.
func Delete(ctx context.Context, c client.Client, j *batchv1.Job) error {
	err := c.Delete(ctx, j, client.PropagationPolicy(metav1.DeletePropagationBackground),
		client.Preconditions{UID: &j.UID})
	if err != nil && !apierrors.IsNotFound(err) && !apierrors.IsConflict(err) {
		return fmt.Errorf("failed to delete Job %s/%s: %w", j.Namespace, j.Name, err)
	}
	return nil
}

// Releaser removes batchv1alpha1.FinalizerOutcome from Jobs (see NewJob) with
// batchv1alpha1.FinalizerRemoval's patch, which needs no resourceVersion. It remembers the
// version of each Job it released, so that a reconcile that reads the same version from a
// cache that has not caught up yet sends no second patch (which the patch's test would
// refuse: in the trigger figure, 229 refused patches for 400 runs before it remembered).
// Each Job owner's reconciler has one; the zero value is ready to use.
type Releaser struct {
	mu sync.Mutex
	// sent maps a Job's UID to the resourceVersion it had when its finalizer was removed.
	sent map[types.UID]string
}

// maxReleased bounds what a Releaser remembers: a Job is forgotten once a copy without the
// finalizer is seen, and all of them past this many (the worst then is a refused patch).
const maxReleased = 10000

// Release removes the finalizer from j, if j has it and it was not removed from this version
// of j already. A Job already gone is left alone; a Job whose finalizers changed since j was
// read (the patch's test fails) is left to the reconcile its watch event brings.
func (r *Releaser) Release(ctx context.Context, c client.Client, j *batchv1.Job) error {
	patch, ok := batchv1alpha1.FinalizerRemoval(j.Finalizers)
	r.mu.Lock()
	if !ok {
		delete(r.sent, j.UID)
		r.mu.Unlock()
		return nil
	}
	if v, seen := r.sent[j.UID]; seen && v == j.ResourceVersion {
		r.mu.Unlock()
		return nil
	}
	r.mu.Unlock()
	version := j.ResourceVersion
	err := c.Patch(ctx, j, client.RawPatch(types.JSONPatchType, patch))
	switch {
	case apierrors.IsNotFound(err), apierrors.IsInvalid(err):
		return nil
	case err != nil:
		return fmt.Errorf("failed to remove the finalizer %s from Job %s/%s: %w", batchv1alpha1.FinalizerOutcome, j.Namespace, j.Name, err)
	}
	r.mu.Lock()
	defer r.mu.Unlock()
	if r.sent == nil || len(r.sent) >= maxReleased {
		r.sent = map[types.UID]string{}
	}
	r.sent[j.UID] = version
	return nil
}

// ReleaseAll releases every Job in namespace whose controller has the ControllerKey key: the
// Jobs of an owner that is gone or being deleted, whose runs nothing will record, and which
// the garbage collector (or a foreground deletion of the owner) waits for.
func (r *Releaser) ReleaseAll(ctx context.Context, c client.Client, namespace, key string) error {
	list, err := List(ctx, c, namespace, key)
	if err != nil {
		return err
	}
	for _, j := range list {
		if err := r.Release(ctx, c, j); err != nil {
			return err
		}
	}
	return nil
}

// ReleaseEarlier releases the Jobs of an earlier object of owner's kind, namespace and name
// (see Owned): owner replaced it (kubectl replace --force, a delete and re-apply), so its
// status, the record their runs wait for, went with it, and nothing will record them; once
// released, the garbage collector deletes them, as it does the Jobs of any object that is gone.
//
// Before it releases any, it reads owner's metadata around the cache (api, as gvk) and
// releases nothing unless the object of that name is owner itself: a copy of an earlier
// object, from a cache that has not seen it replaced yet, must not take the Jobs of the
// object that replaced it for an earlier one's. The read happens only while one of them still
// has the finalizer.
func (r *Releaser) ReleaseEarlier(ctx context.Context, c client.Client, api client.Reader, owner client.Object, gvk schema.GroupVersionKind, earlier []*batchv1.Job) error {
	held := slices.DeleteFunc(slices.Clone(earlier), func(j *batchv1.Job) bool {
		_, ok := batchv1alpha1.FinalizerRemoval(j.Finalizers)
		return !ok
	})
	if len(held) == 0 {
		return nil
	}
	live := &metav1.PartialObjectMetadata{}
	live.SetGroupVersionKind(gvk)
	err := api.Get(ctx, client.ObjectKeyFromObject(owner), live)
	switch {
	case apierrors.IsNotFound(err):
		// Gone too: every Job of that name is an orphan.
	case err != nil:
		return fmt.Errorf("failed to read %s %s: %w", gvk.Kind, client.ObjectKeyFromObject(owner), err)
	case live.UID != owner.GetUID():
		return nil // owner is a stale copy: the reconcile of the object there now releases them
	}
	for _, j := range held {
		if err := r.Release(ctx, c, j); err != nil {
			return err
		}
	}
	return nil
}
