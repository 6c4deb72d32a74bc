package scheduledjob

import (
	"strings"
	"testing"
	"time"

	batchv1 "k8s.io/api/batch/v1"
	"k8s.io/apimachinery/pkg/api/meta"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"

	batchv1alpha1 "github.com/almanac-dev/almanac/api/batch/v1alpha1"
)

func (w *world) ask(token string) {
	metav1.SetMetaDataAnnotation(&w.sj.ObjectMeta, batchv1alpha1.AnnotationRunNow, token)
}

// runNowJobs returns the run-now Jobs of the world, in creation order.
func (w *world) runNowJobs() []*batchv1.Job {
	var out []*batchv1.Job
	for _, j := range w.jobs {
		if batchv1alpha1.IsRunNowJob(w.sj.Name, j.Annotations, j.Name) {
			out = append(out, j)
		}
	}
	return out
}

func runNowCondition(t *testing.T, sj *batchv1alpha1.ScheduledJob) *metav1.Condition {
	t.Helper()
	c := meta.FindStatusCondition(sj.Status.Conditions, batchv1alpha1.ConditionRunNow)
	if c == nil {
		t.Fatalf("no RunNow condition in %+v", sj.Status.Conditions)
	}
	return c
}

// One Job per distinct token, exactly once: a token recorded in status never starts a Job
// again, however many reconciles follow; a new token starts the next.
func TestRunNowStartsOneJobPerToken(t *testing.T) {
	created := utc("2027-01-04T08:00:00Z")
	w := &world{t: t, sj: cronSJ("0 3 * * *", "Europe/Berlin", created)}
	w.step(utc("2027-01-04T08:00:00Z"))

	w.ask("t1")
	at := utc("2027-01-04T09:15:42Z")
	w.step(at)
	w.step(at.Add(time.Second))
	w.step(at.Add(time.Minute))
	got := w.runNowJobs()
	if len(got) != 1 || got[0].Name != batchv1alpha1.RunNowJobName("report", "t1") {
		t.Fatalf("run-now Jobs %v, want one named for t1", names(got))
	}
	rec := w.sj.Status.RunNow
	if rec == nil || rec.Token != "t1" || rec.JobName != got[0].Name || !rec.Time.Time.Equal(at) || rec.Refused != "" {
		t.Fatalf("status.runNow %+v", rec)
	}
	if got[0].Spec.Template.Annotations[batchv1alpha1.AnnotationScheduledTime] != "2027-01-04T09:15:42Z" {
		t.Errorf("the run-now Job's Pods read %q as their instant", got[0].Spec.Template.Annotations[batchv1alpha1.AnnotationScheduledTime])
	}
	if c := runNowCondition(t, w.sj); c.Status != metav1.ConditionTrue || c.Reason != batchv1alpha1.ReasonRunNowStarted || !strings.Contains(c.Message, got[0].Name) {
		t.Errorf("RunNow condition %+v", c)
	}
	// A run-now Job is no slot: the schedule's record is untouched.
	if w.sj.Status.LastScheduleTime != nil || w.sj.Status.MissedRuns != 0 {
		t.Errorf("lastScheduleTime %v, missedRuns %d: a run-now Job counted as a slot", w.sj.Status.LastScheduleTime, w.sj.Status.MissedRuns)
	}
	if w.sj.Status.Phase != batchv1alpha1.ScheduledJobPhaseRunning || len(w.sj.Status.Active) != 1 {
		t.Errorf("phase %s, active %v: want Running with the run-now Job", w.sj.Status.Phase, w.sj.Status.Active)
	}

	w.finish(at.Add(2 * time.Minute))
	w.ask("t2")
	w.step(at.Add(3 * time.Minute))
	if got := w.runNowJobs(); len(got) != 2 || got[1].Name != batchv1alpha1.RunNowJobName("report", "t2") {
		t.Fatalf("after t2: run-now Jobs %v", names(got))
	}
	// Back to t1: it was handled before, but status records only the latest token, so it
	// is a new request; its Job exists (history), and is recorded, not started again.
	w.ask("t1")
	w.step(at.Add(4 * time.Minute))
	if got := w.runNowJobs(); len(got) != 2 {
		t.Fatalf("after t1 again: run-now Jobs %v, want still 2", names(got))
	}
	if rec := w.sj.Status.RunNow; rec.Token != "t1" || rec.JobName != batchv1alpha1.RunNowJobName("report", "t1") {
		t.Errorf("status.runNow %+v", rec)
	}
}

// A Job created by an attempt whose status write failed is found and recorded: the retry
// starts no second Job.
func TestRunNowAfterAFailedStatusWrite(t *testing.T) {
	w := &world{t: t, sj: cronSJ("0 3 * * *", "UTC", utc("2027-01-04T08:00:00Z"))}
	w.ask("retry")
	saved := w.sj.Status.DeepCopy()
	w.step(utc("2027-01-04T09:00:00Z"))
	w.sj.Status = *saved // the status write failed
	w.step(utc("2027-01-04T09:00:05Z"))
	if got := w.runNowJobs(); len(got) != 1 {
		t.Fatalf("run-now Jobs %v, want one", names(got))
	}
	if rec := w.sj.Status.RunNow; rec == nil || rec.Token != "retry" || !rec.Time.Time.Equal(utc("2027-01-04T09:00:00Z")) {
		t.Errorf("status.runNow %+v: want the first attempt's time, read from its Job", rec)
	}
}

// concurrencyPolicy: Forbid with a Job running refuses the request (recorded, so it never
// starts later, with a False condition); Replace deletes the running Job first; a slot due in
// the same reconcile goes first and the request waits for the next one.
func TestRunNowUnderConcurrencyPolicy(t *testing.T) {
	for _, tt := range []struct {
		policy      batchv1alpha1.ConcurrencyPolicy
		wantRunNow  int
		wantRefused bool
		wantSlotJob bool
	}{
		{batchv1alpha1.ConcurrencyPolicyAllow, 1, false, true},
		{batchv1alpha1.ConcurrencyPolicyForbid, 0, true, true},
		{batchv1alpha1.ConcurrencyPolicyReplace, 1, false, false},
	} {
		t.Run(string(tt.policy), func(t *testing.T) {
			w := &world{t: t, sj: cronSJ("0 * * * *", "UTC", utc("2027-01-04T08:30:00Z"))}
			w.sj.Spec.ConcurrencyPolicy = tt.policy
			w.step(utc("2027-01-04T08:30:00Z"))
			w.ask("now-1")
			p := w.step(utc("2027-01-04T09:00:00Z")) // the 09:00 slot and the request at once
			if p.run.IsZero() || !p.now.deferred || p.requeueAfter != time.Second {
				t.Fatalf("at the slot: run %v, deferred %v, requeue %v: want the slot first and the request a second later", p.run, p.now.deferred, p.requeueAfter)
			}
			w.step(utc("2027-01-04T09:00:01Z"))
			if got := len(w.runNowJobs()); got != tt.wantRunNow {
				t.Errorf("%d run-now Jobs, want %d", got, tt.wantRunNow)
			}
			slotJob := false
			for _, j := range w.jobs {
				slotJob = slotJob || j.Name == batchv1alpha1.ScheduledJobName("report", utc("2027-01-04T09:00:00Z"))
			}
			if slotJob != tt.wantSlotJob {
				t.Errorf("the 09:00 Job is there: %v, want %v", slotJob, tt.wantSlotJob)
			}
			rec := w.sj.Status.RunNow
			if rec == nil || rec.Token != "now-1" || (rec.Refused != "") != tt.wantRefused {
				t.Fatalf("status.runNow %+v", rec)
			}
			c := runNowCondition(t, w.sj)
			if tt.wantRefused && (c.Status != metav1.ConditionFalse || !strings.Contains(c.Message, "Forbid")) {
				t.Errorf("RunNow condition %+v: want False naming Forbid", c)
			}
			// Refused or started, the token is handled: the Job ending changes nothing.
			w.finish(utc("2027-01-04T09:00:30Z"))
			w.step(utc("2027-01-04T09:01:00Z"))
			if got := len(w.runNowJobs()); got != tt.wantRunNow {
				t.Errorf("after the running Job ended: %d run-now Jobs, want still %d", got, tt.wantRunNow)
			}
			if !w.sj.Status.LastScheduleTime.Time.Equal(utc("2027-01-04T09:00:00Z")) {
				t.Errorf("lastScheduleTime %v, want the 09:00 slot", w.sj.Status.LastScheduleTime)
			}
		})
	}
}

// A run-now Job in the minute of a one-shot's instant is not the one-shot's Job: the one-shot
// still runs, and its phase follows its own Job.
func TestRunNowInTheMinuteOfAOneShot(t *testing.T) {
	w := &world{t: t, sj: atSJ("2027-01-04T09:00", "UTC", utc("2027-01-04T08:00:00Z"))}
	w.step(utc("2027-01-04T08:00:00Z"))
	w.ask("early")
	w.step(utc("2027-01-04T08:59:59Z")) // its Job's instant is in the minute before
	w.ask("same-minute")
	w.step(utc("2027-01-04T09:00:00Z")) // the one-shot goes first, the request waits
	w.step(utc("2027-01-04T09:00:20Z"))
	if got := len(w.runNowJobs()); got != 2 {
		t.Fatalf("%d run-now Jobs, want 2", got)
	}
	if len(w.created) != 1 {
		t.Fatalf("one-shot Jobs created %v, want the 09:00 one", w.created)
	}
	for _, j := range w.runNowJobs() {
		complete(j, utc("2027-01-04T09:00:30Z"))
	}
	w.step(utc("2027-01-04T09:00:31Z"))
	if w.sj.Status.Phase != batchv1alpha1.ScheduledJobPhaseRunning {
		t.Errorf("phase %s after the run-now Jobs ended, want Running: the one-shot's Job still runs", w.sj.Status.Phase)
	}
}

// A token that admission refuses (stored while the webhooks were off) is recorded as refused.
func TestRunNowInvalidToken(t *testing.T) {
	w := &world{t: t, sj: cronSJ("0 3 * * *", "UTC", utc("2027-01-04T08:00:00Z"))}
	w.ask(strings.Repeat("x", 64))
	w.step(utc("2027-01-04T09:00:00Z"))
	if len(w.runNowJobs()) != 0 || w.sj.Status.RunNow == nil || !strings.Contains(w.sj.Status.RunNow.Refused, "63") {
		t.Fatalf("run-now Jobs %v, status.runNow %+v", names(w.runNowJobs()), w.sj.Status.RunNow)
	}
}

// The finalizer of a run-now Job goes once status records its token, or once the annotation
// asks for another token.
func TestRunNowRecorded(t *testing.T) {
	sj := cronSJ("0 3 * * *", "UTC", utc("2027-01-04T08:00:00Z"))
	job := &batchv1.Job{ObjectMeta: metav1.ObjectMeta{Name: batchv1alpha1.RunNowJobName("report", "a")}}
	metav1.SetMetaDataAnnotation(&sj.ObjectMeta, batchv1alpha1.AnnotationRunNow, "a")
	if runNowRecorded(sj, &sj.Status, job) {
		t.Error("recorded before status says so")
	}
	st := &batchv1alpha1.ScheduledJobStatus{RunNow: &batchv1alpha1.RunNowStatus{Token: "a", JobName: job.Name}}
	if !runNowRecorded(sj, st, job) {
		t.Error("not recorded once status says so")
	}
	metav1.SetMetaDataAnnotation(&sj.ObjectMeta, batchv1alpha1.AnnotationRunNow, "b")
	if !runNowRecorded(sj, &sj.Status, job) {
		t.Error("not released once the annotation asks for another token")
	}
}

func names(js []*batchv1.Job) []string {
	var out []string
	for _, j := range js {
		out = append(out, j.Name)
	}
	return out
}
