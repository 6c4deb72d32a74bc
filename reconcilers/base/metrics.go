package base

// The metric every reconciler shares: how long each suspended object has been suspended. It
// is registered with controller-runtime's metrics.Registry, as the other metrics of almanac
// (reconcilers/jobs, reconcilers/scheduledpodautoscaler), so the manager's metrics server
// serves it. Its series carry the object's namespace and name and are deleted when the object
// is resumed or deleted; only the leader exports them (only the leader reconciles).

import (
	"context"
	"sync"
	"time"

	"github.com/prometheus/client_golang/prometheus"
	"k8s.io/apimachinery/pkg/types"
	"sigs.k8s.io/controller-runtime/pkg/client"
	"sigs.k8s.io/controller-runtime/pkg/metrics"

	batchv1alpha1 "github.com/almanac-dev/almanac/api/batch/v1alpha1"
)

// SuspendedSince is almanac_suspended_since_timestamp_seconds{kind,namespace,name}: for each
// object whose spec.suspend is true, when it was suspended (unix seconds). The time is that of
// the write that set spec.suspend, as the API server recorded it (batchv1alpha1.SuspendedAt,
// at or after the write), so it survives restarts and leader changes; when no write recorded
// one, it is when this process first saw the object suspended.
var SuspendedSince = prometheus.NewGaugeVec(prometheus.GaugeOpts{
	Name: "almanac_suspended_since_timestamp_seconds",
	Help: "When an object's spec.suspend was set to true (unix seconds), per suspended ScheduledJob, EventJob, ScheduledPodAutoscaler and Schedule; absent when it is not suspended.",
}, []string{"kind", "namespace", "name"})

func init() {
	metrics.Registry.MustRegister(SuspendedSince)
}

type suspensionKey struct {
	kind string
	key  types.NamespacedName
}

// suspended holds the objects whose SuspendedSince series is set, so that an object is read
// around the cache once per suspension, not once per reconcile.
var suspended sync.Map // suspensionKey → struct{}

// TrackSuspension keeps obj's SuspendedSince series in step with its spec.suspend: it sets the
// series when obj is suspended and has none yet, and deletes it when obj is not suspended. The
// cache drops managedFields, which hold the time of the write, so a newly seen suspension is
// read around the cache once; a failed read falls back to now (the alert then fires late,
// never early). Call it after reading obj; ForgetSuspension when obj is gone.
func (b *Base) TrackSuspension(ctx context.Context, kind string, obj client.Object, isSuspended bool, now time.Time) {
	k := suspensionKey{kind: kind, key: client.ObjectKeyFromObject(obj)}
	if !isSuspended {
		if _, ok := suspended.LoadAndDelete(k); ok {
			SuspendedSince.DeleteLabelValues(kind, k.key.Namespace, k.key.Name)
		}
		return
	}
	if _, ok := suspended.Load(k); ok {
		return
	}
	since := now
	if t, ok := batchv1alpha1.SuspendedAt(obj); ok && t.Before(since) {
		since = t
	} else if fresh, ok := obj.DeepCopyObject().(client.Object); ok && b.APIReader != nil && len(obj.GetManagedFields()) == 0 {
		if err := b.APIReader.Get(ctx, k.key, fresh); err == nil {
			if t, ok := batchv1alpha1.SuspendedAt(fresh); ok && t.Before(since) {
				since = t
			}
		}
	}
	suspended.Store(k, struct{}{})
	SuspendedSince.WithLabelValues(kind, k.key.Namespace, k.key.Name).Set(float64(since.Unix()))
}

// ForgetSuspension deletes the SuspendedSince series of an object that no longer exists.
func ForgetSuspension(kind string, key types.NamespacedName) {
	if _, ok := suspended.LoadAndDelete(suspensionKey{kind: kind, key: key}); ok {
		SuspendedSince.DeleteLabelValues(kind, key.Namespace, key.Name)
	}
}
