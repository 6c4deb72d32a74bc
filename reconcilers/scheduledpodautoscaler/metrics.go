package scheduledpodautoscaler

// The metrics of scheduled scaling. They are registered with controller-runtime's
// metrics.Registry, so the manager's metrics server (HTTPS, behind Kubernetes authentication
// and authorization) serves them next to controller-runtime's own. Label sets stay small:
// per-object labels (namespace, name) are used only for gauges whose series are deleted with
// the object.
//
// They live with this reconciler, which owns them. The Schedule reconciler also counts into
// EvaluationErrors (kind "Schedule"), through the counter the manager hands it
// (schedule.Reconciler.EvaluationErrors), so that neither reconciler imports the other.

import (
	"time"

	"github.com/prometheus/client_golang/prometheus"
	"sigs.k8s.io/controller-runtime/pkg/metrics"
)

const (
	metricsNamespace = "almanac"
	scalingSubsystem = "autoscaler"
	// kindAutoscaler is the kind label of this reconciler's series of shared metrics.
	kindAutoscaler = "ScheduledPodAutoscaler"
)

var (
	// TransitionsApplied counts the changes of bounds written to HorizontalPodAutoscalers
	// because a Schedule's window opened or closed.
	TransitionsApplied = prometheus.NewCounter(prometheus.CounterOpts{
		Namespace: metricsNamespace,
		Subsystem: scalingSubsystem,
		Name:      "transitions_applied_total",
		Help:      "Changes of minReplicas/maxReplicas written to a HorizontalPodAutoscaler because a Schedule's window opened or closed.",
	})

	// TransitionLag observes, for each applied transition, the time from the boundary
	// instant to the moment the HorizontalPodAutoscaler patch returned.
	TransitionLag = prometheus.NewHistogram(prometheus.HistogramOpts{
		Namespace: metricsNamespace,
		Subsystem: scalingSubsystem,
		Name:      "transition_lag_seconds",
		Help:      "Time from a Schedule boundary instant to the HorizontalPodAutoscaler having the new bounds.",
		Buckets:   []float64{0.001, 0.0025, 0.005, 0.01, 0.025, 0.05, 0.1, 0.25, 0.5, 1, 2.5, 5, 10, 30, 60, 300},
	})

	// ActiveSchedules is the number of Schedules whose windows are open now, per
	// ScheduledPodAutoscaler. Its series are deleted with the autoscaler.
	ActiveSchedules = prometheus.NewGaugeVec(prometheus.GaugeOpts{
		Namespace: metricsNamespace,
		Subsystem: scalingSubsystem,
		Name:      "active_schedules",
		Help:      "Schedules whose windows are open now, per ScheduledPodAutoscaler.",
	}, []string{"namespace", "name"})

	// EvaluationErrors counts Schedules that could not be evaluated (bad zone, time or
	// cron expression) each time an autoscaler or Schedule was reconciled.
	EvaluationErrors = prometheus.NewCounterVec(prometheus.CounterOpts{
		Namespace: metricsNamespace,
		Subsystem: scalingSubsystem,
		Name:      "schedule_evaluation_errors_total",
		Help:      "Schedules that could not be evaluated, counted per reconcile, by the kind of object being reconciled.",
	}, []string{"kind"})
)

func init() {
	// MustRegister panics on a duplicate name, a programming error caught by any test that
	// imports the package.
	metrics.Registry.MustRegister(TransitionsApplied, TransitionLag, ActiveSchedules, EvaluationErrors)
	// At zero from the start, so that rate() and alerts see the first error.
	EvaluationErrors.WithLabelValues(kindAutoscaler)
	EvaluationErrors.WithLabelValues("Schedule")
}

// ScheduleEvaluationErrors is the counter of EvaluationErrors that the Schedule reconciler
// counts into (kind "Schedule").
func ScheduleEvaluationErrors() prometheus.Counter {
	return EvaluationErrors.WithLabelValues("Schedule")
}

// observeTransition records one applied transition and its lag.
func observeTransition(lag time.Duration) {
	TransitionsApplied.Inc()
	TransitionLag.Observe(lag.Seconds())
}

// setActiveSchedules sets the number of open windows of one autoscaler.
func setActiveSchedules(namespace, name string, n int) {
	ActiveSchedules.WithLabelValues(namespace, name).Set(float64(n))
}

// forgetAutoscaler deletes the series of an autoscaler that no longer exists.
func forgetAutoscaler(namespace, name string) {
	ActiveSchedules.DeleteLabelValues(namespace, name)
}
