package base

import (
	"context"
	"fmt"
	"time"

	corev1 "k8s.io/api/core/v1"
	"k8s.io/apimachinery/pkg/api/equality"
	"k8s.io/client-go/tools/events"
	"k8s.io/client-go/util/workqueue"
	"k8s.io/utils/clock"
	ctrl "sigs.k8s.io/controller-runtime"
	"sigs.k8s.io/controller-runtime/pkg/client"
	"sigs.k8s.io/controller-runtime/pkg/controller"
	"sigs.k8s.io/controller-runtime/pkg/reconcile"

	"github.com/almanac-dev/almanac/api/conditions"
	"github.com/almanac-dev/almanac/api/index"
)

// Base is what every almanac reconciler holds: a client for the cache and for writes, a reader
// around the cache, the clock, the event recorder and the controller's options.
type Base struct {
	// Client reads from the manager's cache (with the indexes of api/index) and writes.
	Client client.Client
	// APIReader reads around the cache. The Job owners (ScheduledJob, EventJob) read the
	// object they reconcile with ReadRecord: its status is the record of which slots and
	// upstream Jobs have run, and a cached copy that has not caught up with the last write
	// could start a run whose Job has since been pruned, before the conditional status write
	// could notice; so they read around the cache unless Records shows the cached copy is the
	// version they last wrote. The scaling reconcilers read from the cache: their only other
	// write (the HPA's bounds) is a pure function of the spec, so the conditional status write
	// is guard enough.
	APIReader client.Reader
	// Records remembers the versions of the Job owners that this process last read around the
	// cache or wrote (ReadRecord, WriteStatus). Nil: ReadRecord always reads around the cache.
	Records *Records
	// Clock is the only source of "now"; tests inject a fake one.
	Clock clock.PassiveClock
	// Recorder records events on the reconciled objects (NewBase cuts their notes to what
	// the API server accepts: ShortNotes).
	Recorder events.EventRecorder
	// Options tune the controller (tests use a queue on a fake clock and skip the check for
	// unique controller names).
	Options controller.Options
	// Lanes puts the writes that an instant is for (HPA bounds, Jobs) ahead of the reports
	// (statuses, events); the manager shares one among its reconcilers. Nil orders nothing.
	Lanes *Lanes

	// recorders wrap Recorder last, as the reconciler calls it (WithRecorder).
	recorders []func(events.EventRecorder) events.EventRecorder
}

// NewBase returns the Base of a reconciler that uses mgr's clients and an event recorder named
// recorderName, tells time with clk, and has opts applied in order.
func NewBase(mgr ctrl.Manager, clk clock.PassiveClock, recorderName string, opts ...Option) Base {
	b := Base{
		Client:    mgr.GetClient(),
		APIReader: mgr.GetAPIReader(),
		Clock:     clk,
		Recorder:  ShortNotes(mgr.GetEventRecorder(recorderName)),
	}
	for _, o := range opts {
		o(&b)
	}
	if b.Lanes != nil {
		// The seam (ordered.go): a Job created within a reconcile is urgent work, and the
		// events wait for an instant's urgent writes and records.
		b.Client = urgentJobs{Client: b.Client}
		b.Recorder = b.Lanes.Events(b.Recorder, mgr.GetScheme())
	}
	for _, wrap := range b.recorders {
		b.Recorder = wrap(b.Recorder)
	}
	return b
}

// An Option sets up a reconciler's Base when it is built: each reconciler's New takes them,
// so that a reconciler is whole once New returns.
type Option func(*Base)

// WithLanes shares l among the reconcilers (the manager shares one).
func WithLanes(l *Lanes) Option { return func(b *Base) { b.Lanes = l } }

// WithWorkers sets how many objects the controller reconciles at once (else its default).
func WithWorkers(n int) Option { return func(b *Base) { b.Options.MaxConcurrentReconciles = n } }

// WithControllerOptions sets the controller's options (tests: a queue on a fake clock, no
// check for unique controller names); a WithWorkers after it sets the workers.
func WithControllerOptions(o controller.Options) Option { return func(b *Base) { b.Options = o } }

// WithClient wraps the client the reconciler reads the cache and writes with (tests: faults).
func WithClient(wrap func(client.Client) client.Client) Option {
	return func(b *Base) { b.Client = wrap(b.Client) }
}

// WithRecorder wraps the event recorder as the reconciler calls it, outside of everything
// NewBase puts around it (tests: the events a reconcile records, counted when it records them,
// before the API server has them).
func WithRecorder(wrap func(events.EventRecorder) events.EventRecorder) Option {
	return func(b *Base) { b.recorders = append(b.recorders, wrap) }
}

// WithAPIReader wraps the reader around the cache (tests: the API server's times on the
// test's clock).
func WithAPIReader(wrap func(client.Reader) client.Reader) Option {
	return func(b *Base) { b.APIReader = wrap(b.APIReader) }
}

// MaxRetryDelay is the longest a reconcile that failed waits before it is tried again: as
// long as the leader waits between two attempts to renew its Lease. A reconcile that fails
// returns no next wake-up (controller-runtime drops the result of a failed reconcile), so its
// retry is also when it next looks at the clock: with controller-runtime's default (5 ms
// doubling to 1,000 s), a status write refused for two minutes left a ScheduledJob's next
// slot 19 s late, and one after it 42 s late, after the refusals had stopped (the fault suite
// of test/e2e). The price is one retry every 2 s of an object whose reconcile keeps failing;
// an overall token bucket, as client-go's default limiter has, is left out on purpose: the
// delays it hands out accumulate over an outage, so every object would wait for the
// outage's whole backlog of retries after it. A request that the API server refused
// (Refused: RBAC, an admission policy, a quota) is not retried this way: Retry waits
// RefusalRetry, or until the object's next instant.
const MaxRetryDelay = 2 * time.Second

// ControllerOptions returns the controller's options with MaxConcurrentReconciles defaulted
// to workers when the manager did not set it, and failed reconciles retried after 5 ms,
// doubling up to MaxRetryDelay.
//
// The work queue is otherwise controller-runtime's default, kept on purpose: its priority
// queue (the objects of an informer's initial list go after other events). The rate limiter
// paces only the retries of reconciles that failed; a watch event is queued at once, and so
// is a RequeueAfter (the next boundary or slot, and a conflict's ConflictRetry).
func (b *Base) ControllerOptions(workers int) controller.Options {
	opts := b.Options
	if opts.MaxConcurrentReconciles <= 0 {
		opts.MaxConcurrentReconciles = workers
	}
	if opts.RateLimiter == nil {
		opts.RateLimiter = workqueue.NewTypedItemExponentialFailureRateLimiter[reconcile.Request](5*time.Millisecond, MaxRetryDelay)
	}
	return opts
}

// WriteStatus is how every almanac reconciler writes status: changed is obj (as read at the
// start of this reconcile) with the new status. When the two differ, it
// patches the status subresource with a merge patch computed from obj, under a
// resourceVersion precondition: if anyone wrote the object since it was read, the write fails
// with a conflict and the reconcile is retried from a fresh read. So a status that was
// written was computed from the stored one, and what changed between obj and changed (the
// events to emit, the transition to record) is what this reconcile changed; no reconciler
// remembers its own writes. It reports whether it wrote. kind names the object in errors.
//
// In a reconcile that takes part in the order of an instant (Lanes.Reconciler), a status
// that finds other urgent writes due or under way is not written (it reports false) and the
// reconcile asks to run again by the hold's deadline at the latest, or sooner when Lanes
// wakes it; the reconcile's own urgent work is over once it writes its status.
func (b *Base) WriteStatus(ctx context.Context, kind string, obj, changed client.Object) (bool, error) {
	return b.writeStatus(ctx, false, kind, obj, changed)
}

// WriteRecord is WriteStatus for the status that records the runs of a Job owner
// (ScheduledJob, EventJob), written by the reconcile that started them: in a reconcile that
// takes part in the order of an instant, when it has a change to write, it first waits while urgent writes are
// under way (the other Jobs of the slot or the trigger, a boundary's HPA writes), at most
// MaxRecordWait and never with every worker of the controller (Lanes.WaitUnderWay); the
// reports and events wait for it in turn (Lanes.Recording). The record is still written
// before the reconcile returns, so the next reconcile of the same object reads it; a crash
// during the wait is a crash between a Job and its record, which the Job's name covers
// (jobs.Create).
func (b *Base) WriteRecord(ctx context.Context, kind string, obj, changed client.Object) (bool, error) {
	return b.writeStatus(ctx, true, kind, obj, changed)
}

// writeStatus is WriteStatus, and WriteRecord for record.
func (b *Base) writeStatus(ctx context.Context, record bool, kind string, obj, changed client.Object) (bool, error) {
	t := turnOf(ctx)
	if t != nil {
		t.endUrgent() // the reconcile's urgent work is over when it reports
	}
	if equality.Semantic.DeepEqual(obj, changed) {
		b.recordWritten(obj, nil)
		return false, nil
	}
	switch {
	case t != nil && record:
		t.lanes.WaitUnderWay(ctx, t.controller, MaxRecordWait)
		defer t.lanes.Recording()()
	case t != nil:
		if held := t.lanes.Defer(t.controller, t.key); !held.IsZero() {
			t.held = held
			return false, nil
		}
	}
	err := b.Client.Status().Patch(ctx, changed, client.MergeFromWithOptions(obj, client.MergeFromWithOptimisticLock{}), client.FieldOwner(index.FieldManager))
	b.recordWritten(changed, err)
	if err != nil {
		err = fmt.Errorf("failed to patch the status of %s %s: %w", kind, client.ObjectKeyFromObject(obj), err)
		if Refused(err) && b.Recorder != nil {
			// No condition can say so: an event does (Retry waits before the next try).
			b.Recorder.Eventf(obj, nil, corev1.EventTypeWarning, conditions.ReasonRequestRefused, "WriteStatus", "%s", RefusalMessage(err))
		}
		return false, err
	}
	return true, nil
}

// ConflictRetry is how soon a reconcile runs again when its status write found the object
// changed since it was read: most often the cached copy had not caught up with the previous
// write yet, which takes milliseconds.
const ConflictRetry = 20 * time.Millisecond

// RequeueAt asks to be reconciled again at next (zero: never), given that it is now now.
// An instant that passed while this reconcile was writing (its API calls can take longer
// than the time left) asks for an immediate reconcile: controller-runtime drops a
// RequeueAfter that is not positive, and the instant would be lost until something else
// happened to change.
func RequeueAt(next, now time.Time) ctrl.Result {
	if next.IsZero() {
		return ctrl.Result{}
	}
	return ctrl.Result{RequeueAfter: max(next.Sub(now), time.Nanosecond)}
}

// Sooner returns the earlier of a and b, a zero instant meaning never: a reconcile whose
// report Lanes holds back (Defer) asks to run again by the sooner of its next boundary and
// the hold's deadline.
func Sooner(a, b time.Time) time.Time {
	if a.IsZero() || !b.IsZero() && b.Before(a) {
		return b
	}
	return a
}
