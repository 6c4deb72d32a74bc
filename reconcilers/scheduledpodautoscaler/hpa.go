package scheduledpodautoscaler

import (
	"encoding/json"
	"fmt"
	"reflect"
	"slices"

	autoscalingv2 "k8s.io/api/autoscaling/v2"
	autoscalingv2ac "k8s.io/client-go/applyconfigurations/autoscaling/v2"
	metav1ac "k8s.io/client-go/applyconfigurations/meta/v1"
	"k8s.io/utils/ptr"

	autoscalingv1alpha1 "github.com/almanac-dev/almanac/api/autoscaling/v1alpha1"
	"github.com/almanac-dev/almanac/api/index"
	"github.com/almanac-dev/almanac/api/timing"
)

// desiredHPA is the apply configuration of the HorizontalPodAutoscaler of spa with bounds b:
// the controller ownerReference, and the baseline spec's scaleTargetRef, metrics and
// behavior (only those that the spec sets) with minReplicas and maxReplicas replaced. Applied
// under index.FieldManager, almanac owns exactly these fields, so labels, annotations or a
// behavior set by someone else (kubectl, a GitOps tool) stay theirs.
func desiredHPA(spa *autoscalingv1alpha1.ScheduledPodAutoscaler, b timing.Bounds) (*autoscalingv2ac.HorizontalPodAutoscalerApplyConfiguration, error) {
	// The typed spec and its apply configuration have the same JSON form; going through
	// JSON keeps every field that the spec leaves out (omitempty) out of the apply, so
	// almanac never claims a field it does not set.
	raw, err := json.Marshal(spa.Spec.HorizontalPodAutoscalerSpec)
	if err != nil {
		return nil, fmt.Errorf("failed to encode the HorizontalPodAutoscaler spec: %w", err)
	}
	spec := &autoscalingv2ac.HorizontalPodAutoscalerSpecApplyConfiguration{}
	if err := json.Unmarshal(raw, spec); err != nil {
		return nil, fmt.Errorf("failed to decode the HorizontalPodAutoscaler spec: %w", err)
	}
	spec.WithMinReplicas(b.Min).WithMaxReplicas(b.Max)
	// The HPA API requires scaleTargetRef.apiVersion; admission defaults it for the
	// built-in workload kinds, and so does this, for objects stored without the webhook.
	if ref := spec.ScaleTargetRef; ref != nil && ptr.Deref(ref.APIVersion, "") == "" {
		if v := autoscalingv1alpha1.DefaultScaleTargetAPIVersion(ptr.Deref(ref.Kind, "")); v != "" {
			ref.WithAPIVersion(v)
		}
	}

	gvk := autoscalingv1alpha1.GroupVersion.WithKind("ScheduledPodAutoscaler")
	return autoscalingv2ac.HorizontalPodAutoscaler(spa.Name, spa.Namespace).
		WithOwnerReferences(metav1ac.OwnerReference().
			WithAPIVersion(gvk.GroupVersion().String()).
			WithKind(gvk.Kind).
			WithName(spa.Name).
			WithUID(spa.UID).
			WithController(true).
			WithBlockOwnerDeletion(true)).
		WithSpec(spec), nil
}

// upToDate reports whether hpa already is what applying want would make it, so that
// almanac writes only when something differs:
//
//   - every value that want sets is already on hpa (values that the API server defaulted
//     around them, and fields of other managers, are ignored; list items are matched with
//     any item of the live list, so owner references or metrics added by others do not
//     count as a difference);
//   - almanac owns no field that want no longer sets (for example a behavior removed from
//     the baseline), which applying would remove.
//
// Ownership of a field whose value is unchanged is not compared: an Update by another
// manager (kubectl edit, kubectl label) can claim fields it did not change, such as a
// metrics list with quantities, and taking them back would be a write that changes nothing.
func upToDate(hpa *autoscalingv2.HorizontalPodAutoscaler, want *autoscalingv2ac.HorizontalPodAutoscalerApplyConfiguration) bool {
	// At a boundary the bounds differ: say so before the comparison of the whole object,
	// which costs the reconciles of a boundary more CPU than their writes.
	if s := want.Spec; s != nil && (!equalBound(s.MinReplicas, hpa.Spec.MinReplicas) ||
		s.MaxReplicas != nil && *s.MaxReplicas != hpa.Spec.MaxReplicas) {
		return false
	}
	wantTree, err := tree(want)
	if err != nil {
		return false
	}
	live := hpa.DeepCopy()
	live.ManagedFields = nil // not part of the comparison
	// A typed object read from the API server (not the cache) has no apiVersion and kind.
	live.SetGroupVersionKind(autoscalingv2.SchemeGroupVersion.WithKind("HorizontalPodAutoscaler"))
	liveTree, err := tree(live)
	if err != nil || !covers(wantTree, liveTree) {
		return false
	}
	owned, err := autoscalingv2ac.ExtractHorizontalPodAutoscaler(hpa, index.FieldManager)
	if err != nil {
		return false
	}
	ownedTree, err := tree(owned)
	return err == nil && within(ownedTree, wantTree)
}

// equalBound reports whether the bound that want sets (nil: none) is the live one.
func equalBound(want, live *int32) bool {
	return want == nil || live != nil && *want == *live
}

// tree is the JSON form of v as maps, slices and scalars.
func tree(v any) (any, error) {
	raw, err := json.Marshal(v)
	if err != nil {
		return nil, err
	}
	var out any
	return out, json.Unmarshal(raw, &out)
}

// covers reports whether every value in want is also in have.
func covers(want, have any) bool {
	switch w := want.(type) {
	case map[string]any:
		h, ok := have.(map[string]any)
		if !ok {
			return false
		}
		for k, wv := range w {
			if hv, ok := h[k]; !ok || !covers(wv, hv) {
				return false
			}
		}
		return true
	case []any:
		h, ok := have.([]any)
		if !ok {
			return false
		}
		for _, wv := range w {
			if !slices.ContainsFunc(h, func(hv any) bool { return covers(wv, hv) }) {
				return false
			}
		}
		return true
	default:
		return reflect.DeepEqual(want, have)
	}
}

// within reports whether every field path of sub is also a path of super (values aside).
func within(sub, super any) bool {
	switch s := sub.(type) {
	case map[string]any:
		p, ok := super.(map[string]any)
		if !ok {
			return false
		}
		for k, sv := range s {
			if pv, ok := p[k]; !ok || !within(sv, pv) {
				return false
			}
		}
		return true
	case []any:
		p, ok := super.([]any)
		if !ok || len(s) > len(p) {
			return false
		}
		for i := range s {
			if !within(s[i], p[i]) {
				return false
			}
		}
		return true
	default:
		return true
	}
}
