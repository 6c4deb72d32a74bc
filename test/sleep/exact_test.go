package sleep_test

import (
	"fmt"
	"slices"
	"testing"
	"time"

	appsv1 "k8s.io/api/apps/v1"
	autoscalingv2 "k8s.io/api/autoscaling/v2"
	batchv1 "k8s.io/api/batch/v1"
	corev1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"
	"k8s.io/utils/ptr"
	"sigs.k8s.io/controller-runtime/pkg/client"

	batchv1alpha1 "github.com/almanac-dev/almanac/api/batch/v1alpha1"
	sleepv1alpha1 "github.com/almanac-dev/almanac/api/sleep/v1alpha1"
)

// monday is a Monday evening of the tests' calendar: sleeps start at its 20:00.
var monday = time.Date(2030, 3, 4, 20, 0, 0, 0, time.UTC)

// zoo is one of each kind a sleep knows, with the state each is in before it sleeps.
type zoo struct {
	ns                                   string
	web, api, queue, pinned, zero, owned *appsv1.Deployment
	db                                   *appsv1.StatefulSet
	rs, child                            *appsv1.ReplicaSet
	report, paused                       *batchv1.CronJob
	nightly                              *batchv1alpha1.ScheduledJob
	follow                               *batchv1alpha1.EventJob
	queueSO, pausedSO                    *unstructured.Unstructured
}

func newZoo(t *testing.T, ns string) *zoo {
	t.Helper()
	z := &zoo{ns: ns,
		web:    deployment(ns, "web", 3, map[string]string{"tier": "web"}),
		api:    deployment(ns, "api", 2, map[string]string{"tier": "web"}),
		queue:  deployment(ns, "queue", 2, nil),
		pinned: deployment(ns, "pinned", 2, nil),
		zero:   deployment(ns, "zero", 0, nil),
		db:     statefulSet(ns, "db", 1, map[string]string{"tier": "db"}),
		report: cronJob(ns, "report", false),
		paused: cronJob(ns, "paused", true),
	}
	z.pinned.Annotations = map[string]string{sleepv1alpha1.StayAwakeAnnotation: "true"}
	z.rs = &appsv1.ReplicaSet{ObjectMeta: metav1.ObjectMeta{Namespace: ns, Name: "rs"},
		Spec: appsv1.ReplicaSetSpec{Replicas: ptr.To(int32(2)), Selector: &metav1.LabelSelector{MatchLabels: map[string]string{"app": "rs"}}, Template: podTemplate("rs")}}
	jobTemplate := batchv1.JobTemplateSpec{Spec: batchv1.JobSpec{Template: corev1.PodTemplateSpec{Spec: corev1.PodSpec{
		RestartPolicy: corev1.RestartPolicyNever, Containers: []corev1.Container{{Name: "c", Image: "registry.example/job:1"}}}}}}
	z.nightly = &batchv1alpha1.ScheduledJob{ObjectMeta: metav1.ObjectMeta{Namespace: ns, Name: "nightly"},
		Spec: batchv1alpha1.ScheduledJobSpec{Schedule: "0 3 * * *", JobPolicy: batchv1alpha1.JobPolicy{JobTemplate: jobTemplate}}}
	z.follow = &batchv1alpha1.EventJob{ObjectMeta: metav1.ObjectMeta{Namespace: ns, Name: "follow"},
		Spec: batchv1alpha1.EventJobSpec{Trigger: batchv1alpha1.Trigger{Kind: batchv1alpha1.TriggerKindCronJob, Name: "report"}, JobPolicy: batchv1alpha1.JobPolicy{JobTemplate: jobTemplate}}}
	z.queueSO = scaledObject(ns, "queue", "queue", nil)
	z.pausedSO = scaledObject(ns, "held", "other", map[string]string{sleepv1alpha1.KEDAPausedReplicasAnnotation: "4"})
	// api runs under an HPA: it goes to 0 like the rest (an HPA does not act on a workload
	// at 0), and the HPA is not touched.
	hpa := &autoscalingv2.HorizontalPodAutoscaler{ObjectMeta: metav1.ObjectMeta{Namespace: ns, Name: "api"},
		Spec: autoscalingv2.HorizontalPodAutoscalerSpec{ScaleTargetRef: autoscalingv2.CrossVersionObjectReference{APIVersion: "apps/v1", Kind: "Deployment", Name: "api"},
			MinReplicas: ptr.To(int32(2)), MaxReplicas: 6}}
	create(t, z.web, z.api, z.queue, z.pinned, z.zero, z.db, z.rs, z.report, z.paused, z.nightly, z.follow, z.queueSO, z.pausedSO, hpa)
	// A ReplicaSet that a Deployment controls is the Deployment's to scale.
	z.owned = deployment(ns, "owner", 1, nil)
	create(t, z.owned)
	z.child = &appsv1.ReplicaSet{ObjectMeta: metav1.ObjectMeta{Namespace: ns, Name: "owner-1",
		OwnerReferences: []metav1.OwnerReference{{APIVersion: "apps/v1", Kind: "Deployment", Name: "owner", UID: z.owned.UID, Controller: ptr.To(true)}}},
		Spec: appsv1.ReplicaSetSpec{Replicas: ptr.To(int32(1)), Selector: &metav1.LabelSelector{MatchLabels: map[string]string{"app": "owner"}}, Template: podTemplate("owner")}}
	create(t, z.child)
	return z
}

// state is what the test checks of every workload: replicas, suspend, KEDA's annotation.
func (z *zoo) state(t *testing.T) map[string]string {
	t.Helper()
	out := map[string]string{}
	for _, name := range []string{"web", "api", "queue", "pinned", "zero", "owner"} {
		out["Deployment/"+name] = fmt.Sprint(replicas(t, "apps/v1/Deployment", z.ns, name))
	}
	out["StatefulSet/db"] = fmt.Sprint(replicas(t, "apps/v1/StatefulSet", z.ns, "db"))
	out["ReplicaSet/rs"] = fmt.Sprint(replicas(t, "apps/v1/ReplicaSet", z.ns, "rs"))
	out["ReplicaSet/owner-1"] = fmt.Sprint(replicas(t, "apps/v1/ReplicaSet", z.ns, "owner-1"))
	for _, name := range []string{"report", "paused"} {
		v, _, _ := unstructured.NestedBool(get(t, "batch/v1/CronJob", z.ns, name).Object, "spec", "suspend")
		out["CronJob/"+name] = fmt.Sprint(v)
	}
	v, _, _ := unstructured.NestedBool(get(t, "batch.almanac.dev/v1alpha1/ScheduledJob", z.ns, "nightly").Object, "spec", "suspend")
	out["ScheduledJob/nightly"] = fmt.Sprint(v)
	v, _, _ = unstructured.NestedBool(get(t, "batch.almanac.dev/v1alpha1/EventJob", z.ns, "follow").Object, "spec", "suspend")
	out["EventJob/follow"] = fmt.Sprint(v)
	for _, name := range []string{"queue", "held"} {
		a, ok := get(t, "keda.sh/v1alpha1/ScaledObject", z.ns, name).GetAnnotations()[sleepv1alpha1.KEDAPausedReplicasAnnotation]
		if !ok {
			a = "-"
		}
		out["ScaledObject/"+name] = a
	}
	return out
}

// kinds are the group/version/Kind of the zoo's workloads, by kind.
var kinds = map[string]string{"Deployment": "apps/v1/Deployment", "StatefulSet": "apps/v1/StatefulSet", "ReplicaSet": "apps/v1/ReplicaSet",
	"CronJob": "batch/v1/CronJob", "ScheduledJob": "batch.almanac.dev/v1alpha1/ScheduledJob", "EventJob": "batch.almanac.dev/v1alpha1/EventJob",
	"ScaledObject": "keda.sh/v1alpha1/ScaledObject"}

// records returns the holder of every workload of the zoo that carries a record.
func (z *zoo) records(t *testing.T) map[string]string {
	t.Helper()
	out := map[string]string{}
	for key := range z.state(t) {
		kind, name, _ := cut(key)
		if rec := record(t, get(t, kinds[kind], z.ns, name)); rec != nil {
			out[key] = rec.By
		}
	}
	return out
}

func cut(key string) (kind, name string, ok bool) {
	for i := range key {
		if key[i] == '/' {
			return key[:i], key[i+1:], true
		}
	}
	return "", "", false
}

func diffStates(want, got map[string]string) string {
	var out []string
	for k, v := range want {
		if got[k] != v {
			out = append(out, fmt.Sprintf("%s: %s, want %s", k, got[k], v))
		}
	}
	slices.Sort(out)
	return fmt.Sprint(out)
}

// TestSleepAndWakeExactly: at its boundary a Sleep puts every workload it selects to sleep,
// each as its kind sleeps (replicas 0; suspend; KEDA's paused-replicas 0, with the workload
// the ScaledObject scales left to it), recording what each was on the workload itself; it
// leaves alone what is opted out and what another object controls; at the end of the window
// it puts back exactly what was recorded, removes the records, and owns no field of any
// workload any more.
func TestSleepAndWakeExactly(t *testing.T) {
	t.Parallel()
	ns := newNamespace(t, nil)
	z := newZoo(t, ns)
	before := z.state(t)

	clk := newOffsetClock(monday.Add(-time.Minute))
	s := startSleeper(t, clk, sleeperOpts{}, ns)
	nights := newSleep(ns, "nights", sleepv1alpha1.SleepSpec{Asleep: []sleepv1alpha1.Window{window(monday, monday.Add(time.Hour))},
		Wake: sleepv1alpha1.Wake{Lead: sleepv1alpha1.Lead{Mode: sleepv1alpha1.LeadOff}}})
	create(t, nights)
	eventually(t, 10*time.Second, func() error {
		if st := sleepStatus(t, ns, "nights"); st.Phase != sleepv1alpha1.PhaseAwake || st.ObservedGeneration != nights.Generation {
			return fmt.Errorf("phase %q", st.Phase)
		}
		return nil
	})
	if got := z.state(t); diffStates(before, got) != "[]" {
		t.Fatalf("before the window: %s", diffStates(before, got))
	}

	// The window opens.
	clk.set(monday.Add(5 * time.Second))
	poke(t, nights)
	asleep := map[string]string{
		"Deployment/web": "0", "Deployment/api": "0", "Deployment/queue": "2", "Deployment/pinned": "2", "Deployment/zero": "0", "Deployment/owner": "0",
		"StatefulSet/db": "0", "ReplicaSet/rs": "0", "ReplicaSet/owner-1": "1",
		"CronJob/report": "true", "CronJob/paused": "true", "ScheduledJob/nightly": "true", "EventJob/follow": "true",
		"ScaledObject/queue": "0", "ScaledObject/held": "0",
	}
	eventually(t, 10*time.Second, func() error {
		if d := diffStates(asleep, z.state(t)); d != "[]" {
			return fmt.Errorf("asleep: %s", d)
		}
		return nil
	})
	holder := sleepv1alpha1.Holder(ns, "nights")
	wantRecords := map[string]string{}
	for k := range asleep {
		if k != "Deployment/pinned" && k != "ReplicaSet/owner-1" && k != "Deployment/queue" {
			wantRecords[k] = holder
		}
	}
	if got := z.records(t); diffStates(wantRecords, got) != "[]" || len(got) != len(wantRecords) {
		t.Errorf("records %v, want %v", got, wantRecords)
	}
	// What each was is on the workload: web had 3, the paused CronJob was suspended, the
	// ScaledObject held at 4 had its annotation.
	if rec := record(t, get(t, "apps/v1/Deployment", ns, "web")); *rec.Replicas != 3 {
		t.Errorf("web's record %+v", rec)
	}
	if u := get(t, "autoscaling/v2/HorizontalPodAutoscaler", ns, "api"); record(t, u) != nil || len(almanacEntries(u)) > 0 {
		t.Errorf("the HPA of api was written: %v", u.GetAnnotations())
	}
	if rec := record(t, get(t, "batch/v1/CronJob", ns, "paused")); !*rec.Suspend {
		t.Errorf("paused's record %+v", rec)
	}
	if rec := record(t, get(t, "keda.sh/v1alpha1/ScaledObject", ns, "held")); rec.PausedReplicas == nil || *rec.PausedReplicas != "4" {
		t.Errorf("held's record %+v", rec)
	}
	st := sleepStatus(t, ns, "nights")
	// web 3, api 2, owner 1, db 1, rs 2 Pods of 250m and 128Mi each.
	if st.Phase != sleepv1alpha1.PhaseAsleep || st.Savings.AsleepPods != 9 || st.Savings.AsleepCPUMillicores != 2250 || st.Savings.AsleepMemoryMebibytes != 1152 {
		t.Errorf("status %s", toJSON(st))
	}
	if st.Workloads.OptedOut != 1 || st.Workloads.Asleep != int32(len(wantRecords)) {
		t.Errorf("counts %+v, want 1 opted out and %d asleep", st.Workloads, len(wantRecords))
	}

	// The window closes: everything is back exactly as it was, and almanac owns nothing.
	clk.set(monday.Add(time.Hour + 5*time.Second))
	poke(t, nights)
	eventually(t, 10*time.Second, func() error {
		if d := diffStates(before, z.state(t)); d != "[]" {
			return fmt.Errorf("awake: %s", d)
		}
		if got := z.records(t); len(got) != 0 {
			return fmt.Errorf("records left: %v", got)
		}
		return nil
	})
	for key := range before {
		kind, name, _ := cut(key)
		if e := almanacEntries(get(t, kinds[kind], ns, name)); len(e) > 0 {
			t.Errorf("%s: almanac still owns fields after the wake: %v", key, e)
		}
	}
	// The wake waits for what it woke to be Ready (the tests write readyReplicas), then
	// measures itself.
	for _, obj := range []client.Object{z.web, z.api, z.owned, z.zero, z.db, z.rs} {
		setReady(t, obj)
	}
	eventually(t, 10*time.Second, func() error {
		st := sleepStatus(t, ns, "nights")
		if st.Phase != sleepv1alpha1.PhaseAwake || st.Savings.AsleepPods != 0 || st.Savings.Last.PodSeconds != 9*3600 || len(st.Wakes) != 1 {
			return fmt.Errorf("status after the wake: %s", toJSON(st))
		}
		return nil
	})
	_ = s
}
