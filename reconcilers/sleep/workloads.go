package sleep

import (
	"context"
	"errors"
	"fmt"
	"slices"
	"time"

	appsv1 "k8s.io/api/apps/v1"
	autoscalingv1 "k8s.io/api/autoscaling/v1"
	batchv1 "k8s.io/api/batch/v1"
	corev1 "k8s.io/api/core/v1"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	"k8s.io/apimachinery/pkg/api/meta"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"
	"k8s.io/apimachinery/pkg/labels"
	"k8s.io/apimachinery/pkg/runtime/schema"
	"sigs.k8s.io/controller-runtime/pkg/client"
	"sigs.k8s.io/controller-runtime/pkg/handler"
	ctrlsource "sigs.k8s.io/controller-runtime/pkg/source"

	batchv1alpha1 "github.com/almanac-dev/almanac/api/batch/v1alpha1"
	sleepv1alpha1 "github.com/almanac-dev/almanac/api/sleep/v1alpha1"
	"github.com/almanac-dev/almanac/api/sleeping"
)

var (
	deploymentGK   = schema.GroupKind{Group: "apps", Kind: "Deployment"}
	statefulSetGK  = schema.GroupKind{Group: "apps", Kind: "StatefulSet"}
	replicaSetGK   = schema.GroupKind{Group: "apps", Kind: "ReplicaSet"}
	cronJobGK      = schema.GroupKind{Group: "batch", Kind: "CronJob"}
	scheduledJobGK = batchv1alpha1.GroupVersion.WithKind("ScheduledJob").GroupKind()
	eventJobGK     = batchv1alpha1.GroupVersion.WithKind("EventJob").GroupKind()
	scaledObjectGK = schema.GroupKind{Group: "keda.sh", Kind: "ScaledObject"}
)

// scope is where a sleep acts: one namespace, or the namespaces a ClusterSleep selects.
type scope struct {
	// namespace of a Sleep ("" for a ClusterSleep: every namespace in selected).
	namespace string
	selected  map[string]bool
	// next is when a namespace's opt-out ends (zero: none ends).
	next time.Time
}

func (s scope) in(namespace string) bool {
	if s.namespace != "" {
		return namespace == s.namespace
	}
	return s.selected[namespace]
}

// scopeOf returns where h acts. A ClusterSleep selects the namespaces of
// spec.namespaces and those spec.namespaceSelector matches, but never the system's, almanac's
// own, or one annotated almanac.dev/stay-awake (now).
func (r *Reconciler) scopeOf(ctx context.Context, h *holder) (scope, error) {
	if h.cluster == nil {
		return scope{namespace: h.namespace}, nil
	}
	sel := labels.Nothing()
	if h.cluster.NamespaceSelector != nil {
		s, err := metav1.LabelSelectorAsSelector(h.cluster.NamespaceSelector)
		if err != nil {
			return scope{}, fmt.Errorf("spec.namespaceSelector: %w", err)
		}
		sel = s
	}
	list := &metav1.PartialObjectMetadataList{}
	list.SetGroupVersionKind(corev1.SchemeGroupVersion.WithKind("NamespaceList"))
	if err := r.Client.List(ctx, list); err != nil {
		return scope{}, fmt.Errorf("failed to list the namespaces: %w", err)
	}
	now := r.Clock.Now()
	out := scope{selected: map[string]bool{}}
	for i := range list.Items {
		ns := &list.Items[i]
		if slices.Contains(SystemNamespaces, ns.Name) || ns.Name == r.OwnNamespace {
			continue
		}
		if !slices.Contains(h.cluster.Namespaces, ns.Name) && !sel.Matches(labels.Set(ns.Labels)) {
			continue
		}
		if awake, until, _ := sleepv1alpha1.StayAwake(ns.Annotations, now); awake {
			if !until.IsZero() && (out.next.IsZero() || until.Before(out.next)) {
				out.next = until // then the namespace sleeps, if the sleep still holds
			}
			continue
		}
		out.selected[ns.Name] = true
	}
	return out, nil
}

// kindsToList are the kinds whose workloads a reconcile reads: those of spec.kinds, and the
// built-in ones always (a kind taken out of spec.kinds may still have workloads asleep, which
// must wake).
func kindsToList(plan *sleeping.Plan) []schema.GroupVersionKind {
	var out []schema.GroupVersionKind
	seen := map[schema.GroupKind]bool{}
	for _, k := range sleepv1alpha1.DefaultKinds() {
		gvk := k.GroupVersionKind()
		seen[gvk.GroupKind()] = true
		out = append(out, gvk)
	}
	for _, k := range plan.Kinds {
		if !seen[k.GVK.GroupKind()] {
			seen[k.GVK.GroupKind()] = true
			out = append(out, k.GVK)
		}
	}
	return out
}

// workloads reads the workloads of the kinds to list, in h's namespace or (a ClusterSleep)
// every namespace, from the cache, as api/sleeping sees them. A kind the cluster does not
// serve is skipped, and named in notServed (KEDA not installed is no news: ScaledObject is
// only named when the spec names it).
func (r *Reconciler) workloads(ctx context.Context, h *holder, plan *sleeping.Plan, sc scope) (out []sleeping.Workload, notServed []string, err error) {
	var opts []client.ListOption
	if h.namespace != "" {
		opts = append(opts, client.InNamespace(h.namespace))
	}
	opts = append(opts, client.UnsafeDisableDeepCopy) // read only
	scaledBy := map[string]string{}                   // "namespace/Kind/name" of a ScaledObject's target → its name
	var scaledObjects []sleeping.Workload
	if served, err := r.watchKind(ctx, scaledObjectGK); err != nil {
		return nil, nil, err
	} else if served {
		list := &unstructured.UnstructuredList{}
		list.SetGroupVersionKind(schema.GroupVersionKind{Group: "keda.sh", Version: "v1alpha1", Kind: "ScaledObjectList"})
		if err := r.Client.List(ctx, list, opts...); err != nil {
			return nil, nil, fmt.Errorf("failed to list the ScaledObjects: %w", err)
		}
		for i := range list.Items {
			u := &list.Items[i]
			kind, _, _ := unstructured.NestedString(u.Object, "spec", "scaleTargetRef", "kind")
			name, _, _ := unstructured.NestedString(u.Object, "spec", "scaleTargetRef", "name")
			if kind == "" {
				kind = "Deployment"
			}
			scaledBy[u.GetNamespace()+"/"+kind+"/"+name] = u.GetName()
			scaledObjects = append(scaledObjects, r.workload(u, u.GroupVersionKind(), sc, nil))
		}
		// Listed whatever spec.kinds says: one may hold a record (api/sleeping decides).
		out = append(out, scaledObjects...)
	}
	for _, gvk := range kindsToList(plan) {
		gk := gvk.GroupKind()
		var items []sleeping.Workload
		switch gk {
		case scaledObjectGK:
			continue
		case deploymentGK:
			list := &appsv1.DeploymentList{}
			if err := r.Client.List(ctx, list, opts...); err != nil {
				return nil, nil, err
			}
			for i := range list.Items {
				d := &list.Items[i]
				w := r.workload(d, gvk, sc, scaledBy)
				w.Replicas = replicasOf(d.Spec.Replicas)
				w.Ready = *w.Replicas == 0 || d.Status.ObservedGeneration >= d.Generation && d.Status.ReadyReplicas >= *w.Replicas
				w.PodCPUMillicores, w.PodMemoryMebibytes = requests(&d.Spec.Template)
				items = append(items, w)
			}
		case statefulSetGK:
			list := &appsv1.StatefulSetList{}
			if err := r.Client.List(ctx, list, opts...); err != nil {
				return nil, nil, err
			}
			for i := range list.Items {
				s := &list.Items[i]
				w := r.workload(s, gvk, sc, scaledBy)
				w.Replicas = replicasOf(s.Spec.Replicas)
				w.Ready = *w.Replicas == 0 || s.Status.ObservedGeneration >= s.Generation && s.Status.ReadyReplicas >= *w.Replicas
				w.PodCPUMillicores, w.PodMemoryMebibytes = requests(&s.Spec.Template)
				items = append(items, w)
			}
		case replicaSetGK:
			list := &appsv1.ReplicaSetList{}
			if err := r.Client.List(ctx, list, opts...); err != nil {
				return nil, nil, err
			}
			for i := range list.Items {
				s := &list.Items[i]
				w := r.workload(s, gvk, sc, scaledBy)
				w.Replicas = replicasOf(s.Spec.Replicas)
				w.Ready = *w.Replicas == 0 || s.Status.ObservedGeneration >= s.Generation && s.Status.ReadyReplicas >= *w.Replicas
				w.PodCPUMillicores, w.PodMemoryMebibytes = requests(&s.Spec.Template)
				items = append(items, w)
			}
		case cronJobGK:
			list := &batchv1.CronJobList{}
			if err := r.Client.List(ctx, list, opts...); err != nil {
				return nil, nil, err
			}
			for i := range list.Items {
				c := &list.Items[i]
				w := r.workload(c, gvk, sc, nil)
				w.Suspend, w.Ready = new(c.Spec.Suspend != nil && *c.Spec.Suspend), true
				items = append(items, w)
			}
		case scheduledJobGK:
			list := &batchv1alpha1.ScheduledJobList{}
			if err := r.Client.List(ctx, list, opts...); err != nil {
				return nil, nil, err
			}
			for i := range list.Items {
				s := &list.Items[i]
				w := r.workload(s, gvk, sc, nil)
				w.Suspend, w.Ready = new(s.Spec.Suspend), true
				items = append(items, w)
			}
		case eventJobGK:
			list := &batchv1alpha1.EventJobList{}
			if err := r.Client.List(ctx, list, opts...); err != nil {
				return nil, nil, err
			}
			for i := range list.Items {
				e := &list.Items[i]
				w := r.workload(e, gvk, sc, nil)
				w.Suspend, w.Ready = new(e.Spec.Suspend), true
				items = append(items, w)
			}
		default:
			served, err := r.watchKind(ctx, gk)
			if err != nil {
				return nil, nil, err
			}
			if !served {
				notServed = append(notServed, fmt.Sprintf("%s (%s): grant almanac's manager get, list, watch and patch on it and patch on its scale subresource (docs/security.md)",
					gvk.Kind, gvk.GroupVersion()))
				continue
			}
			list := &unstructured.UnstructuredList{}
			list.SetGroupVersionKind(gvk.GroupVersion().WithKind(gvk.Kind + "List"))
			if err := r.Client.List(ctx, list, opts...); err != nil {
				return nil, nil, fmt.Errorf("failed to list the %s: %w", gvk.Kind, err)
			}
			for i := range list.Items {
				u := &list.Items[i]
				w := r.workload(u, gvk, sc, scaledBy)
				if v, ok, _ := unstructured.NestedInt64(u.Object, "spec", "replicas"); ok {
					w.Replicas = new(int32(v))
				} else if err := r.readScale(ctx, &w); err != nil {
					notServed = append(notServed, fmt.Sprintf("%s %s/%s: %v", gvk.Kind, w.Namespace, w.Name, err))
					continue
				}
				w.Ready = true
				if ready, ok, _ := unstructured.NestedInt64(u.Object, "status", "readyReplicas"); ok && w.Replicas != nil {
					w.Ready = int32(ready) >= *w.Replicas
				}
				items = append(items, w)
			}
		}
		out = append(out, items...)
	}
	return out, notServed, nil
}

// workload is obj as api/sleeping sees it, without what depends on its kind.
func (r *Reconciler) workload(obj client.Object, gvk schema.GroupVersionKind, sc scope, scaledBy map[string]string) sleeping.Workload {
	w := sleeping.Workload{
		GVK: gvk, Handling: sleepv1alpha1.HandlingOf(gvk.GroupKind()),
		Namespace: obj.GetNamespace(), Name: obj.GetName(), ResourceVersion: obj.GetResourceVersion(),
		Labels: obj.GetLabels(), Annotations: obj.GetAnnotations(), Deleting: obj.GetDeletionTimestamp() != nil,
		// A workload that another object controls (a ReplicaSet of a Deployment, a Deployment
		// of an operator) is its controller's to scale: never selected.
		InScope: sc.in(obj.GetNamespace()) && metav1.GetControllerOf(obj) == nil,
		Ready:   true,
	}
	if scaledBy != nil {
		w.ScaledBy = scaledBy[obj.GetNamespace()+"/"+gvk.Kind+"/"+obj.GetName()]
	}
	return w
}

func replicasOf(p *int32) *int32 {
	if p == nil {
		return new(int32(1)) // the API's default
	}
	return new(*p)
}

// requests are one Pod's requests of a template: CPU in millicores, memory in MiB.
func requests(t *corev1.PodTemplateSpec) (cpu, mem int64) {
	for _, c := range t.Spec.Containers {
		if q, ok := c.Resources.Requests[corev1.ResourceCPU]; ok {
			cpu += q.MilliValue()
		}
		if q, ok := c.Resources.Requests[corev1.ResourceMemory]; ok {
			mem += q.Value() / (1 << 20)
		}
	}
	return cpu, mem
}

// watchKind makes sure that a kind the reconciler does not watch from its start (a
// ScaledObject, a kind with a scale subresource) is watched, once, if the cluster serves it and
// the manager may list it; it reports whether it is watched. A kind that is not served, or that
// the manager may not list (a kind with a scale subresource needs a role of its own: see
// docs/security.md), starts no informer that would fail forever and hold up every reconcile.
func (r *Reconciler) watchKind(ctx context.Context, gk schema.GroupKind) (bool, error) {
	r.watchMu.Lock()
	defer r.watchMu.Unlock()
	if r.watched[gk] {
		return true, nil
	}
	// A kind found unserved or unreadable is asked about again a minute later, not at every
	// reconcile: a miss makes the RESTMapper ask the API server's discovery again.
	if at, ok := r.unwatched[gk]; ok && r.Clock.Since(at) < time.Minute {
		return false, nil
	}
	mapping, err := r.mapper.RESTMapping(gk)
	switch {
	case meta.IsNoMatchError(err):
		r.unwatched[gk] = r.Clock.Now()
		return false, nil
	case err != nil:
		return false, fmt.Errorf("failed to find the resource of %s: %w", gk, err)
	}
	probe := &unstructured.UnstructuredList{}
	probe.SetGroupVersionKind(mapping.GroupVersionKind.GroupVersion().WithKind(mapping.GroupVersionKind.Kind + "List"))
	if err := r.APIReader.List(ctx, probe, client.Limit(1)); err != nil {
		if apierrors.IsForbidden(err) {
			r.unwatched[gk] = r.Clock.Now()
			return false, nil
		}
		return false, fmt.Errorf("failed to list %s: %w", gk, err)
	}
	u := &unstructured.Unstructured{}
	u.SetGroupVersionKind(mapping.GroupVersionKind)
	for kind, c := range r.ctrls {
		src := ctrlsource.Kind(r.cache, client.Object(u), handler.EnqueueRequestsFromMapFunc(r.sleepsOf(kind)), workloadChanged{})
		if err := c.Watch(src); err != nil {
			return false, fmt.Errorf("failed to watch %s: %w", gk, err)
		}
	}
	r.watched[gk] = true
	return true, nil
}

// readScale reads the replicas of a workload's scale subresource (a kind that sleeps through
// it and whose object has no spec.replicas).
func (r *Reconciler) readScale(ctx context.Context, w *sleeping.Workload) error {
	u := &unstructured.Unstructured{}
	u.SetGroupVersionKind(w.GVK)
	u.SetNamespace(w.Namespace)
	u.SetName(w.Name)
	scale := &autoscalingv1.Scale{}
	if err := r.Client.SubResource("scale").Get(ctx, u, scale); err != nil {
		if apierrors.IsNotFound(err) {
			return errors.New("it has no scale subresource")
		}
		return err
	}
	w.Replicas = new(scale.Spec.Replicas)
	return nil
}
