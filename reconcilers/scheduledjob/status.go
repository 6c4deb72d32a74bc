package scheduledjob

import (
	"fmt"
	"sort"
	"strings"
	"time"
	"unicode/utf8"

	batchv1 "k8s.io/api/batch/v1"
	"k8s.io/apimachinery/pkg/api/meta"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"

	batchv1alpha1 "github.com/almanac-dev/almanac/api/batch/v1alpha1"
	calendarv1alpha1 "github.com/almanac-dev/almanac/api/calendar/v1alpha1"
	"github.com/almanac-dev/almanac/api/conditions"
	"github.com/almanac-dev/almanac/api/timing"
	"github.com/almanac-dev/almanac/reconcilers/base"
	"github.com/almanac-dev/almanac/reconcilers/jobs"
)

// outcome is what executing a plan did.
type outcome struct {
	// job is the Job of plan.run (created now, or found created by an earlier attempt).
	job *batchv1.Job
	// created is true when this attempt created job.
	created bool
	// failReason and failMessage say why plan.run could not get a Job (a condition reason);
	// the slot is then counted as not run.
	failReason, failMessage string
	// refused is the API server's refusal of a request of plan.run (base.Refused), which
	// then did not start and stays due.
	refused    error
	refusedRun time.Time
	// waiting says why plan.run waits for the Job of an earlier ScheduledJob of this name
	// (waitForEarlier); the slot is neither run nor missed yet.
	waiting string
	// runNowJob is the Job of the run-now request (created now or found); runNowRefused says
	// why it got none.
	runNowJob     *batchv1.Job
	runNowRefused string
}

// nextStatus computes the status from the old one, the plan and what executing it did. It
// is a pure function: the reconciler writes the result only when it differs.
func nextStatus(sj *batchv1alpha1.ScheduledJob, p *plan, out outcome, owned []*batchv1.Job, now time.Time) *batchv1alpha1.ScheduledJobStatus {
	st := sj.Status.DeepCopy()
	st.ObservedGeneration = sj.Generation
	if s := p.sched.s; s != nil {
		moveRecord(st, s.Offset)
	}
	recordRunNow(sj, st, p.now, out.runNowJob, out.runNowRefused, now)
	if p.invalid != nil {
		st.NextScheduleTime = nil
		st.Active, st.ActiveOverflow = jobs.ActiveStatus(currentJobs(owned, p, out))
		setReady(st, sj.Generation, now, metav1.ConditionFalse, batchv1alpha1.ReasonInvalidSchedule, p.invalid.Error())
		conditions.SetStalled(&st.Conditions, st.Stalled(), sj.Generation, now)
		return st
	}
	st.LastScheduleTime = laterOf(st.LastScheduleTime, p.ran)
	if out.job != nil {
		st.LastScheduleTime = laterOf(st.LastScheduleTime, p.run)
	}
	if !p.resumed.IsZero() {
		st.LastResumeTime = &metav1.Time{Time: p.resumed}
	}
	st.MissedRuns += p.missedTotal()
	st.LastMissedTime = laterOf(st.LastMissedTime, p.lastMissed)
	st.SkippedRuns += p.skipped
	if skipped := laterOf(st.LastSkippedTime, p.lastSkipped); skipped != st.LastSkippedTime {
		st.LastSkippedTime, st.LastSkippedReason = skipped, truncate(p.skippedReason, maxSkippedReason)
	}
	if c, ok := calendarv1alpha1.Condition(sj.Spec.Calendars, p.calendarProblems); ok {
		conditions.Set(&st.Conditions, c, sj.Generation, now)
	} else {
		meta.RemoveStatusCondition(&st.Conditions, calendarv1alpha1.ConditionCalendars)
	}

	current := currentJobs(owned, p, out)
	st.Active, st.ActiveOverflow = jobs.ActiveStatus(current)
	st.NextScheduleTime = nil
	if !p.next.IsZero() && !sj.Spec.Suspend {
		st.NextScheduleTime = &metav1.Time{Time: p.next}
	}
	st.Phase = phase(p.sched.s, sj, st, current)
	readyCondition(sj, st, p, out, now)
	conditions.SetStalled(&st.Conditions, st.Stalled(), sj.Generation, now) // kstatus: Failed while True
	return st
}

// moveRecord writes the record of slots (lastScheduleTime, lastMissedTime, lastSkippedTime) in
// the nominal instants of spec.spread's offset now: after a change of spread, each slot's
// nominal instant moved by the difference, and so does the record of it (accountedUntil reads
// a record of the old offset the same way).
func moveRecord(st *batchv1alpha1.ScheduledJobStatus, offset time.Duration) {
	recorded := time.Duration(st.SpreadOffsetSeconds) * time.Second
	if offset == recorded {
		return
	}
	for _, t := range []*metav1.Time{st.LastScheduleTime, st.LastMissedTime, st.LastSkippedTime} {
		if t != nil {
			t.Time = t.Add(offset - recorded)
		}
	}
	st.SpreadOffsetSeconds = int64(offset / time.Second)
}

// currentJobs is the Jobs of the ScheduledJob after executing the plan: those it controlled,
// less the ones Replace deleted, plus the slot's and the run-now request's.
func currentJobs(owned []*batchv1.Job, p *plan, out outcome) []*batchv1.Job {
	gone := map[string]bool{}
	for _, j := range append(append([]*batchv1.Job(nil), p.replace...), p.now.replace...) {
		gone[j.Name] = true
	}
	var created []*batchv1.Job
	for _, j := range []*batchv1.Job{out.job, out.runNowJob} {
		if j != nil {
			gone[j.Name] = true
			created = append(created, j)
		}
	}
	var current []*batchv1.Job
	for _, j := range owned {
		if !gone[j.Name] {
			current = append(current, j)
		}
	}
	return append(current, created...)
}

// phase: a cron ScheduledJob is Running while a Job runs and Pending otherwise; a one-shot
// follows its Job to Succeeded or Failed, or is Missed.
func phase(s *timing.JobSchedule, sj *batchv1alpha1.ScheduledJob, st *batchv1alpha1.ScheduledJobStatus, current []*batchv1.Job) batchv1alpha1.ScheduledJobPhase {
	if s == nil {
		return st.Phase
	}
	if !s.OneShot() {
		if len(st.Active) > 0 {
			return batchv1alpha1.ScheduledJobPhaseRunning
		}
		return batchv1alpha1.ScheduledJobPhasePending
	}
	for _, j := range current {
		if isOneShotJob(s, sj.Name, j) {
			return jobPhase(j)
		}
	}
	switch {
	case st.LastScheduleTime != nil && !s.Due.After(st.LastScheduleTime.Time):
		// It ran and its Job is gone: keep the outcome that status recorded. A Job of
		// almanac's is kept by its finalizer until the outcome is recorded, so this is
		// Failed only for a Job whose finalizer someone removed before it finished.
		if terminal(st.Phase) && st.Phase != batchv1alpha1.ScheduledJobPhaseMissed {
			return st.Phase
		}
		return batchv1alpha1.ScheduledJobPhaseFailed
	case st.LastMissedTime != nil && !s.Due.After(st.LastMissedTime.Time):
		return batchv1alpha1.ScheduledJobPhaseMissed
	case st.LastSkippedTime != nil && !s.Due.After(st.LastSkippedTime.Time):
		return batchv1alpha1.ScheduledJobPhaseSkipped
	default:
		return batchv1alpha1.ScheduledJobPhasePending
	}
}

// jobPhase is the one-shot's phase from its Job. A Job being deleted before it finished never
// finishes: the one-shot Failed. (Its finalizer keeps a Job that finished until the outcome is
// recorded, so a Job deleted right after it finished is read as it ended.)
func jobPhase(j *batchv1.Job) batchv1alpha1.ScheduledJobPhase {
	switch jobs.OutcomeOf(j).Type {
	case batchv1.JobComplete:
		return batchv1alpha1.ScheduledJobPhaseSucceeded
	case batchv1.JobFailed:
		return batchv1alpha1.ScheduledJobPhaseFailed
	}
	if j.DeletionTimestamp != nil {
		return batchv1alpha1.ScheduledJobPhaseFailed
	}
	return batchv1alpha1.ScheduledJobPhaseRunning
}

func terminal(p batchv1alpha1.ScheduledJobPhase) bool {
	return p == batchv1alpha1.ScheduledJobPhaseSucceeded || p == batchv1alpha1.ScheduledJobPhaseFailed ||
		p == batchv1alpha1.ScheduledJobPhaseMissed || p == batchv1alpha1.ScheduledJobPhaseSkipped
}

// maxSkippedReason is the longest status.lastSkippedReason (its schema's maxLength).
const maxSkippedReason = 1024

// truncate cuts s to at most n bytes, on a rune boundary, marking the cut with "…".
func truncate(s string, n int) string {
	if len(s) <= n {
		return s
	}
	cut := n - len("…")
	for cut > 0 && !utf8.RuneStart(s[cut]) {
		cut--
	}
	return s[:cut] + "…"
}

// readyCondition sets Ready. A failure to create a Job stays on the condition until a later
// Job is created or the spec changes, so that a one-shot keeps saying why it did not run.
func readyCondition(sj *batchv1alpha1.ScheduledJob, st *batchv1alpha1.ScheduledJobStatus, p *plan, out outcome, now time.Time) {
	switch old := meta.FindStatusCondition(sj.Status.Conditions, batchv1alpha1.ConditionReady); {
	case out.refused != nil:
		setReady(st, sj.Generation, now, metav1.ConditionFalse, batchv1alpha1.ReasonRequestRefused,
			"The run at "+p.describe(out.refusedRun)+" has not started. "+base.RefusalMessage(out.refused))
	case out.failReason != "":
		setReady(st, sj.Generation, now, metav1.ConditionFalse, out.failReason, out.failMessage)
	case out.waiting != "":
		setReady(st, sj.Generation, now, metav1.ConditionTrue, batchv1alpha1.ReasonScheduled, out.waiting)
	case old != nil && jobFailure(old.Reason) && out.job == nil && old.ObservedGeneration == sj.Generation:
		// Keep it.
	case sj.Spec.Suspend:
		setReady(st, sj.Generation, now, metav1.ConditionTrue, batchv1alpha1.ReasonSuspended,
			"spec.suspend is true: no Job starts, and runs that fall due are not started later")
	case st.NextScheduleTime != nil:
		setReady(st, sj.Generation, now, metav1.ConditionTrue, batchv1alpha1.ReasonScheduled,
			"Next run at "+p.describe(st.NextScheduleTime.Time))
	default:
		setReady(st, sj.Generation, now, metav1.ConditionTrue, batchv1alpha1.ReasonCompleted,
			"The one-shot has no run left; phase "+string(st.Phase))
	}
}

func jobFailure(reason string) bool {
	switch reason {
	case batchv1alpha1.ReasonJobConflict, batchv1alpha1.ReasonJobInvalid, batchv1alpha1.ReasonJobNameTooLong:
		return true
	}
	return false
}

// setReady sets the Ready condition; its lastTransitionTime comes from the injected clock.
func setReady(st *batchv1alpha1.ScheduledJobStatus, gen int64, now time.Time, status metav1.ConditionStatus, reason, msg string) {
	conditions.Set(&st.Conditions, metav1.Condition{Type: batchv1alpha1.ConditionReady, Status: status, Reason: reason, Message: msg}, gen, now)
}

// describe renders an instant in UTC and, when the zone is not UTC, as wall time in the
// ScheduledJob's zone: "2027-03-14T07:00:00Z (03:00 EDT in America/New_York)".
func (p *plan) describe(t time.Time) string {
	s := batchv1alpha1.FormatTime(t)
	if sched := p.sched.s; sched != nil && sched.Zone.Name != timing.DefaultZone {
		s += " (" + t.In(sched.Zone.Location).Format("2006-01-02 15:04 MST") + " in " + sched.Zone.Name + ")"
	}
	return s
}

// describeMisses renders the misses of a plan: "2 superseded, 1 ConcurrencyForbid".
func describeMisses(m map[string]int64) string {
	keys := make([]string, 0, len(m))
	for k := range m {
		keys = append(keys, k)
	}
	sort.Strings(keys)
	parts := make([]string, 0, len(keys))
	for _, k := range keys {
		parts = append(parts, fmt.Sprintf("%d %s", m[k], k))
	}
	return strings.Join(parts, ", ")
}

func laterOf(old *metav1.Time, t time.Time) *metav1.Time {
	if t.IsZero() || old != nil && !t.After(old.Time) {
		return old
	}
	return &metav1.Time{Time: t.UTC()}
}

func timeOf(t *metav1.Time) *time.Time {
	if t == nil {
		return nil
	}
	u := t.UTC()
	return &u
}
