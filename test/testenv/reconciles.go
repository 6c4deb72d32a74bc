package testenv

import (
	"sync"
	"testing"
	"time"

	"k8s.io/apimachinery/pkg/types"
	"k8s.io/client-go/util/workqueue"
	"sigs.k8s.io/controller-runtime/pkg/controller/priorityqueue"
	"sigs.k8s.io/controller-runtime/pkg/reconcile"
)

// Reconciles counts, per controller and object, the reconciles of the controllers whose work
// queues it makes (controller.Options.NewQueue: controller-runtime's own priority queue,
// counted), for the fence of a "nothing happened" assertion: a change that must bring one
// reconcile, a wait until that reconcile is over, then the assertion. A fixed sleep instead
// passes whenever the manager is slower than the sleep.
type Reconciles struct {
	mu     sync.Mutex
	done   map[string]map[types.NamespacedName]int
	queues map[string][]*countedQueue
	// wakes are the reconciles asked for and not yet handed to a worker, by when (real time):
	// the queue keeps one entry per object, due at the earliest it was asked for.
	wakes map[string]map[types.NamespacedName]time.Time
}

// NewReconciles returns a Reconciles that has counted nothing.
func NewReconciles() *Reconciles {
	return &Reconciles{done: map[string]map[types.NamespacedName]int{}, queues: map[string][]*countedQueue{},
		wakes: map[string]map[types.NamespacedName]time.Time{}}
}

// NewQueue is controller.Options.NewQueue: controller-runtime's default queue (its priority
// queue, with the controller's rate limiter), whose reconciles are counted.
func (r *Reconciles) NewQueue(controller string, rl workqueue.TypedRateLimiter[reconcile.Request]) workqueue.TypedRateLimitingInterface[reconcile.Request] {
	q := &countedQueue{
		PriorityQueue: priorityqueue.New(controller, func(o *priorityqueue.Opts[reconcile.Request]) { o.RateLimiter = rl }),
		r:             r, controller: controller,
	}
	r.mu.Lock()
	r.queues[controller] = append(r.queues[controller], q)
	r.mu.Unlock()
	return q
}

// Done returns how many reconciles of key by controller are over.
func (r *Reconciles) Done(controller string, key types.NamespacedName) int {
	r.mu.Lock()
	defer r.mu.Unlock()
	return r.done[controller][key]
}

// idle reports whether no queue of controller has an item ready or under way.
func (r *Reconciles) idle(controller string) bool {
	r.mu.Lock()
	qs := append([]*countedQueue(nil), r.queues[controller]...)
	r.mu.Unlock()
	for _, q := range qs {
		if q.Len() > 0 {
			return false
		}
		q.mu.Lock()
		busy := q.busy
		q.mu.Unlock()
		if busy > 0 {
			return false
		}
	}
	return true
}

// Fence makes change, which must bring a reconcile of key by controller, and waits (up to
// 30 s) until a reconcile of key is over after change: whatever that reconcile does, and
// whatever the changes that the same watch delivered before change brought, has happened then.
// It first waits (up to 30 s) until controller is idle (no item ready or under way, twice in a
// row), so that a reconcile under way before change is not taken for the one it brings.
func (r *Reconciles) Fence(t testing.TB, controller string, key types.NamespacedName, change func()) {
	t.Helper()
	r.WaitIdle(t, controller)
	before := r.Done(controller, key)
	change()
	deadline := time.Now().Add(30 * time.Second)
	for r.Done(controller, key) <= before {
		if time.Now().After(deadline) {
			t.Fatalf("no reconcile of %s by %s within 30 s of the fence's change", key, controller)
		}
		time.Sleep(10 * time.Millisecond)
	}
}

// WaitIdle waits (up to 30 s) until controller has no item ready or under way, twice in a row
// 10 ms apart: every reconcile that the changes it was told of bring is over. (A reconcile
// asked for later, by RequeueAfter, is not waited for.)
func (r *Reconciles) WaitIdle(t testing.TB, controller string) {
	t.Helper()
	deadline := time.Now().Add(30 * time.Second)
	for quiet := 0; quiet < 2; time.Sleep(10 * time.Millisecond) {
		if time.Now().After(deadline) {
			t.Fatalf("controller %s is not idle after 30 s", controller)
		}
		quiet++
		if !r.idle(controller) {
			quiet = 0
		}
	}
}

// NextWake returns the earliest instant (real time) at which controller has a reconcile to
// run, asked for by a RequeueAfter, a failure's backoff or an event, and false when it has
// none: with WaitIdle, that nothing runs until an instant is a fact about the queue, not a
// sleep's guess.
func (r *Reconciles) NextWake(controller string) (time.Time, types.NamespacedName, bool) {
	r.mu.Lock()
	defer r.mu.Unlock()
	var next time.Time
	var key types.NamespacedName
	for k, at := range r.wakes[controller] {
		if next.IsZero() || at.Before(next) {
			next, key = at, k
		}
	}
	return next, key, !next.IsZero()
}

// Reconciled returns how many reconciles of controller are over, of every object.
func (r *Reconciles) Reconciled(controller string) int {
	r.mu.Lock()
	defer r.mu.Unlock()
	n := 0
	for _, c := range r.done[controller] {
		n += c
	}
	return n
}

// asked records that item is to be reconciled at the latest by at.
func (r *Reconciles) asked(controller string, item reconcile.Request, at time.Time) {
	r.mu.Lock()
	defer r.mu.Unlock()
	if r.wakes[controller] == nil {
		r.wakes[controller] = map[types.NamespacedName]time.Time{}
	}
	if cur, ok := r.wakes[controller][item.NamespacedName]; !ok || at.Before(cur) {
		r.wakes[controller][item.NamespacedName] = at
	}
}

// handed records that item was handed to a worker: what was asked of it is under way.
func (r *Reconciles) handed(controller string, item reconcile.Request) {
	r.mu.Lock()
	defer r.mu.Unlock()
	delete(r.wakes[controller], item.NamespacedName)
}

// countedQueue is a priority queue that counts, per object, the items handed to a worker and
// done: controller-runtime calls Done once the reconcile and its requeue are over.
type countedQueue struct {
	priorityqueue.PriorityQueue[reconcile.Request]
	r          *Reconciles
	controller string

	mu   sync.Mutex
	busy int
}

func (q *countedQueue) AddWithOpts(o priorityqueue.AddOpts, items ...reconcile.Request) {
	at := time.Now()
	if o.After > 0 && !o.RateLimited {
		at = at.Add(o.After)
	}
	for _, item := range items {
		q.r.asked(q.controller, item, at)
	}
	q.PriorityQueue.AddWithOpts(o, items...)
}

func (q *countedQueue) Add(item reconcile.Request) {
	q.r.asked(q.controller, item, time.Now())
	q.PriorityQueue.Add(item)
}

func (q *countedQueue) AddAfter(item reconcile.Request, d time.Duration) {
	q.r.asked(q.controller, item, time.Now().Add(d))
	q.PriorityQueue.AddAfter(item, d)
}

func (q *countedQueue) AddRateLimited(item reconcile.Request) {
	q.r.asked(q.controller, item, time.Now())
	q.PriorityQueue.AddRateLimited(item)
}

func (q *countedQueue) GetWithPriority() (reconcile.Request, int, bool) {
	item, priority, shutdown := q.PriorityQueue.GetWithPriority()
	if !shutdown {
		q.r.handed(q.controller, item)
		q.mu.Lock()
		q.busy++
		q.mu.Unlock()
	}
	return item, priority, shutdown
}

func (q *countedQueue) Get() (reconcile.Request, bool) {
	item, shutdown := q.PriorityQueue.Get()
	if !shutdown {
		q.r.handed(q.controller, item)
		q.mu.Lock()
		q.busy++
		q.mu.Unlock()
	}
	return item, shutdown
}

func (q *countedQueue) Done(item reconcile.Request) {
	q.PriorityQueue.Done(item)
	q.r.mu.Lock()
	if q.r.done[q.controller] == nil {
		q.r.done[q.controller] = map[types.NamespacedName]int{}
	}
	q.r.done[q.controller][item.NamespacedName]++
	q.r.mu.Unlock()
	q.mu.Lock()
	q.busy--
	q.mu.Unlock()
}
