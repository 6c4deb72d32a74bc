package sleeping

import (
	"encoding/json"
	"strings"
	"testing"
	"time"

	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/runtime/schema"

	"github.com/almanac-dev/almanac/api/putback"
	sleepv1alpha1 "github.com/almanac-dev/almanac/api/sleep/v1alpha1"
)

var deployment = schema.GroupVersionKind{Group: "apps", Version: "v1", Kind: "Deployment"}

const holder = "Sleep/team/nights"

func deploy(name string, replicas int32, labels map[string]string) Workload {
	return Workload{GVK: deployment, Handling: sleepv1alpha1.HandleReplicas, Namespace: "team", Name: name, ResourceVersion: "1",
		Labels: labels, Annotations: map[string]string{}, Replicas: new(replicas), Ready: true, InScope: true,
		PodCPUMillicores: 250, PodMemoryMebibytes: 128}
}

func held(w Workload, replicas int32, by string) Workload {
	rec := &sleepv1alpha1.Record{By: by, Replicas: new(replicas), At: time.Date(2027, 3, 1, 20, 0, 0, 0, time.UTC)}
	w.Annotations = map[string]string{sleepv1alpha1.RecordAnnotation: rec.Encode()}
	w.Replicas = new(int32(0))
	return w
}

func actions(d Decision) string {
	var out []string
	for _, s := range d.Steps {
		out = append(out, string(s.Action)+" "+s.W.Name)
	}
	return strings.Join(out, ", ")
}

func TestDecideSleep(t *testing.T) {
	now := time.Date(2027, 3, 1, 20, 0, 0, 0, time.UTC)
	p := compile(t, sleepv1alpha1.SleepSpec{Asleep: []sleepv1alpha1.Window{{Type: "Daily", StartTime: "20:00", EndTime: "07:00"}},
		Selector: &metav1.LabelSelector{MatchLabels: map[string]string{"env": "dev"}}})
	optOut := deploy("pinned", 2, map[string]string{"env": "dev"})
	optOut.Annotations[sleepv1alpha1.StayAwakeAnnotation] = "2027-03-01T22:00:00Z"
	scaled := deploy("queue", 1, map[string]string{"env": "dev"})
	scaled.ScaledBy = "queue"
	in := Input{Plan: p, Holder: holder, Generation: 1, State: State{Asleep: true}, Now: now, Workloads: []Workload{
		deploy("web", 3, map[string]string{"env": "dev"}),
		deploy("prod", 3, map[string]string{"env": "prod"}),
		held(deploy("api", 2, map[string]string{"env": "dev"}), 2, "ClusterSleep/all"),
		optOut,
		scaled,
		held(deploy("db", 1, map[string]string{"env": "dev"}), 1, holder),
	}}
	d := Decide(in)
	if got := actions(d); got != "Sleep web" {
		t.Errorf("steps %q, want Sleep web", got)
	}
	want := sleepv1alpha1.WorkloadCounts{Selected: 4, Asleep: 2, OptedOut: 1, HeldElsewhere: 1}
	if d.Counts != want {
		t.Errorf("counts %+v, want %+v", d.Counts, want)
	}
	if rec := d.Steps[0].Record; rec.By != holder || *rec.Replicas != 3 || !rec.At.Equal(now) {
		t.Errorf("record %+v", rec)
	}
	// web's 3 and db's 1 Pods, each with 250m and 128Mi.
	if d.AsleepPods != 4 || d.AsleepCPUMillicores != 1000 || d.AsleepMemoryMebibytes != 512 {
		t.Errorf("asleep %d Pods, %dm, %dMi", d.AsleepPods, d.AsleepCPUMillicores, d.AsleepMemoryMebibytes)
	}
	if !d.Next.Equal(time.Date(2027, 3, 1, 22, 0, 0, 0, time.UTC)) {
		t.Errorf("next %v, want the opt-out's end", d.Next)
	}
	// The ScaledObject is among the default kinds: the workload it scales is not selected.
	if d.Counts.NotSlept != 0 {
		t.Errorf("not slept %d", d.Counts.NotSlept)
	}

	// Opted out while asleep: wakes at once, whatever the tiers.
	db := held(deploy("db", 1, map[string]string{"env": "dev"}), 1, holder)
	db.Annotations[sleepv1alpha1.StayAwakeAnnotation] = "true"
	d = Decide(Input{Plan: p, Holder: holder, State: State{Asleep: true}, Now: now, Workloads: []Workload{db}})
	if got := actions(d); got != "Wake db" || !strings.Contains(d.Steps[0].Why, "stay-awake") {
		t.Errorf("opted out: %q (%s)", got, d.Steps[0].Why)
	}
}

func TestDecideWakeTiersAndPace(t *testing.T) {
	now := time.Date(2027, 3, 2, 6, 50, 0, 0, time.UTC)
	p := compile(t, sleepv1alpha1.SleepSpec{Asleep: []sleepv1alpha1.Window{{Type: "Daily", StartTime: "20:00", EndTime: "07:00"}},
		Wake: sleepv1alpha1.Wake{PodsPerMinute: new(int32(5)), Tiers: []sleepv1alpha1.Tier{
			{Name: "databases", Selector: metav1.LabelSelector{MatchLabels: map[string]string{"tier": "db"}}}}}})
	db := held(deploy("db", 1, map[string]string{"tier": "db"}), 1, holder)
	api := held(deploy("api", 3, nil), 3, holder)
	web := held(deploy("web", 3, nil), 3, holder)
	state := State{InLead: true, WakeAt: now.Add(10 * time.Minute)}

	// First: the databases' tier alone.
	d := Decide(Input{Plan: p, Holder: holder, State: state, Now: now, Workloads: []Workload{web, api, db}})
	if got := actions(d); got != "Wake db" || d.Tier != 0 || !d.TierStarted || !d.Waking {
		t.Fatalf("first: %q tier %d started %v", got, d.Tier, d.TierStarted)
	}
	wake := &sleepv1alpha1.WakeProgress{Tier: 0, TierStartedAt: &metav1.Time{Time: now}, Paced: d.Paced}

	// db woken but not Ready: the next tier waits, until the tier timeout.
	dbAwake := deploy("db", 1, map[string]string{"tier": "db"})
	dbAwake.Ready = false
	d = Decide(Input{Plan: p, Holder: holder, State: state, Now: now.Add(5 * time.Second), Wake: wake, Workloads: []Workload{web, api, dbAwake}})
	if len(d.Steps) != 0 || len(d.Waiting) != 1 || !d.Next.Equal(now.Add(DefaultTierTimeout)) {
		t.Fatalf("db not Ready: %q, waiting %v, next %v", actions(d), d.Waiting, d.Next)
	}
	// db Ready: the rest wake, at the pace: 1 Pod of db and 3 of api make 4 of 5 in this
	// minute, so web's 3 wait until db's second is a minute old.
	dbAwake.Ready = true
	d = Decide(Input{Plan: p, Holder: holder, State: state, Now: now.Add(10 * time.Second), Wake: wake, Workloads: []Workload{web, api, dbAwake}})
	if got := actions(d); got != "Wake api" || d.Tier != 1 || !d.TierStarted {
		t.Fatalf("db Ready: %q tier %d", got, d.Tier)
	}
	if want := now.Add(PaceWindow + time.Second); !d.Next.Equal(want) {
		t.Errorf("next %v, want %v (the pace frees up)", d.Next, want)
	}
	total := int32(0)
	for _, e := range d.Paced {
		total += e.Pods
	}
	if total != 4 {
		t.Errorf("paced %v, want 4 Pods", d.Paced)
	}
	// A minute later db's Pod no longer counts, but api's 3 still do: web waits for them.
	wake = &sleepv1alpha1.WakeProgress{Tier: 1, TierStartedAt: &metav1.Time{Time: now.Add(10 * time.Second)}, Paced: d.Paced}
	apiAwake := deploy("api", 3, nil)
	d = Decide(Input{Plan: p, Holder: holder, State: state, Now: now.Add(61 * time.Second), Wake: wake, Workloads: []Workload{web, apiAwake, dbAwake}})
	if got := actions(d); got != "" || !d.Next.Equal(now.Add(71*time.Second)) {
		t.Fatalf("a minute later: %q, next %v", got, d.Next)
	}
	d = Decide(Input{Plan: p, Holder: holder, State: state, Now: now.Add(71 * time.Second), Wake: wake, Workloads: []Workload{web, apiAwake, dbAwake}})
	if got := actions(d); got != "Wake web" {
		t.Fatalf("once api's Pods are a minute old: %q", got)
	}
	webAwake := deploy("web", 3, nil)
	webAwake.Ready = false
	d = Decide(Input{Plan: p, Holder: holder, State: State{WakeAt: state.WakeAt}, Now: now.Add(75 * time.Second), Wake: wake, Workloads: []Workload{webAwake, apiAwake, dbAwake}})
	if d.WakeDone || !d.Waking {
		t.Errorf("web not Ready: done %v", d.WakeDone)
	}
	webAwake.Ready = true
	d = Decide(Input{Plan: p, Holder: holder, State: State{WakeAt: state.WakeAt}, Now: now.Add(80 * time.Second), Wake: wake, Workloads: []Workload{webAwake, apiAwake, dbAwake}})
	if !d.WakeDone || d.Waking {
		t.Errorf("everything Ready: done %v waking %v", d.WakeDone, d.Waking)
	}
}

func TestDecidePaceLetsABigWorkloadWakeAlone(t *testing.T) {
	now := time.Date(2027, 3, 2, 7, 0, 0, 0, time.UTC)
	p := compile(t, sleepv1alpha1.SleepSpec{Asleep: []sleepv1alpha1.Window{{Type: "Daily", StartTime: "20:00", EndTime: "07:00"}},
		Wake: sleepv1alpha1.Wake{PodsPerMinute: new(int32(2))}})
	big := held(deploy("big", 10, nil), 10, holder)
	small := held(deploy("small", 1, nil), 1, holder)
	d := Decide(Input{Plan: p, Holder: holder, State: State{}, Now: now, Workloads: []Workload{small, big}})
	if got := actions(d); got != "Wake big" {
		t.Errorf("%q, want the big one alone", got)
	}
}

func TestPutBack(t *testing.T) {
	now := time.Date(2027, 3, 1, 22, 0, 0, 0, time.UTC)
	w := held(deploy("web", 3, nil), 3, holder)
	w.Replicas = new(int32(5)) // a sync put 5 back
	rec, _ := sleepv1alpha1.DecodeRecord(w.Annotations)

	// Nobody else changed it (almanac's own interrupted write): put back, not counted.
	out, resleep := PutBack(rec, &w, nil, 1, now)
	if !resleep || len(out.PutBacks) != 0 || *out.Replicas != 3 {
		t.Errorf("own change: %+v %v", out, resleep)
	}
	// Another manager's: its value is the new wish, counted.
	for i := range putback.Max {
		out, resleep = PutBack(rec, &w, []string{"argocd-controller"}, 1, now.Add(time.Duration(i)*time.Second))
		if !resleep || *out.Replicas != 5 {
			t.Fatalf("put-back %d: %+v %v", i+1, out, resleep)
		}
		rec = out
	}
	out, resleep = PutBack(rec, &w, []string{"argocd-controller"}, 1, now.Add(time.Minute))
	if resleep || out.Contested == nil || out.Contested.Manager != "argocd-controller" || out.Contested.Field != "spec.replicas" || *out.Replicas != 5 {
		t.Fatalf("the %d-th: %+v %v, want contested", putback.Max+1, out, resleep)
	}
	// Contested at this generation: left alone and counted.
	w.Annotations = map[string]string{sleepv1alpha1.RecordAnnotation: out.Encode()}
	p := compile(t, sleepv1alpha1.SleepSpec{Asleep: []sleepv1alpha1.Window{{Type: "Daily", StartTime: "20:00", EndTime: "07:00"}}})
	d := Decide(Input{Plan: p, Holder: holder, Generation: 1, State: State{Asleep: true}, Now: now, Workloads: []Workload{w}})
	if len(d.Steps) != 0 || d.Counts.Contested != 1 || len(d.Contested) != 1 || d.Contested[0].Manager != "argocd-controller" {
		t.Errorf("contested: %q %+v", actions(d), d.Counts)
	}
	// A new generation resumes the put-backs, counted afresh.
	d = Decide(Input{Plan: p, Holder: holder, Generation: 2, State: State{Asleep: true}, Now: now, Workloads: []Workload{w}})
	if got := actions(d); got != "Resleep web" {
		t.Errorf("generation 2: %q", got)
	}
	out, resleep = PutBack(out, &w, []string{"argocd-controller"}, 2, now.Add(2*time.Minute))
	if !resleep || len(out.PutBacks) != 1 || out.Contested != nil {
		t.Errorf("resumed: %+v %v", out, resleep)
	}
}

func TestPatches(t *testing.T) {
	w := deploy("web", 3, nil)
	rec := NewRecord(holder, &w, time.Date(2027, 3, 1, 20, 0, 0, 0, time.UTC))
	var got map[string]any
	if err := json.Unmarshal(SleepPatch(&w, rec), &got); err != nil {
		t.Fatal(err)
	}
	if got["spec"].(map[string]any)["replicas"] != float64(0) || got["metadata"].(map[string]any)["resourceVersion"] != "1" {
		t.Errorf("sleep patch %v", got)
	}
	if err := json.Unmarshal(WakePatch(&w, rec), &got); err != nil {
		t.Fatal(err)
	}
	if got["spec"].(map[string]any)["replicas"] != float64(3) || got["metadata"].(map[string]any)["annotations"].(map[string]any)[sleepv1alpha1.RecordAnnotation] != nil {
		t.Errorf("wake patch %v", got)
	}
	entries := []metav1.ManagedFieldsEntry{
		{Manager: "kubectl", Operation: metav1.ManagedFieldsOperationUpdate},
		{Manager: "almanac", Operation: metav1.ManagedFieldsOperationApply},
		{Manager: "almanac", Operation: metav1.ManagedFieldsOperationUpdate},
		{Manager: "almanac", Operation: metav1.ManagedFieldsOperationUpdate, Subresource: "status"},
	}
	if got := string(DisownPatch(entries, "almanac")); got != `[{"op":"test","path":"/metadata/managedFields/2/manager","value":"almanac"},{"op":"test","path":"/metadata/managedFields/2/operation","value":"Update"},{"op":"remove","path":"/metadata/managedFields/2"}]` {
		t.Errorf("disown %s", got)
	}
	if DisownPatch(entries[:2], "almanac") != nil {
		t.Error("nothing to disown")
	}
}
