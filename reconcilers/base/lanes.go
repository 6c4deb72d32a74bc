package base

import (
	"container/heap"
	"context"
	"fmt"
	"sync"
	"time"

	corev1 "k8s.io/api/core/v1"
	"k8s.io/apimachinery/pkg/runtime"
	"k8s.io/apimachinery/pkg/types"
	"k8s.io/client-go/tools/events"
	"k8s.io/client-go/tools/reference"
	"k8s.io/client-go/util/workqueue"
	"k8s.io/utils/clock"
	"sigs.k8s.io/controller-runtime/pkg/builder"
	"sigs.k8s.io/controller-runtime/pkg/reconcile"
	"sigs.k8s.io/controller-runtime/pkg/source"
)

// DefaultMaxReportDelay bounds every hold of Lanes: how long after its instant an urgent write
// that never came (its object was deleted, its reconcile failed) holds the reports back, how
// long an urgent write under way or a record holds them at most (a callback that
// never comes holds nothing longer), and how long a report or an event waits at most.
const DefaultMaxReportDelay = 30 * time.Second

// Lanes puts the writes that an instant is for ahead of the writes that report on them.
//
// At a boundary (09:00) many autoscalers need their HPA written at once, and a slot's
// ScheduledJobs their Jobs; each autoscaler also has a status to write, and each Job owner a
// record of its run and events. The API server serves them all with the same CPU: when the
// reports go out with the urgent writes, every HPA is late by them. So the reconcilers tell
// Lanes when an object's urgent write is due (Expect, with the instant they requeue for) and
// when it is under way (Urgent); a report (a status write and its events) that finds urgent
// writes of an instant due or under way is deferred (Defer), and its reconciler is woken
// through its Wake source once none is left. Between the two go the Job owners' records of their runs, which
// are written in the reconcile that started the run: after the urgent writes under way
// (WaitUnderWay), and ahead of the reports (Recording). Writes that no instant called for (a
// manager starting, a spec that changed) hold nothing back: there is no instant to be late
// for.
//
// Every hold ends by itself, on the injected clock: a write due holds the reports at most
// maxDelay after its instant, and a write under way or a record at most maxDelay
// after it began, after which Lanes forgets it (a callback that never comes holds nothing
// back for longer). A report waits at most maxDelay after it was first deferred, however
// many writes follow one another meanwhile, and so do the held events; Defer returns that
// deadline, so that a deferred reconcile still asks to run again by then (and by its own next
// boundary) even if the wake-up is lost.
//
// Only the order lives in memory, and nothing depends on it: a deferred reconcile has written
// nothing (it writes when it is woken, from what it reads then), and a manager that starts
// reconciles everything. A nil *Lanes orders nothing (every report goes out at once).
//
// Each part earns its keep in the benchmark's ablation (docs/performance.md, issue 23): with
// the reports not deferred the boundary figure's p99 went from 1.08× to 2.12× the raw
// applies', with the records not between the Jobs and the reports the trigger figure's p99
// from 79 to 119 ms, with the events not held the slot figure's p99 from 0.03× to 0.06× the
// CronJob controller's (medians of three). The wait for the manager's watch to show an HPA
// write (Landing) moved nothing beyond the spread and was removed.
type Lanes struct {
	clock    clock.WithDelayedExecution
	maxDelay time.Duration
	off      map[LanesPart]bool // the parts switched off (the benchmark's ablation)

	mu     sync.Mutex
	due    map[laneKey]time.Time   // the instant of each object's next urgent write
	byTime timedHeap[laneKey]      // the same, by instant (entries may be stale: check due)
	ends   timedHeap[func(*Lanes)] // when each hold below ends by itself, and how
	// underWay holds the urgent writes under way that were due (their instant had passed),
	// each until its deadline.
	underWay map[laneKey]time.Time
	// recording holds the Job owners' records being written after their Jobs (Recording), by
	// number, each until its deadline.
	recording map[uint64]time.Time
	records   uint64                                   // the number of the last record
	workers   map[string]int                           // by controller (SetWorkers)
	waiters   map[string]map[chan struct{}]bool        // WaitUnderWay calls, by controller
	deferred  map[string]map[types.NamespacedName]bool // to wake at the next flush, by controller
	// since is when each report still held back was first deferred: it outlives the flushes,
	// so that a report that finds other writes under way each time it is woken still goes
	// out maxDelay after it was first held back.
	since     map[laneKey]time.Time
	wake      map[string]func(types.NamespacedName) // adds to each controller's queue (Wake)
	held      []heldEvent                           // events recorded while busy (Events)
	heldSince time.Time                             // when the first of them was held
	timer     clock.Timer                           // wakes flush at timerAt (armLocked)
	timerAt   time.Time
}

// MaxRecordWait bounds how long a Job owner's status write waits for urgent writes under
// way (WaitUnderWay): long enough for the other Jobs of a slot or a trigger, which take
// milliseconds to a few hundred, short enough that a boundary of thousands of HPA writes
// delays the records of a slot that shares its instant by no more.
const MaxRecordWait = time.Second

// MaxHeldEvents bounds the events that Lanes holds back; beyond it they are recorded at once.
const MaxHeldEvents = 10000

// Events returns a recorder that holds back the events recorded while urgent writes are due
// or under way (a slot's Jobs, a trigger's Jobs, a boundary's HPA writes) and records them
// when none is left, like the reports that Defer holds back: an event reports a run, it is
// not the run, and each is one more write for the API server ahead of the next Job. Events
// recorded when nothing is urgent, and any beyond MaxHeldEvents, are recorded at once. For nil
// Lanes it returns r.
//
// scheme is r's scheme (the manager's): a held event keeps the references to its objects
// that r would make of them (reference.GetReference), never the objects, which are Job
// owners with their Job templates and the Jobs created from them.
func (l *Lanes) Events(r events.EventRecorder, scheme *runtime.Scheme) events.EventRecorder {
	if l == nil || l.off[HoldEvents] {
		return r
	}
	return heldEvents{lanes: l, r: r, scheme: scheme}
}

type heldEvents struct {
	lanes  *Lanes
	r      events.EventRecorder
	scheme *runtime.Scheme
}

// heldEvent is an event that Lanes holds back: what the recorder needs of it, as it read when
// it was recorded, and references to its objects rather than the objects (up to MaxHeldEvents
// are held).
type heldEvent struct {
	recorder                        events.EventRecorder    // the controller's, which records it
	regarding, related              *corev1.ObjectReference // related is nil for none
	eventtype, reason, action, note string
}

// record hands the event to its recorder, which takes an *ObjectReference as the reference it
// would have made of the object.
func (e *heldEvent) record() {
	var related runtime.Object
	if e.related != nil {
		related = e.related
	}
	e.recorder.Eventf(e.regarding, related, e.eventtype, e.reason, e.action, "%s", e.note)
}

func (h heldEvents) Eventf(regarding, related runtime.Object, eventtype, reason, action, note string, args ...any) {
	l := h.lanes
	l.mu.Lock()
	if !l.busyLocked(l.clock.Now()) || len(l.held) >= MaxHeldEvents {
		l.mu.Unlock()
		h.r.Eventf(regarding, related, eventtype, reason, action, note, args...)
		return
	}
	l.mu.Unlock()
	// The references are taken, and the note written, as the objects read now: they may
	// change before the event is recorded.
	ref, err := reference.GetReference(h.scheme, regarding)
	if err != nil {
		h.r.Eventf(regarding, related, eventtype, reason, action, note, args...) // the recorder says why it cannot
		return
	}
	e := heldEvent{recorder: h.r, regarding: ref.DeepCopy(), eventtype: eventtype, reason: reason, action: action, note: fmt.Sprintf(note, args...)}
	if related != nil {
		// As the recorder does, an event whose related object has no reference goes without.
		if rel, err := reference.GetReference(h.scheme, related); err == nil {
			e.related = rel.DeepCopy()
		}
	}
	l.mu.Lock()
	now := l.clock.Now()
	if !l.busyLocked(now) || len(l.held) >= MaxHeldEvents {
		l.mu.Unlock()
		e.record()
		return
	}
	if len(l.held) == 0 {
		l.heldSince = now
	}
	l.held = append(l.held, e)
	l.armLocked(now)
	l.mu.Unlock()
}

type laneKey struct {
	controller string
	types.NamespacedName
}

// LanesPart names one mechanism of Lanes, which the benchmark's ablation switches off
// (test/bench, the manager's hidden --lanes-off) to measure what it is worth.
type LanesPart string

const (
	// DeferReports: a report (status and events) that finds urgent writes due or under way
	// is held back (Defer).
	DeferReports LanesPart = "defer"
	// RecordsBetween: a Job owner's record waits for the urgent writes under way
	// (WaitUnderWay), and the reports wait for the records (Recording).
	RecordsBetween LanesPart = "recording"
	// HoldEvents: the Job owners' events are held back while urgent writes are due or under
	// way (Events).
	HoldEvents LanesPart = "events"
)

// LanesParts are the parts that can be switched off, in the order the ablation reports them.
var LanesParts = []LanesPart{DeferReports, RecordsBetween, HoldEvents}

// NewLanes returns Lanes that tell time, and wait, with clk, and hold anything back at most
// maxDelay (DefaultMaxReportDelay), without the parts off (none but for the benchmark's
// ablation).
func NewLanes(clk clock.WithDelayedExecution, maxDelay time.Duration, off ...LanesPart) *Lanes {
	offs := map[LanesPart]bool{}
	for _, p := range off {
		offs[p] = true
	}
	return &Lanes{
		clock: clk, maxDelay: maxDelay, off: offs,
		due:       map[laneKey]time.Time{},
		workers:   map[string]int{},
		waiters:   map[string]map[chan struct{}]bool{},
		deferred:  map[string]map[types.NamespacedName]bool{},
		since:     map[laneKey]time.Time{},
		wake:      map[string]func(types.NamespacedName){},
		underWay:  map[laneKey]time.Time{},
		recording: map[uint64]time.Time{},
	}
}

// Wake adds to b, for the controller named controller, the source through which Lanes wakes
// the reconciles it deferred: it adds them to the controller's queue, which never blocks.
// b is returned unchanged for nil Lanes.
func (l *Lanes) Wake(b *builder.Builder, controller string) *builder.Builder {
	if l == nil {
		return b
	}
	return b.WatchesRawSource(source.Func(func(_ context.Context, q workqueue.TypedRateLimitingInterface[reconcile.Request]) error {
		l.mu.Lock()
		defer l.mu.Unlock()
		l.wake[controller] = func(key types.NamespacedName) { q.Add(reconcile.Request{NamespacedName: key}) }
		return nil
	}))
}

// holdLocked records that a hold began at now and ends by itself maxDelay later, with end
// (which does nothing if the hold has ended already); it first ends the holds whose time has
// come, so that what is remembered of them stays bounded by what began in the last maxDelay.
func (l *Lanes) holdLocked(now time.Time, end func(*Lanes)) time.Time {
	l.endLocked(now)
	until := now.Add(l.maxDelay)
	heap.Push(&l.ends, timed[func(*Lanes)]{at: until, v: end})
	return until
}

// endLocked ends the holds whose deadline is at or before now.
func (l *Lanes) endLocked(now time.Time) {
	for l.ends.Len() > 0 && !l.ends[0].at.After(now) {
		heap.Pop(&l.ends).(timed[func(*Lanes)]).v(l)
	}
}

// Expect records that the object key of controller has an urgent write due at at (replacing
// what was expected before); a zero at expects nothing.
func (l *Lanes) Expect(controller string, key types.NamespacedName, at time.Time) {
	if l == nil {
		return
	}
	l.mu.Lock()
	k := laneKey{controller, key}
	cur, had := l.due[k]
	switch {
	case at.IsZero():
		delete(l.due, k)
	case had && cur.Equal(at):
	default:
		l.due[k] = at
		heap.Push(&l.byTime, timed[laneKey]{at: at, v: k})
	}
	l.mu.Unlock()
	if had && !cur.Equal(at) {
		l.flushIfIdle() // what waited for the write it expected before may go now
	}
}

// Forget drops what was expected of an object that is gone.
func (l *Lanes) Forget(controller string, key types.NamespacedName) {
	l.Expect(controller, key, time.Time{})
}

// Urgent marks the urgent work of an object as under way (what was expected of it is met);
// the returned function marks it done, and wakes the deferred reports if it was the last
// that was due. Not marked done, it counts as done maxDelay after it began.
func (l *Lanes) Urgent(controller string, key types.NamespacedName) (done func()) {
	done, _ = l.urgent(controller, key)
	return done
}

// urgent is Urgent, and reports whether an instant called for the work (it is under way).
func (l *Lanes) urgent(controller string, key types.NamespacedName) (done func(), started bool) {
	if l == nil {
		return func() {}, false
	}
	l.mu.Lock()
	k := laneKey{controller, key}
	at, expected := l.due[k]
	delete(l.due, k)
	now := l.clock.Now()
	if !expected || at.After(now) {
		l.mu.Unlock()
		return func() {}, false // no instant called for it
	}
	var until time.Time
	until = l.holdLocked(now, func(l *Lanes) {
		if l.underWay[k].Equal(until) {
			l.endUrgentLocked(k)
		}
	})
	l.underWay[k] = until
	l.mu.Unlock()
	var once sync.Once
	return func() {
		once.Do(func() {
			l.mu.Lock()
			l.endUrgentLocked(k)
			l.mu.Unlock()
			l.flushIfIdle()
		})
	}, true
}

// endUrgentLocked ends the urgent write under way of k, and lets WaitUnderWay go if it was
// the last.
func (l *Lanes) endUrgentLocked(k laneKey) {
	delete(l.underWay, k)
	if len(l.underWay) == 0 {
		for c := range l.waiters {
			l.releaseLocked(c)
		}
	}
}

// SetWorkers tells Lanes how many reconciles controller runs at once (WaitUnderWay).
func (l *Lanes) SetWorkers(controller string, n int) {
	if l == nil {
		return
	}
	l.mu.Lock()
	defer l.mu.Unlock()
	l.workers[controller] = n
}

// WaitUnderWay waits while urgent writes are under way, at most maxWait, or until ctx is done;
// it returns at once for nil Lanes. The Job owners (ScheduledJob, EventJob) call it before
// the status write that records a run: the record is still written before their reconcile
// returns, so the next reconcile of the same object reads it, but after the Jobs of the other
// objects of the same slot or trigger that are being created, which it would otherwise delay
// (such a write costs the API server more than the Job it records). It never holds the last
// free worker of controller (SetWorkers; one if not told): the call that would leave every
// worker waiting lets them all go, since work may be queued behind them (a slot of 1,000
// ScheduledJobs on 32 workers goes out in waves of 32 Jobs, each followed by its records). It
// does not wait for writes due but not started. A caller whose own urgent write is under way
// marks it done first, or it waits for itself.
func (l *Lanes) WaitUnderWay(ctx context.Context, controller string, maxWait time.Duration) {
	if l == nil || l.off[RecordsBetween] {
		return
	}
	l.mu.Lock()
	l.endLocked(l.clock.Now())
	if len(l.underWay) == 0 {
		l.mu.Unlock()
		return
	}
	if len(l.waiters[controller])+1 >= max(l.workers[controller], 1) {
		l.releaseLocked(controller)
		l.mu.Unlock()
		return
	}
	done := make(chan struct{})
	if l.waiters[controller] == nil {
		l.waiters[controller] = map[chan struct{}]bool{}
	}
	l.waiters[controller][done] = true
	l.mu.Unlock()
	t := l.clock.NewTimer(maxWait)
	defer t.Stop()
	select {
	case <-done:
		return
	case <-t.C():
	case <-ctx.Done():
	}
	l.mu.Lock()
	delete(l.waiters[controller], done)
	l.mu.Unlock()
}

// Recording marks a Job owner's record (the status write after its Job) as under way until
// the returned function is called, or for maxDelay at most: the reports and events wait for
// it as for the urgent writes, but WaitUnderWay does not. For nil Lanes it does nothing.
func (l *Lanes) Recording() (done func()) {
	if l == nil || l.off[RecordsBetween] {
		return func() {}
	}
	l.mu.Lock()
	l.records++
	n := l.records
	end := func(l *Lanes) { delete(l.recording, n) }
	l.recording[n] = l.holdLocked(l.clock.Now(), end)
	l.mu.Unlock()
	var once sync.Once
	return func() {
		once.Do(func() {
			l.mu.Lock()
			end(l)
			l.mu.Unlock()
			l.flushIfIdle()
		})
	}
}

// releaseLocked lets go every WaitUnderWay call of controller.
func (l *Lanes) releaseLocked(controller string) {
	for done := range l.waiters[controller] {
		close(done)
	}
	delete(l.waiters, controller)
}

// Defer reports until when the report of the object key of controller is held back: while
// urgent writes are due or under way, at most maxDelay after it was first deferred. A zero
// instant means now: the caller writes. Otherwise the caller writes nothing and asks to be
// reconciled again by the instant returned (and by its own next boundary); Lanes wakes it
// sooner, when the urgent writes are done.
func (l *Lanes) Defer(controller string, key types.NamespacedName) (until time.Time) {
	if l == nil || l.off[DeferReports] {
		return time.Time{}
	}
	l.mu.Lock()
	defer l.mu.Unlock()
	k := laneKey{controller, key}
	now := l.clock.Now()
	since, deferred := l.since[k]
	if !l.busyLocked(now) || deferred && !now.Before(since.Add(l.maxDelay)) {
		delete(l.since, k)
		return time.Time{}
	}
	if !deferred {
		since = now
		l.since[k] = now
	}
	if l.deferred[controller] == nil {
		l.deferred[controller] = map[types.NamespacedName]bool{}
	}
	l.deferred[controller][key] = true
	l.armLocked(now)
	return since.Add(l.maxDelay)
}

// busyLocked reports whether an urgent write is under way, or due (its instant has passed, by
// less than maxDelay), or a
// Job owner's record after one is being written (Recording); it first forgets the holds that
// have ended by themselves.
func (l *Lanes) busyLocked(now time.Time) bool {
	l.endLocked(now)
	if len(l.underWay) > 0 || len(l.recording) > 0 {
		return true
	}
	at, ok := l.oldestDueLocked(now)
	return ok && !at.After(now)
}

// oldestDueLocked returns the instant of the oldest urgent write still due (its instant less
// than maxDelay before now), forgetting those that it passes.
func (l *Lanes) oldestDueLocked(now time.Time) (time.Time, bool) {
	for l.byTime.Len() > 0 {
		top := l.byTime[0]
		if at, ok := l.due[top.v]; !ok || !at.Equal(top.at) {
			heap.Pop(&l.byTime) // met, forgotten or expected again since
			continue
		}
		if !top.at.After(now.Add(-l.maxDelay)) {
			heap.Pop(&l.byTime) // it never came: stop holding the reports for it
			delete(l.due, top.v)
			continue
		}
		return top.at, true
	}
	return time.Time{}, false
}

// armLocked makes sure that flushIfIdle runs, on the clock, when the first hold ends by
// itself (an urgent write due that never came, one under way or a record whose callback did
// not come) or the held events have waited maxDelay.
func (l *Lanes) armLocked(now time.Time) {
	var next time.Time
	sooner := func(t time.Time) {
		if next.IsZero() || t.Before(next) {
			next = t
		}
	}
	if at, ok := l.oldestDueLocked(now); ok {
		sooner(at.Add(l.maxDelay))
	}
	if l.ends.Len() > 0 {
		sooner(l.ends[0].at)
	}
	if len(l.held) > 0 {
		sooner(l.heldSince.Add(l.maxDelay))
	}
	if next.IsZero() || l.timer != nil && !next.Before(l.timerAt) {
		return
	}
	if l.timer != nil {
		l.timer.Stop()
	}
	l.timerAt = next
	l.timer = l.clock.AfterFunc(next.Sub(now), func() {
		// In a goroutine: a fake clock runs this while it holds its lock, and flushIfIdle
		// reads the clock (a real clock runs it in a goroutine of its own anyway).
		go l.fired(next)
	})
}

// fired is the timer of armLocked, armed for at.
func (l *Lanes) fired(at time.Time) {
	l.mu.Lock()
	if l.timer != nil && l.timerAt.Equal(at) {
		l.timer = nil
	}
	l.mu.Unlock()
	l.flushIfIdle()
}

// flushIfIdle wakes every deferred reconcile, and records the held events, when no urgent
// write is due or under way; the held events also go when they have waited maxDelay.
func (l *Lanes) flushIfIdle() {
	l.mu.Lock()
	if len(l.deferred) == 0 && len(l.held) == 0 {
		l.mu.Unlock()
		return
	}
	now := l.clock.Now()
	busy := l.busyLocked(now)
	var held []heldEvent
	if !busy || len(l.held) > 0 && !now.Before(l.heldSince.Add(l.maxDelay)) {
		held, l.held = l.held, nil
	}
	if busy {
		l.armLocked(now)
		l.mu.Unlock()
		recordAll(held)
		return
	}
	woken := l.deferred
	l.deferred = map[string]map[types.NamespacedName]bool{}
	for k, since := range l.since {
		if !now.Before(since.Add(l.maxDelay)) {
			delete(l.since, k) // its reconcile found nothing left to report
		}
	}
	wake := make(map[string]func(types.NamespacedName), len(woken))
	for c := range woken {
		wake[c] = l.wake[c]
	}
	l.mu.Unlock()
	recordAll(held)
	for c, keys := range woken {
		if wake[c] == nil {
			continue // the controller has not started (it reconciles everything when it does)
		}
		for key := range keys {
			wake[c](key)
		}
	}
}

// recordAll records held events; the broadcaster queues them: this does not wait for the API
// server.
func recordAll(held []heldEvent) {
	for i := range held {
		held[i].record()
	}
}

// timed is a value in a heap by instant.
type timed[T any] struct {
	at time.Time
	v  T
}

type timedHeap[T any] []timed[T]

func (h timedHeap[T]) Len() int           { return len(h) }
func (h timedHeap[T]) Less(i, j int) bool { return h[i].at.Before(h[j].at) }
func (h timedHeap[T]) Swap(i, j int)      { h[i], h[j] = h[j], h[i] }
func (h *timedHeap[T]) Push(x any)        { *h = append(*h, x.(timed[T])) }
func (h *timedHeap[T]) Pop() any {
	old := *h
	x := old[len(old)-1]
	*h = old[:len(old)-1]
	return x
}
