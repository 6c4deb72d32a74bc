package kstatus_test

import (
	"context"
	"fmt"
	"strings"
	"testing"
	"time"

	batchv1 "k8s.io/api/batch/v1"
	corev1 "k8s.io/api/core/v1"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"
	"k8s.io/apimachinery/pkg/util/wait"
	"k8s.io/utils/clock"
	"k8s.io/utils/ptr"
	"sigs.k8s.io/cli-utils/pkg/kstatus/status"
	"sigs.k8s.io/controller-runtime/pkg/client"
	"sigs.k8s.io/yaml"

	autoscalingv1alpha1 "github.com/almanac-dev/almanac/api/autoscaling/v1alpha1"
	batchv1alpha1 "github.com/almanac-dev/almanac/api/batch/v1alpha1"
	"github.com/almanac-dev/almanac/reconcilers/base"
	"github.com/almanac-dev/almanac/reconcilers/eventjob"
	"github.com/almanac-dev/almanac/reconcilers/schedule"
	"github.com/almanac-dev/almanac/reconcilers/scheduledjob"
	"github.com/almanac-dev/almanac/reconcilers/scheduledpodautoscaler"
)

// A state is one almanac object in one state, and what kstatus must say about it.
type state struct {
	// name is the object's name; kind its kind (apiVersion from kinds).
	kind, name string
	// reached says that the object is in the state, from its status other than Stalled (the
	// condition kstatus reads), once almanac has observed its generation.
	reached func(u *unstructured.Unstructured) bool
	// act, when set, runs once the manager runs, to bring the object to its state (finish
	// its Job).
	act  func(t *testing.T, ns string)
	want status.Status
}

var apiVersions = map[string]string{
	"ScheduledJob":           batchv1alpha1.GroupVersion.String(),
	"EventJob":               batchv1alpha1.GroupVersion.String(),
	"ScheduledPodAutoscaler": autoscalingv1alpha1.GroupVersion.String(),
	"Schedule":               autoscalingv1alpha1.GroupVersion.String(),
	"Calendar":               "almanac.dev/v1alpha1",
	"ClusterCalendar":        "almanac.dev/v1alpha1",
}

// TestKstatus creates an object of each kind in each state while no manager runs (new: every
// kind with a status is InProgress; the calendars, which have none, are Current), starts the
// reconcilers, waits for each object to reach its state and checks what kstatus says about
// it. Then the adversarial cases: a Failed object whose spec is fixed is InProgress as soon
// as the edit is stored and Current once reconciled; one whose missing target appears
// becomes Current without an edit; a spec edit of a Current object is InProgress until
// reconciled.
func TestKstatus(t *testing.T) {
	ctx := context.Background()
	ns := env.NewNamespace(t, "kstatus")
	// The one-shots are due a minute ago (within the default startingDeadlineSeconds of 600),
	// or two hours ago (missed): the reconcilers run on the real clock.
	due := time.Now().UTC().Truncate(time.Minute).Add(-time.Minute)
	at := due.Format("2006-01-02T15:04")
	missed := due.Add(-2 * time.Hour).Format("2006-01-02T15:04")
	clusterCalendar := ns + "-holidays"

	create(t, ns, `
apiVersion: almanac.dev/v1alpha1
kind: Calendar
metadata: {name: holidays}
spec:
  days: [{date: "12-25", name: Christmas Day}]
---
apiVersion: almanac.dev/v1alpha1
kind: ClusterCalendar
metadata: {name: `+clusterCalendar+`}
spec:
  days: [{date: "01-01", name: New Year's Day}]
---
`+scheduledJob("sj-scheduled", `schedule: "0 0 1 1 *"`)+`
---
`+scheduledJob("sj-suspended", `schedule: "0 0 1 1 *"`, `suspend: true`)+`
---
`+scheduledJob("sj-invalid", `schedule: "0 0 1 1 *"`, `timeZone: Europe/Atlantis`)+`
---
`+scheduledJob("sj-suspended-invalid", `schedule: "0 0 1 1 *"`, `timeZone: Europe/Atlantis`, `suspend: true`)+`
---
`+scheduledJob("sj-calendar", `schedule: "0 0 1 1 *"`, `calendars: {skip: [{name: missing}]}`)+`
---
`+scheduledJob("sj-conflict", `at: "`+at+`"`)+`
---
`+scheduledJob("sj-succeeded", `at: "`+at+`"`)+`
---
`+scheduledJob("sj-failed", `at: "`+at+`"`)+`
---
`+scheduledJob("sj-missed", `at: "`+missed+`"`, `startingDeadlineSeconds: 60`)+`
---
`+eventJob("ej-watching", `trigger: {apiVersion: batch/v1, kind: Job, name: upstream}`)+`
---
`+eventJob("ej-suspended", `trigger: {apiVersion: batch/v1, kind: Job, name: upstream}`, `suspend: true`)+`
---
`+eventJob("ej-invalid", `trigger: {apiVersion: batch.almanac.dev/v1alpha1, kind: EventJob, name: ej-invalid}`)+`
---
`+autoscaler("spa-applied")+`
---
`+autoscaler("spa-suspended", `suspend: true`)+`
---
`+autoscaler("spa-conflict")+`
---
`+autoscaler("spa-forbid", `overlapPolicy: Forbid`)+`
---
`+autoscaler("spa-invalid")+`
---
apiVersion: autoscaling.almanac.dev/v1alpha1
kind: ScheduledPodAutoscaler
metadata: {name: spa-no-target}
spec:
  targetRef: {apiVersion: autoscaling/v2, kind: HorizontalPodAutoscaler, name: later}
  minReplicas: 1
  maxReplicas: 4
---
`+daily("sched-scheduled", "spa-applied")+`
---
`+daily("sched-suspended", "spa-suspended", `suspend: true`)+`
---
apiVersion: autoscaling.almanac.dev/v1alpha1
kind: Schedule
metadata: {name: sched-completed}
spec:
  scaleTargetRef: {name: spa-applied}
  minReplicas: 3
  type: OneShot
  startTime: "2026-01-01T08:00"
  endTime: "2026-01-01T18:00"
---
`+daily("sched-invalid", "spa-invalid", `timeZone: Europe/Atlantis`)+`
---
`+daily("sched-calendar", "spa-none", `calendars: {skip: [{kind: Calendar, name: missing}]}`)+`
---
`+daily("sched-kept", "spa-forbid")+`
---
`+daily("sched-left-out", "spa-forbid")+`
---
apiVersion: autoscaling/v2
kind: HorizontalPodAutoscaler
metadata: {name: spa-conflict}
spec:
  scaleTargetRef: {apiVersion: apps/v1, kind: Deployment, name: web}
  maxReplicas: 3
---
apiVersion: batch/v1
kind: Job
metadata: {name: `+batchv1alpha1.ScheduledJobName("sj-conflict", due)+`}
spec:
  template:
    spec:
      restartPolicy: Never
      containers: [{name: main, image: busybox}]
`)

	finish := func(name string, cond batchv1.JobConditionType) func(t *testing.T, ns string) {
		return func(t *testing.T, ns string) { finishJob(t, ns, batchv1alpha1.ScheduledJobName(name, due), cond) }
	}
	states := []state{
		{kind: "Calendar", name: "holidays", want: status.CurrentStatus},
		{kind: "ClusterCalendar", name: clusterCalendar, want: status.CurrentStatus},

		{kind: "ScheduledJob", name: "sj-scheduled", reached: ready("True", batchv1alpha1.ReasonScheduled), want: status.CurrentStatus},
		{kind: "ScheduledJob", name: "sj-suspended", reached: ready("True", batchv1alpha1.ReasonSuspended), want: status.CurrentStatus},
		{kind: "ScheduledJob", name: "sj-invalid", reached: ready("False", batchv1alpha1.ReasonInvalidSchedule), want: status.FailedStatus},
		{kind: "ScheduledJob", name: "sj-suspended-invalid", reached: ready("False", batchv1alpha1.ReasonInvalidSchedule), want: status.FailedStatus},
		{kind: "ScheduledJob", name: "sj-calendar", reached: condition("Calendars", "False", "CalendarNotUsable"), want: status.FailedStatus},
		{kind: "ScheduledJob", name: "sj-conflict", reached: ready("False", batchv1alpha1.ReasonJobConflict), want: status.FailedStatus},
		{kind: "ScheduledJob", name: "sj-succeeded", act: finish("sj-succeeded", batchv1.JobComplete),
			reached: phase(batchv1alpha1.ScheduledJobPhaseSucceeded), want: status.CurrentStatus},
		{kind: "ScheduledJob", name: "sj-failed", act: finish("sj-failed", batchv1.JobFailed),
			reached: phase(batchv1alpha1.ScheduledJobPhaseFailed), want: status.FailedStatus},
		{kind: "ScheduledJob", name: "sj-missed", reached: phase(batchv1alpha1.ScheduledJobPhaseMissed), want: status.FailedStatus},

		{kind: "EventJob", name: "ej-watching", reached: ready("True", batchv1alpha1.ReasonWatching), want: status.CurrentStatus},
		{kind: "EventJob", name: "ej-suspended", reached: ready("True", batchv1alpha1.ReasonSuspended), want: status.CurrentStatus},
		{kind: "EventJob", name: "ej-invalid", reached: ready("False", batchv1alpha1.ReasonInvalidTrigger), want: status.FailedStatus},

		{kind: "ScheduledPodAutoscaler", name: "spa-applied", reached: ready("True", autoscalingv1alpha1.ReasonBoundsApplied), want: status.CurrentStatus},
		{kind: "ScheduledPodAutoscaler", name: "spa-suspended", reached: ready("True", autoscalingv1alpha1.ReasonSuspended), want: status.CurrentStatus},
		{kind: "ScheduledPodAutoscaler", name: "spa-conflict", reached: ready("False", autoscalingv1alpha1.ReasonHPAConflict), want: status.FailedStatus},
		{kind: "ScheduledPodAutoscaler", name: "spa-no-target", reached: ready("False", autoscalingv1alpha1.ReasonTargetNotFound), want: status.FailedStatus},
		{kind: "ScheduledPodAutoscaler", name: "spa-invalid", reached: condition(autoscalingv1alpha1.ConditionSchedulesValid, "False", autoscalingv1alpha1.ReasonInvalidSchedule),
			want: status.FailedStatus},
		{kind: "ScheduledPodAutoscaler", name: "spa-forbid", reached: condition(autoscalingv1alpha1.ConditionForbiddenOverlap, "True", autoscalingv1alpha1.ReasonSchedulesLeftOut),
			want: status.FailedStatus},

		{kind: "Schedule", name: "sched-scheduled", reached: schedulePhase(autoscalingv1alpha1.SchedulePhaseScheduled), want: status.CurrentStatus},
		{kind: "Schedule", name: "sched-suspended", reached: schedulePhase(autoscalingv1alpha1.SchedulePhaseSuspended), want: status.CurrentStatus},
		{kind: "Schedule", name: "sched-completed", reached: schedulePhase(autoscalingv1alpha1.SchedulePhaseCompleted), want: status.CurrentStatus},
		{kind: "Schedule", name: "sched-invalid", reached: schedulePhase(autoscalingv1alpha1.SchedulePhaseInvalid), want: status.FailedStatus},
		{kind: "Schedule", name: "sched-calendar", reached: condition("Calendars", "False", "CalendarNotUsable"), want: status.FailedStatus},
		{kind: "Schedule", name: "sched-kept", reached: all(schedulePhase(autoscalingv1alpha1.SchedulePhaseScheduled), noCondition(autoscalingv1alpha1.ConditionForbiddenOverlap)),
			want: status.CurrentStatus},
		{kind: "Schedule", name: "sched-left-out", reached: condition(autoscalingv1alpha1.ConditionForbiddenOverlap, "True", autoscalingv1alpha1.ReasonLeftOut),
			want: status.FailedStatus},
	}

	t.Run("new", func(t *testing.T) {
		for _, s := range states {
			t.Run(s.kind+"/"+s.name, func(t *testing.T) {
				want := status.InProgressStatus
				if s.reached == nil {
					want = status.CurrentStatus // the calendars have no status: nothing reconciles them
				}
				expect(t, get(t, ns, s.kind, s.name), want)
			})
		}
	})

	startManager(t)
	for _, s := range states {
		if s.act != nil {
			s.act(t, ns)
		}
	}
	for _, s := range states {
		t.Run(s.kind+"/"+s.name, func(t *testing.T) {
			u := waitFor(t, ns, s)
			res := expect(t, u, s.want)
			if s.want == status.FailedStatus && res.Message == "" {
				t.Errorf("Failed without a message: %+v", res)
			}
		})
	}

	t.Run("fixed spec: Failed, InProgress, Current", func(t *testing.T) {
		u := get(t, ns, "ScheduledJob", "sj-invalid")
		expect(t, u, status.FailedStatus)
		if err := unstructured.SetNestedField(u.Object, "UTC", "spec", "timeZone"); err != nil {
			t.Fatal(err)
		}
		// What the API server returns for the update is the object as stored, before any
		// reconcile: generation 2, status of generation 1.
		if err := env.Client.Update(ctx, u); err != nil {
			t.Fatal(err)
		}
		expect(t, u, status.InProgressStatus)
		expect(t, waitFor(t, ns, state{kind: "ScheduledJob", name: "sj-invalid", reached: ready("True", batchv1alpha1.ReasonScheduled)}), status.CurrentStatus)
	})

	t.Run("target appears: Failed, then Current", func(t *testing.T) {
		expect(t, get(t, ns, "ScheduledPodAutoscaler", "spa-no-target"), status.FailedStatus)
		create(t, ns, `
apiVersion: autoscaling/v2
kind: HorizontalPodAutoscaler
metadata: {name: later}
spec:
  scaleTargetRef: {apiVersion: apps/v1, kind: Deployment, name: web}
  maxReplicas: 3
`)
		expect(t, waitFor(t, ns, state{kind: "ScheduledPodAutoscaler", name: "spa-no-target", reached: ready("True", autoscalingv1alpha1.ReasonBoundsApplied)}), status.CurrentStatus)
	})

	t.Run("edited spec: Current, InProgress, Current", func(t *testing.T) {
		u := get(t, ns, "ScheduledPodAutoscaler", "spa-applied")
		expect(t, u, status.CurrentStatus)
		if err := unstructured.SetNestedField(u.Object, int64(8), "spec", "horizontalPodAutoscalerSpec", "maxReplicas"); err != nil {
			t.Fatal(err)
		}
		if err := env.Client.Update(ctx, u); err != nil {
			t.Fatal(err)
		}
		expect(t, u, status.InProgressStatus)
		expect(t, waitFor(t, ns, state{kind: "ScheduledPodAutoscaler", name: "spa-applied", reached: func(u *unstructured.Unstructured) bool {
			max, _, _ := unstructured.NestedInt64(u.Object, "status", "maxReplicas")
			return max == 8
		}}), status.CurrentStatus)
	})

	t.Run("deleted: Terminating while a finalizer holds it", func(t *testing.T) {
		// A Job of almanac's keeps its finalizer until its outcome is recorded; a finalizer
		// of someone else's holds the ScheduledJob itself.
		u := get(t, ns, "ScheduledJob", "sj-scheduled")
		u.SetFinalizers([]string{"example.com/hold"})
		if err := env.Client.Update(ctx, u); err != nil {
			t.Fatal(err)
		}
		if err := env.Client.Delete(ctx, u); err != nil {
			t.Fatal(err)
		}
		expect(t, get(t, ns, "ScheduledJob", "sj-scheduled"), status.TerminatingStatus)
		u = get(t, ns, "ScheduledJob", "sj-scheduled")
		u.SetFinalizers(nil)
		if err := env.Client.Update(ctx, u); err != nil && !apierrors.IsNotFound(err) {
			t.Fatal(err)
		}
	})

	t.Cleanup(func() {
		cc := &unstructured.Unstructured{}
		cc.SetAPIVersion(apiVersions["ClusterCalendar"])
		cc.SetKind("ClusterCalendar")
		cc.SetName(clusterCalendar)
		_ = env.Client.Delete(context.Background(), cc)
	})
}

// startManager runs the four reconcilers as the manager binary does (sharing one
// base.Lanes), on the real clock, until the test ends.
func startManager(t *testing.T) {
	t.Helper()
	mgr, err := env.NewManager()
	if err != nil {
		t.Fatal(err)
	}
	clk := clock.RealClock{}
	lanes := base.WithLanes(base.NewLanes(clk, base.DefaultMaxReportDelay))
	if err := scheduledjob.New(mgr, clk, lanes).SetupWithManager(mgr); err != nil {
		t.Fatal(err)
	}
	if err := eventjob.New(mgr, clk, lanes).SetupWithManager(mgr); err != nil {
		t.Fatal(err)
	}
	if err := scheduledpodautoscaler.New(mgr, clk, lanes).SetupWithManager(mgr); err != nil {
		t.Fatal(err)
	}
	if err := schedule.New(mgr, clk, scheduledpodautoscaler.ScheduleEvaluationErrors(), lanes).SetupWithManager(mgr); err != nil {
		t.Fatal(err)
	}
	stop, err := env.RunManager(mgr)
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(stop)
}

// expect computes the kstatus of u and fails the test unless it is want.
func expect(t *testing.T, u *unstructured.Unstructured, want status.Status) *status.Result {
	t.Helper()
	res, err := status.Compute(u)
	if err != nil {
		t.Fatal(err)
	}
	if res.Status != want {
		st, _, _ := unstructured.NestedMap(u.Object, "status")
		t.Errorf("%s %s (generation %d): kstatus says %s (%q), want %s; status: %v", u.GetKind(), u.GetName(), u.GetGeneration(), res.Status, res.Message, want, st)
	}
	return res
}

// waitFor waits until almanac has observed the generation of s's object and s.reached holds,
// and returns the object.
func waitFor(t *testing.T, ns string, s state) *unstructured.Unstructured {
	t.Helper()
	var u *unstructured.Unstructured
	err := wait.PollUntilContextTimeout(context.Background(), 20*time.Millisecond, 60*time.Second, true, func(context.Context) (bool, error) {
		u = get(t, ns, s.kind, s.name)
		if s.reached == nil {
			return true, nil
		}
		observed, _, _ := unstructured.NestedInt64(u.Object, "status", "observedGeneration")
		return observed == u.GetGeneration() && s.reached(u), nil
	})
	if err != nil {
		st, _, _ := unstructured.NestedMap(u.Object, "status")
		t.Fatalf("%s %s did not reach its state: %v; status: %v", s.kind, s.name, err, st)
	}
	return u
}

// get reads an object as a client reads it: unstructured, from the API server.
func get(t *testing.T, ns, kind, name string) *unstructured.Unstructured {
	t.Helper()
	u := &unstructured.Unstructured{}
	u.SetAPIVersion(apiVersions[kind])
	u.SetKind(kind)
	key := client.ObjectKey{Namespace: ns, Name: name}
	if kind == "ClusterCalendar" {
		key.Namespace = ""
	}
	if err := env.Client.Get(context.Background(), key, u); err != nil {
		t.Fatal(err)
	}
	return u
}

// create creates the objects of a YAML stream in ns (the cluster-scoped ones outside it).
func create(t *testing.T, ns, docs string) {
	t.Helper()
	for _, doc := range strings.Split(docs, "\n---\n") {
		u := &unstructured.Unstructured{}
		if err := yaml.Unmarshal([]byte(doc), &u.Object); err != nil {
			t.Fatalf("%v in\n%s", err, doc)
		}
		if u.GetKind() != "ClusterCalendar" {
			u.SetNamespace(ns)
		}
		if err := env.Client.Create(context.Background(), u); err != nil {
			t.Fatalf("create %s %s: %v", u.GetKind(), u.GetName(), err)
		}
		if _, almanac := apiVersions[u.GetKind()]; almanac {
			// The API server's answer is the object as stored: what a client that creates
			// the object and computes its status from the answer sees.
			want := status.InProgressStatus
			if strings.HasSuffix(u.GetKind(), "Calendar") {
				want = status.CurrentStatus
			}
			expect(t, u, want)
		}
	}
}

// finishJob writes a Job's status the way the Job controller does when its Pod is done (no
// kube-controller-manager runs here), once almanac has created the Job.
func finishJob(t *testing.T, ns, name string, cond batchv1.JobConditionType) {
	t.Helper()
	ctx := context.Background()
	j := &batchv1.Job{}
	err := wait.PollUntilContextTimeout(ctx, 20*time.Millisecond, 60*time.Second, true, func(context.Context) (bool, error) {
		if err := env.Client.Get(ctx, client.ObjectKey{Namespace: ns, Name: name}, j); err != nil {
			return false, client.IgnoreNotFound(err)
		}
		now := metav1.NewTime(time.Now())
		j.Status.StartTime, j.Status.Ready, j.Status.Active = &now, ptr.To[int32](0), 0
		switch cond {
		case batchv1.JobComplete:
			j.Status.Succeeded, j.Status.CompletionTime = 1, &now
			j.Status.Conditions = []batchv1.JobCondition{
				{Type: batchv1.JobSuccessCriteriaMet, Status: corev1.ConditionTrue, LastTransitionTime: now, LastProbeTime: now},
				{Type: batchv1.JobComplete, Status: corev1.ConditionTrue, LastTransitionTime: now, LastProbeTime: now},
			}
		case batchv1.JobFailed:
			j.Status.Failed = 1
			j.Status.Conditions = []batchv1.JobCondition{
				{Type: batchv1.JobFailureTarget, Status: corev1.ConditionTrue, Reason: "BackoffLimitExceeded", LastTransitionTime: now, LastProbeTime: now},
				{Type: batchv1.JobFailed, Status: corev1.ConditionTrue, Reason: "BackoffLimitExceeded", LastTransitionTime: now, LastProbeTime: now},
			}
		}
		err := env.Client.Status().Update(ctx, j)
		if apierrors.IsConflict(err) {
			return false, nil
		}
		return err == nil, err
	})
	if err != nil {
		t.Fatalf("failed to finish Job %s/%s: %v", ns, name, err)
	}
}

func ready(status, reason string) func(*unstructured.Unstructured) bool {
	return condition("Ready", status, reason)
}

// condition says that u has the condition typ with status and reason.
func condition(typ, status, reason string) func(*unstructured.Unstructured) bool {
	return func(u *unstructured.Unstructured) bool {
		s, r, ok := conditionOf(u, typ)
		return ok && s == status && r == reason
	}
}

func noCondition(typ string) func(*unstructured.Unstructured) bool {
	return func(u *unstructured.Unstructured) bool {
		_, _, ok := conditionOf(u, typ)
		return !ok
	}
}

func conditionOf(u *unstructured.Unstructured, typ string) (status, reason string, ok bool) {
	conds, _, _ := unstructured.NestedSlice(u.Object, "status", "conditions")
	for _, c := range conds {
		m, _ := c.(map[string]any)
		if m["type"] == typ {
			return fmt.Sprint(m["status"]), fmt.Sprint(m["reason"]), true
		}
	}
	return "", "", false
}

func phase(p batchv1alpha1.ScheduledJobPhase) func(*unstructured.Unstructured) bool {
	return func(u *unstructured.Unstructured) bool {
		got, _, _ := unstructured.NestedString(u.Object, "status", "phase")
		return got == string(p)
	}
}

func schedulePhase(p autoscalingv1alpha1.SchedulePhase) func(*unstructured.Unstructured) bool {
	return func(u *unstructured.Unstructured) bool {
		got, _, _ := unstructured.NestedString(u.Object, "status", "phase")
		return got == string(p)
	}
}

func all(fs ...func(*unstructured.Unstructured) bool) func(*unstructured.Unstructured) bool {
	return func(u *unstructured.Unstructured) bool {
		for _, f := range fs {
			if !f(u) {
				return false
			}
		}
		return true
	}
}

// scheduledJob is a ScheduledJob manifest with the spec fields given (one a line).
func scheduledJob(name string, fields ...string) string {
	return `apiVersion: batch.almanac.dev/v1alpha1
kind: ScheduledJob
metadata: {name: ` + name + `}
spec:
  ` + strings.Join(fields, "\n  ") + `
  jobTemplate:
    spec:
      template:
        spec:
          restartPolicy: Never
          containers: [{name: main, image: busybox, command: ["true"]}]`
}

func eventJob(name string, fields ...string) string {
	return `apiVersion: batch.almanac.dev/v1alpha1
kind: EventJob
metadata: {name: ` + name + `}
spec:
  ` + strings.Join(fields, "\n  ") + `
  jobTemplate:
    spec:
      template:
        spec:
          restartPolicy: Never
          containers: [{name: main, image: busybox, command: ["true"]}]`
}

func autoscaler(name string, fields ...string) string {
	return `apiVersion: autoscaling.almanac.dev/v1alpha1
kind: ScheduledPodAutoscaler
metadata: {name: ` + name + `}
spec:
  horizontalPodAutoscalerSpec:
    scaleTargetRef: {apiVersion: apps/v1, kind: Deployment, name: web}
    minReplicas: 1
    maxReplicas: 4
  ` + strings.Join(fields, "\n  ")
}

// daily is a Schedule of autoscaler, open every day from 08:00 to 18:00 (UTC unless fields
// say otherwise).
func daily(name, autoscaler string, fields ...string) string {
	return `apiVersion: autoscaling.almanac.dev/v1alpha1
kind: Schedule
metadata: {name: ` + name + `}
spec:
  scaleTargetRef: {name: ` + autoscaler + `}
  minReplicas: 3
  type: Daily
  startTime: "08:00"
  endTime: "18:00"
  ` + strings.Join(fields, "\n  ")
}
