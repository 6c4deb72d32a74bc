package sleep_test

import (
	"fmt"
	"sync"
	"testing"
	"time"

	appsv1 "k8s.io/api/apps/v1"
	"sigs.k8s.io/controller-runtime/pkg/client"

	sleepv1alpha1 "github.com/almanac-dev/almanac/api/sleep/v1alpha1"
)

// thousands is how many Deployments TestASelectorOfThousands puts to sleep.
const thousands = 1500

// createMany creates n Deployments named prefix-i in ns, 16 at a time.
func createMany(t *testing.T, ns, prefix string, n int, replicas int32) {
	t.Helper()
	var wg sync.WaitGroup
	errs := make(chan error, n)
	sem := make(chan struct{}, 16)
	for i := range n {
		wg.Add(1)
		sem <- struct{}{}
		go func() {
			defer func() { <-sem; wg.Done() }()
			if err := env.Client.Create(bg, deployment(ns, fmt.Sprintf("%s-%04d", prefix, i), replicas, map[string]string{"env": "preview"})); err != nil {
				errs <- err
			}
		}()
	}
	wg.Wait()
	close(errs)
	for err := range errs {
		t.Fatal(err)
	}
}

// TestASelectorOfThousands is the most a tenant's selector can make one sleep walk: every
// workload of a namespace, 1,500 of them. Each is put to sleep and woken exactly, the status
// counts them all and lists none (its lists are bounded by the schema and by the code), so
// that no status write is ever refused for its size.
func TestASelectorOfThousands(t *testing.T) {
	t.Parallel()
	ns := newNamespace(t, nil)
	createMany(t, ns, "w", thousands, 2)
	nights := newSleep(ns, "nights", sleepv1alpha1.SleepSpec{Asleep: []sleepv1alpha1.Window{window(monday, monday.Add(time.Hour))},
		Selector: metaSelectorPtr("env", "preview"), Wake: sleepv1alpha1.Wake{Lead: sleepv1alpha1.Lead{Mode: sleepv1alpha1.LeadOff}}})
	create(t, nights)
	clk := newOffsetClock(monday.Add(time.Minute))
	start := time.Now()
	startSleeper(t, clk, sleeperOpts{}, ns)
	count := func(want int32) func() error {
		return func() error {
			list := &appsv1.DeploymentList{}
			if err := env.Client.List(bg, list, client.InNamespace(ns)); err != nil {
				return err
			}
			wrong := 0
			for _, d := range list.Items {
				if *d.Spec.Replicas != want {
					wrong++
				}
			}
			if wrong > 0 {
				return fmt.Errorf("%d of %d Deployments do not have %d replicas", wrong, len(list.Items), want)
			}
			return nil
		}
	}
	eventually(t, 60*time.Second, count(0))
	t.Logf("%d Deployments asleep %s after the manager started (its cache's sync included)", thousands, time.Since(start).Round(time.Millisecond))
	eventually(t, 10*time.Second, func() error {
		st := sleepStatus(t, ns, "nights")
		if st.Workloads.Asleep != thousands || st.Savings.AsleepPods != 2*thousands {
			return fmt.Errorf("status counts %+v, %d Pods", st.Workloads, st.Savings.AsleepPods)
		}
		return nil
	})
	clk.set(monday.Add(time.Hour + time.Second))
	start = time.Now()
	poke(t, nights)
	eventually(t, 60*time.Second, count(2))
	t.Logf("%d Deployments awake %s after the wake's reconcile was asked for (a patch and a managedFields patch each)", thousands, time.Since(start).Round(time.Millisecond))
}

func metaSelectorPtr(key, value string) *metav1LabelSelector {
	s := metaSelector(key, value)
	return &s
}
