package sleep

// The metrics of sleeps, registered with controller-runtime's metrics.Registry (served by the
// manager's metrics server, behind authentication and authorization). Per-object series
// (kind, namespace, name) are deleted with the sleep.

import (
	"github.com/prometheus/client_golang/prometheus"
	"k8s.io/apimachinery/pkg/types"
	"sigs.k8s.io/controller-runtime/pkg/metrics"

	sleepv1alpha1 "github.com/almanac-dev/almanac/api/sleep/v1alpha1"
)

const (
	metricsNamespace = "almanac"
	sleepSubsystem   = "sleep"
)

// The states of SleepWorkloads.
var workloadStates = []string{"asleep", "awake", "opted_out", "contested", "held_elsewhere", "not_slept"}

var (
	// SleepWorkloads counts a sleep's selected workloads by state.
	SleepWorkloads = prometheus.NewGaugeVec(prometheus.GaugeOpts{
		Namespace: metricsNamespace, Subsystem: sleepSubsystem, Name: "workloads",
		Help: "Workloads a Sleep or ClusterSleep selects, by state: asleep, awake, opted_out, contested, held_elsewhere, not_slept.",
	}, []string{"kind", "namespace", "name", "state"})

	// AsleepPods, AsleepCPU and AsleepMemory are what a sleep keeps asleep now.
	AsleepPods = prometheus.NewGaugeVec(prometheus.GaugeOpts{
		Namespace: metricsNamespace, Subsystem: sleepSubsystem, Name: "asleep_pods",
		Help: "Pods (recorded replicas) a Sleep or ClusterSleep keeps asleep now.",
	}, []string{"kind", "namespace", "name"})
	AsleepCPU = prometheus.NewGaugeVec(prometheus.GaugeOpts{
		Namespace: metricsNamespace, Subsystem: sleepSubsystem, Name: "asleep_cpu_request_cores",
		Help: "CPU requests, in cores, of the Pods a Sleep or ClusterSleep keeps asleep now.",
	}, []string{"kind", "namespace", "name"})
	AsleepMemory = prometheus.NewGaugeVec(prometheus.GaugeOpts{
		Namespace: metricsNamespace, Subsystem: sleepSubsystem, Name: "asleep_memory_request_bytes",
		Help: "Memory requests, in bytes, of the Pods a Sleep or ClusterSleep keeps asleep now.",
	}, []string{"kind", "namespace", "name"})

	// ReclaimedPodHours, ReclaimedCPUCoreHours and ReclaimedMemoryGiBHours count what sleeping
	// saved, as status.savings accounts it.
	ReclaimedPodHours = prometheus.NewCounterVec(prometheus.CounterOpts{
		Namespace: metricsNamespace, Subsystem: sleepSubsystem, Name: "reclaimed_pod_hours_total",
		Help: "Pod-hours not run because a Sleep or ClusterSleep kept them asleep.",
	}, []string{"kind", "namespace", "name"})
	ReclaimedCPUCoreHours = prometheus.NewCounterVec(prometheus.CounterOpts{
		Namespace: metricsNamespace, Subsystem: sleepSubsystem, Name: "reclaimed_cpu_request_core_hours_total",
		Help: "CPU request core-hours not held because a Sleep or ClusterSleep kept Pods asleep.",
	}, []string{"kind", "namespace", "name"})
	ReclaimedMemoryGiBHours = prometheus.NewCounterVec(prometheus.CounterOpts{
		Namespace: metricsNamespace, Subsystem: sleepSubsystem, Name: "reclaimed_memory_request_gib_hours_total",
		Help: "Memory request GiB-hours not held because a Sleep or ClusterSleep kept Pods asleep.",
	}, []string{"kind", "namespace", "name"})

	// WakeDuration and WakeLateness observe each measured wake.
	WakeDuration = prometheus.NewHistogram(prometheus.HistogramOpts{
		Namespace: metricsNamespace, Subsystem: sleepSubsystem, Name: "wake_duration_seconds",
		Help:    "Time from a wake's first write to every workload it woke being Ready.",
		Buckets: []float64{1, 5, 10, 30, 60, 120, 300, 600, 1200, 1800, 3600},
	})
	WakeLateness = prometheus.NewHistogram(prometheus.HistogramOpts{
		Namespace: metricsNamespace, Subsystem: sleepSubsystem, Name: "wake_lateness_seconds",
		Help:    "How long after its wake boundary a wake's last workload was Ready (0: on time).",
		Buckets: []float64{0, 1, 5, 10, 30, 60, 120, 300, 600, 1800, 3600},
	})

	// putBacksTotal counts the workloads put back to sleep after another field manager woke
	// them.
	putBacksTotal = prometheus.NewCounter(prometheus.CounterOpts{
		Namespace: metricsNamespace, Subsystem: sleepSubsystem, Name: "put_backs_total",
		Help: "Workloads put back to sleep after another field manager woke them during their sleep.",
	})
)

func init() {
	metrics.Registry.MustRegister(SleepWorkloads, AsleepPods, AsleepCPU, AsleepMemory,
		ReclaimedPodHours, ReclaimedCPUCoreHours, ReclaimedMemoryGiBHours, WakeDuration, WakeLateness, putBacksTotal)
}

// observe sets a sleep's series from the status it wrote, and counts what it reclaimed since
// the status it read.
func observe(h *holder, old *sleepv1alpha1.SleepStatus, next sleepv1alpha1.SleepStatus) {
	ns, name := h.namespace, h.obj.GetName()
	c := next.Workloads
	for i, n := range []int32{c.Asleep, c.Awake, c.OptedOut, c.Contested, c.HeldElsewhere, c.NotSlept} {
		SleepWorkloads.WithLabelValues(h.kind, ns, name, workloadStates[i]).Set(float64(n))
	}
	s := next.Savings
	AsleepPods.WithLabelValues(h.kind, ns, name).Set(float64(s.AsleepPods))
	AsleepCPU.WithLabelValues(h.kind, ns, name).Set(float64(s.AsleepCPUMillicores) / 1000)
	AsleepMemory.WithLabelValues(h.kind, ns, name).Set(float64(s.AsleepMemoryMebibytes) * (1 << 20))
	d := s.Total
	o := old.Savings.Total
	ReclaimedPodHours.WithLabelValues(h.kind, ns, name).Add(float64(max(d.PodSeconds-o.PodSeconds, 0)) / 3600)
	ReclaimedCPUCoreHours.WithLabelValues(h.kind, ns, name).Add(float64(max(d.CPUMillicoreSeconds-o.CPUMillicoreSeconds, 0)) / 3600 / 1000)
	ReclaimedMemoryGiBHours.WithLabelValues(h.kind, ns, name).Add(float64(max(d.MemoryMebibyteSeconds-o.MemoryMebibyteSeconds, 0)) / 3600 / 1024)
	if len(next.Wakes) > 0 && (len(old.Wakes) == 0 || !next.Wakes[len(next.Wakes)-1].ReadyAt.Equal(&old.Wakes[len(old.Wakes)-1].ReadyAt)) {
		m := next.Wakes[len(next.Wakes)-1]
		WakeDuration.Observe(m.Duration.Seconds())
		WakeLateness.Observe(m.Lateness.Seconds())
	}
}

// forgetSleep deletes the series of a sleep that no longer exists.
func forgetSleep(kind string, key types.NamespacedName) {
	for _, state := range workloadStates {
		SleepWorkloads.DeleteLabelValues(kind, key.Namespace, key.Name, state)
	}
	for _, v := range []*prometheus.GaugeVec{AsleepPods, AsleepCPU, AsleepMemory} {
		v.DeleteLabelValues(kind, key.Namespace, key.Name)
	}
	for _, v := range []*prometheus.CounterVec{ReclaimedPodHours, ReclaimedCPUCoreHours, ReclaimedMemoryGiBHours} {
		v.DeleteLabelValues(kind, key.Namespace, key.Name)
	}
}
