//go:build e2e

package e2e

import (
	"context"
	"fmt"
	"slices"
	"strings"
	"testing"
	"time"

	batchv1 "k8s.io/api/batch/v1"
	corev1 "k8s.io/api/core/v1"
	eventsv1 "k8s.io/api/events/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"sigs.k8s.io/controller-runtime/pkg/client"

	batchv1alpha1 "github.com/almanac-dev/almanac/api/batch/v1alpha1"
)

// fanInUpstreams are the three ScheduledJobs of the fan-in steps and how long their Jobs run.
var fanInUpstreams = []struct {
	name  string
	sleep int
}{{"extract-a", 5}, {"extract-b", 15}, {"extract-c", 25}}

// fanInManifests are three every-minute ScheduledJobs whose Jobs take about 5, 15 and 25 s
// (each one's command may be replaced for a slot, by commands[name]: a case on $SLOT, the slot
// its Pod reads with the downward API), and an AllOf EventJob over them whose Pod prints the
// slot and the set's upstream Jobs it reads with the downward API.
func fanInManifests(commands map[string]string) string {
	var b strings.Builder
	for _, u := range fanInUpstreams {
		cmd := fmt.Sprintf("sleep %d", u.sleep)
		if c, ok := commands[u.name]; ok {
			cmd = c
		}
		fmt.Fprintf(&b, `
---
apiVersion: batch.almanac.dev/v1alpha1
kind: ScheduledJob
metadata: {name: %s}
spec:
  schedule: "* * * * *"
  timeZone: UTC
  successfulJobsHistoryLimit: 5
  failedJobsHistoryLimit: 5`+jobTemplate(cmd)+slotEnv+"\n", u.name)
	}
	b.WriteString(`
---
apiVersion: batch.almanac.dev/v1alpha1
kind: EventJob
metadata: {name: load}
spec:
  triggers:
  - {kind: ScheduledJob, name: extract-a}
  - {kind: ScheduledJob, name: extract-b}
  - {kind: ScheduledJob, name: extract-c}
  fanIn: {require: AllOf, pairBy: Slot, onFailure: Skip}
  successfulJobsHistoryLimit: 5` + jobTemplate("echo load for $SLOT from $UPSTREAM") + slotEnv + `
            - name: UPSTREAM
              valueFrom: {fieldRef: {fieldPath: "metadata.annotations['batch.almanac.dev/trigger-jobs']"}}
`)
	return b.String()
}

// caseSlot is a shell command that runs then when the Pod's slot is slot, and otherwise
// runs otherwise.
func caseSlot(slot time.Time, then, otherwise string) string {
	return fmt.Sprintf("case $SLOT in %s) %s;; *) %s;; esac", slot.UTC().Format(time.RFC3339), then, otherwise)
}

// testFanIn: three ScheduledJobs on the same schedule, whose Jobs take about 5, 15 and 25 s,
// and an AllOf EventJob over them, on the real cluster, for two slots: the first slot's
// extract-c takes 70 s, so it ends after the second slot's extract-a; the second slot's
// extract-b fails. The first slot gets one Job, created after its last upstream Job completed,
// whose Pod reads the slot and the slot's three Jobs (not the second slot's extract-a); the
// second starts none, and is counted (onFailure Skip).
func testFanIn(t *testing.T) {
	ns := namespace(t, "e2e-fanin")
	first := nextBoundary(20 * time.Second)
	second := first.Add(time.Minute)
	mustApply(t, ns, fanInManifests(map[string]string{
		"extract-b": "sleep 15; " + caseSlot(second, "exit 1", "true"),
		"extract-c": caseSlot(first, "sleep 70", "sleep 25"),
	}))
	// Two slots run; then the upstreams are suspended.
	eventually(t, time.Until(second)+time.Minute, "the second slot's upstream Jobs created", func() error {
		for _, u := range fanInUpstreams {
			if !slices.ContainsFunc(jobsOf(t, ns, "ScheduledJob", u.name), func(j batchv1.Job) bool {
				return j.Annotations[batchv1alpha1.AnnotationScheduledTime] == second.Format(time.RFC3339)
			}) {
				return fmt.Errorf("no Job of %s for %s", u.name, hm(second))
			}
		}
		return nil
	})
	for _, u := range fanInUpstreams {
		mustKubectl(t, "patch", "scheduledjob", u.name, "-n", ns, "--type=merge", "-p", `{"spec":{"suspend":true}}`)
	}
	slots := []time.Time{first, second}
	eventually(t, 3*time.Minute, "every upstream Job ended, the first set's Job complete, the second set failed", func() error {
		for _, u := range fanInUpstreams {
			for _, j := range jobsOf(t, ns, "ScheduledJob", u.name) {
				if !jobComplete(j) && !jobCondition(j, batchv1.JobFailed) {
					return fmt.Errorf("%s still runs", j.Name)
				}
			}
		}
		done := 0
		for _, j := range jobsOf(t, ns, "EventJob", "load") {
			if jobComplete(j) {
				done++
			}
		}
		if done < 1 || almanacField(t, ns, "eventjob", "load", ".status.fanIn.failedSets") != "1" {
			return fmt.Errorf("%d of the EventJob's Jobs complete, failedSets %q", done, almanacField(t, ns, "eventjob", "load", ".status.fanIn.failedSets"))
		}
		return nil
	})
	fenceSpec(t, ns, "eventjob", "load")

	// One Job per complete slot, each after the last upstream Job of its slot, with the slot
	// and that slot's upstream Jobs on its Pod.
	upstream := map[string][]batchv1.Job{} // slot → its upstream Jobs
	for _, u := range fanInUpstreams {
		for _, j := range jobsOf(t, ns, "ScheduledJob", u.name) {
			s := j.Annotations[batchv1alpha1.AnnotationScheduledTime]
			upstream[s] = append(upstream[s], j)
		}
	}
	own := jobsOf(t, ns, "EventJob", "load")
	bySlot := map[string][]batchv1.Job{}
	for _, j := range own {
		s := j.Annotations[batchv1alpha1.AnnotationScheduledTime]
		bySlot[s] = append(bySlot[s], j)
	}
	var lines []string
	for i, slot := range slots {
		key := slot.Format(time.RFC3339)
		ups := upstream[key]
		if len(ups) != 3 {
			t.Errorf("slot %s: %d upstream Jobs, want 3", key, len(ups))
			continue
		}
		var lastEnd time.Time
		var names []string
		for _, u := range ups {
			names = append(names, u.Name)
			if end := jobEnd(u); end.After(lastEnd) {
				lastEnd = end
			}
		}
		slices.Sort(names) // extract-a, -b, -c: the order of the triggers
		jobs := bySlot[key]
		if i == 1 {
			if len(jobs) != 0 {
				t.Errorf("slot %s, whose extract-b failed: %d Jobs, want none (onFailure Skip)", key, len(jobs))
			}
			lines = append(lines, fmt.Sprintf("%s: extract-b failed, no Job (last upstream end %s)", hm(slot), lastEnd.Format(time.TimeOnly)))
			continue
		}
		if len(jobs) != 1 {
			t.Errorf("slot %s: %d Jobs, want exactly 1", key, len(jobs))
			continue
		}
		j := jobs[0]
		if want := batchv1alpha1.FanInJobName("load", key); j.Name != want {
			t.Errorf("slot %s: Job %s, want %s", key, j.Name, want)
		}
		if j.CreationTimestamp.Time.Before(lastEnd) {
			t.Errorf("slot %s: Job %s created at %s, before the slot's last upstream Job ended at %s", key, j.Name, j.CreationTimestamp.Time, lastEnd)
		}
		if got := j.Spec.Template.Annotations[batchv1alpha1.AnnotationTriggerJobs]; got != strings.Join(names, ",") {
			t.Errorf("slot %s: the Pod's trigger-jobs %q, want %q (that slot's upstream Jobs)", key, got, strings.Join(names, ","))
		}
		logs := mustKubectl(t, "logs", "-n", ns, "job/"+j.Name)
		if want := fmt.Sprintf("load for %s from %s", key, strings.Join(names, ",")); !strings.Contains(logs, want) {
			t.Errorf("slot %s: the Pod printed %q, want %q", key, strings.TrimSpace(logs), want)
		}
		lines = append(lines, fmt.Sprintf("%s: Job %s created %s after the last upstream ended (%s); its Pod printed %q",
			hm(slot), j.Name, j.CreationTimestamp.Sub(lastEnd).Round(time.Second), lastEnd.Format(time.TimeOnly), strings.TrimSpace(logs)))
	}
	// The first slot's extract-c ended after the second slot's extract-a.
	if a2, c1 := findJob(upstream[second.Format(time.RFC3339)], "extract-a"), findJob(upstream[first.Format(time.RFC3339)], "extract-c"); a2 != nil && c1 != nil {
		if !jobEnd(*c1).After(jobEnd(*a2)) {
			t.Errorf("the first slot's extract-c ended at %s, not after the second slot's extract-a at %s: the slots did not overlap", jobEnd(*c1), jobEnd(*a2))
		}
		lines = append(lines, fmt.Sprintf("the first slot's extract-c ended at %s, after the second slot's extract-a at %s", jobEnd(*c1).Format(time.TimeOnly), jobEnd(*a2).Format(time.TimeOnly)))
	}
	if len(own) != 1 {
		t.Errorf("the EventJob has %d Jobs, want 1", len(own))
	}
	st := mustKubectl(t, "get", "eventjob", "load", "-n", ns, "-o", "jsonpath={.status.triggerCount} {.status.fanIn.failedSets} {.status.fanIn.expiredSets}")
	if st != "1 1 " && st != "1 1 0" {
		t.Errorf("status triggerCount, fanIn.failedSets, fanIn.expiredSets: %q, want 1, 1 and none", st)
	}
	if n := eventCount(t, ns, "load", "SetFailed"); n != 1 {
		t.Errorf("%d SetFailed events, want 1", n)
	}
	t.Logf("fan-in over three every-minute ScheduledJobs:\n  %s", strings.Join(lines, "\n  "))
}

// jobEnd is when a Job completed or failed (its condition's time).
func jobEnd(j batchv1.Job) time.Time {
	for _, c := range j.Status.Conditions {
		if (c.Type == batchv1.JobComplete || c.Type == batchv1.JobFailed) && c.Status == corev1.ConditionTrue {
			return c.LastTransitionTime.Time
		}
	}
	return time.Time{}
}

// findJob returns the Job of jobs whose controller is the named ScheduledJob.
func findJob(jobs []batchv1.Job, owner string) *batchv1.Job {
	for i := range jobs {
		if ref := metav1.GetControllerOf(&jobs[i]); ref != nil && ref.Name == owner {
			return &jobs[i]
		}
	}
	return nil
}

// eventCount counts the events.k8s.io Events of reason about the named object.
func eventCount(t *testing.T, ns, name, reason string) int {
	t.Helper()
	list := &eventsv1.EventList{}
	if err := kube.List(context.Background(), list, client.InNamespace(ns)); err != nil {
		t.Fatal(err)
	}
	n := 0
	for _, e := range list.Items {
		if e.Regarding.Name == name && e.Reason == reason {
			n++
		}
	}
	return n
}
