package metrics

import (
	"time"

	"github.com/prometheus/client_golang/prometheus"
)

const scalingSubsystem = "autoscaler"

var (
	// TransitionsApplied counts the changes of bounds written to HorizontalPodAutoscalers
	// because a Schedule's window opened or closed.
	TransitionsApplied = prometheus.NewCounter(prometheus.CounterOpts{
		Namespace: Namespace,
		Subsystem: scalingSubsystem,
		Name:      "transitions_applied_total",
		Help:      "Changes of minReplicas/maxReplicas written to a HorizontalPodAutoscaler because a Schedule's window opened or closed.",
	})

	// TransitionLag observes, for each applied transition, the time from the boundary
	// instant to the moment the HorizontalPodAutoscaler patch returned.
	TransitionLag = prometheus.NewHistogram(prometheus.HistogramOpts{
		Namespace: Namespace,
		Subsystem: scalingSubsystem,
		Name:      "transition_lag_seconds",
		Help:      "Time from a Schedule boundary instant to the HorizontalPodAutoscaler having the new bounds.",
		Buckets:   []float64{0.001, 0.0025, 0.005, 0.01, 0.025, 0.05, 0.1, 0.25, 0.5, 1, 2.5, 5, 10, 30, 60, 300},
	})

	// ActiveSchedules is the number of Schedules whose windows are open now, per
	// ScheduledPodAutoscaler. Its series are deleted with the autoscaler.
	ActiveSchedules = prometheus.NewGaugeVec(prometheus.GaugeOpts{
		Namespace: Namespace,
		Subsystem: scalingSubsystem,
		Name:      "active_schedules",
		Help:      "Schedules whose windows are open now, per ScheduledPodAutoscaler.",
	}, []string{"namespace", "name"})

	// EvaluationErrors counts Schedules that could not be evaluated (bad zone, time or
	// cron expression) each time an autoscaler or Schedule was reconciled.
	EvaluationErrors = prometheus.NewCounterVec(prometheus.CounterOpts{
		Namespace: Namespace,
		Subsystem: scalingSubsystem,
		Name:      "schedule_evaluation_errors_total",
		Help:      "Schedules that could not be evaluated, counted per reconcile, by the kind of object being reconciled.",
	}, []string{"kind"})
)

func init() {
	register(TransitionsApplied, TransitionLag, ActiveSchedules, EvaluationErrors)
}

// ObserveTransition records one applied transition and its lag.
func ObserveTransition(lag time.Duration) {
	TransitionsApplied.Inc()
	TransitionLag.Observe(lag.Seconds())
}

// SetActiveSchedules sets the number of open windows of one autoscaler.
func SetActiveSchedules(namespace, name string, n int) {
	ActiveSchedules.WithLabelValues(namespace, name).Set(float64(n))
}

// ForgetAutoscaler deletes the series of an autoscaler that no longer exists.
func ForgetAutoscaler(namespace, name string) {
	ActiveSchedules.DeleteLabelValues(namespace, name)
}
