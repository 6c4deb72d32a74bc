package schedule

// The metrics of overrides (`almanac override`), which this reconciler owns: the Schedule
// reconciler is the one that reads every override and deletes it when its window ends. They
// are registered with controller-runtime's metrics.Registry, as the other metrics of almanac
// (reconcilers/scheduledpodautoscaler, reconcilers/jobs, reconcilers/base). Their series
// carry the override's namespace and name and are deleted with it; only the leader exports
// them.

import (
	"github.com/prometheus/client_golang/prometheus"
	"sigs.k8s.io/controller-runtime/pkg/metrics"

	autoscalingv1alpha1 "github.com/almanac-dev/almanac/api/autoscaling/v1alpha1"
)

// kindSchedule is the kind label of this reconciler's series of shared metrics.
const kindSchedule = "Schedule"

var (
	// OverrideWindowStart is the start of each override's window (unix seconds): the override is
	// in force from then on, until OverrideWindowEnd.
	OverrideWindowStart = prometheus.NewGaugeVec(prometheus.GaugeOpts{
		Name: "almanac_override_start_timestamp_seconds",
		Help: "Start of the window of each override Schedule (almanac override, label autoscaling.almanac.dev/override=true), unix seconds, by the ScheduledPodAutoscaler it changes.",
	}, []string{"namespace", "name", "autoscaler"})
	// OverrideWindowEnd is the end of each override's window (unix seconds), when the reconciler
	// deletes it.
	OverrideWindowEnd = prometheus.NewGaugeVec(prometheus.GaugeOpts{
		Name: "almanac_override_end_timestamp_seconds",
		Help: "End of the window of each override Schedule (almanac override), unix seconds; the override is deleted then.",
	}, []string{"namespace", "name", "autoscaler"})
)

func init() {
	metrics.Registry.MustRegister(OverrideWindowStart, OverrideWindowEnd)
}

// observeOverride sets the series of s when it is an override, and deletes them otherwise (a
// Schedule whose override label was removed).
func observeOverride(s *autoscalingv1alpha1.Schedule) {
	iv, ok := overrideWindow(s)
	if !ok {
		forgetOverride(s.Namespace, s.Name)
		return
	}
	target := s.Spec.ScaleTargetRef.Name
	OverrideWindowStart.WithLabelValues(s.Namespace, s.Name, target).Set(float64(iv.Start.Unix()))
	OverrideWindowEnd.WithLabelValues(s.Namespace, s.Name, target).Set(float64(iv.End.Unix()))
}

// forgetOverride deletes the series of an override that is gone or ended.
func forgetOverride(namespace, name string) {
	labels := prometheus.Labels{"namespace": namespace, "name": name}
	OverrideWindowStart.DeletePartialMatch(labels)
	OverrideWindowEnd.DeletePartialMatch(labels)
}
