package jobs_test

import (
	"context"
	"fmt"
	"math/rand/v2"
	"slices"
	"testing"
	"time"

	batchv1 "k8s.io/api/batch/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/watch"
	"k8s.io/utils/ptr"
	"sigs.k8s.io/controller-runtime/pkg/client"

	batchv1alpha1 "github.com/almanac-dev/almanac/api/batch/v1alpha1"
	"github.com/almanac-dev/almanac/api/scheme"
)

// deleteOnSight deletes, as soon as its watch shows it, every Job in ns that has the label
// key (a ScheduledJob's or an EventJob's Jobs): a namespace cleaner, or
// ttlSecondsAfterFinished: 0 on a Job that ends at once.
func deleteOnSight(t *testing.T, ns, key string) {
	t.Helper()
	wc, err := client.NewWithWatch(env.Config, client.Options{Scheme: scheme.Scheme})
	if err != nil {
		t.Fatal(err)
	}
	w, err := wc.Watch(context.Background(), &batchv1.JobList{}, client.InNamespace(ns), client.HasLabels{key})
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(w.Stop)
	go func() {
		for ev := range w.ResultChan() {
			j, ok := ev.Object.(*batchv1.Job)
			if !ok || ev.Type == watch.Deleted || j.DeletionTimestamp != nil {
				continue
			}
			_ = env.Client.Delete(context.Background(), j, client.PropagationPolicy(metav1.DeletePropagationBackground))
		}
	}()
}

// refuse makes every status write of the reconcilers fail (on) or none (off).
func (f *faults) refuse(on bool) {
	f.mu.Lock()
	defer f.mu.Unlock()
	f.statusFailRate = 0
	if on {
		f.statusFailRate = 1
	}
}

// retriedOnceDeleted is the fence of the checks that a Job whose record could not be written,
// and which was deleted, is never created again: it waits until the Job is being deleted and
// three more reconciles have tried (and failed) to write the record after that, each of which
// would have created the Job again before its write.
func retriedOnceDeleted(t *testing.T, f *faults, ns, name string) {
	t.Helper()
	eventually(t, "Job "+name+" being deleted", func() (bool, error) {
		j := &batchv1.Job{}
		err := env.Client.Get(context.Background(), client.ObjectKey{Namespace: ns, Name: name}, j)
		return err == nil && j.DeletionTimestamp != nil, client.IgnoreNotFound(err)
	})
	tried := f.statusPatches.Load()
	eventually(t, "three more reconciles after the deletion", func() (bool, error) {
		return f.statusPatches.Load() >= tried+3, nil
	})
}

// A cron ScheduledJob whose status writes are refused while its Jobs are deleted as soon as
// they appear runs each slot once: each Job stays, being deleted, until its run is recorded
// (issue 24; on the main before it, each retry of the status write found neither Job nor
// record and created the slot's Job again).
func TestVanishedJobsOfACronScheduledJobRunOnce(t *testing.T) {
	ns := namespace(t)
	clk := newTestClock(t, time.Now())
	f := &faults{rnd: rand.New(rand.NewPCG(1, 24))}
	rec := recordJobs(t, ns)
	deleteOnSight(t, ns, batchv1alpha1.LabelScheduledJob)
	startManager(t, ns, clk, f)
	ctx := context.Background()
	sj := newSJ(ns, "cleanup")
	sj.Spec.Schedule = "* * * * *"
	sj.Spec.StartingDeadlineSeconds = ptr.To[int64](600)
	awayFromMinuteTurn(clk)
	if err := env.Client.Create(ctx, sj); err != nil {
		t.Fatal(err)
	}
	eventually(t, "the first status", func() (bool, error) {
		return getSJ(t, ns, sj.Name).Status.NextScheduleTime != nil, nil
	})
	clk.JumpTo(clk.Now())

	f.refuse(true)
	first := nextMinute(clk.Now(), 0)
	var want []string
	for i := range 3 {
		slot := first.Add(time.Duration(i) * time.Minute)
		want = append(want, batchv1alpha1.ScheduledJobName(sj.Name, slot))
		clk.JumpTo(slot.Add(time.Second))
		eventually(t, "the slot's Job created", func() (bool, error) {
			created, _ := rec.snapshot()
			return created[want[i]] > 0, nil
		})
		retriedOnceDeleted(t, f, ns, want[i])
	}
	f.refuse(false)
	last := first.Add(2 * time.Minute)
	eventually(t, "the runs recorded and every Job gone", func() (bool, error) {
		st := getSJ(t, ns, sj.Name).Status
		return st.LastScheduleTime != nil && st.LastScheduleTime.Time.Equal(last) && len(jobsIn(t, ns, nil)) == 0, nil
	})
	created, _ := rec.snapshot()
	for _, name := range want {
		if created[name] != 1 {
			t.Errorf("Job %s created %d times, want once", name, created[name])
		}
	}
	if d := rec.duplicates(); len(d) > 0 {
		t.Errorf("runs started twice: %v", d)
	}
	if st := getSJ(t, ns, sj.Name).Status; st.MissedRuns != 0 {
		t.Errorf("missedRuns %d, want 0: every slot ran", st.MissedRuns)
	}
}

// The same for an EventJob: its Jobs are deleted as soon as they appear while its status
// writes are refused, and each upstream Job still starts one run.
func TestVanishedJobsOfAnEventJobRunOnce(t *testing.T) {
	ns := namespace(t)
	clk := newTestClock(t, time.Now())
	f := &faults{rnd: rand.New(rand.NewPCG(2, 24))}
	rec := recordJobs(t, ns)
	deleteOnSight(t, ns, batchv1alpha1.LabelEventJob)
	ctx := context.Background()
	cj := newCronJob(t, ns, "nightly")
	ej := newEJ(ns, "after-nightly", batchv1alpha1.TriggerKindCronJob, "nightly")
	if err := env.Client.Create(ctx, ej); err != nil {
		t.Fatal(err)
	}
	startManager(t, ns, clk, f)
	eventually(t, "the first status", func() (bool, error) {
		return len(getEJ(t, ns, ej.Name).Status.Conditions) > 0, nil
	})

	f.refuse(true)
	var want []string
	for i := range 3 {
		up := upstreamJob(t, ns, fmt.Sprintf("nightly-%d", i), cj, "CronJob")
		finishJob(t, ns, up.Name, batchv1.JobComplete, time.Now())
		name := batchv1alpha1.EventJobName(ej.Name, up.UID)
		want = append(want, name)
		eventually(t, "the run's Job created", func() (bool, error) {
			created, _ := rec.snapshot()
			return created[name] > 0, nil
		})
		retriedOnceDeleted(t, f, ns, name)
	}
	f.refuse(false)
	eventually(t, "the runs recorded and every run's Job gone", func() (bool, error) {
		for _, j := range jobsIn(t, ns, nil) {
			if j.Labels[batchv1alpha1.LabelEventJob] != "" {
				return false, nil
			}
		}
		wm := getEJ(t, ns, ej.Name).Status.Watermark
		return wm != nil && len(wm.Handled) == 3, nil
	})
	created, _ := rec.snapshot()
	for _, name := range want {
		if created[name] != 1 {
			t.Errorf("Job %s created %d times, want once", name, created[name])
		}
	}
	if d := slices.DeleteFunc(rec.duplicates(), isUpstream); len(d) > 0 {
		t.Errorf("runs started twice: %v", d)
	}
}
