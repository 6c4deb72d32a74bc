package eventjob

import (
	"context"

	batchv1 "k8s.io/api/batch/v1"
	"k8s.io/apimachinery/pkg/types"
	ctrl "sigs.k8s.io/controller-runtime"
	"sigs.k8s.io/controller-runtime/pkg/builder"
	"sigs.k8s.io/controller-runtime/pkg/client"
	"sigs.k8s.io/controller-runtime/pkg/handler"
	"sigs.k8s.io/controller-runtime/pkg/predicate"
	"sigs.k8s.io/controller-runtime/pkg/reconcile"

	batchv1alpha1 "github.com/almanac-dev/almanac/api/batch/v1alpha1"
	"github.com/almanac-dev/almanac/reconcilers/jobs"
)

// SetupWithManager registers the reconciler with mgr, whose cache must have the indexes
// batchv1alpha1.JobControllerField (the upstream Jobs of a CronJob, ScheduledJob or EventJob,
// and an EventJob's own Jobs) and batchv1alpha1.EventJobTriggerField (the EventJobs that
// follow a Job) from api/index.
func (r *Reconciler) SetupWithManager(mgr ctrl.Manager) error {
	b := ctrl.NewControllerManagedBy(mgr).
		// Our own status writes change no generation and need no reconcile.
		For(&batchv1alpha1.EventJob{}, builder.WithPredicates(predicate.GenerationChangedPredicate{})).
		Owns(&batchv1.Job{}).
		Watches(&batchv1.Job{}, handler.EnqueueRequestsFromMapFunc(r.followers),
			builder.WithPredicates(predicate.NewPredicateFuncs(finished))).
		// A change of an EventJob's trigger can close or break a cycle that its followers
		// are on.
		Watches(&batchv1alpha1.EventJob{}, handler.EnqueueRequestsFromMapFunc(r.followersOfEventJob),
			builder.WithPredicates(predicate.GenerationChangedPredicate{}))
	return r.Complete(b, controllerName, DefaultWorkers, r)
}

// finished passes the events of Jobs that have ended: only those can trigger a run.
func finished(obj client.Object) bool {
	j, ok := obj.(*batchv1.Job)
	return ok && jobs.OutcomeOf(j).Finished()
}

// followers maps a Job to the EventJobs in its namespace whose trigger names it or its
// controller.
func (r *Reconciler) followers(ctx context.Context, obj client.Object) []reconcile.Request {
	keys := []string{batchv1alpha1.ControllerKey(batchv1.GroupName, string(batchv1alpha1.TriggerKindJob), obj.GetName())}
	if key := batchv1alpha1.ControllerKeyOf(obj); key != "" {
		keys = append(keys, key)
	}
	return r.followersOf(ctx, obj.GetNamespace(), keys)
}

// followersOfEventJob maps an EventJob to the EventJobs in its namespace that trigger on it.
func (r *Reconciler) followersOfEventJob(ctx context.Context, obj client.Object) []reconcile.Request {
	return r.followersOf(ctx, obj.GetNamespace(), []string{batchv1alpha1.ControllerKey(gvk.Group, gvk.Kind, obj.GetName())})
}

// followersOf returns the EventJobs in namespace whose trigger's UpstreamKey is one of keys.
func (r *Reconciler) followersOf(ctx context.Context, namespace string, keys []string) []reconcile.Request {
	var out []reconcile.Request
	for _, key := range keys {
		list := &batchv1alpha1.EventJobList{}
		if err := r.Client.List(ctx, list, client.InNamespace(namespace), client.MatchingFields{batchv1alpha1.EventJobTriggerField: key}); err != nil {
			ctrl.LoggerFrom(ctx).Error(err, "Failed to list the EventJobs that follow a Job", "key", key)
			continue
		}
		for _, ej := range list.Items {
			out = append(out, reconcile.Request{NamespacedName: types.NamespacedName{Namespace: ej.Namespace, Name: ej.Name}})
		}
	}
	return out
}
