package scheduledjob

import (
	"fmt"
	"time"

	batchv1 "k8s.io/api/batch/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"

	batchv1alpha1 "github.com/almanac-dev/almanac/api/batch/v1alpha1"
	"github.com/almanac-dev/almanac/api/conditions"
	"github.com/almanac-dev/almanac/reconcilers/jobs"
)

// runNow is what to do about the run-now request of a ScheduledJob
// (batchv1alpha1.AnnotationRunNow).
type runNow struct {
	// token is the request to handle now; empty when there is none or status records it.
	token string
	// name is the name of its Job.
	name string
	// found is its Job, created by an earlier attempt whose status write failed.
	found *batchv1.Job
	// refused says why no Job starts for it; it is recorded as handled all the same.
	refused string
	// replace are the running Jobs to delete first (concurrencyPolicy Replace).
	replace []*batchv1.Job
	// deferred: a slot's Job starts in this reconcile; the request waits for the next one,
	// so that concurrencyPolicy sees that Job.
	deferred bool
}

// decideRunNow decides the run-now request of sj, after the slots (p): a token that status
// does not record starts one Job, named after the token, under spec.concurrencyPolicy.
func decideRunNow(sj *batchv1alpha1.ScheduledJob, owned []*batchv1.Job, p *plan) runNow {
	token := batchv1alpha1.RunNowToken(sj)
	if token == "" || sj.Status.RunNow != nil && sj.Status.RunNow.Token == token {
		return runNow{}
	}
	rn := runNow{token: token, name: batchv1alpha1.RunNowJobName(sj.Name, token)}
	if err := batchv1alpha1.CheckRunNowToken(token); err != nil {
		// Admission refuses such a token; one stored while the webhooks were off is refused here.
		rn.refused = fmt.Sprintf("metadata.annotations[%s] %v", batchv1alpha1.AnnotationRunNow, err)
		return rn
	}
	for _, j := range owned {
		if j.Name == rn.name {
			rn.found = j
			return rn
		}
	}
	if !p.run.IsZero() {
		rn.deferred = true
		return rn
	}
	active := jobs.Active(owned)
	switch jobs.Decide(sj.Spec.ConcurrencyPolicy, len(active)) {
	case jobs.Skip:
		rn.refused = fmt.Sprintf("concurrencyPolicy is Forbid and Job %s is running", active[0].Name)
	case jobs.ReplaceAndStart:
		rn.replace = active
	}
	return rn
}

// handled reports whether the request is recorded by this reconcile (started, found or refused).
func (rn runNow) handled() bool { return rn.token != "" && !rn.deferred }

// recordRunNow writes the record of a handled request and the RunNow condition into st.
// job is the request's Job (created now or found); nil when it was refused.
func recordRunNow(sj *batchv1alpha1.ScheduledJob, st *batchv1alpha1.ScheduledJobStatus, rn runNow, job *batchv1.Job, refused string, now time.Time) {
	if !rn.handled() {
		return
	}
	rec := &batchv1alpha1.RunNowStatus{Token: rn.token, Time: metav1.Time{Time: now.UTC().Truncate(time.Second)}}
	c := metav1.Condition{Type: batchv1alpha1.ConditionRunNow}
	if job != nil {
		rec.JobName = job.Name
		if t, ok := batchv1alpha1.ParseTime(job.Annotations[batchv1alpha1.AnnotationScheduledTime]); ok {
			rec.Time = metav1.Time{Time: t}
		}
		c.Status, c.Reason = metav1.ConditionTrue, batchv1alpha1.ReasonRunNowStarted
		c.Message = fmt.Sprintf("Job %s started for run-now token %q at %s", job.Name, rn.token, batchv1alpha1.FormatTime(rec.Time.Time))
	} else {
		rec.Refused = refused
		c.Status, c.Reason = metav1.ConditionFalse, batchv1alpha1.ReasonRunNowRefused
		c.Message = fmt.Sprintf("No Job started for run-now token %q: %s", rn.token, refused)
	}
	st.RunNow = rec
	conditions.Set(&st.Conditions, c, sj.Generation, now)
}

// runNowRecorded reports whether the run of a run-now Job j is recorded, so that its
// finalizer may go: status records its token, or the annotation asks for another token (so
// j's never starts again, recorded or not).
func runNowRecorded(sj *batchv1alpha1.ScheduledJob, st *batchv1alpha1.ScheduledJobStatus, j *batchv1.Job) bool {
	if st.RunNow != nil && st.RunNow.JobName == j.Name {
		return true
	}
	return batchv1alpha1.RunNowJobName(sj.Name, batchv1alpha1.RunNowToken(sj)) != j.Name
}
