package jobs_test

import (
	"context"
	"fmt"
	"math/rand/v2"
	"strings"
	"testing"
	"time"

	batchv1 "k8s.io/api/batch/v1"
	"k8s.io/apimachinery/pkg/api/meta"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/types"
	"k8s.io/utils/ptr"
	"sigs.k8s.io/controller-runtime/pkg/client"

	batchv1alpha1 "github.com/almanac-dev/almanac/api/batch/v1alpha1"
	"github.com/almanac-dev/almanac/api/conditions"
	"github.com/almanac-dev/almanac/reconcilers/jobs"
)

func newEJ(ns, name string, kind batchv1alpha1.TriggerKind, upstream string) *batchv1alpha1.EventJob {
	return &batchv1alpha1.EventJob{
		ObjectMeta: metav1.ObjectMeta{Namespace: ns, Name: name},
		Spec: batchv1alpha1.EventJobSpec{
			Trigger:   batchv1alpha1.Trigger{Kind: kind, Name: upstream},
			JobPolicy: batchv1alpha1.JobPolicy{JobTemplate: jobTemplate()},
		},
	}
}

func newCronJob(t testing.TB, ns, name string) *batchv1.CronJob {
	t.Helper()
	cj := &batchv1.CronJob{ObjectMeta: metav1.ObjectMeta{Namespace: ns, Name: name},
		Spec: batchv1.CronJobSpec{Schedule: "*/5 * * * *", JobTemplate: jobTemplate()}}
	if err := env.Client.Create(context.Background(), cj); err != nil {
		t.Fatal(err)
	}
	return cj
}

// upstreamJob creates a Job controlled by owner (nil: no controller).
func upstreamJob(t testing.TB, ns, name string, owner client.Object, kind string) *batchv1.Job {
	t.Helper()
	j := &batchv1.Job{ObjectMeta: metav1.ObjectMeta{Namespace: ns, Name: name}, Spec: jobTemplate().Spec}
	if owner != nil {
		j.OwnerReferences = []metav1.OwnerReference{{APIVersion: "batch/v1", Kind: kind, Name: owner.GetName(),
			UID: owner.GetUID(), Controller: ptr.To(true), BlockOwnerDeletion: ptr.To(true)}}
	}
	if err := env.Client.Create(context.Background(), j); err != nil {
		t.Fatal(err)
	}
	return j
}

// An EventJob starts one Job per upstream Job that completes after it was created, including
// completions while the manager is down, and never again: not after restarts, not after its
// Jobs are pruned, not after the upstream Jobs are deleted. A third of its status writes fail.
func TestEventJobFiresOncePerUpstreamJob(t *testing.T) {
	rnd := seeded(t)
	ns := namespace(t)
	clk := newTestClock(t, time.Now())
	f := &faults{statusFailRate: 0.3, rnd: rand.New(rand.NewPCG(rnd.Uint64(), 2))}
	rec := recordJobs(t, ns)
	ctx := context.Background()
	cj := newCronJob(t, ns, "nightly")

	// Finished before the EventJob existed: never fires.
	before := upstreamJob(t, ns, "nightly-0", cj, "CronJob")
	finishJob(t, ns, before.Name, batchv1.JobComplete, time.Now().Add(-time.Minute))

	ej := newEJ(ns, "after-nightly", batchv1alpha1.TriggerKindCronJob, "nightly")
	ej.Spec.SuccessfulJobsHistoryLimit = ptr.To[int32](1)
	if err := env.Client.Create(ctx, ej); err != nil {
		t.Fatal(err)
	}
	created := getEJ(t, ns, ej.Name).CreationTimestamp.Time
	m := startManager(t, ns, clk, f)

	var want []string // downstream Job names, one per completed upstream Job
	var down int
	for i := 1; i <= 10; i++ {
		up := upstreamJob(t, ns, fmt.Sprintf("nightly-%d", i), cj, "CronJob")
		stopped := rnd.IntN(3) == 0
		if stopped {
			m.Stop() // this one completes while the manager is down
		}
		cond := batchv1.JobComplete
		if rnd.IntN(4) == 0 {
			cond = batchv1.JobFailed // does not match type Complete
		}
		at := time.Now()
		if at.Before(created) {
			at = created
		}
		finishJob(t, ns, up.Name, cond, at)
		if cond == batchv1.JobComplete {
			want = append(want, batchv1alpha1.EventJobName(ej.Name, up.UID))
		}
		if stopped || rnd.IntN(4) == 0 {
			m.Stop()
			m = startManager(t, ns, clk, f)
			down++
		}
		for _, name := range want {
			eventually(t, "downstream Job "+name, func() (bool, error) {
				c, _ := rec.snapshot()
				return c[name] > 0, nil
			})
		}
		// Finish the downstream Jobs so that the history limit prunes them.
		for _, j := range jobsIn(t, ns, client.MatchingLabels{batchv1alpha1.LabelEventJob: ej.Name}) {
			if !jobs.OutcomeOf(&j).Finished() {
				finishJob(t, ns, j.Name, batchv1.JobComplete, time.Now())
			}
		}
	}
	eventually(t, "status counts every run", func() (bool, error) {
		st := getEJ(t, ns, ej.Name).Status
		return st.TriggerCount == int64(len(want)) && len(st.Active) == 0, nil
	})
	eventually(t, "history pruned to 1 succeeded Job", func() (bool, error) {
		return len(jobsIn(t, ns, client.MatchingLabels{batchv1alpha1.LabelEventJob: ej.Name})) <= 1, nil
	})
	// The CronJob prunes its own history too; then two more restarts.
	for i := 0; i <= 5; i++ {
		// Background: Jobs default to orphaning their Pods, which needs the garbage collector.
		if err := env.Client.Delete(ctx, &batchv1.Job{ObjectMeta: metav1.ObjectMeta{Namespace: ns, Name: fmt.Sprintf("nightly-%d", i)}},
			client.PropagationPolicy(metav1.DeletePropagationBackground)); err != nil {
			t.Fatal(err)
		}
	}
	m.Stop()
	m = startManager(t, ns, clk, f)
	m.Stop()
	startManager(t, ns, clk, f)
	// The fence: a change of the spec brings a reconcile of the last manager's, after its
	// first (every object is reconciled at start); either would start a second run.
	clk.fenceSpec(t, "eventjob", ej)

	if dups := rec.duplicates(); len(dups) > 0 {
		t.Errorf("upstream Jobs that started two runs: %v", dups)
	}
	counts, _ := rec.snapshot()
	var got []string
	for name := range counts {
		if name != before.Name && !isUpstream(name) {
			got = append(got, name)
		}
	}
	if len(got) != len(want) {
		t.Errorf("downstream Jobs created: %v, want %v", got, want)
	}
	for _, name := range want {
		if counts[name] != 1 {
			t.Errorf("%s created %d times, want 1", name, counts[name])
		}
	}
	st := getEJ(t, ns, ej.Name).Status
	if st.TriggerCount != int64(len(want)) {
		t.Errorf("triggerCount %d, want %d", st.TriggerCount, len(want))
	}
	// Entries leave the watermark with their upstream Jobs (unless the downstream Job is kept).
	if n := len(st.Watermark.Handled); n > 6 {
		t.Errorf("watermark keeps %d entries; at most the 5 upstream Jobs left and 1 downstream Job", n)
	}
	t.Logf("%d runs, %d manager restarts, %d injected status-write failures, watermark %d entries",
		len(want), down, f.injected, len(st.Watermark.Handled))
}

func isUpstream(name string) bool {
	var i int
	_, err := fmt.Sscanf(name, "nightly-%d", &i)
	return err == nil
}

// A → B → C: B follows the Job "a", C follows B's Jobs. Each runs once, in order.
func TestEventJobChain(t *testing.T) {
	ns := namespace(t)
	clk := newTestClock(t, time.Now())
	m := startManager(t, ns, clk, nil)
	ctx := context.Background()
	rec := recordJobs(t, ns)
	for _, ej := range []*batchv1alpha1.EventJob{
		newEJ(ns, "b", batchv1alpha1.TriggerKindJob, "a"),
		newEJ(ns, "c", batchv1alpha1.TriggerKindEventJob, "b"),
	} {
		if err := env.Client.Create(ctx, ej); err != nil {
			t.Fatal(err)
		}
	}
	a := upstreamJob(t, ns, "a", nil, "")
	// The fence: once the manager's cache has the running Job a, a change of B's spec brings a
	// reconcile that sees it, and starts nothing.
	m.waitCached(t, a)
	clk.fenceSpec(t, "eventjob", &batchv1alpha1.EventJob{ObjectMeta: metav1.ObjectMeta{Namespace: ns, Name: "b"}})
	if got := jobsIn(t, ns, nil); len(got) != 1 {
		t.Fatalf("Jobs before a finished: %d", len(got))
	}
	finishJob(t, ns, "a", batchv1.JobComplete, time.Now())
	bJob := batchv1alpha1.EventJobName("b", a.UID)
	eventually(t, "B's Job", func() (bool, error) {
		return len(jobsIn(t, ns, client.MatchingLabels{batchv1alpha1.LabelEventJob: "b"})) == 1, nil
	})
	// The fence: once the manager's cache has B's running Job, a change of C's spec brings a
	// reconcile that sees it, and starts nothing.
	running := &batchv1.Job{}
	if err := env.Client.Get(ctx, types.NamespacedName{Namespace: ns, Name: bJob}, running); err != nil {
		t.Fatal(err)
	}
	m.waitCached(t, running)
	clk.fenceSpec(t, "eventjob", &batchv1alpha1.EventJob{ObjectMeta: metav1.ObjectMeta{Namespace: ns, Name: "c"}})
	if got := jobsIn(t, ns, client.MatchingLabels{batchv1alpha1.LabelEventJob: "c"}); len(got) != 0 {
		t.Fatalf("C ran before B's Job finished: %s", got[0].Name)
	}
	b := &batchv1.Job{}
	if err := env.Client.Get(ctx, types.NamespacedName{Namespace: ns, Name: bJob}, b); err != nil {
		t.Fatal(err)
	}
	if b.Annotations[batchv1alpha1.AnnotationTriggerJob] != "a" || b.Labels[batchv1alpha1.LabelTriggerUID] != string(a.UID) ||
		b.Annotations[batchv1alpha1.AnnotationTriggerCondition] != "Complete" {
		t.Errorf("B's Job labels %v annotations %v", b.Labels, b.Annotations)
	}
	if pod := b.Spec.Template.Annotations; pod[batchv1alpha1.AnnotationTriggerJob] != "a" || pod[batchv1alpha1.AnnotationTriggerNamespace] != ns ||
		pod[batchv1alpha1.AnnotationTriggerCondition] != "Complete" || pod[batchv1alpha1.AnnotationTriggerTime] != b.Annotations[batchv1alpha1.AnnotationTriggerTime] {
		t.Errorf("B's Pod template annotations %v: want the upstream Job's namespace, name, condition and time (the downward API reads them there)", pod)
	}
	if ref := metav1.GetControllerOf(b); ref == nil || ref.Kind != "EventJob" || ref.Name != "b" ||
		ref.APIVersion != batchv1alpha1.GroupVersion.String() || b.Labels[batchv1alpha1.LabelEventJob] != "b" {
		t.Errorf("B's Job controller %+v, labels %v", ref, b.Labels)
	}
	if at, ok := batchv1alpha1.ParseTime(b.Annotations[batchv1alpha1.AnnotationTriggerTime]); !ok || at.IsZero() {
		t.Errorf("B's Job trigger-time %q is not UTC RFC 3339", b.Annotations[batchv1alpha1.AnnotationTriggerTime])
	}
	finishJob(t, ns, bJob, batchv1.JobComplete, time.Now())
	cJob := batchv1alpha1.EventJobName("c", b.UID)
	eventually(t, "C's Job", func() (bool, error) {
		c, _ := rec.snapshot()
		return c[cJob] == 1, nil
	})
	_, order := rec.snapshot()
	if !equal(order, []string{"a", bJob, cJob}) {
		t.Errorf("creation order %v, want a, %s, %s", order, bJob, cJob)
	}
	c := &batchv1.Job{}
	if err := env.Client.Get(ctx, types.NamespacedName{Namespace: ns, Name: cJob}, c); err != nil {
		t.Fatal(err)
	}
	if c.Annotations[batchv1alpha1.AnnotationTriggerJob] != bJob {
		t.Errorf("C's Job was triggered by %q, want %s", c.Annotations[batchv1alpha1.AnnotationTriggerJob], bJob)
	}
	// The fence: the end of C's Job brings a reconcile of C; once it is over, no EventJob
	// follows C's Job (none triggers on C) and none starts again.
	clk.fence(t, "eventjob", types.NamespacedName{Namespace: ns, Name: "c"}, func() {
		finishJob(t, ns, cJob, batchv1.JobComplete, time.Now())
	})
	if got := jobsIn(t, ns, nil); len(got) != 3 {
		t.Errorf("%d Jobs, want a, B's and C's", len(got))
	}
	if _, order := rec.snapshot(); len(order) != 3 {
		t.Errorf("Jobs created: %v", order)
	}
}

// Under concurrencyPolicy Replace, when the first of two upstream Jobs handled in one reconcile
// cannot get its Job (a Job of that name exists and is someone else's), the second run deletes
// nothing: no run of the EventJob is running. Issue 11, finding 4: the reconciler sent a
// placeholder for the refused run (no namespace, no UID) to DELETE and reported JobsReplaced
// for a Job that never existed.
func TestEventJobReplaceAfterARefusedCreate(t *testing.T) {
	ns := namespace(t)
	clk := newTestClock(t, time.Now())
	ctx := context.Background()
	cj := newCronJob(t, ns, "hello")
	ej := newEJ(ns, "after-hello", batchv1alpha1.TriggerKindCronJob, "hello")
	ej.Spec.ConcurrencyPolicy = batchv1alpha1.ConcurrencyPolicyReplace
	if err := env.Client.Create(ctx, ej); err != nil {
		t.Fatal(err)
	}
	created := getEJ(t, ns, ej.Name).CreationTimestamp.Time

	// Both upstream Jobs finish while the manager is down, so one reconcile handles both.
	first := upstreamJob(t, ns, "hello-1", cj, "CronJob")
	second := upstreamJob(t, ns, "hello-2", cj, "CronJob")
	foreign := &batchv1.Job{ObjectMeta: metav1.ObjectMeta{Namespace: ns, Name: batchv1alpha1.EventJobName(ej.Name, first.UID)}, Spec: jobTemplate().Spec}
	if err := env.Client.Create(ctx, foreign); err != nil {
		t.Fatal(err)
	}
	finishJob(t, ns, first.Name, batchv1.JobComplete, created.Add(time.Second))
	finishJob(t, ns, second.Name, batchv1.JobComplete, created.Add(2*time.Second))
	startManager(t, ns, clk, nil)

	secondRun := batchv1alpha1.EventJobName(ej.Name, second.UID)
	eventually(t, "the second run's Job and status", func() (bool, error) {
		st := getEJ(t, ns, ej.Name).Status
		return len(st.Active) == 1 && st.Active[0].Name == secondRun && st.TriggerCount == 1 && st.SkippedCount == 1, nil
	})
	conds := getEJ(t, ns, ej.Name).Status.Conditions
	if ready := meta.FindStatusCondition(conds, batchv1alpha1.ConditionReady); ready == nil || ready.Reason != batchv1alpha1.ReasonJobConflict {
		t.Errorf("conditions %+v, want Ready JobConflict for the first run", conds)
	}
	if stalled := meta.FindStatusCondition(conds, conditions.TypeStalled); stalled == nil || stalled.Reason != batchv1alpha1.ReasonJobConflict {
		t.Errorf("conditions %+v, want Stalled JobConflict: a user must remove the foreign Job", conds)
	}
	// The fence: a reconcile after the one that wrote that status (a change of the spec,
	// which also ends the JobConflict condition: checked above); every event the reconciles
	// recorded until then is counted (recordedEvents).
	clk.fenceSpec(t, "eventjob", ej)
	if n := clk.recordedEvents(ns, ej.Name)[jobs.EventJobsReplaced]; n != 0 {
		t.Errorf("%d JobsReplaced events, want none: no run was running", n)
	}
	got := &batchv1.Job{}
	if err := env.Client.Get(ctx, client.ObjectKeyFromObject(foreign), got); err != nil || got.UID != foreign.UID || got.DeletionTimestamp != nil {
		t.Errorf("the foreign Job was touched: %v %v", err, got.DeletionTimestamp)
	}
}

// EventJobs whose triggers close a cycle (A on B, B on A: admission rejects the second one,
// but reads a cache, so two created at the same moment can both pass; this test has no
// webhooks at all) start no Job, even when a Job of one of them finishes, and say why.
// Issue 11, finding 3.
func TestEventJobCycleStartsNoJob(t *testing.T) {
	ns := namespace(t)
	clk := newTestClock(t, time.Now())
	ctx := context.Background()
	a := newEJ(ns, "a", batchv1alpha1.TriggerKindEventJob, "b")
	b := newEJ(ns, "b", batchv1alpha1.TriggerKindEventJob, "a")
	for _, ej := range []*batchv1alpha1.EventJob{a, b} {
		if err := env.Client.Create(ctx, ej); err != nil {
			t.Fatal(err)
		}
	}
	startManager(t, ns, clk, nil)
	// A Job of B (from before the cycle closed) finishes: A would start a Job, whose end would
	// start one of B, and so on.
	up := &batchv1.Job{ObjectMeta: metav1.ObjectMeta{Namespace: ns, Name: "b-leftover", OwnerReferences: []metav1.OwnerReference{{
		APIVersion: batchv1alpha1.GroupVersion.String(), Kind: "EventJob", Name: "b", UID: getEJ(t, ns, "b").UID, Controller: ptr.To(true)}}},
		Spec: jobTemplate().Spec}
	if err := env.Client.Create(ctx, up); err != nil {
		t.Fatal(err)
	}
	// The fence: the end of B's Job brings a reconcile of A, which follows it.
	clk.fence(t, "eventjob", types.NamespacedName{Namespace: ns, Name: "a"}, func() {
		finishJob(t, ns, up.Name, batchv1.JobComplete, time.Now())
	})
	for _, name := range []string{"a", "b"} {
		eventually(t, "EventJob "+name+": Ready=False InvalidTrigger naming the cycle", func() (bool, error) {
			for _, c := range getEJ(t, ns, name).Status.Conditions {
				if c.Type == batchv1alpha1.ConditionReady && c.Reason == batchv1alpha1.ReasonInvalidTrigger && strings.Contains(c.Message, "closes a cycle") {
					return true, nil
				}
			}
			return false, nil
		})
	}
	if got := jobsIn(t, ns, client.MatchingLabels{batchv1alpha1.LabelEventJob: "a"}); len(got) != 0 {
		t.Errorf("EventJob a started Job %s along the cycle", got[0].Name)
	}
	// Events are recorded asynchronously: wait for it.
	eventually(t, "an InvalidTrigger event on EventJob a", func() (bool, error) {
		return eventReasons(t, ns, "a")[batchv1alpha1.ReasonInvalidTrigger] > 0, nil
	})
}
