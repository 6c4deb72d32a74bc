package v1alpha1

import (
	"encoding/json"
	"fmt"
	"slices"

	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"
	"k8s.io/apimachinery/pkg/types"
)

// What almanac writes to an attached target, and how it lets go of one: the reconciler (at
// every boundary, on delete and on retarget) and `almanac release` (when almanac is
// uninstalled) write the same objects and patches.

// TargetFields are the paths, in a target of kind, of the fields almanac owns: min and max
// (max nil for a scale subresource, whose replicas are at min's path).
func TargetFields(kind TargetKind) (minPath, maxPath []string) {
	switch kind {
	case TargetHPA:
		return []string{"spec", "minReplicas"}, []string{"spec", "maxReplicas"}
	case TargetScaledObject:
		return []string{"spec", "minReplicaCount"}, []string{"spec", "maxReplicaCount"}
	default:
		return []string{"spec", "replicas"}, nil
	}
}

// BoundsApply is the object that almanac applies (server-side, under its field manager, with
// force) to an HPA or ScaledObject target ref in namespace to give it the bounds min and max:
// those two fields and nothing else. uid, the live target's, is a precondition: an apply that
// races with the target's deletion does not create a half object.
func BoundsApply(ref TargetReference, namespace, uid string, minReplicas, maxReplicas int32) *unstructured.Unstructured {
	minPath, maxPath := TargetFields(ref.TargetKind())
	u := &unstructured.Unstructured{Object: map[string]any{}}
	u.SetAPIVersion(ref.APIVersion)
	u.SetKind(ref.Kind)
	u.SetNamespace(namespace)
	u.SetName(ref.Name)
	u.SetUID(types.UID(uid))
	_ = unstructured.SetNestedField(u.Object, int64(minReplicas), minPath...)
	_ = unstructured.SetNestedField(u.Object, int64(maxReplicas), maxPath...)
	return u
}

// ScalePatch is the merge patch of a scale subresource that sets its replicas.
func ScalePatch(replicas int32) []byte {
	return fmt.Appendf(nil, `{"spec":{"replicas":%d}}`, replicas)
}

// DisownPatch is the JSON patch that removes manager's entries from an object's
// managedFields (each tested first, so that nothing else is removed), or nil when there are
// none. No field is removed with them: the values stay, owned by their other managers or by
// none. An empty managedFields in a request means "unchanged" to the API server, so when
// manager's are the only entries the list becomes [{}], which clears it.
func DisownPatch(entries []metav1.ManagedFieldsEntry, manager string) []byte {
	type op struct {
		Op    string `json:"op"`
		Path  string `json:"path"`
		Value any    `json:"value,omitempty"`
	}
	var ops []op
	for i := len(entries) - 1; i >= 0; i-- {
		if entries[i].Manager != manager {
			continue
		}
		p := fmt.Sprintf("/metadata/managedFields/%d", i)
		ops = append(ops, op{Op: "test", Path: p + "/manager", Value: manager}, op{Op: "remove", Path: p})
	}
	if len(ops) == 0 {
		return nil
	}
	if len(ops)/2 == len(entries) {
		ops = []op{{Op: "test", Path: "/metadata/managedFields/0/manager", Value: manager}, {Op: "replace", Path: "/metadata/managedFields", Value: []map[string]any{{}}}}
	}
	raw, _ := json.Marshal(ops)
	return raw
}

// ReleaseFinalizerRemoval returns the JSON patch that removes ReleaseFinalizer from an object
// whose finalizers are these (tested at its index, so that a concurrent change fails it
// rather than removing another finalizer); false when it is not there.
func ReleaseFinalizerRemoval(finalizers []string) ([]byte, bool) {
	i := slices.Index(finalizers, ReleaseFinalizer)
	if i < 0 {
		return nil, false
	}
	p := fmt.Sprintf("/metadata/finalizers/%d", i)
	raw, _ := json.Marshal([]map[string]string{{"op": "test", "path": p, "value": ReleaseFinalizer}, {"op": "remove", "path": p}})
	return raw, true
}

// LetGoBounds are the bounds that a target is left at when almanac lets go of it: the
// autoscaler's baseline minReplicas, and its maxReplicas or, without one, the target's own
// (liveMax, nil when it has none), raised to minReplicas.
func LetGoBounds(spec ScheduledPodAutoscalerSpec, liveMax *int32) (minReplicas, maxReplicas int32) {
	minReplicas = deref(spec.MinReplicas, 0)
	maxReplicas = deref(spec.MaxReplicas, deref(liveMax, minReplicas))
	return minReplicas, max(minReplicas, maxReplicas)
}

func deref(p *int32, def int32) int32 {
	if p == nil {
		return def
	}
	return *p
}
