package sleep_test

import (
	"fmt"
	"testing"
	"time"

	"k8s.io/apimachinery/pkg/types"
	"sigs.k8s.io/controller-runtime/pkg/client"

	sleepv1alpha1 "github.com/almanac-dev/almanac/api/sleep/v1alpha1"
)

// TestRecordSurvivesRestartAndReinstall: what a workload was before it slept is on the
// workload, not in the manager's memory nor in the sleep's status. A manager that starts
// during a sleep (a restart, an upgrade, a new leader) wakes everything exactly; so does a
// Sleep deleted without its finalizer and created again (a reinstall that lost almanac's
// objects but kept the workloads), which takes back the records of its name.
func TestRecordSurvivesRestartAndReinstall(t *testing.T) {
	t.Parallel()
	ns := newNamespace(t, nil)
	web, db := deployment(ns, "web", 3, nil), statefulSet(ns, "db", 2, nil)
	report := cronJob(ns, "report", false)
	create(t, web, db, report)
	spec := sleepv1alpha1.SleepSpec{Asleep: []sleepv1alpha1.Window{window(monday, monday.Add(time.Hour))},
		Kinds: []sleepv1alpha1.WorkloadKind{{APIVersion: "apps/v1", Kind: "Deployment"}, {APIVersion: "apps/v1", Kind: "StatefulSet"}, {APIVersion: "batch/v1", Kind: "CronJob"}},
		Wake:  sleepv1alpha1.Wake{Lead: sleepv1alpha1.Lead{Mode: sleepv1alpha1.LeadOff}}}
	nights := newSleep(ns, "nights", spec)
	create(t, nights)

	first := startSleeper(t, newOffsetClock(monday.Add(time.Minute)), sleeperOpts{}, ns)
	eventually(t, 10*time.Second, func() error {
		if r := replicas(t, "apps/v1/Deployment", ns, "web"); r != 0 {
			return fmt.Errorf("web has %d replicas", r)
		}
		if r := replicas(t, "apps/v1/StatefulSet", ns, "db"); r != 0 {
			return fmt.Errorf("db has %d replicas", r)
		}
		return nil
	})
	first.stop()

	// Reinstall: the Sleep goes without waking anything (its finalizer removed by hand, as
	// a CRD deleted with its objects would leave it), and comes back with the same name.
	s := &sleepv1alpha1.Sleep{}
	if err := env.Client.Get(bg, types.NamespacedName{Namespace: ns, Name: "nights"}, s); err != nil {
		t.Fatal(err)
	}
	s.Finalizers = nil
	if err := env.Client.Update(bg, s); err != nil {
		t.Fatal(err)
	}
	if err := env.Client.Delete(bg, s); client.IgnoreNotFound(err) != nil {
		t.Fatal(err)
	}
	eventually(t, 10*time.Second, func() error {
		err := env.Client.Get(bg, types.NamespacedName{Namespace: ns, Name: "nights"}, &sleepv1alpha1.Sleep{})
		if client.IgnoreNotFound(err) != nil || err == nil {
			return fmt.Errorf("the Sleep is still there (%w)", err)
		}
		return nil
	})
	if rec := record(t, get(t, "apps/v1/Deployment", ns, "web")); rec == nil || *rec.Replicas != 3 {
		t.Fatalf("web's record after the Sleep went: %+v", rec)
	}
	again := newSleep(ns, "nights", spec)
	create(t, again)

	// A new manager (a restart, an upgrade), after the window: everything wakes exactly.
	clk := newOffsetClock(monday.Add(time.Hour + time.Minute))
	startSleeper(t, clk, sleeperOpts{}, ns)
	eventually(t, 10*time.Second, func() error {
		if r := replicas(t, "apps/v1/Deployment", ns, "web"); r != 3 {
			return fmt.Errorf("web has %d replicas", r)
		}
		if r := replicas(t, "apps/v1/StatefulSet", ns, "db"); r != 2 {
			return fmt.Errorf("db has %d replicas", r)
		}
		if rec := record(t, get(t, "batch/v1/CronJob", ns, "report")); rec != nil {
			return fmt.Errorf("report still has its record")
		}
		return nil
	})
	if rec := record(t, get(t, "apps/v1/Deployment", ns, "web")); rec != nil {
		t.Errorf("web still has its record %+v", rec)
	}
}

// TestLeaderChangeInMidWake: a wake in tiers whose manager stops after the first tier woke
// (a leader killed in mid-wake) is carried on by the next manager from what it finds: the
// records of what still sleeps, and the first tier's readiness.
func TestLeaderChangeInMidWake(t *testing.T) {
	t.Parallel()
	ns := newNamespace(t, nil)
	db := statefulSet(ns, "db", 1, map[string]string{"tier": "db"})
	web, api := deployment(ns, "web", 3, nil), deployment(ns, "api", 2, nil)
	create(t, db, web, api)
	nights := newSleep(ns, "nights", sleepv1alpha1.SleepSpec{Asleep: []sleepv1alpha1.Window{window(monday, monday.Add(time.Hour))},
		Wake: sleepv1alpha1.Wake{Lead: sleepv1alpha1.Lead{Mode: sleepv1alpha1.LeadOff},
			Tiers: []sleepv1alpha1.Tier{{Name: "databases", Selector: metaSelector("tier", "db")}}}})
	create(t, nights)
	first := startSleeper(t, newOffsetClock(monday.Add(time.Minute)), sleeperOpts{}, ns)
	eventually(t, 10*time.Second, func() error {
		if r := replicas(t, "apps/v1/Deployment", ns, "web") + replicas(t, "apps/v1/StatefulSet", ns, "db"); r != 0 {
			return fmt.Errorf("%d replicas left", r)
		}
		return nil
	})
	first.stop()
	second := startSleeper(t, newOffsetClock(monday.Add(time.Hour+time.Second)), sleeperOpts{}, ns)
	eventually(t, 10*time.Second, func() error {
		if r := replicas(t, "apps/v1/StatefulSet", ns, "db"); r != 1 {
			return fmt.Errorf("db has %d replicas", r)
		}
		return nil
	})
	// The leader goes while db is not Ready: web and api still sleep.
	second.stop()
	if r := replicas(t, "apps/v1/Deployment", ns, "web"); r != 0 {
		t.Fatalf("web woke before db was Ready: %d replicas", r)
	}
	third := startSleeper(t, newOffsetClock(monday.Add(time.Hour+2*time.Second)), sleeperOpts{}, ns)
	// The new leader waits for db too, until it is Ready.
	third.reconciles.Fence(t, "sleep", types.NamespacedName{Namespace: ns, Name: "nights"}, func() { poke(t, nights) })
	if r := replicas(t, "apps/v1/Deployment", ns, "web"); r != 0 {
		t.Fatalf("web woke before db was Ready: %d replicas", r)
	}
	setReady(t, db)
	eventually(t, 10*time.Second, func() error {
		if r := replicas(t, "apps/v1/Deployment", ns, "web"); r != 3 {
			return fmt.Errorf("web has %d replicas", r)
		}
		if r := replicas(t, "apps/v1/Deployment", ns, "api"); r != 2 {
			return fmt.Errorf("api has %d replicas", r)
		}
		return nil
	})
}
