package base

import (
	"context"
	"testing"
	"time"

	batchv1 "k8s.io/api/batch/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/types"
	clocktesting "k8s.io/utils/clock/testing"
	"sigs.k8s.io/controller-runtime/pkg/client/fake"
	"sigs.k8s.io/controller-runtime/pkg/reconcile"

	batchv1alpha1 "github.com/almanac-dev/almanac/api/batch/v1alpha1"
	"github.com/almanac-dev/almanac/api/scheme"
)

// TestOrderedReconciler: the order of an instant is derived from what a reconcile returns and
// does through Base, and no Reconcile mentions Lanes. What it returns is when its urgent
// write is next due; run then, its urgent work is under way until it writes its status; a
// Job it creates is urgent work even when no instant was expected; a status that finds other
// urgent work is held, and the reconcile then asks to run again by the sooner of what it
// returned and the hold's deadline; a reconcile that asks for nothing expects nothing.
func TestOrderedReconciler(t *testing.T) {
	ctx := context.Background()
	boundary := time.Date(2030, 1, 7, 9, 0, 0, 0, time.UTC)
	clk := clocktesting.NewFakeClock(boundary.Add(-time.Minute))
	const maxDelay = 30 * time.Second
	l := NewLanes(clk, maxDelay)
	key := func(name string) types.NamespacedName { return types.NamespacedName{Namespace: "ns", Name: name} }
	api := fake.NewClientBuilder().WithScheme(scheme.New()).
		WithStatusSubresource(&batchv1alpha1.ScheduledJob{}).
		WithObjects(&batchv1alpha1.ScheduledJob{ObjectMeta: metav1.ObjectMeta{Namespace: "ns", Name: "report"}}).
		Build()
	b := Base{Client: urgentJobs{Client: api}, APIReader: api, Clock: clk, Lanes: l}
	busy := func() bool { return !l.Defer("probe", key("probe")).IsZero() }

	// A reconcile that asks to run at the boundary: nothing is due before it, its urgent write
	// is due at it.
	var next time.Duration
	var inside func(context.Context) // what the reconcile does, besides returning next
	var r reconcile.Reconciler = reconcile.Func(func(ctx context.Context, _ reconcile.Request) (reconcile.Result, error) {
		if inside != nil {
			inside(ctx)
		}
		return reconcile.Result{RequeueAfter: next}, nil
	})
	ordered := l.Reconciler("scheduledpodautoscaler", r)
	next = time.Minute
	if _, err := ordered.Reconcile(ctx, reconcile.Request{NamespacedName: key("a")}); err != nil {
		t.Fatal(err)
	}
	if busy() {
		t.Fatal("before the boundary: reports held")
	}
	clk.SetTime(boundary)
	if !busy() {
		t.Fatal("at the boundary, with a's write due: reports not held")
	}

	// Run at the boundary: under way until it reports (here it does not), then done.
	next = time.Hour
	inside = func(context.Context) {
		if !busy() {
			t.Error("a's urgent work is not under way during its reconcile")
		}
	}
	if _, err := ordered.Reconcile(ctx, reconcile.Request{NamespacedName: key("a")}); err != nil {
		t.Fatal(err)
	}
	if busy() {
		t.Fatal("after a's reconcile: reports still held")
	}

	// A reconcile of another controller creates a Job with no instant expected: urgent from
	// the create on. Meanwhile a status written in an ordered reconcile is held, and that
	// reconcile asks to run again by the hold's deadline, sooner than its next boundary.
	job := &batchv1.Job{ObjectMeta: metav1.ObjectMeta{Namespace: "ns", Name: "report-1"}}
	var statusResult reconcile.Result
	jobOwner := l.Reconciler("eventjob", reconcile.Func(func(ctx context.Context, _ reconcile.Request) (reconcile.Result, error) {
		if busy() {
			t.Error("before its Job: reports held")
		}
		if err := b.Client.Create(ctx, job); err != nil {
			t.Fatal(err)
		}
		if !busy() {
			t.Error("after its Job create: reports not held")
		}
		// The autoscaler's status, reconciled meanwhile.
		reporter := l.Reconciler("scheduledpodautoscaler", reconcile.Func(func(ctx context.Context, _ reconcile.Request) (reconcile.Result, error) {
			sj := &batchv1alpha1.ScheduledJob{}
			if err := api.Get(ctx, key("report"), sj); err != nil {
				t.Fatal(err)
			}
			changed := sj.DeepCopy()
			changed.Status.LastScheduleTime = &metav1.Time{Time: boundary}
			if written, err := b.WriteStatus(ctx, "ScheduledJob", sj, changed); err != nil || written {
				t.Errorf("a status while a Job is under way: written %v, %v; want held", written, err)
			}
			return reconcile.Result{RequeueAfter: time.Hour}, nil
		}))
		var err error
		statusResult, err = reporter.Reconcile(ctx, reconcile.Request{NamespacedName: key("b")})
		if err != nil {
			t.Fatal(err)
		}
		return reconcile.Result{}, nil
	}))
	if _, err := jobOwner.Reconcile(ctx, reconcile.Request{NamespacedName: key("owner")}); err != nil {
		t.Fatal(err)
	}
	if statusResult.RequeueAfter != maxDelay {
		t.Errorf("the held reconcile asks to run again in %s, want the hold's deadline %s (sooner than its next boundary)", statusResult.RequeueAfter, maxDelay)
	}
	if busy() {
		t.Error("after the Job owner's reconcile (it asks for nothing): reports still held")
	}
	// b's next boundary, an hour away, is expected: at it, reports are held.
	clk.Step(time.Hour)
	if !busy() {
		t.Error("at b's next boundary: reports not held")
	}
}
