// Package eventjob reconciles EventJobs: it owns the downstream Jobs they create (one per
// upstream Job that reaches the trigger condition, named from the upstream Job's UID; or, with
// spec.triggers, one per set of upstream runs, named from the set's slot: fanin.go; each
// controlled by the EventJob) and their status, including the watermark that records which
// upstream Jobs have been handled and the record of the sets.
//
// It watches EventJobs, the Jobs they control, and every Job in their namespaces that
// finishes: a Job is upstream of an EventJob one of whose triggers names it (kind Job) or
// names its controller (kind CronJob, ScheduledJob or EventJob, so EventJobs chain). It reads the Jobs'
// Complete and Failed conditions, never core Events, which expire, are rate-limited and change
// format.
package eventjob

import (
	"context"
	"fmt"
	"strings"
	"time"

	batchv1 "k8s.io/api/batch/v1"
	corev1 "k8s.io/api/core/v1"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	"k8s.io/apimachinery/pkg/types"
	"k8s.io/klog/v2"
	"k8s.io/utils/clock"
	ctrl "sigs.k8s.io/controller-runtime"
	"sigs.k8s.io/controller-runtime/pkg/client"

	batchv1alpha1 "github.com/almanac-dev/almanac/api/batch/v1alpha1"
	"github.com/almanac-dev/almanac/reconcilers/base"
	"github.com/almanac-dev/almanac/reconcilers/jobs"
)

var gvk = batchv1alpha1.GroupVersion.WithKind("EventJob")

// controllerName names the controller, its metrics and its lane.
const controllerName = "eventjob"

// DefaultWorkers is how many EventJobs are reconciled at once unless
// Options.MaxConcurrentReconciles says otherwise (the manager's --eventjob-workers): upstream
// Jobs often finish together (the Jobs of one slot), and each follower's Job is created side
// by side with the others.
const DefaultWorkers = 32

// Reconciler reconciles EventJobs.
type Reconciler struct {
	base.Base
	// releaser removes the outcome finalizer from the Jobs whose runs status records.
	releaser jobs.Releaser
}

// New returns a Reconciler that uses mgr's clients and event recorder and tells time with clk.
func New(mgr ctrl.Manager, clk clock.PassiveClock, opts ...base.Option) *Reconciler {
	b := base.NewBase(mgr, clk, "almanac-eventjob", opts...)
	b.Records = base.NewRecords()
	return &Reconciler{Base: b}
}

// +kubebuilder:rbac:groups=batch.almanac.dev,resources=eventjobs,verbs=get;list;watch
// +kubebuilder:rbac:groups=batch.almanac.dev,resources=eventjobs/status,verbs=patch
// +kubebuilder:rbac:groups=batch.almanac.dev,resources=eventjobs/finalizers,verbs=update
// +kubebuilder:rbac:groups=batch,resources=jobs,verbs=get;list;watch;create;delete;patch
// +kubebuilder:rbac:groups=events.k8s.io,resources=events,verbs=create;patch

// Reconcile starts one Job for each upstream Job that reached the trigger condition and is
// not in the watermark yet, records it in the watermark, follows the Jobs into status and
// prunes history.
func (r *Reconciler) Reconcile(ctx context.Context, req ctrl.Request) (ctrl.Result, error) {
	ej := &batchv1alpha1.EventJob{}
	if err := r.ReadRecord(ctx, req.NamespacedName, ej); err != nil {
		if apierrors.IsNotFound(err) {
			base.ForgetSuspension(gvk.Kind, req.NamespacedName)
			// Its Jobs go with it through their ownerReferences, once released.
			return base.Retry(ctx, r.releaseOrphans(ctx, req.Namespace, req.Name), ctrl.Result{})
		}
		return base.Retry(ctx, err, ctrl.Result{})
	}
	if !ej.DeletionTimestamp.IsZero() {
		return base.Retry(ctx, r.releaseOrphans(ctx, ej.Namespace, ej.Name), ctrl.Result{})
	}
	upstream, err := r.upstreamJobs(ctx, ej)
	if err != nil {
		return base.Retry(ctx, err, ctrl.Result{})
	}
	downstream, earlier, err := r.downstreamJobs(ctx, ej)
	if err != nil {
		return base.Retry(ctx, err, ctrl.Result{})
	}
	now := r.Clock.Now()
	r.TrackSuspension(ctx, gvk.Kind, ej, ej.Spec.Suspend, now)
	p, err := r.plan(ctx, ej, upstream, downstream, now)
	if err != nil {
		return base.Retry(ctx, err, ctrl.Result{})
	}
	// Their runs were the replaced EventJob's, whose watermark went with it.
	if err := r.releaser.ReleaseEarlier(ctx, r.Client, r.APIReader, ej, gvk, earlier); err != nil {
		return base.Retry(ctx, err, ctrl.Result{})
	}
	res, err := start(ctx, ej, &p, apiActions{r: r, ej: ej})
	if err != nil {
		return base.Retry(ctx, err, ctrl.Result{})
	}
	current := currentJobs(downstream, res)
	status := nextStatus(ej, &p, res, upstream, current, now)
	written := ej.DeepCopy()
	written.Status = *status
	if _, err := r.WriteRecord(ctx, gvk.Kind, ej, written); err != nil {
		// Refused (an admission policy on the status): the next upstream Job that finishes
		// brings a reconcile at once; the runs started are found again by their names.
		return base.Retry(ctx, err, ctrl.Result{})
	}
	r.report(ej, status, &p, res, current)
	// The watermark just written records the run of every downstream Job.
	for _, j := range current {
		if err := r.releaser.Release(ctx, r.Client, j); err != nil {
			return base.Retry(ctx, err, ctrl.Result{})
		}
	}
	if err := jobs.Prune(ctx, r.Client, r.Recorder, ej, &ej.Spec.JobPolicy, current); err != nil {
		return base.Retry(ctx, err, ctrl.Result{})
	}
	// A refused Job (Ready says so) is tried again a minute later, or when an upstream Job
	// or the EventJob changes. A set that waits is judged again when it expires.
	var wake ctrl.Result
	if p.fanIn != nil {
		wake = base.RequeueAt(p.fanIn.next, r.Clock.Now())
	}
	return base.Retry(ctx, res.refused, wake)
}

// plan decides what ej does now (decide), with what is wrong with its chain of
// EventJob triggers: the rule of chains, up from ej only (every EventJob below checks its own
// chain, before it starts a Job; at most MaxTriggerChain reads). The chain is read from the
// cache; only when the plan starts a run is it read again around the cache, and the plan made
// again with what that finds, so that a cycle closed, or a chain made too long, a moment ago
// stops the run, while a reconcile that starts nothing (the status changes of ej's own Jobs)
// reads nothing around the cache.
func (r *Reconciler) plan(ctx context.Context, ej *batchv1alpha1.EventJob, upstream, downstream []*batchv1.Job, now time.Time) (plan, error) {
	chain, err := checkChain(ctx, r.Client, ej)
	if err != nil {
		return plan{}, err
	}
	p := decide(ej, upstream, downstream, chain, now)
	if !p.startsRun() {
		return p, nil
	}
	if chain, err = checkChain(ctx, r.APIReader, ej); err != nil {
		return plan{}, err
	}
	return decide(ej, upstream, downstream, chain, now), nil
}

// checkChain applies batchv1alpha1.CheckTriggerChain to ej, reading the EventJobs above it
// with c.
func checkChain(ctx context.Context, c client.Reader, ej *batchv1alpha1.EventJob) (*batchv1alpha1.TriggerChainError, error) {
	return batchv1alpha1.CheckTriggerChain(ej, func(name string) (*batchv1alpha1.EventJob, error) {
		up := &batchv1alpha1.EventJob{}
		if err := c.Get(ctx, types.NamespacedName{Namespace: ej.Namespace, Name: name}, up); err != nil {
			if apierrors.IsNotFound(err) {
				return nil, nil
			}
			return nil, fmt.Errorf("failed to get EventJob %s/%s: %w", ej.Namespace, name, err)
		}
		return up, nil
	}, nil)
}

// releaseOrphans releases the Jobs of an EventJob that is gone or being deleted: nothing will
// record their runs.
func (r *Reconciler) releaseOrphans(ctx context.Context, namespace, name string) error {
	return r.releaser.ReleaseAll(ctx, r.Client, namespace, batchv1alpha1.ControllerKey(gvk.Group, gvk.Kind, name))
}

// upstreamJobs returns the Jobs that the triggers follow, finished or not: for each trigger,
// one read from the cache (a Get of a named Job, or a List through the index
// batchv1alpha1.JobControllerField), so that a reconcile reads at most MaxTriggers times,
// and what it reads is bounded by the upstream objects' own history limits.
func (r *Reconciler) upstreamJobs(ctx context.Context, ej *batchv1alpha1.EventJob) ([]*batchv1.Job, error) {
	var out []*batchv1.Job
	for _, t := range ej.TriggerList() {
		if t.Kind != batchv1alpha1.TriggerKindJob {
			list, err := jobs.List(ctx, r.Client, ej.Namespace, t.UpstreamKey())
			if err != nil {
				return nil, err
			}
			out = append(out, list...)
			continue
		}
		j := &batchv1.Job{}
		err := r.Client.Get(ctx, types.NamespacedName{Namespace: ej.Namespace, Name: t.Name}, j)
		switch {
		case apierrors.IsNotFound(err):
		case err != nil:
			return nil, fmt.Errorf("failed to get Job %s/%s: %w", ej.Namespace, t.Name, err)
		default:
			out = append(out, j)
		}
	}
	return out, nil
}

// downstreamJobs returns the Jobs that ej controls, with those that status lists as running
// read around the cache when the cache has not seen them yet, and the Jobs of an earlier
// EventJob of its name, which ej replaced (jobs.Owned).
func (r *Reconciler) downstreamJobs(ctx context.Context, ej *batchv1alpha1.EventJob) (downstream, earlier []*batchv1.Job, err error) {
	var expected []string
	for _, ref := range ej.Status.Active {
		expected = append(expected, ref.Name)
	}
	return jobs.Owned(ctx, r.Client, r.APIReader, ej, gvk.Kind, expected)
}

// apiActions are the actions of a reconcile against the API server.
type apiActions struct {
	r  *Reconciler
	ej *batchv1alpha1.EventJob
}

func (a apiActions) replace(ctx context.Context, old *batchv1.Job, tr trigger) error {
	if err := jobs.Delete(ctx, a.r.Client, old); err != nil {
		return err
	}
	a.r.Recorder.Eventf(a.ej, old, corev1.EventTypeNormal, jobs.EventJobsReplaced, jobs.ActionDelete,
		"Deleted running Job %s for the run of %s (concurrencyPolicy Replace)", old.Name, tr.describe())
	return nil
}

func (a apiActions) create(ctx context.Context, tr trigger, name string) (jobs.Creation, error) {
	return a.r.create(ctx, a.ej, tr, name)
}

// runJob builds the downstream Job named name of a run. The Job of an upstream Job carries
// its name, namespace, UID, condition and time, and its slot when it has one
// (batchv1alpha1.SlotOf: so that an EventJob below pairs by slot too); the Job of a set, the
// set's key, its slot (pairBy Slot), its upstream Jobs' names, UIDs and conditions in the
// order of spec.triggers, and the time of the run that completed it.
func runJob(ej *batchv1alpha1.EventJob, tr trigger, name string) *batchv1.Job {
	labels := map[string]string{batchv1alpha1.LabelEventJob: ej.Name}
	annotations := map[string]string{
		batchv1alpha1.AnnotationTriggerNamespace: ej.Namespace,
		batchv1alpha1.AnnotationTriggerTime:      batchv1alpha1.FormatTime(tr.outcome.Time),
	}
	if s := tr.set; s != nil {
		annotations[batchv1alpha1.AnnotationFanInSet] = s.Key
		if !strings.Contains(s.Key, "/") {
			annotations[batchv1alpha1.AnnotationScheduledTime] = s.Key
		}
		var names, uids, conds []string
		for _, m := range sortedMembers(s) {
			names, uids, conds = append(names, m.JobName), append(uids, string(m.UID)), append(conds, m.Condition)
		}
		annotations[batchv1alpha1.AnnotationTriggerJobs] = strings.Join(names, ",")
		annotations[batchv1alpha1.AnnotationTriggerUIDs] = strings.Join(uids, ",")
		annotations[batchv1alpha1.AnnotationTriggerConditions] = strings.Join(conds, ",")
	} else {
		labels[batchv1alpha1.LabelTriggerUID] = string(tr.job.UID)
		annotations[batchv1alpha1.AnnotationTriggerJob] = tr.job.Name
		annotations[batchv1alpha1.AnnotationTriggerNamespace] = tr.job.Namespace
		annotations[batchv1alpha1.AnnotationTriggerUID] = string(tr.job.UID)
		annotations[batchv1alpha1.AnnotationTriggerCondition] = string(tr.outcome.Type)
		if slot, ok := batchv1alpha1.SlotOf(tr.job); ok {
			annotations[batchv1alpha1.AnnotationScheduledTime] = batchv1alpha1.FormatTime(slot)
		}
	}
	return jobs.NewJob(&ej.Spec.JobTemplate, jobs.Run{
		Name:        name,
		Namespace:   ej.Namespace,
		Owner:       ej,
		OwnerGVK:    gvk,
		Labels:      labels,
		Annotations: annotations,
	})
}

// create creates the downstream Job of a trigger (see jobs.Create).
func (r *Reconciler) create(ctx context.Context, ej *batchv1alpha1.EventJob, tr trigger, name string) (jobs.Creation, error) {
	job := runJob(ej, tr, name)
	c, err := jobs.Create(ctx, r.Client, r.APIReader, ej, job)
	if err == nil && c.Earlier != nil {
		err = r.releaser.ReleaseEarlier(ctx, r.Client, r.APIReader, ej, gvk, []*batchv1.Job{c.Earlier})
	}
	if err == nil && c.Created {
		jobs.RunsStarted.WithLabelValues(jobs.KindEventJob).Inc()
		jobs.TriggerLag.Observe(r.Clock.Since(tr.outcome.Time).Seconds())
		if tr.set != nil {
			ctrl.LoggerFrom(ctx).Info("Created Job", "Job", name, "set", tr.set.Key, "completedBy", klog.KObj(tr.job), "condition", tr.outcome.Type)
			r.Recorder.Eventf(ej, job, corev1.EventTypeNormal, jobs.EventJobCreated, jobs.ActionCreate,
				"Created Job %s for %s, complete when upstream Job %s reached %s at %s", name, describeSet(tr.set), tr.job.Name, tr.outcome.Type, batchv1alpha1.FormatTime(tr.outcome.Time))
		} else {
			ctrl.LoggerFrom(ctx).Info("Created Job", "Job", name, "upstream", klog.KObj(tr.job), "condition", tr.outcome.Type)
			r.Recorder.Eventf(ej, job, corev1.EventTypeNormal, jobs.EventJobCreated, jobs.ActionCreate,
				"Created Job %s because upstream Job %s reached %s at %s", name, tr.job.Name, tr.outcome.Type, batchv1alpha1.FormatTime(tr.outcome.Time))
		}
	}
	return c, err
}

// fail records a trigger whose Job could not be created.
func (res *result) fail(tr trigger, reason, skipReason, msg string) {
	res.skipped = append(res.skipped, skipped{trigger: tr, reason: skipReason})
	res.failReason, res.failMessage = reason, msg
}
