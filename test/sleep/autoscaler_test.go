package sleep_test

import (
	"fmt"
	"testing"
	"time"

	"k8s.io/apimachinery/pkg/api/meta"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/types"
	"k8s.io/utils/ptr"

	autoscalingv1alpha1 "github.com/almanac-dev/almanac/api/autoscaling/v1alpha1"
	sleepv1alpha1 "github.com/almanac-dev/almanac/api/sleep/v1alpha1"
)

// TestSleepWinsOverAttachedAutoscaler is the one rule between sleeps and autoscalers
// (sleepv1alpha1.Holds): a ScheduledPodAutoscaler attached to a Deployment through its scale
// subresource writes nothing to it while a Sleep holds it asleep (its Ready condition says
// HeldAsleep), so almanac never fights itself; at wake the Deployment gets back what the
// sleep recorded, and the autoscaler its bounds.
func TestSleepWinsOverAttachedAutoscaler(t *testing.T) {
	t.Parallel()
	ns := newNamespace(t, nil)
	web := deployment(ns, "web", 1, nil)
	create(t, web)
	spa := &autoscalingv1alpha1.ScheduledPodAutoscaler{ObjectMeta: metav1.ObjectMeta{Namespace: ns, Name: "web"},
		Spec: autoscalingv1alpha1.ScheduledPodAutoscalerSpec{TargetRef: &autoscalingv1alpha1.TargetReference{APIVersion: "apps/v1", Kind: "Deployment", Name: "web"},
			MinReplicas: ptr.To(int32(2))}}
	create(t, spa)
	clk := newOffsetClock(monday.Add(-time.Minute))
	startSleeper(t, clk, sleeperOpts{spa: true}, ns)
	eventually(t, 10*time.Second, func() error {
		if r := replicas(t, "apps/v1/Deployment", ns, "web"); r != 2 {
			return fmt.Errorf("web has %d replicas, want the autoscaler's 2", r)
		}
		return nil
	})
	nights := newSleep(ns, "nights", sleepv1alpha1.SleepSpec{Asleep: []sleepv1alpha1.Window{window(monday, monday.Add(time.Hour))},
		Wake: sleepv1alpha1.Wake{Lead: sleepv1alpha1.Lead{Mode: sleepv1alpha1.LeadOff}}})
	create(t, nights)
	clk.set(monday.Add(time.Second))
	poke(t, nights)
	eventually(t, 10*time.Second, func() error {
		got := &autoscalingv1alpha1.ScheduledPodAutoscaler{}
		if err := env.Client.Get(bg, types.NamespacedName{Namespace: ns, Name: "web"}, got); err != nil {
			return err
		}
		c := meta.FindStatusCondition(got.Status.Conditions, autoscalingv1alpha1.ConditionReady)
		if c == nil || c.Reason != autoscalingv1alpha1.ReasonHeldAsleep {
			return fmt.Errorf("the autoscaler's Ready: %+v", c)
		}
		if r := replicas(t, "apps/v1/Deployment", ns, "web"); r != 0 {
			return fmt.Errorf("web has %d replicas while asleep", r)
		}
		return nil
	})
	if rec := record(t, get(t, "apps/v1/Deployment", ns, "web")); rec == nil || *rec.Replicas != 2 {
		t.Fatalf("web's record %+v", rec)
	}
	if st := sleepStatus(t, ns, "nights"); st.Workloads.Contested != 0 || len(st.Contested) != 0 {
		t.Errorf("the sleep found a contest with the autoscaler: %+v", st.Workloads)
	}

	clk.set(monday.Add(time.Hour + time.Second))
	poke(t, nights)
	eventually(t, 10*time.Second, func() error {
		if r := replicas(t, "apps/v1/Deployment", ns, "web"); r != 2 {
			return fmt.Errorf("web has %d replicas after the wake", r)
		}
		got := &autoscalingv1alpha1.ScheduledPodAutoscaler{}
		if err := env.Client.Get(bg, types.NamespacedName{Namespace: ns, Name: "web"}, got); err != nil {
			return err
		}
		if c := meta.FindStatusCondition(got.Status.Conditions, autoscalingv1alpha1.ConditionReady); c == nil || c.Reason == autoscalingv1alpha1.ReasonHeldAsleep {
			return fmt.Errorf("the autoscaler's Ready after the wake: %+v", c)
		}
		return nil
	})
}
