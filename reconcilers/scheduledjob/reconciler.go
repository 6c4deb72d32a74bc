// Package scheduledjob reconciles ScheduledJobs: it owns the Jobs they create (one per slot,
// named deterministically, controlled by the ScheduledJob) and their status. It watches
// ScheduledJobs (spec changes) and the Jobs they control (to follow runs and prune history),
// and wakes itself at the next slot with RequeueAfter; it never polls.
//
// The slots come from the time engine (api/timing): a one-shot's instant by the DST rule, or
// the cron schedule's slots, once per wall-clock slot across DST. status.lastScheduleTime and
// status.lastMissedTime are the record of which slots are done: a slot at or before them
// never runs (again), whatever happens to its Job.
package scheduledjob

import (
	"context"
	"fmt"
	"time"

	batchv1 "k8s.io/api/batch/v1"
	corev1 "k8s.io/api/core/v1"
	"k8s.io/apimachinery/pkg/api/equality"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	"k8s.io/apimachinery/pkg/types"
	"k8s.io/client-go/tools/events"
	"k8s.io/utils/clock"
	ctrl "sigs.k8s.io/controller-runtime"
	"sigs.k8s.io/controller-runtime/pkg/builder"
	"sigs.k8s.io/controller-runtime/pkg/client"
	"sigs.k8s.io/controller-runtime/pkg/controller"
	"sigs.k8s.io/controller-runtime/pkg/predicate"

	batchv1alpha1 "github.com/almanac-dev/almanac/api/batch/v1alpha1"
	"github.com/almanac-dev/almanac/reconcilers/jobs"
)

var gvk = batchv1alpha1.GroupVersion.WithKind("ScheduledJob")

// Reconciler reconciles ScheduledJobs.
type Reconciler struct {
	// Client reads Jobs from the cache and writes Jobs and status.
	Client client.Client
	// APIReader reads around the cache: the ScheduledJob (its status is the record of what
	// ran; a stale copy could run a pruned slot again) and Jobs the cache has not seen yet.
	APIReader client.Reader
	// Clock tells the time; tests inject a fake one.
	Clock clock.PassiveClock
	// Recorder records events on ScheduledJobs.
	Recorder events.EventRecorder
	// Options tune the controller (tests use a queue on a fake clock and skip the check for
	// unique controller names).
	Options controller.Options
}

// New returns a Reconciler that uses mgr's clients and event recorder and tells time with clk.
func New(mgr ctrl.Manager, clk clock.PassiveClock) *Reconciler {
	return &Reconciler{
		Client:    mgr.GetClient(),
		APIReader: mgr.GetAPIReader(),
		Clock:     clk,
		Recorder:  mgr.GetEventRecorder("almanac-scheduledjob"),
	}
}

// SetupWithManager registers the reconciler with mgr, whose cache must have the index
// batchv1alpha1.JobControllerField (api/index).
func (r *Reconciler) SetupWithManager(mgr ctrl.Manager) error {
	return ctrl.NewControllerManagedBy(mgr).
		Named("scheduledjob").
		// Our own status writes change no generation and need no reconcile.
		For(&batchv1alpha1.ScheduledJob{}, builder.WithPredicates(predicate.GenerationChangedPredicate{})).
		Owns(&batchv1.Job{}).
		WithOptions(r.Options).
		Complete(r)
}

// +kubebuilder:rbac:groups=batch.almanac.dev,resources=scheduledjobs,verbs=get;list;watch
// +kubebuilder:rbac:groups=batch.almanac.dev,resources=scheduledjobs/status,verbs=patch
// +kubebuilder:rbac:groups=batch.almanac.dev,resources=scheduledjobs/finalizers,verbs=update
// +kubebuilder:rbac:groups=batch,resources=jobs,verbs=get;list;watch;create;delete
// +kubebuilder:rbac:groups=events.k8s.io,resources=events,verbs=create;patch

// Reconcile starts the Job of a due slot, records missed slots, follows the Jobs into status,
// prunes history, and asks to be woken at the next slot.
func (r *Reconciler) Reconcile(ctx context.Context, req ctrl.Request) (ctrl.Result, error) {
	sj := &batchv1alpha1.ScheduledJob{}
	if err := r.APIReader.Get(ctx, req.NamespacedName, sj); err != nil {
		return ctrl.Result{}, client.IgnoreNotFound(err)
	}
	if !sj.DeletionTimestamp.IsZero() {
		return ctrl.Result{}, nil // Its Jobs go with it through their ownerReferences.
	}
	owned, err := r.ownedJobs(ctx, sj)
	if err != nil {
		return ctrl.Result{}, err
	}
	now := r.Clock.Now()
	p := decide(sj, owned, now)
	out, err := r.execute(ctx, sj, &p, now)
	if err != nil {
		return ctrl.Result{}, err
	}
	status := nextStatus(sj, &p, out, owned, now)
	if err := r.writeStatus(ctx, sj, status); err != nil {
		return ctrl.Result{}, err
	}
	current := currentJobs(owned, p.replace, out.job)
	r.report(sj, status, &p, out, current)
	if err := jobs.Prune(ctx, r.Client, r.Recorder, sj, &sj.Spec.JobPolicy, current); err != nil {
		return ctrl.Result{}, err
	}
	if p.requeueAfter == 0 {
		return ctrl.Result{}, nil // Job events bring the reconciler back
	}
	// The writes above took time: measure the wait from the clock now, so that the wake-up
	// lands on the slot instead of late by this reconcile's duration (and a slot that passed
	// meanwhile is handled at once rather than dropped as a negative RequeueAfter).
	return ctrl.Result{RequeueAfter: max(now.Add(p.requeueAfter).Sub(r.Clock.Now()), time.Nanosecond)}, nil
}

// ownedJobs returns the Jobs that sj controls. The cache may not have caught up with a Job
// created a moment ago, so the ones that status lists as active, and the one-shot's, are
// looked up directly when the cache does not have them.
func (r *Reconciler) ownedJobs(ctx context.Context, sj *batchv1alpha1.ScheduledJob) ([]*batchv1.Job, error) {
	list := &batchv1.JobList{}
	key := batchv1alpha1.ControllerKey(gvk.Group, gvk.Kind, sj.Name)
	if err := r.Client.List(ctx, list, client.InNamespace(sj.Namespace), client.MatchingFields{batchv1alpha1.JobControllerField: key}); err != nil {
		return nil, fmt.Errorf("failed to list the Jobs of ScheduledJob %s: %w", client.ObjectKeyFromObject(sj), err)
	}
	var owned []*batchv1.Job
	seen := map[string]bool{}
	for i := range list.Items {
		if j := &list.Items[i]; jobs.IsControlledBy(j, sj) {
			owned = append(owned, j)
			seen[j.Name] = true
		}
	}
	var expected []string
	for _, ref := range sj.Status.Active {
		expected = append(expected, ref.Name)
	}
	if s, err := compile(&sj.Spec); err == nil && s.OneShot() {
		expected = append(expected, batchv1alpha1.ScheduledJobName(sj.Name, s.Due))
	}
	for _, name := range expected {
		if seen[name] {
			continue
		}
		seen[name] = true
		j := &batchv1.Job{}
		err := r.APIReader.Get(ctx, types.NamespacedName{Namespace: sj.Namespace, Name: name}, j)
		switch {
		case apierrors.IsNotFound(err):
		case err != nil:
			return nil, fmt.Errorf("failed to get Job %s/%s: %w", sj.Namespace, name, err)
		case jobs.IsControlledBy(j, sj):
			owned = append(owned, j)
		}
	}
	return owned, nil
}

// execute deletes the Jobs that Replace replaces and creates the Job of plan.run. AlreadyExists
// on a Job we control is success: an earlier attempt created it. User errors (a name over
// budget, a Job of that name that is not ours, a template the API server rejects) count the
// slot as not run and become the Ready condition; API errors are returned for a retry.
func (r *Reconciler) execute(ctx context.Context, sj *batchv1alpha1.ScheduledJob, p *plan, now time.Time) (outcome, error) {
	if p.run.IsZero() {
		return outcome{}, nil
	}
	name := batchv1alpha1.ScheduledJobName(sj.Name, p.run)
	if err := batchv1alpha1.CheckJobName(name, gvk.Kind, sj.Name); err != nil {
		return notRun(p, batchv1alpha1.ReasonJobNameTooLong, err.Error()), nil
	}
	for _, old := range p.replace {
		if err := jobs.Delete(ctx, r.Client, old); err != nil {
			return outcome{}, err
		}
		r.Recorder.Eventf(sj, old, corev1.EventTypeNormal, jobs.EventJobsReplaced, jobs.ActionDelete,
			"Deleted running Job %s for the run at %s (concurrencyPolicy Replace)", old.Name, describe(sj, p.run))
	}
	job := jobs.NewJob(&sj.Spec.JobTemplate, jobs.Run{
		Name:        name,
		Namespace:   sj.Namespace,
		Owner:       sj,
		OwnerGVK:    gvk,
		Labels:      map[string]string{batchv1alpha1.LabelScheduledJob: sj.Name},
		Annotations: map[string]string{batchv1alpha1.AnnotationScheduledTime: batchv1alpha1.FormatTime(p.run)},
	})
	err := r.Client.Create(ctx, job)
	switch {
	case err == nil:
		jobs.RunsStarted.WithLabelValues(jobs.KindScheduledJob).Inc()
		jobs.ScheduleLag.Observe(r.Clock.Since(p.run).Seconds())
		ctrl.LoggerFrom(ctx).Info("Created Job", "Job", name, "slot", batchv1alpha1.FormatTime(p.run), "lag", now.Sub(p.run))
		r.Recorder.Eventf(sj, job, corev1.EventTypeNormal, jobs.EventJobCreated, jobs.ActionCreate,
			"Created Job %s for the run at %s", name, describe(sj, p.run))
		return outcome{job: job, created: true}, nil
	case apierrors.IsAlreadyExists(err):
		existing := &batchv1.Job{}
		if err := r.APIReader.Get(ctx, client.ObjectKeyFromObject(job), existing); err != nil {
			return outcome{}, fmt.Errorf("failed to get Job %s/%s: %w", sj.Namespace, name, err)
		}
		if jobs.IsControlledBy(existing, sj) {
			return outcome{job: existing}, nil
		}
		return notRun(p, batchv1alpha1.ReasonJobConflict, fmt.Sprintf(
			"Job %s exists and is not controlled by this ScheduledJob; the run at %s did not start", name, describe(sj, p.run))), nil
	case apierrors.IsInvalid(err) || apierrors.IsBadRequest(err):
		return notRun(p, batchv1alpha1.ReasonJobInvalid, fmt.Sprintf("the run at %s did not start: %v", describe(sj, p.run), err)), nil
	default:
		return outcome{}, fmt.Errorf("failed to create Job %s/%s: %w", sj.Namespace, name, err)
	}
}

// notRun counts plan.run as not run, for a condition reason.
func notRun(p *plan, reason, msg string) outcome {
	p.addMiss(p.run, reason)
	p.run, p.replace = time.Time{}, nil
	return outcome{failReason: reason, failMessage: msg}
}

// writeStatus patches status when it changed, with optimistic locking: a concurrent writer
// makes the patch fail, and the retry starts from a fresh read.
func (r *Reconciler) writeStatus(ctx context.Context, sj *batchv1alpha1.ScheduledJob, status *batchv1alpha1.ScheduledJobStatus) error {
	if equality.Semantic.DeepEqual(&sj.Status, status) {
		return nil
	}
	patched := sj.DeepCopy()
	patched.Status = *status
	if err := r.Client.Status().Patch(ctx, patched, client.MergeFromWithOptions(sj, client.MergeFromWithOptimisticLock{})); err != nil {
		return fmt.Errorf("failed to patch the status of ScheduledJob %s: %w", client.ObjectKeyFromObject(sj), err)
	}
	return nil
}
