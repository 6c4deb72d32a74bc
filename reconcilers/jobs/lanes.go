package jobs

import (
	"container/heap"
	"context"
	"fmt"
	"sync"
	"time"

	corev1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/runtime"
	"k8s.io/apimachinery/pkg/types"
	toolscache "k8s.io/client-go/tools/cache"
	"k8s.io/client-go/tools/events"
	"k8s.io/client-go/tools/reference"
	"k8s.io/utils/clock"
	"sigs.k8s.io/controller-runtime/pkg/builder"
	"sigs.k8s.io/controller-runtime/pkg/event"
	"sigs.k8s.io/controller-runtime/pkg/handler"
	"sigs.k8s.io/controller-runtime/pkg/source"
)

// DefaultMaxReportDelay is how long after its instant an urgent write that never came (its
// object was deleted, its reconcile failed) holds the reports back.
const DefaultMaxReportDelay = 30 * time.Second

// Lanes puts the writes that an instant is for ahead of the writes that report on them.
//
// At a boundary (09:00) many autoscalers need their HPA written at once, and a slot's
// ScheduledJobs their Jobs; each autoscaler also has a status to write, its Schedules' phases
// change, and events follow. The API server serves them all with the same CPU: when the
// reports go out with the urgent writes, every HPA is late by them. So the reconcilers tell
// Lanes when an object's urgent write is due (Expect, with the instant they requeue for) and
// when it is under way (Urgent); a report (a status write and its events) that finds urgent
// writes of an instant due or under way is deferred (Defer), and its reconciler is woken
// through its Wake source once none is left, or at the latest maxDelay after the instant of
// the oldest one still due. Between the two go the Job owners' records of their runs, which
// are written in the reconcile that started the run: after the urgent writes under way
// (WaitUnderWay), and ahead of the reports (Recording). An urgent write that has returned
// holds the reports until the manager's watch shows it (Landing, Sightings), since its
// watchers learn of it from the API server that would serve them. Writes that no instant called for (a
// manager starting, a spec that changed) hold nothing back: there is no instant to be late
// for.
//
// Only the order lives in memory, and nothing depends on it: a deferred reconcile has written
// nothing (it writes when it is woken, from what it reads then), and a manager that starts
// reconciles everything. A nil *Lanes orders nothing (every report goes out at once).
type Lanes struct {
	clock    clock.PassiveClock
	maxDelay time.Duration

	mu     sync.Mutex
	due    map[laneKey]time.Time // the instant of each object's next urgent write
	byTime dueHeap               // the same, by instant (entries may be stale: check due)
	// underWay holds the urgent writes under way that were due (their instant had passed).
	underWay map[laneKey]bool
	// recording counts the Job owners' records being written after their Jobs (Recording).
	recording int
	// landing holds the urgent writes whose sighting on the manager's watch is awaited
	// (Landing), by kind and object.
	landing  map[landKey]*landing
	workers  map[string]int                           // by controller (SetWorkers)
	waiters  map[string]map[chan struct{}]bool        // WaitUnderWay calls, by controller
	deferred map[string]map[types.NamespacedName]bool // by controller
	wake     map[string]chan event.GenericEvent       // by controller
	held     []heldEvent                              // events recorded while busy (Events)
	timer    *time.Timer
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
	if l == nil {
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
	if !l.busyLocked() || len(l.held) >= MaxHeldEvents {
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
	if !l.busyLocked() || len(l.held) >= MaxHeldEvents {
		l.mu.Unlock()
		e.record()
		return
	}
	l.held = append(l.held, e)
	l.armLocked()
	l.mu.Unlock()
}

type laneKey struct {
	controller string
	types.NamespacedName
}

// NewLanes returns Lanes that tell time with clk and hold reports back at most maxDelay
// after the instant of an urgent write that does not come.
func NewLanes(clk clock.PassiveClock, maxDelay time.Duration) *Lanes {
	return &Lanes{
		clock: clk, maxDelay: maxDelay,
		due:      map[laneKey]time.Time{},
		workers:  map[string]int{},
		waiters:  map[string]map[chan struct{}]bool{},
		deferred: map[string]map[types.NamespacedName]bool{},
		wake:     map[string]chan event.GenericEvent{},
		landing:  map[landKey]*landing{},
		underWay: map[laneKey]bool{},
	}
}

// Wake adds to b, for the controller named controller, the source through which Lanes wakes
// the reconciles it deferred. b is returned unchanged for nil Lanes.
func (l *Lanes) Wake(b *builder.Builder, controller string) *builder.Builder {
	if l == nil {
		return b
	}
	return b.WatchesRawSource(source.Channel(l.channel(controller), &handler.EnqueueRequestForObject{}))
}

// channel returns the channel on which the deferred reconciles of controller are woken.
func (l *Lanes) channel(controller string) chan event.GenericEvent {
	l.mu.Lock()
	defer l.mu.Unlock()
	if l.wake[controller] == nil {
		l.wake[controller] = make(chan event.GenericEvent, 1024)
	}
	return l.wake[controller]
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
		heap.Push(&l.byTime, dueEntry{at: at, key: k})
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
// that was due.
func (l *Lanes) Urgent(controller string, key types.NamespacedName) (done func()) {
	if l == nil {
		return func() {}
	}
	l.mu.Lock()
	k := laneKey{controller, key}
	at, expected := l.due[k]
	delete(l.due, k)
	if !expected || at.After(l.clock.Now()) {
		l.mu.Unlock()
		return func() {} // no instant called for it
	}
	l.underWay[k] = true
	l.mu.Unlock()
	var once sync.Once
	return func() {
		once.Do(func() {
			l.mu.Lock()
			delete(l.underWay, k)
			if len(l.underWay) == 0 {
				for c := range l.waiters {
					l.releaseLocked(c)
				}
			}
			l.mu.Unlock()
			l.flushIfIdle()
		})
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
	if l == nil {
		return
	}
	l.mu.Lock()
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
	t := time.NewTimer(maxWait)
	defer t.Stop()
	select {
	case <-done:
		return
	case <-t.C:
	case <-ctx.Done():
	}
	l.mu.Lock()
	delete(l.waiters[controller], done)
	l.mu.Unlock()
}

// Recording marks a Job owner's record (the status write after its Job) as under way until
// the returned function is called: the reports and events wait for it as for the urgent
// writes, but WaitUnderWay does not. For nil Lanes it does nothing.
func (l *Lanes) Recording() (done func()) {
	if l == nil {
		return func() {}
	}
	l.mu.Lock()
	l.recording++
	l.mu.Unlock()
	var once sync.Once
	return func() {
		once.Do(func() {
			l.mu.Lock()
			l.recording--
			l.mu.Unlock()
			l.flushIfIdle()
		})
	}
}

// MaxLandingWait bounds how long the reports wait for the manager's watch to show an urgent
// write that has returned (Landing): the watch shows it within milliseconds, or a few tens
// of them when the API server is busy; a sighting that never comes (the informer relisted,
// another write followed at once) holds the reports no longer than this.
const MaxLandingWait = time.Second

type landKey struct {
	kind string
	types.NamespacedName
}

// landing is an urgent write whose sighting is awaited: resourceVersion is what the write
// returned ("" while it is under way), sighted the versions seen before it returned.
type landing struct {
	resourceVersion string
	sighted         map[string]bool
	timer           *time.Timer
}

// Landing marks a write of the object key of kind as about to be sent by the urgent work
// under way of the object owner of controller (Urgent), and returns the function to call with
// the resourceVersion that the write returned ("" if it failed). Until the manager's watch of
// kind (Sightings) shows the object at that version, at most MaxLandingWait, the reports and
// events keep waiting, as for the urgent writes under way: a write that has returned has not
// reached the watchers yet (the HPA controller, anyone watching), and the API server that
// sends it to them is the one that would serve the reports. WaitUnderWay does not wait for
// it. When owner has no urgent work under way (no instant called for this write) it does
// nothing, and so for nil Lanes.
func (l *Lanes) Landing(controller string, owner types.NamespacedName, kind string, key types.NamespacedName) (returned func(resourceVersion string)) {
	if l == nil {
		return func(string) {}
	}
	k := landKey{kind, key}
	e := &landing{}
	l.mu.Lock()
	if !l.underWay[laneKey{controller, owner}] {
		l.mu.Unlock()
		return func(string) {}
	}
	if old := l.landing[k]; old != nil && old.timer != nil {
		old.timer.Stop()
	}
	l.landing[k] = e
	l.mu.Unlock()
	var once sync.Once
	return func(rv string) {
		once.Do(func() {
			l.mu.Lock()
			if l.landing[k] != e {
				l.mu.Unlock()
				return // a later write of the same object took its place
			}
			if rv == "" || e.sighted[rv] {
				delete(l.landing, k)
				l.mu.Unlock()
				l.flushIfIdle()
				return
			}
			e.resourceVersion, e.sighted = rv, nil
			e.timer = time.AfterFunc(MaxLandingWait, func() { l.landed(k, e) })
			l.mu.Unlock()
		})
	}
}

// landed ends the wait for e, if it is still the landing of k.
func (l *Lanes) landed(k landKey, e *landing) {
	l.mu.Lock()
	if l.landing[k] != e {
		l.mu.Unlock()
		return
	}
	delete(l.landing, k)
	if e.timer != nil {
		e.timer.Stop()
	}
	l.mu.Unlock()
	l.flushIfIdle()
}

// Sightings returns the informer event handler through which the manager's watch of kind
// tells Lanes what it has seen (Landing). It only looks the object up among the awaited
// writes, so it costs one map lookup per event.
func (l *Lanes) Sightings(kind string) toolscache.ResourceEventHandler {
	seen := func(obj any) {
		o, ok := obj.(metav1.Object)
		if !ok || l == nil {
			return
		}
		k := landKey{kind, types.NamespacedName{Namespace: o.GetNamespace(), Name: o.GetName()}}
		rv := o.GetResourceVersion()
		l.mu.Lock()
		e := l.landing[k]
		switch {
		case e == nil:
			l.mu.Unlock()
		case e.resourceVersion == "": // the write has not returned: remember what was seen
			if e.sighted == nil {
				e.sighted = map[string]bool{}
			}
			e.sighted[rv] = true
			l.mu.Unlock()
		case e.resourceVersion == rv:
			l.mu.Unlock()
			l.landed(k, e)
		default:
			l.mu.Unlock()
		}
	}
	return toolscache.ResourceEventHandlerFuncs{
		AddFunc:    seen,
		UpdateFunc: func(_, obj any) { seen(obj) },
	}
}

// releaseLocked lets go every WaitUnderWay call of controller.
func (l *Lanes) releaseLocked(controller string) {
	for done := range l.waiters[controller] {
		close(done)
	}
	delete(l.waiters, controller)
}

// Defer reports whether the report of the object key of controller must wait (urgent writes
// are due or under way); if so, Lanes wakes that reconcile when they are done, and the caller
// returns without writing. When it returns false the caller writes now.
func (l *Lanes) Defer(controller string, key types.NamespacedName) bool {
	if l == nil {
		return false
	}
	l.mu.Lock()
	defer l.mu.Unlock()
	if !l.busyLocked() {
		return false
	}
	if l.deferred[controller] == nil {
		l.deferred[controller] = map[types.NamespacedName]bool{}
	}
	l.deferred[controller][key] = true
	l.armLocked()
	return true
}

// busyLocked reports whether an urgent write is under way, or returned but not seen on the
// manager's watch yet (Landing), or due (its instant has passed, by less than maxDelay), or a
// Job owner's record after one is being written (Recording).
func (l *Lanes) busyLocked() bool {
	if len(l.underWay) > 0 || l.recording > 0 || len(l.landing) > 0 {
		return true
	}
	now := l.clock.Now()
	for l.byTime.Len() > 0 {
		top := l.byTime[0]
		if at, ok := l.due[top.key]; !ok || !at.Equal(top.at) {
			heap.Pop(&l.byTime) // met, forgotten or expected again since
			continue
		}
		if !top.at.After(now.Add(-l.maxDelay)) {
			heap.Pop(&l.byTime) // it never came: stop holding the reports for it
			delete(l.due, top.key)
			continue
		}
		return !top.at.After(now)
	}
	return false
}

// armLocked makes sure the deferred reports are woken at the latest when the oldest urgent
// write still due expires.
func (l *Lanes) armLocked() {
	if l.timer != nil || l.byTime.Len() == 0 {
		return
	}
	wait := l.byTime[0].at.Add(l.maxDelay).Sub(l.clock.Now())
	l.timer = time.AfterFunc(max(wait, time.Millisecond), func() {
		l.mu.Lock()
		l.timer = nil
		l.mu.Unlock()
		l.flushIfIdle()
	})
}

// flushIfIdle wakes every deferred reconcile, and records the held events, when no urgent
// write is due or under way.
func (l *Lanes) flushIfIdle() {
	l.mu.Lock()
	if len(l.deferred) == 0 && len(l.held) == 0 {
		l.mu.Unlock()
		return
	}
	if l.busyLocked() {
		l.armLocked()
		l.mu.Unlock()
		return
	}
	held := l.held
	l.held = nil
	woken := l.deferred
	l.deferred = map[string]map[types.NamespacedName]bool{}
	chans := make(map[string]chan event.GenericEvent, len(woken))
	for c := range woken {
		chans[c] = l.wake[c]
	}
	l.mu.Unlock()
	for i := range held {
		held[i].record() // the broadcaster queues it: this does not wait for the API server
	}
	go func() {
		for c, keys := range woken {
			ch := chans[c]
			if ch == nil {
				continue // the controller has no Wake source (tests without one)
			}
			for key := range keys {
				ch <- event.GenericEvent{Object: &metav1.PartialObjectMetadata{ObjectMeta: metav1.ObjectMeta{Namespace: key.Namespace, Name: key.Name}}}
			}
		}
	}()
}

// dueEntry is an expected urgent write, in the heap by instant.
type dueEntry struct {
	at  time.Time
	key laneKey
}

type dueHeap []dueEntry

func (h dueHeap) Len() int           { return len(h) }
func (h dueHeap) Less(i, j int) bool { return h[i].at.Before(h[j].at) }
func (h dueHeap) Swap(i, j int)      { h[i], h[j] = h[j], h[i] }
func (h *dueHeap) Push(x any)        { *h = append(*h, x.(dueEntry)) }
func (h *dueHeap) Pop() any {
	old := *h
	x := old[len(old)-1]
	*h = old[:len(old)-1]
	return x
}
