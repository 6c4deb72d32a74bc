package v1alpha1

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"

	apierrors "k8s.io/apimachinery/pkg/api/errors"
	"k8s.io/apimachinery/pkg/api/meta"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"
	"k8s.io/apimachinery/pkg/types"
)

// Reading, writing and letting go of an attached target: the one implementation that the
// reconciler (at every boundary, on delete and on retarget) and `almanac release` (when almanac
// is uninstalled) both run, through TargetClient, which each of them adapts its client to.

// TargetClient is the API access that an attached target needs, in apimachinery's terms so
// that api/ needs no client library: a controller-runtime client satisfies it through a
// small adapter in each caller.
//
// +kubebuilder:object:generate=false
type TargetClient interface {
	// Get reads the object of obj's kind, namespace and name into obj.
	Get(ctx context.Context, obj *unstructured.Unstructured) error
	// GetSubResource reads obj's subresource (e.g. "scale") into into.
	GetSubResource(ctx context.Context, obj *unstructured.Unstructured, subresource string, into *unstructured.Unstructured) error
	// Patch patches obj, or its subresource when subresource is not empty, with data of type
	// pt and opts (the field manager, and Force for an apply), and decodes the answer into obj.
	Patch(ctx context.Context, obj *unstructured.Unstructured, subresource string, pt types.PatchType, data []byte, opts metav1.PatchOptions) error
}

// LiveTarget is an attached target as read from the API server.
//
// +kubebuilder:object:generate=false
type LiveTarget struct {
	Object *unstructured.Unstructured
	// Min and Max are the values of the fields almanac owns (TargetFields), nil when absent;
	// of a scale subresource, Min is its replicas (0 when omitted) and Max is nil.
	Min, Max *int32
}

// ErrTargetNotServed wraps the error of a target whose kind the API server does not serve, or
// that has no scale subresource: almanac can neither write nor have written it.
var ErrTargetNotServed = errors.New("kind not served")

// ReadTarget reads the target ref in namespace: nil when it does not exist. Any other failure
// is an error (wrapping ErrTargetNotServed when the kind is not served or has no scale
// subresource): a target that could not be read is not a target that is gone.
func ReadTarget(ctx context.Context, c TargetClient, namespace string, ref TargetReference) (*LiveTarget, error) {
	what := fmt.Sprintf("%s %s/%s", ref.Kind, namespace, ref.Name)
	u := &unstructured.Unstructured{}
	u.SetGroupVersionKind(ref.GroupVersionKind())
	u.SetNamespace(namespace)
	u.SetName(ref.Name)
	switch err := c.Get(ctx, u); {
	case apierrors.IsNotFound(err):
		return nil, nil
	case meta.IsNoMatchError(err):
		return nil, fmt.Errorf("%w: %w", ErrTargetNotServed, err)
	case err != nil:
		return nil, fmt.Errorf("failed to read %s: %w", what, err)
	}
	kind := ref.TargetKind()
	if kind != TargetScale {
		minPath, maxPath := TargetFields(kind)
		return &LiveTarget{Object: u, Min: intField(u, minPath), Max: intField(u, maxPath)}, nil
	}
	scale := &unstructured.Unstructured{}
	scale.SetAPIVersion("autoscaling/v1")
	scale.SetKind("Scale")
	if err := c.GetSubResource(ctx, u, "scale", scale); err != nil {
		if apierrors.IsNotFound(err) {
			return nil, fmt.Errorf("%w: %s has no scale subresource: attach to an object that has one (a Deployment, a StatefulSet, a custom resource with a scale subresource)",
				ErrTargetNotServed, what)
		}
		return nil, fmt.Errorf("failed to read the scale of %s: %w", what, err)
	}
	replicas := intField(scale, []string{"spec", "replicas"})
	if replicas == nil {
		replicas = new(int32(0)) // omitted: zero
	}
	return &LiveTarget{Object: u, Min: replicas}, nil
}

func intField(u *unstructured.Unstructured, path []string) *int32 {
	v, ok, err := unstructured.NestedInt64(u.Object, path...)
	if !ok || err != nil {
		return nil
	}
	return new(int32(v))
}

// Has reports whether the target has the bounds minReplicas and maxReplicas (a scale
// subresource, which has no maximum: its replicas are minReplicas).
func (l *LiveTarget) Has(kind TargetKind, minReplicas, maxReplicas int32) bool {
	if l.Min == nil || *l.Min != minReplicas {
		return false
	}
	return kind == TargetScale || l.Max != nil && *l.Max == maxReplicas
}

// WriteBounds gives the target ref in namespace, read as l, the bounds minReplicas and
// maxReplicas as field manager: an apply of BoundsApply (forced, with the target's UID as a
// precondition) to an HPA or ScaledObject, a ScalePatch of minReplicas to a scale
// subresource. It returns the target's resourceVersion that the apply returned ("" for a
// scale subresource).
func WriteBounds(ctx context.Context, c TargetClient, namespace string, ref TargetReference, l *LiveTarget, minReplicas, maxReplicas int32, manager string) (string, error) {
	what := fmt.Sprintf("%s %s/%s", ref.Kind, namespace, ref.Name)
	if ref.TargetKind() == TargetScale {
		if err := c.Patch(ctx, l.Object.DeepCopy(), "scale", types.MergePatchType, ScalePatch(minReplicas), metav1.PatchOptions{FieldManager: manager}); err != nil {
			return "", fmt.Errorf("failed to set the replicas of %s to %d: %w", what, minReplicas, err)
		}
		return "", nil
	}
	u := BoundsApply(ref, namespace, string(l.Object.GetUID()), minReplicas, maxReplicas)
	data, err := json.Marshal(u.Object)
	if err != nil {
		return "", err
	}
	if err := c.Patch(ctx, u, "", types.ApplyPatchType, data, metav1.PatchOptions{FieldManager: manager, Force: new(true)}); err != nil {
		return "", fmt.Errorf("failed to apply minReplicas %d and maxReplicas %d to %s: %w", minReplicas, maxReplicas, what, err)
	}
	return u.GetResourceVersion(), nil // the apply's answer is decoded into u
}

// LetGo leaves the target ref in namespace at the baseline of spec (LetGoBounds) and owned by
// no entry of manager: it reads the target, writes the baseline if the target does not have
// it (WriteBounds), reads it again, and removes manager's managedFields entries (DisownPatch).
// No field is removed: an apply without them would delete the fields that only almanac owned
// (minReplicas would fall to 1). A target that is gone, or whose kind is not served, needs
// nothing; any other failure, the first read's included, is an error, so that the caller keeps
// the target (its finalizer, status.target) until a retry lets go of it.
func LetGo(ctx context.Context, c TargetClient, namespace string, ref TargetReference, spec ScheduledPodAutoscalerSpec, manager string) error {
	l, err := ReadTarget(ctx, c, namespace, ref)
	if l == nil {
		if errors.Is(err, ErrTargetNotServed) {
			return nil
		}
		return err
	}
	lo, hi := LetGoBounds(spec, l.Max)
	if !l.Has(ref.TargetKind(), lo, hi) {
		if _, err := WriteBounds(ctx, c, namespace, ref, l, lo, hi, manager); err != nil {
			if apierrors.IsNotFound(err) {
				return nil // gone meanwhile
			}
			return err
		}
		if l, err = ReadTarget(ctx, c, namespace, ref); l == nil {
			return err
		}
	}
	patch := DisownPatch(l.Object.GetManagedFields(), manager)
	if patch == nil {
		return nil
	}
	if err := c.Patch(ctx, l.Object, "", types.JSONPatchType, patch, metav1.PatchOptions{}); err != nil && !apierrors.IsNotFound(err) {
		return fmt.Errorf("failed to remove %s's field ownership from %s %s/%s: %w", manager, ref.Kind, namespace, ref.Name, err)
	}
	return nil
}
