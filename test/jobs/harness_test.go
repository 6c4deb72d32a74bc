package jobs_test

import (
	"context"
	"errors"
	"fmt"
	"io"
	"maps"
	"math/rand/v2"
	"os"
	"strconv"
	"sync"
	"sync/atomic"
	"testing"
	"time"

	batchv1 "k8s.io/api/batch/v1"
	corev1 "k8s.io/api/core/v1"
	eventsv1 "k8s.io/api/events/v1"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/runtime"
	"k8s.io/apimachinery/pkg/types"
	"k8s.io/apimachinery/pkg/util/wait"
	"k8s.io/client-go/tools/events"
	"k8s.io/client-go/util/workqueue"
	"k8s.io/utils/clock"
	clocktesting "k8s.io/utils/clock/testing"
	"k8s.io/utils/ptr"
	ctrl "sigs.k8s.io/controller-runtime"
	"sigs.k8s.io/controller-runtime/pkg/cache"
	"sigs.k8s.io/controller-runtime/pkg/client"
	"sigs.k8s.io/controller-runtime/pkg/controller"
	"sigs.k8s.io/controller-runtime/pkg/log/zap"
	metricsserver "sigs.k8s.io/controller-runtime/pkg/metrics/server"
	"sigs.k8s.io/controller-runtime/pkg/reconcile"

	batchv1alpha1 "github.com/almanac-dev/almanac/api/batch/v1alpha1"
	"github.com/almanac-dev/almanac/api/scheme"
	"github.com/almanac-dev/almanac/reconcilers/base"
	"github.com/almanac-dev/almanac/reconcilers/eventjob"
	"github.com/almanac-dev/almanac/reconcilers/scheduledjob"
	"github.com/almanac-dev/almanac/test/testenv"
)

func init() {
	ctrl.SetLogger(zap.New(zap.WriteTo(logSink()))) // a manager per test: keep the output readable
}

type discard struct{}

func (discard) Write(p []byte) (int, error) { return len(p), nil }

// testClock is a fake clock that runs at real speed, so that work-queue backoffs and retries
// happen, and that tests jump to the instants they check. It only jumps while the
// reconcilers' queues are idle: a reconcile computes RequeueAfter from the time it read, and a
// jump between that read and the queue's AddAfter would move the wake-up by the jump (a race
// that a real clock does not have).
type testClock struct {
	*clocktesting.FakeClock
	stop chan struct{}
	once sync.Once

	mu     sync.Mutex
	queues []*trackingQueue
	// marks pair a real instant with the clock's reading then: at the start and after each
	// jump (between them the clock runs at real speed).
	marks []clockMark
	// done counts, per controller and object, the reconciles that are over (fence).
	done map[string]map[types.NamespacedName]int
	// frozen stops the clock's running at real speed (freeze): it then moves only by jumps.
	frozen atomic.Bool
	// recorded counts, per object and reason, the events the reconcilers recorded, as they
	// recorded them (the API server has them later, each sent by a goroutine of its own).
	recorded map[types.NamespacedName]map[string]int
}

// recordedEvents returns how many events of each reason the reconcilers recorded on the
// object ns/name: once a fence's reconcile is over, every event it and the reconciles before
// it recorded is counted (eventReasons reads the API server, which has them some time later).
func (c *testClock) recordedEvents(ns, name string) map[string]int {
	c.mu.Lock()
	defer c.mu.Unlock()
	return maps.Clone(c.recorded[types.NamespacedName{Namespace: ns, Name: name}])
}

// countingRecorder counts the events recorded through it on its clock, then records them.
type countingRecorder struct {
	events.EventRecorder
	clk *testClock
}

func (r countingRecorder) Eventf(regarding, related runtime.Object, eventtype, reason, action, note string, args ...any) {
	if o, ok := regarding.(metav1.Object); ok {
		key := types.NamespacedName{Namespace: o.GetNamespace(), Name: o.GetName()}
		r.clk.mu.Lock()
		if r.clk.recorded == nil {
			r.clk.recorded = map[types.NamespacedName]map[string]int{}
		}
		if r.clk.recorded[key] == nil {
			r.clk.recorded[key] = map[string]int{}
		}
		r.clk.recorded[key][reason]++
		r.clk.mu.Unlock()
	}
	r.EventRecorder.Eventf(regarding, related, eventtype, reason, action, note, args...)
}

// freeze stops the clock from running at real speed until the test ends or thaw: a fence
// before an instant then takes as long as it takes, and the instant does not come meanwhile.
func (c *testClock) freeze(t testing.TB) {
	c.frozen.Store(true)
	t.Cleanup(c.thaw)
}

// thaw lets the clock run at real speed again.
func (c *testClock) thaw() { c.frozen.Store(false) }

type clockMark struct{ real, fake time.Time }

// fromServer returns the clock's reading at the real instant t, as the API server records
// times (truncated to the second): what it would have recorded had its clock been the
// manager's. The write happened in the second after t, so the clock is read as it ran
// from the last jump before the end of that second.
func (c *testClock) fromServer(t time.Time) time.Time {
	c.mu.Lock()
	defer c.mu.Unlock()
	m := c.marks[0]
	for _, x := range c.marks {
		if x.real.Before(t.Add(time.Second)) {
			m = x
		}
	}
	return m.fake.Add(t.Sub(m.real))
}

func newTestClock(t testing.TB, start time.Time) *testClock {
	c := &testClock{FakeClock: clocktesting.NewFakeClock(start), stop: make(chan struct{}),
		marks: []clockMark{{real: time.Now(), fake: start}}}
	go func() {
		const tick = 5 * time.Millisecond
		ticker := time.NewTicker(tick)
		defer ticker.Stop()
		for {
			select {
			case <-c.stop:
				return
			case <-ticker.C:
				if !c.frozen.Load() {
					c.Step(tick)
				}
			}
		}
	}()
	t.Cleanup(func() { c.once.Do(func() { close(c.stop) }) })
	return c
}

// JumpTo moves the clock forward to t (never back), once the reconcilers are idle.
func (c *testClock) JumpTo(t time.Time) {
	c.waitIdle()
	c.stepTo(t)
}

// stepTo moves the clock forward to t (never back) and wakes every queue's waiting loop.
//
// The wake-up closes the last race between the fake clock and client-go's delaying queue: its
// waiting loop reads the clock, then arms a timer for the next item with the difference. If the
// clock jumps between the two, the timer is armed a jump too late (the loop would only notice
// at its next 10 s heartbeat). Adding an item makes the loop read the clock again; the item is
// a request for an object that does not exist, due in a thousand hours, so it never reaches a
// reconciler (and re-adding it only keeps the one entry).
func (c *testClock) stepTo(t time.Time) {
	if d := t.Sub(c.Now()); d > 0 {
		c.Step(d)
	}
	c.mu.Lock()
	defer c.mu.Unlock()
	c.marks = append(c.marks, clockMark{real: time.Now(), fake: c.Now()})
	for _, q := range c.queues {
		if !q.ShuttingDown() {
			q.TypedRateLimitingInterface.AddAfter(nudge, 1000*time.Hour)
		}
	}
}

// nudge is the request stepTo uses to wake the queues' waiting loops.
var nudge = reconcile.Request{NamespacedName: types.NamespacedName{Namespace: "almanac-test", Name: "clock-nudge"}}

// waitIdle waits (up to 15 s) until no queue has an item ready or in a reconcile, twice in a
// row 10 ms apart.
func (c *testClock) waitIdle() {
	deadline := time.Now().Add(15 * time.Second)
	for quiet := 0; quiet < 2 && time.Now().Before(deadline); time.Sleep(10 * time.Millisecond) {
		quiet++
		c.mu.Lock()
		for _, q := range c.queues {
			if !q.ShuttingDown() && (q.Len() > 0 || q.busy.Load() > 0) {
				quiet = 0
			}
		}
		c.mu.Unlock()
	}
}

// newQueue returns a controller work queue on this clock that reports when it is busy.
func (c *testClock) newQueue(name string, rl workqueue.TypedRateLimiter[reconcile.Request]) workqueue.TypedRateLimitingInterface[reconcile.Request] {
	q := &trackingQueue{TypedRateLimitingInterface: workqueue.NewTypedRateLimitingQueueWithConfig(rl,
		workqueue.TypedRateLimitingQueueConfig[reconcile.Request]{Name: name, Clock: c}),
		clk: c, started: map[reconcile.Request]time.Time{}, controller: name, owner: c}
	c.mu.Lock()
	c.queues = append(c.queues, q)
	c.mu.Unlock()
	return q
}

// trackingQueue counts the items handed to a worker and not yet done (controller-runtime
// calls Done after it has requeued the item, so a busy count of 0 means no RequeueAfter is
// pending), and anchors RequeueAfter to the time the reconcile started: a reconcile reads the
// clock right after Get, and if a test jumps the clock before the reconcile returns, the
// wake-up must still be at the instant the reconcile asked for, not a jump later.
type trackingQueue struct {
	workqueue.TypedRateLimitingInterface[reconcile.Request]
	clk  clock.PassiveClock
	busy atomic.Int64
	// controller names the queue's controller; owner counts its reconciles (reconciled).
	controller string
	owner      *testClock

	mu      sync.Mutex
	started map[reconcile.Request]time.Time
}

func (q *trackingQueue) Get() (reconcile.Request, bool) {
	item, shutdown := q.TypedRateLimitingInterface.Get()
	if !shutdown {
		q.busy.Add(1)
		q.mu.Lock()
		q.started[item] = q.clk.Now()
		q.mu.Unlock()
	}
	return item, shutdown
}

func (q *trackingQueue) AddAfter(item reconcile.Request, d time.Duration) {
	q.mu.Lock()
	if start, ok := q.started[item]; ok {
		d = start.Add(d).Sub(q.clk.Now())
	}
	q.mu.Unlock()
	q.TypedRateLimitingInterface.AddAfter(item, d)
}

func (q *trackingQueue) Done(item reconcile.Request) {
	q.mu.Lock()
	delete(q.started, item)
	q.mu.Unlock()
	q.TypedRateLimitingInterface.Done(item)
	q.owner.mu.Lock()
	if q.owner.done == nil {
		q.owner.done = map[string]map[types.NamespacedName]int{}
	}
	if q.owner.done[q.controller] == nil {
		q.owner.done[q.controller] = map[types.NamespacedName]int{}
	}
	q.owner.done[q.controller][item.NamespacedName]++
	q.owner.mu.Unlock()
	q.busy.Add(-1)
}

// reconciled returns how many reconciles of key by controller ("scheduledjob", "eventjob") are
// over, in every manager on this clock.
func (c *testClock) reconciled(controller string, key types.NamespacedName) int {
	c.mu.Lock()
	defer c.mu.Unlock()
	return c.done[controller][key]
}

// fence is the end of a "nothing happened" assertion: it waits until the reconcilers are idle,
// makes change, which must bring a reconcile of key by controller, and waits (up to 60 s)
// until one is over, and the reconcilers are idle again. Whatever that reconcile does, and
// whatever the changes that its watch delivered before change brought, has happened then; a
// fixed sleep instead passes whenever the manager is slower than it.
func (c *testClock) fence(t testing.TB, controller string, key types.NamespacedName, change func()) {
	t.Helper()
	c.waitIdle()
	before := c.reconciled(controller, key)
	change()
	eventually(t, "the fence's reconcile of "+key.String(), func() (bool, error) {
		return c.reconciled(controller, key) > before, nil
	})
	c.waitIdle()
}

// touch changes obj's spec without changing what it does (a label of its Job template), for a
// fence: a change of the spec brings a reconcile.
func touch(t testing.TB, obj client.Object) {
	t.Helper()
	ctx := context.Background()
	err := retryOnConflict(func() error {
		if err := env.Client.Get(ctx, client.ObjectKeyFromObject(obj), obj); err != nil {
			return err
		}
		var tmpl *batchv1.JobTemplateSpec
		switch o := obj.(type) {
		case *batchv1alpha1.ScheduledJob:
			tmpl = &o.Spec.JobTemplate
		case *batchv1alpha1.EventJob:
			tmpl = &o.Spec.JobTemplate
		default:
			t.Fatalf("touch: %T has no Job template", obj)
		}
		if tmpl.Labels == nil {
			tmpl.Labels = map[string]string{}
		}
		n, _ := strconv.Atoi(tmpl.Labels["almanac.test/fence"])
		tmpl.Labels["almanac.test/fence"] = strconv.Itoa(n + 1)
		return env.Client.Update(ctx, obj)
	})
	if err != nil {
		t.Fatalf("touch %s: %v", client.ObjectKeyFromObject(obj), err)
	}
}

// fenceSpec is fence with a change of obj's spec (touch).
func (c *testClock) fenceSpec(t testing.TB, controller string, obj client.Object) {
	t.Helper()
	c.fence(t, controller, client.ObjectKeyFromObject(obj), func() { touch(t, obj) })
}

// faults injects failures into the reconcilers' status writes.
type faults struct {
	mu sync.Mutex
	// statusFailRate is the probability that a status patch fails (after the reconcile
	// created its Jobs).
	statusFailRate float64
	rnd            *rand.Rand
	injected       int
	// statusPatches and jobCreates count the reconcilers' attempts (refused ones too).
	statusPatches, jobCreates atomic.Int64
}

func (f *faults) failStatus() bool {
	if f == nil {
		return false
	}
	f.mu.Lock()
	defer f.mu.Unlock()
	if f.rnd.Float64() < f.statusFailRate {
		f.injected++
		return true
	}
	return false
}

type flakyClient struct {
	client.Client
	f *faults
}

func (c flakyClient) Status() client.SubResourceWriter { return flakyStatus{c.Client.Status(), c.f} }

func (c flakyClient) Create(ctx context.Context, obj client.Object, opts ...client.CreateOption) error {
	if _, ok := obj.(*batchv1.Job); ok {
		c.f.jobCreates.Add(1)
	}
	return c.Client.Create(ctx, obj, opts...)
}

var statusCalls atomic.Int64

type flakyStatus struct {
	client.SubResourceWriter
	f *faults
}

func (s flakyStatus) Patch(ctx context.Context, obj client.Object, patch client.Patch, opts ...client.SubResourcePatchOption) error {
	statusCalls.Add(1)
	s.f.statusPatches.Add(1)
	if s.f.failStatus() {
		return errors.New("injected: status write failed")
	}
	return s.SubResourceWriter.Patch(ctx, obj, patch, opts...)
}

// manager is a running almanac manager with the two Job reconcilers, in one namespace.
type manager struct {
	t      testing.TB
	cancel context.CancelFunc
	done   chan error
	// cache is the manager's cache, which its reconcilers read.
	cache client.Reader
}

// waitCached waits until the manager's cache holds obj at its resourceVersion (or a later
// one): a reconcile from then on reads it.
func (m *manager) waitCached(t testing.TB, obj client.Object) {
	t.Helper()
	want, err := strconv.ParseInt(obj.GetResourceVersion(), 10, 64)
	if err != nil {
		t.Fatalf("resourceVersion of %s: %v", obj.GetName(), err)
	}
	cached := obj.DeepCopyObject().(client.Object)
	eventually(t, "the manager's cache holds "+obj.GetName(), func() (bool, error) {
		if err := m.cache.Get(context.Background(), client.ObjectKeyFromObject(obj), cached); err != nil {
			return false, client.IgnoreNotFound(err)
		}
		got, err := strconv.ParseInt(cached.GetResourceVersion(), 10, 64)
		return err == nil && got >= want, nil
	})
}

// startManager starts a manager whose reconcilers and work queues run on clk.
func startManager(t testing.TB, ns string, clk *testClock, f *faults) *manager {
	t.Helper()
	return startManagerWith(t, ns, clk, f, nil)
}

// createHook calls onCreate after each object that the reconcilers created (the API server
// has accepted it), so that benchmarks can time the creation of a Job.
type createHook struct {
	client.Client
	onCreate func(client.Object)
}

func (c createHook) Create(ctx context.Context, obj client.Object, opts ...client.CreateOption) error {
	err := c.Client.Create(ctx, obj, opts...)
	if err == nil {
		c.onCreate(obj)
	}
	return err
}

// serverTimes is the manager's reader around the cache with the times of managedFields
// (the API server's clock, which is real) moved to the test's clock, as if the API server
// kept the manager's time: the ScheduledJob reconciler reads the time of a resume there.
type serverTimes struct {
	client.Reader
	clk *testClock
}

func (r serverTimes) Get(ctx context.Context, key client.ObjectKey, obj client.Object, opts ...client.GetOption) error {
	if err := r.Reader.Get(ctx, key, obj, opts...); err != nil {
		return err
	}
	fields := obj.GetManagedFields()
	for i := range fields {
		if t := fields[i].Time; t != nil {
			fields[i].Time = &metav1.Time{Time: r.clk.fromServer(t.Time).Truncate(time.Second)}
		}
	}
	return nil
}

// cacheOptions is what the manager binary's cache keeps (and no more), for ns only.
func cacheOptions(ns string) cache.Options {
	opts := testenv.CacheOptions()
	opts.DefaultNamespaces = map[string]cache.Config{ns: {}}
	return opts
}

// startManagerWith is startManager that also calls onCreate (when not nil) for each object the
// reconcilers create, with the extra options of both reconcilers.
func startManagerWith(t testing.TB, ns string, clk *testClock, f *faults, onCreate func(client.Object), extra ...base.Option) *manager {
	t.Helper()
	mgr, err := ctrl.NewManager(env.Config, ctrl.Options{
		Scheme:                 scheme.Scheme,
		Metrics:                metricsserver.Options{BindAddress: "0"},
		HealthProbeBindAddress: "0",
		Cache:                  cacheOptions(ns),
	})
	if err != nil {
		t.Fatal(err)
	}
	if err := testenv.RegisterIndexes(mgr); err != nil {
		t.Fatal(err)
	}
	opts := controller.Options{
		SkipNameValidation: ptr.To(true),
		NewQueue:           clk.newQueue,
	}
	with := []base.Option{
		base.WithControllerOptions(opts),
		base.WithAPIReader(func(r client.Reader) client.Reader { return serverTimes{r, clk} }),
		base.WithRecorder(func(r events.EventRecorder) events.EventRecorder { return countingRecorder{r, clk} }),
		base.WithLanes(base.NewLanes(clk, base.DefaultMaxReportDelay)), // as the manager binary shares one
	}
	if f != nil {
		with = append(with, base.WithClient(func(c client.Client) client.Client { return flakyClient{c, f} }))
	}
	if onCreate != nil {
		with = append(with, base.WithClient(func(c client.Client) client.Client { return createHook{c, onCreate} }))
	}
	with = append(with, extra...)
	sj := scheduledjob.New(mgr, clk, with...)
	ej := eventjob.New(mgr, clk, with...)
	if err := sj.SetupWithManager(mgr); err != nil {
		t.Fatal(err)
	}
	if err := ej.SetupWithManager(mgr); err != nil {
		t.Fatal(err)
	}
	ctx, cancel := context.WithCancel(context.Background())
	m := &manager{t: t, cancel: cancel, done: make(chan error, 1), cache: mgr.GetCache()}
	go func() { m.done <- mgr.Start(ctx) }()
	t.Cleanup(m.Stop)
	return m
}

// Stop stops the manager and waits until it has (idempotent).
func (m *manager) Stop() {
	if m.cancel == nil {
		return
	}
	m.cancel()
	m.cancel = nil
	if err := <-m.done; err != nil {
		m.t.Errorf("the manager stopped with an error: %v", err)
	}
}

// namespace creates a namespace for one test.
func namespace(t testing.TB) string {
	t.Helper()
	ns := &corev1.Namespace{ObjectMeta: metav1.ObjectMeta{GenerateName: "jobs-"}}
	if err := env.Client.Create(context.Background(), ns); err != nil {
		t.Fatal(err)
	}
	return ns.Name
}

// jobTemplate is a minimal valid Job template.
func jobTemplate() batchv1.JobTemplateSpec {
	return batchv1.JobTemplateSpec{Spec: batchv1.JobSpec{Template: corev1.PodTemplateSpec{Spec: corev1.PodSpec{
		RestartPolicy: corev1.RestartPolicyNever,
		Containers:    []corev1.Container{{Name: "main", Image: "busybox", Command: []string{"true"}}},
	}}}}
}

// finishJob writes a Job's status the way the Job controller does when its Pods are done:
// SuccessCriteriaMet (or FailureTarget) first, then Complete (or Failed), with the counts
// and times that the API server's validation requires.
func finishJob(t testing.TB, ns, name string, cond batchv1.JobConditionType, at time.Time) *batchv1.Job {
	t.Helper()
	ctx := context.Background()
	j := &batchv1.Job{}
	err := retryOnConflict(func() error {
		if err := env.Client.Get(ctx, client.ObjectKey{Namespace: ns, Name: name}, j); err != nil {
			return err
		}
		now := metav1.NewTime(at)
		j.Status.StartTime = &now
		j.Status.Ready = ptr.To[int32](0)
		j.Status.Active = 0
		switch cond {
		case batchv1.JobComplete:
			j.Status.Succeeded = 1
			j.Status.CompletionTime = &now
			j.Status.Conditions = []batchv1.JobCondition{
				{Type: batchv1.JobSuccessCriteriaMet, Status: corev1.ConditionTrue, LastTransitionTime: now, LastProbeTime: now},
				{Type: batchv1.JobComplete, Status: corev1.ConditionTrue, LastTransitionTime: now, LastProbeTime: now},
			}
		case batchv1.JobFailed:
			j.Status.Failed = 1
			j.Status.Conditions = []batchv1.JobCondition{
				{Type: batchv1.JobFailureTarget, Status: corev1.ConditionTrue, Reason: "BackoffLimitExceeded", LastTransitionTime: now, LastProbeTime: now},
				{Type: batchv1.JobFailed, Status: corev1.ConditionTrue, Reason: "BackoffLimitExceeded", LastTransitionTime: now, LastProbeTime: now},
			}
		}
		return env.Client.Status().Update(ctx, j)
	})
	if err != nil {
		t.Fatalf("failed to finish Job %s/%s: %v", ns, name, err)
	}
	return j
}

func retryOnConflict(f func() error) error {
	for {
		if err := f(); !apierrors.IsConflict(err) {
			return err
		}
	}
}

// eventually polls cond every 10 ms for up to 60 s: the API server shares two cores with
// other test packages in CI, and a generous timeout costs nothing when the condition holds.
func eventually(t testing.TB, what string, cond func() (bool, error)) {
	t.Helper()
	err := wait.PollUntilContextTimeout(context.Background(), 10*time.Millisecond, 60*time.Second, true,
		func(context.Context) (bool, error) { return cond() })
	if err != nil {
		t.Fatalf("%s: %v", what, err)
	}
}

// jobsIn lists the Jobs in ns that match the labels.
func jobsIn(t testing.TB, ns string, labels client.MatchingLabels) []batchv1.Job {
	t.Helper()
	list := &batchv1.JobList{}
	if err := env.Client.List(context.Background(), list, client.InNamespace(ns), labels); err != nil {
		t.Fatal(err)
	}
	return list.Items
}

func getSJ(t testing.TB, ns, name string) *batchv1alpha1.ScheduledJob {
	t.Helper()
	sj := &batchv1alpha1.ScheduledJob{}
	if err := env.Client.Get(context.Background(), client.ObjectKey{Namespace: ns, Name: name}, sj); err != nil {
		t.Fatal(err)
	}
	return sj
}

func getEJ(t testing.TB, ns, name string) *batchv1alpha1.EventJob {
	t.Helper()
	ej := &batchv1alpha1.EventJob{}
	if err := env.Client.Get(context.Background(), client.ObjectKey{Namespace: ns, Name: name}, ej); err != nil {
		t.Fatal(err)
	}
	return ej
}

// jobRecorder counts, from a watch, every time a Job name is created in a namespace: a second
// creation of one name (after a prune or delete) is a duplicate run even though the two Jobs
// never coexist.
type jobRecorder struct {
	mu      sync.Mutex
	created map[string]int
	order   []string
	stop    func()
}

func recordJobs(t testing.TB, ns string) *jobRecorder {
	t.Helper()
	wc, err := client.NewWithWatch(env.Config, client.Options{Scheme: scheme.Scheme})
	if err != nil {
		t.Fatal(err)
	}
	w, err := wc.Watch(context.Background(), &batchv1.JobList{}, client.InNamespace(ns))
	if err != nil {
		t.Fatal(err)
	}
	r := &jobRecorder{created: map[string]int{}, stop: w.Stop}
	go func() {
		for ev := range w.ResultChan() {
			if j, ok := ev.Object.(*batchv1.Job); ok && ev.Type == "ADDED" {
				r.mu.Lock()
				r.created[j.Name]++
				r.order = append(r.order, j.Name)
				r.mu.Unlock()
			}
		}
	}()
	t.Cleanup(w.Stop)
	return r
}

func (r *jobRecorder) snapshot() (map[string]int, []string) {
	r.mu.Lock()
	defer r.mu.Unlock()
	m := make(map[string]int, len(r.created))
	for k, v := range r.created {
		m[k] = v
	}
	return m, append([]string(nil), r.order...)
}

func (r *jobRecorder) duplicates() []string {
	m, _ := r.snapshot()
	var out []string
	for name, n := range m {
		if n > 1 {
			out = append(out, fmt.Sprintf("%s×%d", name, n))
		}
	}
	return out
}

// eventReasons returns the reasons of the events.k8s.io Events about an object.
func eventReasons(t testing.TB, ns, name string) map[string]int {
	t.Helper()
	list := &eventsv1.EventList{}
	if err := env.Client.List(context.Background(), list, client.InNamespace(ns)); err != nil {
		t.Fatal(err)
	}
	out := map[string]int{}
	for _, e := range list.Items {
		if e.Regarding.Name == name {
			out[e.Reason]++
		}
	}
	return out
}

func logSink() io.Writer {
	if os.Getenv("JOBS_LOG") != "" {
		return os.Stderr
	}
	return discard{}
}
