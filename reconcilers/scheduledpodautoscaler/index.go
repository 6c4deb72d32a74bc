package scheduledpodautoscaler

import (
	"context"
	"fmt"
	"sync"

	"sigs.k8s.io/controller-runtime/pkg/client"

	autoscalingv1alpha1 "github.com/almanac-dev/almanac/api/autoscaling/v1alpha1"
)

// ScheduleTargetIndex is the name of the cache field index that maps a Schedule to the name
// of the ScheduledPodAutoscaler it changes (spec.scaleTargetRef.name, in the Schedule's
// namespace). Use it with client.MatchingFields on a cached client.
const ScheduleTargetIndex = "spec.scaleTargetRef.name"

var (
	indexedMu sync.Mutex
	indexed   = map[client.FieldIndexer]bool{}
)

// IndexScheduleTarget registers ScheduleTargetIndex with the manager's field indexer
// (mgr.GetFieldIndexer()). It must run before the manager starts. It is safe to call more
// than once for the same indexer (the reconciler and the webhooks both need the index), which
// registers it once.
func IndexScheduleTarget(ctx context.Context, indexer client.FieldIndexer) error {
	indexedMu.Lock()
	defer indexedMu.Unlock()
	if indexed[indexer] {
		return nil
	}
	err := indexer.IndexField(ctx, &autoscalingv1alpha1.Schedule{}, ScheduleTargetIndex, func(obj client.Object) []string {
		s, ok := obj.(*autoscalingv1alpha1.Schedule)
		if !ok || s.Spec.ScaleTargetRef.Name == "" {
			return nil
		}
		return []string{s.Spec.ScaleTargetRef.Name}
	})
	if err != nil {
		return fmt.Errorf("failed to index Schedules by %s: %w", ScheduleTargetIndex, err)
	}
	indexed[indexer] = true
	return nil
}

// ListSchedules returns the Schedules in namespace whose scaleTargetRef names the
// ScheduledPodAutoscaler name, through ScheduleTargetIndex (so r must be a cached client
// whose cache has the index).
func ListSchedules(ctx context.Context, r client.Reader, namespace, name string) ([]autoscalingv1alpha1.Schedule, error) {
	list := &autoscalingv1alpha1.ScheduleList{}
	if err := r.List(ctx, list, client.InNamespace(namespace), client.MatchingFields{ScheduleTargetIndex: name}); err != nil {
		return nil, fmt.Errorf("failed to list the Schedules of ScheduledPodAutoscaler %s/%s: %w", namespace, name, err)
	}
	return list.Items, nil
}
