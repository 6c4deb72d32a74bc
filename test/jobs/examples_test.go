package jobs_test

import (
	"bytes"
	"context"
	"errors"
	"io"
	"os"
	"path/filepath"
	"testing"
	"time"

	batchv1 "k8s.io/api/batch/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"
	utilyaml "k8s.io/apimachinery/pkg/util/yaml"
	"sigs.k8s.io/controller-runtime/pkg/client"

	batchv1alpha1 "github.com/almanac-dev/almanac/api/batch/v1alpha1"
	"github.com/almanac-dev/almanac/test/testenv"
)

// applyExample creates every object of an examples/ file in ns.
func applyExample(t *testing.T, ns, file string) {
	t.Helper()
	data, err := os.ReadFile(filepath.Join(testenv.RepoRoot(), "examples", file))
	if err != nil {
		t.Fatal(err)
	}
	dec := utilyaml.NewYAMLOrJSONDecoder(bytes.NewReader(data), 4096)
	for {
		u := &unstructured.Unstructured{}
		if err := dec.Decode(&u.Object); errors.Is(err, io.EOF) {
			return
		} else if err != nil {
			t.Fatalf("%s: %v", file, err)
		}
		if len(u.Object) == 0 {
			continue
		}
		u.SetNamespace(ns)
		if err := env.Client.Create(context.Background(), u); err != nil {
			t.Fatalf("%s: %s %s: %v", file, u.GetKind(), u.GetName(), err)
		}
	}
}

// The "at" controller's sample, migrated (and moved to 2036): at-sample creates Job
// at-sample-<minute of the slot> at 2036-03-21 13:53:55 UTC, to the second, once.
func TestExampleAt(t *testing.T) {
	ns := namespace(t)
	at := time.Date(2036, 3, 21, 13, 53, 55, 0, time.UTC)
	clk := newTestClock(t, at.Add(-time.Minute))
	startManager(t, ns, clk, nil)
	applyExample(t, ns, "scheduledjob-at.yaml")
	eventually(t, "Pending until 13:53:55", func() (bool, error) {
		return getSJ(t, ns, "at-sample").Status.Phase == batchv1alpha1.ScheduledJobPhasePending, nil
	})
	// The clock held a second before: a change of the spec brings a reconcile (the fence),
	// which creates no Job.
	clk.freeze(t)
	clk.JumpTo(at.Add(-time.Second))
	clk.fenceSpec(t, "scheduledjob", &batchv1alpha1.ScheduledJob{ObjectMeta: metav1.ObjectMeta{Namespace: ns, Name: "at-sample"}})
	if got := jobsIn(t, ns, nil); len(got) != 0 {
		t.Fatalf("Job %s created before 13:53:55", got[0].Name)
	}
	clk.thaw()
	clk.JumpTo(at)
	want := "at-sample-" + "34828673" // 2036-03-21T13:53Z in Unix minutes
	if got := batchv1alpha1.ScheduledJobName("at-sample", at); got != want {
		t.Fatalf("name %s, want %s", got, want)
	}
	defer func() {
		if t.Failed() {
			t.Logf("status %+v events %v", getSJ(t, ns, "at-sample").Status, eventReasons(t, ns, "at-sample"))
		}
	}()
	j := &batchv1.Job{}
	eventually(t, "Job "+want, func() (bool, error) {
		err := env.Client.Get(context.Background(), client.ObjectKey{Namespace: ns, Name: want}, j)
		return err == nil, client.IgnoreNotFound(err)
	})
	if got := j.Annotations[batchv1alpha1.AnnotationScheduledTime]; got != "2036-03-21T13:53:55Z" {
		t.Errorf("the Job's scheduled time is %q, want the instant to the second", got)
	}
	eventually(t, "lastScheduleTime to the second", func() (bool, error) {
		last := getSJ(t, ns, "at-sample").Status.LastScheduleTime
		return last != nil && last.Time.Equal(at), nil
	})
	finishJob(t, ns, want, batchv1.JobComplete, at.Add(31*time.Second))
	eventually(t, "phase Succeeded", func() (bool, error) {
		return getSJ(t, ns, "at-sample").Status.Phase == batchv1alpha1.ScheduledJobPhaseSucceeded, nil
	})
	if got := jobsIn(t, ns, nil); len(got) != 1 {
		t.Errorf("%d Jobs, want 1", len(got))
	}
}

// kitagry's EventJob sample, migrated: eventjob-sample runs once after a Job of the CronJob
// "hello" completes.
func TestExampleEventJob(t *testing.T) {
	ns := namespace(t)
	clk := newTestClock(t, time.Now())
	m := startManager(t, ns, clk, nil)
	applyExample(t, ns, "eventjob.yaml")
	cj := &batchv1.CronJob{}
	if err := env.Client.Get(context.Background(), client.ObjectKey{Namespace: ns, Name: "hello"}, cj); err != nil {
		t.Fatal(err)
	}
	// What the CronJob controller would create for one of its minutes.
	up := upstreamJob(t, ns, "hello-29000000", cj, "CronJob")
	// The fence: once the manager's cache has the running upstream Job, a change of the
	// EventJob's spec brings a reconcile that sees it, and starts nothing.
	m.waitCached(t, up)
	clk.fenceSpec(t, "eventjob", &batchv1alpha1.EventJob{ObjectMeta: metav1.ObjectMeta{Namespace: ns, Name: "eventjob-sample"}})
	if got := jobsIn(t, ns, client.MatchingLabels{batchv1alpha1.LabelEventJob: "eventjob-sample"}); len(got) != 0 {
		t.Fatalf("ran before the upstream Job completed: %s", got[0].Name)
	}
	finishJob(t, ns, up.Name, batchv1.JobComplete, time.Now())
	want := batchv1alpha1.EventJobName("eventjob-sample", up.UID)
	eventually(t, "Job "+want, func() (bool, error) {
		return len(jobsIn(t, ns, client.MatchingLabels{batchv1alpha1.LabelEventJob: "eventjob-sample"})) == 1, nil
	})
	j := jobsIn(t, ns, client.MatchingLabels{batchv1alpha1.LabelEventJob: "eventjob-sample"})[0]
	if j.Name != want || j.Spec.Template.Spec.Containers[0].Name != "hello-event-job" {
		t.Errorf("Job %s with container %s", j.Name, j.Spec.Template.Spec.Containers[0].Name)
	}
	eventually(t, "status", func() (bool, error) {
		st := getEJ(t, ns, "eventjob-sample").Status
		return st.TriggerCount == 1 && st.LastTrigger != nil && st.LastTrigger.JobName == up.Name, nil
	})
}

// The fan-in example: the three extracts' Jobs of one night, made by the ScheduledJob
// reconciler at their slot, start the load once all three completed, not before, with the
// night and the three Jobs on its Pod.
func TestExampleFanIn(t *testing.T) {
	ns := namespace(t)
	// 2036-03-21 01:00 in Berlin is 00:00 UTC.
	night := time.Date(2036, 3, 21, 0, 0, 0, 0, time.UTC)
	clk := newTestClock(t, night.Add(-time.Minute))
	startManager(t, ns, clk, nil)
	applyExample(t, ns, "scheduledjob-fan-in.yaml")
	extracts := []string{"extract-orders", "extract-payments", "extract-stock"}
	eventually(t, "the extracts' first status", func() (bool, error) {
		for _, name := range extracts {
			if getSJ(t, ns, name).Status.NextScheduleTime == nil {
				return false, nil
			}
		}
		return true, nil
	})
	clk.JumpTo(night)
	var names []string
	for _, name := range extracts {
		job := batchv1alpha1.ScheduledJobName(name, night)
		names = append(names, job)
		eventually(t, "Job "+job, func() (bool, error) {
			err := env.Client.Get(context.Background(), client.ObjectKey{Namespace: ns, Name: job}, &batchv1.Job{})
			return err == nil, client.IgnoreNotFound(err)
		})
	}
	// Two complete; the load waits for the third.
	finishJob(t, ns, names[0], batchv1.JobComplete, time.Now())
	finishJob(t, ns, names[1], batchv1.JobComplete, time.Now())
	clk.fenceSpec(t, "eventjob", &batchv1alpha1.EventJob{ObjectMeta: metav1.ObjectMeta{Namespace: ns, Name: "load-warehouse"}})
	if got := jobsIn(t, ns, client.MatchingLabels{batchv1alpha1.LabelEventJob: "load-warehouse"}); len(got) != 0 {
		t.Fatalf("the load ran before the third extract: %s", got[0].Name)
	}
	finishJob(t, ns, names[2], batchv1.JobComplete, time.Now())
	want := batchv1alpha1.FanInJobName("load-warehouse", batchv1alpha1.SlotSetKey(night))
	eventually(t, "Job "+want, func() (bool, error) {
		return len(jobsIn(t, ns, client.MatchingLabels{batchv1alpha1.LabelEventJob: "load-warehouse"})) == 1, nil
	})
	j := jobsIn(t, ns, client.MatchingLabels{batchv1alpha1.LabelEventJob: "load-warehouse"})[0]
	pod := j.Spec.Template.Annotations
	if j.Name != want || pod[batchv1alpha1.AnnotationScheduledTime] != "2036-03-21T00:00:00Z" ||
		pod[batchv1alpha1.AnnotationTriggerJobs] != names[0]+","+names[1]+","+names[2] {
		t.Errorf("Job %s, Pod annotations %v", j.Name, pod)
	}
}
