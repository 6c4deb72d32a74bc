package jobs

import (
	"github.com/prometheus/client_golang/prometheus"
	"sigs.k8s.io/controller-runtime/pkg/metrics"
)

// Kinds, the "kind" label of the metrics.
const (
	KindScheduledJob = "ScheduledJob"
	KindEventJob     = "EventJob"
)

// Reasons of almanac_job_runs_skipped_total and almanac_job_runs_missed_total.
const (
	SkipForbid      = "ConcurrencyForbid"
	SkipSuspended   = "Suspended"
	SkipCalendar    = "Calendar"
	SkipJobConflict = "JobConflict"
	SkipJobInvalid  = "JobInvalid"
	SkipNameTooLong = "JobNameTooLong"
	// SkipUpstreamFailed and SkipSetExpired count the sets of an EventJob's triggers that
	// started no Job: an upstream run ended without its trigger's outcome (fanIn.onFailure
	// Skip), or the set was not complete within its horizon.
	SkipUpstreamFailed = "UpstreamFailed"
	SkipSetExpired     = "SetExpired"
	MissDeadline       = "DeadlinePassed"
	MissSuperseded     = "Superseded"
	MissJobsReplaced   = "Replaced"
)

// lagBuckets reach from 5 ms (a reconcile against a nearby API server) to 10 minutes (the
// default startingDeadlineSeconds).
var lagBuckets = []float64{0.005, 0.01, 0.025, 0.05, 0.1, 0.25, 0.5, 1, 2.5, 5, 10, 30, 60, 120, 300, 600}

var (
	// RunsStarted counts the Jobs created, by the kind of the object that created them.
	RunsStarted = prometheus.NewCounterVec(prometheus.CounterOpts{
		Name: "almanac_job_runs_started_total",
		Help: "Jobs created by ScheduledJobs and EventJobs, one per slot or upstream Job.",
	}, []string{"kind"})
	// RunsMissed counts ScheduledJob slots that were not run because their starting deadline
	// passed or a later catch-up run superseded them.
	RunsMissed = prometheus.NewCounterVec(prometheus.CounterOpts{
		Name: "almanac_job_runs_missed_total",
		Help: "ScheduledJob slots not run because the starting deadline passed (DeadlinePassed) or a later catch-up run superseded them (Superseded).",
	}, []string{"kind", "reason"})
	// RunsSkipped counts due runs that were not started on purpose or because the Job could
	// not be created, by reason.
	RunsSkipped = prometheus.NewCounterVec(prometheus.CounterOpts{
		Name: "almanac_job_runs_skipped_total",
		Help: "Due runs not started, by reason: ConcurrencyForbid, Suspended, JobConflict, JobInvalid, JobNameTooLong; an EventJob's sets of upstream runs: UpstreamFailed, SetExpired.",
	}, []string{"kind", "reason"})
	// ScheduleLag observes, for each Job a ScheduledJob creates, the time from the slot's
	// nominal instant to the Job's creation.
	ScheduleLag = prometheus.NewHistogram(prometheus.HistogramOpts{
		Name:    "almanac_job_schedule_lag_seconds",
		Help:    "Time from a ScheduledJob slot's nominal instant to the creation of its Job.",
		Buckets: lagBuckets,
	})
	// TriggerLag observes, for each Job an EventJob creates, the time from the upstream
	// Job's condition (whole seconds, as the API stores it) to the downstream Job's creation.
	TriggerLag = prometheus.NewHistogram(prometheus.HistogramOpts{
		Name:    "almanac_job_trigger_lag_seconds",
		Help:    "Time from an upstream Job's Complete or Failed condition (second precision) to the creation of the EventJob's Job.",
		Buckets: lagBuckets,
	})
)

// countedReasons are the kind and reason pairs that the reconcilers count into RunsMissed and
// RunsSkipped. Their series are created at zero when the process starts, so that they are
// exported before the first event: an alert on increase() sees the first miss, and a rule
// that names a series can be checked against a scrape (test/monitoring).
var countedReasons = map[*prometheus.CounterVec][][2]string{
	RunsMissed: {{KindScheduledJob, MissDeadline}, {KindScheduledJob, MissSuperseded}},
	RunsSkipped: {
		{KindScheduledJob, SkipForbid}, {KindScheduledJob, SkipSuspended}, {KindScheduledJob, SkipCalendar},
		{KindEventJob, SkipForbid}, {KindEventJob, SkipSuspended}, {KindEventJob, SkipJobConflict},
		{KindEventJob, SkipJobInvalid}, {KindEventJob, SkipNameTooLong},
		{KindEventJob, SkipUpstreamFailed}, {KindEventJob, SkipSetExpired},
	},
}

func init() {
	metrics.Registry.MustRegister(RunsStarted, RunsMissed, RunsSkipped, ScheduleLag, TriggerLag)
	RunsStarted.WithLabelValues(KindScheduledJob)
	RunsStarted.WithLabelValues(KindEventJob)
	for vec, pairs := range countedReasons {
		for _, p := range pairs {
			vec.WithLabelValues(p[0], p[1])
		}
	}
}
