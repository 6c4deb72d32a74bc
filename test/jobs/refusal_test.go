package jobs_test

import (
	"context"
	"fmt"
	"math/rand/v2"
	"strings"
	"testing"
	"time"

	admissionregistrationv1 "k8s.io/api/admissionregistration/v1"
	batchv1 "k8s.io/api/batch/v1"
	"k8s.io/apimachinery/pkg/api/meta"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/utils/ptr"
	"sigs.k8s.io/controller-runtime/pkg/client"

	batchv1alpha1 "github.com/almanac-dev/almanac/api/batch/v1alpha1"
	"github.com/almanac-dev/almanac/reconcilers/base"
	"github.com/almanac-dev/almanac/test/testenv"
)

// refuse installs a ValidatingAdmissionPolicy that refuses, in ns, the operations of resource
// (group, resource) with reason, and waits until the API server applies it (probe's dry run is
// refused). It returns the function that lifts it.
func refuse(t *testing.T, ns, group, resource string, op admissionregistrationv1.OperationType, reason metav1.StatusReason, probe func(ctx context.Context) error) (testenv.Refusal, func()) {
	t.Helper()
	r := testenv.Refusal{
		Name:      fmt.Sprintf("refuse-%s-%s", strings.ReplaceAll(resource, "/", "-"), ns),
		Namespace: ns,
		Rules: []admissionregistrationv1.NamedRuleWithOperations{{RuleWithOperations: admissionregistrationv1.RuleWithOperations{
			Operations: []admissionregistrationv1.OperationType{op},
			Rule:       admissionregistrationv1.Rule{APIGroups: []string{group}, APIVersions: []string{"*"}, Resources: []string{resource}},
		}}},
		Reason:  reason,
		Message: "this cluster's policy refuses " + resource + " here",
	}
	r.Effective = func(ctx context.Context) error { return r.Refused(probe(ctx)) }
	return r, env.Refuse(t, r)
}

// readyReason is the reason of a ScheduledJob's Ready condition, with its message.
func readyReason(t testing.TB, ns, name string) (gen, observed int64, reason, message string) {
	t.Helper()
	sj := getSJ(t, ns, name)
	c := meta.FindStatusCondition(sj.Status.Conditions, batchv1alpha1.ConditionReady)
	if c == nil {
		return sj.Generation, sj.Status.ObservedGeneration, "", ""
	}
	return sj.Generation, sj.Status.ObservedGeneration, c.Reason, c.Message
}

// TestARefusedJobWaits (issue 38, item 6): a slot's Job that the API server refuses (a policy
// answering Forbidden, as RBAC, a ResourceQuota or a policy engine's webhook do) is not asked
// for every 2 s: the ScheduledJob says why (Ready False, RequestRefused, with the policy's
// answer and the fix) and tries again about a minute later; the slot stays due, and runs once
// the refusal is lifted, within its starting deadline. On the main before it, the reconcile
// failed and was retried with backoff up to base.MaxRetryDelay: 30 and more creates a minute.
func TestARefusedJobWaits(t *testing.T) {
	ns := namespace(t)
	_, lift := refuse(t, ns, "batch", "jobs", admissionregistrationv1.Create, metav1.StatusReasonForbidden, func(ctx context.Context) error {
		job := &batchv1.Job{ObjectMeta: metav1.ObjectMeta{Namespace: ns, Name: "probe"}, Spec: jobTemplate().Spec}
		return env.Client.Create(ctx, job, client.DryRunAll)
	})
	clk := newTestClock(t, time.Now())
	f := &faults{rnd: rand.New(rand.NewPCG(6, 38))}
	rec := recordJobs(t, ns)
	startManager(t, ns, clk, f)
	ctx := context.Background()
	sj := newSJ(ns, "report")
	sj.Spec.Schedule = "*/10 * * * *"
	sj.Spec.StartingDeadlineSeconds = ptr.To[int64](600)
	if err := env.Client.Create(ctx, sj); err != nil {
		t.Fatal(err)
	}
	eventually(t, "the first status", func() (bool, error) {
		return getSJ(t, ns, sj.Name).Status.NextScheduleTime != nil, nil
	})
	slot := getSJ(t, ns, sj.Name).Status.NextScheduleTime.Time
	clk.JumpTo(slot)
	eventually(t, "Ready False, RequestRefused", func() (bool, error) {
		_, _, reason, msg := readyReason(t, ns, sj.Name)
		return reason == batchv1alpha1.ReasonRequestRefused && strings.Contains(msg, "this cluster's policy refuses jobs here") &&
			strings.Contains(msg, "tries again in about 1m0s"), nil
	})
	clk.waitIdle()
	first := f.jobCreates.Load()

	// 58 seconds of the clock, second by second.
	for range 58 {
		clk.JumpTo(clk.Now().Add(time.Second))
	}
	// The fence: a change of the spec brings one reconcile, which asks for the slot's Job
	// again; once its status shows, nothing else is under way.
	bump := func(parallelism int32) {
		t.Helper()
		if err := retryOnConflict(func() error {
			latest := getSJ(t, ns, sj.Name)
			latest.Spec.JobTemplate.Spec.Parallelism = ptr.To(parallelism)
			return env.Client.Update(ctx, latest)
		}); err != nil {
			t.Fatal(err)
		}
	}
	bump(1)
	eventually(t, "the change observed, the Job still refused", func() (bool, error) {
		gen, observed, reason, _ := readyReason(t, ns, sj.Name)
		return gen == observed && reason == batchv1alpha1.ReasonRequestRefused, nil
	})
	clk.waitIdle()
	if got := f.jobCreates.Load() - first; got != 1 {
		t.Errorf("%d Job creates in the 58 s after the refusal and the spec change, want 1 (the change's): a refused Job is asked for again about a minute later", got)
	}
	// The next try: a minute after a try (the first's, or a later one's: each reconcile
	// asks for its own, and the work queue keeps one wake-up per object), not sooner.
	changed := clk.Now()
	for f.jobCreates.Load() == first+1 && clk.Since(changed) < 2*time.Minute {
		clk.JumpTo(clk.Now().Add(time.Second))
	}
	if at := clk.Now(); at.Before(slot.Add(base.RefusalRetry)) || at.After(changed.Add(base.RefusalRetry+2*time.Second)) {
		t.Errorf("the refused Job was asked for again %s after the first try and %s after the last, want a minute after one of them",
			at.Sub(slot), at.Sub(changed))
	}

	// Lifted: a change of the spec asks at once, and the slot, still within its deadline,
	// runs once.
	lift()
	eventually(t, "the policy lifted", func() (bool, error) {
		job := &batchv1.Job{ObjectMeta: metav1.ObjectMeta{Namespace: ns, Name: "probe"}, Spec: jobTemplate().Spec}
		return env.Client.Create(ctx, job, client.DryRunAll) == nil, nil
	})
	bump(2)
	name := batchv1alpha1.ScheduledJobName(sj.Name, slot)
	eventually(t, "the slot's Job, once the policy is lifted", func() (bool, error) {
		created, _ := rec.snapshot()
		return created[name] > 0, nil
	})
	eventually(t, "Ready True", func() (bool, error) {
		_, _, reason, _ := readyReason(t, ns, sj.Name)
		return reason == batchv1alpha1.ReasonScheduled, nil
	})
	st := getSJ(t, ns, sj.Name).Status
	if st.MissedRuns != 0 || st.LastScheduleTime == nil || !st.LastScheduleTime.Time.Equal(slot) {
		t.Errorf("missedRuns %d, lastScheduleTime %v; want 0 and %s: the refused slot ran once lifted", st.MissedRuns, st.LastScheduleTime, slot)
	}
	if d := rec.duplicates(); len(d) > 0 {
		t.Errorf("runs started twice: %v", d)
	}
}

// TestARefusedRecordKeepsTheNextSlotOnTime (issue 38, item 6; the fault suite's (d) on the
// test API server): while a policy refuses every status write of a ScheduledJob, and its
// Jobs are deleted as soon as they are seen, the record write after each slot's Job is tried
// a handful of times, not every 2 s, and the next slot's Job still comes at its instant: the
// refused record waits for the sooner of a minute and the next slot. A Job event in the middle
// of the minute (the deletion) must not push the wake-up past the slot.
func TestARefusedRecordKeepsTheNextSlotOnTime(t *testing.T) {
	ns := namespace(t)
	clk := newTestClock(t, time.Now())
	f := &faults{rnd: rand.New(rand.NewPCG(7, 38))}
	rec := recordJobs(t, ns)
	startManager(t, ns, clk, f)
	ctx := context.Background()
	sj := newSJ(ns, "every-minute")
	sj.Spec.Schedule = "* * * * *"
	sj.Spec.StartingDeadlineSeconds = ptr.To[int64](600)
	awayFromMinuteTurn(clk)
	if err := env.Client.Create(ctx, sj); err != nil {
		t.Fatal(err)
	}
	eventually(t, "the first status", func() (bool, error) {
		return getSJ(t, ns, sj.Name).Status.NextScheduleTime != nil, nil
	})
	probe := func(ctx context.Context) error {
		latest := getSJ(t, ns, sj.Name)
		patch := client.MergeFrom(latest.DeepCopy())
		latest.Status.MissedRuns = 12345
		return env.Client.Status().Patch(ctx, latest, patch, client.DryRunAll)
	}
	_, lift := refuse(t, ns, batchv1alpha1.GroupVersion.Group, "scheduledjobs/status", admissionregistrationv1.Update, "", probe)
	clk.JumpTo(clk.Now())

	first := getSJ(t, ns, sj.Name).Status.NextScheduleTime.Time
	second := first.Add(time.Minute)
	jobOf := func(slot time.Time) string { return batchv1alpha1.ScheduledJobName(sj.Name, slot) }
	created := func(slot time.Time) func() (bool, error) {
		return func() (bool, error) {
			c, _ := rec.snapshot()
			return c[jobOf(slot)] > 0, nil
		}
	}
	clk.JumpTo(first)
	eventually(t, "the first slot's Job", created(first))
	clk.waitIdle()
	before := f.statusPatches.Load()
	if before == 0 {
		t.Fatal("no status write tried")
	}

	// Half a minute later, the Job is deleted (it stays, being deleted, until its run is
	// recorded): an event that brings a reconcile, whose record write is refused again.
	for range 30 {
		clk.JumpTo(clk.Now().Add(time.Second))
	}
	j := &batchv1.Job{}
	if err := env.Client.Get(ctx, client.ObjectKey{Namespace: ns, Name: jobOf(first)}, j); err != nil {
		t.Fatal(err)
	}
	if err := env.Client.Delete(ctx, j, client.PropagationPolicy(metav1.DeletePropagationBackground)); err != nil {
		t.Fatal(err)
	}
	eventually(t, "the deletion's reconcile tried to write the record", func() (bool, error) {
		return f.statusPatches.Load() > before, nil
	})
	for clk.Now().Before(second.Add(-time.Second)) {
		clk.JumpTo(clk.Now().Add(time.Second))
	}
	clk.waitIdle()
	if got := f.statusPatches.Load(); got-before > 2 {
		t.Errorf("%d status writes tried between the first slot's and the next, want at most 2 (the Job's creation and deletion bring one each): a refused record waits", got-before)
	}

	// The next slot: its Job comes at its instant, with no more of the clock than the jump.
	clk.JumpTo(second)
	clk.waitIdle()
	if ok, _ := created(second)(); !ok {
		t.Fatalf("no Job for the slot at %s once the clock reached it: the refused record's retry was not at the next slot", second)
	}

	// Lifted: the next record holds both runs, and every Job is released.
	lift()
	eventually(t, "the policy lifted", func() (bool, error) { return probe(ctx) == nil, nil })
	third := second.Add(time.Minute)
	clk.JumpTo(third)
	eventually(t, "the runs recorded", func() (bool, error) {
		st := getSJ(t, ns, sj.Name).Status
		return st.LastScheduleTime != nil && st.LastScheduleTime.Time.Equal(third), nil
	})
	c, _ := rec.snapshot()
	for _, slot := range []time.Time{first, second, third} {
		if c[jobOf(slot)] != 1 {
			t.Errorf("Job %s created %d times, want once", jobOf(slot), c[jobOf(slot)])
		}
	}
	if st := getSJ(t, ns, sj.Name).Status; st.MissedRuns != 0 {
		t.Errorf("missedRuns %d, want 0", st.MissedRuns)
	}
}
