package scaling_test

import (
	"context"
	"sync"
	"sync/atomic"
	"testing"
	"time"

	autoscalingv2 "k8s.io/api/autoscaling/v2"
	"k8s.io/apimachinery/pkg/runtime"
	"k8s.io/apimachinery/pkg/types"
	autoscalingv2ac "k8s.io/client-go/applyconfigurations/autoscaling/v2"
	"k8s.io/utils/ptr"
	"sigs.k8s.io/controller-runtime/pkg/client"

	"github.com/almanac-dev/almanac/test/testenv"
)

// laggingHPAs is a client whose cache is one write behind on HPAs: the first read of an HPA
// after each apply gives the copy from before it, as a cache does for the milliseconds until
// the apply's watch event arrives. It counts the applies.
type laggingHPAs struct {
	client.Client
	mu      sync.Mutex
	stale   map[types.NamespacedName]*autoscalingv2.HorizontalPodAutoscaler
	applies atomic.Int64
}

func (c *laggingHPAs) Apply(ctx context.Context, obj runtime.ApplyConfiguration, opts ...client.ApplyOption) error {
	if ac, ok := obj.(*autoscalingv2ac.HorizontalPodAutoscalerApplyConfiguration); ok {
		key := types.NamespacedName{Namespace: ptr.Deref(ac.Namespace, ""), Name: ptr.Deref(ac.Name, "")}
		before := &autoscalingv2.HorizontalPodAutoscaler{}
		if err := c.Client.Get(ctx, key, before); err == nil {
			c.mu.Lock()
			c.stale[key] = before
			c.mu.Unlock()
		}
		c.applies.Add(1)
	}
	return c.Client.Apply(ctx, obj, opts...)
}

func (c *laggingHPAs) Get(ctx context.Context, key types.NamespacedName, obj client.Object, opts ...client.GetOption) error {
	if hpa, ok := obj.(*autoscalingv2.HorizontalPodAutoscaler); ok {
		c.mu.Lock()
		stale := c.stale[key]
		delete(c.stale, key)
		c.mu.Unlock()
		if stale != nil {
			stale.DeepCopyInto(hpa)
			return nil
		}
	}
	return c.Client.Get(ctx, key, obj, opts...)
}

// TestReportDoesNotWriteTheHPAAgain: at a boundary shared by more autoscalers than there are
// workers, an autoscaler's status waits for the other HPA writes (base.Lanes), and the
// reconcile that writes it comes while the cache may not have its own HPA write yet. It reads
// that HPA around the cache instead of writing it again: one apply per autoscaler and
// boundary, and the transition's lag is measured to the apply, not to a second one.
func TestReportDoesNotWriteTheHPAAgain(t *testing.T) {
	t.Parallel()
	ns := newNamespace(t)
	open := time.Date(2030, 1, 7, 11, 0, 0, 0, time.UTC)
	clk := newOffsetClock(open.Add(-10 * time.Second))
	const n = 12
	createSharedBoundary(t, ns, open, n)
	var lag *laggingHPAs
	wrap := func(c client.Client) client.Client {
		lag = &laggingHPAs{Client: c, stale: map[types.NamespacedName]*autoscalingv2.HorizontalPodAutoscaler{}}
		return lag
	}
	reconciles := testenv.NewReconciles()
	startManagerOpts(t, clk, managerOpts{wrap: wrap, workers: 3, reconciles: reconciles}, ns)
	// Converged: every autoscaler's status has its HPA's bounds, written by the reconcile that
	// applied them, after the apply; and the controller is idle.
	eventually(t, 30*time.Second, converged(ns, n))
	reconciles.WaitIdle(t, "scheduledpodautoscaler")
	before := lag.applies.Load()
	clk.sleepUntil(open)
	// The fence: every status holds the boundary's bounds. The reconcile that writes a status
	// held back by Lanes is the one that would apply the HPA again, before it writes.
	eventually(t, 30*time.Second, sharedBoundaryApplied(ns, n))
	reconciles.WaitIdle(t, "scheduledpodautoscaler")
	if got := lag.applies.Load() - before; got != n {
		t.Errorf("%d HPA applies at the boundary, want %d (one per autoscaler)", got, n)
	}
}
