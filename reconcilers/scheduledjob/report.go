package scheduledjob

import (
	"fmt"

	batchv1 "k8s.io/api/batch/v1"
	corev1 "k8s.io/api/core/v1"
	"k8s.io/apimachinery/pkg/api/meta"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"

	batchv1alpha1 "github.com/almanac-dev/almanac/api/batch/v1alpha1"
	calendarv1alpha1 "github.com/almanac-dev/almanac/api/calendar/v1alpha1"
	"github.com/almanac-dev/almanac/reconcilers/jobs"
)

// report records the events and metrics of what the just-written status says happened: each
// transition is reported once, after it is recorded, so that a failed status write and its
// retry do not report it twice.
func (r *Reconciler) report(sj *batchv1alpha1.ScheduledJob, st *batchv1alpha1.ScheduledJobStatus, p *plan, out outcome, current []*batchv1.Job) {
	old := &sj.Status
	jobs.ReportNotReady(r.Recorder, sj, old.Conditions, st.Conditions, out.failReason != "", jobs.ActionSchedule)
	r.reportMisses(sj, p)
	if p.skipped > 0 {
		jobs.RunsSkipped.WithLabelValues(jobs.KindScheduledJob, jobs.SkipCalendar).Add(float64(p.skipped))
		r.Recorder.Eventf(sj, nil, corev1.EventTypeNormal, jobs.EventRunSkipped, jobs.ActionSkip,
			"Skipped %d run(s) by spec.calendars, the latest at %s: %s", p.skipped, p.describe(p.lastSkipped), p.skippedReason)
	}
	if c := meta.FindStatusCondition(st.Conditions, calendarv1alpha1.ConditionCalendars); c != nil && c.Status == metav1.ConditionFalse {
		if o := meta.FindStatusCondition(old.Conditions, c.Type); o == nil || o.Message != c.Message {
			r.Recorder.Eventf(sj, nil, corev1.EventTypeWarning, c.Reason, jobs.ActionSchedule, "%s", c.Message)
		}
	}
	if s := p.sched.s; s != nil && s.OneShot() {
		r.reportPhase(sj, p, old.Phase, st.Phase, current)
		return
	}
	jobs.ReportFinished(r.Recorder, sj, old.Active, current)
}

func (r *Reconciler) reportMisses(sj *batchv1alpha1.ScheduledJob, p *plan) {
	if len(p.missed) == 0 {
		return
	}
	missed, skipped := map[string]int64{}, map[string]int64{}
	for reason, n := range p.missed {
		switch reason {
		case jobs.MissDeadline, jobs.MissSuperseded:
			missed[reason] = n
			jobs.RunsMissed.WithLabelValues(jobs.KindScheduledJob, reason).Add(float64(n))
		default:
			skipped[reason] = n
			jobs.RunsSkipped.WithLabelValues(jobs.KindScheduledJob, reason).Add(float64(n))
		}
	}
	deadlineNote := fmt.Sprintf("startingDeadlineSeconds is %d; after downtime only the latest slot within it runs", sj.Spec.StartingDeadline())
	if len(missed) > 0 {
		r.Recorder.Eventf(sj, nil, corev1.EventTypeWarning, jobs.EventRunsMissed, jobs.ActionSkip,
			"Did not run %s slot(s), the latest at %s: %s", describeMisses(missed), p.describe(p.lastMissed), deadlineNote)
	}
	if len(skipped) > 0 {
		r.Recorder.Eventf(sj, nil, corev1.EventTypeNormal, jobs.EventRunSkipped, jobs.ActionSkip,
			"Skipped %s run(s), the latest at %s", describeMisses(skipped), p.describe(p.lastMissed))
	}
}

// reportPhase reports a one-shot's phase changes.
func (r *Reconciler) reportPhase(sj *batchv1alpha1.ScheduledJob, p *plan, from, to batchv1alpha1.ScheduledJobPhase, current []*batchv1.Job) {
	s := p.sched.s
	if from == to || s == nil {
		return
	}
	var job *batchv1.Job
	for _, j := range current {
		if isOneShotJob(s, sj.Name, j) {
			job = j
		}
	}
	switch to {
	case batchv1alpha1.ScheduledJobPhasePending:
		r.Recorder.Eventf(sj, nil, corev1.EventTypeNormal, jobs.EventScheduled, jobs.ActionSchedule,
			"The Job runs at %s", p.describe(s.Due))
	case batchv1alpha1.ScheduledJobPhaseSucceeded, batchv1alpha1.ScheduledJobPhaseFailed:
		if job != nil && jobs.OutcomeOf(job).Finished() {
			jobs.ReportOutcome(r.Recorder, sj, job)
			return
		}
		r.Recorder.Eventf(sj, nil, corev1.EventTypeWarning, jobs.EventJobDeleted, jobs.ActionObserve,
			"The Job %s was deleted before it finished", batchv1alpha1.ScheduledJobName(sj.Name, s.Due))
	}
}
