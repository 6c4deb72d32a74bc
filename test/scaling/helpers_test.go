package scaling_test

import (
	"context"
	"errors"
	"fmt"
	"slices"
	"strconv"
	"sync"
	"sync/atomic"
	"testing"
	"time"

	autoscalingv2 "k8s.io/api/autoscaling/v2"
	corev1 "k8s.io/api/core/v1"
	eventsv1 "k8s.io/api/events/v1"
	"k8s.io/apimachinery/pkg/api/resource"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/types"
	"k8s.io/apimachinery/pkg/watch"
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

	autoscalingv1alpha1 "github.com/almanac-dev/almanac/api/autoscaling/v1alpha1"
	"github.com/almanac-dev/almanac/api/scheme"
	"github.com/almanac-dev/almanac/reconcilers/base"
	"github.com/almanac-dev/almanac/reconcilers/schedule"
	"github.com/almanac-dev/almanac/reconcilers/scheduledpodautoscaler"
	"github.com/almanac-dev/almanac/test/testenv"
)

// offsetClock runs at the real rate, shifted by an offset that can be moved: the manager's
// RequeueAfter is waited for in real time, and a boundary written in whole minutes can be
// made to fall a few seconds ahead. Its timers are real ones (durations are the same).
type offsetClock struct {
	clock.RealClock
	offset atomic.Int64
}

func newOffsetClock(now time.Time) *offsetClock {
	c := &offsetClock{}
	c.set(now)
	return c
}

// set moves the clock so that it reads now.
func (c *offsetClock) set(now time.Time) { c.offset.Store(int64(time.Until(now))) }

func (c *offsetClock) Now() time.Time { return time.Now().Add(time.Duration(c.offset.Load())) }

func (c *offsetClock) Since(t time.Time) time.Duration { return c.Now().Sub(t) }

func (c *offsetClock) Until(t time.Time) time.Duration { return t.Sub(c.Now()) }

// sleepUntil sleeps until c reads t.
func (c *offsetClock) sleepUntil(t time.Time) { time.Sleep(t.Sub(c.Now())) }

var _ clock.WithDelayedExecution = (*offsetClock)(nil)

// restConfig is env.Config without client-side rate limiting, as the manager runs in a
// cluster (controller-runtime turns it off by default there).
func restConfig() *rest.Config {
	cfg := rest.CopyConfig(env.Config)
	cfg.QPS, cfg.Burst = -1, 0
	return cfg
}

// startManager runs both reconcilers, with clk, in a manager whose cache sees only the given
// namespaces (so that parallel tests do not see each other's objects). The manager stops
// when the test ends or when stop is called.
func startManager(t testing.TB, clk clock.WithDelayedExecution, namespaces ...string) (stop func()) {
	t.Helper()
	return startManagerWith(t, clk, nil, namespaces...)
}

// startManagerWith is startManager with the ScheduledPodAutoscaler reconciler's client
// wrapped by wrap (nil: not wrapped), for benchmarks that time its calls.
func startManagerWith(t testing.TB, clk clock.WithDelayedExecution, wrap func(client.Client) client.Client, namespaces ...string) (stop func()) {
	t.Helper()
	return startManagerOpts(t, clk, managerOpts{wrap: wrap}, namespaces...)
}

// managerOpts are the variations of the tests' managers.
type managerOpts struct {
	// wrap wraps the ScheduledPodAutoscaler reconciler's client (nil: not wrapped).
	wrap func(client.Client) client.Client
	// wrapReader wraps its reader around the cache (nil: not wrapped).
	wrapReader func(client.Reader) client.Reader
	// workers is the number of workers of each controller (0: the reconcilers' defaults).
	workers int
	// reconciles, when set, counts the reconciles of both controllers (the fences of
	// "nothing happened" assertions).
	reconciles *testenv.Reconciles
}

// startCountedManager is startManager whose reconciles are counted, for fences.
func startCountedManager(t testing.TB, clk clock.WithDelayedExecution, namespaces ...string) *testenv.Reconciles {
	t.Helper()
	r := testenv.NewReconciles()
	startManagerOpts(t, clk, managerOpts{reconciles: r}, namespaces...)
	return r
}

// startManagerOpts runs both reconcilers as the manager binary does (sharing one base.Lanes),
// with clk.
func startManagerOpts(t testing.TB, clk clock.WithDelayedExecution, o managerOpts, namespaces ...string) (stop func()) {
	t.Helper()
	mgr := newManager(t, namespaces...)
	lanes := base.WithLanes(base.NewLanes(clk, base.DefaultMaxReportDelay))
	common := []base.Option{lanes}
	if o.reconciles != nil {
		common = append(common, base.WithControllerOptions(controller.Options{SkipNameValidation: ptr.To(true), NewQueue: o.reconciles.NewQueue}))
	}
	common = append(common, base.WithWorkers(o.workers))
	spaOpts := common
	if o.wrap != nil {
		spaOpts = append(slices.Clone(common), base.WithClient(o.wrap))
	}
	if o.wrapReader != nil {
		spaOpts = append(spaOpts, base.WithAPIReader(o.wrapReader))
	}
	if err := scheduledpodautoscaler.New(mgr, clk, spaOpts...).SetupWithManager(mgr); err != nil {
		t.Fatal(err)
	}
	if err := schedule.New(mgr, clk, scheduledpodautoscaler.ScheduleEvaluationErrors(), common...).SetupWithManager(mgr); err != nil {
		t.Fatal(err)
	}
	return run(t, mgr)
}

func newManager(t testing.TB, namespaces ...string) manager.Manager {
	t.Helper()
	opts := manager.Options{
		Scheme:                 scheme.Scheme,
		Metrics:                metricsserver.Options{BindAddress: "0"},
		HealthProbeBindAddress: "0",
		// Several managers run in one test binary; their controllers share names.
		Controller: config.Controller{SkipNameValidation: ptr.To(true)},
		// What the manager binary's cache keeps (and no more).
		Cache: testenv.CacheOptions(),
	}
	if len(namespaces) > 0 {
		opts.Cache.DefaultNamespaces = map[string]cache.Config{}
		for _, ns := range namespaces {
			opts.Cache.DefaultNamespaces[ns] = cache.Config{}
		}
	}
	mgr, err := ctrl.NewManager(restConfig(), opts)
	if err != nil {
		t.Fatal(err)
	}
	if err := testenv.RegisterIndexes(mgr); err != nil {
		t.Fatal(err)
	}
	return mgr
}

func run(t testing.TB, mgr manager.Manager) (stop func()) {
	ctx, cancel := context.WithCancel(context.Background())
	done := make(chan error, 1)
	go func() { done <- mgr.Start(ctx) }()
	var once sync.Once
	stop = func() {
		once.Do(func() {
			cancel()
			if err := <-done; err != nil {
				t.Errorf("manager: %v", err)
			}
		})
	}
	t.Cleanup(stop)
	return stop
}

func newNamespace(t testing.TB) string {
	t.Helper()
	ns := &corev1.Namespace{ObjectMeta: metav1.ObjectMeta{GenerateName: "scaling-"}}
	if err := env.Client.Create(context.Background(), ns); err != nil {
		t.Fatal(err)
	}
	return ns.Name
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

func newAutoscaler(ns, name string, minReplicas, maxReplicas int32) *autoscalingv1alpha1.ScheduledPodAutoscaler {
	return &autoscalingv1alpha1.ScheduledPodAutoscaler{
		ObjectMeta: metav1.ObjectMeta{Namespace: ns, Name: name},
		Spec: autoscalingv1alpha1.ScheduledPodAutoscalerSpec{
			HorizontalPodAutoscalerSpec: &autoscalingv2.HorizontalPodAutoscalerSpec{
				ScaleTargetRef: autoscalingv2.CrossVersionObjectReference{APIVersion: "apps/v1", Kind: "Deployment", Name: name},
				MinReplicas:    ptr.To(minReplicas),
				MaxReplicas:    maxReplicas,
				Metrics: []autoscalingv2.MetricSpec{{
					Type: autoscalingv2.ResourceMetricSourceType,
					Resource: &autoscalingv2.ResourceMetricSource{
						Name:   corev1.ResourceCPU,
						Target: autoscalingv2.MetricTarget{Type: autoscalingv2.UtilizationMetricType, AverageUtilization: ptr.To[int32](70)},
					},
				}, {
					Type: autoscalingv2.ResourceMetricSourceType,
					Resource: &autoscalingv2.ResourceMetricSource{
						Name:   corev1.ResourceMemory,
						Target: autoscalingv2.MetricTarget{Type: autoscalingv2.AverageValueMetricType, AverageValue: ptr.To(resource.MustParse("0.5Gi"))},
					},
				}},
			},
		},
	}
}

// oneShot is a Schedule of autoscaler target open over [start, end) (whole minutes, UTC).
func oneShot(ns, name, target string, start, end time.Time, minReplicas, maxReplicas int32) *autoscalingv1alpha1.Schedule {
	return &autoscalingv1alpha1.Schedule{
		ObjectMeta: metav1.ObjectMeta{Namespace: ns, Name: name},
		Spec: autoscalingv1alpha1.ScheduleSpec{
			ScaleTargetRef: autoscalingv1alpha1.ScaleTargetReference{Name: target},
			MinReplicas:    ptr.To(minReplicas),
			MaxReplicas:    ptr.To(maxReplicas),
			Type:           autoscalingv1alpha1.ScheduleTypeOneShot,
			StartTime:      start.UTC().Format("2006-01-02T15:04"),
			EndTime:        end.UTC().Format("2006-01-02T15:04"),
			TimeZone:       "UTC",
		},
	}
}

func create(t testing.TB, objs ...client.Object) {
	t.Helper()
	for _, obj := range objs {
		if err := env.Client.Create(context.Background(), obj); err != nil {
			t.Fatalf("create %T %s: %v", obj, obj.GetName(), err)
		}
	}
}

func getHPA(ns, name string) (*autoscalingv2.HorizontalPodAutoscaler, error) {
	hpa := &autoscalingv2.HorizontalPodAutoscaler{}
	err := env.Client.Get(context.Background(), client.ObjectKey{Namespace: ns, Name: name}, hpa)
	return hpa, err
}

// hasBounds is a condition for eventually.
func hasBounds(ns, name string, minReplicas, maxReplicas int32) func() error {
	return func() error {
		hpa, err := getHPA(ns, name)
		if err != nil {
			return err
		}
		if got := ptr.Deref(hpa.Spec.MinReplicas, 0); got != minReplicas || hpa.Spec.MaxReplicas != maxReplicas {
			return fmt.Errorf("HorizontalPodAutoscaler %s/%s has %d-%d, want %d-%d", ns, name, got, hpa.Spec.MaxReplicas, minReplicas, maxReplicas)
		}
		return nil
	}
}

// write is one change of an object, as a watch delivered it.
type write struct {
	at              time.Time // on the test's clock, when the watch delivered it
	kind            string
	name            string
	resourceVersion string
	eventType       watch.EventType
	min, max        int32 // for HorizontalPodAutoscalers
}

func (w write) String() string {
	return fmt.Sprintf("%s %s %s/%s rv=%s %d-%d", w.at.Format(time.RFC3339Nano), w.eventType, w.kind, w.name, w.resourceVersion, w.min, w.max)
}

// writeLog records every write that the API server makes to the given kinds of objects in
// ns, through watches started at the current resourceVersion: it sees every write, not
// only the latest state.
type writeLog struct {
	mu     sync.Mutex
	writes []write
}

func (l *writeLog) all() []write {
	l.mu.Lock()
	defer l.mu.Unlock()
	return append([]write(nil), l.writes...)
}

// since returns the writes delivered at or after t (on the log's clock).
func (l *writeLog) since(t time.Time) []write {
	var out []write
	for _, w := range l.all() {
		if !w.at.Before(t) {
			out = append(out, w)
		}
	}
	return out
}

// watchWrites starts recording writes of HorizontalPodAutoscalers, ScheduledPodAutoscalers,
// Schedules and Events (core and events.k8s.io) in ns ("" for all namespaces).
func watchWrites(t testing.TB, clk clock.PassiveClock, ns string) *writeLog {
	t.Helper()
	wc, err := client.NewWithWatch(restConfig(), client.Options{Scheme: scheme.Scheme})
	if err != nil {
		t.Fatal(err)
	}
	ctx, cancel := context.WithCancel(context.Background())
	t.Cleanup(cancel)
	l := &writeLog{}
	lists := map[string]client.ObjectList{
		"HorizontalPodAutoscaler": &autoscalingv2.HorizontalPodAutoscalerList{},
		"ScheduledPodAutoscaler":  &autoscalingv1alpha1.ScheduledPodAutoscalerList{},
		"Schedule":                &autoscalingv1alpha1.ScheduleList{},
		"Event":                   &corev1.EventList{},
		"events.k8s.io/Event":     &eventsv1.EventList{},
	}
	var started sync.WaitGroup
	for kind, list := range lists {
		if err := wc.List(ctx, list, client.InNamespace(ns), client.Limit(1)); err != nil {
			t.Fatal(err)
		}
		rv := list.(metav1.ListInterface).GetResourceVersion()
		w, err := wc.Watch(ctx, list, client.InNamespace(ns), &client.ListOptions{Raw: &metav1.ListOptions{ResourceVersion: rv}})
		if err != nil {
			t.Fatal(err)
		}
		started.Add(1)
		go func() {
			started.Done()
			// The API server ends watches now and then (timeouts, a watcher that fell
			// behind a burst of writes): resume from the last resourceVersion seen, so that
			// no write goes unrecorded, and fail the test if that is not possible.
			for {
				for ev := range w.ResultChan() {
					obj, ok := ev.Object.(client.Object)
					if !ok {
						if ev.Type == watch.Error && ctx.Err() == nil {
							t.Errorf("watch of %s: %v", kind, ev.Object)
						}
						continue
					}
					rv = obj.GetResourceVersion()
					rec := write{at: clk.Now(), kind: kind, name: obj.GetName(), resourceVersion: rv, eventType: ev.Type}
					if hpa, ok := obj.(*autoscalingv2.HorizontalPodAutoscaler); ok {
						rec.min, rec.max = ptr.Deref(hpa.Spec.MinReplicas, 0), hpa.Spec.MaxReplicas
					}
					l.mu.Lock()
					l.writes = append(l.writes, rec)
					l.mu.Unlock()
				}
				w.Stop()
				if ctx.Err() != nil {
					return
				}
				var err error
				if w, err = wc.Watch(ctx, list, client.InNamespace(ns), &client.ListOptions{Raw: &metav1.ListOptions{ResourceVersion: rv}}); err != nil {
					if ctx.Err() == nil {
						t.Errorf("watch of %s ended and could not resume from resourceVersion %s: %v", kind, rv, err)
					}
					return
				}
			}
		}()
	}
	started.Wait()
	return l
}

// errNotYet is returned by eventually conditions that are still waiting.
var errNotYet = errors.New("not yet")

// fence is the end of a check that almanac wrote nothing: the reconciles are over (the caller
// waited for them), and this waits until every watch of the log has delivered what was
// written before. It labels each of objs (an autoscaler, a Schedule, an HPA: a label brings no
// reconcile) and creates an Event of each API in ns, and waits (up to 30 s) until the log has
// each of those writes: a watch delivers its kind's writes in order. It returns the
// resourceVersions of its own writes, which are no writes of almanac's.
func (l *writeLog) fence(t testing.TB, ns string, objs ...client.Object) map[string]bool {
	t.Helper()
	ctx := context.Background()
	mine := map[string]bool{}
	for _, obj := range objs {
		patch := client.RawPatch(types.MergePatchType, []byte(`{"metadata":{"labels":{"almanac.test/fence":"`+strconv.Itoa(len(mine))+`"}}}`))
		if err := env.Client.Patch(ctx, obj, patch); err != nil {
			t.Fatal(err)
		}
		mine[obj.GetResourceVersion()] = true
	}
	now := metav1.NewMicroTime(time.Now())
	core := &corev1.Event{
		ObjectMeta:     metav1.ObjectMeta{Namespace: ns, GenerateName: "fence-"},
		InvolvedObject: corev1.ObjectReference{Kind: "ConfigMap", Namespace: ns, Name: "fence", APIVersion: "v1"},
		Reason:         "Fence", Message: "the test's fence", Type: corev1.EventTypeNormal,
		Source: corev1.EventSource{Component: "almanac-test"},
	}
	ev := &eventsv1.Event{
		ObjectMeta: metav1.ObjectMeta{Namespace: ns, GenerateName: "fence-"},
		EventTime:  now, ReportingController: "almanac.dev/test", ReportingInstance: "test",
		Action: "Fence", Reason: "Fence", Type: corev1.EventTypeNormal, Note: "the test's fence",
		Regarding: corev1.ObjectReference{Kind: "ConfigMap", Namespace: ns, Name: "fence", APIVersion: "v1"},
	}
	for _, obj := range []client.Object{core, ev} {
		if err := env.Client.Create(ctx, obj); err != nil {
			t.Fatal(err)
		}
		mine[obj.GetResourceVersion()] = true
	}
	eventually(t, 30*time.Second, func() error {
		seen := map[string]bool{}
		for _, w := range l.all() {
			seen[w.resourceVersion] = true
		}
		for rv := range mine {
			if !seen[rv] {
				return fmt.Errorf("the fence's write %s not delivered yet", rv)
			}
		}
		return nil
	})
	return mine
}

// notMine is the writes that are not the fence's.
func notMine(writes []write, mine map[string]bool) []write {
	var out []write
	for _, w := range writes {
		if !mine[w.resourceVersion] {
			out = append(out, w)
		}
	}
	return out
}
