package sleep_test

import (
	"fmt"
	"sync"
	"testing"
	"time"

	appsv1 "k8s.io/api/apps/v1"
	"k8s.io/apimachinery/pkg/types"
	"sigs.k8s.io/controller-runtime/pkg/client"

	sleepv1alpha1 "github.com/almanac-dev/almanac/api/sleep/v1alpha1"
)

// readiness plays the workload controllers that the test API server does not run: a
// Deployment or StatefulSet whose replicas rise reports them Ready after its delay (real
// time). It notes when it first saw each one's replicas rise, and when it reported it Ready,
// on the reconciler's clock.
type readiness struct {
	ns     string
	clk    *offsetClock
	delays map[string]time.Duration
	mu     sync.Mutex
	raised map[string]time.Time
	ready  map[string]time.Time
}

func runReadiness(t *testing.T, ns string, clk *offsetClock, delays map[string]time.Duration) *readiness {
	r := &readiness{ns: ns, clk: clk, delays: delays, raised: map[string]time.Time{}, ready: map[string]time.Time{}}
	stop := make(chan struct{})
	done := make(chan struct{})
	t.Cleanup(func() { close(stop); <-done })
	go func() {
		defer close(done)
		seen := map[string]time.Time{} // real time the rise was seen
		for {
			select {
			case <-stop:
				return
			case <-time.After(50 * time.Millisecond):
			}
			var objs []client.Object
			ds := &appsv1.DeploymentList{}
			ss := &appsv1.StatefulSetList{}
			if env.Client.List(bg, ds, client.InNamespace(ns)) != nil || env.Client.List(bg, ss, client.InNamespace(ns)) != nil {
				continue
			}
			for i := range ds.Items {
				objs = append(objs, &ds.Items[i])
			}
			for i := range ss.Items {
				objs = append(objs, &ss.Items[i])
			}
			for _, obj := range objs {
				var want, have int32
				switch w := obj.(type) {
				case *appsv1.Deployment:
					want, have = *w.Spec.Replicas, w.Status.ReadyReplicas
				case *appsv1.StatefulSet:
					want, have = *w.Spec.Replicas, w.Status.ReadyReplicas
				}
				name := obj.GetName()
				switch {
				case want == have:
					delete(seen, name)
				case want < have:
					_ = trySetReady(obj) // scaled down: at once (a conflict is tried again next time)
				case seen[name].IsZero():
					seen[name] = time.Now()
					r.mu.Lock()
					r.raised[name] = clk.Now()
					r.mu.Unlock()
				case time.Since(seen[name]) >= delays[name]:
					if trySetReady(obj) != nil {
						continue // a conflict: tried again next time
					}
					r.mu.Lock()
					r.ready[name] = clk.Now()
					r.mu.Unlock()
					delete(seen, name)
				}
			}
		}
	}()
	return r
}

func (r *readiness) times(name string) (raised, ready time.Time) {
	r.mu.Lock()
	defer r.mu.Unlock()
	return r.raised[name], r.ready[name]
}

// TestOrderedPacedWakeReadyOnTime is a wake in tiers ([db], then the rest) at a pace of 4 Pods
// a minute: db (1 Pod, Ready 2 s after it starts) wakes first, and nothing else until it is
// Ready; then api (2 Pods, the first of the rest by name); web (3 more) waits until db's and
// api's Pods are a minute old. The first wake
// has no lead and is late; it is measured, and the next one starts early by the lead learned
// from it, so that its last workload is Ready before the wake boundary (lateness 0).
func TestOrderedPacedWakeReadyOnTime(t *testing.T) {
	t.Parallel()
	ns := newNamespace(t, nil)
	db := statefulSet(ns, "db", 1, map[string]string{"tier": "db"})
	web, api := deployment(ns, "web", 3, nil), deployment(ns, "api", 2, nil)
	create(t, db, web, api)
	for _, obj := range []client.Object{db, web, api} {
		setReady(t, obj)
	}
	first, second := monday, monday.Add(24*time.Hour)
	nights := newSleep(ns, "nights", sleepv1alpha1.SleepSpec{
		Asleep: []sleepv1alpha1.Window{window(first, first.Add(time.Hour)), window(second, second.Add(time.Hour))},
		Wake: sleepv1alpha1.Wake{PodsPerMinute: new(int32(4)),
			Tiers: []sleepv1alpha1.Tier{{Name: "databases", Selector: metaSelector("tier", "db")}}}})
	create(t, nights)
	clk := newOffsetClock(first.Add(time.Minute))
	s := startSleeper(t, clk, sleeperOpts{}, ns)
	key := types.NamespacedName{Namespace: ns, Name: "nights"}
	ready := runReadiness(t, ns, clk, map[string]time.Duration{"db": 2 * time.Second, "web": 500 * time.Millisecond, "api": 500 * time.Millisecond})
	asleep := func() error {
		for _, name := range []string{"web", "api"} {
			if r := replicas(t, "apps/v1/Deployment", ns, name); r != 0 {
				return fmt.Errorf("%s has %d replicas", name, r)
			}
		}
		if r := replicas(t, "apps/v1/StatefulSet", ns, "db"); r != 0 {
			return fmt.Errorf("db has %d replicas", r)
		}
		return nil
	}
	eventually(t, 10*time.Second, asleep)

	// The first wake, at the boundary (no wake was measured yet, no fixed lead).
	boundary := first.Add(time.Hour)
	clk.set(boundary.Add(time.Second))
	poke(t, nights)
	eventually(t, 10*time.Second, func() error {
		if _, at := ready.times("db"); at.IsZero() {
			return fmt.Errorf("db not Ready yet: %d replicas; %s", replicas(t, "apps/v1/StatefulSet", ns, "db"), toJSON(sleepStatus(t, ns, "nights")))
		}
		if r := replicas(t, "apps/v1/Deployment", ns, "api"); r != 2 {
			return fmt.Errorf("api has %d replicas", r)
		}
		return nil
	})
	_, dbReady := ready.times("db")
	eventually(t, 10*time.Second, func() error {
		if raised, _ := ready.times("api"); raised.IsZero() {
			return fmt.Errorf("api not seen raised yet")
		}
		return nil
	})
	apiRaised, _ := ready.times("api")
	if apiRaised.Before(dbReady) {
		t.Errorf("api was scaled at %s, before db was Ready at %s", apiRaised, dbReady)
	}
	// The pace: db's 1 and api's 2 Pods leave 1 of the minute's 4; web's 3 wait.
	s.reconciles.Fence(t, "sleep", key, func() { poke(t, nights) })
	if r := replicas(t, "apps/v1/Deployment", ns, "web"); r != 0 {
		t.Fatalf("web has %d replicas within the minute of db and api (4 Pods a minute)", r)
	}
	clk.set(apiRaised.Add(62 * time.Second))
	poke(t, nights)
	eventually(t, 10*time.Second, func() error {
		st := sleepStatus(t, ns, "nights")
		if len(st.Wakes) != 1 || st.Phase != sleepv1alpha1.PhaseAwake {
			return fmt.Errorf("the first wake is not measured: %s, %v", st.Phase, toJSON(st.Wakes))
		}
		return nil
	})
	st := sleepStatus(t, ns, "nights")
	m := st.Wakes[0]
	if m.Lateness.Duration < time.Minute || m.Duration.Duration < time.Minute {
		t.Errorf("first wake: %s, want late by the paced minute", toJSON(m))
	}
	if st.Lead == nil || st.Lead.Source != "Learned" || st.Lead.Duration.Duration <= m.Duration.Duration {
		t.Fatalf("lead after one wake: %s", toJSON(st.Lead))
	}
	lead := st.Lead.Duration.Duration

	// The second night: asleep at its start, and its wake starts the lead before its end.
	clk.set(second.Add(time.Minute))
	poke(t, nights)
	eventually(t, 10*time.Second, asleep)
	wakeAt := second.Add(time.Hour)
	eventually(t, 10*time.Second, func() error {
		st := sleepStatus(t, ns, "nights")
		if st.NextTransitionTime == nil || !st.NextTransitionTime.Time.Equal(wakeAt.Add(-lead)) {
			return fmt.Errorf("next transition %v, want the wake %s before %s", st.NextTransitionTime, lead, wakeAt)
		}
		return nil
	})
	clk.set(wakeAt.Add(-lead).Add(time.Second))
	poke(t, nights)
	eventually(t, 10*time.Second, func() error {
		if r := replicas(t, "apps/v1/Deployment", ns, "api"); r != 2 {
			return fmt.Errorf("api has %d replicas", r)
		}
		return nil
	})
	eventually(t, 10*time.Second, func() error {
		if raised, _ := ready.times("api"); !raised.After(wakeAt.Add(-lead)) {
			return fmt.Errorf("api not seen raised yet")
		}
		return nil
	})
	apiRaised, _ = ready.times("api")
	clk.set(apiRaised.Add(62 * time.Second))
	poke(t, nights)
	eventually(t, 10*time.Second, func() error {
		st := sleepStatus(t, ns, "nights")
		if len(st.Wakes) != 2 {
			return fmt.Errorf("the second wake is not measured: %s", st.Phase)
		}
		return nil
	})
	m = sleepStatus(t, ns, "nights").Wakes[1]
	if m.Lateness.Duration != 0 || !m.ReadyAt.Time.Before(wakeAt) {
		t.Errorf("second wake: %s, want every tier Ready before %s", toJSON(m), wakeAt)
	}
}
