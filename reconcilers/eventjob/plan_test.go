package eventjob

import (
	"context"
	"errors"
	"fmt"
	"strings"
	"testing"
	"time"

	"github.com/google/go-cmp/cmp"
	batchv1 "k8s.io/api/batch/v1"
	corev1 "k8s.io/api/core/v1"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	"k8s.io/apimachinery/pkg/api/meta"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/runtime/schema"
	"k8s.io/apimachinery/pkg/types"
	clocktesting "k8s.io/utils/clock/testing"

	batchv1alpha1 "github.com/almanac-dev/almanac/api/batch/v1alpha1"
	"github.com/almanac-dev/almanac/reconcilers/jobs"
)

var t0 = time.Date(2027, 5, 1, 10, 0, 0, 0, time.UTC)

func eventJob(kind batchv1alpha1.TriggerKind, name string, tt batchv1alpha1.TriggerType) *batchv1alpha1.EventJob {
	return &batchv1alpha1.EventJob{
		ObjectMeta: metav1.ObjectMeta{Name: "ej", Namespace: "ns", UID: "ej-uid", Generation: 1,
			CreationTimestamp: metav1.NewTime(t0)},
		Spec: batchv1alpha1.EventJobSpec{Trigger: batchv1alpha1.Trigger{Kind: kind, Name: name, Type: tt}},
	}
}

// world stands in for the API server: the EventJob's stored status, the upstream Jobs and the
// downstream Jobs. step runs one reconcile with the reconciler's pure functions and no API
// errors.
type world struct {
	t          *testing.T
	ej         *batchv1alpha1.EventJob
	upstream   []*batchv1.Job
	downstream []*batchv1.Job
	created    []string // upstream Job names, in the order their runs started
	replaced   []string // downstream Job names deleted by Replace, in order
	// foreign are the names of Jobs that exist and are not the EventJob's: creating one
	// conflicts.
	foreign map[string]bool
	clk     *clocktesting.FakeClock
	n       int
	// chain is what is wrong with the EventJob's chain of EventJob triggers (nil: nothing).
	chain *batchv1alpha1.TriggerChainError
	// refuse, when set, is the API server's refusal of every Job create.
	refuse error
	// deleted are the names of downstream Jobs that were deleted (pruned, by a user): none
	// may be created again.
	deleted map[string]bool
}

func newWorld(t *testing.T, ej *batchv1alpha1.EventJob) *world {
	return &world{t: t, ej: ej, clk: clocktesting.NewFakeClock(t0.Add(time.Minute))}
}

// upstreamJob adds an upstream Job (controlled by CronJob "hello") that finished with cond at
// `at`; cond "" means it still runs.
func (w *world) upstreamJob(cond batchv1.JobConditionType, at time.Time) *batchv1.Job {
	w.n++
	j := &batchv1.Job{ObjectMeta: metav1.ObjectMeta{
		Name: fmt.Sprintf("hello-%d", w.n), Namespace: "ns", UID: types.UID(fmt.Sprintf("up-%03d", w.n)),
		OwnerReferences: []metav1.OwnerReference{{APIVersion: "batch/v1", Kind: "CronJob", Name: "hello",
			UID: "cj-uid", Controller: ptrTrue()}},
	}}
	if cond != "" {
		finish(j, cond, at)
	}
	w.upstream = append(w.upstream, j)
	return j
}

func finish(j *batchv1.Job, cond batchv1.JobConditionType, at time.Time) {
	j.Status.Conditions = append(j.Status.Conditions, batchv1.JobCondition{Type: cond, Status: corev1.ConditionTrue,
		LastTransitionTime: metav1.NewTime(at)})
}

func ptrTrue() *bool { b := true; return &b }

// step reconciles once; writeStatus false simulates a status write that fails after the Jobs
// were created. The runs start through start, with the world as its actions.
func (w *world) step(writeStatus bool) plan {
	w.t.Helper()
	p := decide(w.ej, w.upstream, w.downstream, w.chain, w.clk.Now())
	res, err := start(context.Background(), w.ej, &p, w)
	if err != nil {
		w.t.Fatal(err)
	}
	current := currentJobs(w.downstream, res)
	st := nextStatus(w.ej, &p, res, w.upstream, current, w.clk.Now())
	if writeStatus {
		w.ej.Status = *st
	}
	return p
}

// replace is an action of start: it deletes a running downstream Job.
func (w *world) replace(_ context.Context, old *batchv1.Job, _ trigger) error {
	if old.Namespace == "" || old.UID == "" || w.find(old.Name) == nil {
		w.t.Fatalf("Replace deletes %q (namespace %q, UID %q), which is not a Job of the EventJob", old.Name, old.Namespace, old.UID)
	}
	w.replaced = append(w.replaced, old.Name)
	w.remove(old.Name)
	return nil
}

// create is an action of start: it creates the downstream Job of a trigger.
func (w *world) create(_ context.Context, tr trigger, name string) (jobs.Creation, error) {
	if w.refuse != nil {
		return jobs.Creation{}, w.refuse
	}
	if w.foreign[name] {
		return jobs.Creation{Conflict: true}, nil
	}
	if w.find(name) != nil {
		w.t.Fatalf("a second Job %s for %s", name, tr.describe())
	}
	if w.deleted[name] {
		w.t.Fatalf("Job %s for %s again, after it was deleted", name, tr.describe())
	}
	j := runJob(w.ej, tr, name)
	j.UID = types.UID("down-" + name)
	w.downstream = append(w.downstream, j)
	if tr.set != nil {
		w.created = append(w.created, tr.set.Key)
	} else {
		w.created = append(w.created, tr.job.Name)
	}
	return jobs.Creation{Job: j, Created: true}, nil
}

func (w *world) find(name string) *batchv1.Job {
	for _, j := range w.downstream {
		if j.Name == name {
			return j
		}
	}
	return nil
}

func (w *world) remove(name string) {
	for i, j := range w.downstream {
		if j.Name == name {
			if w.deleted == nil {
				w.deleted = map[string]bool{}
			}
			w.deleted[name] = true
			w.downstream = append(w.downstream[:i], w.downstream[i+1:]...)
			return
		}
	}
}

func (w *world) finishDownstream() {
	for _, j := range w.downstream {
		if !jobs.OutcomeOf(j).Finished() {
			finish(j, batchv1.JobComplete, w.clk.Now())
		}
	}
}

func TestFiresOncePerUpstreamJob(t *testing.T) {
	w := newWorld(t, eventJob(batchv1alpha1.TriggerKindCronJob, "hello", ""))
	w.upstreamJob(batchv1.JobComplete, t0.Add(-time.Second)) // before the EventJob existed
	w.upstreamJob(batchv1.JobComplete, t0)                   // in its creation second: counts
	w.upstreamJob(batchv1.JobFailed, t0.Add(time.Minute))    // does not match Complete
	w.upstreamJob("", time.Time{})                           // still running
	w.step(true)
	if diff := cmp.Diff([]string{"hello-2"}, w.created); diff != "" {
		t.Errorf("runs (-want +got):\n%s", diff)
	}
	// Re-lists and restarts see the same Jobs again: nothing new.
	for i := 0; i < 3; i++ {
		w.step(true)
	}
	finish(w.upstream[3], batchv1.JobComplete, t0.Add(2*time.Minute))
	w.upstreamJob(batchv1.JobComplete, t0.Add(3*time.Minute))
	w.step(true)
	if diff := cmp.Diff([]string{"hello-2", "hello-4", "hello-5"}, w.created); diff != "" {
		t.Errorf("runs (-want +got):\n%s", diff)
	}
	st := w.ej.Status
	if st.TriggerCount != 3 || st.LastTrigger == nil || st.LastTrigger.JobName != "hello-5" || st.LastTrigger.UID != "up-005" {
		t.Errorf("triggerCount %d, lastTrigger %+v", st.TriggerCount, st.LastTrigger)
	}
	if len(st.Active) != 3 {
		t.Errorf("active %v, want 3 Jobs", st.Active)
	}
}

func TestTriggerTypes(t *testing.T) {
	tests := []struct {
		tt   batchv1alpha1.TriggerType
		want []string
	}{
		{batchv1alpha1.TriggerTypeComplete, []string{"hello-1"}},
		{batchv1alpha1.TriggerTypeFailed, []string{"hello-2"}},
		{batchv1alpha1.TriggerTypeAny, []string{"hello-1", "hello-2"}},
	}
	for _, tt := range tests {
		w := newWorld(t, eventJob(batchv1alpha1.TriggerKindCronJob, "hello", tt.tt))
		w.upstreamJob(batchv1.JobComplete, t0.Add(time.Second))
		w.upstreamJob(batchv1.JobFailed, t0.Add(2*time.Second))
		w.step(true)
		if diff := cmp.Diff(tt.want, w.created); diff != "" {
			t.Errorf("%s: runs (-want +got):\n%s", tt.tt, diff)
		}
	}
}

func TestKindJobFollowsRecreatedJobs(t *testing.T) {
	w := newWorld(t, eventJob(batchv1alpha1.TriggerKindJob, "migrate", ""))
	up := &batchv1.Job{ObjectMeta: metav1.ObjectMeta{Name: "migrate", Namespace: "ns", UID: "first"}}
	finish(up, batchv1.JobComplete, t0.Add(time.Second))
	w.upstream = []*batchv1.Job{up}
	w.step(true)
	// Deleted and created again under the same name: a new UID, a new run.
	again := &batchv1.Job{ObjectMeta: metav1.ObjectMeta{Name: "migrate", Namespace: "ns", UID: "second"}}
	finish(again, batchv1.JobComplete, t0.Add(time.Minute))
	w.upstream = []*batchv1.Job{again}
	w.step(true)
	w.step(true)
	if diff := cmp.Diff([]string{"migrate", "migrate"}, w.created); diff != "" {
		t.Errorf("runs (-want +got):\n%s", diff)
	}
	if n := len(w.ej.Status.Watermark.Handled); n != 2 {
		t.Errorf("watermark keeps %d entries, want 2 (the first upstream Job is gone but its downstream Job exists)", n)
	}
}

func TestPruningNeverRepeatsATrigger(t *testing.T) {
	w := newWorld(t, eventJob(batchv1alpha1.TriggerKindCronJob, "hello", ""))
	w.upstreamJob(batchv1.JobComplete, t0.Add(time.Second))
	w.upstreamJob(batchv1.JobComplete, t0.Add(2*time.Second))
	w.step(true)
	w.downstream = nil // pruned by the history limits, or deleted by hand
	w.step(true)
	w.upstream = w.upstream[1:] // the CronJob pruned its oldest Job too
	w.step(true)
	w.step(true)
	if diff := cmp.Diff([]string{"hello-1", "hello-2"}, w.created); diff != "" {
		t.Errorf("runs (-want +got):\n%s", diff)
	}
	if got := w.ej.Status.Watermark.Handled; len(got) != 1 || got[0].UID != "up-002" {
		t.Errorf("watermark.handled = %v, want only the upstream Job that still exists", got)
	}
}

// Jobs were created, then the status write failed (or the manager stopped): the retry must
// not create them again, and must count them once.
func TestCreatedButStatusNotWritten(t *testing.T) {
	w := newWorld(t, eventJob(batchv1alpha1.TriggerKindCronJob, "hello", ""))
	w.upstreamJob(batchv1.JobComplete, t0.Add(time.Second))
	w.upstreamJob(batchv1.JobComplete, t0.Add(2*time.Second))
	w.step(false)
	p := w.step(true) // would fail the test with "a second Job" if it retried them
	if len(p.recovered) != 2 || len(p.triggers) != 0 {
		t.Errorf("recovered %d, triggers %d; want 2 and 0", len(p.recovered), len(p.triggers))
	}
	w.step(true)
	if st := w.ej.Status; st.TriggerCount != 2 || len(st.Watermark.Handled) != 2 || st.LastTrigger.JobName != "hello-2" {
		t.Errorf("status %+v", st)
	}
}

// An upstream condition observed after a later one was handled (Job controllers write
// conditions with their own clocks, in any order) still starts its run.
func TestLateObservedConditionStillFires(t *testing.T) {
	w := newWorld(t, eventJob(batchv1alpha1.TriggerKindCronJob, "hello", ""))
	w.upstreamJob(batchv1.JobComplete, t0.Add(10*time.Minute))
	w.step(true)
	w.upstreamJob(batchv1.JobComplete, t0.Add(9*time.Minute))
	w.step(true)
	if diff := cmp.Diff([]string{"hello-1", "hello-2"}, w.created); diff != "" {
		t.Errorf("runs (-want +got):\n%s", diff)
	}
}

func TestWatermarkCompaction(t *testing.T) {
	wm := batchv1alpha1.TriggerWatermark{Trigger: "k", Time: metav1.NewTime(t0)}
	var ups []*batchv1.Job
	var added []batchv1alpha1.HandledTrigger
	for i := 0; i < 5; i++ {
		j := &batchv1.Job{ObjectMeta: metav1.ObjectMeta{UID: types.UID(fmt.Sprintf("u%d", i))}}
		ups = append(ups, j)
		added = append(added, batchv1alpha1.HandledTrigger{UID: j.UID, Time: metav1.NewTime(t0.Add(time.Duration(i) * 30 * time.Minute))})
	}
	got := advance(wm, added, ups, nil)
	// The newest is at t0+2h; entries older than t0+1h leave, and the time moves there.
	if want := t0.Add(time.Hour); !got.Time.Time.Equal(want) {
		t.Errorf("time %s, want %s", got.Time.Time, want)
	}
	var uids []types.UID
	for _, h := range got.Handled {
		uids = append(uids, h.UID)
	}
	if diff := cmp.Diff([]types.UID{"u2", "u3", "u4"}, uids); diff != "" {
		t.Errorf("handled (-want +got):\n%s", diff)
	}
	// The time never moves back.
	if again := advance(got, nil, ups, nil); !again.Time.Equal(&got.Time) {
		t.Errorf("time moved from %s to %s", got.Time, again.Time)
	}

	// More than maxHandled upstream Jobs within the retention: the time moves past the
	// oldest, and the list fits the schema.
	many := make([]batchv1alpha1.HandledTrigger, 0, maxHandled+50)
	ups = nil
	for i := 0; i < maxHandled+50; i++ {
		j := &batchv1.Job{ObjectMeta: metav1.ObjectMeta{UID: types.UID(fmt.Sprintf("m%04d", i))}}
		ups = append(ups, j)
		many = append(many, batchv1alpha1.HandledTrigger{UID: j.UID, Time: metav1.NewTime(t0.Add(time.Duration(i/3) * time.Second))})
	}
	got = advance(wm, many, ups, nil)
	if n := len(got.Handled); n > maxHandled || n < maxHandled-3 {
		t.Errorf("%d entries kept, want about %d", n, maxHandled)
	}
	for _, h := range many {
		kept := false
		for _, k := range got.Handled {
			kept = kept || k.UID == h.UID
		}
		if !kept && !h.Time.Before(&got.Time) {
			t.Fatalf("%s (at %s) is neither listed nor before the time %s: it would fire again", h.UID, h.Time, got.Time)
		}
	}
}

func TestConcurrencyPolicy(t *testing.T) {
	tests := []struct {
		policy      batchv1alpha1.ConcurrencyPolicy
		wantCreated []string
		wantSkipped int64
		wantActive  int
	}{
		{policy: batchv1alpha1.ConcurrencyPolicyAllow, wantCreated: []string{"hello-2", "hello-3"}, wantActive: 3},
		{policy: batchv1alpha1.ConcurrencyPolicyForbid, wantSkipped: 2, wantActive: 1},
		{policy: batchv1alpha1.ConcurrencyPolicyReplace, wantCreated: []string{"hello-2", "hello-3"}, wantActive: 1},
	}
	for _, tt := range tests {
		t.Run(string(tt.policy), func(t *testing.T) {
			w := newWorld(t, eventJob(batchv1alpha1.TriggerKindCronJob, "hello", ""))
			w.ej.Spec.ConcurrencyPolicy = tt.policy
			w.upstreamJob(batchv1.JobComplete, t0.Add(time.Second))
			w.step(true) // hello-1's run is still running
			w.created = nil
			w.upstreamJob(batchv1.JobComplete, t0.Add(2*time.Second))
			w.upstreamJob(batchv1.JobComplete, t0.Add(3*time.Second))
			w.step(true)
			if diff := cmp.Diff(tt.wantCreated, w.created); diff != "" {
				t.Errorf("runs (-want +got):\n%s", diff)
			}
			st := w.ej.Status
			if st.SkippedCount != tt.wantSkipped || len(st.Active) != tt.wantActive {
				t.Errorf("skippedCount %d, active %v; want %d and %d Jobs", st.SkippedCount, st.Active, tt.wantSkipped, tt.wantActive)
			}
			// Skipped triggers are handled: they never start a run later.
			w.finishDownstream()
			w.created = nil
			w.step(true)
			if len(w.created) != 0 {
				t.Errorf("runs after the running Job finished: %v", w.created)
			}
		})
	}
}

// TestReplaceAfterARefusedCreate: under Replace, when the Job of an earlier trigger in the same
// round could not be created, a later trigger's run deletes only Jobs that exist. Issue 11,
// finding 4: it sent a placeholder Job (no namespace, no UID) to DELETE and reported
// JobsReplaced for a Job that never existed.
func TestReplaceAfterARefusedCreate(t *testing.T) {
	w := newWorld(t, eventJob(batchv1alpha1.TriggerKindCronJob, "hello", ""))
	w.ej.Spec.ConcurrencyPolicy = batchv1alpha1.ConcurrencyPolicyReplace
	first := w.upstreamJob(batchv1.JobComplete, t0.Add(time.Second))
	w.upstreamJob(batchv1.JobComplete, t0.Add(2*time.Second))
	w.foreign = map[string]bool{batchv1alpha1.EventJobName(w.ej.Name, first.UID): true}
	w.step(true)
	if len(w.replaced) != 0 {
		t.Errorf("Replace deleted %v; nothing was running", w.replaced)
	}
	if diff := cmp.Diff([]string{"hello-2"}, w.created); diff != "" {
		t.Errorf("runs (-want +got):\n%s", diff)
	}
	if c := w.ej.Status.Conditions[0]; c.Reason != batchv1alpha1.ReasonJobConflict {
		t.Errorf("Ready condition %+v, want JobConflict for hello-1's run", c)
	}

	// With a run that started in the same round, Replace deletes that one, the real Job.
	w.foreign = nil
	w.created = nil
	third := w.upstreamJob(batchv1.JobComplete, t0.Add(3*time.Second))
	w.upstreamJob(batchv1.JobComplete, t0.Add(4*time.Second))
	w.step(true)
	if diff := cmp.Diff([]string{batchv1alpha1.EventJobName(w.ej.Name, "up-002"), batchv1alpha1.EventJobName(w.ej.Name, third.UID)}, w.replaced); diff != "" {
		t.Errorf("replaced (-want +got):\n%s", diff)
	}
}

// TestARefusedCreateStopsTheRound (issue 38, item 6): a Job create that the API server
// refuses (a quota, RBAC, a policy) stops the round: the runs started before it are recorded,
// its trigger and the later ones stay unhandled, in order, and Ready says why; once the
// refusal is lifted, each of them starts once.
func TestARefusedCreateStopsTheRound(t *testing.T) {
	w := newWorld(t, eventJob(batchv1alpha1.TriggerKindCronJob, "hello", ""))
	w.upstreamJob(batchv1.JobComplete, t0.Add(time.Second))
	w.step(true)
	second := w.upstreamJob(batchv1.JobComplete, t0.Add(2*time.Second))
	third := w.upstreamJob(batchv1.JobComplete, t0.Add(3*time.Second))
	w.refuse = apierrors.NewForbidden(schema.GroupResource{Group: "batch", Resource: "jobs"}, "x", errors.New("exceeded quota: jobs"))
	p := w.step(true)
	res, err := start(context.Background(), w.ej, &p, w)
	if err != nil || res.refused == nil {
		t.Fatalf("start = %+v, %v; want the refusal in the result, for the retry", res, err)
	}
	c := meta.FindStatusCondition(w.ej.Status.Conditions, batchv1alpha1.ConditionReady)
	if c == nil || c.Reason != batchv1alpha1.ReasonRequestRefused || !strings.Contains(c.Message, "exceeded quota") || !strings.Contains(c.Message, "ResourceQuota") {
		t.Errorf("Ready %+v, want RequestRefused with the answer and the fix", c)
	}
	for _, h := range w.ej.Status.Watermark.Handled {
		if h.UID == second.UID || h.UID == third.UID {
			t.Errorf("upstream Job %s is in the watermark: a refused run must stay unhandled", h.UID)
		}
	}
	w.refuse = nil
	w.step(true)
	if diff := cmp.Diff([]string{"hello-1", "hello-2", "hello-3"}, w.created); diff != "" {
		t.Errorf("runs (-want +got):\n%s", diff)
	}
	if c := meta.FindStatusCondition(w.ej.Status.Conditions, batchv1alpha1.ConditionReady); c == nil || c.Reason != batchv1alpha1.ReasonWatching {
		t.Errorf("Ready %+v once the refusal is lifted, want Watching", c)
	}
}

// TestCycleStartsNoJob: an EventJob on a cycle of EventJob triggers (which admission can miss
// when the EventJobs are created at the same moment) starts no Job; its upstream Jobs stay
// unhandled and start their runs once the cycle is broken. Issue 11, finding 3.
func TestCycleStartsNoJob(t *testing.T) {
	w := newWorld(t, eventJob(batchv1alpha1.TriggerKindEventJob, "b", ""))
	w.chain = &batchv1alpha1.TriggerChainError{Cycle: []string{"ej", "b", "ej"}}
	w.upstreamJob(batchv1.JobComplete, t0.Add(time.Second))
	if p := w.step(true); p.invalid == nil || len(w.created) != 0 {
		t.Fatalf("on a cycle: invalid %v, runs %v; want an error and no run", p.invalid, w.created)
	}
	c := w.ej.Status.Conditions[0]
	want := `the trigger closes a cycle: EventJob "ej" triggers on EventJob "b", which triggers on EventJob "ej"; each Job would start the next one, forever, ` +
		`so no EventJob on the cycle starts a Job: trigger one of them on an object outside the cycle`
	if c.Status != metav1.ConditionFalse || c.Reason != batchv1alpha1.ReasonInvalidTrigger || c.Message != want {
		t.Errorf("Ready condition %+v", c)
	}
	w.chain = nil // b's trigger changed
	w.step(true)
	if diff := cmp.Diff([]string{"hello-1"}, w.created); diff != "" {
		t.Errorf("runs after the cycle was broken (-want +got):\n%s", diff)
	}
}

// TestTooLongChainStartsNoJob: an EventJob more than MaxTriggerChain EventJobs from the start
// of its chain of EventJob triggers (admission refuses it, but reads a cache, or was off)
// starts no Job, says why, and runs once the chain is short enough. The chain is read as the
// reconciler reads it: up from the EventJob, by the rule of api/batch.
func TestTooLongChainStartsNoJob(t *testing.T) {
	w := newWorld(t, eventJob(batchv1alpha1.TriggerKindEventJob, "e100", ""))
	others := map[string]*batchv1alpha1.EventJob{}
	for i := 1; i <= 100; i++ {
		kind, trigger := batchv1alpha1.TriggerKindEventJob, fmt.Sprintf("e%d", i-1)
		if i == 1 {
			kind, trigger = batchv1alpha1.TriggerKindCronJob, "hello"
		}
		e := eventJob(kind, trigger, "")
		e.Name = fmt.Sprintf("e%d", i)
		others[e.Name] = e
	}
	chain, err := batchv1alpha1.CheckTriggerChain(w.ej, func(name string) (*batchv1alpha1.EventJob, error) { return others[name], nil }, nil)
	if err != nil || chain == nil {
		t.Fatalf("CheckTriggerChain = %v, %v; want the chain of 101 refused", chain, err)
	}
	w.chain = chain
	w.upstreamJob(batchv1.JobComplete, t0.Add(time.Second))
	if p := w.step(true); p.invalid == nil || len(w.created) != 0 {
		t.Fatalf("on a chain of 101: invalid %v, runs %v; want an error and no run", p.invalid, w.created)
	}
	c := w.ej.Status.Conditions[0]
	want := `the chain of EventJob triggers from this EventJob is 101 EventJobs long, more than the 100 EventJobs that may trigger one after another: ` +
		`EventJob "ej" triggers on EventJob "e100", which triggers on EventJob "e99", which triggers on EventJob "e98", which triggers on EventJob "e97", … (92 more) …, ` +
		`which triggers on EventJob "e4", which triggers on EventJob "e3", which triggers on EventJob "e2", which triggers on EventJob "e1"; ` +
		`this EventJob is more than 100 from the chain's start, so it starts no Job: trigger it, or an EventJob above it, on an object nearer the start of the chain ` +
		`(the Job, CronJob or ScheduledJob that starts it)`
	if c.Status != metav1.ConditionFalse || c.Reason != batchv1alpha1.ReasonInvalidTrigger || c.Message != want {
		t.Errorf("Ready condition %+v\nwant message %s", c, want)
	}
	w.chain = nil // a trigger on the chain changed
	w.step(true)
	if diff := cmp.Diff([]string{"hello-1"}, w.created); diff != "" {
		t.Errorf("runs after the chain was shortened (-want +got):\n%s", diff)
	}
}

func TestSuspend(t *testing.T) {
	w := newWorld(t, eventJob(batchv1alpha1.TriggerKindCronJob, "hello", ""))
	w.ej.Spec.Suspend = true
	w.upstreamJob(batchv1.JobComplete, t0.Add(time.Second))
	w.step(true)
	w.ej.Spec.Suspend = false
	w.step(true)
	if len(w.created) != 0 || w.ej.Status.SkippedCount != 1 {
		t.Errorf("runs %v, skippedCount %d; want none and 1", w.created, w.ej.Status.SkippedCount)
	}
	w.upstreamJob(batchv1.JobComplete, t0.Add(2*time.Second))
	w.step(true)
	if diff := cmp.Diff([]string{"hello-2"}, w.created); diff != "" {
		t.Errorf("after resuming (-want +got):\n%s", diff)
	}
}

func TestChangedTriggerStartsOver(t *testing.T) {
	w := newWorld(t, eventJob(batchv1alpha1.TriggerKindCronJob, "hello", ""))
	w.step(true)
	w.upstreamJob(batchv1.JobComplete, t0.Add(time.Second)) // a Job of "hello", finished earlier
	w.ej.Spec.Trigger.Type = batchv1alpha1.TriggerTypeAny
	w.clk.SetTime(t0.Add(10 * time.Minute))
	w.step(true)
	if len(w.created) != 0 {
		t.Errorf("a changed trigger fired for a Job that finished before the change: %v", w.created)
	}
	if got := w.ej.Status.Watermark; got.Trigger != "batch/CronJob/hello/Any" || !got.Time.Time.Equal(t0.Add(10*time.Minute)) {
		t.Errorf("watermark %+v", got)
	}
	w.upstreamJob(batchv1.JobFailed, t0.Add(11*time.Minute))
	w.step(true)
	if diff := cmp.Diff([]string{"hello-2"}, w.created); diff != "" {
		t.Errorf("runs (-want +got):\n%s", diff)
	}
}

func TestSelfTriggerIsInvalid(t *testing.T) {
	w := newWorld(t, eventJob(batchv1alpha1.TriggerKindEventJob, "ej", ""))
	p := w.step(true)
	if p.invalid == nil || w.ej.Status.Conditions[0].Reason != batchv1alpha1.ReasonInvalidTrigger {
		t.Errorf("invalid %v, conditions %v", p.invalid, w.ej.Status.Conditions)
	}
}

func TestUpstreamKeys(t *testing.T) {
	tests := []struct {
		trigger batchv1alpha1.Trigger
		want    string
	}{
		{batchv1alpha1.Trigger{Kind: "Job", Name: "a"}, "batch/Job/a"},
		{batchv1alpha1.Trigger{Kind: "CronJob", Name: "hello", APIVersion: "batch/v1"}, "batch/CronJob/hello"},
		{batchv1alpha1.Trigger{Kind: "ScheduledJob", Name: "s"}, "batch.almanac.dev/ScheduledJob/s"},
		{batchv1alpha1.Trigger{Kind: "EventJob", Name: "b", APIVersion: "batch.almanac.dev/v1alpha1"}, "batch.almanac.dev/EventJob/b"},
	}
	for _, tt := range tests {
		if got := tt.trigger.UpstreamKey(); got != tt.want {
			t.Errorf("UpstreamKey(%+v) = %s, want %s", tt.trigger, got, tt.want)
		}
	}
	// The key of an EventJob's trigger matches the key of the Jobs its upstream controls.
	j := jobs.NewJob(&batchv1.JobTemplateSpec{}, jobs.Run{Name: "b-1", Owner: &batchv1alpha1.EventJob{ObjectMeta: metav1.ObjectMeta{Name: "b"}}, OwnerGVK: gvk})
	if got := batchv1alpha1.ControllerKeyOf(j); got != tests[3].want {
		t.Errorf("ControllerKeyOf = %s", got)
	}
}
