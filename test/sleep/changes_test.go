package sleep_test

import (
	"fmt"
	"strings"
	"testing"
	"time"

	appsv1 "k8s.io/api/apps/v1"
	autoscalingv1 "k8s.io/api/autoscaling/v1"
	"k8s.io/apimachinery/pkg/api/meta"
	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"
	"k8s.io/apimachinery/pkg/runtime"
	"k8s.io/apimachinery/pkg/types"
	"sigs.k8s.io/controller-runtime/pkg/client"

	"github.com/almanac-dev/almanac/api/putback"
	sleepv1alpha1 "github.com/almanac-dev/almanac/api/sleep/v1alpha1"
)

// applyReplicas is a GitOps tool's server-side apply of a Deployment's replicas (as Argo CD
// or Flux apply what is in Git), under manager.
func applyReplicas(t testing.TB, ns, name, manager string, n int32) {
	t.Helper()
	d := deployment(ns, name, n, nil)
	d.SetGroupVersionKind(appsv1.SchemeGroupVersion.WithKind("Deployment"))
	obj, err := runtime.DefaultUnstructuredConverter.ToUnstructured(d)
	if err != nil {
		t.Fatal(err)
	}
	u := &unstructured.Unstructured{Object: obj}
	unstructured.RemoveNestedField(u.Object, "status")
	unstructured.RemoveNestedField(u.Object, "metadata", "creationTimestamp")
	if err := env.Client.Apply(bg, client.ApplyConfigurationFromUnstructured(u), client.FieldOwner(manager), client.ForceOwnership); err != nil {
		t.Fatal(err)
	}
}

// TestChangesDuringSleep is the documented rule for what others do to a workload while it
// sleeps (docs/sleep.md): a change of the slept field by another field manager is that
// manager's new wish: almanac puts the workload back to sleep, records the new value, and
// wakes it to that value; after putback.Max put-backs within putback.Window it stops, with
// the Contested condition naming the manager, the workload and the field, in a bounded
// number of writes. A workload created during sleep is put to sleep; one deleted during sleep
// is gone, and nothing is left of it to wake.
func TestChangesDuringSleep(t *testing.T) {
	t.Parallel()
	ns := newNamespace(t, nil)
	api, gone := deployment(ns, "api", 2, nil), deployment(ns, "gone", 1, nil)
	create(t, api, gone)
	applyReplicas(t, ns, "web", "argocd-controller", 3) // web is in Git
	nights := newSleep(ns, "nights", sleepv1alpha1.SleepSpec{Asleep: []sleepv1alpha1.Window{window(monday, monday.Add(time.Hour))},
		Wake: sleepv1alpha1.Wake{Lead: sleepv1alpha1.Lead{Mode: sleepv1alpha1.LeadOff}}})
	create(t, nights)
	clk := newOffsetClock(monday.Add(time.Minute))
	s := startSleeper(t, clk, sleeperOpts{}, ns)
	key := types.NamespacedName{Namespace: ns, Name: "nights"}
	eventually(t, 10*time.Second, func() error {
		if r := replicas(t, "apps/v1/Deployment", ns, "web") + replicas(t, "apps/v1/Deployment", ns, "api"); r != 0 {
			return fmt.Errorf("%d replicas awake", r)
		}
		return nil
	})

	// A hand scale-up of api (kubectl scale, through the scale subresource): put back to
	// sleep, and the record takes the new value.
	scale := &autoscalingv1.Scale{}
	if err := env.Client.SubResource("scale").Get(bg, api, scale); err != nil {
		t.Fatal(err)
	}
	if err := env.Client.SubResource("scale").Patch(bg, api, client.RawPatch(types.MergePatchType, []byte(`{"spec":{"replicas":5}}`)), client.FieldOwner("kubectl")); err != nil {
		t.Fatal(err)
	}
	eventually(t, 10*time.Second, func() error {
		u := get(t, "apps/v1/Deployment", ns, "api")
		if r := replicas(t, "apps/v1/Deployment", ns, "api"); r != 0 {
			return fmt.Errorf("api has %d replicas", r)
		}
		if rec := record(t, u); rec == nil || *rec.Replicas != 5 || len(rec.PutBacks) != 1 {
			return fmt.Errorf("api's record %+v", rec)
		}
		return nil
	})

	// Created during sleep: put to sleep. Deleted during sleep: gone.
	late := deployment(ns, "late", 4, nil)
	create(t, late)
	if err := env.Client.Delete(bg, gone); err != nil {
		t.Fatal(err)
	}
	eventually(t, 10*time.Second, func() error {
		if r := replicas(t, "apps/v1/Deployment", ns, "late"); r != 0 {
			return fmt.Errorf("late has %d replicas", r)
		}
		if st := sleepStatus(t, ns, "nights"); st.Workloads.Asleep != 3 || st.Workloads.Selected != 3 {
			return fmt.Errorf("counts %+v", st.Workloads)
		}
		return nil
	})

	// A GitOps tool that keeps putting web back: put back putback.Max times, then left alone
	// with the condition that names it. Each of its applies after almanac put web to sleep.
	for i := range putback.Max + 1 {
		eventually(t, 10*time.Second, func() error {
			if r := replicas(t, "apps/v1/Deployment", ns, "web"); r != 0 {
				return fmt.Errorf("put-back %d: web has %d replicas", i, r)
			}
			return nil
		})
		applyReplicas(t, ns, "web", "argocd-controller", 3)
	}
	eventually(t, 10*time.Second, func() error {
		st := sleepStatus(t, ns, "nights")
		c := meta.FindStatusCondition(st.Conditions, sleepv1alpha1.ConditionContested)
		if c == nil || c.Status != "True" {
			return fmt.Errorf("no Contested condition: %s", toJSON(st.Conditions))
		}
		for _, want := range []string{`field manager "argocd-controller"`, "spec.replicas", "Deployment " + ns + "/web", "managedFieldsManagers: [almanac]", "docs/gitops.md"} {
			if !strings.Contains(c.Message, want) {
				return fmt.Errorf("the Contested condition does not say %q: %s", want, c.Message)
			}
		}
		if st.Workloads.Contested != 1 || len(st.Contested) != 1 || st.Contested[0].Manager != "argocd-controller" {
			return fmt.Errorf("contested %+v %+v", st.Workloads, st.Contested)
		}
		return nil
	})
	// Stopped: a reconcile changes web no more.
	s.reconciles.Fence(t, "sleep", key, func() { poke(t, nights) })
	if r := replicas(t, "apps/v1/Deployment", ns, "web"); r != 3 {
		t.Fatalf("web has %d replicas after almanac stopped, want the GitOps tool's 3", r)
	}

	// At the end of the window: every workload wakes to the last wish of its owners.
	clk.set(monday.Add(time.Hour + time.Second))
	poke(t, nights)
	eventually(t, 10*time.Second, func() error {
		for name, want := range map[string]int32{"web": 3, "api": 5, "late": 4} {
			if r := replicas(t, "apps/v1/Deployment", ns, name); r != want {
				return fmt.Errorf("%s has %d replicas, want %d", name, r, want)
			}
			if rec := record(t, get(t, "apps/v1/Deployment", ns, name)); rec != nil {
				return fmt.Errorf("%s still has its record", name)
			}
		}
		st := sleepStatus(t, ns, "nights")
		if c := meta.FindStatusCondition(st.Conditions, sleepv1alpha1.ConditionContested); c != nil {
			return fmt.Errorf("Contested after the wake: %s", c.Message)
		}
		return nil
	})
	// The GitOps tool owns web's replicas again; almanac owns nothing.
	if e := almanacEntries(get(t, "apps/v1/Deployment", ns, "web")); len(e) > 0 {
		t.Errorf("almanac still owns fields of web: %v", e)
	}
}
