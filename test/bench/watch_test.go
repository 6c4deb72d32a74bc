package bench_test

import (
	"context"
	"fmt"
	"sync"
	"testing"
	"time"

	autoscalingv2 "k8s.io/api/autoscaling/v2"
	batchv1 "k8s.io/api/batch/v1"
	eventsv1 "k8s.io/api/events/v1"
	"k8s.io/apimachinery/pkg/api/meta"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/watch"
	"sigs.k8s.io/controller-runtime/pkg/client"

	autoscalingv1alpha1 "github.com/almanac-dev/almanac/api/autoscaling/v1alpha1"
	"github.com/almanac-dev/almanac/api/scheme"
)

// seen is one change that a watch delivered to the harness, stamped when it arrived.
type seen struct {
	Kind string
	Name string
	Type watch.EventType
	At   time.Time
	// Obj is the object as delivered (managedFields dropped); nil unless the recorder keeps
	// objects.
	Obj client.Object
}

// recorder watches kinds in one namespace, as a user's `kubectl get -w` would, and stamps
// each change with the time it arrived in the harness: that is where the benchmarks see a
// write happen, for almanac, the raw client and the peer alike.
type recorder struct {
	mu     sync.Mutex
	events []seen
	latest map[string]map[string]client.Object // by kind, then name
	at     map[string]map[string]time.Time     // when the latest version arrived
	keep   bool
	wake   chan struct{}
}

// watchKinds lists for a kind, with the List type naming it.
var watchKinds = map[string]func() client.ObjectList{
	"HorizontalPodAutoscaler": func() client.ObjectList { return &autoscalingv2.HorizontalPodAutoscalerList{} },
	"ScheduledPodAutoscaler":  func() client.ObjectList { return &autoscalingv1alpha1.ScheduledPodAutoscalerList{} },
	"Schedule":                func() client.ObjectList { return &autoscalingv1alpha1.ScheduleList{} },
	"Job":                     func() client.ObjectList { return &batchv1.JobList{} },
	"Event":                   func() client.ObjectList { return &eventsv1.EventList{} },
}

// record watches kinds in ns until the benchmark ends. keep keeps every delivered version
// (the scale benchmark, with tens of thousands of objects, keeps only the latest).
func record(tb testing.TB, ns string, keep bool, kinds ...string) *recorder {
	tb.Helper()
	c, err := client.NewWithWatch(harnessConfig(), client.Options{Scheme: scheme.Scheme})
	if err != nil {
		tb.Fatal(err)
	}
	r := &recorder{latest: map[string]map[string]client.Object{}, at: map[string]map[string]time.Time{}, keep: keep, wake: make(chan struct{})}
	for _, kind := range kinds {
		r.latest[kind], r.at[kind] = map[string]client.Object{}, map[string]time.Time{}
	}
	ctx, cancel := context.WithCancel(context.Background())
	var wg sync.WaitGroup
	tb.Cleanup(func() { cancel(); wg.Wait() })
	for _, kind := range kinds {
		newList, ok := watchKinds[kind]
		if !ok {
			tb.Fatalf("no watch for kind %s", kind)
		}
		list := newList()
		if err := c.List(ctx, list, client.InNamespace(ns)); err != nil {
			tb.Fatal(err)
		}
		items, err := meta.ExtractList(list)
		if err != nil {
			tb.Fatal(err)
		}
		r.mu.Lock()
		for _, item := range items {
			obj := item.(client.Object)
			r.latest[kind][obj.GetName()] = obj
		}
		r.mu.Unlock()
		rv := list.(metav1.ListInterface).GetResourceVersion()
		wg.Go(func() { r.follow(ctx, tb, c, kind, ns, newList, rv) })
	}
	return r
}

// follow watches one kind from rv, and again from the last version seen when the API server
// ends the watch.
func (r *recorder) follow(ctx context.Context, tb testing.TB, c client.WithWatch, kind, ns string, newList func() client.ObjectList, rv string) {
	for ctx.Err() == nil {
		w, err := c.Watch(ctx, newList(), client.InNamespace(ns), &client.ListOptions{Raw: &metav1.ListOptions{ResourceVersion: rv, AllowWatchBookmarks: true}})
		if err != nil {
			if ctx.Err() == nil {
				tb.Logf("watch %s in %s: %v", kind, ns, err)
				time.Sleep(100 * time.Millisecond)
			}
			continue
		}
		for ev := range w.ResultChan() {
			at := time.Now()
			obj, ok := ev.Object.(client.Object)
			if !ok {
				continue // an error status: watch again
			}
			rv = obj.GetResourceVersion()
			if ev.Type == watch.Bookmark {
				continue
			}
			obj.SetManagedFields(nil)
			r.add(kind, ev.Type, at, obj)
		}
		w.Stop()
	}
}

func (r *recorder) add(kind string, typ watch.EventType, at time.Time, obj client.Object) {
	r.mu.Lock()
	defer r.mu.Unlock()
	s := seen{Kind: kind, Name: obj.GetName(), Type: typ, At: at}
	if r.keep {
		s.Obj = obj
	}
	r.events = append(r.events, s)
	name := obj.GetName()
	if typ == watch.Deleted {
		delete(r.latest[kind], name)
	} else {
		r.latest[kind][name] = obj
	}
	r.at[kind][name] = at
	close(r.wake)
	r.wake = make(chan struct{})
}

// since returns the changes that arrived at or after t.
func (r *recorder) since(t time.Time) []seen {
	r.mu.Lock()
	defer r.mu.Unlock()
	var out []seen
	for _, e := range r.events {
		if !e.At.Before(t) {
			out = append(out, e)
		}
	}
	return out
}

// last returns when the last change arrived (zero if none did).
func (r *recorder) last() time.Time {
	r.mu.Lock()
	defer r.mu.Unlock()
	if len(r.events) == 0 {
		return time.Time{}
	}
	return r.events[len(r.events)-1].At
}

// waitFor waits until cond holds for the changes since t, up to timeout.
func (r *recorder) waitFor(timeout time.Duration, t time.Time, cond func([]seen) error) error {
	deadline := time.After(timeout)
	for {
		r.mu.Lock()
		wake := r.wake
		r.mu.Unlock()
		err := cond(r.since(t))
		if err == nil {
			return nil
		}
		select {
		case <-wake:
		case <-deadline:
			return fmt.Errorf("after %s: %w", timeout, err)
		}
	}
}

// quiet waits until no change has arrived for d (up to timeout) and returns when the last one
// did.
func (r *recorder) quiet(d, timeout time.Duration) (time.Time, error) {
	deadline := time.Now().Add(timeout)
	for {
		last := r.last()
		if wait := time.Until(last.Add(d)); wait > 0 {
			if time.Now().Add(wait).After(deadline) {
				return last, fmt.Errorf("no quiet period of %s within %s: the last change arrived at %s", d, timeout, last.Format(time.RFC3339Nano))
			}
			time.Sleep(wait)
			continue
		}
		if r.last().Equal(last) {
			return last, nil
		}
	}
}

// snapshot returns the latest version of each object of kind, with when it arrived (zero for
// objects that were there before the recorder started).
func (r *recorder) snapshot(kind string) (map[string]client.Object, map[string]time.Time) {
	r.mu.Lock()
	defer r.mu.Unlock()
	objs, at := make(map[string]client.Object, len(r.latest[kind])), make(map[string]time.Time, len(r.latest[kind]))
	for name, obj := range r.latest[kind] {
		objs[name] = obj
		at[name] = r.at[kind][name]
	}
	return objs, at
}
