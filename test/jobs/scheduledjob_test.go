package jobs_test

import (
	"context"
	"testing"
	"time"

	batchv1 "k8s.io/api/batch/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/types"
	"k8s.io/utils/ptr"
	"sigs.k8s.io/controller-runtime/pkg/client"

	batchv1alpha1 "github.com/almanac-dev/almanac/api/batch/v1alpha1"
	"github.com/almanac-dev/almanac/reconcilers/jobs"
)

func newSJ(ns, name string) *batchv1alpha1.ScheduledJob {
	return &batchv1alpha1.ScheduledJob{
		ObjectMeta: metav1.ObjectMeta{Namespace: ns, Name: name},
		Spec: batchv1alpha1.ScheduledJobSpec{
			TimeZone:  "UTC",
			JobPolicy: batchv1alpha1.JobPolicy{JobTemplate: jobTemplate()},
		},
	}
}

// nextMinute is the first whole minute at least `lead` after t.
func nextMinute(t time.Time, lead time.Duration) time.Time {
	return t.Add(lead).Truncate(time.Minute).Add(time.Minute)
}

// awayFromMinuteTurn waits, in real time, until neither the wall clock nor clk is within 10 s
// of a minute's turn. A test that creates an every-minute ScheduledJob and names its first
// slot (the minute after the later of its creation and clk) reads the clocks after the
// reconciler did: near a turn, the two could read either side of it and name different
// minutes. The clock is not jumped instead: it would then be ahead of the API server's
// creationTimestamp, and the slot between them would run at once, before the test counts.
func awayFromMinuteTurn(clk *testClock) {
	const margin = 10 * time.Second
	for {
		var wait time.Duration
		for _, now := range []time.Time{time.Now(), clk.Now()} {
			if left := nextMinute(now, 0).Sub(now); left < margin {
				wait = max(wait, left+time.Second)
			}
		}
		if wait == 0 {
			return
		}
		time.Sleep(wait)
	}
}

// A one-shot creates its Job at its instant, not before, and its phase follows the Job.
func TestOneShotRunsAtItsInstant(t *testing.T) {
	ns := namespace(t)
	clk := newTestClock(t, time.Now())
	startManager(t, ns, clk, nil)
	ctx := context.Background()

	at := nextMinute(clk.Now(), 2*time.Minute)
	sj := newSJ(ns, "once")
	sj.Spec.At = at.In(time.UTC).Format("2006-01-02T15:04")
	if err := env.Client.Create(ctx, sj); err != nil {
		t.Fatal(err)
	}
	eventually(t, "phase Pending with nextScheduleTime", func() (bool, error) {
		st := getSJ(t, ns, "once").Status
		return st.Phase == batchv1alpha1.ScheduledJobPhasePending && st.NextScheduleTime != nil && st.NextScheduleTime.Time.Equal(at), nil
	})

	// A second before the instant, with the clock held there: a change of the spec brings a
	// reconcile (the fence), which creates no Job.
	clk.freeze(t)
	clk.JumpTo(at.Add(-time.Second))
	clk.fenceSpec(t, "scheduledjob", sj)
	if got := jobsIn(t, ns, nil); len(got) != 0 {
		t.Fatalf("Job created before its instant: %s", got[0].Name)
	}
	clk.thaw()

	clk.JumpTo(at)
	name := batchv1alpha1.ScheduledJobName("once", at)
	eventually(t, "Job "+name+" created at the instant", func() (bool, error) {
		return len(jobsIn(t, ns, nil)) == 1, nil
	})
	job := jobsIn(t, ns, nil)[0]
	if job.Name != name {
		t.Errorf("Job name %s, want %s", job.Name, name)
	}
	if got := job.Annotations[batchv1alpha1.AnnotationScheduledTime]; got != at.UTC().Format(time.RFC3339) {
		t.Errorf("scheduled-time %q", got)
	}
	if got := job.Spec.Template.Annotations[batchv1alpha1.AnnotationScheduledTime]; got != at.UTC().Format(time.RFC3339) {
		t.Errorf("scheduled-time on the Pod template %q, want %s (the downward API reads it there)", got, at.UTC().Format(time.RFC3339))
	}
	if got := job.Labels[batchv1alpha1.LabelScheduledJob]; got != "once" {
		t.Errorf("scheduled-job label %q", got)
	}
	if ref := metav1.GetControllerOf(&job); ref == nil || ref.Kind != "ScheduledJob" || ref.Name != "once" {
		t.Errorf("controller %+v", ref)
	}
	eventually(t, "phase Running", func() (bool, error) {
		st := getSJ(t, ns, "once").Status
		return st.Phase == batchv1alpha1.ScheduledJobPhaseRunning && len(st.Active) == 1 && st.LastScheduleTime != nil, nil
	})

	finishJob(t, ns, name, batchv1.JobComplete, clk.Now())
	eventually(t, "phase Succeeded", func() (bool, error) {
		st := getSJ(t, ns, "once").Status
		return st.Phase == batchv1alpha1.ScheduledJobPhaseSucceeded && len(st.Active) == 0 && st.NextScheduleTime == nil, nil
	})
	eventually(t, "events for each step", func() (bool, error) {
		ev := eventReasons(t, ns, "once")
		return ev[jobs.EventScheduled] > 0 && ev[jobs.EventJobCreated] > 0 && ev[jobs.EventJobSucceeded] > 0, nil
	})
}

func TestOneShotFailedPhase(t *testing.T) {
	ns := namespace(t)
	clk := newTestClock(t, time.Now())
	startManager(t, ns, clk, nil)
	at := nextMinute(clk.Now(), time.Minute)
	sj := newSJ(ns, "fails")
	sj.Spec.At = at.Format("2006-01-02T15:04")
	if err := env.Client.Create(context.Background(), sj); err != nil {
		t.Fatal(err)
	}
	clk.JumpTo(at.Add(5 * time.Second))
	eventually(t, "Job created", func() (bool, error) { return len(jobsIn(t, ns, nil)) == 1, nil })
	finishJob(t, ns, batchv1alpha1.ScheduledJobName("fails", at), batchv1.JobFailed, clk.Now())
	eventually(t, "phase Failed", func() (bool, error) {
		return getSJ(t, ns, "fails").Status.Phase == batchv1alpha1.ScheduledJobPhaseFailed, nil
	})
}

// A one-shot whose deadline passed while the manager was stopped becomes Missed and creates
// nothing.
func TestOneShotMissedWhileStopped(t *testing.T) {
	ns := namespace(t)
	clk := newTestClock(t, time.Now())
	m := startManager(t, ns, clk, nil)
	at := nextMinute(clk.Now(), time.Minute)
	sj := newSJ(ns, "late")
	sj.Spec.At = at.Format("2006-01-02T15:04")
	sj.Spec.StartingDeadlineSeconds = ptr.To[int64](30)
	if err := env.Client.Create(context.Background(), sj); err != nil {
		t.Fatal(err)
	}
	eventually(t, "phase Pending", func() (bool, error) {
		return getSJ(t, ns, "late").Status.Phase == batchv1alpha1.ScheduledJobPhasePending, nil
	})
	m.Stop()
	clk.JumpTo(at.Add(31 * time.Second))
	startManager(t, ns, clk, nil)
	eventually(t, "phase Missed", func() (bool, error) {
		st := getSJ(t, ns, "late").Status
		return st.Phase == batchv1alpha1.ScheduledJobPhaseMissed && st.MissedRuns == 1 &&
			st.LastMissedTime != nil && st.LastMissedTime.Time.Equal(at), nil
	})
	clk.fenceSpec(t, "scheduledjob", sj) // a reconcile after the one that recorded the miss
	if got := jobsIn(t, ns, nil); len(got) != 0 {
		t.Errorf("a missed one-shot created Job %s", got[0].Name)
	}
	if ev := eventReasons(t, ns, "late"); ev[jobs.EventRunsMissed] == 0 {
		t.Errorf("no %s event: %v", jobs.EventRunsMissed, ev)
	}
	if st := getSJ(t, ns, "late").Status; st.LastScheduleTime != nil {
		t.Errorf("lastScheduleTime %v for a run that never started", st.LastScheduleTime)
	}
}

// A Job of the run's name that someone else created is left alone and reported.
func TestJobNameConflict(t *testing.T) {
	ns := namespace(t)
	clk := newTestClock(t, time.Now())
	startManager(t, ns, clk, nil)
	at := nextMinute(clk.Now(), time.Minute)
	foreign := &batchv1.Job{ObjectMeta: metav1.ObjectMeta{Namespace: ns, Name: batchv1alpha1.ScheduledJobName("clash", at)},
		Spec: jobTemplate().Spec}
	if err := env.Client.Create(context.Background(), foreign); err != nil {
		t.Fatal(err)
	}
	sj := newSJ(ns, "clash")
	sj.Spec.At = at.Format("2006-01-02T15:04")
	if err := env.Client.Create(context.Background(), sj); err != nil {
		t.Fatal(err)
	}
	clk.JumpTo(at)
	eventually(t, "Ready=False JobConflict and phase Missed", func() (bool, error) {
		st := getSJ(t, ns, "clash").Status
		for _, c := range st.Conditions {
			if c.Type == batchv1alpha1.ConditionReady && c.Reason == batchv1alpha1.ReasonJobConflict {
				return st.Phase == batchv1alpha1.ScheduledJobPhaseMissed, nil
			}
		}
		return false, nil
	})
	got := &batchv1.Job{}
	if err := env.Client.Get(context.Background(), client.ObjectKeyFromObject(foreign), got); err != nil || got.UID != foreign.UID {
		t.Errorf("the foreign Job was touched: %v", err)
	}
}

// A suspended cron ScheduledJob writes nothing and reports nothing at its slots; when it is
// resumed, the slots that fell due meanwhile are counted in one status write and one
// RunSkipped event, and none of them runs. Issue 11, finding 8: it wrote status and emitted
// RunSkipped at every slot (60 events an hour for "* * * * *").
func TestSuspendedCronCountsSkippedSlotsOnce(t *testing.T) {
	ns := namespace(t)
	clk := newTestClock(t, time.Now())
	startManager(t, ns, clk, nil)
	ctx := context.Background()
	sj := newSJ(ns, "paused")
	sj.Spec.Schedule = "* * * * *"
	sj.Spec.Suspend = true
	if err := env.Client.Create(ctx, sj); err != nil {
		t.Fatal(err)
	}
	eventually(t, "Ready=True Suspended", func() (bool, error) {
		st := getSJ(t, ns, "paused").Status
		return len(st.Conditions) == 1 && st.Conditions[0].Reason == batchv1alpha1.ReasonSuspended, nil
	})
	clk.JumpTo(clk.Now()) // let the reconcile that wrote it finish
	before := getSJ(t, ns, "paused")

	// Five slots pass.
	first := nextMinute(clk.Now(), 0)
	for i := range 5 {
		clk.JumpTo(first.Add(time.Duration(i)*time.Minute + time.Second))
	}
	// Each jump waits until the reconciles are idle: a wake-up at a slot would have run by the
	// last one, and what it recorded is counted (recordedEvents).
	clk.JumpTo(clk.Now())
	if got := getSJ(t, ns, "paused"); got.ResourceVersion != before.ResourceVersion {
		t.Errorf("the ScheduledJob was written while suspended (resourceVersion %s → %s): missedRuns %d",
			before.ResourceVersion, got.ResourceVersion, got.Status.MissedRuns)
	}
	if n := clk.recordedEvents(ns, "paused")[jobs.EventRunSkipped]; n != 0 {
		t.Errorf("%d RunSkipped events while suspended, want none until it is resumed", n)
	}

	// Resumed: the slots are counted once.
	resumed := getSJ(t, ns, "paused")
	resumed.Spec.Suspend = false
	if err := env.Client.Update(ctx, resumed); err != nil {
		t.Fatal(err)
	}
	eventually(t, "Ready=True Scheduled", func() (bool, error) {
		st := getSJ(t, ns, "paused").Status
		return len(st.Conditions) == 1 && st.Conditions[0].Reason == batchv1alpha1.ReasonScheduled, nil
	})
	// The fence: a reconcile after the one that counted the slots, which must neither count
	// them again nor run one.
	clk.fenceSpec(t, "scheduledjob", resumed)
	eventually(t, "a RunSkipped event", func() (bool, error) { // events are recorded asynchronously
		return eventReasons(t, ns, "paused")[jobs.EventRunSkipped] > 0, nil
	})
	st := getSJ(t, ns, "paused").Status
	if st.MissedRuns < 5 || st.LastMissedTime == nil || st.LastMissedTime.Time.Before(first.Add(4*time.Minute)) {
		t.Errorf("after resuming: missedRuns %d, lastMissedTime %v; want the 5 slots from %s counted", st.MissedRuns, st.LastMissedTime, first)
	}
	if n := clk.recordedEvents(ns, "paused")[jobs.EventRunSkipped]; n != 1 {
		t.Errorf("%d RunSkipped events, want 1 for all the skipped slots", n)
	}
	if got := jobsIn(t, ns, nil); len(got) != 0 {
		t.Errorf("a slot that fell due while suspended ran: %s", got[0].Name)
	}
}

// A ScheduledJob resumed while the manager is stopped runs the slot after the resume when the
// manager starts within that slot's deadline; the slots before the resume count as skipped
// (Suspended), and status records the resume. Issue 24: every slot until the manager's first
// reconcile after the resume counted as suspended.
func TestResumeWhileStoppedRunsTheSlotAfterIt(t *testing.T) {
	ns := namespace(t)
	clk := newTestClock(t, time.Now())
	awayFromMinuteTurn(clk)
	m := startManager(t, ns, clk, nil)
	ctx := context.Background()
	sj := newSJ(ns, "nightly")
	sj.Spec.Schedule = "* * * * *"
	sj.Spec.Suspend = true
	sj.Spec.StartingDeadlineSeconds = ptr.To[int64](300)
	if err := env.Client.Create(ctx, sj); err != nil {
		t.Fatal(err)
	}
	eventually(t, "Ready=True Suspended", func() (bool, error) {
		st := getSJ(t, ns, "nightly").Status
		return len(st.Conditions) == 1 && st.Conditions[0].Reason == batchv1alpha1.ReasonSuspended, nil
	})
	clk.JumpTo(clk.Now())
	m.Stop()

	// Two slots pass, suspended; it is resumed 20 s after the second; one more slot passes.
	first := nextMinute(clk.Now(), 0)
	clk.JumpTo(first.Add(time.Minute + 20*time.Second))
	resumed := clk.Now()
	// As `kubectl patch` resumes it (a typed client omits false: see batchv1alpha1.ResumedAt).
	if err := env.Client.Patch(ctx, getSJ(t, ns, "nightly"), client.RawPatch(types.MergePatchType, []byte(`{"spec":{"suspend":false}}`))); err != nil {
		t.Fatal(err)
	}
	after := first.Add(2 * time.Minute)
	// The API server records the resume to the second: a jump within that second would read
	// as before it (testClock.fromServer).
	time.Sleep(1100 * time.Millisecond)
	clk.JumpTo(after.Add(30 * time.Second))

	startManager(t, ns, clk, nil)
	eventually(t, "the slot after the resume recorded", func() (bool, error) {
		st := getSJ(t, ns, "nightly").Status
		return st.LastScheduleTime != nil && st.LastScheduleTime.Time.Equal(after), nil
	})
	st := getSJ(t, ns, "nightly").Status
	if st.LastResumeTime == nil || st.LastResumeTime.Time.Before(resumed.Add(-2*time.Second)) || st.LastResumeTime.After(resumed.Add(2*time.Second)) {
		t.Errorf("lastResumeTime %v, want about %s", st.LastResumeTime, resumed.UTC().Format(time.RFC3339))
	}
	if st.MissedRuns != 2 || st.LastMissedTime == nil || !st.LastMissedTime.Time.Equal(first.Add(time.Minute)) {
		t.Errorf("missedRuns %d, lastMissedTime %v; want the 2 slots before the resume", st.MissedRuns, st.LastMissedTime)
	}
	got := jobsIn(t, ns, nil)
	if len(got) != 1 || got[0].Name != batchv1alpha1.ScheduledJobName("nightly", after) {
		names := make([]string, len(got))
		for i, j := range got {
			names[i] = j.Name
		}
		t.Errorf("Jobs %v, want only the one of %s", names, after.UTC().Format(time.RFC3339))
	}
}

// More running Jobs than status.active may list (its MaxItems, 1024): the status still gets
// written, with the newest listed and the rest counted, and the record of what ran moves on.
// Issue 11, finding 9: under Allow, an every-minute ScheduledJob whose Pods cannot start passed
// 1024 active Jobs after about 17 hours; from then on every status write was refused,
// lastScheduleTime froze and pruning stopped.
func TestActiveIsBoundedByItsSchema(t *testing.T) {
	ns := namespace(t)
	clk := newTestClock(t, time.Now())
	ctx := context.Background()
	sj := newSJ(ns, "busy")
	sj.Spec.Schedule = "* * * * *"
	if err := env.Client.Create(ctx, sj); err != nil {
		t.Fatal(err)
	}
	sj = getSJ(t, ns, "busy")
	// Jobs of earlier slots (before the ScheduledJob existed, so none counts as a run whose
	// status write failed) that are still running.
	const running = batchv1alpha1.MaxActive + 6
	created := sj.CreationTimestamp.Truncate(time.Minute)
	errs := make(chan error, running)
	sem := make(chan struct{}, 8)
	for i := range running {
		sem <- struct{}{}
		go func() {
			defer func() { <-sem }()
			slot := created.Add(-time.Duration(i+1) * time.Minute)
			j := &batchv1.Job{ObjectMeta: metav1.ObjectMeta{Namespace: ns, Name: batchv1alpha1.ScheduledJobName("busy", slot),
				Labels:      map[string]string{batchv1alpha1.LabelScheduledJob: "busy"},
				Annotations: map[string]string{batchv1alpha1.AnnotationScheduledTime: batchv1alpha1.FormatTime(slot)},
				OwnerReferences: []metav1.OwnerReference{{APIVersion: batchv1alpha1.GroupVersion.String(), Kind: "ScheduledJob", Name: "busy",
					UID: sj.UID, Controller: ptr.To(true), BlockOwnerDeletion: ptr.To(true)}},
			}, Spec: jobTemplate().Spec}
			errs <- env.Client.Create(ctx, j)
		}()
	}
	for range running {
		if err := <-errs; err != nil {
			t.Fatal(err)
		}
	}
	startManager(t, ns, clk, nil)
	slot := nextMinute(clk.Now(), 0)
	clk.JumpTo(slot.Add(time.Second))
	eventually(t, "the slot's run recorded, with active at its bound", func() (bool, error) {
		st := getSJ(t, ns, "busy").Status
		return st.LastScheduleTime != nil && st.LastScheduleTime.Time.Equal(slot) && len(st.Active) == batchv1alpha1.MaxActive, nil
	})
	st := getSJ(t, ns, "busy").Status
	if want := int32(running + 1 - batchv1alpha1.MaxActive); st.ActiveOverflow != want {
		t.Errorf("activeOverflow %d, want %d", st.ActiveOverflow, want)
	}
	listed := map[string]bool{}
	for _, ref := range st.Active {
		listed[ref.Name] = true
	}
	if newest := batchv1alpha1.ScheduledJobName("busy", slot); !listed[newest] {
		t.Errorf("the new run's Job %s is not listed in active", newest)
	}
	// The ones left out are the oldest: none was created after a listed one.
	var oldestListed, newestLeftOut time.Time
	for _, j := range jobsIn(t, ns, nil) {
		c := j.CreationTimestamp.Time
		if listed[j.Name] && (oldestListed.IsZero() || c.Before(oldestListed)) {
			oldestListed = c
		}
		if !listed[j.Name] && c.After(newestLeftOut) {
			newestLeftOut = c
		}
	}
	if newestLeftOut.After(oldestListed) {
		t.Errorf("a Job created at %s is left out while one created at %s is listed", newestLeftOut, oldestListed)
	}
}

// A one-shot whose Job completed and was deleted before the reconciler saw the outcome (the
// manager was down; ttlSecondsAfterFinished: 0 does the same) is Succeeded: the Job's
// finalizer keeps it until the outcome is recorded. Issue 11, finding 5: it was reported
// Failed ("deleted before it finished").
func TestOneShotOutcomeSurvivesTheJobsDeletion(t *testing.T) {
	ns := namespace(t)
	clk := newTestClock(t, time.Now())
	m := startManager(t, ns, clk, nil)
	ctx := context.Background()
	at := nextMinute(clk.Now(), time.Minute)
	sj := newSJ(ns, "ttl")
	sj.Spec.At = at.Format("2006-01-02T15:04")
	if err := env.Client.Create(ctx, sj); err != nil {
		t.Fatal(err)
	}
	clk.JumpTo(at.Add(time.Second))
	name := batchv1alpha1.ScheduledJobName("ttl", at)
	eventually(t, "phase Running", func() (bool, error) {
		return getSJ(t, ns, "ttl").Status.Phase == batchv1alpha1.ScheduledJobPhaseRunning, nil
	})
	m.Stop()

	finishJob(t, ns, name, batchv1.JobComplete, clk.Now())
	job := &batchv1.Job{ObjectMeta: metav1.ObjectMeta{Namespace: ns, Name: name}}
	if err := env.Client.Delete(ctx, job, client.PropagationPolicy(metav1.DeletePropagationBackground)); err != nil {
		t.Fatal(err)
	}
	startManager(t, ns, clk, nil)
	eventually(t, "phase Succeeded, and the Job gone", func() (bool, error) {
		return getSJ(t, ns, "ttl").Status.Phase == batchv1alpha1.ScheduledJobPhaseSucceeded && len(jobsIn(t, ns, nil)) == 0, nil
	})
	eventually(t, "a JobSucceeded event", func() (bool, error) { // events are recorded asynchronously
		return eventReasons(t, ns, "ttl")[jobs.EventJobSucceeded] > 0, nil
	})
	if ev := eventReasons(t, ns, "ttl"); ev[jobs.EventJobDeleted] != 0 || ev[jobs.EventJobSucceeded] != 1 {
		t.Errorf("events %v, want JobSucceeded once and no JobDeleted", ev)
	}
}

// The finalizer never outlives the ScheduledJob: when it is deleted, its Jobs are released
// (the garbage collector deletes them; here the test does).
func TestOneShotJobIsReleasedWithItsScheduledJob(t *testing.T) {
	ns := namespace(t)
	clk := newTestClock(t, time.Now())
	startManager(t, ns, clk, nil)
	ctx := context.Background()
	at := nextMinute(clk.Now(), time.Minute)
	sj := newSJ(ns, "gone")
	sj.Spec.At = at.Format("2006-01-02T15:04")
	if err := env.Client.Create(ctx, sj); err != nil {
		t.Fatal(err)
	}
	clk.JumpTo(at.Add(time.Second))
	name := batchv1alpha1.ScheduledJobName("gone", at)
	eventually(t, "the one-shot's Job, with the outcome finalizer", func() (bool, error) {
		got := jobsIn(t, ns, nil)
		return len(got) == 1 && got[0].Name == name && len(got[0].Finalizers) == 1 && got[0].Finalizers[0] == batchv1alpha1.FinalizerOutcome, nil
	})
	if err := env.Client.Delete(ctx, getSJ(t, ns, "gone")); err != nil {
		t.Fatal(err)
	}
	job := &batchv1.Job{ObjectMeta: metav1.ObjectMeta{Namespace: ns, Name: name}}
	if err := env.Client.Delete(ctx, job, client.PropagationPolicy(metav1.DeletePropagationBackground)); err != nil {
		t.Fatal(err)
	}
	eventually(t, "the Job deleted", func() (bool, error) { return len(jobsIn(t, ns, nil)) == 0, nil })
}
