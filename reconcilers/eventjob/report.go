package eventjob

import (
	batchv1 "k8s.io/api/batch/v1"
	corev1 "k8s.io/api/core/v1"

	batchv1alpha1 "github.com/almanac-dev/almanac/api/batch/v1alpha1"
	"github.com/almanac-dev/almanac/reconcilers/jobs"
)

// report records the events and metrics of what the just-written status says happened, once.
func (r *Reconciler) report(ej *batchv1alpha1.EventJob, st *batchv1alpha1.EventJobStatus, res *result, current []*batchv1.Job) {
	jobs.ReportNotReady(r.Recorder, ej, ej.Status.Conditions, st.Conditions, res.failReason != "", jobs.ActionCreate)
	for _, s := range res.skipped {
		jobs.RunsSkipped.WithLabelValues(jobs.KindEventJob, s.reason).Inc()
		if s.reason == jobs.SkipForbid || s.reason == jobs.SkipSuspended {
			r.Recorder.Eventf(ej, s.trigger.job, corev1.EventTypeNormal, jobs.EventRunSkipped, jobs.ActionSkip,
				"Started no Job for upstream Job %s (%s)", s.trigger.job.Name, s.reason)
		}
	}
	jobs.ReportFinished(r.Recorder, ej, ej.Status.Active, current)
}
