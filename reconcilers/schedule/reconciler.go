// Package schedule reconciles Schedules.
//
// It owns each Schedule's status — phase (Active, Inactive, Completed), nextStartTime,
// nextEndTime and the Valid condition — and keeps it true at the Schedule's own window
// boundaries by asking to be called again exactly then (RequeueAfter). It watches Schedules
// only, and writes nothing else: the bounds of the autoscaler that a Schedule changes are the
// ScheduledPodAutoscaler reconciler's job, and that reconciler watches Schedules itself, so a
// change of a Schedule enqueues its autoscaler there.
package schedule

import (
	"context"
	"fmt"
	"time"

	corev1 "k8s.io/api/core/v1"
	"k8s.io/apimachinery/pkg/api/meta"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/utils/clock"
	"k8s.io/utils/ptr"
	ctrl "sigs.k8s.io/controller-runtime"
	"sigs.k8s.io/controller-runtime/pkg/builder"
	"sigs.k8s.io/controller-runtime/pkg/client"
	"sigs.k8s.io/controller-runtime/pkg/predicate"

	"github.com/prometheus/client_golang/prometheus"

	autoscalingv1alpha1 "github.com/almanac-dev/almanac/api/autoscaling/v1alpha1"
	"github.com/almanac-dev/almanac/api/conditions"
	"github.com/almanac-dev/almanac/api/scaling"
	"github.com/almanac-dev/almanac/reconcilers/jobs"
)

// Reconciler keeps a Schedule's status true at its window boundaries. Options.
// MaxConcurrentReconciles bounds the number of Schedules reconciled at once (zero means 16, as
// for the ScheduledPodAutoscaler reconciler): many Schedules often share a boundary (09:00),
// and each then needs one status write.
type Reconciler struct {
	jobs.Base
	// EvaluationErrors counts, per reconcile, a Schedule that cannot be evaluated: the
	// almanac_autoscaler_schedule_evaluation_errors_total series of kind "Schedule", which the
	// ScheduledPodAutoscaler reconciler owns and the manager hands in. Nil counts nothing.
	EvaluationErrors prometheus.Counter
}

// New returns a Reconciler that uses mgr's clients and event recorder and takes "now" from
// clk.
func New(mgr ctrl.Manager, clk clock.PassiveClock) *Reconciler {
	return &Reconciler{Base: jobs.NewBase(mgr, clk, "almanac-schedule")}
}

// +kubebuilder:rbac:groups=autoscaling.almanac.dev,resources=schedules,verbs=get;list;watch
// +kubebuilder:rbac:groups=autoscaling.almanac.dev,resources=schedules/status,verbs=get;patch
// +kubebuilder:rbac:groups=events.k8s.io,resources=events,verbs=create;patch

// Reconcile writes the Schedule's status for now and asks to be called again at its next
// boundary.
func (r *Reconciler) Reconcile(ctx context.Context, req ctrl.Request) (ctrl.Result, error) {
	s := &autoscalingv1alpha1.Schedule{}
	if err := r.APIReader.Get(ctx, req.NamespacedName, s); err != nil {
		return ctrl.Result{}, client.IgnoreNotFound(err)
	}
	if !s.DeletionTimestamp.IsZero() {
		return ctrl.Result{}, nil
	}
	now := r.Clock.Now()
	st, next := Status(s, now)
	if err := r.writeStatus(ctx, s, st); err != nil {
		return ctrl.Result{}, err
	}
	return jobs.RequeueAt(next, r.Clock.Now()), nil
}

// Status returns the status of s at now and the instant at which it next changes (zero if
// it never does). It is a pure function of the Schedule and now.
func Status(s *autoscalingv1alpha1.Schedule, now time.Time) (autoscalingv1alpha1.ScheduleStatus, time.Time) {
	st := *s.Status.DeepCopy()
	st.ObservedGeneration = s.Generation
	st.NextStartTime, st.NextEndTime = nil, nil

	w, err := scaling.Compile(s)
	if err != nil {
		st.Phase = autoscalingv1alpha1.SchedulePhaseInactive
		conditions.Set(&st.Conditions, invalidCondition(err), s.Generation, now)
		return st, time.Time{}
	}
	conditions.Set(&st.Conditions, validCondition(), s.Generation, now)

	iv, ok := w.NextInterval(now)
	switch {
	case !ok:
		st.Phase = autoscalingv1alpha1.SchedulePhaseCompleted
		return st, time.Time{}
	case s.Spec.Suspend:
		// A suspended Schedule changes nothing, so it announces no window; resuming it is
		// a spec change, which reconciles it again.
		st.Phase = autoscalingv1alpha1.SchedulePhaseInactive
		return st, time.Time{}
	case iv.Contains(now):
		st.Phase = autoscalingv1alpha1.SchedulePhaseActive
	default:
		st.Phase = autoscalingv1alpha1.SchedulePhaseInactive
	}
	st.NextStartTime = ptr.To(metav1.NewTime(iv.Start.UTC()))
	st.NextEndTime = ptr.To(metav1.NewTime(iv.End.UTC()))
	next, _ := w.NextBoundary(now)
	return st, next
}

// writeStatus writes the status if it changed and then, once it is recorded, reports a newly
// invalid Schedule.
func (r *Reconciler) writeStatus(ctx context.Context, s *autoscalingv1alpha1.Schedule, st autoscalingv1alpha1.ScheduleStatus) error {
	valid := meta.FindStatusCondition(st.Conditions, autoscalingv1alpha1.ConditionValid)
	invalid := valid != nil && valid.Status == metav1.ConditionFalse
	if invalid && r.EvaluationErrors != nil {
		r.EvaluationErrors.Inc()
	}
	changed := s.DeepCopy()
	changed.Status = st
	if written, err := r.WriteStatus(ctx, "Schedule", s, changed); err != nil || !written {
		return err
	}
	old := meta.FindStatusCondition(s.Status.Conditions, autoscalingv1alpha1.ConditionValid)
	if invalid && (old == nil || old.Message != valid.Message) {
		r.Recorder.Eventf(s, nil, corev1.EventTypeWarning, valid.Reason, "Evaluate", "%s", valid.Message)
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
	opts := r.Options
	if opts.MaxConcurrentReconciles == 0 {
		opts.MaxConcurrentReconciles = 16
	}
	return ctrl.NewControllerManagedBy(mgr).
		For(&autoscalingv1alpha1.Schedule{}, builder.WithPredicates(predicate.GenerationChangedPredicate{})).
		WithOptions(opts).
		Named("schedule").
		Complete(r)
}
