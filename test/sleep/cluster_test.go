package sleep_test

import (
	"fmt"
	"strings"
	"testing"
	"time"

	corev1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/types"
	"sigs.k8s.io/controller-runtime/pkg/client"

	sleepv1alpha1 "github.com/almanac-dev/almanac/api/sleep/v1alpha1"
)

// TestClusterSleepOverNamespaces: a ClusterSleep puts to sleep the workloads of the
// namespaces it selects (by label, and by name), and of no other: not one whose labels do not
// match, not one annotated almanac.dev/stay-awake, not the namespace almanac runs in. A
// namespace that stops being selected during the sleep wakes at once; one that starts being
// selected sleeps; a Sleep that holds a workload first keeps it (the ClusterSleep counts it
// as held elsewhere). At the end, every namespace wakes exactly.
func TestClusterSleepOverNamespaces(t *testing.T) {
	t.Parallel()
	id := fmt.Sprintf("cluster-%d", time.Now().UnixNano())
	env := map[string]string{"sleep-test": id}
	a, b, c := newNamespace(t, env), newNamespace(t, env), newNamespace(t, env)
	optedOut := newNamespace(t, env)
	other := newNamespace(t, map[string]string{"sleep-test": "another"})
	named := newNamespace(t, nil)
	own := "almanac-system" // the reconciler's own namespace: never
	ensureNamespace(t, own)
	markNamespace(t, optedOut, map[string]string{sleepv1alpha1.StayAwakeAnnotation: "true"})
	all := []string{a, b, c, optedOut, other, named, own}
	for _, ns := range all {
		create(t, deployment(ns, "web-"+id[len(id)-6:], 2, nil))
	}
	web := "web-" + id[len(id)-6:]
	// c's workload is held by a Sleep of its own first.
	local := newSleep(c, "mine", sleepv1alpha1.SleepSpec{Asleep: []sleepv1alpha1.Window{window(monday.Add(-time.Hour), monday.Add(2*time.Hour))},
		Wake: sleepv1alpha1.Wake{Lead: sleepv1alpha1.Lead{Mode: sleepv1alpha1.LeadOff}}})
	create(t, local)
	cs := &sleepv1alpha1.ClusterSleep{
		ObjectMeta: metav1.ObjectMeta{Name: id, Labels: map[string]string{"test": id}},
		Spec: sleepv1alpha1.ClusterSleepSpec{
			SleepSpec: sleepv1alpha1.SleepSpec{Asleep: []sleepv1alpha1.Window{window(monday, monday.Add(time.Hour))},
				Wake: sleepv1alpha1.Wake{Lead: sleepv1alpha1.Lead{Mode: sleepv1alpha1.LeadOff}}},
			NamespaceSelector: &metav1.LabelSelector{MatchLabels: env},
			Namespaces:        []string{named, own, "kube-system"},
		},
	}
	create(t, cs)
	// Half an hour before the ClusterSleep's window: only the Sleep of c sleeps.
	clk := newOffsetClock(monday.Add(-30 * time.Minute))
	startSleeper(t, clk, sleeperOpts{label: id}, all...)
	eventually(t, 10*time.Second, func() error {
		if rec := record(t, get(t, "apps/v1/Deployment", c, web)); rec == nil {
			return fmt.Errorf("c's workload does not sleep yet")
		}
		return nil
	})
	clk.set(monday.Add(time.Minute))
	poke(t, cs)

	wantAsleep := map[string]bool{a: true, b: true, c: true, named: true}
	check := func(want map[string]bool) func() error {
		return func() error {
			var wrong []string
			for _, ns := range all {
				r := replicas(t, "apps/v1/Deployment", ns, web)
				if (r == 0) != want[ns] {
					wrong = append(wrong, fmt.Sprintf("%s has %d replicas", ns, r))
				}
			}
			if len(wrong) > 0 {
				return fmt.Errorf("%s", strings.Join(wrong, "; "))
			}
			return nil
		}
	}
	eventually(t, 15*time.Second, check(wantAsleep))
	if rec := record(t, get(t, "apps/v1/Deployment", c, web)); rec.By != sleepv1alpha1.Holder(c, "mine") {
		t.Errorf("c's workload is held by %s, want the Sleep that held it first", rec.By)
	}
	eventually(t, 10*time.Second, func() error {
		st := clusterSleepStatus(t, id)
		if st.Namespaces != 4 || st.Workloads.Asleep != 3 || st.Workloads.HeldElsewhere != 1 || st.Phase != sleepv1alpha1.PhaseAsleep {
			return fmt.Errorf("status: %d namespaces, %+v, %s", st.Namespaces, st.Workloads, st.Phase)
		}
		return nil
	})

	// b stops being selected: its workload wakes at once. other starts being: it sleeps.
	markNamespaceLabels(t, b, map[string]string{"sleep-test": "no"})
	markNamespaceLabels(t, other, env)
	eventually(t, 10*time.Second, check(map[string]bool{a: true, c: true, named: true, other: true}))

	// The end of the window: the ClusterSleep's namespaces wake; c's waits for its own Sleep.
	clk.set(monday.Add(time.Hour + time.Second))
	poke(t, cs)
	eventually(t, 10*time.Second, check(map[string]bool{c: true}))
	for _, ns := range []string{a, b, named, other} {
		if rec := record(t, get(t, "apps/v1/Deployment", ns, web)); rec != nil {
			t.Errorf("%s: record left %+v", ns, rec)
		}
	}
}

func clusterSleepStatus(t testing.TB, name string) sleepv1alpha1.SleepStatus {
	t.Helper()
	s := &sleepv1alpha1.ClusterSleep{}
	if err := env.Client.Get(bg, types.NamespacedName{Name: name}, s); err != nil {
		t.Fatal(err)
	}
	return s.Status
}

func ensureNamespace(t testing.TB, name string) {
	t.Helper()
	if err := env.Client.Create(bg, &corev1.Namespace{ObjectMeta: metav1.ObjectMeta{Name: name}}); client.IgnoreAlreadyExists(err) != nil {
		t.Fatal(err)
	}
}

func markNamespace(t testing.TB, name string, annotations map[string]string) {
	t.Helper()
	patch := toJSON(map[string]any{"metadata": map[string]any{"annotations": annotations}})
	if err := env.Client.Patch(bg, &corev1.Namespace{ObjectMeta: metav1.ObjectMeta{Name: name}}, client.RawPatch(types.MergePatchType, []byte(patch))); err != nil {
		t.Fatal(err)
	}
}

func markNamespaceLabels(t testing.TB, name string, labels map[string]string) {
	t.Helper()
	patch := toJSON(map[string]any{"metadata": map[string]any{"labels": labels}})
	if err := env.Client.Patch(bg, &corev1.Namespace{ObjectMeta: metav1.ObjectMeta{Name: name}}, client.RawPatch(types.MergePatchType, []byte(patch))); err != nil {
		t.Fatal(err)
	}
}
