package sleep

import (
	"context"

	appsv1 "k8s.io/api/apps/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"
	"k8s.io/apimachinery/pkg/types"
	"sigs.k8s.io/controller-runtime/pkg/client"
	"sigs.k8s.io/controller-runtime/pkg/event"
	"sigs.k8s.io/controller-runtime/pkg/handler"
	"sigs.k8s.io/controller-runtime/pkg/predicate"
	"sigs.k8s.io/controller-runtime/pkg/reconcile"

	calendarv1alpha1 "github.com/almanac-dev/almanac/api/calendar/v1alpha1"
	sleepv1alpha1 "github.com/almanac-dev/almanac/api/sleep/v1alpha1"
)

// sleepsOf maps a workload to the sleeps of kind that may select it or hold it: the Sleeps of
// its namespace (for kind Sleep) or every ClusterSleep, and the holder its record names.
func (r *Reconciler) sleepsOf(kind string) handler.MapFunc {
	return func(ctx context.Context, obj client.Object) []reconcile.Request {
		var out []reconcile.Request
		if k, ns, name, ok := sleepv1alpha1.ParseHolder(holderOf(obj)); ok && k == kind {
			out = append(out, reconcile.Request{NamespacedName: types.NamespacedName{Namespace: ns, Name: name}})
		}
		if kind == sleepv1alpha1.KindClusterSleep {
			return append(out, r.allClusterSleeps(ctx, obj)...)
		}
		list := &sleepv1alpha1.SleepList{}
		if err := r.Client.List(ctx, list, client.InNamespace(obj.GetNamespace())); err != nil {
			return out
		}
		for i := range list.Items {
			key := types.NamespacedName{Namespace: list.Items[i].Namespace, Name: list.Items[i].Name}
			if len(out) == 0 || out[0].NamespacedName != key {
				out = append(out, reconcile.Request{NamespacedName: key})
			}
		}
		return out
	}
}

// holderOf reads the holder from a workload's record ("" when it has none or it does not read).
func holderOf(obj client.Object) string {
	rec, err := sleepv1alpha1.DecodeRecord(obj.GetAnnotations())
	if err != nil || rec == nil {
		return ""
	}
	return rec.By
}

// allClusterSleeps maps anything to every ClusterSleep: they are few.
func (r *Reconciler) allClusterSleeps(ctx context.Context, _ client.Object) []reconcile.Request {
	list := &sleepv1alpha1.ClusterSleepList{}
	if err := r.Client.List(ctx, list); err != nil {
		return nil
	}
	out := make([]reconcile.Request, 0, len(list.Items))
	for i := range list.Items {
		out = append(out, reconcile.Request{NamespacedName: types.NamespacedName{Name: list.Items[i].Name}})
	}
	return out
}

// calendarUsers maps a Calendar or ClusterCalendar to the sleeps of kind that name it (the
// index calendarv1alpha1.CalendarField).
func calendarUsers(c client.Reader, kind string) handler.MapFunc {
	return func(ctx context.Context, obj client.Object) []reconcile.Request {
		ref := calendarv1alpha1.CalendarReference{Kind: calendarv1alpha1.KindCalendar, Name: obj.GetName()}
		if _, cluster := obj.(*calendarv1alpha1.ClusterCalendar); cluster {
			ref.Kind = calendarv1alpha1.KindClusterCalendar
		}
		key := client.MatchingFields{calendarv1alpha1.CalendarField: calendarv1alpha1.ReferenceKey(obj.GetNamespace(), ref)}
		var out []reconcile.Request
		if kind == sleepv1alpha1.KindClusterSleep {
			list := &sleepv1alpha1.ClusterSleepList{}
			if err := c.List(ctx, list, key); err == nil {
				for i := range list.Items {
					out = append(out, reconcile.Request{NamespacedName: types.NamespacedName{Name: list.Items[i].Name}})
				}
			}
			return out
		}
		list := &sleepv1alpha1.SleepList{}
		if err := c.List(ctx, list, key); err == nil {
			for i := range list.Items {
				out = append(out, reconcile.Request{NamespacedName: types.NamespacedName{Namespace: list.Items[i].Namespace, Name: list.Items[i].Name}})
			}
		}
		return out
	}
}

// workloadChanged lets through what can change a sleep's decision about a workload: its
// creation and deletion, a change of its spec (generation), labels, annotations (the record,
// an opt-out) or owners, and of its readiness (what a wake waits for). The other status writes
// of its controller are ignored.
type workloadChanged struct {
	predicate.Funcs
}

func (workloadChanged) Update(e event.UpdateEvent) bool {
	o, n := e.ObjectOld, e.ObjectNew
	if o.GetGeneration() != n.GetGeneration() || !equalStrings(o.GetLabels(), n.GetLabels()) || !equalStrings(o.GetAnnotations(), n.GetAnnotations()) ||
		len(o.GetOwnerReferences()) != len(n.GetOwnerReferences()) || (o.GetDeletionTimestamp() == nil) != (n.GetDeletionTimestamp() == nil) {
		return true
	}
	return readiness(o) != readiness(n)
}

// readiness is what a wake reads of a workload's status: ready replicas and the generation
// its controller has seen.
func readiness(obj client.Object) [2]int64 {
	switch w := obj.(type) {
	case *appsv1.Deployment:
		return [2]int64{int64(w.Status.ReadyReplicas), w.Status.ObservedGeneration}
	case *appsv1.StatefulSet:
		return [2]int64{int64(w.Status.ReadyReplicas), w.Status.ObservedGeneration}
	case *appsv1.ReplicaSet:
		return [2]int64{int64(w.Status.ReadyReplicas), w.Status.ObservedGeneration}
	case *unstructured.Unstructured:
		ready, _, _ := unstructured.NestedInt64(w.Object, "status", "readyReplicas")
		return [2]int64{ready, 0}
	case *metav1.PartialObjectMetadata:
		return [2]int64{}
	}
	return [2]int64{}
}

func equalStrings(a, b map[string]string) bool {
	if len(a) != len(b) {
		return false
	}
	for k, v := range a {
		if w, ok := b[k]; !ok || w != v {
			return false
		}
	}
	return true
}
