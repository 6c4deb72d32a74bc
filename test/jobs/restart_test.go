package jobs_test

import (
	"context"
	"math/rand/v2"
	"os"
	"sort"
	"strconv"
	"testing"
	"time"

	batchv1 "k8s.io/api/batch/v1"
	"k8s.io/utils/ptr"

	batchv1alpha1 "github.com/almanac-dev/almanac/api/batch/v1alpha1"
	"github.com/almanac-dev/almanac/reconcilers/jobs"
)

// seeded returns a random source whose seed is logged; ALMANAC_TEST_SEED=<seed> replays a run.
func seeded(t *testing.T) *rand.Rand {
	seed := uint64(time.Now().UnixNano())
	if s := os.Getenv("ALMANAC_TEST_SEED"); s != "" {
		v, err := strconv.ParseUint(s, 10, 64)
		if err != nil {
			t.Fatalf("ALMANAC_TEST_SEED=%q: %v", s, err)
		}
		seed = v
	}
	t.Logf("random seed %d (replay with ALMANAC_TEST_SEED=%d)", seed, seed)
	return rand.New(rand.NewPCG(seed, 0))
}

// A cron ScheduledJob runs each slot exactly once while the manager restarts at random
// moments (before a slot, while a reconcile is creating a Job or writing status) and while a
// third of its status writes fail: no slot runs twice, even after its Job is pruned, and no
// slot within the deadline is lost. When the manager is down across several slots, only the
// latest runs and the others are counted as missed.
func TestCronRunsEachSlotOnceAcrossRestarts(t *testing.T) {
	rnd := seeded(t)
	ns := namespace(t)
	clk := newTestClock(t, time.Now())
	f := &faults{statusFailRate: 0.3, rnd: rand.New(rand.NewPCG(rnd.Uint64(), 1))}
	rec := recordJobs(t, ns)
	calls := statusCalls.Load()
	m := startManager(t, ns, clk, f)
	ctx := context.Background()

	sj := newSJ(ns, "every-minute")
	sj.Spec.Schedule = "* * * * *"
	sj.Spec.StartingDeadlineSeconds = ptr.To[int64](600)
	// Every succeeded Job is pruned as soon as it finishes: its slot must not run again.
	sj.Spec.SuccessfulJobsHistoryLimit = ptr.To[int32](0)
	sj.Spec.FailedJobsHistoryLimit = ptr.To[int32](1)
	awayFromMinuteTurn(clk)
	if err := env.Client.Create(ctx, sj); err != nil {
		t.Fatal(err)
	}
	created := getSJ(t, ns, sj.Name).CreationTimestamp.Time
	slot := nextMinute(maxTime(created, clk.Now()), 0)
	defer func() {
		if t.Failed() {
			_, order := rec.snapshot()
			t.Logf("clock %s, status %+v, Jobs created %v", clk.Now().Format(time.RFC3339Nano), getSJ(t, ns, sj.Name).Status, order)
		}
	}()
	restart := func() {
		m.Stop()
		m = startManager(t, ns, clk, f)
	}

	var ran []time.Time
	var missed int64
	restarts := 0
	for i := 0; i < 14; i++ {
		jitter := time.Duration(rnd.IntN(20000)) * time.Millisecond
		switch rnd.IntN(6) {
		case 0: // restart before the slot
			restart()
			restarts++
			clk.JumpTo(slot.Add(jitter))
		case 1: // restart while the reconciler works on the slot
			clk.JumpTo(slot.Add(jitter))
			time.Sleep(time.Duration(rnd.IntN(60)) * time.Millisecond)
			restart()
			restarts++
		case 2: // down across 1–3 more slots, within the deadline: one catch-up run
			m.Stop()
			k := 1 + rnd.IntN(3)
			missed += int64(k)
			slot = slot.Add(time.Duration(k) * time.Minute)
			clk.JumpTo(slot.Add(jitter))
			m = startManager(t, ns, clk, f)
			restarts++
		default:
			clk.JumpTo(slot.Add(jitter))
		}
		name := batchv1alpha1.ScheduledJobName(sj.Name, slot)
		eventually(t, "Job "+name+" for the slot at "+slot.Format(time.RFC3339), func() (bool, error) {
			m, _ := rec.snapshot()
			return m[name] > 0, nil
		})
		cond := batchv1.JobComplete
		if rnd.IntN(4) == 0 {
			cond = batchv1.JobFailed
		}
		finishJob(t, ns, name, cond, clk.Now())
		if dups := rec.duplicates(); len(dups) > 0 {
			t.Fatalf("slots that ran twice: %v", dups)
		}
		ran = append(ran, slot)
		slot = slot.Add(time.Minute)
	}
	last := ran[len(ran)-1]
	eventually(t, "status records every slot", func() (bool, error) {
		st := getSJ(t, ns, sj.Name).Status
		return st.LastScheduleTime != nil && st.LastScheduleTime.Time.Equal(last) && len(st.Active) == 0 &&
			st.Phase == batchv1alpha1.ScheduledJobPhasePending, nil
	})
	// Two more restarts and a wait: nothing runs again, pruned or not.
	restart()
	restart()
	// The fence: a change of the spec brings a reconcile of the last manager's, after its
	// first (every object is reconciled at start); either would run a slot again.
	clk.fenceSpec(t, "scheduledjob", sj)

	st := getSJ(t, ns, sj.Name).Status
	if st.MissedRuns != missed {
		t.Errorf("missedRuns = %d, want %d", st.MissedRuns, missed)
	}
	if dups := rec.duplicates(); len(dups) > 0 {
		t.Errorf("slots that ran twice: %v", dups)
	}
	counts, _ := rec.snapshot()
	var want, got []string
	for _, s := range ran {
		want = append(want, batchv1alpha1.ScheduledJobName(sj.Name, s))
	}
	for name := range counts {
		got = append(got, name)
	}
	sort.Strings(want)
	sort.Strings(got)
	if !equal(want, got) {
		t.Errorf("Jobs created:\n got %v\nwant %v", got, want)
	}
	for _, j := range jobsIn(t, ns, nil) {
		if jobs.OutcomeOf(&j).Type != batchv1.JobFailed {
			t.Errorf("Job %s was not pruned (successfulJobsHistoryLimit 0)", j.Name)
		}
	}
	if left := jobsIn(t, ns, nil); len(left) > 1 {
		t.Errorf("%d Jobs left; failedJobsHistoryLimit 1 keeps one", len(left))
	}
	t.Logf("%d slots run, %d missed, %d restarts, %d injected status-write failures of %d", len(ran), missed, restarts, f.injected, statusCalls.Load()-calls)
}

func maxTime(a, b time.Time) time.Time {
	if a.After(b) {
		return a
	}
	return b
}

func equal(a, b []string) bool {
	if len(a) != len(b) {
		return false
	}
	for i := range a {
		if a[i] != b[i] {
			return false
		}
	}
	return true
}
