package v1alpha1

import (
	"k8s.io/apimachinery/pkg/runtime"
	"k8s.io/apimachinery/pkg/runtime/schema"

	"github.com/almanac-dev/almanac/api/putback"
)

// TargetReference names an object, in the ScheduledPodAutoscaler's namespace, that almanac
// attaches to.
type TargetReference struct {
	// apiVersion of the target, e.g. "autoscaling/v2", "keda.sh/v1alpha1", "apps/v1".
	// +required
	// +kubebuilder:validation:MinLength=1
	// +kubebuilder:validation:MaxLength=253
	APIVersion string `json:"apiVersion"`
	// kind of the target, e.g. HorizontalPodAutoscaler, ScaledObject, Deployment.
	// +required
	// +kubebuilder:validation:MinLength=1
	// +kubebuilder:validation:MaxLength=63
	Kind string `json:"kind"`
	// name of the target.
	// +required
	// +kubebuilder:validation:MinLength=1
	// +kubebuilder:validation:MaxLength=253
	Name string `json:"name"`
}

// TargetKind is how almanac changes an attached target.
type TargetKind string

const (
	// TargetHPA is an autoscaling HorizontalPodAutoscaler: almanac owns spec.minReplicas and
	// spec.maxReplicas.
	TargetHPA TargetKind = "HorizontalPodAutoscaler"
	// TargetScaledObject is a KEDA ScaledObject: almanac owns spec.minReplicaCount and
	// spec.maxReplicaCount.
	TargetScaledObject TargetKind = "ScaledObject"
	// TargetScale is any other object with a scale subresource: almanac sets its replicas to
	// the effective minReplicas.
	TargetScale TargetKind = "Scale"
)

// KEDAGroup is the API group of KEDA's ScaledObject.
const KEDAGroup = "keda.sh"

// GroupVersionKind is the target's apiVersion and kind; an apiVersion that does not parse
// gives an empty group and version.
func (r TargetReference) GroupVersionKind() schema.GroupVersionKind {
	gv, _ := schema.ParseGroupVersion(r.APIVersion)
	return gv.WithKind(r.Kind)
}

// TargetKind says how almanac changes the target: by its group and kind, whatever the
// version.
func (r TargetReference) TargetKind() TargetKind {
	gvk := r.GroupVersionKind()
	switch {
	case gvk.Group == "autoscaling" && gvk.Kind == "HorizontalPodAutoscaler":
		return TargetHPA
	case gvk.Group == KEDAGroup && gvk.Kind == "ScaledObject":
		return TargetScaledObject
	default:
		return TargetScale
	}
}

// String is "Kind/name (apiVersion)", for messages.
func (r TargetReference) String() string {
	return r.Kind + "/" + r.Name + " (" + r.APIVersion + ")"
}

// Attached reports whether spa attaches to an existing object (spec.targetRef) rather than
// generating a HorizontalPodAutoscaler.
func (spa *ScheduledPodAutoscaler) Attached() bool {
	return spa.Spec.TargetRef != nil
}

// TargetsHeld are the targets an attached autoscaler may own fields of, each once:
// status.target (what it applied last) and spec.targetRef. Letting go of the autoscaler (its
// deletion, almanac release) lets go of each.
func (spa *ScheduledPodAutoscaler) TargetsHeld() []TargetReference {
	var out []TargetReference
	if t := spa.Status.Target; t != nil {
		out = append(out, *t)
	}
	if t := spa.Spec.TargetRef; t != nil && (len(out) == 0 || out[0] != *t) {
		out = append(out, *t)
	}
	return out
}

// OverrideLabel marks a Schedule created by `almanac override`: a OneShot window that the
// Schedule reconciler deletes once it has ended. Its value is "true".
const OverrideLabel = "autoscaling.almanac.dev/override"

// TargetField is the cache field index of ScheduledPodAutoscalers by their target
// (TargetIndexValue of spec.targetRef), so that a change of a target wakes the autoscaler
// attached to it.
const TargetField = "spec.targetRef"

// TargetIndexValue is the TargetField value of a target: "group/Kind/name".
func TargetIndexValue(group, kind, name string) string {
	return group + "/" + kind + "/" + name
}

// ScheduledPodAutoscalerTarget returns the TargetField values of a ScheduledPodAutoscaler:
// its spec.targetRef, and status.target when it differs (the target it still has to let go
// of).
func ScheduledPodAutoscalerTarget(obj runtime.Object) []string {
	spa, ok := obj.(*ScheduledPodAutoscaler)
	if !ok {
		return nil
	}
	var out []string
	for _, r := range []*TargetReference{spa.Spec.TargetRef, spa.Status.Target} {
		if r == nil {
			continue
		}
		gvk := r.GroupVersionKind()
		v := TargetIndexValue(gvk.Group, gvk.Kind, r.Name)
		if len(out) == 0 || out[0] != v {
			out = append(out, v)
		}
	}
	return out
}

// ReleaseFinalizer is on every attached ScheduledPodAutoscaler: before it goes, the reconciler
// leaves its target at the baseline and owned by no almanac field manager.
const ReleaseFinalizer = "autoscaling.almanac.dev/release-target"

// The fight rule: when another field manager (a Helm upgrade, an Argo CD sync) writes a field
// that almanac owns on an attached target, almanac puts its value back, with an event naming
// that manager; after MaxPutBacks put-backs within PutBackWindow it stops writing and sets the
// Conflict condition, until the ScheduledPodAutoscaler's spec changes. It is api/putback's
// rule, which sleeps follow too.
const (
	MaxPutBacks   = putback.Max
	PutBackWindow = putback.Window
)
