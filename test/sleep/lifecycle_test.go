package sleep_test

import (
	"fmt"
	"testing"
	"time"

	"k8s.io/apimachinery/pkg/types"
	"sigs.k8s.io/controller-runtime/pkg/client"

	sleepv1alpha1 "github.com/almanac-dev/almanac/api/sleep/v1alpha1"
)

// TestSuspendAndDeleteWake: suspending a sleep wakes everything it holds at once (no tiers,
// no pace), and resuming it puts them back to sleep; deleting it wakes them before it goes
// (its finalizer almanac.dev/wake).
func TestSuspendAndDeleteWake(t *testing.T) {
	t.Parallel()
	ns := newNamespace(t, nil)
	web, db := deployment(ns, "web", 3, nil), statefulSet(ns, "db", 2, map[string]string{"tier": "db"})
	create(t, web, db)
	nights := newSleep(ns, "nights", sleepv1alpha1.SleepSpec{Asleep: []sleepv1alpha1.Window{window(monday, monday.Add(time.Hour))},
		Wake: sleepv1alpha1.Wake{PodsPerMinute: new(int32(1)), Tiers: []sleepv1alpha1.Tier{{Name: "db", Selector: metaSelector("tier", "db")}}}})
	create(t, nights)
	startSleeper(t, newOffsetClock(monday.Add(time.Minute)), sleeperOpts{}, ns)
	state := func(wantWeb, wantDB int32) func() error {
		return func() error {
			if r := replicas(t, "apps/v1/Deployment", ns, "web"); r != wantWeb {
				return fmt.Errorf("web has %d replicas, want %d", r, wantWeb)
			}
			if r := replicas(t, "apps/v1/StatefulSet", ns, "db"); r != wantDB {
				return fmt.Errorf("db has %d replicas, want %d", r, wantDB)
			}
			return nil
		}
	}
	eventually(t, 10*time.Second, state(0, 0))

	setSuspend := func(suspend bool) {
		t.Helper()
		patch := fmt.Sprintf(`{"spec":{"suspend":%t}}`, suspend)
		if err := env.Client.Patch(bg, nights, client.RawPatch(types.MergePatchType, []byte(patch))); err != nil {
			t.Fatal(err)
		}
	}
	// Suspended: both at once, although db is not Ready and the pace is 1 Pod a minute.
	setSuspend(true)
	eventually(t, 10*time.Second, state(3, 2))
	eventually(t, 10*time.Second, func() error {
		if st := sleepStatus(t, ns, "nights"); st.Phase != sleepv1alpha1.PhaseSuspended || st.Workloads.Asleep != 0 {
			return fmt.Errorf("status %s, %+v", st.Phase, st.Workloads)
		}
		return nil
	})
	setSuspend(false)
	eventually(t, 10*time.Second, state(0, 0))

	// Deleted: it wakes them, then goes.
	if err := env.Client.Delete(bg, nights); err != nil {
		t.Fatal(err)
	}
	eventually(t, 10*time.Second, state(3, 2))
	eventually(t, 10*time.Second, func() error {
		err := env.Client.Get(bg, types.NamespacedName{Namespace: ns, Name: "nights"}, &sleepv1alpha1.Sleep{})
		if client.IgnoreNotFound(err) != nil || err == nil {
			return fmt.Errorf("the Sleep is still there (%w)", err)
		}
		return nil
	})
	for gvk, name := range map[string]string{"apps/v1/Deployment": "web", "apps/v1/StatefulSet": "db"} {
		if rec := record(t, get(t, gvk, ns, name)); rec != nil {
			t.Errorf("%s %s keeps its record", gvk, name)
		}
	}
}
