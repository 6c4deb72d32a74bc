package preview

import (
	"fmt"

	autoscalingv1alpha1 "github.com/almanac-dev/almanac/api/autoscaling/v1alpha1"
	"github.com/almanac-dev/almanac/api/timing"
)

// TargetValues is what an attached autoscaler's target is given for some bounds, by the
// names of the target's own fields: minReplicas and maxReplicas (a HorizontalPodAutoscaler),
// minReplicaCount and maxReplicaCount (a KEDA ScaledObject), or replicas (any other object,
// through its scale subresource). Only the fields of the target's kind are set.
type TargetValues struct {
	MinReplicas     *int32 `json:"minReplicas,omitempty"`
	MaxReplicas     *int32 `json:"maxReplicas,omitempty"`
	MinReplicaCount *int32 `json:"minReplicaCount,omitempty"`
	MaxReplicaCount *int32 `json:"maxReplicaCount,omitempty"`
	Replicas        *int32 `json:"replicas,omitempty"`
}

// Gets returns what the attached target is given while the effective bounds are b, as the
// reconciler writes it: a HorizontalPodAutoscaler or a ScaledObject both bounds, a scale
// subresource the minimum as its replicas (it has no maximum). Zero for a generated
// HorizontalPodAutoscaler (Target nil).
func (a Autoscaler) Gets(b timing.Bounds) TargetValues {
	if a.Target == nil {
		return TargetValues{}
	}
	lo, hi := b.Min, b.Max
	switch a.Target.TargetKind() {
	case autoscalingv1alpha1.TargetHPA:
		return TargetValues{MinReplicas: &lo, MaxReplicas: &hi}
	case autoscalingv1alpha1.TargetScaledObject:
		return TargetValues{MinReplicaCount: &lo, MaxReplicaCount: &hi}
	default:
		return TargetValues{Replicas: &lo}
	}
}

// targetFields are the fields of a target that almanac owns, by its kind.
func targetFields(k autoscalingv1alpha1.TargetKind) []string {
	switch k {
	case autoscalingv1alpha1.TargetHPA:
		return []string{"spec.minReplicas", "spec.maxReplicas"}
	case autoscalingv1alpha1.TargetScaledObject:
		return []string{"spec.minReplicaCount", "spec.maxReplicaCount"}
	default:
		return []string{"spec.replicas"} // of the scale subresource
	}
}

// targetName names an attached target: "HorizontalPodAutoscaler api (autoscaling/v2)".
func targetName(r *autoscalingv1alpha1.TargetReference) string {
	return fmt.Sprintf("%s %s (%s)", r.Kind, r.Name, r.APIVersion)
}

// getsText says what the target is given for bounds b: "minReplicas 4, maxReplicas 12",
// "minReplicaCount 0, maxReplicaCount 10" or "replicas 1". A scale target's replicas above
// spec.maxReplicas say so: nothing holds them under it.
func (a Autoscaler) getsText(b timing.Bounds) string {
	v := a.Gets(b)
	switch {
	case v.MinReplicas != nil:
		return fmt.Sprintf("minReplicas %d, maxReplicas %d", *v.MinReplicas, *v.MaxReplicas)
	case v.MinReplicaCount != nil:
		return fmt.Sprintf("minReplicaCount %d, maxReplicaCount %d", *v.MinReplicaCount, *v.MaxReplicaCount)
	case v.Replicas != nil:
		if a.TargetMax != nil && *v.Replicas > *a.TargetMax {
			return fmt.Sprintf("replicas %d (above maxReplicas %d)", *v.Replicas, *a.TargetMax)
		}
		return fmt.Sprintf("replicas %d", *v.Replicas)
	}
	return fmt.Sprintf("minReplicas %d, maxReplicas %d", b.Min, b.Max)
}

// scaleTarget reports whether a is attached through a scale subresource, where only the
// minimum is written.
func (a Autoscaler) scaleTarget() bool {
	return a.Target != nil && a.Target.TargetKind() == autoscalingv1alpha1.TargetScale
}

// attachedText is what the text and SVG say about an attached autoscaler's target and
// baseline, after its name: ", attached to HorizontalPodAutoscaler api (autoscaling/v2):
// baseline minReplicas 2, maxReplicas 6". A scale target's spec.maxReplicas is named as what
// it is: no maximum of the target, which has none.
func (a Autoscaler) attachedText() string {
	s := ", attached to " + targetName(a.Target)
	if a.scaleTarget() {
		s += " through its scale subresource"
	}
	s += ": baseline " + a.getsText(a.Baseline)
	if a.scaleTarget() && a.TargetMax != nil {
		s += fmt.Sprintf(" (maxReplicas %d is not applied: a scale subresource has no maximum)", *a.TargetMax)
	}
	return s
}
