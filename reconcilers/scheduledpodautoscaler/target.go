package scheduledpodautoscaler

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"slices"
	"strings"
	"sync"
	"time"

	autoscalingv1 "k8s.io/api/autoscaling/v1"
	autoscalingv2 "k8s.io/api/autoscaling/v2"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	"k8s.io/apimachinery/pkg/api/meta"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"
	"k8s.io/apimachinery/pkg/runtime"
	"k8s.io/apimachinery/pkg/runtime/schema"
	"k8s.io/apimachinery/pkg/types"
	"k8s.io/klog/v2"
	ctrl "sigs.k8s.io/controller-runtime"
	"sigs.k8s.io/controller-runtime/pkg/client"
	"sigs.k8s.io/controller-runtime/pkg/event"
	"sigs.k8s.io/controller-runtime/pkg/handler"
	"sigs.k8s.io/controller-runtime/pkg/predicate"
	"sigs.k8s.io/controller-runtime/pkg/reconcile"
	ctrlsource "sigs.k8s.io/controller-runtime/pkg/source"

	autoscalingv1alpha1 "github.com/almanac-dev/almanac/api/autoscaling/v1alpha1"
	"github.com/almanac-dev/almanac/api/index"
	"github.com/almanac-dev/almanac/api/timing"
)

// An attached ScheduledPodAutoscaler (spec.targetRef) changes an object that someone else
// owns, and only the fields that carry its bounds:
//
//   - a HorizontalPodAutoscaler's spec.minReplicas and spec.maxReplicas, and a ScaledObject's
//     spec.minReplicaCount and spec.maxReplicaCount, by server-side apply under
//     index.FieldManager (an apply of those two fields alone: everything else stays with its
//     owner);
//   - a workload's replicas, through its scale subresource (a merge patch under
//     index.FieldManager), set to the effective minReplicas.
//
// The target is read around the cache (it is one GET per reconcile of an attached autoscaler,
// which runs at its boundaries and when the target changes), and watched as metadata, so that
// another manager's write is seen and put back.
//
// +kubebuilder:rbac:groups=autoscaling,resources=horizontalpodautoscalers,verbs=get;list;watch;create;patch
// +kubebuilder:rbac:groups=keda.sh,resources=scaledobjects,verbs=get;list;watch;patch
// +kubebuilder:rbac:groups=apps,resources=deployments;statefulsets;replicasets,verbs=get;list;watch;patch
// +kubebuilder:rbac:groups=apps,resources=deployments/scale;statefulsets/scale;replicasets/scale,verbs=get;patch
// +kubebuilder:rbac:groups=autoscaling.almanac.dev,resources=scheduledpodautoscalers,verbs=get;list;watch;patch

// live is an attached target as read from the API server.
type live struct {
	obj *unstructured.Unstructured
	// min and max are the values of the fields almanac owns (max unset for a scale
	// subresource; min is its replicas); nil when the field is absent.
	min, max *int32
}

// errNotServed wraps a target whose kind the API server does not serve.
var errNotServed = errors.New("kind not served")

// readTarget reads ref in namespace around the cache: nil when it does not exist.
func (r *Reconciler) readTarget(ctx context.Context, namespace string, ref autoscalingv1alpha1.TargetReference) (*live, error) {
	u := &unstructured.Unstructured{}
	u.SetGroupVersionKind(ref.GroupVersionKind())
	err := r.APIReader.Get(ctx, types.NamespacedName{Namespace: namespace, Name: ref.Name}, u)
	switch {
	case apierrors.IsNotFound(err):
		return nil, nil
	case meta.IsNoMatchError(err):
		return nil, fmt.Errorf("%w: %w", errNotServed, err)
	case err != nil:
		return nil, fmt.Errorf("failed to read %s %s: %w", ref.Kind, klog.KRef(namespace, ref.Name), err)
	}
	l := &live{obj: u}
	kind := ref.TargetKind()
	if kind == autoscalingv1alpha1.TargetScale {
		// A subresource read is never served from the cache.
		// A subresource read is never served from the cache.
		scale := &unstructured.Unstructured{}
		scale.SetGroupVersionKind(autoscalingv1.SchemeGroupVersion.WithKind("Scale"))
		if err := r.Client.SubResource("scale").Get(ctx, u, scale); err != nil {
			if apierrors.IsNotFound(err) {
				return nil, fmt.Errorf("%w: %s %s has no scale subresource: attach to an object that has one (a Deployment, a StatefulSet, a custom resource with a scale subresource)",
					errNotServed, ref.Kind, klog.KRef(namespace, ref.Name))
			}
			return nil, fmt.Errorf("failed to read the scale of %s %s: %w", ref.Kind, klog.KRef(namespace, ref.Name), err)
		}
		l.min = intField(scale, []string{"spec", "replicas"})
		if l.min == nil {
			l.min = new(int32(0)) // omitted: zero
		}
		return l, nil
	}
	minPath, maxPath := autoscalingv1alpha1.TargetFields(kind)
	l.min, l.max = intField(u, minPath), intField(u, maxPath)
	return l, nil
}

func intField(u *unstructured.Unstructured, path []string) *int32 {
	v, ok, err := unstructured.NestedInt64(u.Object, path...)
	if !ok || err != nil {
		return nil
	}
	return new(int32(v))
}

// readTargetCached is readTarget that reads an autoscaling/v2 HorizontalPodAutoscaler from the
// cache, which has them (SetupWithManager watches them), so that a reconcile at a boundary
// costs no GET: at 100 attached autoscalers on one boundary the GETs doubled the requests per
// transition (docs/performance.md). last is the write of an earlier reconcile whose transition
// is not in status yet (nil if none): a cached HPA that is not the version that write returned
// is read around the cache, as the generated HPAs are. The cache keeps only almanac's
// managedFields entries of HPAs (api/index.TrimHPA): who changed a field is read around it.
func (r *Reconciler) readTargetCached(ctx context.Context, namespace string, ref autoscalingv1alpha1.TargetReference, last *applied) (*live, error) {
	gvk := ref.GroupVersionKind()
	if ref.TargetKind() != autoscalingv1alpha1.TargetHPA || gvk.Version != autoscalingv2.SchemeGroupVersion.Version {
		return r.readTarget(ctx, namespace, ref)
	}
	hpa := &autoscalingv2.HorizontalPodAutoscaler{}
	err := r.Client.Get(ctx, types.NamespacedName{Namespace: namespace, Name: ref.Name}, hpa)
	switch {
	case apierrors.IsNotFound(err):
		return nil, nil // its creation wakes the autoscaler
	case err != nil:
		return nil, fmt.Errorf("failed to read %s %s: %w", ref.Kind, klog.KRef(namespace, ref.Name), err)
	case last != nil && hpa.ResourceVersion != last.resourceVersion:
		return r.readTarget(ctx, namespace, ref)
	}
	obj, err := runtime.DefaultUnstructuredConverter.ToUnstructured(hpa)
	if err != nil {
		return nil, err
	}
	u := &unstructured.Unstructured{Object: obj}
	u.SetGroupVersionKind(gvk)
	return &live{obj: u, min: hpa.Spec.MinReplicas, max: &hpa.Spec.MaxReplicas}, nil
}

// upToDateTarget reports whether l has the bounds b.
func upToDateTarget(kind autoscalingv1alpha1.TargetKind, l *live, b timing.Bounds) bool {
	if l.min == nil || *l.min != b.Min {
		return false
	}
	return kind == autoscalingv1alpha1.TargetScale || l.max != nil && *l.max == b.Max
}

// writeTarget writes the bounds b to the target and returns the target's resourceVersion
// that the write returned ("" for a scale subresource).
func (r *Reconciler) writeTarget(ctx context.Context, namespace string, ref autoscalingv1alpha1.TargetReference, l *live, b timing.Bounds) (string, error) {
	kind := ref.TargetKind()
	if kind == autoscalingv1alpha1.TargetScale {
		if err := r.Client.SubResource("scale").Patch(ctx, l.obj.DeepCopy(), client.RawPatch(types.MergePatchType, autoscalingv1alpha1.ScalePatch(b.Min)), client.FieldOwner(index.FieldManager)); err != nil {
			return "", fmt.Errorf("failed to set the replicas of %s %s to %d: %w", ref.Kind, klog.KRef(namespace, ref.Name), b.Min, err)
		}
		return "", nil
	}
	u := autoscalingv1alpha1.BoundsApply(ref, namespace, string(l.obj.GetUID()), b.Min, b.Max)
	if err := r.Client.Apply(ctx, client.ApplyConfigurationFromUnstructured(u), client.FieldOwner(index.FieldManager), client.ForceOwnership); err != nil {
		return "", fmt.Errorf("failed to apply minReplicas %d and maxReplicas %d to %s %s: %w", b.Min, b.Max, ref.Kind, klog.KRef(namespace, ref.Name), err)
	}
	return u.GetResourceVersion(), nil // the apply's answer is decoded into u
}

// letGo leaves the target at the baseline of spec (autoscalingv1alpha1.LetGoBounds) and owned
// by no almanac field manager: it writes the baseline,
// then removes almanac's entries from the target's managedFields (a JSON patch that tests
// each entry's manager, so it removes nothing else). No field is removed: an apply without
// them would delete the fields that only almanac owned (minReplicas would fall to 1). A target
// that is gone needs nothing.
func (r *Reconciler) letGo(ctx context.Context, namespace string, ref autoscalingv1alpha1.TargetReference, spec autoscalingv1alpha1.ScheduledPodAutoscalerSpec) error {
	l, err := r.readTarget(ctx, namespace, ref)
	if l == nil || errors.Is(err, errNotServed) {
		return nil
	}
	if err != nil {
		return err
	}
	lo, hi := autoscalingv1alpha1.LetGoBounds(spec, l.max)
	b := timing.Bounds{Min: lo, Max: hi}
	if !upToDateTarget(ref.TargetKind(), l, b) {
		if _, err := r.writeTarget(ctx, namespace, ref, l, b); err != nil {
			return err
		}
		if l, err = r.readTarget(ctx, namespace, ref); l == nil || err != nil {
			return client.IgnoreNotFound(err)
		}
	}
	patch := autoscalingv1alpha1.DisownPatch(l.obj.GetManagedFields(), index.FieldManager)
	if patch == nil {
		return nil
	}
	if err := r.Client.Patch(ctx, l.obj, client.RawPatch(types.JSONPatchType, patch)); err != nil && !apierrors.IsNotFound(err) {
		return fmt.Errorf("failed to remove almanac's field ownership from %s %s: %w", ref.Kind, klog.KRef(namespace, ref.Name), err)
	}
	ctrl.LoggerFrom(ctx).Info("Let go of the target", "target", ref.String(), "minReplicas", lo, "maxReplicas", hi)
	return nil
}

// otherManagers returns the field managers other than almanac's that own the field at path
// (a target's spec.minReplicas, say), sorted: who changed it.
func otherManagers(entries []metav1.ManagedFieldsEntry, path []string) []string {
	var out []string
	for _, e := range entries {
		if e.Manager == index.FieldManager || e.FieldsV1 == nil {
			continue
		}
		var tree map[string]any
		if json.Unmarshal(e.FieldsV1.GetRawBytes(), &tree) != nil {
			continue
		}
		node, ok := any(tree), true
		for _, p := range path {
			m, isMap := node.(map[string]any)
			if !isMap {
				ok = false
				break
			}
			if node, ok = m["f:"+p]; !ok {
				break
			}
		}
		if ok && !slices.Contains(out, e.Manager) {
			out = append(out, e.Manager)
		}
	}
	slices.Sort(out)
	return out
}

// putBacks remembers, per autoscaler, when almanac put back a value that another manager had
// changed, for the fight rule (autoscalingv1alpha1.MaxPutBacks in PutBackWindow). It is
// memory only: after a restart the count starts again.
type putBacks struct {
	mu   sync.Mutex
	seen map[types.NamespacedName][]time.Time
}

// add records a put-back at now and reports how many fall within the window.
func (p *putBacks) add(key types.NamespacedName, now time.Time) int {
	p.mu.Lock()
	defer p.mu.Unlock()
	if p.seen == nil {
		p.seen = map[types.NamespacedName][]time.Time{}
	}
	recent := slices.DeleteFunc(append(p.seen[key], now), func(t time.Time) bool {
		return now.Sub(t) >= autoscalingv1alpha1.PutBackWindow
	})
	p.seen[key] = recent
	return len(recent)
}

func (p *putBacks) forget(key types.NamespacedName) {
	p.mu.Lock()
	defer p.mu.Unlock()
	delete(p.seen, key)
}

// watchTarget makes sure that changes of objects of ref's kind wake the autoscalers attached
// to them: a watch of their metadata (generation and owners), started once per kind.
// HorizontalPodAutoscalers are watched already (typed, from SetupWithManager).
func (r *Reconciler) watchTarget(ref autoscalingv1alpha1.TargetReference) error {
	gvk := ref.GroupVersionKind()
	if ref.TargetKind() == autoscalingv1alpha1.TargetHPA || r.ctrl == nil {
		return nil
	}
	gk := gvk.GroupKind()
	r.watchMu.Lock()
	defer r.watchMu.Unlock()
	if r.watched[gk] {
		return nil
	}
	obj := &metav1.PartialObjectMetadata{}
	obj.SetGroupVersionKind(gvk)
	src := ctrlsource.Kind(r.cache, client.Object(obj), handler.EnqueueRequestsFromMapFunc(r.attachedTo(gk)), targetChanged{})
	if err := r.ctrl.Watch(src); err != nil {
		return fmt.Errorf("failed to watch %s: %w", gk, err)
	}
	if r.watched == nil {
		r.watched = map[schema.GroupKind]bool{}
	}
	r.watched[gk] = true
	return nil
}

// attachedTo maps an object of kind gk to the autoscalers attached to it (or letting go of it).
func (r *Reconciler) attachedTo(gk schema.GroupKind) handler.MapFunc {
	return func(ctx context.Context, obj client.Object) []reconcile.Request {
		list := &autoscalingv1alpha1.ScheduledPodAutoscalerList{}
		if err := r.Client.List(ctx, list, client.InNamespace(obj.GetNamespace()),
			client.MatchingFields{autoscalingv1alpha1.TargetField: autoscalingv1alpha1.TargetIndexValue(gk.Group, gk.Kind, obj.GetName())}); err != nil {
			return nil
		}
		out := make([]reconcile.Request, 0, len(list.Items))
		for i := range list.Items {
			out = append(out, reconcile.Request{NamespacedName: client.ObjectKeyFromObject(&list.Items[i])})
		}
		return out
	}
}

// targetChanged lets through the creation and deletion of a target and the changes of its
// spec (its generation): a status write by the target's own controller is not almanac's
// concern.
type targetChanged struct {
	predicate.Funcs
}

func (targetChanged) Update(e event.UpdateEvent) bool {
	return e.ObjectOld.GetGeneration() != e.ObjectNew.GetGeneration()
}

// conflictMessage says who fights almanac over which field, and what to configure.
func conflictMessage(ref autoscalingv1alpha1.TargetReference, managers []string, field string) string {
	who := "another field manager"
	if len(managers) > 0 {
		who = "field manager " + strings.Join(quoteAll(managers), ", ")
	}
	return fmt.Sprintf("%s keeps changing %s of %s (%d times within %s), and almanac has stopped putting its value back: "+
		"stop that manager from writing the field (Argo CD: ignoreDifferences on /%s with managedFieldsManagers [almanac]; Helm or Kustomize: "+
		"drop the field from the manifest, see docs/scaling.md), then change this ScheduledPodAutoscaler's spec to resume",
		who, field, ref.String(), autoscalingv1alpha1.MaxPutBacks, autoscalingv1alpha1.PutBackWindow, strings.ReplaceAll(field, ".", "/"))
}

func quoteAll(s []string) []string {
	out := make([]string, len(s))
	for i, v := range s {
		out[i] = fmt.Sprintf("%q", v)
	}
	return out
}
