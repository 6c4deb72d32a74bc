package scaling_test

import (
	"context"
	"fmt"
	"strings"
	"sync"
	"sync/atomic"
	"testing"
	"time"

	admissionregistrationv1 "k8s.io/api/admissionregistration/v1"
	autoscalingv2 "k8s.io/api/autoscaling/v2"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	"k8s.io/apimachinery/pkg/api/meta"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/runtime"
	"k8s.io/apimachinery/pkg/types"
	"k8s.io/client-go/util/workqueue"
	clocktesting "k8s.io/utils/clock/testing"
	"k8s.io/utils/ptr"
	"sigs.k8s.io/controller-runtime/pkg/client"
	"sigs.k8s.io/controller-runtime/pkg/controller"
	"sigs.k8s.io/controller-runtime/pkg/reconcile"

	autoscalingv1alpha1 "github.com/almanac-dev/almanac/api/autoscaling/v1alpha1"
	"github.com/almanac-dev/almanac/api/conditions"
	"github.com/almanac-dev/almanac/reconcilers/base"
	"github.com/almanac-dev/almanac/reconcilers/scheduledpodautoscaler"
	"github.com/almanac-dev/almanac/test/testenv"
)

// stepper is a fake clock that the test steps, with the work queue of the controller on it:
// a RequeueAfter and a retry's backoff come when the test steps the clock past them, however
// fast or slow the manager is.
type stepper struct {
	*clocktesting.FakeClock
	mu     sync.Mutex
	queues []*steppedQueue
}

func newStepper(start time.Time) *stepper {
	return &stepper{FakeClock: clocktesting.NewFakeClock(start)}
}

// steppedQueue counts the items that a worker holds: controller-runtime calls Done after it
// has queued the item again, so none held and none ready means that the controller is idle
// until the clock moves.
type steppedQueue struct {
	workqueue.TypedRateLimitingInterface[reconcile.Request]
	busy atomic.Int64
}

func (q *steppedQueue) Get() (reconcile.Request, bool) {
	item, shutdown := q.TypedRateLimitingInterface.Get()
	if !shutdown {
		q.busy.Add(1)
	}
	return item, shutdown
}

func (q *steppedQueue) Done(item reconcile.Request) {
	q.TypedRateLimitingInterface.Done(item)
	q.busy.Add(-1)
}

func (c *stepper) newQueue(name string, rl workqueue.TypedRateLimiter[reconcile.Request]) workqueue.TypedRateLimitingInterface[reconcile.Request] {
	q := &steppedQueue{TypedRateLimitingInterface: workqueue.NewTypedRateLimitingQueueWithConfig(rl,
		workqueue.TypedRateLimitingQueueConfig[reconcile.Request]{Name: name, Clock: c})}
	c.mu.Lock()
	c.queues = append(c.queues, q)
	c.mu.Unlock()
	return q
}

// waitIdle waits (up to 15 s) until no queue has an item ready or held by a worker, twice in
// a row 10 ms apart.
func (c *stepper) waitIdle(t testing.TB) {
	t.Helper()
	deadline := time.Now().Add(15 * time.Second)
	for quiet := 0; quiet < 2; time.Sleep(10 * time.Millisecond) {
		if time.Now().After(deadline) {
			t.Fatal("the controller is not idle after 15 s")
		}
		quiet++
		c.mu.Lock()
		for _, q := range c.queues {
			if q.Len() > 0 || q.busy.Load() > 0 {
				quiet = 0
			}
		}
		c.mu.Unlock()
	}
}

// step moves the clock by d once the controller is idle, makes each queue's waiting loop read
// the clock again (an item due in a thousand hours, for an object that does not exist: the
// loop may have read the clock just before the step and armed its timer a step too late), and
// waits until the controller is idle again.
func (c *stepper) step(t testing.TB, d time.Duration) {
	t.Helper()
	c.waitIdle(t)
	c.Step(d)
	c.mu.Lock()
	for _, q := range c.queues {
		q.AddAfter(reconcile.Request{NamespacedName: types.NamespacedName{Namespace: "almanac-test", Name: "clock-nudge"}}, 1000*time.Hour)
	}
	c.mu.Unlock()
	c.waitIdle(t)
}

// countedApplies counts the server-side applies of the autoscaler reconciler (its HPA
// writes) and fails the first failFirst of them with the errors of fail, in turn.
type countedApplies struct {
	client.Client
	n    *atomic.Int64
	fail []error
}

func (c countedApplies) Apply(ctx context.Context, obj runtime.ApplyConfiguration, opts ...client.ApplyOption) error {
	n := c.n.Add(1)
	if int(n) <= len(c.fail) {
		return fmt.Errorf("injected: %w", c.fail[n-1])
	}
	return c.Client.Apply(ctx, obj, opts...)
}

// startSteppedManager runs the autoscaler reconciler with its queue on clk, counting its HPA
// applies in n and failing the first ones with fail.
func startSteppedManager(t *testing.T, ns string, clk *stepper, n *atomic.Int64, fail ...error) {
	t.Helper()
	mgr := newManager(t, ns)
	opts := controller.Options{SkipNameValidation: ptr.To(true), NewQueue: clk.newQueue}
	r := scheduledpodautoscaler.New(mgr, clk,
		base.WithControllerOptions(opts),
		base.WithLanes(base.NewLanes(clk, base.DefaultMaxReportDelay)), // as the manager binary has them
		base.WithClient(func(c client.Client) client.Client { return countedApplies{Client: c, n: n, fail: fail} }))
	if err := r.SetupWithManager(mgr); err != nil {
		t.Fatal(err)
	}
	run(t, mgr)
}

// readyIs is a condition for eventually: the autoscaler's status is of its generation gen,
// with Ready of the reason and a message that says each of says.
func readyIs(ns, name string, gen int64, reason string, says ...string) func() error {
	return func() error {
		spa := &autoscalingv1alpha1.ScheduledPodAutoscaler{}
		if err := env.Client.Get(context.Background(), client.ObjectKey{Namespace: ns, Name: name}, spa); err != nil {
			return err
		}
		c := meta.FindStatusCondition(spa.Status.Conditions, autoscalingv1alpha1.ConditionReady)
		switch {
		case spa.Status.ObservedGeneration != gen:
			return fmt.Errorf("observedGeneration %d, want %d", spa.Status.ObservedGeneration, gen)
		case c == nil || c.Reason != reason:
			return fmt.Errorf("Ready %+v, want reason %s", c, reason)
		}
		for _, s := range says {
			if !strings.Contains(c.Message, s) {
				return fmt.Errorf("Ready's message %q does not say %q", c.Message, s)
			}
		}
		return nil
	}
}

// TestARefusedApplyWaits (issue 38, item 6): an HPA apply that the API server refuses (here
// a ValidatingAdmissionPolicy; RBAC or a policy engine's webhook answer the same way) is not
// re-sent every 2 s: the autoscaler says why (Ready False, RequestRefused, with the policy's
// answer and the fix) and tries again about a minute later. On the main before it, the
// reconcile failed and was retried with backoff up to base.MaxRetryDelay: 30 and more applies
// in a minute, for every refused autoscaler.
func TestARefusedApplyWaits(t *testing.T) {
	ns := newNamespace(t)
	refusal := testenv.Refusal{
		Name:      "refuse-hpas-" + ns,
		Namespace: ns,
		Rules: []admissionregistrationv1.NamedRuleWithOperations{{RuleWithOperations: admissionregistrationv1.RuleWithOperations{
			Operations: []admissionregistrationv1.OperationType{admissionregistrationv1.Create, admissionregistrationv1.Update},
			Rule: admissionregistrationv1.Rule{
				APIGroups: []string{"autoscaling"}, APIVersions: []string{"*"}, Resources: []string{"horizontalpodautoscalers"},
			},
		}}},
		Message: "this cluster's policy refuses HorizontalPodAutoscalers here",
	}
	refusal.Effective = func(ctx context.Context) error {
		hpa := &autoscalingv2.HorizontalPodAutoscaler{
			ObjectMeta: metav1.ObjectMeta{Namespace: ns, Name: "probe"},
			Spec: autoscalingv2.HorizontalPodAutoscalerSpec{
				ScaleTargetRef: autoscalingv2.CrossVersionObjectReference{APIVersion: "apps/v1", Kind: "Deployment", Name: "probe"},
				MaxReplicas:    1,
			},
		}
		return refusal.Refused(env.Client.Create(ctx, hpa, client.DryRunAll))
	}
	lift := env.Refuse(t, refusal)

	clk := newStepper(time.Date(2030, 1, 9, 10, 0, 30, 0, time.UTC))
	tried := clk.Now() // the first try: the clock does not move until the test steps it
	var applies atomic.Int64
	startSteppedManager(t, ns, clk, &applies)
	ctx := context.Background()
	create(t, newAutoscaler(ns, "web", 2, 10))
	eventually(t, 30*time.Second, readyIs(ns, "web", 1, autoscalingv1alpha1.ReasonRequestRefused,
		refusal.Message, "ValidatingAdmissionPolicy", "change the policy or its binding", "tries again in about 1m0s"))
	clk.waitIdle(t)
	first := applies.Load()
	if first != 1 {
		t.Fatalf("%d applies before the refusal was reported, want 1", first)
	}
	spa := &autoscalingv1alpha1.ScheduledPodAutoscaler{}
	if err := env.Client.Get(ctx, client.ObjectKey{Namespace: ns, Name: "web"}, spa); err != nil {
		t.Fatal(err)
	}
	if s := spa.Status.Stalled(); s == nil || s.Reason != autoscalingv1alpha1.ReasonRequestRefused {
		t.Errorf("Stalled %+v, want True with reason %s (kstatus: Failed, a user must act)", s, autoscalingv1alpha1.ReasonRequestRefused)
	}
	if c := meta.FindStatusCondition(spa.Status.Conditions, conditions.TypeStalled); c == nil || c.Status != metav1.ConditionTrue {
		t.Errorf("no Stalled condition True in %+v", spa.Status.Conditions)
	}

	// 58 seconds of the clock, second by second.
	for range 58 {
		clk.step(t, time.Second)
	}
	// The fence: a change of the spec brings one reconcile, and so one apply; once its status
	// shows, nothing else can be under way.
	bump := func(maxReplicas int32) {
		t.Helper()
		latest := &autoscalingv1alpha1.ScheduledPodAutoscaler{}
		if err := env.Client.Get(ctx, client.ObjectKey{Namespace: ns, Name: "web"}, latest); err != nil {
			t.Fatal(err)
		}
		patch := client.MergeFrom(latest.DeepCopy())
		latest.Spec.HorizontalPodAutoscalerSpec.MaxReplicas = maxReplicas
		if err := env.Client.Patch(ctx, latest, patch); err != nil {
			t.Fatal(err)
		}
	}
	bump(11)
	eventually(t, 30*time.Second, readyIs(ns, "web", 2, autoscalingv1alpha1.ReasonRequestRefused, refusal.Message))
	clk.waitIdle(t)
	if got := applies.Load() - first; got != 1 {
		t.Errorf("%d applies in the 58 s after the refusal and the spec change, want 1 (the change's): a refused apply is tried again about a minute later", got)
	}

	// The next try: a minute after a try (the first's, or the change's: each reconcile asks
	// for its own, and the work queue keeps one wake-up per object, the earliest), not sooner.
	changed := clk.Now()
	for applies.Load() == first+1 && clk.Since(tried) < 3*time.Minute {
		clk.step(t, time.Second)
	}
	if at := clk.Now(); at.Before(tried.Add(base.RefusalRetry)) || at.After(changed.Add(base.RefusalRetry+2*time.Second)) {
		t.Errorf("the refused apply was tried again %s after the first try and %s after the change's, want a minute after one of them",
			at.Sub(tried), at.Sub(changed))
	}

	// The policy lifted: the next change (or retry) writes the HPA, and Ready says so.
	lift()
	bump(12)
	eventually(t, 30*time.Second, func() error {
		if err := hasBounds(ns, "web", 2, 12)(); err != nil {
			clk.step(t, 10*time.Second) // the change came before the API server dropped the policy: the retry
			return err
		}
		return nil
	})
	eventually(t, 30*time.Second, readyIs(ns, "web", spaGeneration(t, ns, "web"), autoscalingv1alpha1.ReasonBoundsApplied))
}

func spaGeneration(t testing.TB, ns, name string) int64 {
	t.Helper()
	spa := &autoscalingv1alpha1.ScheduledPodAutoscaler{}
	if err := env.Client.Get(context.Background(), client.ObjectKey{Namespace: ns, Name: name}, spa); err != nil {
		t.Fatal(err)
	}
	return spa.Generation
}

// TestATransientApplyErrorRetriesSoon: what may pass when asked again (429, 5xx, a timeout)
// keeps the short retry: the HPA is written within base.MaxRetryDelay of the clock.
func TestATransientApplyErrorRetriesSoon(t *testing.T) {
	ns := newNamespace(t)
	clk := newStepper(time.Date(2030, 1, 9, 10, 0, 30, 0, time.UTC))
	var applies atomic.Int64
	fail := []error{
		apierrors.NewTooManyRequests("the API server is busy", 1),
		apierrors.NewServiceUnavailable("etcd is unavailable"),
		apierrors.NewInternalError(fmt.Errorf(`failed calling webhook "x": no endpoints available`)),
		apierrors.NewTimeoutError("request timed out", 1),
	}
	startSteppedManager(t, ns, clk, &applies, fail...)
	create(t, newAutoscaler(ns, "web", 2, 10))
	eventually(t, 30*time.Second, func() error {
		if applies.Load() == 0 {
			return errNotYet
		}
		return nil
	})
	start := clk.Now()
	for hasBounds(ns, "web", 2, 10)() != nil && clk.Since(start) < time.Minute {
		clk.step(t, 100*time.Millisecond)
	}
	if err := hasBounds(ns, "web", 2, 10)(); err != nil {
		t.Fatalf("after a minute of the clock: %v", err)
	}
	if d := clk.Since(start); d > base.MaxRetryDelay {
		t.Errorf("the HPA was written %s after the first failed apply, want within %s: a transient error is retried soon", d, base.MaxRetryDelay)
	}
	if got := applies.Load(); got != int64(len(fail))+1 {
		t.Errorf("%d applies, want %d (%d failed, then one)", got, len(fail)+1, len(fail))
	}
}
