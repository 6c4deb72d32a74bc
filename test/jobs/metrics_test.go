package jobs_test

import (
	"context"
	"testing"
	"time"

	batchv1 "k8s.io/api/batch/v1"
	"k8s.io/utils/ptr"
	"sigs.k8s.io/controller-runtime/pkg/client"
	"sigs.k8s.io/controller-runtime/pkg/metrics"

	batchv1alpha1 "github.com/almanac-dev/almanac/api/batch/v1alpha1"
	"github.com/almanac-dev/almanac/reconcilers/jobs"
)

// sample is one series of a metric family, as the manager's metrics endpoint serves it: the
// value of a counter, or the count and sum of a histogram.
type sample struct {
	value, count, sum float64
}

// scrape reads a series from controller-runtime's registry (what /metrics serves), by name and
// labels; a series that does not exist yet reads as zero.
func scrape(t *testing.T, name string, labels map[string]string) sample {
	t.Helper()
	families, err := metrics.Registry.Gather()
	if err != nil {
		t.Fatal(err)
	}
	for _, mf := range families {
		if mf.GetName() != name {
			continue
		}
	series:
		for _, m := range mf.GetMetric() {
			got := map[string]string{}
			for _, l := range m.GetLabel() {
				got[l.GetName()] = l.GetValue()
			}
			for k, v := range labels {
				if got[k] != v {
					continue series
				}
			}
			if h := m.GetHistogram(); h != nil {
				return sample{count: float64(h.GetSampleCount()), sum: h.GetSampleSum()}
			}
			return sample{value: m.GetCounter().GetValue()}
		}
	}
	return sample{}
}

// delta returns how much a series grows while f runs.
func delta(t *testing.T, name string, labels map[string]string, f func()) sample {
	t.Helper()
	before := scrape(t, name, labels)
	f()
	after := scrape(t, name, labels)
	return sample{value: after.value - before.value, count: after.count - before.count, sum: after.sum - before.sum}
}

// The Job metrics count what happened, once each, with the reason, and the lag histograms
// observe each created Job: runs started, missed (deadline passed, superseded), skipped
// (Forbid, suspended), and the schedule and trigger lags. The tests of this package run one at
// a time, so the registry's deltas belong to this test.
func TestJobMetrics(t *testing.T) {
	ns := namespace(t)
	clk := newTestClock(t, time.Now())
	m := startManager(t, ns, clk, nil)
	ctx := context.Background()
	sjKind := map[string]string{"kind": jobs.KindScheduledJob}
	reason := func(kind, r string) map[string]string { return map[string]string{"kind": kind, "reason": r} }

	// A cron ScheduledJob with Forbid: its first slot runs; the Job still runs at the second,
	// which is skipped.
	sj := newSJ(ns, "forbid")
	sj.Spec.Schedule = "* * * * *"
	sj.Spec.ConcurrencyPolicy = batchv1alpha1.ConcurrencyPolicyForbid
	awayFromMinuteTurn(clk)
	if err := env.Client.Create(ctx, sj); err != nil {
		t.Fatal(err)
	}
	slot := nextMinute(maxTime(getSJ(t, ns, sj.Name).CreationTimestamp.Time, clk.Now()), 0)
	eventually(t, "nextScheduleTime", func() (bool, error) {
		next := getSJ(t, ns, sj.Name).Status.NextScheduleTime
		return next != nil && next.Time.Equal(slot), nil
	})
	lag := delta(t, "almanac_job_schedule_lag_seconds", nil, func() {
		started := delta(t, "almanac_job_runs_started_total", sjKind, func() {
			clk.JumpTo(slot.Add(3 * time.Second))
			eventually(t, "the first slot's Job", func() (bool, error) { return len(jobsIn(t, ns, nil)) == 1, nil })
			clk.waitIdle()
		})
		if started.value != 1 {
			t.Errorf("almanac_job_runs_started_total{kind=ScheduledJob} grew by %v, want 1", started.value)
		}
	})
	// The clock jumped to 3 s after the slot: the lag is those 3 s plus the reconcile.
	if lag.count != 1 || lag.sum < 3 || lag.sum > 30 {
		t.Errorf("almanac_job_schedule_lag_seconds: %v observations summing to %v s, want 1 of 3 s and a little", lag.count, lag.sum)
	}
	skipped := delta(t, "almanac_job_runs_skipped_total", reason(jobs.KindScheduledJob, jobs.SkipForbid), func() {
		clk.JumpTo(slot.Add(time.Minute))
		eventually(t, "the skipped slot in status", func() (bool, error) {
			return getSJ(t, ns, sj.Name).Status.MissedRuns == 1, nil
		})
		clk.waitIdle()
	})
	if skipped.value != 1 {
		t.Errorf("almanac_job_runs_skipped_total{reason=ConcurrencyForbid} grew by %v, want 1", skipped.value)
	}
	// Its later slots would count as missed during the downtime below.
	if err := env.Client.Delete(ctx, sj); err != nil {
		t.Fatal(err)
	}

	// Down across three slots, beyond a 30 s deadline for the last: two are superseded by
	// the latest, whose deadline passed too.
	sj2 := newSJ(ns, "downtime")
	sj2.Spec.Schedule = "* * * * *"
	sj2.Spec.StartingDeadlineSeconds = ptr.To[int64](30)
	if err := env.Client.Create(ctx, sj2); err != nil {
		t.Fatal(err)
	}
	eventually(t, "nextScheduleTime of downtime", func() (bool, error) {
		return getSJ(t, ns, sj2.Name).Status.NextScheduleTime != nil, nil
	})
	// The test clock is ahead of the API server's by the jumps above, so the slots between
	// the ScheduledJob's creation and the clock may already be accounted for: count from here.
	clk.waitIdle()
	superseded := reason(jobs.KindScheduledJob, jobs.MissSuperseded)
	deadlinePassed := reason(jobs.KindScheduledJob, jobs.MissDeadline)
	beforeSuperseded, beforeDeadline := scrape(t, "almanac_job_runs_missed_total", superseded), scrape(t, "almanac_job_runs_missed_total", deadlinePassed)
	st := getSJ(t, ns, sj2.Name).Status
	first, missedBefore := st.NextScheduleTime.Time, st.MissedRuns
	m.Stop()
	clk.JumpTo(first.Add(2*time.Minute + 40*time.Second))
	startManager(t, ns, clk, nil)
	eventually(t, "three missed slots in status", func() (bool, error) {
		return getSJ(t, ns, sj2.Name).Status.MissedRuns == missedBefore+3, nil
	})
	clk.waitIdle()
	if d := scrape(t, "almanac_job_runs_missed_total", superseded).value - beforeSuperseded.value; d != 2 {
		t.Errorf("almanac_job_runs_missed_total{reason=Superseded} grew by %v, want 2", d)
	}
	if d := scrape(t, "almanac_job_runs_missed_total", deadlinePassed).value - beforeDeadline.value; d != 1 {
		t.Errorf("almanac_job_runs_missed_total{reason=DeadlinePassed} grew by %v, want 1", d)
	}

	// Suspended: the due slot is skipped with reason Suspended, counted when the ScheduledJob
	// is resumed (a suspended one is not woken at its slots).
	sj3 := newSJ(ns, "suspended")
	sj3.Spec.Schedule = "* * * * *"
	sj3.Spec.Suspend = true
	if err := env.Client.Create(ctx, sj3); err != nil {
		t.Fatal(err)
	}
	eventually(t, "Ready of suspended", func() (bool, error) {
		return len(getSJ(t, ns, sj3.Name).Status.Conditions) > 0, nil
	})
	clk.waitIdle()
	missedBefore = getSJ(t, ns, sj3.Name).Status.MissedRuns
	suspended := delta(t, "almanac_job_runs_skipped_total", reason(jobs.KindScheduledJob, jobs.SkipSuspended), func() {
		clk.JumpTo(nextMinute(clk.Now(), 0).Add(time.Second))
		resumed := getSJ(t, ns, sj3.Name)
		resumed.Spec.Suspend = false
		if err := env.Client.Update(ctx, resumed); err != nil {
			t.Fatal(err)
		}
		eventually(t, "the suspended slot in status", func() (bool, error) {
			return getSJ(t, ns, sj3.Name).Status.MissedRuns == missedBefore+1, nil
		})
		clk.waitIdle()
	})
	if suspended.value != 1 {
		t.Errorf("almanac_job_runs_skipped_total{reason=Suspended} grew by %v, want 1", suspended.value)
	}
	if n := len(jobsIn(t, ns, client.MatchingLabels{batchv1alpha1.LabelScheduledJob: sj3.Name})); n != 0 {
		t.Errorf("a suspended ScheduledJob created %d Jobs", n)
	}

	// An EventJob's run: started and one trigger-lag observation.
	cj := newCronJob(t, ns, "upstream")
	ej := newEJ(ns, "follower", batchv1alpha1.TriggerKindCronJob, cj.Name)
	if err := env.Client.Create(ctx, ej); err != nil {
		t.Fatal(err)
	}
	eventually(t, "the EventJob's watermark", func() (bool, error) { return getEJ(t, ns, ej.Name).Status.Watermark != nil, nil })
	up := upstreamJob(t, ns, "upstream-1", cj, "CronJob")
	created := getEJ(t, ns, ej.Name).CreationTimestamp.Time
	var started sample
	trigger := delta(t, "almanac_job_trigger_lag_seconds", nil, func() {
		started = delta(t, "almanac_job_runs_started_total", map[string]string{"kind": jobs.KindEventJob}, func() {
			// The condition's time comes from the test clock, which the reconciler measures
			// the lag with (it is ahead of the API server's clock by the jumps above).
			finishJob(t, ns, up.Name, batchv1.JobComplete, maxTime(clk.Now(), created))
			eventually(t, "the downstream Job", func() (bool, error) {
				return len(jobsIn(t, ns, client.MatchingLabels{batchv1alpha1.LabelEventJob: ej.Name})) == 1, nil
			})
			clk.waitIdle()
		})
	})
	if started.value != 1 {
		t.Errorf("almanac_job_runs_started_total{kind=EventJob} grew by %v, want 1", started.value)
	}
	if trigger.count != 1 || trigger.sum < 0 || trigger.sum > 30 {
		t.Errorf("almanac_job_trigger_lag_seconds: %v observations summing to %v s, want 1 of under a second or two", trigger.count, trigger.sum)
	}
}
