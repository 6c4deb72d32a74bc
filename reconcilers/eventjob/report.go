package eventjob

import (
	batchv1 "k8s.io/api/batch/v1"
	corev1 "k8s.io/api/core/v1"
	"k8s.io/apimachinery/pkg/api/meta"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"

	batchv1alpha1 "github.com/almanac-dev/almanac/api/batch/v1alpha1"
	"github.com/almanac-dev/almanac/reconcilers/jobs"
)

// report records the events and metrics of what the just-written status says happened, once.
func (r *Reconciler) report(ej *batchv1alpha1.EventJob, st *batchv1alpha1.EventJobStatus, res *result, current []*batchv1.Job) {
	if ready := meta.FindStatusCondition(st.Conditions, batchv1alpha1.ConditionReady); ready != nil && ready.Status == metav1.ConditionFalse {
		if prev := meta.FindStatusCondition(ej.Status.Conditions, batchv1alpha1.ConditionReady); res.failReason != "" ||
			prev == nil || prev.Reason != ready.Reason || prev.Message != ready.Message {
			r.Recorder.Eventf(ej, nil, corev1.EventTypeWarning, ready.Reason, jobs.ActionCreate, "%s", ready.Message)
		}
	}
	for _, s := range res.skipped {
		jobs.RunsSkipped.WithLabelValues(jobs.KindEventJob, s.reason).Inc()
		if s.reason == jobs.SkipForbid || s.reason == jobs.SkipSuspended {
			r.Recorder.Eventf(ej, s.trigger.job, corev1.EventTypeNormal, jobs.EventRunSkipped, jobs.ActionSkip,
				"Started no Job for upstream Job %s (%s)", s.trigger.job.Name, s.reason)
		}
	}
	byName := map[string]*batchv1.Job{}
	for _, j := range current {
		byName[j.Name] = j
	}
	for _, ref := range ej.Status.Active {
		j := byName[ref.Name]
		if j == nil {
			continue
		}
		switch jobs.OutcomeOf(j).Type {
		case batchv1.JobComplete:
			r.Recorder.Eventf(ej, j, corev1.EventTypeNormal, jobs.EventJobSucceeded, jobs.ActionObserve, "Job %s completed", j.Name)
		case batchv1.JobFailed:
			r.Recorder.Eventf(ej, j, corev1.EventTypeWarning, jobs.EventJobFailed, jobs.ActionObserve, "Job %s failed", j.Name)
		}
	}
}
