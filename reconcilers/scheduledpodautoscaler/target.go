package scheduledpodautoscaler

import (
	"context"
	"fmt"
	"strings"
	"sync"
	"time"

	autoscalingv2 "k8s.io/api/autoscaling/v2"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
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
	"github.com/almanac-dev/almanac/api/putback"
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

// targets adapts the reconciler's clients to autoscalingv1alpha1.TargetClient: reads around
// the cache (a subresource read is never served from it), writes through the client.
type targets struct{ r *Reconciler }

func (t targets) Get(ctx context.Context, obj *unstructured.Unstructured) error {
	return t.r.APIReader.Get(ctx, client.ObjectKeyFromObject(obj), obj)
}

func (t targets) GetSubResource(ctx context.Context, obj *unstructured.Unstructured, subresource string, into *unstructured.Unstructured) error {
	return t.r.Client.SubResource(subresource).Get(ctx, obj, into)
}

func (t targets) Patch(ctx context.Context, obj *unstructured.Unstructured, subresource string, pt types.PatchType, data []byte, opts metav1.PatchOptions) error {
	po := client.PatchOptions{FieldManager: opts.FieldManager, Force: opts.Force}
	if subresource == "" {
		return t.r.Client.Patch(ctx, obj, client.RawPatch(pt, data), &po)
	}
	return t.r.Client.SubResource(subresource).Patch(ctx, obj, client.RawPatch(pt, data), &client.SubResourcePatchOptions{PatchOptions: po})
}

// readTarget reads ref in namespace around the cache: nil when it does not exist.
func (r *Reconciler) readTarget(ctx context.Context, namespace string, ref autoscalingv1alpha1.TargetReference) (*autoscalingv1alpha1.LiveTarget, error) {
	return autoscalingv1alpha1.ReadTarget(ctx, targets{r}, namespace, ref)
}

// readTargetCached is readTarget that reads an autoscaling/v2 HorizontalPodAutoscaler from the
// cache, which has them (SetupWithManager watches them), so that a reconcile at a boundary
// costs no GET: at 100 attached autoscalers on one boundary the GETs doubled the requests per
// transition (docs/performance.md). last is the write of an earlier reconcile whose transition
// is not in status yet (nil if none): a cached HPA that is not the version that write returned
// is read around the cache, as the generated HPAs are. The cache keeps only almanac's
// managedFields entries of HPAs (api/index.TrimHPA): who changed a field is read around it.
func (r *Reconciler) readTargetCached(ctx context.Context, namespace string, ref autoscalingv1alpha1.TargetReference, last *applied) (*autoscalingv1alpha1.LiveTarget, error) {
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
	return &autoscalingv1alpha1.LiveTarget{Object: u, Min: hpa.Spec.MinReplicas, Max: &hpa.Spec.MaxReplicas}, nil
}

// writeTarget writes the bounds b to the target and returns the target's resourceVersion
// that the write returned ("" for a scale subresource).
func (r *Reconciler) writeTarget(ctx context.Context, namespace string, ref autoscalingv1alpha1.TargetReference, l *autoscalingv1alpha1.LiveTarget, b timing.Bounds) (string, error) {
	return autoscalingv1alpha1.WriteBounds(ctx, targets{r}, namespace, ref, l, b.Min, b.Max, index.FieldManager)
}

// letGo leaves the target at the baseline of spec and owned by no almanac field manager
// (autoscalingv1alpha1.LetGo, which almanac release runs too). An error (the target could not
// be read or written) keeps the autoscaler's hold on the target: its finalizer and
// status.target stay until a retry succeeds.
func (r *Reconciler) letGo(ctx context.Context, namespace string, ref autoscalingv1alpha1.TargetReference, spec autoscalingv1alpha1.ScheduledPodAutoscalerSpec) error {
	if err := autoscalingv1alpha1.LetGo(ctx, targets{r}, namespace, ref, spec, index.FieldManager); err != nil {
		return err
	}
	ctrl.LoggerFrom(ctx).Info("Let go of the target", "target", ref.String())
	return nil
}

// otherManagers returns the field managers other than almanac's that own the field at path
// (a target's spec.minReplicas, say), sorted: who changed it (api/putback).
func otherManagers(entries []metav1.ManagedFieldsEntry, path []string) []string {
	return putback.OtherManagers(entries, index.FieldManager, path)
}

// putBacks remembers, per autoscaler, when almanac put back a value that another manager had
// changed, for the fight rule (autoscalingv1alpha1.MaxPutBacks in PutBackWindow), and the
// generation of the spec at which the rule last stopped almanac. It is memory only: after a
// restart the count starts again.
type putBacks struct {
	mu   sync.Mutex
	seen map[types.NamespacedName]*fight
}

// fight is one autoscaler's put-backs.
type fight struct {
	at []time.Time
	// stoppedAt is the generation at which the fight rule last stopped almanac (0: never).
	stoppedAt int64
}

// add records a put-back at now by the autoscaler at generation, and reports whether the
// fight rule stops almanac: more than MaxPutBacks within PutBackWindow. The count starts again
// when the spec has changed since the rule last stopped almanac: that change is what the
// Conflict condition asks for to resume (conflictMessage), and a resume that met the old
// put-backs would stop again at the first write of the other manager, or at once.
func (p *putBacks) add(key types.NamespacedName, generation int64, now time.Time) bool {
	p.mu.Lock()
	defer p.mu.Unlock()
	if p.seen == nil {
		p.seen = map[types.NamespacedName]*fight{}
	}
	f := p.seen[key]
	if f == nil || f.stoppedAt != 0 && f.stoppedAt != generation {
		f = &fight{}
		p.seen[key] = f
	}
	var allowed bool
	if f.at, allowed = putback.Count(f.at, now); allowed {
		return false
	}
	f.stoppedAt = generation
	return true
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
