package sleep_test

import (
	"context"
	"encoding/json"
	"fmt"
	"strings"
	"sync"
	"sync/atomic"
	"testing"
	"time"

	appsv1 "k8s.io/api/apps/v1"
	batchv1 "k8s.io/api/batch/v1"
	corev1 "k8s.io/api/core/v1"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	"k8s.io/apimachinery/pkg/api/resource"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"
	"k8s.io/apimachinery/pkg/labels"
	"k8s.io/apimachinery/pkg/types"
	"k8s.io/client-go/rest"
	"k8s.io/utils/clock"
	"k8s.io/utils/ptr"
	ctrl "sigs.k8s.io/controller-runtime"
	"sigs.k8s.io/controller-runtime/pkg/cache"
	"sigs.k8s.io/controller-runtime/pkg/client"
	"sigs.k8s.io/controller-runtime/pkg/config"
	"sigs.k8s.io/controller-runtime/pkg/controller"
	"sigs.k8s.io/controller-runtime/pkg/manager"
	metricsserver "sigs.k8s.io/controller-runtime/pkg/metrics/server"

	"github.com/almanac-dev/almanac/api/scheme"
	sleepv1alpha1 "github.com/almanac-dev/almanac/api/sleep/v1alpha1"
	"github.com/almanac-dev/almanac/reconcilers/base"
	"github.com/almanac-dev/almanac/reconcilers/scheduledpodautoscaler"
	"github.com/almanac-dev/almanac/reconcilers/sleep"
	"github.com/almanac-dev/almanac/test/testenv"
)

// offsetClock runs at the real rate, shifted by an offset that a test moves.
type offsetClock struct {
	clock.RealClock
	offset atomic.Int64
}

func newOffsetClock(now time.Time) *offsetClock {
	c := &offsetClock{}
	c.set(now)
	return c
}

func (c *offsetClock) set(now time.Time)               { c.offset.Store(int64(time.Until(now))) }
func (c *offsetClock) Now() time.Time                  { return time.Now().Add(time.Duration(c.offset.Load())) }
func (c *offsetClock) Since(t time.Time) time.Duration { return c.Now().Sub(t) }
func (c *offsetClock) Until(t time.Time) time.Duration { return t.Sub(c.Now()) }

var _ clock.WithDelayedExecution = (*offsetClock)(nil)

// sleeper is a manager running the sleep reconciler (and, with spa, the autoscaler
// reconciler) for one test.
type sleeper struct {
	clk        *offsetClock
	reconciles *testenv.Reconciles
	stop       func()
}

type sleeperOpts struct {
	// spa also runs the ScheduledPodAutoscaler reconciler.
	spa bool
	// label restricts the ClusterSleeps the manager sees to those with this label (test=…):
	// tests run side by side, each with its own manager, and ClusterSleeps are cluster-wide.
	label string
}

// startSleeper starts a manager that caches the given namespaces (and, of ClusterSleeps, those
// labelled o.label) and runs the sleep reconciler on clk.
func startSleeper(t testing.TB, clk *offsetClock, o sleeperOpts, namespaces ...string) *sleeper {
	t.Helper()
	cfg := rest.CopyConfig(env.Config)
	cfg.QPS, cfg.Burst = -1, 0
	opts := manager.Options{
		Scheme:                 scheme.Scheme,
		Metrics:                metricsserver.Options{BindAddress: "0"},
		HealthProbeBindAddress: "0",
		Controller:             config.Controller{SkipNameValidation: ptr.To(true)},
		Cache:                  testenv.CacheOptions(),
	}
	opts.Cache.DefaultNamespaces = map[string]cache.Config{}
	for _, ns := range namespaces {
		opts.Cache.DefaultNamespaces[ns] = cache.Config{}
	}
	label := o.label
	if label == "" {
		label = "none"
	}
	opts.Cache.ByObject[&sleepv1alpha1.ClusterSleep{}] = cache.ByObject{Label: labels.SelectorFromSet(labels.Set{"test": label})}
	mgr, err := ctrl.NewManager(cfg, opts)
	if err != nil {
		t.Fatal(err)
	}
	if err := testenv.RegisterIndexes(mgr); err != nil {
		t.Fatal(err)
	}
	s := &sleeper{clk: clk, reconciles: testenv.NewReconciles()}
	common := []base.Option{base.WithLanes(base.NewLanes(clk, base.DefaultMaxReportDelay)),
		base.WithControllerOptions(controller.Options{SkipNameValidation: ptr.To(true), NewQueue: s.reconciles.NewQueue})}
	r := sleep.New(mgr, clk, common...)
	r.OwnNamespace = "almanac-system"
	if err := r.SetupWithManager(mgr); err != nil {
		t.Fatal(err)
	}
	if o.spa {
		if err := scheduledpodautoscaler.New(mgr, clk, common...).SetupWithManager(mgr); err != nil {
			t.Fatal(err)
		}
	}
	ctx, cancel := context.WithCancel(context.Background())
	done := make(chan error, 1)
	go func() { done <- mgr.Start(ctx) }()
	var once sync.Once
	s.stop = func() {
		once.Do(func() {
			cancel()
			if err := <-done; err != nil {
				t.Errorf("manager: %v", err)
			}
		})
	}
	t.Cleanup(s.stop)
	return s
}

// bg is the tests' context.
var bg = context.Background()

func newNamespace(t testing.TB, labels map[string]string) string {
	t.Helper()
	ns := &corev1.Namespace{ObjectMeta: metav1.ObjectMeta{GenerateName: "sleep-", Labels: labels}}
	if err := env.Client.Create(bg, ns); err != nil {
		t.Fatal(err)
	}
	return ns.Name
}

func create(t testing.TB, objs ...client.Object) {
	t.Helper()
	for _, obj := range objs {
		if err := env.Client.Create(bg, obj); err != nil {
			t.Fatalf("create %T %s: %v", obj, obj.GetName(), err)
		}
	}
}

func podTemplate(app string) corev1.PodTemplateSpec {
	return corev1.PodTemplateSpec{
		ObjectMeta: metav1.ObjectMeta{Labels: map[string]string{"app": app}},
		Spec: corev1.PodSpec{Containers: []corev1.Container{{Name: "c", Image: "registry.example/app:1",
			Resources: corev1.ResourceRequirements{Requests: corev1.ResourceList{corev1.ResourceCPU: resource.MustParse("250m"), corev1.ResourceMemory: resource.MustParse("128Mi")}}}}},
	}
}

func deployment(ns, name string, replicas int32, l map[string]string) *appsv1.Deployment {
	return &appsv1.Deployment{
		ObjectMeta: metav1.ObjectMeta{Namespace: ns, Name: name, Labels: l},
		Spec: appsv1.DeploymentSpec{Replicas: ptr.To(replicas), Selector: &metav1.LabelSelector{MatchLabels: map[string]string{"app": name}},
			Template: podTemplate(name)},
	}
}

func statefulSet(ns, name string, replicas int32, l map[string]string) *appsv1.StatefulSet {
	return &appsv1.StatefulSet{
		ObjectMeta: metav1.ObjectMeta{Namespace: ns, Name: name, Labels: l},
		Spec: appsv1.StatefulSetSpec{Replicas: ptr.To(replicas), Selector: &metav1.LabelSelector{MatchLabels: map[string]string{"app": name}},
			Template: podTemplate(name), ServiceName: name},
	}
}

func cronJob(ns, name string, suspend bool) *batchv1.CronJob {
	return &batchv1.CronJob{
		ObjectMeta: metav1.ObjectMeta{Namespace: ns, Name: name},
		Spec: batchv1.CronJobSpec{Schedule: "*/5 * * * *", Suspend: ptr.To(suspend), JobTemplate: batchv1.JobTemplateSpec{Spec: batchv1.JobSpec{
			Template: corev1.PodTemplateSpec{Spec: corev1.PodSpec{RestartPolicy: corev1.RestartPolicyNever, Containers: []corev1.Container{{Name: "c", Image: "registry.example/job:1"}}}}}}},
	}
}

// scaledObject is a KEDA ScaledObject of the Deployment target.
func scaledObject(ns, name, target string, annotations map[string]string) *unstructured.Unstructured {
	u := &unstructured.Unstructured{Object: map[string]any{
		"apiVersion": "keda.sh/v1alpha1", "kind": "ScaledObject",
		"metadata": map[string]any{"namespace": ns, "name": name},
		"spec": map[string]any{"scaleTargetRef": map[string]any{"name": target}, "minReplicaCount": int64(1), "maxReplicaCount": int64(5),
			"triggers": []any{map[string]any{"type": "cron", "metadata": map[string]any{"timezone": "UTC", "start": "0 8 * * *", "end": "0 18 * * *", "desiredReplicas": "3"}}}},
	}}
	if annotations != nil {
		u.SetAnnotations(annotations)
	}
	return u
}

// window is a OneShot asleep window [from, to), written in UTC.
func window(from, to time.Time) sleepv1alpha1.Window {
	return sleepv1alpha1.Window{Type: sleepv1alpha1.WindowOneShot, StartTime: from.UTC().Format("2006-01-02T15:04"), EndTime: to.UTC().Format("2006-01-02T15:04"), TimeZone: "UTC"}
}

func newSleep(ns, name string, spec sleepv1alpha1.SleepSpec) *sleepv1alpha1.Sleep {
	return &sleepv1alpha1.Sleep{ObjectMeta: metav1.ObjectMeta{Namespace: ns, Name: name}, Spec: spec}
}

// poke changes an annotation of obj (a Sleep or ClusterSleep), which brings a reconcile: after
// a jump of the clock, the reconcile then runs at the new time.
func poke(t testing.TB, obj client.Object) {
	t.Helper()
	patch := fmt.Sprintf(`{"metadata":{"annotations":{"test/poke":"%d"}}}`, time.Now().UnixNano())
	if err := env.Client.Patch(bg, obj, client.RawPatch(types.MergePatchType, []byte(patch))); err != nil {
		t.Fatal(err)
	}
}

// eventually calls f until it returns nil, and fails the test with f's last error after
// timeout.
func eventually(t testing.TB, timeout time.Duration, f func() error) {
	t.Helper()
	deadline := time.Now().Add(timeout)
	for {
		err := f()
		if err == nil {
			return
		}
		if time.Now().After(deadline) {
			t.Fatalf("after %s: %v", timeout, err)
		}
		time.Sleep(50 * time.Millisecond)
	}
}

// replicas reads spec.replicas of a Deployment, StatefulSet or ReplicaSet (any object with one).
func replicas(t testing.TB, gvk string, ns, name string) int32 {
	t.Helper()
	u := get(t, gvk, ns, name)
	v, _, _ := unstructured.NestedInt64(u.Object, "spec", "replicas")
	return int32(v)
}

// get reads an object of "group/version/Kind" around any cache.
func get(t testing.TB, gvk string, ns, name string) *unstructured.Unstructured {
	t.Helper()
	u := &unstructured.Unstructured{}
	parts := strings.Split(gvk, "/")
	if len(parts) == 2 {
		u.SetAPIVersion(parts[0])
	} else {
		u.SetAPIVersion(parts[0] + "/" + parts[1])
	}
	u.SetKind(parts[len(parts)-1])
	if err := env.Client.Get(bg, types.NamespacedName{Namespace: ns, Name: name}, u); err != nil {
		t.Fatal(err)
	}
	return u
}

// record reads the sleep record of an object ("" when it has none).
func record(t testing.TB, u *unstructured.Unstructured) *sleepv1alpha1.Record {
	t.Helper()
	rec, err := sleepv1alpha1.DecodeRecord(u.GetAnnotations())
	if err != nil {
		t.Fatal(err)
	}
	return rec
}

// almanacEntries are the managedFields entries of almanac's field manager on u.
func almanacEntries(u *unstructured.Unstructured) []string {
	var out []string
	for _, e := range u.GetManagedFields() {
		if e.Manager == "almanac" {
			out = append(out, string(e.Operation)+"/"+e.Subresource)
		}
	}
	return out
}

// sleepStatus reads a Sleep's status.
func sleepStatus(t testing.TB, ns, name string) sleepv1alpha1.SleepStatus {
	t.Helper()
	s := &sleepv1alpha1.Sleep{}
	if err := env.Client.Get(bg, types.NamespacedName{Namespace: ns, Name: name}, s); err != nil {
		t.Fatal(err)
	}
	return s.Status
}

// setReady writes what a workload's controller would once its Pods are Ready: readyReplicas
// equal to replicas, and observedGeneration.
func setReady(t testing.TB, obj client.Object) {
	t.Helper()
	if err := trySetReady(obj); err != nil {
		t.Fatal(err)
	}
}

// trySetReady is setReady that returns its error (a conflict with a concurrent write, say):
// for goroutines other than the test's, which must not fail the test.
func trySetReady(obj client.Object) error {
	if err := env.Client.Get(bg, client.ObjectKeyFromObject(obj), obj); err != nil {
		return err
	}
	switch w := obj.(type) {
	case *appsv1.Deployment:
		w.Status.Replicas, w.Status.ReadyReplicas, w.Status.ObservedGeneration = *w.Spec.Replicas, *w.Spec.Replicas, w.Generation
	case *appsv1.StatefulSet:
		w.Status.Replicas, w.Status.ReadyReplicas, w.Status.ObservedGeneration = *w.Spec.Replicas, *w.Spec.Replicas, w.Generation
	case *appsv1.ReplicaSet:
		w.Status.Replicas, w.Status.ReadyReplicas, w.Status.ObservedGeneration = *w.Spec.Replicas, *w.Spec.Replicas, w.Generation
	}
	return env.Client.Status().Update(bg, obj)
}

func toJSON(v any) string {
	raw, _ := json.Marshal(v)
	return string(raw)
}

func metaSelector(key, value string) metav1.LabelSelector {
	return metav1.LabelSelector{MatchLabels: map[string]string{key: value}}
}

// metav1LabelSelector is metav1.LabelSelector, for the tests' helpers.
type metav1LabelSelector = metav1.LabelSelector

func isAlreadyExists(err error) bool { return apierrors.IsAlreadyExists(err) }
