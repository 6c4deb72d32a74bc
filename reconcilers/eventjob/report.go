package eventjob

import (
	"fmt"
	"slices"
	"strings"

	batchv1 "k8s.io/api/batch/v1"
	corev1 "k8s.io/api/core/v1"

	batchv1alpha1 "github.com/almanac-dev/almanac/api/batch/v1alpha1"
	"github.com/almanac-dev/almanac/reconcilers/jobs"
)

// report records the events and metrics of what the just-written status says happened, once.
func (r *Reconciler) report(ej *batchv1alpha1.EventJob, st *batchv1alpha1.EventJobStatus, p *plan, res *result, current []*batchv1.Job) {
	jobs.ReportNotReady(r.Recorder, ej, ej.Status.Conditions, st.Conditions, res.failReason != "", jobs.ActionCreate)
	for _, s := range res.skipped {
		jobs.RunsSkipped.WithLabelValues(jobs.KindEventJob, s.reason).Inc()
		if s.reason == jobs.SkipForbid || s.reason == jobs.SkipSuspended {
			r.Recorder.Eventf(ej, s.trigger.job, corev1.EventTypeNormal, jobs.EventRunSkipped, jobs.ActionSkip,
				"Started no Job for %s (%s)", s.trigger.describe(), s.reason)
		}
	}
	if fp := p.fanIn; fp != nil {
		for i := range fp.failed {
			s := &fp.failed[i]
			jobs.RunsSkipped.WithLabelValues(jobs.KindEventJob, jobs.SkipUpstreamFailed).Inc()
			r.Recorder.Eventf(ej, nil, corev1.EventTypeWarning, jobs.EventSetFailed, jobs.ActionSkip,
				"Started no Job for %s: %s (fanIn.onFailure: Skip)", describeSet(s), failedRuns(ej, s))
		}
		for i, s := range slices.Concat(fp.expired, fp.closedEarly) {
			why := fmt.Sprintf("it waited until %s", batchv1alpha1.FormatTime(s.Time.Add(fp.policy.Reach())))
			if i >= len(fp.expired) {
				why = fmt.Sprintf("closed early, since more than %d sets were open or recorded", batchv1alpha1.MaxFanInSets)
			}
			jobs.RunsSkipped.WithLabelValues(jobs.KindEventJob, jobs.SkipSetExpired).Inc()
			r.Recorder.Eventf(ej, nil, corev1.EventTypeWarning, jobs.EventSetExpired, jobs.ActionSkip,
				"Started no Job for %s: %s%s", describeSet(&s), missingRuns(ej, &s), why)
		}
		for _, j := range fp.unpaired {
			r.Recorder.Eventf(ej, j, corev1.EventTypeWarning, jobs.EventRunUnpaired, jobs.ActionSkip,
				"Upstream Job %s has no slot (neither %s nor %s), so it joins no set: name the CronJob or ScheduledJob that creates it, or pair by window (fanIn.pairBy: Window)",
				j.Name, batchv1alpha1.AnnotationScheduledTime, batchv1.CronJobScheduledTimestampAnnotation)
		}
	}
	jobs.ReportFinished(r.Recorder, ej, ej.Status.Active, current)
}

// failedRuns names the runs of a failed set that ended without their trigger's outcome.
func failedRuns(ej *batchv1alpha1.EventJob, s *batchv1alpha1.FanInSet) string {
	var out []string
	for _, m := range sortedMembers(s) {
		if int(m.Trigger) < len(ej.Spec.Triggers) && !fires(ej.Spec.Triggers[m.Trigger].EffectiveType(), memberOutcome(&m)) {
			out = append(out, fmt.Sprintf("upstream Job %s ended %s", m.JobName, m.Condition))
		}
	}
	return strings.Join(out, ", ")
}

// missingRuns names the triggers with no run in an expired set: "no run of ScheduledJob b; ".
func missingRuns(ej *batchv1alpha1.EventJob, s *batchv1alpha1.FanInSet) string {
	var missing []string
	for i, t := range ej.Spec.Triggers {
		if !hasTrigger(s, int32(i)) {
			missing = append(missing, fmt.Sprintf("%s %s", t.Kind, t.Name))
		}
	}
	if len(missing) == 0 {
		return ""
	}
	return "no run of " + strings.Join(missing, ", ") + "; "
}
