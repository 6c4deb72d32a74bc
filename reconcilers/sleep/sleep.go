package sleep

import (
	"context"
	"errors"
	"fmt"
	"time"

	apierrors "k8s.io/apimachinery/pkg/api/errors"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/labels"
	"k8s.io/apimachinery/pkg/types"
	"k8s.io/klog/v2"
	ctrl "sigs.k8s.io/controller-runtime"
	"sigs.k8s.io/controller-runtime/pkg/client"
	"sigs.k8s.io/controller-runtime/pkg/controller/controllerutil"

	sleepv1alpha1 "github.com/almanac-dev/almanac/api/sleep/v1alpha1"
	"github.com/almanac-dev/almanac/api/sleeping"
	"github.com/almanac-dev/almanac/reconcilers/base"
)

// Reconcile brings one sleep's workloads to what its windows call for now, writes its
// status, and asks to be called again at its next boundary (or sooner, for the pace and the
// tiers of a wake). A request without a namespace is a ClusterSleep's; one with a namespace,
// a Sleep's (both controllers share the Reconciler).
func (r *Reconciler) Reconcile(ctx context.Context, req ctrl.Request) (ctrl.Result, error) {
	kind := sleepv1alpha1.KindSleep
	if req.Namespace == "" {
		kind = sleepv1alpha1.KindClusterSleep
	}
	h, err := r.load(ctx, kind, req.NamespacedName)
	if err != nil {
		if apierrors.IsNotFound(err) {
			forgetSleep(kind, req.NamespacedName)
			return ctrl.Result{}, nil
		}
		return base.Retry(ctx, err, ctrl.Result{})
	}
	releasing := !h.obj.GetDeletionTimestamp().IsZero()
	if releasing && !controllerutil.ContainsFinalizer(h.obj, sleepv1alpha1.Finalizer) {
		return ctrl.Result{}, nil
	}
	if !releasing {
		if err := r.hold(ctx, h); err != nil {
			return base.Retry(ctx, err, ctrl.Result{})
		}
	}
	book, err := base.ReadCalendars(ctx, r.Client, h.namespace, h.spec.Calendars)
	if err != nil {
		return base.Retry(ctx, err, ctrl.Result{})
	}
	mask, calendarProblems := book.Mask(h.namespace, h.spec.Calendars)
	now := r.Clock.Now()
	plan, invalid := sleeping.Compile(h.spec, mask)
	var lead sleepv1alpha1.LeadStatus
	var st sleeping.State
	if plan != nil {
		lead = plan.LeadFrom(h.status.Wakes)
		if st, err = plan.At(ctx, now, lead.Duration.Duration); err != nil {
			if ctx.Err() != nil {
				return ctrl.Result{}, err // the manager is stopping
			}
			invalid = append(invalid, fmt.Sprintf("spec.%s: %v", windowsField(h.spec), err))
			plan = nil
		}
	}
	if plan == nil {
		// A spec that cannot be evaluated (stored without admission, or windows that never
		// close within the walk) keeps nothing asleep: what it holds wakes at once.
		plan, st = wakeOnly(), sleeping.State{}
	}
	sc, err := r.scopeOf(ctx, h)
	if err != nil {
		invalid = append(invalid, err.Error())
		sc = scope{namespace: "-"} // selects nothing; what it holds wakes
	}
	workloads, notServed, err := r.workloads(ctx, h, plan, sc)
	if err != nil {
		return base.Retry(ctx, err, ctrl.Result{})
	}
	d := sleeping.Decide(sleeping.Input{Plan: plan, Holder: h.name(), Generation: h.obj.GetGeneration(), State: st, Releasing: releasing,
		Workloads: workloads, Wake: h.status.Wake, Now: now})
	if err := r.intend(ctx, h, plan, st, d, now); err != nil {
		return base.Retry(ctx, err, ctrl.Result{})
	}
	outcomes := r.execute(ctx, h, d.Steps, now)
	failed := firstFailure(outcomes)
	if releasing {
		if failed == nil && allWoken(d, outcomes) {
			return ctrl.Result{}, r.release(ctx, h)
		}
		return base.Retry(ctx, cmpErr(failed, errReleasePending), ctrl.Result{})
	}
	next := nextStatus(h, plan, st, lead, d, outcomes, report{invalid: invalid, calendars: calendarProblems, notServed: notServed,
		namespaces: len(sc.selected), wakeTime: h.status.WakeTime}, now)
	changed := h.obj.DeepCopyObject().(client.Object)
	*statusOf(changed) = next
	// Written before the reconcile returns, as a Job owner's record is (never held back for
	// an instant's other writes): the next reconcile's wake steps read it.
	written, werr := r.WriteRecord(ctx, h.kind, h.obj, changed)
	if written {
		r.reported(h, next, outcomes)
	}
	wake := base.RequeueAt(base.Sooner(base.Sooner(st.Next, d.Next), sc.next), r.Clock.Now())
	switch {
	case werr != nil:
		return base.Retry(ctx, werr, wake)
	case failed != nil:
		return base.Retry(ctx, failed, wake)
	}
	return wake, nil
}

// intend writes, before a wake's workloads are woken, the wake's progress that waking them
// makes: the Pods they start (the pace's ledger), the tier and when it and the wake began.
// Written first, the ledger holds every Pod a wake started even when the reconcile fails
// afterwards (its status write refused, the leader gone), so a wake never goes faster than
// its pace; a write that then fails only leaves the ledger counting Pods that did not start
// (slower, never faster). A reconcile whose intent cannot be written wakes nothing.
func (r *Reconciler) intend(ctx context.Context, h *holder, plan *sleeping.Plan, st sleeping.State, d sleeping.Decision, now time.Time) error {
	byTime := 0
	for _, s := range d.Steps {
		if s.ByTime {
			byTime++
		}
	}
	if byTime == 0 {
		return nil
	}
	changed := h.obj.DeepCopyObject().(client.Object)
	intent := statusOf(changed)
	wakeProgress(intent, plan.Suspend, st, d, byTime, h.status.WakeTime, now)
	if _, err := r.WriteRecord(ctx, h.kind, h.obj, changed); err != nil {
		return err
	}
	h.obj, h.status = changed, statusOf(changed)
	return nil
}

// errReleasePending is what a release that has not woken everything yet returns: tried
// again soon.
var errReleasePending = errors.New("workloads still held; waking them")

func cmpErr(a, b error) error {
	if a != nil {
		return a
	}
	return b
}

// statusOf points at the status of a Sleep or ClusterSleep.
func statusOf(obj client.Object) *sleepv1alpha1.SleepStatus {
	if cs, ok := obj.(*sleepv1alpha1.ClusterSleep); ok {
		return &cs.Status
	}
	return &obj.(*sleepv1alpha1.Sleep).Status
}

func windowsField(spec *sleepv1alpha1.SleepSpec) string {
	_, name, _ := spec.Windows()
	return name
}

// wakeOnly is the plan of a sleep that cannot be evaluated: it selects nothing, so that what
// it holds wakes at once.
func wakeOnly() *sleeping.Plan {
	return &sleeping.Plan{Suspend: true, Selector: labels.Nothing()}
}

// hold puts the finalizer on a sleep, so that deleting it wakes what it holds first.
func (r *Reconciler) hold(ctx context.Context, h *holder) error {
	if controllerutil.ContainsFinalizer(h.obj, sleepv1alpha1.Finalizer) {
		return nil
	}
	orig := h.obj.DeepCopyObject().(client.Object)
	controllerutil.AddFinalizer(h.obj, sleepv1alpha1.Finalizer)
	if err := r.Client.Patch(ctx, h.obj, client.MergeFromWithOptions(orig, client.MergeFromWithOptimisticLock{})); err != nil {
		return fmt.Errorf("failed to add finalizer %s to %s %s: %w", sleepv1alpha1.Finalizer, h.kind, klog.KObj(h.obj), err)
	}
	return nil
}

// release removes the finalizer of a sleep being deleted, once it holds nothing.
func (r *Reconciler) release(ctx context.Context, h *holder) error {
	orig := h.obj.DeepCopyObject().(client.Object)
	controllerutil.RemoveFinalizer(h.obj, sleepv1alpha1.Finalizer)
	err := r.Client.Patch(ctx, h.obj, client.MergeFromWithOptions(orig, client.MergeFromWithOptimisticLock{}))
	if err == nil {
		ctrl.LoggerFrom(ctx).Info("Woke everything the sleep held; released it", "holder", h.name())
		forgetSleep(h.kind, types.NamespacedName{Namespace: h.namespace, Name: h.obj.GetName()})
	}
	return client.IgnoreNotFound(err)
}

// allWoken reports whether the steps woke everything d found held.
func allWoken(d sleeping.Decision, outcomes []outcome) bool {
	woken := 0
	for _, o := range outcomes {
		if o.step.Action == sleeping.ActWake && o.err == nil {
			woken++
		}
	}
	return woken >= int(d.Counts.Asleep)
}

// report is what nextStatus needs besides the decision.
type report struct {
	invalid, calendars, notServed []string
	namespaces                    int
	// wakeTime is status.wakeTime as read: the end of the sleep that was under way.
	wakeTime *metav1.Time
}
