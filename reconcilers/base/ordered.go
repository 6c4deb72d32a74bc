package base

import (
	"context"
	"time"

	batchv1 "k8s.io/api/batch/v1"
	"k8s.io/apimachinery/pkg/types"
	"sigs.k8s.io/controller-runtime/pkg/builder"
	"sigs.k8s.io/controller-runtime/pkg/client"
	ctrlcontroller "sigs.k8s.io/controller-runtime/pkg/controller"
	"sigs.k8s.io/controller-runtime/pkg/reconcile"
)

// This file is the one seam between the reconcilers and Lanes: no Reconcile mentions Lanes.
// The order of an instant's writes is derived from what a reconcile does through Base and
// from what it returns:
//
//   - the instant a reconcile asks to run again at (its RequeueAfter) is when its object's
//     urgent write is next due (Lanes.Expect); a reconcile that asks for none expects none,
//     and neither does one whose RequeueAfter is the retry of a refused request (Retry);
//   - a reconcile that runs for an instant it asked for has its urgent write under way from
//     its start (Lanes.Urgent), and so has one that creates a Job (a Job is what an instant
//     is for: a slot, a trigger), from the create on;
//   - its urgent work is over when it writes its status or record (WriteStatus, WriteRecord),
//     or returns;
//   - WriteStatus defers a status that finds other urgent writes due or under way
//     (Lanes.Defer), and the reconcile then asks to run again by the sooner of what it
//     returned and the hold's deadline: every reconcile keeps its next wake-up, whatever is
//     held;
//   - WriteRecord writes a Job owner's record between the Jobs and the reports
//     (Lanes.WaitUnderWay, Lanes.Recording), and the events wait (Lanes.Events).

// turn is one reconcile's part in the order: what Base's writes tell Lanes on its behalf.
type turn struct {
	lanes      *Lanes
	controller string
	key        types.NamespacedName
	done       func() // ends this reconcile's urgent work under way (idempotent; none: a no-op)
	held       time.Time
	// retry: the reconcile's RequeueAfter is the retry of a refused request (Retry), not
	// its object's next instant, so it expects no urgent write then.
	retry bool
}

type turnKey struct{}

// turnOf returns the turn of the reconcile whose context ctx is, nil without Lanes.
func turnOf(ctx context.Context) *turn {
	t, _ := ctx.Value(turnKey{}).(*turn)
	return t
}

// urgentNow marks the reconcile's urgent work as under way now if it is not already (a Job
// create).
func (t *turn) urgentNow() {
	if t.done != nil {
		return
	}
	t.lanes.Expect(t.controller, t.key, t.lanes.clock.Now())
	t.done, _ = t.lanes.urgent(t.controller, t.key)
}

// endUrgent ends the reconcile's urgent work, if any is under way.
func (t *turn) endUrgent() {
	if t.done != nil {
		t.done()
	}
}

// Reconciler returns r as the reconciler of the controller named controller, its reconciles
// taking part in the order of an instant (see above). For nil Lanes it returns r.
func (l *Lanes) Reconciler(controller string, r reconcile.Reconciler) reconcile.Reconciler {
	if l == nil {
		return r
	}
	return reconcile.Func(func(ctx context.Context, req reconcile.Request) (reconcile.Result, error) {
		t := &turn{lanes: l, controller: controller, key: req.NamespacedName}
		if done, started := l.urgent(controller, req.NamespacedName); started {
			t.done = done
		}
		res, err := r.Reconcile(context.WithValue(ctx, turnKey{}, t), req)
		t.endUrgent()
		now := l.clock.Now()
		var next, retry time.Time
		switch {
		case err != nil || res.RequeueAfter <= 0:
		case t.retry:
			retry = now.Add(res.RequeueAfter)
		default:
			next = now.Add(res.RequeueAfter)
		}
		l.Expect(controller, req.NamespacedName, next)
		if err == nil && !t.held.IsZero() {
			res = RequeueAt(Sooner(Sooner(next, retry), t.held), now)
		}
		return res, err
	})
}

// Complete builds the controller named controller from bld, with the options of
// ControllerOptions(defaultWorkers), and r as its reconciler; with Lanes, r's reconciles take
// part in the order of an instant, and Lanes wakes the reconciles it deferred through the
// controller's queue.
func (b *Base) Complete(bld *builder.Builder, controller string, defaultWorkers int, r reconcile.Reconciler) error {
	_, err := b.Build(bld, controller, defaultWorkers, r)
	return err
}

// Build is Complete that also returns the controller, for a reconciler that adds watches
// once it runs (the kinds it watches depend on the objects it finds).
func (b *Base) Build(bld *builder.Builder, controller string, defaultWorkers int, r reconcile.Reconciler) (ctrlcontroller.Controller, error) {
	opts := b.ControllerOptions(defaultWorkers)
	bld = bld.Named(controller).WithOptions(opts)
	if b.Lanes == nil {
		return bld.Build(r)
	}
	b.Lanes.SetWorkers(controller, opts.MaxConcurrentReconciles)
	return b.Lanes.Wake(bld, controller).Build(b.Lanes.Reconciler(controller, r))
}

// urgentJobs is the client of a Base with Lanes: a Job created within a reconcile marks that
// reconcile's urgent work as under way.
type urgentJobs struct {
	client.Client
}

func (c urgentJobs) Create(ctx context.Context, obj client.Object, opts ...client.CreateOption) error {
	if _, ok := obj.(*batchv1.Job); ok {
		if t := turnOf(ctx); t != nil {
			t.urgentNow()
		}
	}
	return c.Client.Create(ctx, obj, opts...)
}
