package jobs_test

import (
	"context"
	"math/rand/v2"
	"slices"
	"strings"
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

// newFanIn is an EventJob over the ScheduledJobs named upstream (AllOf, by slot, unless f says
// otherwise).
func newFanIn(ns, name string, f batchv1alpha1.FanIn, upstream ...string) *batchv1alpha1.EventJob {
	ej := &batchv1alpha1.EventJob{
		ObjectMeta: metav1.ObjectMeta{Namespace: ns, Name: name},
		Spec:       batchv1alpha1.EventJobSpec{FanIn: &f, JobPolicy: batchv1alpha1.JobPolicy{JobTemplate: jobTemplate()}},
	}
	for _, u := range upstream {
		ej.Spec.Triggers = append(ej.Spec.Triggers, batchv1alpha1.Trigger{Kind: batchv1alpha1.TriggerKindScheduledJob, Name: u})
	}
	return ej
}

// slotJob creates the Job of ScheduledJob owner for slot, as the ScheduledJob reconciler names
// and annotates it (the ScheduledJob itself need not exist: the EventJob follows its Jobs).
func slotJob(t testing.TB, ns, owner string, slot time.Time) *batchv1.Job {
	t.Helper()
	j := &batchv1.Job{
		ObjectMeta: metav1.ObjectMeta{Namespace: ns, Name: batchv1alpha1.ScheduledJobName(owner, slot),
			Annotations: map[string]string{batchv1alpha1.AnnotationScheduledTime: batchv1alpha1.FormatTime(slot)},
			OwnerReferences: []metav1.OwnerReference{{APIVersion: batchv1alpha1.GroupVersion.String(), Kind: "ScheduledJob", Name: owner,
				UID: types.UID(owner + "-uid"), Controller: ptr.To(true)}}},
		Spec: jobTemplate().Spec,
	}
	if err := env.Client.Create(context.Background(), j); err != nil {
		t.Fatal(err)
	}
	return j
}

// isSlotJob reports whether name is an upstream Job of these tests ("<a|b|c>-<minute>").
func isSlotJob(name string) bool {
	owner, _, _ := strings.Cut(name, "-")
	return len(owner) == 1
}

// TestFanInRunsOncePerSlot: an AllOf EventJob over three ScheduledJobs starts one Job per slot,
// once the slot's last upstream Job completed, never before; the slots never mix, even when a
// slot's last Job ends after the next slot's first two; a slot with a failed upstream Job
// starts none and is counted. A third of the status writes fail and the manager restarts at
// random moments: still each slot's Job is created once, with the slot and the set's
// upstream Jobs on its Pods.
func TestFanInRunsOncePerSlot(t *testing.T) {
	rnd := seeded(t)
	ns := namespace(t)
	clk := newTestClock(t, time.Now())
	f := &faults{statusFailRate: 0.3, rnd: rand.New(rand.NewPCG(rnd.Uint64(), 42))}
	rec := recordJobs(t, ns)
	ctx := context.Background()
	ej := newFanIn(ns, "report", batchv1alpha1.FanIn{}, "a", "b", "c")
	if err := env.Client.Create(ctx, ej); err != nil {
		t.Fatal(err)
	}
	m := startManager(t, ns, clk, f)
	restart := func() {
		if rnd.IntN(3) == 0 {
			m.Stop()
			m = startManager(t, ns, clk, f)
		}
	}
	base := time.Now().Truncate(time.Minute).Add(time.Minute)
	slot := func(i int) time.Time { return base.Add(time.Duration(i) * time.Minute) }
	finish := func(owner string, i int, cond batchv1.JobConditionType) {
		j := slotJob(t, ns, owner, slot(i))
		finishJob(t, ns, j.Name, cond, time.Now())
		restart()
	}
	name := func(i int) string { return batchv1alpha1.FanInJobName(ej.Name, batchv1alpha1.SlotSetKey(slot(i))) }
	nothingYet := func(what string) {
		t.Helper()
		clk.fenceSpec(t, "eventjob", getEJ(t, ns, ej.Name))
		created, _ := rec.snapshot()
		for n := range created {
			if !isSlotJob(n) {
				t.Fatalf("%s: Job %s started", what, n)
			}
		}
	}

	finish("a", 1, batchv1.JobComplete)
	finish("b", 1, batchv1.JobComplete)
	nothingYet("before c's Job of the first slot")
	finish("a", 2, batchv1.JobComplete) // the next slot's first two, before the first slot's last
	finish("b", 2, batchv1.JobComplete)
	nothingYet("before any c")
	finish("c", 1, batchv1.JobComplete)
	eventually(t, "the first slot's Job", func() (bool, error) {
		created, _ := rec.snapshot()
		return created[name(1)] > 0, nil
	})
	finish("c", 2, batchv1.JobComplete)
	finish("a", 3, batchv1.JobComplete)
	finish("b", 3, batchv1.JobFailed)
	finish("c", 3, batchv1.JobComplete)
	eventually(t, "the second slot's Job, the third slot's set failed, every run recorded", func() (bool, error) {
		st := getEJ(t, ns, ej.Name).Status
		return st.TriggerCount == 2 && st.FanIn != nil && st.FanIn.FailedSets == 1, nil
	})
	// The Jobs of the runs end, and are pruned by the history limits; then two restarts.
	for _, j := range jobsIn(t, ns, client.MatchingLabels{batchv1alpha1.LabelEventJob: ej.Name}) {
		finishJob(t, ns, j.Name, batchv1.JobComplete, time.Now())
	}
	eventually(t, "the Jobs released", func() (bool, error) {
		for _, j := range jobsIn(t, ns, client.MatchingLabels{batchv1alpha1.LabelEventJob: ej.Name}) {
			if slices.Contains(j.Finalizers, batchv1alpha1.FinalizerOutcome) {
				return false, nil
			}
		}
		return true, nil
	})
	for _, j := range jobsIn(t, ns, client.MatchingLabels{batchv1alpha1.LabelEventJob: ej.Name}) {
		if err := env.Client.Delete(ctx, &j, client.PropagationPolicy(metav1.DeletePropagationBackground)); err != nil {
			t.Fatal(err)
		}
	}
	m.Stop()
	m = startManager(t, ns, clk, f)
	m.Stop()
	startManager(t, ns, clk, f)
	clk.fenceSpec(t, "eventjob", getEJ(t, ns, ej.Name))

	created, _ := rec.snapshot()
	var runs []string
	for n, c := range created {
		if !isSlotJob(n) {
			runs = append(runs, n)
			if c != 1 {
				t.Errorf("Job %s created %d times, want once", n, c)
			}
		}
	}
	slices.Sort(runs)
	want := []string{name(1), name(2)}
	slices.Sort(want)
	if !slices.Equal(runs, want) {
		t.Errorf("runs %v, want %v (one per complete slot)", runs, want)
	}
	st := getEJ(t, ns, ej.Name).Status
	if st.TriggerCount != 2 || st.FanIn.FailedSets != 1 || st.FanIn.ExpiredSets != 0 {
		t.Errorf("triggerCount %d, failedSets %d, expiredSets %d; want 2, 1, 0", st.TriggerCount, st.FanIn.FailedSets, st.FanIn.ExpiredSets)
	}
	for i, s := range []string{batchv1alpha1.SlotSetKey(slot(1)), batchv1alpha1.SlotSetKey(slot(2))} {
		var set *batchv1alpha1.FanInSet
		for k := range st.FanIn.Sets {
			if st.FanIn.Sets[k].Key == s {
				set = &st.FanIn.Sets[k]
			}
		}
		if set == nil || set.Decision != batchv1alpha1.FanInStarted || set.Job != name(i+1) {
			t.Errorf("the record of slot %s: %+v", s, set)
		}
	}
}

// TestFanInJobCarriesItsSet: the Job of a set, and so its Pods, say the slot and the set's
// upstream Jobs, in the order of the triggers, with how each ended (onFailure Run).
func TestFanInJobCarriesItsSet(t *testing.T) {
	ns := namespace(t)
	clk := newTestClock(t, time.Now())
	ctx := context.Background()
	ej := newFanIn(ns, "report", batchv1alpha1.FanIn{OnFailure: batchv1alpha1.FanInRun}, "a", "b")
	if err := env.Client.Create(ctx, ej); err != nil {
		t.Fatal(err)
	}
	startManager(t, ns, clk, nil)
	slot := time.Now().Truncate(time.Minute)
	b := slotJob(t, ns, "b", slot)
	finishJob(t, ns, b.Name, batchv1.JobFailed, time.Now())
	a := slotJob(t, ns, "a", slot)
	finishJob(t, ns, a.Name, batchv1.JobComplete, time.Now())
	name := batchv1alpha1.FanInJobName(ej.Name, batchv1alpha1.SlotSetKey(slot))
	var job batchv1.Job
	eventually(t, "the set's Job", func() (bool, error) {
		err := env.Client.Get(ctx, client.ObjectKey{Namespace: ns, Name: name}, &job)
		return err == nil, client.IgnoreNotFound(err)
	})
	want := map[string]string{
		batchv1alpha1.AnnotationFanInSet:          batchv1alpha1.SlotSetKey(slot),
		batchv1alpha1.AnnotationScheduledTime:     batchv1alpha1.FormatTime(slot),
		batchv1alpha1.AnnotationTriggerJobs:       a.Name + "," + b.Name,
		batchv1alpha1.AnnotationTriggerUIDs:       string(a.UID) + "," + string(b.UID),
		batchv1alpha1.AnnotationTriggerConditions: "Complete,Failed",
		batchv1alpha1.AnnotationTriggerNamespace:  ns,
	}
	for _, got := range []map[string]string{job.Annotations, job.Spec.Template.Annotations} {
		for k, v := range want {
			if got[k] != v {
				t.Errorf("annotation %s = %q, want %q", k, got[k], v)
			}
		}
	}
	if job.Labels[batchv1alpha1.LabelEventJob] != ej.Name || !jobs.IsControlledBy(&job, getEJ(t, ns, ej.Name)) {
		t.Errorf("Job %s: labels %v, owners %v", job.Name, job.Labels, job.OwnerReferences)
	}
}

// TestFanInPendingSetsStayBounded: upstreams that never complete a set (c never runs) leave
// at most MaxFanInSets sets in status, every one beyond closed and counted as expired, and
// the status is still written (a list bounded only by the schema would have the API server
// refuse every write past the bound, and the EventJob would start nothing more): a set that
// completes afterwards starts its Job. A set also expires at its horizon, on the clock.
func TestFanInPendingSetsStayBounded(t *testing.T) {
	ns := namespace(t)
	clk := newTestClock(t, time.Now())
	ctx := context.Background()
	ej := newFanIn(ns, "report", batchv1alpha1.FanIn{HorizonSeconds: ptr.To(int64(7200))}, "a", "b", "c")
	if err := env.Client.Create(ctx, ej); err != nil {
		t.Fatal(err)
	}
	startManager(t, ns, clk, nil)
	const slots = batchv1alpha1.MaxFanInSets + 36
	base := clk.Now().Truncate(time.Minute).Add(-slots * time.Minute)
	for i := range slots {
		slot := base.Add(time.Duration(i) * time.Minute)
		for _, owner := range []string{"a", "b"} {
			j := slotJob(t, ns, owner, slot)
			finishJob(t, ns, j.Name, batchv1.JobComplete, time.Now())
		}
	}
	eventually(t, "every upstream Job handled", func() (bool, error) {
		wm := getEJ(t, ns, ej.Name).Status.Watermark
		return wm != nil && len(wm.Handled) == 2*slots, nil
	})
	st := getEJ(t, ns, ej.Name).Status
	if n := len(st.FanIn.Sets); n != batchv1alpha1.MaxFanInSets {
		t.Errorf("%d sets recorded, want %d", n, batchv1alpha1.MaxFanInSets)
	}
	if st.FanIn.ExpiredSets != slots-batchv1alpha1.MaxFanInSets || st.FanIn.ClosedThrough == nil {
		t.Errorf("expiredSets %d, closedThrough %v; want %d and the slot of the last closed set", st.FanIn.ExpiredSets, st.FanIn.ClosedThrough, slots-batchv1alpha1.MaxFanInSets)
	}
	if n := clk.recordedEvents(ns, ej.Name)[jobs.EventSetExpired]; n != slots-batchv1alpha1.MaxFanInSets {
		t.Errorf("%d SetExpired events, want %d", n, slots-batchv1alpha1.MaxFanInSets)
	}

	// A set that completes still starts its Job.
	last := base.Add((slots - 1) * time.Minute)
	c := slotJob(t, ns, "c", last)
	finishJob(t, ns, c.Name, batchv1.JobComplete, time.Now())
	eventually(t, "the Job of the set that completed", func() (bool, error) {
		return getEJ(t, ns, ej.Name).Status.TriggerCount == 1, nil
	})

	// The others expire two hours after their slot, when the clock gets there.
	clk.JumpTo(last.Add(2*time.Hour + time.Second))
	eventually(t, "every open set expired at its horizon", func() (bool, error) {
		st := getEJ(t, ns, ej.Name).Status.FanIn
		return st.ExpiredSets == slots-1, nil
	})
	if st := getEJ(t, ns, ej.Name).Status.FanIn; len(st.Sets) != 0 {
		t.Errorf("sets %v after the horizon, want none", st.Sets)
	}
}

// TestFanInVanishedJobRunsOnce: the Job of a set is deleted as soon as it appears while the
// EventJob's status writes are refused: it stays, being deleted, until the set is recorded
// Started, and is never created again.
func TestFanInVanishedJobRunsOnce(t *testing.T) {
	ns := namespace(t)
	clk := newTestClock(t, time.Now())
	f := &faults{rnd: rand.New(rand.NewPCG(3, 42))}
	rec := recordJobs(t, ns)
	deleteOnSight(t, ns, batchv1alpha1.LabelEventJob)
	ctx := context.Background()
	ej := newFanIn(ns, "report", batchv1alpha1.FanIn{}, "a", "b")
	if err := env.Client.Create(ctx, ej); err != nil {
		t.Fatal(err)
	}
	startManager(t, ns, clk, f)
	eventually(t, "the first status", func() (bool, error) {
		return len(getEJ(t, ns, ej.Name).Status.Conditions) > 0, nil
	})
	f.refuse(true)
	var want []string
	slot := time.Now().Truncate(time.Minute)
	for i := range 2 {
		s := slot.Add(time.Duration(i) * time.Minute)
		for _, owner := range []string{"a", "b"} {
			j := slotJob(t, ns, owner, s)
			finishJob(t, ns, j.Name, batchv1.JobComplete, time.Now())
		}
		name := batchv1alpha1.FanInJobName(ej.Name, batchv1alpha1.SlotSetKey(s))
		want = append(want, name)
		eventually(t, "the set's Job created", func() (bool, error) {
			created, _ := rec.snapshot()
			return created[name] > 0, nil
		})
		retriedOnceDeleted(t, f, ns, name)
	}
	f.refuse(false)
	eventually(t, "the sets recorded and every set's Job gone", func() (bool, error) {
		for _, j := range jobsIn(t, ns, nil) {
			if j.Labels[batchv1alpha1.LabelEventJob] != "" {
				return false, nil
			}
		}
		st := getEJ(t, ns, ej.Name).Status
		return st.TriggerCount == 2, nil
	})
	created, _ := rec.snapshot()
	for _, name := range want {
		if created[name] != 1 {
			t.Errorf("Job %s created %d times, want once", name, created[name])
		}
	}
	if d := slices.DeleteFunc(rec.duplicates(), isSlotJob); len(d) > 0 {
		t.Errorf("runs started twice: %v", d)
	}
}
