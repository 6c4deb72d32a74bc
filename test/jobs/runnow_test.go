package jobs_test

import (
	"context"
	"encoding/json"
	"math/rand/v2"
	"slices"
	"testing"
	"time"

	batchv1 "k8s.io/api/batch/v1"
	"k8s.io/apimachinery/pkg/api/meta"
	"k8s.io/apimachinery/pkg/types"
	"sigs.k8s.io/controller-runtime/pkg/client"

	batchv1alpha1 "github.com/almanac-dev/almanac/api/batch/v1alpha1"
	"github.com/almanac-dev/almanac/reconcilers/jobs"
)

// askRunNow sets the run-now annotation of ScheduledJob ns/name to token, as `almanac run` does.
func askRunNow(t *testing.T, ns, name, token string) {
	t.Helper()
	patch, _ := json.Marshal(map[string]any{"metadata": map[string]any{"annotations": map[string]string{batchv1alpha1.AnnotationRunNow: token}}})
	sj := &batchv1alpha1.ScheduledJob{}
	sj.Namespace, sj.Name = ns, name
	if err := env.Client.Patch(context.Background(), sj, client.RawPatch(types.MergePatchType, patch)); err != nil {
		t.Fatal(err)
	}
}

func runNowJobs(t *testing.T, ns, owner string) []batchv1.Job {
	t.Helper()
	var out []batchv1.Job
	for _, j := range jobsIn(t, ns, client.MatchingLabels{batchv1alpha1.LabelScheduledJob: owner}) {
		if batchv1alpha1.IsRunNowJob(owner, j.Annotations, j.Name) {
			out = append(out, j)
		}
	}
	return out
}

// Run now, exactly once per token: the first manager creates the Job of a run-now request but
// every status write fails, so nothing records it; it stops, and the next manager finds the
// Job (its name comes from the token), records the token and releases the Job's finalizer,
// starting no second Job. A second token starts a second Job, after another restart. The
// schedule's own record (lastScheduleTime) is untouched: a run-now Job is no slot.
func TestRunNowOncePerTokenAcrossARestart(t *testing.T) {
	ns := namespace(t)
	clk := newTestClock(t, time.Now())
	f := &faults{statusFailRate: 1, rnd: rand.New(rand.NewPCG(1, 26))}
	m := startManager(t, ns, clk, f)
	sj := newSJ(ns, "report")
	sj.Spec.Schedule = "0 3 * * *"
	if err := env.Client.Create(context.Background(), sj); err != nil {
		t.Fatal(err)
	}
	askRunNow(t, ns, "report", "t1")
	eventually(t, "the run-now Job of t1 created", func() (bool, error) {
		return len(runNowJobs(t, ns, "report")) == 1, nil
	})
	// The fence: three more reconciles, each to its failed status write, after the Job's:
	// any of them would have created a second Job before it.
	tried := f.statusPatches.Load()
	eventually(t, "three more reconciles, their status writes failing", func() (bool, error) {
		return f.statusPatches.Load() >= tried+3, nil
	})
	if got := runNowJobs(t, ns, "report"); len(got) != 1 || got[0].Name != batchv1alpha1.RunNowJobName("report", "t1") {
		t.Fatalf("run-now Jobs %v while status writes fail, want the one of t1", got)
	}
	if rec := getSJ(t, ns, "report").Status.RunNow; rec != nil {
		t.Fatalf("status.runNow %+v although every status write failed", rec)
	}
	if j := runNowJobs(t, ns, "report")[0]; !slices.Contains(j.Finalizers, batchv1alpha1.FinalizerOutcome) {
		t.Errorf("Job %s lost its finalizer before its run was recorded", j.Name)
	}
	m.Stop()

	m = startManager(t, ns, clk, nil)
	eventually(t, "status.runNow records t1", func() (bool, error) {
		rec := getSJ(t, ns, "report").Status.RunNow
		return rec != nil && rec.Token == "t1" && rec.JobName == batchv1alpha1.RunNowJobName("report", "t1"), nil
	})
	eventually(t, "the Job of t1 released once recorded", func() (bool, error) {
		j := runNowJobs(t, ns, "report")
		return len(j) == 1 && !slices.Contains(j[0].Finalizers, batchv1alpha1.FinalizerOutcome), nil
	})
	if got := runNowJobs(t, ns, "report"); len(got) != 1 {
		t.Fatalf("run-now Jobs %v after the restart, want still the one of t1", got)
	}
	m.Stop()

	askRunNow(t, ns, "report", "t2") // while no manager runs
	startManager(t, ns, clk, nil)
	eventually(t, "the run-now Job of t2 created and recorded", func() (bool, error) {
		rec := getSJ(t, ns, "report").Status.RunNow
		return len(runNowJobs(t, ns, "report")) == 2 && rec != nil && rec.Token == "t2", nil
	})
	clk.fenceSpec(t, "scheduledjob", sj) // a reconcile after the one that recorded t2
	st := getSJ(t, ns, "report").Status
	if n := len(runNowJobs(t, ns, "report")); n != 2 || st.LastScheduleTime != nil || st.MissedRuns != 0 {
		t.Errorf("%d run-now Jobs, lastScheduleTime %v, missedRuns %d: want 2, none, 0", n, st.LastScheduleTime, st.MissedRuns)
	}
	if ev := eventReasons(t, ns, "report"); ev[jobs.EventJobCreated] < 2 {
		t.Errorf("events %v, want a JobCreated for each run-now Job", ev)
	}
}

// With concurrencyPolicy Forbid and a Job running, a run-now request is refused, recorded as
// refused (it never starts later) and said in the RunNow condition and an event.
func TestRunNowRefusedUnderForbid(t *testing.T) {
	ns := namespace(t)
	clk := newTestClock(t, time.Now())
	startManager(t, ns, clk, nil)
	sj := newSJ(ns, "single")
	sj.Spec.Schedule = "0 3 * * *"
	sj.Spec.ConcurrencyPolicy = batchv1alpha1.ConcurrencyPolicyForbid
	if err := env.Client.Create(context.Background(), sj); err != nil {
		t.Fatal(err)
	}
	askRunNow(t, ns, "single", "first")
	eventually(t, "the first run-now Job created and recorded", func() (bool, error) {
		rec := getSJ(t, ns, "single").Status.RunNow
		return rec != nil && rec.Token == "first" && rec.JobName != "", nil
	})
	askRunNow(t, ns, "single", "second") // the first Job still runs: envtest has no Job controller
	eventually(t, "the second request recorded as refused", func() (bool, error) {
		rec := getSJ(t, ns, "single").Status.RunNow
		return rec != nil && rec.Token == "second" && rec.JobName == "" && rec.Refused != "", nil
	})
	// The fence: the first Job's end brings a reconcile, which must not start the refused one.
	clk.fence(t, "scheduledjob", client.ObjectKeyFromObject(sj), func() {
		finishJob(t, ns, batchv1alpha1.RunNowJobName("single", "first"), batchv1.JobComplete, clk.Now())
	})
	if got := runNowJobs(t, ns, "single"); len(got) != 1 {
		t.Errorf("run-now Jobs %v, want only the first: a refused request never starts later", got)
	}
	eventually(t, "a RunNowRefused event", func() (bool, error) {
		return eventReasons(t, ns, "single")[jobs.EventRunNowRefused] > 0, nil
	})
	c := meta.FindStatusCondition(getSJ(t, ns, "single").Status.Conditions, batchv1alpha1.ConditionRunNow)
	if c == nil || c.Reason != batchv1alpha1.ReasonRunNowRefused {
		t.Errorf("RunNow condition %+v, want Refused", c)
	}
}
