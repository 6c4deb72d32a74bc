package jobs_test

import (
	"context"
	"testing"
	"time"

	batchv1 "k8s.io/api/batch/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"sigs.k8s.io/controller-runtime/pkg/client"

	batchv1alpha1 "github.com/almanac-dev/almanac/api/batch/v1alpha1"
	"github.com/almanac-dev/almanac/api/timing"
)

// examples/scheduledjob-spread.yaml: nightly-cleanup runs at midnight UTC plus the offset of
// its namespace and name (spread 10m), not before; its Job's name holds the shifted instant's
// minute and its scheduled-time annotation the shifted instant, to the second, as do
// lastScheduleTime and nextScheduleTime.
func TestExampleSpread(t *testing.T) {
	ns := namespace(t)
	clk := newTestClock(t, time.Now())
	startManager(t, ns, clk, nil)
	applyExample(t, ns, "scheduledjob-spread.yaml")
	const name = "nightly-cleanup"

	off := timing.SpreadOffset(ns, name, 10*time.Minute)
	midnight := clk.Now().UTC().Truncate(24 * time.Hour).Add(24 * time.Hour)
	if midnight.Add(off).Sub(clk.Now()) >= 24*time.Hour {
		// Today's shifted slot is still ahead (the test runs in the first minutes after midnight).
		midnight = midnight.Add(-24 * time.Hour)
	}
	shifted := midnight.Add(off)
	t.Logf("namespace %s: offset %v, slot %s", ns, off, batchv1alpha1.FormatTime(shifted))
	defer func() {
		if t.Failed() {
			t.Logf("status %+v events %v", getSJ(t, ns, name).Status, eventReasons(t, ns, name))
		}
	}()
	eventually(t, "nextScheduleTime at the shifted instant", func() (bool, error) {
		next := getSJ(t, ns, name).Status.NextScheduleTime
		return next != nil && next.Time.Equal(shifted), nil
	})

	// Midnight has passed, and the shifted instant has not: no Job yet.
	// The clock held there: a change of the spec brings a reconcile (the fence), which creates
	// no Job.
	clk.freeze(t)
	clk.JumpTo(shifted.Add(-time.Second))
	clk.fenceSpec(t, "scheduledjob", &batchv1alpha1.ScheduledJob{ObjectMeta: metav1.ObjectMeta{Namespace: ns, Name: name}})
	if got := jobsIn(t, ns, nil); len(got) != 0 {
		t.Fatalf("Job %s created before %s", got[0].Name, batchv1alpha1.FormatTime(shifted))
	}
	clk.thaw()

	clk.JumpTo(shifted)
	want := batchv1alpha1.ScheduledJobName(name, shifted)
	j := &batchv1.Job{}
	eventually(t, "Job "+want, func() (bool, error) {
		err := env.Client.Get(context.Background(), client.ObjectKey{Namespace: ns, Name: want}, j)
		return err == nil, client.IgnoreNotFound(err)
	})
	if got := j.Annotations[batchv1alpha1.AnnotationScheduledTime]; got != batchv1alpha1.FormatTime(shifted) {
		t.Errorf("the Job's scheduled time is %q, want the shifted instant %s", got, batchv1alpha1.FormatTime(shifted))
	}
	eventually(t, "lastScheduleTime and nextScheduleTime shifted", func() (bool, error) {
		st := getSJ(t, ns, name).Status
		return st.LastScheduleTime != nil && st.LastScheduleTime.Time.Equal(shifted) &&
			st.NextScheduleTime != nil && st.NextScheduleTime.Time.Equal(shifted.Add(24*time.Hour)), nil
	})
	if got := jobsIn(t, ns, nil); len(got) != 1 {
		t.Errorf("%d Jobs, want 1", len(got))
	}
}
