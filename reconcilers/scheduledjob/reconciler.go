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
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	"k8s.io/utils/clock"
	ctrl "sigs.k8s.io/controller-runtime"
	"sigs.k8s.io/controller-runtime/pkg/builder"
	"sigs.k8s.io/controller-runtime/pkg/client"
	"sigs.k8s.io/controller-runtime/pkg/event"
	"sigs.k8s.io/controller-runtime/pkg/handler"
	"sigs.k8s.io/controller-runtime/pkg/predicate"
	"sigs.k8s.io/controller-runtime/pkg/reconcile"

	batchv1alpha1 "github.com/almanac-dev/almanac/api/batch/v1alpha1"
	calendarv1alpha1 "github.com/almanac-dev/almanac/api/calendar/v1alpha1"
	"github.com/almanac-dev/almanac/api/timing"
	"github.com/almanac-dev/almanac/reconcilers/base"
	"github.com/almanac-dev/almanac/reconcilers/jobs"
)

var gvk = batchv1alpha1.GroupVersion.WithKind("ScheduledJob")

// controllerName names the controller, its metrics and its lane.
const controllerName = "scheduledjob"

// DefaultWorkers is how many ScheduledJobs are reconciled at once unless
// Options.MaxConcurrentReconciles says otherwise (the manager's --scheduledjob-workers): Jobs
// that share a slot (09:00, midnight) are created side by side, not one after another.
const DefaultWorkers = 32

// Reconciler reconciles ScheduledJobs.
type Reconciler struct {
	base.Base
	// releaser removes the outcome finalizer from the Jobs whose runs status records.
	releaser jobs.Releaser
}

// New returns a Reconciler that uses mgr's clients and event recorder and tells time with clk.
func New(mgr ctrl.Manager, clk clock.PassiveClock, opts ...base.Option) *Reconciler {
	b := base.NewBase(mgr, clk, "almanac-scheduledjob", opts...)
	b.Records = base.NewRecords()
	return &Reconciler{Base: b}
}

// SetupWithManager registers the reconciler with mgr, whose cache must have the index
// batchv1alpha1.JobControllerField (api/index).
func (r *Reconciler) SetupWithManager(mgr ctrl.Manager) error {
	b := ctrl.NewControllerManagedBy(mgr).
		// Our own status writes change no generation and need no reconcile; a run-now
		// request is an annotation.
		For(&batchv1alpha1.ScheduledJob{}, builder.WithPredicates(predicate.Or(predicate.GenerationChangedPredicate{}, runNowChanged))).
		Owns(&batchv1.Job{})
	// A calendar's creation, edit or deletion moves the next run of the ScheduledJobs that
	// name it.
	byCalendar := handler.EnqueueRequestsFromMapFunc(base.CalendarUsers(mgr.GetClient(),
		func() *batchv1alpha1.ScheduledJobList { return &batchv1alpha1.ScheduledJobList{} }, scheduledJobRequests))
	b = b.Watches(&calendarv1alpha1.Calendar{}, byCalendar, builder.WithPredicates(predicate.GenerationChangedPredicate{})).
		Watches(&calendarv1alpha1.ClusterCalendar{}, byCalendar, builder.WithPredicates(predicate.GenerationChangedPredicate{}))
	return r.Complete(b, controllerName, DefaultWorkers, r)
}

// scheduledJobRequests maps ScheduledJobs to requests for themselves.
func scheduledJobRequests(list *batchv1alpha1.ScheduledJobList) []reconcile.Request {
	out := make([]reconcile.Request, len(list.Items))
	for i := range list.Items {
		out[i] = reconcile.Request{NamespacedName: client.ObjectKeyFromObject(&list.Items[i])}
	}
	return out
}

// runNowChanged passes the updates that change the run-now annotation.
var runNowChanged = predicate.Funcs{
	UpdateFunc: func(e event.UpdateEvent) bool {
		return e.ObjectOld != nil && e.ObjectNew != nil &&
			batchv1alpha1.RunNowToken(e.ObjectOld) != batchv1alpha1.RunNowToken(e.ObjectNew)
	},
	CreateFunc:  func(event.CreateEvent) bool { return false },
	DeleteFunc:  func(event.DeleteEvent) bool { return false },
	GenericFunc: func(event.GenericEvent) bool { return false },
}

// +kubebuilder:rbac:groups=batch.almanac.dev,resources=scheduledjobs,verbs=get;list;watch
// +kubebuilder:rbac:groups=batch.almanac.dev,resources=scheduledjobs/status,verbs=patch
// +kubebuilder:rbac:groups=batch.almanac.dev,resources=scheduledjobs/finalizers,verbs=update
// +kubebuilder:rbac:groups=batch,resources=jobs,verbs=get;list;watch;create;delete;patch
// +kubebuilder:rbac:groups=events.k8s.io,resources=events,verbs=create;patch

// Reconcile starts the Job of a due slot, records missed slots, follows the Jobs into status,
// prunes history, and asks to be woken at the next slot.
func (r *Reconciler) Reconcile(ctx context.Context, req ctrl.Request) (ctrl.Result, error) {
	sj := &batchv1alpha1.ScheduledJob{}
	if err := r.ReadRecord(ctx, req.NamespacedName, sj); err != nil {
		if apierrors.IsNotFound(err) {
			base.ForgetSuspension(gvk.Kind, req.NamespacedName)
			// Its Jobs go with it through their ownerReferences.
			return base.Retry(ctx, r.releaseOrphans(ctx, req.Namespace, req.Name), ctrl.Result{})
		}
		return base.Retry(ctx, err, ctrl.Result{})
	}
	if !sj.DeletionTimestamp.IsZero() {
		return base.Retry(ctx, r.releaseOrphans(ctx, sj.Namespace, sj.Name), ctrl.Result{})
	}
	book, err := base.ReadCalendars(ctx, r.Client, sj.Namespace, sj.Spec.Calendars)
	if err != nil {
		return base.Retry(ctx, err, ctrl.Result{})
	}
	sched := compile(sj, book) // once: every step below reads it
	owned, earlier, err := r.ownedJobs(ctx, sj, sched)
	if err != nil {
		return base.Retry(ctx, err, ctrl.Result{})
	}
	resumed, err := r.resumedAt(ctx, sj)
	if err != nil {
		return base.Retry(ctx, err, ctrl.Result{})
	}
	now := r.Clock.Now()
	r.TrackSuspension(ctx, gvk.Kind, sj, sj.Spec.Suspend, now)
	p := decide(sj, sched, owned, resumed, now, newBudget(ctx))
	out, err := r.execute(ctx, sj, &p, earlier, now)
	if err != nil {
		return base.Retry(ctx, err, ctrl.Result{})
	}
	status := nextStatus(sj, &p, out, owned, now)
	written := sj.DeepCopy()
	written.Status = *status
	if _, err := r.WriteRecord(ctx, gvk.Kind, sj, written); err != nil {
		// A refused record (an admission policy on the status) waits for the next slot at
		// the latest: the Job of that slot is created then, on time, whatever happened to
		// this one's record (its Job's name and finalizer keep it from running twice).
		return base.Retry(ctx, err, r.nextSlot(&p, now))
	}
	current := currentJobs(owned, &p, out)
	r.report(sj, status, &p, out, current)
	if err := r.releaseRecorded(ctx, sj, status, &p, current); err != nil {
		return base.Retry(ctx, err, r.nextSlot(&p, now))
	}
	if err := jobs.Prune(ctx, r.Client, r.Recorder, sj, &sj.Spec.JobPolicy, current); err != nil {
		return base.Retry(ctx, err, r.nextSlot(&p, now))
	}
	if out.refused != nil {
		// The run's Job was refused (Ready says so): the slot is still due.
		return base.Retry(ctx, out.refused, r.nextSlot(&p, now))
	}
	switch {
	case p.requeueAfter == 0:
		return ctrl.Result{}, nil // a change of a Job, the spec or a calendar brings the reconciler back
	case p.more:
		return ctrl.Result{RequeueAfter: p.requeueAfter}, nil // the rest of the slots since the watermark, at once
	}
	return r.nextSlot(&p, now), nil
}

// nextSlot is the wake-up at the plan's next slot (none: Job events bring the reconciler
// back). The writes of the reconcile took time: the wait is measured from the clock now, so
// that the wake-up lands on the slot instead of late by the reconcile's duration. The rest of
// a long walk since the watermark (p.more) is no instant: a request refused meanwhile waits
// base.RefusalRetry.
func (r *Reconciler) nextSlot(p *plan, now time.Time) ctrl.Result {
	if p.requeueAfter == 0 || p.more {
		return ctrl.Result{}
	}
	return base.RequeueAt(now.Add(p.requeueAfter), r.Clock.Now())
}

// resumedAt returns the instant sj was resumed, when status says suspended and the spec no
// longer does: the cache drops managedFields, which hold the time of the write, so the
// ScheduledJob is read around it, once per resume. Zero otherwise.
func (r *Reconciler) resumedAt(ctx context.Context, sj *batchv1alpha1.ScheduledJob) (time.Time, error) {
	if sj.Spec.Suspend || !recordedSuspended(&sj.Status) {
		return time.Time{}, nil
	}
	fresh := &batchv1alpha1.ScheduledJob{}
	if err := r.APIReader.Get(ctx, client.ObjectKeyFromObject(sj), fresh); err != nil {
		return time.Time{}, fmt.Errorf("failed to read ScheduledJob %s for the time of its resume: %w", client.ObjectKeyFromObject(sj), err)
	}
	t, _ := batchv1alpha1.ResumedAt(fresh)
	return t, nil
}

// ownedJobs returns the Jobs that sj controls, with those that status lists as active and the
// one-shot's Job read around the cache when the cache has not seen them yet, and the Jobs of
// an earlier ScheduledJob of its name, which sj replaced (jobs.Owned).
func (r *Reconciler) ownedJobs(ctx context.Context, sj *batchv1alpha1.ScheduledJob, sched compiled) (owned, earlier []*batchv1.Job, err error) {
	var expected []string
	for _, ref := range sj.Status.Active {
		expected = append(expected, ref.Name)
	}
	if s := sched.s; s != nil && s.OneShot() {
		expected = append(expected, batchv1alpha1.ScheduledJobName(sj.Name, s.Due))
	}
	return jobs.Owned(ctx, r.Client, r.APIReader, sj, gvk.Kind, expected)
}

// execute runs the plan: the release of the Jobs of an earlier ScheduledJob of its name, the
// Job of the due slot (executeSlot), then the Job of the run-now request (executeRunNow).
func (r *Reconciler) execute(ctx context.Context, sj *batchv1alpha1.ScheduledJob, p *plan, earlier []*batchv1.Job, now time.Time) (outcome, error) {
	// Their runs were the replaced ScheduledJob's, whose status went with it.
	if err := r.releaser.ReleaseEarlier(ctx, r.Client, r.APIReader, sj, gvk, earlier); err != nil {
		return outcome{}, err
	}
	out, err := r.executeSlot(ctx, sj, p, now)
	if err != nil {
		return outcome{}, err
	}
	if err := r.executeRunNow(ctx, sj, p, now, &out); err != nil {
		return outcome{}, err
	}
	return out, nil
}

// executeRunNow deletes the Jobs that Replace replaces and creates the Job of the run-now
// request, or records why it did not (outcome.runNowRefused). AlreadyExists on a Job we
// control is success: an earlier attempt created it.
func (r *Reconciler) executeRunNow(ctx context.Context, sj *batchv1alpha1.ScheduledJob, p *plan, now time.Time, out *outcome) error {
	rn := &p.now
	switch {
	case !rn.handled():
		return nil
	case rn.found != nil:
		out.runNowJob = rn.found
		return nil
	case rn.refused != "":
		out.runNowRefused = rn.refused
		r.Recorder.Eventf(sj, nil, corev1.EventTypeWarning, jobs.EventRunNowRefused, jobs.ActionCreate,
			"No Job started for run-now token %q: %s", rn.token, rn.refused)
		return nil
	}
	for _, old := range rn.replace {
		if err := jobs.Delete(ctx, r.Client, old); err != nil {
			if !base.Refused(err) {
				return err
			}
			out.runNowRefused = fmt.Sprintf("the API server refused to delete the Job it replaces: %v", err)
			r.Recorder.Eventf(sj, nil, corev1.EventTypeWarning, jobs.EventRunNowRefused, jobs.ActionCreate,
				"No Job started for run-now token %q: %s", rn.token, out.runNowRefused)
			return nil
		}
		r.Recorder.Eventf(sj, old, corev1.EventTypeNormal, jobs.EventJobsReplaced, jobs.ActionDelete,
			"Deleted running Job %s for run-now token %q (concurrencyPolicy Replace)", old.Name, rn.token)
	}
	at := batchv1alpha1.FormatTime(now)
	job := jobs.NewJob(&sj.Spec.JobTemplate, jobs.Run{
		Name:      rn.name,
		Namespace: sj.Namespace,
		Owner:     sj,
		OwnerGVK:  gvk,
		Labels:    map[string]string{batchv1alpha1.LabelScheduledJob: sj.Name},
		Annotations: map[string]string{
			batchv1alpha1.AnnotationScheduledTime: at,
			batchv1alpha1.AnnotationRunNowToken:   rn.token,
		},
	})
	c, err := jobs.Create(ctx, r.Client, r.APIReader, sj, job)
	switch {
	case base.Refused(err):
		// A request, not a slot: it is answered now, and a new token asks again.
		out.runNowRefused = fmt.Sprintf("the API server refused its Job: %v", err)
	case err != nil:
		return err
	case c.Earlier != nil:
		// The replaced ScheduledJob's Job of this token: the request waits until it is gone
		// (its deletion brings the next reconcile), and stays unrecorded until then.
		rn.deferred = true
		return r.releaser.ReleaseEarlier(ctx, r.Client, r.APIReader, sj, gvk, []*batchv1.Job{c.Earlier})
	case c.Conflict:
		out.runNowRefused = fmt.Sprintf("Job %s exists and is not controlled by this ScheduledJob", rn.name)
	case c.Rejected != nil:
		out.runNowRefused = fmt.Sprintf("the API server rejected its Job: %v", c.Rejected)
	default:
		out.runNowJob = c.Job
		if c.Created {
			jobs.RunsStarted.WithLabelValues(jobs.KindScheduledJob).Inc()
			ctrl.LoggerFrom(ctx).Info("Created Job", "Job", rn.name, "runNow", rn.token)
			r.Recorder.Eventf(sj, c.Job, corev1.EventTypeNormal, jobs.EventJobCreated, jobs.ActionCreate,
				"Created Job %s for run-now token %q", rn.name, rn.token)
		}
		return nil
	}
	r.Recorder.Eventf(sj, nil, corev1.EventTypeWarning, jobs.EventRunNowRefused, jobs.ActionCreate,
		"No Job started for run-now token %q: %s", rn.token, out.runNowRefused)
	return nil
}

// executeSlot deletes the Jobs that Replace replaces and creates the Job of plan.run. AlreadyExists
// on a Job we control is success: an earlier attempt created it. User errors (a name over
// budget, a Job of that name that is not ours, a template the API server rejects) count the
// slot as not run and become the Ready condition; API errors are returned for a retry.
func (r *Reconciler) executeSlot(ctx context.Context, sj *batchv1alpha1.ScheduledJob, p *plan, now time.Time) (outcome, error) {
	if p.run.IsZero() {
		return outcome{}, nil
	}
	name := batchv1alpha1.ScheduledJobName(sj.Name, p.run)
	if err := batchv1alpha1.CheckJobName(name, gvk.Kind, sj.Name); err != nil {
		return notRun(p, batchv1alpha1.ReasonJobNameTooLong, err.Error()), nil
	}
	for _, old := range p.replace {
		if err := jobs.Delete(ctx, r.Client, old); err != nil {
			if base.Refused(err) {
				return refusedRun(p, err), nil
			}
			return outcome{}, err
		}
		r.Recorder.Eventf(sj, old, corev1.EventTypeNormal, jobs.EventJobsReplaced, jobs.ActionDelete,
			"Deleted running Job %s for the run at %s (concurrencyPolicy Replace)", old.Name, p.describe(p.run))
	}
	job := jobs.NewJob(&sj.Spec.JobTemplate, jobs.Run{
		Name:        name,
		Namespace:   sj.Namespace,
		Owner:       sj,
		OwnerGVK:    gvk,
		Labels:      map[string]string{batchv1alpha1.LabelScheduledJob: sj.Name},
		Annotations: map[string]string{batchv1alpha1.AnnotationScheduledTime: batchv1alpha1.FormatTime(p.run)},
	})
	c, err := jobs.Create(ctx, r.Client, r.APIReader, sj, job)
	switch {
	case base.Refused(err):
		return refusedRun(p, err), nil
	case err != nil:
		return outcome{}, err
	case c.Earlier != nil:
		if err := r.releaser.ReleaseEarlier(ctx, r.Client, r.APIReader, sj, gvk, []*batchv1.Job{c.Earlier}); err != nil {
			return outcome{}, err
		}
		return waitForEarlier(sj, p, c.Earlier, now), nil
	case c.Conflict:
		return notRun(p, batchv1alpha1.ReasonJobConflict, fmt.Sprintf(
			"Job %s exists and is not controlled by this ScheduledJob; the run at %s did not start", name, p.describe(p.run))), nil
	case c.Rejected != nil:
		return notRun(p, batchv1alpha1.ReasonJobInvalid, fmt.Sprintf("the run at %s did not start: %v", p.describe(p.run), c.Rejected)), nil
	case c.Created:
		jobs.RunsStarted.WithLabelValues(jobs.KindScheduledJob).Inc()
		jobs.ScheduleLag.Observe(r.Clock.Since(p.run).Seconds())
		ctrl.LoggerFrom(ctx).Info("Created Job", "Job", name, "slot", batchv1alpha1.FormatTime(p.run), "lag", now.Sub(p.run))
		r.Recorder.Eventf(sj, c.Job, corev1.EventTypeNormal, jobs.EventJobCreated, jobs.ActionCreate,
			"Created Job %s for the run at %s", name, p.describe(p.run))
		return outcome{job: c.Job, created: true}, nil
	default:
		return outcome{job: c.Job}, nil
	}
}

// releaseRecorded releases the Jobs (jobs.Releaser) whose runs status (just written) records:
// every Job of a cron schedule (lastScheduleTime covers each), the one-shot's Job once status
// records how it ended too, and a Job of an earlier at.
func (r *Reconciler) releaseRecorded(ctx context.Context, sj *batchv1alpha1.ScheduledJob, st *batchv1alpha1.ScheduledJobStatus, p *plan, current []*batchv1.Job) error {
	for _, j := range current {
		if batchv1alpha1.IsRunNowJob(sj.Name, j.Annotations, j.Name) {
			if !runNowRecorded(sj, st, j) {
				continue
			}
			if err := r.releaser.Release(ctx, r.Client, j); err != nil {
				return err
			}
			continue
		}
		ours := isOneShotJob(p.sched.s, sj.Name, j)
		if ours && st.Phase != batchv1alpha1.ScheduledJobPhaseSucceeded && st.Phase != batchv1alpha1.ScheduledJobPhaseFailed {
			continue
		}
		if err := r.releaser.Release(ctx, r.Client, j); err != nil {
			return err
		}
	}
	return nil
}

// releaseOrphans releases the Jobs of a ScheduledJob that is gone or being deleted: nothing
// will record their runs or outcomes.
func (r *Reconciler) releaseOrphans(ctx context.Context, namespace, name string) error {
	return r.releaser.ReleaseAll(ctx, r.Client, namespace, batchv1alpha1.ControllerKey(gvk.Group, gvk.Kind, name))
}

// refusedRun leaves plan.run to a later reconcile: the API server refused a request of its
// run (err: creating its Job, deleting a Job that Replace replaces). The slot is not counted;
// it stays due, and runs when the refusal is lifted while its starting deadline allows.
func refusedRun(p *plan, err error) outcome {
	out := outcome{refused: err, refusedRun: p.run}
	p.run, p.replace = time.Time{}, nil
	return out
}

// notRun counts plan.run as not run, for a condition reason.
func notRun(p *plan, reason, msg string) outcome {
	p.addMiss(p.run, reason)
	p.run, p.replace = time.Time{}, nil
	return outcome{failReason: reason, failMessage: msg}
}

// waitForEarlier leaves plan.run unstarted and unrecorded while a Job of its name that an
// earlier ScheduledJob of this name controls (it was replaced: kubectl replace --force, a
// delete and re-apply) is still there: released, the garbage collector deletes it, and its
// deletion brings the reconcile that starts the run. The run may wait as long as its starting
// deadline lets it start; the reconciler looks again when that ends, and a run still waiting
// then is missed (MissDeadline), as any run that could not start in time.
func waitForEarlier(sj *batchv1alpha1.ScheduledJob, p *plan, earlier *batchv1.Job, now time.Time) outcome {
	slot := p.run
	p.run, p.replace = time.Time{}, nil
	if p.next.IsZero() || slot.Before(p.next) {
		p.next = slot
	}
	if end := timing.LastStart(slot, sj.Spec.StartingDeadline()).Sub(now) + time.Second; p.requeueAfter == 0 || end < p.requeueAfter {
		p.requeueAfter = end
	}
	return outcome{waiting: fmt.Sprintf("The run at %s waits for Job %s, which a ScheduledJob of this name that was deleted (replaced) created, to be deleted "+
		"(the garbage collector deletes it); it starts then, if by %s (startingDeadlineSeconds %d)",
		p.describe(slot), earlier.Name, p.describe(timing.LastStart(slot, sj.Spec.StartingDeadline())), sj.Spec.StartingDeadline())}
}
