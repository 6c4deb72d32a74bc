// Package eventjob reconciles EventJobs: it owns the downstream Jobs they create (one per
// upstream Job that reaches the trigger condition, named from the upstream Job's UID and
// controlled by the EventJob) and their status, including the watermark that records which
// upstream Jobs have been handled.
//
// It watches EventJobs, the Jobs they control, and every Job in their namespaces that
// finishes: a Job is upstream of an EventJob whose trigger names it (kind Job) or names its
// controller (kind CronJob, ScheduledJob or EventJob, so EventJobs chain). It reads the Jobs'
// Complete and Failed conditions, never core Events, which expire, are rate-limited and change
// format.
package eventjob

import (
	"context"
	"fmt"

	batchv1 "k8s.io/api/batch/v1"
	corev1 "k8s.io/api/core/v1"
	"k8s.io/apimachinery/pkg/api/equality"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	"k8s.io/apimachinery/pkg/types"
	"k8s.io/client-go/tools/events"
	"k8s.io/klog/v2"
	"k8s.io/utils/clock"
	ctrl "sigs.k8s.io/controller-runtime"
	"sigs.k8s.io/controller-runtime/pkg/client"
	"sigs.k8s.io/controller-runtime/pkg/controller"

	batchv1alpha1 "github.com/almanac-dev/almanac/api/batch/v1alpha1"
	"github.com/almanac-dev/almanac/reconcilers/jobs"
)

var gvk = batchv1alpha1.GroupVersion.WithKind("EventJob")

// Reconciler reconciles EventJobs.
type Reconciler struct {
	// Client reads Jobs and EventJobs from the cache and writes Jobs and status.
	Client client.Client
	// APIReader reads around the cache: the EventJob (its watermark is the record of what
	// was handled; a stale copy could start a run twice after its Job was pruned) and Jobs
	// the cache has not seen yet.
	APIReader client.Reader
	// Clock tells the time; tests inject a fake one.
	Clock clock.PassiveClock
	// Recorder records events on EventJobs.
	Recorder events.EventRecorder
	// Options tune the controller (tests skip the check for unique controller names).
	Options controller.Options
}

// New returns a Reconciler that uses mgr's clients and event recorder and tells time with clk.
func New(mgr ctrl.Manager, clk clock.PassiveClock) *Reconciler {
	return &Reconciler{
		Client:    mgr.GetClient(),
		APIReader: mgr.GetAPIReader(),
		Clock:     clk,
		Recorder:  mgr.GetEventRecorder("almanac-eventjob"),
	}
}

// +kubebuilder:rbac:groups=batch.almanac.dev,resources=eventjobs,verbs=get;list;watch
// +kubebuilder:rbac:groups=batch.almanac.dev,resources=eventjobs/status,verbs=patch
// +kubebuilder:rbac:groups=batch.almanac.dev,resources=eventjobs/finalizers,verbs=update
// +kubebuilder:rbac:groups=batch,resources=jobs,verbs=get;list;watch;create;delete
// +kubebuilder:rbac:groups=events.k8s.io,resources=events,verbs=create;patch

// Reconcile starts one Job for each upstream Job that reached the trigger condition and is
// not in the watermark yet, records it in the watermark, follows the Jobs into status and
// prunes history.
func (r *Reconciler) Reconcile(ctx context.Context, req ctrl.Request) (ctrl.Result, error) {
	ej := &batchv1alpha1.EventJob{}
	if err := r.APIReader.Get(ctx, req.NamespacedName, ej); err != nil {
		return ctrl.Result{}, client.IgnoreNotFound(err)
	}
	if !ej.DeletionTimestamp.IsZero() {
		return ctrl.Result{}, nil // Its Jobs go with it through their ownerReferences.
	}
	upstream, err := r.upstreamJobs(ctx, ej)
	if err != nil {
		return ctrl.Result{}, err
	}
	downstream, err := r.downstreamJobs(ctx, ej)
	if err != nil {
		return ctrl.Result{}, err
	}
	now := r.Clock.Now()
	p := decide(ej, upstream, downstream, now)
	res, err := r.execute(ctx, ej, &p)
	if err != nil {
		return ctrl.Result{}, err
	}
	current := currentJobs(downstream, res)
	status := nextStatus(ej, &p, res, upstream, current, now)
	if err := r.writeStatus(ctx, ej, status); err != nil {
		return ctrl.Result{}, err
	}
	r.report(ej, status, res, current)
	return ctrl.Result{}, jobs.Prune(ctx, r.Client, r.Recorder, ej, &ej.Spec.JobPolicy, current)
}

// upstreamJobs returns the Jobs that the trigger follows, finished or not.
func (r *Reconciler) upstreamJobs(ctx context.Context, ej *batchv1alpha1.EventJob) ([]*batchv1.Job, error) {
	t := &ej.Spec.Trigger
	if t.Kind == batchv1alpha1.TriggerKindJob {
		j := &batchv1.Job{}
		err := r.Client.Get(ctx, types.NamespacedName{Namespace: ej.Namespace, Name: t.Name}, j)
		switch {
		case apierrors.IsNotFound(err):
			return nil, nil
		case err != nil:
			return nil, fmt.Errorf("failed to get Job %s/%s: %w", ej.Namespace, t.Name, err)
		}
		return []*batchv1.Job{j}, nil
	}
	return r.listByController(ctx, ej.Namespace, t.UpstreamKey())
}

// downstreamJobs returns the Jobs that ej controls. Jobs that status lists as running and
// the cache has not seen yet are looked up directly.
func (r *Reconciler) downstreamJobs(ctx context.Context, ej *batchv1alpha1.EventJob) ([]*batchv1.Job, error) {
	all, err := r.listByController(ctx, ej.Namespace, batchv1alpha1.ControllerKey(gvk.Group, gvk.Kind, ej.Name))
	if err != nil {
		return nil, err
	}
	var owned []*batchv1.Job
	seen := map[string]bool{}
	for _, j := range all {
		if jobs.IsControlledBy(j, ej) {
			owned = append(owned, j)
			seen[j.Name] = true
		}
	}
	for _, ref := range ej.Status.Active {
		if seen[ref.Name] {
			continue
		}
		j := &batchv1.Job{}
		err := r.APIReader.Get(ctx, types.NamespacedName{Namespace: ej.Namespace, Name: ref.Name}, j)
		switch {
		case apierrors.IsNotFound(err):
		case err != nil:
			return nil, fmt.Errorf("failed to get Job %s/%s: %w", ej.Namespace, ref.Name, err)
		case jobs.IsControlledBy(j, ej):
			owned = append(owned, j)
		}
	}
	return owned, nil
}

func (r *Reconciler) listByController(ctx context.Context, namespace, key string) ([]*batchv1.Job, error) {
	list := &batchv1.JobList{}
	if err := r.Client.List(ctx, list, client.InNamespace(namespace), client.MatchingFields{batchv1alpha1.JobControllerField: key}); err != nil {
		return nil, fmt.Errorf("failed to list the Jobs of %s in %s: %w", key, namespace, err)
	}
	out := make([]*batchv1.Job, 0, len(list.Items))
	for i := range list.Items {
		out = append(out, &list.Items[i])
	}
	return out, nil
}

// execute starts the plan's runs in order. AlreadyExists on a Job we control is success: an
// earlier attempt created it. User errors (a name over budget, a Job of that name that is
// not ours, a template the API server rejects) skip the run and become the Ready condition;
// API errors are returned for a retry, and the retry finds the runs already started through
// their deterministic names.
func (r *Reconciler) execute(ctx context.Context, ej *batchv1alpha1.EventJob, p *plan) (*result, error) {
	res := &result{}
	createdNow := map[string]*batchv1.Job{}
	for _, tr := range p.triggers {
		if tr.decision == jobs.Skip {
			res.skipped = append(res.skipped, skipped{trigger: tr, reason: tr.skipReason})
			continue
		}
		name := batchv1alpha1.EventJobName(ej.Name, tr.job.UID)
		if err := batchv1alpha1.CheckJobName(name, gvk.Kind, ej.Name); err != nil {
			res.fail(tr, batchv1alpha1.ReasonJobNameTooLong, jobs.SkipNameTooLong, err.Error())
			continue
		}
		for _, old := range tr.replace {
			if j, ok := createdNow[old.Name]; ok {
				old = j
			}
			if err := jobs.Delete(ctx, r.Client, old); err != nil {
				return nil, err
			}
			res.replaced = append(res.replaced, old)
			r.Recorder.Eventf(ej, old, corev1.EventTypeNormal, jobs.EventJobsReplaced, jobs.ActionDelete,
				"Deleted running Job %s for the run of upstream Job %s (concurrencyPolicy Replace)", old.Name, tr.job.Name)
		}
		job, created, rejected, err := r.create(ctx, ej, tr, name)
		switch {
		case err != nil:
			return nil, err
		case rejected != nil:
			res.fail(tr, batchv1alpha1.ReasonJobInvalid, jobs.SkipJobInvalid, fmt.Sprintf(
				"the run for upstream Job %s did not start: %v", tr.job.Name, rejected))
		case job == nil:
			res.fail(tr, batchv1alpha1.ReasonJobConflict, jobs.SkipJobConflict, fmt.Sprintf(
				"Job %s exists and is not controlled by this EventJob; the run for upstream Job %s did not start", name, tr.job.Name))
		default:
			res.started = append(res.started, started{trigger: tr, job: job, created: created})
			createdNow[name] = job
		}
	}
	return res, nil
}

// create creates the downstream Job of a trigger. It returns the Job (nil when a Job of that
// name exists and is not ours), whether this call created it, and the API server's rejection
// of the Job built from the template, if it was rejected.
func (r *Reconciler) create(ctx context.Context, ej *batchv1alpha1.EventJob, tr trigger, name string) (job *batchv1.Job, created bool, rejected, err error) {
	job = jobs.NewJob(&ej.Spec.JobTemplate, jobs.Run{
		Name:      name,
		Namespace: ej.Namespace,
		Owner:     ej,
		OwnerGVK:  gvk,
		Labels:    map[string]string{batchv1alpha1.LabelEventJob: ej.Name, batchv1alpha1.LabelTriggerUID: string(tr.job.UID)},
		Annotations: map[string]string{
			batchv1alpha1.AnnotationTriggerJob:       tr.job.Name,
			batchv1alpha1.AnnotationTriggerUID:       string(tr.job.UID),
			batchv1alpha1.AnnotationTriggerCondition: string(tr.outcome.Type),
			batchv1alpha1.AnnotationTriggerTime:      batchv1alpha1.FormatTime(tr.outcome.Time),
		},
	})
	err = r.Client.Create(ctx, job)
	switch {
	case err == nil:
		jobs.RunsStarted.WithLabelValues(jobs.KindEventJob).Inc()
		jobs.TriggerLag.Observe(r.Clock.Since(tr.outcome.Time).Seconds())
		ctrl.LoggerFrom(ctx).Info("Created Job", "Job", name, "upstream", klog.KObj(tr.job), "condition", tr.outcome.Type)
		r.Recorder.Eventf(ej, job, corev1.EventTypeNormal, jobs.EventJobCreated, jobs.ActionCreate,
			"Created Job %s because upstream Job %s reached %s at %s", name, tr.job.Name, tr.outcome.Type, batchv1alpha1.FormatTime(tr.outcome.Time))
		return job, true, nil, nil
	case apierrors.IsAlreadyExists(err):
		existing := &batchv1.Job{}
		if err := r.APIReader.Get(ctx, client.ObjectKeyFromObject(job), existing); err != nil {
			return nil, false, nil, fmt.Errorf("failed to get Job %s/%s: %w", ej.Namespace, name, err)
		}
		if jobs.IsControlledBy(existing, ej) {
			return existing, false, nil, nil
		}
		return nil, false, nil, nil
	case apierrors.IsInvalid(err) || apierrors.IsBadRequest(err):
		return nil, false, err, nil
	default:
		return nil, false, nil, fmt.Errorf("failed to create Job %s/%s: %w", ej.Namespace, name, err)
	}
}

// writeStatus patches status when it changed, with optimistic locking: a concurrent writer
// makes the patch fail, and the retry starts from a fresh read.
func (r *Reconciler) writeStatus(ctx context.Context, ej *batchv1alpha1.EventJob, status *batchv1alpha1.EventJobStatus) error {
	if equality.Semantic.DeepEqual(&ej.Status, status) {
		return nil
	}
	patched := ej.DeepCopy()
	patched.Status = *status
	if err := r.Client.Status().Patch(ctx, patched, client.MergeFromWithOptions(ej, client.MergeFromWithOptimisticLock{})); err != nil {
		return fmt.Errorf("failed to patch the status of EventJob %s: %w", client.ObjectKeyFromObject(ej), err)
	}
	return nil
}

// fail records a trigger whose Job could not be created.
func (res *result) fail(tr trigger, reason, skipReason, msg string) {
	res.skipped = append(res.skipped, skipped{trigger: tr, reason: skipReason})
	res.failReason, res.failMessage = reason, msg
}
