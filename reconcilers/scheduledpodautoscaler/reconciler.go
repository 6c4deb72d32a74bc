// Package scheduledpodautoscaler reconciles ScheduledPodAutoscalers.
//
// It owns the autoscaling/v2 HorizontalPodAutoscaler of the same name and namespace
// (controller ownerReference), and of that object only the fields it applies under the
// field manager "almanac": scaleTargetRef, minReplicas, maxReplicas, and the metrics and
// behavior that the baseline spec sets. It owns the ScheduledPodAutoscaler's status.
//
// It watches ScheduledPodAutoscalers, HorizontalPodAutoscalers (mapped by name to an
// autoscaler that exists, so that a conflicting HPA going away is noticed too, and other HPAs
// cost nothing) and Schedules (mapped through
// spec.scaleTargetRef.name, found with the autoscalingv1alpha1.ScheduleTargetField index). Schedules carry
// no ownerReference: deleting an autoscaler leaves its Schedules alone.
//
// The bounds are a pure function of (spec, Schedules, now) computed by api/timing; the
// reconciler wakes up exactly at the next window boundary (RequeueAfter) and writes only when
// something differs, so between boundaries it writes nothing at all.
package scheduledpodautoscaler

import (
	"context"
	"fmt"
	"sync"
	"time"

	autoscalingv2 "k8s.io/api/autoscaling/v2"
	corev1 "k8s.io/api/core/v1"
	"k8s.io/apimachinery/pkg/api/equality"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/runtime/schema"
	"k8s.io/apimachinery/pkg/types"
	"k8s.io/klog/v2"
	"k8s.io/utils/clock"
	"k8s.io/utils/ptr"
	ctrl "sigs.k8s.io/controller-runtime"
	"sigs.k8s.io/controller-runtime/pkg/builder"
	"sigs.k8s.io/controller-runtime/pkg/cache"
	"sigs.k8s.io/controller-runtime/pkg/client"
	"sigs.k8s.io/controller-runtime/pkg/controller"
	"sigs.k8s.io/controller-runtime/pkg/event"
	"sigs.k8s.io/controller-runtime/pkg/handler"
	"sigs.k8s.io/controller-runtime/pkg/predicate"
	"sigs.k8s.io/controller-runtime/pkg/reconcile"

	autoscalingv1alpha1 "github.com/almanac-dev/almanac/api/autoscaling/v1alpha1"
	calendarv1alpha1 "github.com/almanac-dev/almanac/api/calendar/v1alpha1"
	"github.com/almanac-dev/almanac/api/index"
	"github.com/almanac-dev/almanac/api/scaling"
	"github.com/almanac-dev/almanac/reconcilers/base"
)

// Event reasons of this reconciler (besides the condition reasons of the API package).
const (
	// EventBoundsApplied: new bounds were written to the HorizontalPodAutoscaler, other than
	// at a transition (which status.lastAppliedTransition reports).
	EventBoundsApplied = autoscalingv1alpha1.ReasonBoundsApplied
	// EventForbiddenOverlap (Warning): under overlapPolicy Forbid, Schedules overlap and the
	// later ones are left out of the bounds (the ForbiddenOverlap condition).
	EventForbiddenOverlap = autoscalingv1alpha1.ConditionForbiddenOverlap
)

// DefaultWorkers is how many autoscalers are reconciled at once unless
// Options.MaxConcurrentReconciles says otherwise (the manager's
// --scheduledpodautoscaler-workers): many autoscalers often share a boundary (09:00), and each
// needs its HPA written at that instant, so up to this many writes go out together instead of
// in waves (the API server's priority and fairness queues what it cannot take at once); a
// worker waits on the API server most of the time. With 32, the reconciles of 100
// autoscalers on one boundary began in waves (p50 65 ms, p90 125 ms after it); with 100 they
// began p50 14 ms after it (docs/performance.md, the boundary burst).
const DefaultWorkers = 128

// Reconciler keeps a ScheduledPodAutoscaler's HorizontalPodAutoscaler at the bounds its
// Schedules call for now. Its Client reads from the manager's cache, with the index
// autoscalingv1alpha1.ScheduleTargetField (api/index).
//
// At a boundary the HPA write goes first: the reconcile writes the HPA, and when other urgent
// writes are due or under way its status write is held back (base.Base.WriteStatus), to a
// reconcile that runs once they are done, or at the hold's deadline or the next boundary,
// whichever comes first (base.Lanes).
type Reconciler struct {
	base.Base
	// appliedAt remembers, per autoscaler, when a reconcile wrote the HPA (and the HPA's
	// resourceVersion that the write returned) and left the status to a later one, so that the
	// transition's lag is measured to the write, and so that the later one, which often runs
	// before the cache has the write, reads the HPA around the cache instead of writing it
	// again. It is only a report and a hint: without it (after a restart) the lag is measured
	// to the status write, and a cached HPA behind the write is written again, changing
	// nothing.
	appliedAt sync.Map // types.NamespacedName → applied

	// putBacks counts, per attached autoscaler, the values it put back after another field
	// manager changed them (the fight rule).
	putBacks putBacks

	// ctrl and cache add the watches of attached targets' kinds as they are met (watchTarget).
	ctrl    controller.Controller
	cache   cache.Cache
	watchMu sync.Mutex
	watched map[schema.GroupKind]bool
}

// applied is an HPA write whose transition is not in status yet.
type applied struct {
	at              time.Time
	resourceVersion string
}

// controllerName names the controller, its metrics and its lane.
const controllerName = "scheduledpodautoscaler"

// New returns a Reconciler that uses mgr's clients and event recorder and takes "now" from
// clk.
func New(mgr ctrl.Manager, clk clock.PassiveClock, opts ...base.Option) *Reconciler {
	return &Reconciler{Base: base.NewBase(mgr, clk, "almanac-scheduledpodautoscaler", opts...)}
}

// The HPA's ownerReference sets blockOwnerDeletion, which clusters with the
// OwnerReferencesPermissionEnforcement admission plugin allow only with update on the
// owner's finalizers. Server-side apply of an HPA that does not exist yet creates it.
//
// +kubebuilder:rbac:groups=autoscaling.almanac.dev,resources=scheduledpodautoscalers,verbs=get;list;watch
// +kubebuilder:rbac:groups=autoscaling.almanac.dev,resources=scheduledpodautoscalers/status,verbs=get;patch
// +kubebuilder:rbac:groups=autoscaling.almanac.dev,resources=scheduledpodautoscalers/finalizers,verbs=update
// +kubebuilder:rbac:groups=autoscaling.almanac.dev,resources=schedules,verbs=get;list;watch
// +kubebuilder:rbac:groups=autoscaling,resources=horizontalpodautoscalers,verbs=get;list;watch;create;patch
// +kubebuilder:rbac:groups=events.k8s.io,resources=events,verbs=create;patch

// Reconcile brings one autoscaler's HorizontalPodAutoscaler and status up to date and asks to
// be called again at the next window boundary.
func (r *Reconciler) Reconcile(ctx context.Context, req ctrl.Request) (ctrl.Result, error) {
	// From the cache: the status write below is conditional on this copy's resourceVersion,
	// so a copy that has not caught up with the last write fails it and is read again, and the
	// HPA's bounds depend only on the spec (whose change is what brought this reconcile).
	spa := &autoscalingv1alpha1.ScheduledPodAutoscaler{}
	if err := r.Client.Get(ctx, req.NamespacedName, spa); err != nil {
		if apierrors.IsNotFound(err) {
			forgetAutoscaler(req.Namespace, req.Name) // the HPA goes with it (ownerReference)
			base.ForgetSuspension(kindAutoscaler, req.NamespacedName)
			r.appliedAt.Delete(req.NamespacedName)
			r.putBacks.forget(req.NamespacedName)
		}
		return ctrl.Result{}, client.IgnoreNotFound(err)
	}
	if !spa.DeletionTimestamp.IsZero() {
		return base.Retry(ctx, r.release(ctx, spa), ctrl.Result{})
	}
	if spa.Attached() {
		if err := r.holdTarget(ctx, spa); err != nil {
			return base.Retry(ctx, err, ctrl.Result{})
		}
	}
	schedules := &autoscalingv1alpha1.ScheduleList{}
	if err := r.Client.List(ctx, schedules, client.InNamespace(spa.Namespace), client.MatchingFields{autoscalingv1alpha1.ScheduleTargetField: spa.Name}); err != nil {
		return ctrl.Result{}, fmt.Errorf("failed to list the Schedules of ScheduledPodAutoscaler %s: %w", klog.KObj(spa), err)
	}

	book, err := base.ReadCalendars(ctx, r.Client, spa.Namespace, autoscalingv1alpha1.CalendarsOf(schedules.Items)...)
	if err != nil {
		return base.Retry(ctx, err, ctrl.Result{})
	}

	now := r.Clock.Now()
	r.TrackSuspension(ctx, kindAutoscaler, spa, spa.Spec.Suspend, now)
	d, err := scaling.Compute(ctx, spa, schedules.Items, book, now)
	if err != nil {
		return ctrl.Result{}, err // the context is done: the manager is stopping
	}

	var last *applied
	if a, ok := r.appliedAt.Load(req.NamespacedName); ok {
		last = new(a.(applied))
	}
	var hs hpaState
	if spa.Attached() {
		hs, err = r.applyTarget(ctx, spa, d, last, now)
	} else {
		hs, err = r.applyHPA(ctx, spa, d, last)
	}
	if !hs.appliedAt.IsZero() {
		r.appliedAt.Store(req.NamespacedName, applied{at: hs.appliedAt, resourceVersion: hs.appliedVersion})
	} else if last != nil {
		hs.appliedAt = last.at // written by an earlier reconcile that left the status to this one
	}
	held, werr := r.writeStatus(ctx, spa, d, hs, now)
	wake := base.RequeueAt(d.Next, r.Clock.Now())
	switch {
	case werr != nil:
		return base.Retry(ctx, werr, wake)
	case err != nil:
		// hs.applyErr, reported in status: retried with backoff, or, refused, a minute
		// later or at the next boundary (base.Retry).
		return base.Retry(ctx, err, wake)
	case !held:
		r.appliedAt.Delete(req.NamespacedName)
	}
	return wake, nil
}

// applyHPA writes the HorizontalPodAutoscaler if it differs from what d calls for. last is
// the write of an earlier reconcile whose transition is not in status yet (nil if none): when
// the cached HPA is not the version that write returned, the HPA is read around the cache.
func (r *Reconciler) applyHPA(ctx context.Context, spa *autoscalingv1alpha1.ScheduledPodAutoscaler, d scaling.Desired, last *applied) (hpaState, error) {
	want, err := desiredHPA(spa, d.Bounds)
	if err != nil {
		return hpaState{applyErr: err}, err
	}
	key := client.ObjectKeyFromObject(spa) // the HPA's, too
	hpa := &autoscalingv2.HorizontalPodAutoscaler{}
	err = r.Client.Get(ctx, key, hpa)
	if err == nil && last != nil && hpa.ResourceVersion != last.resourceVersion {
		err = r.APIReader.Get(ctx, key, hpa)
	}
	switch {
	case apierrors.IsNotFound(err):
	case err != nil:
		return hpaState{applyErr: err}, err
	case !metav1.IsControlledBy(hpa, spa):
		return hpaState{conflict: true}, nil
	case upToDate(hpa, want):
		return hpaState{}, nil
	}
	if err := r.Client.Apply(ctx, want, client.FieldOwner(index.FieldManager), client.ForceOwnership); err != nil {
		err = fmt.Errorf("failed to apply HorizontalPodAutoscaler %s: %w", klog.KObj(spa), err)
		return hpaState{applyErr: err}, err
	}
	version := ptr.Deref(want.ResourceVersion, "") // what the apply returned
	ctrl.LoggerFrom(ctx).V(1).Info("Applied HorizontalPodAutoscaler", "HorizontalPodAutoscaler", klog.KObj(spa),
		"minReplicas", d.Bounds.Min, "maxReplicas", d.Bounds.Max, "active", d.Active)
	return hpaState{appliedAt: r.Clock.Now(), appliedVersion: version}, nil
}

// transition returns the transition that this reconcile completed, if any: the HPA has new
// bounds (they differ from those that the status reported), and a boundary that the status
// announced (nextTransitionTime) has passed. Creation, spec edits and repairs of the HPA
// are not transitions. The lag runs from the boundary to the HPA patch; if an earlier attempt
// patched the HPA but failed to record it, to now.
func (r *Reconciler) transition(spa *autoscalingv1alpha1.ScheduledPodAutoscaler, d scaling.Desired, hs hpaState, now time.Time) *autoscalingv1alpha1.AppliedTransition {
	st := spa.Status
	due := st.NextTransitionTime
	switch {
	case hs.failed() || due == nil || due.After(now) || st.MinReplicas == nil:
		return nil
	case *st.MinReplicas == d.Bounds.Min && st.MaxReplicas == d.Bounds.Max:
		return nil
	}
	boundary := d.BoundarySince(due.Time, now)
	applied := hs.appliedAt
	if applied.IsZero() {
		applied = r.Clock.Now()
	}
	return &autoscalingv1alpha1.AppliedTransition{
		BoundaryTime: metav1.NewTime(boundary.UTC()),
		AppliedTime:  metav1.NewTime(applied.UTC().Truncate(time.Second)),
		Lag:          metav1.Duration{Duration: applied.Sub(boundary).Truncate(time.Microsecond)},
		MinReplicas:  d.Bounds.Min,
		MaxReplicas:  d.Bounds.Max,
	}
}

// writeStatus writes the status if it changed and then, once it is recorded (so that a retry
// cannot repeat them), emits the events and observes the transition metrics. The write is
// conditional on the resourceVersion of spa as this reconcile read it, so the events and the
// transition are what this reconcile changed. It reports whether a status to write was held
// back (base.Base.WriteStatus, while other urgent writes are due or under way).
func (r *Reconciler) writeStatus(ctx context.Context, spa *autoscalingv1alpha1.ScheduledPodAutoscaler, d scaling.Desired, hs hpaState, now time.Time) (held bool, err error) {
	setActiveSchedules(spa.Namespace, spa.Name, len(d.Active))
	if len(d.Invalid) > 0 {
		EvaluationErrors.WithLabelValues(kindAutoscaler).Add(float64(len(d.Invalid)))
	}
	applied := r.transition(spa, d, hs, now)
	changed := spa.DeepCopy()
	changed.Status = nextStatus(spa, d, hs, applied, now)
	if equality.Semantic.DeepEqual(spa.Status, changed.Status) {
		return false, nil
	}
	if written, err := r.WriteStatus(ctx, "ScheduledPodAutoscaler", spa, changed); err != nil || !written {
		return err == nil, err
	}
	old, st := spa.Status, changed.Status
	if applied != nil {
		observeTransition(applied.Lag.Duration)
	}
	r.emitEvents(spa, old, st, d, hs, applied != nil)
	return false, nil
}

// emitEvents reports what the status does not say, as the HPA controller reports a rescale
// and leaves its conditions to its status: bounds written to the HPA other than at a
// transition (the first bounds of an autoscaler, a spec edit, a repair), one event naming
// the Schedules active then, and problems that are new. A transition (a window opened or
// closed) is the status's lastAppliedTransition and activeSchedules, written anyway, and
// the HPA controller's event of the rescale that follows: an event of its own would be one
// more write for the API server at the instant, for each autoscaler that shares it (issue 23).
func (r *Reconciler) emitEvents(spa *autoscalingv1alpha1.ScheduledPodAutoscaler, old, st autoscalingv1alpha1.ScheduledPodAutoscalerStatus, d scaling.Desired, hs hpaState, transition bool) {
	applied := !hs.failed()
	first := old.MinReplicas == nil
	if applied && !transition && (first || *old.MinReplicas != d.Bounds.Min || old.MaxReplicas != d.Bounds.Max) {
		was := "none"
		if old.MinReplicas != nil {
			was = fmt.Sprintf("%d-%d", *old.MinReplicas, old.MaxReplicas)
		}
		r.Recorder.Eventf(spa, nil, corev1.EventTypeNormal, EventBoundsApplied, "ApplyBounds",
			"%s has minReplicas %d and maxReplicas %d (was %s; %s)", subject(spa), d.Bounds.Min, d.Bounds.Max, was, source(d))
	}
	if c := findCondition(st.Conditions, autoscalingv1alpha1.ConditionForbiddenOverlap); c != nil {
		if o := findCondition(old.Conditions, c.Type); o == nil || o.Message != c.Message {
			r.Recorder.Eventf(spa, nil, corev1.EventTypeWarning, EventForbiddenOverlap, "Reconcile", "%s", c.Message)
		}
	}
	for _, c := range st.Conditions {
		if c.Status == metav1.ConditionTrue {
			continue
		}
		if o := findCondition(old.Conditions, c.Type); o != nil && o.Status == c.Status && o.Reason == c.Reason && o.Message == c.Message {
			continue
		}
		r.Recorder.Eventf(spa, nil, corev1.EventTypeWarning, c.Reason, "Reconcile", "%s", c.Message)
	}
}

func findCondition(conds []metav1.Condition, t string) *metav1.Condition {
	for i := range conds {
		if conds[i].Type == t {
			return &conds[i]
		}
	}
	return nil
}

// SetupWithManager registers the controller with mgr, whose cache must have the index
// autoscalingv1alpha1.ScheduleTargetField (api/index).
func (r *Reconciler) SetupWithManager(mgr ctrl.Manager) error {
	b := ctrl.NewControllerManagedBy(mgr).
		For(&autoscalingv1alpha1.ScheduledPodAutoscaler{}, builder.WithPredicates(predicate.GenerationChangedPredicate{})).
		Watches(&autoscalingv2.HorizontalPodAutoscaler{}, handler.EnqueueRequestsFromMapFunc(r.sameName),
			builder.WithPredicates(hpaChanged{})).
		Watches(&autoscalingv1alpha1.Schedule{}, handler.EnqueueRequestsFromMapFunc(scheduleTarget),
			builder.WithPredicates(predicate.GenerationChangedPredicate{}))
	// A calendar's edit moves the windows of the Schedules that name it (the index
	// calendarv1alpha1.CalendarField).
	byCalendar := handler.EnqueueRequestsFromMapFunc(base.CalendarUsers(mgr.GetClient(),
		func() *autoscalingv1alpha1.ScheduleList { return &autoscalingv1alpha1.ScheduleList{} }, schedulesTargets))
	b = b.Watches(&calendarv1alpha1.Calendar{}, byCalendar, builder.WithPredicates(predicate.GenerationChangedPredicate{})).
		Watches(&calendarv1alpha1.ClusterCalendar{}, byCalendar, builder.WithPredicates(predicate.GenerationChangedPredicate{}))
	c, err := r.Build(b, controllerName, DefaultWorkers, r)
	r.ctrl, r.cache = c, mgr.GetCache()
	return err
}

// sameName maps a HorizontalPodAutoscaler to the autoscaler of the same name, when one exists
// (in the cache): the HPAs of other controllers and of users, which almanac has nothing to do
// with, cost no reconcile.
// An HPA that an autoscaler is attached to (spec.targetRef) maps to that autoscaler too.
func (r *Reconciler) sameName(ctx context.Context, obj client.Object) []reconcile.Request {
	out := r.attachedTo(schema.GroupKind{Group: "autoscaling", Kind: "HorizontalPodAutoscaler"})(ctx, obj)
	spa := &autoscalingv1alpha1.ScheduledPodAutoscaler{}
	if err := r.Client.Get(ctx, client.ObjectKeyFromObject(obj), spa); err != nil || spa.Attached() {
		return out
	}
	return append(out, reconcile.Request{NamespacedName: client.ObjectKeyFromObject(obj)})
}

// schedulesTargets maps Schedules to their autoscalers, each once.
func schedulesTargets(list *autoscalingv1alpha1.ScheduleList) []reconcile.Request {
	seen := map[types.NamespacedName]bool{}
	var out []reconcile.Request
	for i := range list.Items {
		for _, req := range scheduleTarget(context.Background(), &list.Items[i]) {
			if !seen[req.NamespacedName] {
				seen[req.NamespacedName] = true
				out = append(out, req)
			}
		}
	}
	return out
}

// scheduleTarget maps a Schedule to the autoscaler it changes.
func scheduleTarget(_ context.Context, obj client.Object) []reconcile.Request {
	s, ok := obj.(*autoscalingv1alpha1.Schedule)
	if !ok || s.Spec.ScaleTargetRef.Name == "" {
		return nil
	}
	return []reconcile.Request{{NamespacedName: types.NamespacedName{Namespace: s.Namespace, Name: s.Spec.ScaleTargetRef.Name}}}
}

// hpaChanged lets through HorizontalPodAutoscaler changes that can concern almanac: creation,
// deletion, and updates of the spec (including another manager taking over minReplicas) or of
// the owners. The HPA controller's status writes (every 15 s per HPA) and label or annotation
// edits are ignored, and so are almanac's own writes: the reconcile that wrote the HPA has
// already done what there is to do (another reconcile would only find a cached autoscaler
// behind its status write).
type hpaChanged struct {
	predicate.Funcs
}

func (hpaChanged) Create(e event.CreateEvent) bool {
	return !writtenByAlmanac(nil, e.Object)
}

func (hpaChanged) Update(e event.UpdateEvent) bool {
	o, okOld := e.ObjectOld.(*autoscalingv2.HorizontalPodAutoscaler)
	n, okNew := e.ObjectNew.(*autoscalingv2.HorizontalPodAutoscaler)
	if !okOld || !okNew {
		return true
	}
	if writtenByAlmanac(o, n) {
		return false
	}
	return o.Generation != n.Generation ||
		!equality.Semantic.DeepEqual(o.Spec, n.Spec) ||
		!equality.Semantic.DeepEqual(o.OwnerReferences, n.OwnerReferences)
}

// writtenByAlmanac reports whether the write that turned old into obj (old nil: created it)
// was almanac's own server-side apply. A manager's managedFields entry changes its time only
// when that manager writes; another manager taking fields over changes almanac's entry's
// fields. So: almanac's entry is new, or its time changed while its fields did not. When in
// doubt (an apply that also changed which fields almanac owns), it reports false, and a
// reconcile that changes nothing follows.
func writtenByAlmanac(old, obj client.Object) bool {
	now := almanacEntry(obj)
	if now == nil {
		return false
	}
	var before *metav1.ManagedFieldsEntry
	if old != nil {
		before = almanacEntry(old)
	}
	switch {
	case before == nil:
		return true
	case now.Time == nil || before.Time == nil || now.Time.Equal(before.Time):
		return false
	default:
		return now.FieldsV1 != nil && before.FieldsV1 != nil && now.FieldsV1.Equal(*before.FieldsV1)
	}
}

// almanacEntry returns almanac's apply entry of obj's managedFields (for the spec), or nil.
func almanacEntry(obj client.Object) *metav1.ManagedFieldsEntry {
	for _, e := range obj.GetManagedFields() {
		if e.Manager == index.FieldManager && e.Operation == metav1.ManagedFieldsOperationApply && e.Subresource == "" {
			return &e
		}
	}
	return nil
}
