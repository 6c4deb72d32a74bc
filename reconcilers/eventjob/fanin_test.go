package eventjob

import (
	"errors"
	"fmt"
	"strings"
	"testing"
	"time"

	"github.com/google/go-cmp/cmp"
	batchv1 "k8s.io/api/batch/v1"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/runtime/schema"
	"k8s.io/apimachinery/pkg/types"
	"k8s.io/utils/ptr"

	batchv1alpha1 "github.com/almanac-dev/almanac/api/batch/v1alpha1"
)

// fanInJob is an EventJob "ej" over the ScheduledJobs a, b and c (in that order), with f's
// fanIn (defaults for what f leaves out).
func fanInJob(f batchv1alpha1.FanIn) *batchv1alpha1.EventJob {
	ej := eventJob("", "", "")
	ej.Spec.Trigger = batchv1alpha1.Trigger{}
	for _, name := range []string{"a", "b", "c"} {
		ej.Spec.Triggers = append(ej.Spec.Triggers, batchv1alpha1.Trigger{Kind: batchv1alpha1.TriggerKindScheduledJob, Name: name})
	}
	ej.Spec.FanIn = &f
	return ej
}

// slotJob adds a Job of ScheduledJob owner for slot that ended with cond at `at` ("" still
// runs). Its name is "<owner>-<minutes after t0 of the slot>".
func (w *world) slotJob(owner string, slot time.Time, cond batchv1.JobConditionType, at time.Time) *batchv1.Job {
	w.n++
	j := &batchv1.Job{ObjectMeta: metav1.ObjectMeta{
		Name: fmt.Sprintf("%s-%d", owner, int(slot.Sub(t0)/time.Minute)), Namespace: "ns", UID: types.UID(fmt.Sprintf("up-%03d", w.n)),
		Annotations: map[string]string{batchv1alpha1.AnnotationScheduledTime: batchv1alpha1.FormatTime(slot)},
		OwnerReferences: []metav1.OwnerReference{{APIVersion: batchv1alpha1.GroupVersion.String(), Kind: "ScheduledJob", Name: owner,
			UID: types.UID(owner + "-uid"), Controller: ptrTrue()}},
	}}
	if cond != "" {
		finish(j, cond, at)
	}
	w.upstream = append(w.upstream, j)
	return j
}

func (w *world) set(key string) *batchv1alpha1.FanInSet {
	if w.ej.Status.FanIn == nil {
		return nil
	}
	for i := range w.ej.Status.FanIn.Sets {
		if s := &w.ej.Status.FanIn.Sets[i]; s.Key == key {
			return s
		}
	}
	return nil
}

func slotKey(minutes int) string {
	return batchv1alpha1.FormatTime(t0.Add(time.Duration(minutes) * time.Minute))
}

// TestFanInAllOfBySlot: one Job per slot, started with the last upstream run of the slot; the
// slots never mix, even when a slot's last run ends after the next slot's first; the Job
// carries the slot and the set's upstream Jobs in the order of the triggers.
func TestFanInAllOfBySlot(t *testing.T) {
	w := newWorld(t, fanInJob(batchv1alpha1.FanIn{}))
	s1, s2 := t0.Add(time.Minute), t0.Add(2*time.Minute)
	w.clk.SetTime(s1.Add(30 * time.Second))
	w.slotJob("a", s1, batchv1.JobComplete, s1.Add(5*time.Second))
	w.slotJob("b", s1, batchv1.JobComplete, s1.Add(15*time.Second))
	w.step(true)
	if len(w.created) != 0 {
		t.Fatalf("runs before c's run of the slot: %v", w.created)
	}
	// The next slot's a and b end before the first slot's c.
	w.clk.SetTime(s2.Add(20 * time.Second))
	w.slotJob("a", s2, batchv1.JobComplete, s2.Add(5*time.Second))
	w.slotJob("b", s2, batchv1.JobComplete, s2.Add(15*time.Second))
	w.step(true)
	if len(w.created) != 0 {
		t.Fatalf("runs before any c ended: %v", w.created)
	}
	w.slotJob("c", s1, batchv1.JobComplete, s2.Add(18*time.Second)) // c of the first slot, late
	w.step(true)
	w.slotJob("c", s2, batchv1.JobComplete, s2.Add(25*time.Second))
	w.step(true)
	w.step(true)
	if diff := cmp.Diff([]string{slotKey(1), slotKey(2)}, w.created); diff != "" {
		t.Errorf("runs (-want +got):\n%s", diff)
	}
	first := w.find(batchv1alpha1.FanInJobName("ej", slotKey(1)))
	if first == nil {
		t.Fatal("no Job for the first slot")
	}
	for _, obj := range []map[string]string{first.Annotations, first.Spec.Template.Annotations} {
		want := map[string]string{
			batchv1alpha1.AnnotationFanInSet:          slotKey(1),
			batchv1alpha1.AnnotationScheduledTime:     slotKey(1),
			batchv1alpha1.AnnotationTriggerJobs:       "a-1,b-1,c-1",
			batchv1alpha1.AnnotationTriggerUIDs:       "up-001,up-002,up-005",
			batchv1alpha1.AnnotationTriggerConditions: "Complete,Complete,Complete",
			batchv1alpha1.AnnotationTriggerNamespace:  "ns",
			batchv1alpha1.AnnotationTriggerTime:       batchv1alpha1.FormatTime(s2.Add(18 * time.Second)),
		}
		if diff := cmp.Diff(want, obj); diff != "" {
			t.Errorf("annotations of the first slot's Job (-want +got):\n%s", diff)
		}
	}
	st := w.ej.Status
	if st.TriggerCount != 2 || st.LastTrigger == nil || st.LastTrigger.JobName != "c-2" {
		t.Errorf("triggerCount %d, lastTrigger %+v; want 2 and c-2", st.TriggerCount, st.LastTrigger)
	}
	for _, key := range []string{slotKey(1), slotKey(2)} {
		if s := w.set(key); s == nil || s.Decision != batchv1alpha1.FanInStarted || s.Job != batchv1alpha1.FanInJobName("ej", key) || len(s.Members) != 3 {
			t.Errorf("set %s: %+v", key, s)
		}
	}
}

// TestFanInExactlyOnce: a set's Job is created once, whatever happens after: the status write
// after its create fails (the Job is recovered, not created again), its Job is pruned or
// deleted, its upstream Jobs go, and a set whose upstream Job is pruned before the set is
// complete still completes from the record.
func TestFanInExactlyOnce(t *testing.T) {
	w := newWorld(t, fanInJob(batchv1alpha1.FanIn{}))
	s1 := t0.Add(time.Minute)
	w.clk.SetTime(s1.Add(time.Minute))
	w.slotJob("a", s1, batchv1.JobComplete, s1.Add(5*time.Second))
	w.step(true)
	w.upstream = nil // a's Job pruned by its ScheduledJob's history limit: the record holds it
	w.slotJob("b", s1, batchv1.JobComplete, s1.Add(15*time.Second))
	w.slotJob("c", s1, batchv1.JobComplete, s1.Add(25*time.Second))
	w.step(false) // created, then the status write failed
	p := w.step(true)
	if len(p.recovered) != 1 || len(p.triggers) != 0 {
		t.Errorf("recovered %d, runs %d; want 1 and 0", len(p.recovered), len(p.triggers))
	}
	w.downstream = nil // pruned or deleted by hand (once recorded: the finalizer)
	w.step(true)
	w.upstream = nil
	w.step(true)
	if diff := cmp.Diff([]string{slotKey(1)}, w.created); diff != "" {
		t.Errorf("runs (-want +got):\n%s", diff)
	}
	if st := w.ej.Status; st.TriggerCount != 1 {
		t.Errorf("triggerCount %d, want 1", st.TriggerCount)
	}
	if s := w.set(slotKey(1)); s == nil || s.Decision != batchv1alpha1.FanInStarted || strings.Join(memberNames(s), ",") != "a-1,b-1,c-1" {
		t.Errorf("set %+v", s)
	}
}

func memberNames(s *batchv1alpha1.FanInSet) []string {
	var out []string
	for _, m := range sortedMembers(s) {
		out = append(out, m.JobName)
	}
	return out
}

// TestFanInFailedUpstream: under onFailure Skip a failed upstream run ends its set without a
// Job, counted, and the set's later runs start nothing; under Run the set runs anyway and
// its Job says how each upstream run ended.
func TestFanInFailedUpstream(t *testing.T) {
	for _, tt := range []struct {
		policy     batchv1alpha1.FanInFailurePolicy
		require    batchv1alpha1.FanInRequirement
		runs       int
		failedSets int64
		conditions string
	}{
		{policy: batchv1alpha1.FanInSkip, require: batchv1alpha1.FanInAllOf, failedSets: 1},
		{policy: batchv1alpha1.FanInRun, require: batchv1alpha1.FanInAllOf, runs: 1, conditions: "Complete,Failed,Complete"},
		// AnyOf: a's Complete starts the set at once.
		{policy: batchv1alpha1.FanInSkip, require: batchv1alpha1.FanInAnyOf, runs: 1, conditions: "Complete"},
	} {
		t.Run(string(tt.require)+"/"+string(tt.policy), func(t *testing.T) {
			w := newWorld(t, fanInJob(batchv1alpha1.FanIn{OnFailure: tt.policy, Require: tt.require}))
			s1 := t0.Add(time.Minute)
			w.clk.SetTime(s1.Add(time.Minute))
			w.slotJob("a", s1, batchv1.JobComplete, s1.Add(5*time.Second))
			w.slotJob("b", s1, batchv1.JobFailed, s1.Add(15*time.Second))
			p := w.step(true)
			w.slotJob("c", s1, batchv1.JobComplete, s1.Add(25*time.Second))
			w.step(true)
			w.step(true)
			if len(w.created) != tt.runs {
				t.Errorf("runs %v, want %d", w.created, tt.runs)
			}
			st := w.ej.Status
			if st.FanIn.FailedSets != tt.failedSets {
				t.Errorf("failedSets %d, want %d", st.FanIn.FailedSets, tt.failedSets)
			}
			if tt.failedSets > 0 {
				if len(p.fanIn.failed) != 1 || failedRuns(w.ej, &p.fanIn.failed[0]) != "upstream Job b-1 ended Failed" {
					t.Errorf("failed sets reported %+v", p.fanIn.failed)
				}
				if s := w.set(slotKey(1)); s == nil || s.Decision != batchv1alpha1.FanInFailed {
					t.Errorf("set %+v, want Failed", s)
				}
			}
			if tt.conditions != "" {
				if j := w.find(batchv1alpha1.FanInJobName("ej", slotKey(1))); j == nil || j.Annotations[batchv1alpha1.AnnotationTriggerConditions] != tt.conditions {
					t.Errorf("Job %v, want trigger-conditions %s", j, tt.conditions)
				}
			}
		})
	}
}

// TestFanInAnyOfFailsOnlyWhenEveryRunFailed: under AnyOf and Skip, a set fails once every
// trigger's run of it ended without its outcome.
func TestFanInAnyOfFailsOnlyWhenEveryRunFailed(t *testing.T) {
	w := newWorld(t, fanInJob(batchv1alpha1.FanIn{Require: batchv1alpha1.FanInAnyOf}))
	s1 := t0.Add(time.Minute)
	w.clk.SetTime(s1.Add(time.Minute))
	w.slotJob("a", s1, batchv1.JobFailed, s1.Add(5*time.Second))
	w.slotJob("b", s1, batchv1.JobFailed, s1.Add(15*time.Second))
	w.step(true)
	if s := w.set(slotKey(1)); s == nil || s.Decision != "" {
		t.Fatalf("set %+v, want it open (c may still complete)", s)
	}
	w.slotJob("c", s1, batchv1.JobFailed, s1.Add(25*time.Second))
	w.step(true)
	if s := w.set(slotKey(1)); s == nil || s.Decision != batchv1alpha1.FanInFailed || w.ej.Status.FanIn.FailedSets != 1 || len(w.created) != 0 {
		t.Errorf("set %+v, failedSets %d, runs %v", s, w.ej.Status.FanIn.FailedSets, w.created)
	}
}

// TestFanInExpires: a set that is not complete within its horizon expires, counted, when its
// horizon ends (the reconcile asks to be woken then), and a run of its slot that ends later
// starts nothing.
func TestFanInExpires(t *testing.T) {
	w := newWorld(t, fanInJob(batchv1alpha1.FanIn{HorizonSeconds: ptr.To(int64(600))}))
	s1 := t0.Add(time.Minute)
	w.clk.SetTime(s1.Add(time.Minute))
	w.slotJob("a", s1, batchv1.JobComplete, s1.Add(5*time.Second))
	w.slotJob("b", s1, batchv1.JobComplete, s1.Add(15*time.Second))
	p := w.step(true)
	if want := s1.Add(10 * time.Minute); !p.fanIn.next.Equal(want) {
		t.Errorf("wake-up at %s, want %s (the horizon of the slot)", p.fanIn.next, want)
	}
	w.clk.SetTime(s1.Add(10*time.Minute - time.Second))
	w.step(true)
	if w.ej.Status.FanIn.ExpiredSets != 0 {
		t.Fatalf("expired before its horizon")
	}
	w.clk.SetTime(s1.Add(10 * time.Minute))
	p = w.step(true)
	st := w.ej.Status.FanIn
	if st.ExpiredSets != 1 || len(st.Sets) != 0 || len(p.fanIn.expired) != 1 || !p.fanIn.next.IsZero() {
		t.Errorf("expiredSets %d, sets %v, expired now %d, next %s; want 1, none, 1, none", st.ExpiredSets, st.Sets, len(p.fanIn.expired), p.fanIn.next)
	}
	if got := missingRuns(w.ej, &p.fanIn.expired[0]); got != "no run of ScheduledJob c; " {
		t.Errorf("missingRuns = %q", got)
	}
	w.slotJob("c", s1, batchv1.JobComplete, s1.Add(10*time.Minute+time.Second))
	w.clk.SetTime(s1.Add(11 * time.Minute))
	w.step(true)
	if len(w.created) != 0 || len(w.ej.Status.FanIn.Sets) != 0 || w.ej.Status.FanIn.ExpiredSets != 1 {
		t.Errorf("runs %v, sets %v after a late run", w.created, w.ej.Status.FanIn.Sets)
	}
}

// TestFanInStaysBounded: upstream runs whose sets never complete (c never runs) keep at most
// MaxFanInSets sets in the record, and at most maxHandled upstream UIDs in the watermark, each
// set beyond counted as expired once; the record of a day of every-minute slots fits.
func TestFanInStaysBounded(t *testing.T) {
	w := newWorld(t, fanInJob(batchv1alpha1.FanIn{HorizonSeconds: ptr.To(batchv1alpha1.MaxFanInHorizonSeconds)}))
	const slots = 1440
	for i := 1; i <= slots; i++ {
		slot := t0.Add(time.Duration(i) * time.Minute)
		w.slotJob("a", slot, batchv1.JobComplete, slot.Add(5*time.Second))
		w.slotJob("b", slot, batchv1.JobComplete, slot.Add(15*time.Second))
		if i%60 == 0 {
			w.clk.SetTime(slot.Add(time.Minute))
			w.step(true)
			st := w.ej.Status
			if n := len(st.FanIn.Sets); n > batchv1alpha1.MaxFanInSets {
				t.Fatalf("after %d slots: %d sets recorded, more than %d", i, n, batchv1alpha1.MaxFanInSets)
			}
			if n := len(st.Watermark.Handled); n > maxHandled {
				t.Fatalf("after %d slots: %d upstream Jobs in the watermark, more than %d", i, n, maxHandled)
			}
			// The upstream ScheduledJobs keep their last 3 Jobs (their history limit).
			w.upstream = w.upstream[max(0, len(w.upstream)-6):]
		}
	}
	st := w.ej.Status.FanIn
	if got, want := st.ExpiredSets, int64(slots-batchv1alpha1.MaxFanInSets); got != want {
		t.Errorf("expiredSets %d, want %d", got, want)
	}
	if len(st.Sets) != batchv1alpha1.MaxFanInSets || st.ClosedThrough == nil {
		t.Errorf("%d sets, closedThrough %v", len(st.Sets), st.ClosedThrough)
	}
	if len(w.created) != 0 {
		t.Errorf("runs %v", w.created)
	}
	// A late c of a closed slot starts nothing and counts nothing more.
	w.slotJob("c", t0.Add(time.Minute), batchv1.JobComplete, w.clk.Now())
	w.step(true)
	if len(w.created) != 0 || w.ej.Status.FanIn.ExpiredSets != st.ExpiredSets {
		t.Errorf("runs %v, expiredSets %d after a late run of a closed set", w.created, w.ej.Status.FanIn.ExpiredSets)
	}
}

// TestFanInByWindow: runs that end within windowSeconds of a set's first run make the set;
// a run of a trigger the set has opens a set of its own; a set not complete within its window
// expires.
func TestFanInByWindow(t *testing.T) {
	w := newWorld(t, fanInJob(batchv1alpha1.FanIn{PairBy: batchv1alpha1.FanInPairByWindow, WindowSeconds: ptr.To(int64(60))}))
	w.clk.SetTime(t0.Add(10 * time.Minute))
	a1 := w.upstreamOf("a", t0.Add(time.Minute))
	w.upstreamOf("a", t0.Add(time.Minute+10*time.Second)) // a again: a set of its own
	w.upstreamOf("b", t0.Add(time.Minute+30*time.Second))
	w.upstreamOf("c", t0.Add(2*time.Minute)) // exactly the window's end: in it
	w.clk.SetTime(t0.Add(2*time.Minute + time.Second))
	w.step(true)
	first := batchv1alpha1.WindowSetKey(t0.Add(time.Minute), a1.UID)
	if diff := cmp.Diff([]string{first}, w.created); diff != "" {
		t.Errorf("runs (-want +got):\n%s", diff)
	}
	j := w.find(batchv1alpha1.FanInJobName("ej", first))
	if j == nil || j.Annotations[batchv1alpha1.AnnotationTriggerJobs] != "a-1,b-3,c-4" {
		t.Fatalf("Job %v", j)
	}
	if _, ok := j.Annotations[batchv1alpha1.AnnotationScheduledTime]; ok {
		t.Errorf("a set paired by window has no slot, but its Job says %s", j.Annotations[batchv1alpha1.AnnotationScheduledTime])
	}
	// The second a's set waits until 60 s after it ended, then expires.
	w.clk.SetTime(t0.Add(2*time.Minute + 10*time.Second))
	w.step(true)
	if st := w.ej.Status.FanIn; st.ExpiredSets != 1 || len(w.created) != 1 {
		t.Errorf("expiredSets %d, runs %v", st.ExpiredSets, w.created)
	}
}

// upstreamOf adds a Job of ScheduledJob owner, without a slot, completed at `at`.
func (w *world) upstreamOf(owner string, at time.Time) *batchv1.Job {
	j := w.slotJob(owner, at, batchv1.JobComplete, at)
	j.Name = fmt.Sprintf("%s-%d", owner, w.n)
	j.Annotations = nil
	return j
}

// TestFanInUnpaired: by slot, an upstream Job without a slot, or one of a run-now request,
// joins no set; it is reported once.
func TestFanInUnpaired(t *testing.T) {
	w := newWorld(t, fanInJob(batchv1alpha1.FanIn{}))
	w.upstreamOf("a", t0.Add(time.Second))
	now := w.slotJob("b", t0.Add(2*time.Second), batchv1.JobComplete, t0.Add(3*time.Second))
	now.Annotations[batchv1alpha1.AnnotationRunNowToken] = "2027-05-01T10:00:02Z"
	p := w.step(true)
	if len(p.fanIn.unpaired) != 2 || w.ej.Status.FanIn != nil && len(w.ej.Status.FanIn.Sets) != 0 {
		t.Errorf("unpaired %d, record %+v", len(p.fanIn.unpaired), w.ej.Status.FanIn)
	}
	if p = w.step(true); len(p.fanIn.unpaired) != 0 {
		t.Errorf("unpaired reported again: %d", len(p.fanIn.unpaired))
	}
}

// TestFanInCronJobSlot: a CronJob's Job pairs by the CronJob controller's scheduled-timestamp
// annotation, written in the CronJob's zone, with a ScheduledJob's Job of the same instant.
func TestFanInCronJobSlot(t *testing.T) {
	ej := fanInJob(batchv1alpha1.FanIn{})
	ej.Spec.Triggers = []batchv1alpha1.Trigger{{Kind: batchv1alpha1.TriggerKindCronJob, Name: "hello"}, {Kind: batchv1alpha1.TriggerKindScheduledJob, Name: "a"}}
	w := newWorld(t, ej)
	slot := t0.Add(time.Hour)
	w.clk.SetTime(slot.Add(time.Minute))
	cj := w.upstreamJob(batchv1.JobComplete, slot.Add(5*time.Second))
	cj.Annotations = map[string]string{batchv1.CronJobScheduledTimestampAnnotation: slot.In(time.FixedZone("CEST", 2*3600)).Format(time.RFC3339)}
	w.slotJob("a", slot, batchv1.JobComplete, slot.Add(10*time.Second))
	w.step(true)
	if diff := cmp.Diff([]string{batchv1alpha1.SlotSetKey(slot)}, w.created); diff != "" {
		t.Errorf("runs (-want +got):\n%s", diff)
	}
}

// TestFanInSuspendAndForbid: a set complete while the EventJob is suspended, or while a Job
// of it runs under Forbid, is decided Skipped and counted, and never starts later.
func TestFanInSuspendAndForbid(t *testing.T) {
	w := newWorld(t, fanInJob(batchv1alpha1.FanIn{Require: batchv1alpha1.FanInAnyOf}))
	w.ej.Spec.Suspend = true
	w.clk.SetTime(t0.Add(3 * time.Minute))
	w.slotJob("a", t0.Add(time.Minute), batchv1.JobComplete, t0.Add(time.Minute+time.Second))
	w.step(true)
	w.ej.Spec.Suspend = false
	w.ej.Spec.ConcurrencyPolicy = batchv1alpha1.ConcurrencyPolicyForbid
	w.step(true)
	if len(w.created) != 0 || w.ej.Status.SkippedCount != 1 || w.set(slotKey(1)).Decision != batchv1alpha1.FanInSkipped {
		t.Fatalf("runs %v, skippedCount %d, set %+v", w.created, w.ej.Status.SkippedCount, w.set(slotKey(1)))
	}
	w.slotJob("a", t0.Add(2*time.Minute), batchv1.JobComplete, t0.Add(2*time.Minute+time.Second))
	w.step(true) // runs, and still runs:
	w.slotJob("b", t0.Add(3*time.Minute), batchv1.JobComplete, t0.Add(3*time.Minute+time.Second))
	w.step(true)
	if diff := cmp.Diff([]string{slotKey(2)}, w.created); diff != "" || w.ej.Status.SkippedCount != 2 {
		t.Errorf("runs (-want +got):\n%s\nskippedCount %d, want 2", diff, w.ej.Status.SkippedCount)
	}
}

// TestFanInRefusedCreate: a set whose Job the API server refuses stays open, complete, and
// starts once the refusal is lifted, also after its horizon.
func TestFanInRefusedCreate(t *testing.T) {
	w := newWorld(t, fanInJob(batchv1alpha1.FanIn{Require: batchv1alpha1.FanInAnyOf, HorizonSeconds: ptr.To(int64(60))}))
	w.clk.SetTime(t0.Add(time.Minute + 30*time.Second))
	w.slotJob("a", t0.Add(time.Minute), batchv1.JobComplete, t0.Add(time.Minute+time.Second))
	w.refuse = apierrors.NewForbidden(schema.GroupResource{Group: "batch", Resource: "jobs"}, "x", errors.New("exceeded quota: jobs"))
	w.step(true)
	if s := w.set(slotKey(1)); s == nil || s.Decision != "" {
		t.Fatalf("set %+v, want it open", s)
	}
	w.refuse = nil
	w.clk.SetTime(t0.Add(5 * time.Minute))
	w.step(true)
	w.step(true)
	if diff := cmp.Diff([]string{slotKey(1)}, w.created); diff != "" || w.ej.Status.FanIn.ExpiredSets != 0 {
		t.Errorf("runs (-want +got):\n%s\nexpiredSets %d", diff, w.ej.Status.FanIn.ExpiredSets)
	}
}

// TestFanInChangedTriggersStartOver: new triggers start the record over; a new require keeps
// the open sets and judges them by it.
func TestFanInChangedTriggersStartOver(t *testing.T) {
	w := newWorld(t, fanInJob(batchv1alpha1.FanIn{}))
	w.clk.SetTime(t0.Add(2 * time.Minute))
	w.slotJob("a", t0.Add(time.Minute), batchv1.JobComplete, t0.Add(time.Minute+time.Second))
	w.step(true)
	w.ej.Spec.FanIn.Require = batchv1alpha1.FanInAnyOf
	w.step(true)
	if diff := cmp.Diff([]string{slotKey(1)}, w.created); diff != "" {
		t.Fatalf("runs after AnyOf (-want +got):\n%s", diff)
	}
	w.ej.Spec.Triggers = w.ej.Spec.Triggers[:2]
	w.clk.SetTime(t0.Add(3 * time.Minute))
	w.slotJob("b", t0.Add(time.Minute), batchv1.JobComplete, t0.Add(2*time.Minute))
	w.step(true)
	st := w.ej.Status
	if len(st.FanIn.Sets) != 0 || !st.Watermark.Time.Equal(ptr.To(metav1.NewTime(t0.Add(3*time.Minute)))) || len(w.created) != 1 {
		t.Errorf("sets %v, watermark %v, runs %v: want the record started over at the change", st.FanIn.Sets, st.Watermark, w.created)
	}
	// Back to one trigger: the record of sets goes, and the sets' Jobs are no upstream Jobs'.
	w.ej.Spec.Triggers, w.ej.Spec.FanIn = nil, nil
	w.ej.Spec.Trigger = batchv1alpha1.Trigger{Kind: batchv1alpha1.TriggerKindScheduledJob, Name: "a"}
	p := w.step(true)
	if w.ej.Status.FanIn != nil || len(p.recovered) != 0 || len(w.created) != 1 {
		t.Errorf("fanIn %+v, recovered %d, runs %v after going back to one trigger", w.ej.Status.FanIn, len(p.recovered), w.created)
	}
}

func TestFanInCondition(t *testing.T) {
	ej := fanInJob(batchv1alpha1.FanIn{})
	if got, want := ej.FanInCondition(), "each of ScheduledJob a, ScheduledJob b and ScheduledJob c has a Job that completed, for the same slot "+
		"(a set waits 86400 s after its slot; a Job that ended otherwise skips its set)"; got != want {
		t.Errorf("FanInCondition =\n%s\nwant\n%s", got, want)
	}
	ej = fanInJob(batchv1alpha1.FanIn{Require: batchv1alpha1.FanInAnyOf, PairBy: batchv1alpha1.FanInPairByWindow, WindowSeconds: ptr.To(int64(600)), OnFailure: batchv1alpha1.FanInRun})
	ej.Spec.Triggers[1].Type = batchv1alpha1.TriggerTypeFailed
	if got, want := ej.FanInCondition(), "one of ScheduledJob a (completed), ScheduledJob b (failed) and ScheduledJob c (completed) has a Job that ended so, "+
		"within 600 s of the set's first Job (a Job that ended otherwise counts too)"; got != want {
		t.Errorf("FanInCondition =\n%s\nwant\n%s", got, want)
	}
}
