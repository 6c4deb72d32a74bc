// Package sleep reconciles Sleeps (one namespace) and ClusterSleeps (many): it puts the
// workloads they select to sleep at their boundary and wakes them, in tiers, at a pace and a
// lead early, exactly as they were.
//
// It owns, on each workload it puts to sleep, the fields a sleep changes (replicas, suspend,
// KEDA's paused-replicas) and the record annotation (sleepv1alpha1.RecordAnnotation), written
// by merge patches under the field manager "almanac" with the workload's resourceVersion as a
// precondition; at wake it puts back the record's values, removes the record, and removes its
// managedFields entries, so that it owns nothing of an awake workload. It owns the status of
// Sleeps and ClusterSleeps, and their finalizer (sleepv1alpha1.Finalizer), by which a sleep
// being deleted wakes what it holds first.
//
// It watches Sleeps and ClusterSleeps; Deployments, StatefulSets, ReplicaSets, CronJobs,
// ScheduledJobs and EventJobs (typed, trimmed in the cache: api/index.TrimWorkload), and, once
// a sleep names them and the cluster serves them, KEDA ScaledObjects and the other kinds of
// spec.kinds (unstructured); Namespaces (their metadata, for ClusterSleeps); and Calendars and
// ClusterCalendars (the index calendarv1alpha1.CalendarField). A workload's change wakes the
// Sleeps of its namespace, every ClusterSleep, and the sleep its record names.
//
// What a sleep does at an instant is api/sleeping's: a pure function of the spec, the
// calendars, the workloads with their records, the wake under way and now. The reconciler
// reads, asks it, writes what it says, and requeues at the next boundary, the next instant
// the pace frees up, or a tier's timeout.
package sleep

import (
	"context"
	"fmt"
	"os"
	"sync"
	"time"

	appsv1 "k8s.io/api/apps/v1"
	batchv1 "k8s.io/api/batch/v1"
	corev1 "k8s.io/api/core/v1"
	"k8s.io/apimachinery/pkg/api/meta"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/runtime/schema"
	"k8s.io/apimachinery/pkg/types"
	"k8s.io/utils/clock"
	ctrl "sigs.k8s.io/controller-runtime"
	"sigs.k8s.io/controller-runtime/pkg/builder"
	"sigs.k8s.io/controller-runtime/pkg/cache"
	"sigs.k8s.io/controller-runtime/pkg/client"
	"sigs.k8s.io/controller-runtime/pkg/controller"
	"sigs.k8s.io/controller-runtime/pkg/handler"
	"sigs.k8s.io/controller-runtime/pkg/predicate"

	batchv1alpha1 "github.com/almanac-dev/almanac/api/batch/v1alpha1"
	calendarv1alpha1 "github.com/almanac-dev/almanac/api/calendar/v1alpha1"
	sleepv1alpha1 "github.com/almanac-dev/almanac/api/sleep/v1alpha1"
	"github.com/almanac-dev/almanac/reconcilers/base"
)

// The controllers' names (their metrics and lanes).
const (
	sleepController        = "sleep"
	clusterSleepController = "clustersleep"
)

// DefaultWorkers is how many sleeps each controller reconciles at once: sleeps are few (one per
// namespace, a handful cluster-wide), and one reconcile writes all of a sleep's workloads
// (DefaultWrites at a time).
const DefaultWorkers = 8

// DefaultWrites is how many workloads one reconcile writes at once: at a boundary a sleep of a
// thousand workloads sends a thousand patches, which go out this many at a time (the API
// server's priority and fairness queues what it cannot take at once).
const DefaultWrites = 32

// SystemNamespaces are never put to sleep by a ClusterSleep, whatever it selects; nor is the
// namespace almanac runs in.
var SystemNamespaces = []string{"kube-system", "kube-public", "kube-node-lease"}

// Reconciler reconciles Sleeps and ClusterSleeps. Its Client reads from the manager's cache,
// with the index calendarv1alpha1.CalendarField of both kinds (api/index).
type Reconciler struct {
	base.Base
	// OwnNamespace is the namespace almanac runs in (POD_NAMESPACE), which no ClusterSleep
	// puts to sleep.
	OwnNamespace string
	// Writes is how many workloads a reconcile writes at once.
	Writes int

	cache   cache.Cache
	mapper  meta.RESTMapper
	ctrls   map[string]controller.Controller
	watchMu sync.Mutex
	watched map[schema.GroupKind]bool
	// unwatched are the kinds found not served or not readable, and when.
	unwatched map[schema.GroupKind]time.Time
}

// New returns a Reconciler that uses mgr's clients and takes "now" from clk.
func New(mgr ctrl.Manager, clk clock.PassiveClock, opts ...base.Option) *Reconciler {
	r := &Reconciler{
		Base:         base.NewBase(mgr, clk, "almanac-sleep", opts...),
		OwnNamespace: os.Getenv("POD_NAMESPACE"),
		Writes:       DefaultWrites,
	}
	// A sleep's status is a record that gates writes (the wake under way, its tier and the
	// Pods it started within the last minute): read as the Job owners read theirs.
	r.Records = base.NewRecords()
	return r
}

// +kubebuilder:rbac:groups=almanac.dev,resources=sleeps;clustersleeps,verbs=get;list;watch;patch
// +kubebuilder:rbac:groups=almanac.dev,resources=sleeps/status;clustersleeps/status,verbs=get;patch
// +kubebuilder:rbac:groups=almanac.dev,resources=sleeps/finalizers;clustersleeps/finalizers,verbs=update
// +kubebuilder:rbac:groups=apps,resources=deployments;statefulsets;replicasets,verbs=get;list;watch;patch
// +kubebuilder:rbac:groups=batch,resources=cronjobs,verbs=get;list;watch;patch
// +kubebuilder:rbac:groups=batch.almanac.dev,resources=scheduledjobs;eventjobs,verbs=get;list;watch;patch
// +kubebuilder:rbac:groups=keda.sh,resources=scaledobjects,verbs=get;list;watch;patch
// +kubebuilder:rbac:groups="",resources=namespaces,verbs=get;list;watch
// +kubebuilder:rbac:groups=events.k8s.io,resources=events,verbs=create;patch

// SetupWithManager registers the two controllers with mgr, whose cache must have the index
// calendarv1alpha1.CalendarField of Sleeps and ClusterSleeps (api/index).
func (r *Reconciler) SetupWithManager(mgr ctrl.Manager) error {
	r.cache, r.ctrls, r.watched, r.unwatched = mgr.GetCache(), map[string]controller.Controller{}, map[schema.GroupKind]bool{}, map[schema.GroupKind]time.Time{}
	r.mapper = mgr.GetRESTMapper()
	for _, kind := range []string{sleepv1alpha1.KindSleep, sleepv1alpha1.KindClusterSleep} {
		var obj client.Object = &sleepv1alpha1.Sleep{}
		name := sleepController
		if kind == sleepv1alpha1.KindClusterSleep {
			obj, name = &sleepv1alpha1.ClusterSleep{}, clusterSleepController
		}
		b := ctrl.NewControllerManagedBy(mgr).
			For(obj, builder.WithPredicates(predicate.Or(predicate.GenerationChangedPredicate{}, predicate.AnnotationChangedPredicate{})))
		workloads := handler.EnqueueRequestsFromMapFunc(r.sleepsOf(kind))
		for _, w := range []client.Object{&appsv1.Deployment{}, &appsv1.StatefulSet{}, &appsv1.ReplicaSet{}, &batchv1.CronJob{},
			&batchv1alpha1.ScheduledJob{}, &batchv1alpha1.EventJob{}} {
			b = b.Watches(w, workloads, builder.WithPredicates(workloadChanged{}))
		}
		if kind == sleepv1alpha1.KindClusterSleep {
			ns := &metav1.PartialObjectMetadata{}
			ns.SetGroupVersionKind(corev1.SchemeGroupVersion.WithKind("Namespace"))
			b = b.Watches(ns, handler.EnqueueRequestsFromMapFunc(r.allClusterSleeps), builder.WithPredicates(
				predicate.Or(predicate.LabelChangedPredicate{}, predicate.AnnotationChangedPredicate{})))
		}
		byCalendar := handler.EnqueueRequestsFromMapFunc(calendarUsers(mgr.GetClient(), kind))
		b = b.Watches(&calendarv1alpha1.Calendar{}, byCalendar, builder.WithPredicates(predicate.GenerationChangedPredicate{})).
			Watches(&calendarv1alpha1.ClusterCalendar{}, byCalendar, builder.WithPredicates(predicate.GenerationChangedPredicate{}))
		c, err := r.Build(b, name, DefaultWorkers, r)
		if err != nil {
			return fmt.Errorf("failed to set up the %s controller: %w", kind, err)
		}
		r.ctrls[kind] = c
	}
	return nil
}

// load reads the sleep that req names with ReadRecord: its status holds the wake under way
// (its tier, the Pods it started within the last minute), which the next wake steps depend on,
// so a cached copy behind the last status write is never acted on (base.Records).
func (r *Reconciler) load(ctx context.Context, kind string, key types.NamespacedName) (*holder, error) {
	if kind == sleepv1alpha1.KindClusterSleep {
		cs := &sleepv1alpha1.ClusterSleep{}
		if err := r.ReadRecord(ctx, key, cs); err != nil {
			return nil, err
		}
		return &holder{kind: kind, obj: cs, spec: &cs.Spec.SleepSpec, status: &cs.Status, cluster: &cs.Spec}, nil
	}
	s := &sleepv1alpha1.Sleep{}
	if err := r.ReadRecord(ctx, key, s); err != nil {
		return nil, err
	}
	return &holder{kind: kind, obj: s, spec: &s.Spec, status: &s.Status, namespace: s.Namespace}, nil
}

// holder is a Sleep or a ClusterSleep.
type holder struct {
	kind string
	obj  client.Object
	spec *sleepv1alpha1.SleepSpec
	// status points into obj.
	status *sleepv1alpha1.SleepStatus
	// cluster is a ClusterSleep's spec; nil for a Sleep.
	cluster *sleepv1alpha1.ClusterSleepSpec
	// namespace is a Sleep's; "" for a ClusterSleep.
	namespace string
}

// name is the holder's name in records.
func (h *holder) name() string { return sleepv1alpha1.Holder(h.namespace, h.obj.GetName()) }
