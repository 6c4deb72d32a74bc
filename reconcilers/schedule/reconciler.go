// Package schedule reconciles Schedules.
//
// It owns each Schedule's status — phase (Scheduled, Suspended, Completed, Invalid), the Valid
// condition and, under overlapPolicy Forbid, the ForbiddenOverlap condition — which changes
// with the spec, when a Schedule's last window closes (it asks to be called again exactly
// then) and, under Forbid, at its autoscaler's boundaries; not at each window's boundaries,
// which are its autoscaler's status. It watches Schedules
// (and autoscalers' overlapPolicy), and writes nothing else, but for one deletion: an
// override (label autoscaling.almanac.dev/override=true, made by `almanac override`) is
// deleted once its OneShot window has ended. The bounds of the autoscaler that a Schedule changes are the
// ScheduledPodAutoscaler reconciler's job, and that reconciler watches Schedules itself, so a
// change of a Schedule enqueues its autoscaler there.
package schedule

import (
	"context"
	"fmt"
	"slices"
	"time"

	"github.com/prometheus/client_golang/prometheus"
	corev1 "k8s.io/api/core/v1"
	"k8s.io/apimachinery/pkg/api/equality"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	"k8s.io/apimachinery/pkg/api/meta"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/types"
	"k8s.io/klog/v2"
	"k8s.io/utils/clock"
	ctrl "sigs.k8s.io/controller-runtime"
	"sigs.k8s.io/controller-runtime/pkg/builder"
	"sigs.k8s.io/controller-runtime/pkg/client"
	"sigs.k8s.io/controller-runtime/pkg/event"
	"sigs.k8s.io/controller-runtime/pkg/handler"
	"sigs.k8s.io/controller-runtime/pkg/predicate"
	"sigs.k8s.io/controller-runtime/pkg/reconcile"

	autoscalingv1alpha1 "github.com/almanac-dev/almanac/api/autoscaling/v1alpha1"
	calendarv1alpha1 "github.com/almanac-dev/almanac/api/calendar/v1alpha1"
	"github.com/almanac-dev/almanac/api/conditions"
	"github.com/almanac-dev/almanac/api/scaling"
	"github.com/almanac-dev/almanac/api/timing"
	"github.com/almanac-dev/almanac/reconcilers/base"
)

// DefaultWorkers is how many Schedules are reconciled at once unless
// Options.MaxConcurrentReconciles says otherwise (the manager's --schedule-workers): many
// Schedules often share a boundary (09:00), and each then needs one status write, which
// follows the HPA writes of that boundary.
const DefaultWorkers = 16

// controllerName names the controller, its metrics and its lane.
const controllerName = "schedule"

// reasonOverrideEnded is the reason of the event recorded when an override (`almanac
// override`) whose window has ended is deleted.
const reasonOverrideEnded = "OverrideEnded"

// Reconciler keeps a Schedule's status true at its window boundaries.
type Reconciler struct {
	base.Base
	// EvaluationErrors counts, per reconcile, a Schedule that cannot be evaluated: the
	// almanac_autoscaler_schedule_evaluation_errors_total series of kind "Schedule", which the
	// ScheduledPodAutoscaler reconciler owns and the manager hands in. Nil counts nothing.
	EvaluationErrors prometheus.Counter
}

// New returns a Reconciler that uses mgr's clients and event recorder, takes "now" from clk
// and counts the Schedules it cannot evaluate with evaluationErrors (nil: not counted).
func New(mgr ctrl.Manager, clk clock.PassiveClock, evaluationErrors prometheus.Counter, opts ...base.Option) *Reconciler {
	return &Reconciler{Base: base.NewBase(mgr, clk, "almanac-schedule", opts...), EvaluationErrors: evaluationErrors}
}

// +kubebuilder:rbac:groups=autoscaling.almanac.dev,resources=schedules,verbs=get;list;watch;delete
// +kubebuilder:rbac:groups=autoscaling.almanac.dev,resources=schedules/status,verbs=get;patch
// +kubebuilder:rbac:groups=autoscaling.almanac.dev,resources=scheduledpodautoscalers,verbs=get;list;watch
// +kubebuilder:rbac:groups=events.k8s.io,resources=events,verbs=create;patch

// Reconcile writes the Schedule's status for now and asks to be called again at its next
// boundary (under overlapPolicy Forbid, at the next boundary of any Schedule of its
// autoscaler: whether it is left out can change there).
func (r *Reconciler) Reconcile(ctx context.Context, req ctrl.Request) (ctrl.Result, error) {
	// From the cache: the status write is conditional on this copy's resourceVersion, so a
	// copy that has not caught up with the last write fails it and is read again.
	s := &autoscalingv1alpha1.Schedule{}
	if err := r.Client.Get(ctx, req.NamespacedName, s); err != nil {
		if apierrors.IsNotFound(err) {
			base.ForgetSuspension(kindSchedule, req.NamespacedName)
			forgetOverride(req.Namespace, req.Name)
		}
		return ctrl.Result{}, client.IgnoreNotFound(err)
	}
	if !s.DeletionTimestamp.IsZero() {
		return ctrl.Result{}, nil
	}
	now := r.Clock.Now()
	r.TrackSuspension(ctx, kindSchedule, s, s.Spec.Suspend, now)
	if OverrideEnded(s, now) {
		forgetOverride(s.Namespace, s.Name)
		return r.removeOverride(ctx, s)
	}
	observeOverride(s)
	book, err := base.ReadCalendars(ctx, r.Client, s.Namespace, s.Spec.Calendars)
	if err != nil {
		return base.Retry(ctx, err, ctrl.Result{})
	}
	st, next := Status(s, book, now)
	forbid, err := r.forbid(ctx, s, now)
	if err != nil {
		return base.Retry(ctx, err, ctrl.Result{})
	}
	next = LeftOut(&st, s, forbid, now, next)
	conditions.SetStalled(&st.Conditions, st.Stalled(), s.Generation, now) // kstatus: Failed while True
	if end, ok := OverrideEnd(s); ok {
		next = base.Sooner(next, end)
	}
	return base.Retry(ctx, r.writeStatus(ctx, s, st), base.RequeueAt(next, r.Clock.Now()))
}

// OverrideEnded reports whether s is an override (`almanac override`: labelled
// OverrideLabel=true) whose OneShot window has ended at now, so that it is to be deleted. A
// Schedule that cannot be evaluated, or of another type, is never deleted. It is a pure
// function.
func OverrideEnded(s *autoscalingv1alpha1.Schedule, now time.Time) bool {
	end, ok := OverrideEnd(s)
	return ok && !end.After(now)
}

// OverrideEnd returns the end of an override's window (false: s is not an override, not a
// OneShot, or cannot be evaluated). The reconciler asks to be called again then, even when
// the override is suspended (its status then never changes by itself).
func OverrideEnd(s *autoscalingv1alpha1.Schedule) (time.Time, bool) {
	iv, ok := overrideWindow(s)
	return iv.End, ok
}

// overrideWindow returns an override's window (false: s is not an override, not a OneShot,
// or cannot be evaluated).
func overrideWindow(s *autoscalingv1alpha1.Schedule) (timing.Interval, bool) {
	if s.Labels[autoscalingv1alpha1.OverrideLabel] != "true" || s.Spec.Type != autoscalingv1alpha1.ScheduleTypeOneShot {
		return timing.Interval{}, false
	}
	w, err := scaling.Compile(s, nil) // the window as written: an override's end is its own
	if err != nil {
		return timing.Interval{}, false
	}
	return w.OneShotInterval()
}

// removeOverride deletes an override whose window has ended, under a precondition on the UID
// and resourceVersion read: an override deleted meanwhile and created again under the same
// name, or changed since, is not deleted (the conflict reads it again). The event is recorded
// once the delete went through.
func (r *Reconciler) removeOverride(ctx context.Context, s *autoscalingv1alpha1.Schedule) (ctrl.Result, error) {
	err := r.Client.Delete(ctx, s, client.Preconditions{UID: &s.UID, ResourceVersion: &s.ResourceVersion})
	switch {
	case apierrors.IsNotFound(err):
		return ctrl.Result{}, nil
	case err != nil:
		err = fmt.Errorf("failed to delete the ended override Schedule %s: %w", client.ObjectKeyFromObject(s), err)
		if base.Refused(err) {
			// Its status has no condition for it (the window ended): an event says so.
			r.Recorder.Eventf(s, nil, corev1.EventTypeWarning, conditions.ReasonRequestRefused, "Delete", "%s", base.RefusalMessage(err))
		}
		return base.Retry(ctx, err, ctrl.Result{})
	}
	end := s.Spec.EndTime + " " + s.Spec.TimeZone
	if w, err := scaling.Compile(s, nil); err == nil {
		if iv, ok := w.OneShotInterval(); ok {
			end = timing.InstantText(iv.End, w.Zone())
		}
	}
	ctrl.LoggerFrom(ctx).Info("Deleted an ended override Schedule", "end", end)
	r.Recorder.Eventf(s, nil, corev1.EventTypeNormal, reasonOverrideEnded, "Delete",
		"Deleted the override (label %s=true): its window ended at %s", autoscalingv1alpha1.OverrideLabel, end)
	return ctrl.Result{}, nil
}

// forbid returns the desired state of the Schedule's autoscaler when that has overlapPolicy
// Forbid (nil otherwise), from the cache.
func (r *Reconciler) forbid(ctx context.Context, s *autoscalingv1alpha1.Schedule, now time.Time) (*scaling.Desired, error) {
	spa, err := r.forbidding(ctx, s.Namespace, s.Spec.ScaleTargetRef.Name)
	if spa == nil || err != nil {
		return nil, err
	}
	siblings := &autoscalingv1alpha1.ScheduleList{}
	if err := r.Client.List(ctx, siblings, client.InNamespace(s.Namespace), client.MatchingFields{autoscalingv1alpha1.ScheduleTargetField: spa.Name}); err != nil {
		return nil, fmt.Errorf("failed to list the Schedules of ScheduledPodAutoscaler %s/%s: %w", s.Namespace, spa.Name, err)
	}
	book, err := base.ReadCalendars(ctx, r.Client, s.Namespace, autoscalingv1alpha1.CalendarsOf(siblings.Items)...)
	if err != nil {
		return nil, err
	}
	d, err := scaling.Compute(ctx, spa, siblings.Items, book, now)
	if err != nil {
		return nil, err // the context is done: the manager is stopping
	}
	return &d, nil
}

// forbidding returns the autoscaler name in namespace when it exists and has overlapPolicy
// Forbid, from the cache; nil otherwise.
func (r *Reconciler) forbidding(ctx context.Context, namespace, name string) (*autoscalingv1alpha1.ScheduledPodAutoscaler, error) {
	spa := &autoscalingv1alpha1.ScheduledPodAutoscaler{}
	if err := r.Client.Get(ctx, types.NamespacedName{Namespace: namespace, Name: name}, spa); err != nil {
		if apierrors.IsNotFound(err) {
			return nil, nil
		}
		return nil, fmt.Errorf("failed to get ScheduledPodAutoscaler %s/%s: %w", namespace, name, err)
	}
	if spa.Spec.OverlapPolicy != autoscalingv1alpha1.OverlapPolicyForbid {
		return nil, nil
	}
	return spa, nil
}

// LeftOut sets, in st, the ForbiddenOverlap condition of a Schedule that its autoscaler's
// overlapPolicy Forbid leaves out of the bounds (forbid is that autoscaler's desired state,
// nil when its policy is not Forbid), or removes it, and returns when to look again: next,
// or the autoscaler's next transition when that comes first. It is a pure function.
func LeftOut(st *autoscalingv1alpha1.ScheduleStatus, s *autoscalingv1alpha1.Schedule, forbid *scaling.Desired, now, next time.Time) time.Time {
	if forbid == nil {
		meta.RemoveStatusCondition(&st.Conditions, autoscalingv1alpha1.ConditionForbiddenOverlap)
		return next
	}
	i := slices.IndexFunc(forbid.LeftOut, func(l scaling.LeftOut) bool { return l.Name == s.Name })
	if i < 0 {
		meta.RemoveStatusCondition(&st.Conditions, autoscalingv1alpha1.ConditionForbiddenOverlap)
	} else if l := forbid.LeftOut[i]; l.NotCompared != "" {
		conditions.Set(&st.Conditions, metav1.Condition{
			Type:   autoscalingv1alpha1.ConditionForbiddenOverlap,
			Status: metav1.ConditionTrue,
			Reason: autoscalingv1alpha1.ReasonNotCompared,
			Message: fmt.Sprintf("ScheduledPodAutoscaler %q has overlapPolicy Forbid and this Schedule's windows were not compared with those of the Schedules created before it: %s. "+
				"Under Forbid a Schedule that cannot be compared is left out of the autoscaler's bounds, as if it overlapped; or set overlapPolicy to Max",
				s.Spec.ScaleTargetRef.Name, l.NotCompared),
		}, s.Generation, now)
	} else {
		conditions.Set(&st.Conditions, metav1.Condition{
			Type:   autoscalingv1alpha1.ConditionForbiddenOverlap,
			Status: metav1.ConditionTrue,
			Reason: autoscalingv1alpha1.ReasonLeftOut,
			Message: fmt.Sprintf("ScheduledPodAutoscaler %q has overlapPolicy Forbid and this Schedule's windows overlap those of Schedule %q, created earlier, from %s: "+
				"it is left out of the autoscaler's bounds until the overlap is over; move or shorten one of the windows, delete one of the Schedules, or set overlapPolicy to Max",
				s.Spec.ScaleTargetRef.Name, l.Kept, timing.IntervalText(l.Overlap, l.Zone)),
		}, s.Generation, now)
	}
	if !forbid.Next.IsZero() && (next.IsZero() || forbid.Next.Before(next)) {
		return forbid.Next
	}
	return next
}

// Status returns the status of s at now and the instant at which it next changes by
// itself (zero if it never does: only a change of the spec changes it). The phase says what
// the Schedule will do, not whether a window is open now: that is its autoscaler's status,
// written at each transition anyway, so a boundary costs the API server no write of the
// Schedule's (issue 23); a Schedule whose last window is to come completes when it closes.
// It is a pure function of the Schedule, the calendars it names (in book) and now.
//
// A calendar that does not exist (or cannot be evaluated) holds the Schedule closed: its
// condition Calendars is False, and the Schedule stays Scheduled, since it completes only
// once its calendars say that no window will open again.
func Status(s *autoscalingv1alpha1.Schedule, book *calendarv1alpha1.Book, now time.Time) (autoscalingv1alpha1.ScheduleStatus, time.Time) {
	st := *s.Status.DeepCopy()
	st.ObservedGeneration = s.Generation

	w, err := scaling.Compile(s, book)
	if err != nil {
		st.Phase = autoscalingv1alpha1.SchedulePhaseInvalid
		conditions.Set(&st.Conditions, invalidCondition(err), s.Generation, now)
		return st, time.Time{}
	}
	conditions.Set(&st.Conditions, validCondition(), s.Generation, now)
	problems := scaling.CalendarProblems(s, book)
	if c, ok := calendarv1alpha1.Condition(s.Spec.Calendars, problems); ok {
		conditions.Set(&st.Conditions, c, s.Generation, now)
	} else {
		meta.RemoveStatusCondition(&st.Conditions, calendarv1alpha1.ConditionCalendars)
	}

	iv, ok := w.NextInterval(now)
	switch {
	case !ok && len(problems) > 0:
		st.Phase = autoscalingv1alpha1.SchedulePhaseScheduled
		return st, time.Time{} // the calendar's creation brings the reconciler back
	case !ok:
		st.Phase = autoscalingv1alpha1.SchedulePhaseCompleted
		return st, time.Time{}
	case s.Spec.Suspend:
		// Resuming it is a spec change, which reconciles it again.
		st.Phase = autoscalingv1alpha1.SchedulePhaseSuspended
		return st, time.Time{}
	}
	st.Phase = autoscalingv1alpha1.SchedulePhaseScheduled
	if _, more := w.NextInterval(iv.End); !more {
		return st, iv.End // the last window: the Schedule completes when it closes
	}
	return st, time.Time{}
}

// writeStatus writes the status if it changed and then, once it is recorded, reports a newly
// invalid Schedule. While HPA writes (or Jobs) are due or under way the write is held back
// (base.Base.WriteStatus).
func (r *Reconciler) writeStatus(ctx context.Context, s *autoscalingv1alpha1.Schedule, st autoscalingv1alpha1.ScheduleStatus) error {
	changed := !equality.Semantic.DeepEqual(s.Status, st)
	valid := meta.FindStatusCondition(st.Conditions, autoscalingv1alpha1.ConditionValid)
	invalid := valid != nil && valid.Status == metav1.ConditionFalse
	if invalid && r.EvaluationErrors != nil {
		r.EvaluationErrors.Inc()
	}
	if !changed {
		return nil
	}
	updated := s.DeepCopy()
	updated.Status = st
	if written, err := r.WriteStatus(ctx, "Schedule", s, updated); err != nil || !written {
		return err
	}
	old := meta.FindStatusCondition(s.Status.Conditions, autoscalingv1alpha1.ConditionValid)
	if invalid && (old == nil || old.Message != valid.Message) {
		r.Recorder.Eventf(s, nil, corev1.EventTypeWarning, valid.Reason, "Evaluate", "%s", valid.Message)
	}
	if c := meta.FindStatusCondition(st.Conditions, autoscalingv1alpha1.ConditionForbiddenOverlap); c != nil {
		if o := meta.FindStatusCondition(s.Status.Conditions, c.Type); o == nil || o.Message != c.Message {
			r.Recorder.Eventf(s, nil, corev1.EventTypeWarning, autoscalingv1alpha1.ConditionForbiddenOverlap, "Evaluate", "%s", c.Message)
		}
	}
	return nil
}

func validCondition() metav1.Condition {
	return metav1.Condition{
		Type:    autoscalingv1alpha1.ConditionValid,
		Status:  metav1.ConditionTrue,
		Reason:  autoscalingv1alpha1.ReasonValid,
		Message: "The Schedule's window could be evaluated",
	}
}

func invalidCondition(err error) metav1.Condition {
	return metav1.Condition{
		Type:   autoscalingv1alpha1.ConditionValid,
		Status: metav1.ConditionFalse,
		Reason: autoscalingv1alpha1.ReasonInvalidSchedule,
		Message: fmt.Sprintf("The Schedule cannot be evaluated and its autoscaler skips it: %v. "+
			"Fix the fields named and re-apply (admission normally refuses such a Schedule)", err),
	}
}

// SetupWithManager registers the controller with mgr.
func (r *Reconciler) SetupWithManager(mgr ctrl.Manager) error {
	b := ctrl.NewControllerManagedBy(mgr).
		For(&autoscalingv1alpha1.Schedule{}, builder.WithPredicates(predicate.GenerationChangedPredicate{})).
		// Under overlapPolicy Forbid, whether a Schedule is left out depends on its siblings
		// and on the policy: a change of either looks at the Schedules again.
		Watches(&autoscalingv1alpha1.Schedule{}, handler.EnqueueRequestsFromMapFunc(r.siblingsUnderForbid),
			builder.WithPredicates(predicate.GenerationChangedPredicate{})).
		Watches(&autoscalingv1alpha1.ScheduledPodAutoscaler{}, handler.EnqueueRequestsFromMapFunc(r.schedulesOf),
			builder.WithPredicates(policyChanged()))
	// A calendar's creation, edit or deletion changes the status of the Schedules that name it.
	byCalendar := handler.EnqueueRequestsFromMapFunc(base.CalendarUsers(mgr.GetClient(),
		func() *autoscalingv1alpha1.ScheduleList { return &autoscalingv1alpha1.ScheduleList{} }, schedulesRequests))
	b = b.Watches(&calendarv1alpha1.Calendar{}, byCalendar, builder.WithPredicates(predicate.GenerationChangedPredicate{})).
		Watches(&calendarv1alpha1.ClusterCalendar{}, byCalendar, builder.WithPredicates(predicate.GenerationChangedPredicate{}))
	return r.Complete(b, controllerName, DefaultWorkers, r)
}

// schedulesRequests maps Schedules to requests for themselves.
func schedulesRequests(list *autoscalingv1alpha1.ScheduleList) []reconcile.Request {
	out := make([]reconcile.Request, len(list.Items))
	for i := range list.Items {
		out[i] = reconcile.Request{NamespacedName: client.ObjectKeyFromObject(&list.Items[i])}
	}
	return out
}

// siblingsUnderForbid maps a Schedule to the other Schedules of its autoscaler, when that has
// overlapPolicy Forbid.
func (r *Reconciler) siblingsUnderForbid(ctx context.Context, obj client.Object) []reconcile.Request {
	s, ok := obj.(*autoscalingv1alpha1.Schedule)
	if !ok {
		return nil
	}
	if spa, err := r.forbidding(ctx, s.Namespace, s.Spec.ScaleTargetRef.Name); spa == nil || err != nil {
		return nil
	}
	out := r.schedules(ctx, s.Namespace, s.Spec.ScaleTargetRef.Name)
	return slices.DeleteFunc(out, func(req reconcile.Request) bool { return req.Name == s.Name })
}

// schedulesOf maps an autoscaler to its Schedules.
func (r *Reconciler) schedulesOf(ctx context.Context, obj client.Object) []reconcile.Request {
	return r.schedules(ctx, obj.GetNamespace(), obj.GetName())
}

func (r *Reconciler) schedules(ctx context.Context, namespace, autoscaler string) []reconcile.Request {
	list := &autoscalingv1alpha1.ScheduleList{}
	if err := r.Client.List(ctx, list, client.InNamespace(namespace), client.MatchingFields{autoscalingv1alpha1.ScheduleTargetField: autoscaler}); err != nil {
		ctrl.LoggerFrom(ctx).Error(err, "Failed to list the Schedules of an autoscaler", "ScheduledPodAutoscaler", klog.KRef(namespace, autoscaler))
		return nil
	}
	out := make([]reconcile.Request, 0, len(list.Items))
	for _, s := range list.Items {
		out = append(out, reconcile.Request{NamespacedName: client.ObjectKeyFromObject(&s)})
	}
	return out
}

// policyChanged lets through autoscalers that are created or deleted with overlapPolicy
// Forbid, and updates that change the policy.
func policyChanged() predicate.Funcs {
	forbid := func(obj client.Object) bool {
		spa, ok := obj.(*autoscalingv1alpha1.ScheduledPodAutoscaler)
		return ok && spa.Spec.OverlapPolicy == autoscalingv1alpha1.OverlapPolicyForbid
	}
	return predicate.Funcs{
		CreateFunc:  func(e event.CreateEvent) bool { return forbid(e.Object) },
		DeleteFunc:  func(e event.DeleteEvent) bool { return forbid(e.Object) },
		UpdateFunc:  func(e event.UpdateEvent) bool { return forbid(e.ObjectOld) != forbid(e.ObjectNew) },
		GenericFunc: func(event.GenericEvent) bool { return false },
	}
}
