package jobs_test

import (
	"context"
	"math/rand/v2"
	"strings"
	"testing"
	"time"

	batchv1 "k8s.io/api/batch/v1"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"sigs.k8s.io/controller-runtime/pkg/client"

	batchv1alpha1 "github.com/almanac-dev/almanac/api/batch/v1alpha1"
)

// replaceForce does what `kubectl replace --force` does (so do Argo CD's Replace=true with
// Force=true, helm --force, and a delete and re-apply): it deletes obj (propagation
// Background, as kubectl does), waits until it is gone, and creates fresh, an object of the
// same name with another UID.
func replaceForce(t *testing.T, obj, fresh client.Object) {
	t.Helper()
	ctx := context.Background()
	if err := env.Client.Delete(ctx, obj, client.PropagationPolicy(metav1.DeletePropagationBackground)); err != nil {
		t.Fatal(err)
	}
	eventually(t, "the old object gone", func() (bool, error) {
		err := env.Client.Get(ctx, client.ObjectKeyFromObject(obj), obj.DeepCopyObject().(client.Object))
		return apierrors.IsNotFound(err), client.IgnoreNotFound(err)
	})
	if err := env.Client.Create(ctx, fresh); err != nil {
		t.Fatal(err)
	}
}

// collectGarbage does what the garbage collector (which envtest does not run) does to the Jobs
// of an object that is gone: it deletes them, in the background. A Job that still holds
// almanac's finalizer stays, being deleted, until almanac releases it.
func collectGarbage(t *testing.T, j *batchv1.Job) {
	t.Helper()
	err := env.Client.Delete(context.Background(), j, client.PropagationPolicy(metav1.DeletePropagationBackground))
	if client.IgnoreNotFound(err) != nil {
		t.Fatal(err)
	}
}

func getJob(ns, name string) (*batchv1.Job, error) {
	j := &batchv1.Job{}
	return j, env.Client.Get(context.Background(), client.ObjectKey{Namespace: ns, Name: name}, j)
}

// A one-shot ScheduledJob replaced (kubectl replace --force) while its Job runs, holding the
// outcome finalizer, and while the manager is away (the replace falls between two reconciles):
// the new ScheduledJob releases the old one's Job, whose run was the old object's, and its own
// run, in the minute of the same at, waits for that Job to go (the garbage collector deletes
// it, here the test does) and then starts, within its starting deadline. Issue 38: the old Job
// kept the finalizer and stayed Terminating forever (the namespace could not be deleted), and
// the new one-shot got JobConflict and counted its run as missed.
func TestReplacedOneShotReleasesTheOldJobAndRuns(t *testing.T) {
	ns := namespace(t)
	clk := newTestClock(t, time.Now())
	m := startManager(t, ns, clk, nil)
	ctx := context.Background()
	at := nextMinute(clk.Now(), time.Minute)
	sj := newSJ(ns, "once")
	sj.Spec.At = at.Format("2006-01-02T15:04")
	fresh := sj.DeepCopy()
	if err := env.Client.Create(ctx, sj); err != nil {
		t.Fatal(err)
	}
	clk.JumpTo(at.Add(time.Second))
	name := batchv1alpha1.ScheduledJobName("once", at)
	eventually(t, "the one-shot running, its Job holding the outcome finalizer", func() (bool, error) {
		j, err := getJob(ns, name)
		if err != nil {
			return false, client.IgnoreNotFound(err)
		}
		return len(j.Finalizers) == 1 && getSJ(t, ns, "once").Status.Phase == batchv1alpha1.ScheduledJobPhaseRunning, nil
	})
	old, _ := getJob(ns, name)
	m.Stop()

	replaceForce(t, getSJ(t, ns, "once"), fresh)
	startManager(t, ns, clk, nil)
	eventually(t, "the old ScheduledJob's Job released; the new one waiting for it, not missed", func() (bool, error) {
		j, err := getJob(ns, name)
		if err != nil {
			return false, err
		}
		ready := readyOf(getSJ(t, ns, "once"))
		return len(j.Finalizers) == 0 && ready != nil && ready.Reason == batchv1alpha1.ReasonScheduled && strings.Contains(ready.Message, "waits for Job "+name), nil
	})
	if st := getSJ(t, ns, "once").Status; st.Phase != batchv1alpha1.ScheduledJobPhasePending || st.MissedRuns != 0 || st.LastScheduleTime != nil {
		t.Errorf("while waiting: phase %s, missedRuns %d, lastScheduleTime %v; want Pending, 0, none", st.Phase, st.MissedRuns, st.LastScheduleTime)
	}

	collectGarbage(t, old)
	eventually(t, "the new ScheduledJob's Job of the same at running", func() (bool, error) {
		j, err := getJob(ns, name)
		if err != nil {
			return false, client.IgnoreNotFound(err)
		}
		now := getSJ(t, ns, "once")
		ref := metav1.GetControllerOf(j)
		return j.UID != old.UID && ref != nil && ref.UID == now.UID && now.Status.Phase == batchv1alpha1.ScheduledJobPhaseRunning, nil
	})
	st := getSJ(t, ns, "once").Status
	if st.MissedRuns != 0 || st.LastScheduleTime == nil || !st.LastScheduleTime.Time.Equal(at) {
		t.Errorf("missedRuns %d, lastScheduleTime %v; want 0 and %s", st.MissedRuns, st.LastScheduleTime, at)
	}
	if ready := readyOf(getSJ(t, ns, "once")); ready == nil || ready.Reason == batchv1alpha1.ReasonJobConflict {
		t.Errorf("Ready %+v", ready)
	}
}

// An EventJob replaced while its Job holds the outcome finalizer (its status write was
// refused, then the manager went away): the garbage collector deletes the old EventJob's Job,
// and the new EventJob releases it, so that it goes. The upstream Job reached its condition
// after both were created (here an hour ahead), so the new EventJob runs for it too: its Job,
// of the same name, waits until the old one is gone, and then starts. Issue 38: the old Job
// stayed Terminating forever, and the new run got JobConflict.
func TestReplacedEventJobReleasesTheOldJob(t *testing.T) {
	ns := namespace(t)
	clk := newTestClock(t, time.Now())
	f := &faults{rnd: rand.New(rand.NewPCG(3, 38))}
	ctx := context.Background()
	cj := newCronJob(t, ns, "nightly")
	ej := newEJ(ns, "after-nightly", batchv1alpha1.TriggerKindCronJob, "nightly")
	fresh := ej.DeepCopy()
	if err := env.Client.Create(ctx, ej); err != nil {
		t.Fatal(err)
	}
	m := startManager(t, ns, clk, f)
	eventually(t, "the first status", func() (bool, error) {
		return len(getEJ(t, ns, ej.Name).Status.Conditions) > 0, nil
	})
	f.refuse(true)
	up := upstreamJob(t, ns, "nightly-1", cj, "CronJob")
	finishJob(t, ns, up.Name, batchv1.JobComplete, time.Now().Add(time.Hour))
	name := batchv1alpha1.EventJobName(ej.Name, up.UID)
	eventually(t, "the run's Job, holding the outcome finalizer", func() (bool, error) {
		j, err := getJob(ns, name)
		if err != nil {
			return false, client.IgnoreNotFound(err)
		}
		return len(j.Finalizers) == 1, nil
	})
	m.Stop()

	replaceForce(t, getEJ(t, ns, ej.Name), fresh)
	old, err := getJob(ns, name)
	if err != nil {
		t.Fatal(err)
	}
	collectGarbage(t, old)
	startManager(t, ns, clk, nil)
	eventually(t, "the old EventJob's Job gone, and the new one's run started", func() (bool, error) {
		j, err := getJob(ns, name)
		if err != nil {
			return false, client.IgnoreNotFound(err)
		}
		ref := metav1.GetControllerOf(j)
		return j.UID != old.UID && ref != nil && ref.UID == getEJ(t, ns, ej.Name).UID, nil
	})
	eventually(t, "the run recorded", func() (bool, error) {
		wm := getEJ(t, ns, ej.Name).Status.Watermark
		return wm != nil && len(wm.Handled) == 1 && wm.Handled[0].UID == up.UID, nil
	})
	for _, c := range getEJ(t, ns, ej.Name).Status.Conditions {
		if c.Reason == batchv1alpha1.ReasonJobConflict {
			t.Errorf("condition %+v", c)
		}
	}
}

func readyOf(sj *batchv1alpha1.ScheduledJob) *metav1.Condition {
	for i := range sj.Status.Conditions {
		if sj.Status.Conditions[i].Type == batchv1alpha1.ConditionReady {
			return &sj.Status.Conditions[i]
		}
	}
	return nil
}
