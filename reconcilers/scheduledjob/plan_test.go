package scheduledjob

import (
	"context"
	"encoding/json"
	"math"
	"testing"
	"time"

	"github.com/google/go-cmp/cmp"
	batchv1 "k8s.io/api/batch/v1"
	corev1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/types"
	clocktesting "k8s.io/utils/clock/testing"
	"k8s.io/utils/ptr"

	batchv1alpha1 "github.com/almanac-dev/almanac/api/batch/v1alpha1"
	calendarv1alpha1 "github.com/almanac-dev/almanac/api/calendar/v1alpha1"
	"github.com/almanac-dev/almanac/api/timing"
	"github.com/almanac-dev/almanac/reconcilers/jobs"
)

func utc(s string) time.Time {
	t, err := time.Parse(time.RFC3339, s)
	if err != nil {
		panic(err)
	}
	return t.UTC()
}

func cronSJ(schedule, zone string, created time.Time) *batchv1alpha1.ScheduledJob {
	return &batchv1alpha1.ScheduledJob{
		ObjectMeta: metav1.ObjectMeta{Name: "report", Namespace: "ns", UID: "sj-uid", Generation: 1,
			CreationTimestamp: metav1.NewTime(created)},
		Spec: batchv1alpha1.ScheduledJobSpec{Schedule: schedule, TimeZone: zone,
			StartingDeadlineSeconds: ptr.To[int64](600)},
	}
}

func atSJ(at, zone string, created time.Time) *batchv1alpha1.ScheduledJob {
	sj := cronSJ("", zone, created)
	sj.Spec.At = at
	return sj
}

// world is the test's stand-in for the API server: the ScheduledJob's stored status and its
// Jobs. step runs one reconcile with the pure functions the reconciler uses.
type world struct {
	t       *testing.T
	sj      *batchv1alpha1.ScheduledJob
	jobs    []*batchv1.Job
	created []time.Time // slots of the Jobs created, in order
	// resumed is the time of the resume that the API server recorded, when there is one.
	resumed time.Time
	// book holds the calendars that exist.
	book *calendarv1alpha1.Book
}

func (w *world) step(now time.Time) plan {
	w.t.Helper()
	p := decideAt(w.sj, w.book, w.jobs, w.resumed, now)
	var out outcome
	for _, r := range p.replace {
		w.remove(r.Name)
	}
	if !p.run.IsZero() {
		j := w.job(p.run)
		w.jobs = append(w.jobs, j)
		w.created = append(w.created, p.run)
		out = outcome{job: j, created: true}
	}
	switch rn := p.now; {
	case !rn.handled():
	case rn.found != nil:
		out.runNowJob = rn.found
	case rn.refused != "":
		out.runNowRefused = rn.refused
	default:
		for _, r := range rn.replace {
			w.remove(r.Name)
		}
		j := jobs.NewJob(&w.sj.Spec.JobTemplate, jobs.Run{
			Name: rn.name, Namespace: w.sj.Namespace, Owner: w.sj, OwnerGVK: gvk,
			Labels: map[string]string{batchv1alpha1.LabelScheduledJob: w.sj.Name},
			Annotations: map[string]string{batchv1alpha1.AnnotationScheduledTime: batchv1alpha1.FormatTime(now),
				batchv1alpha1.AnnotationRunNowToken: rn.token},
		})
		w.jobs = append(w.jobs, j)
		out.runNowJob = j
	}
	w.sj.Status = *nextStatus(w.sj, &p, out, w.jobs, now)
	return p
}

func (w *world) job(slot time.Time) *batchv1.Job {
	return jobs.NewJob(&w.sj.Spec.JobTemplate, jobs.Run{
		Name: batchv1alpha1.ScheduledJobName(w.sj.Name, slot), Namespace: w.sj.Namespace, Owner: w.sj, OwnerGVK: gvk,
		Labels:      map[string]string{batchv1alpha1.LabelScheduledJob: w.sj.Name},
		Annotations: map[string]string{batchv1alpha1.AnnotationScheduledTime: batchv1alpha1.FormatTime(slot)},
	})
}

func (w *world) remove(name string) {
	for i, j := range w.jobs {
		if j.Name == name {
			w.jobs = append(w.jobs[:i], w.jobs[i+1:]...)
			return
		}
	}
}

// finish gives every running Job the Complete condition.
func (w *world) finish(now time.Time) {
	for _, j := range w.jobs {
		if !jobs.OutcomeOf(j).Finished() {
			complete(j, now)
		}
	}
}

func complete(j *batchv1.Job, at time.Time) {
	j.Status.Conditions = append(j.Status.Conditions, batchv1.JobCondition{
		Type: batchv1.JobComplete, Status: corev1.ConditionTrue, LastTransitionTime: metav1.NewTime(at)})
}

// run drives the world with a fake clock from `from` to `until`: each reconcile's RequeueAfter
// sets the clock for the next one, exactly as the workqueue would; running Jobs finish a
// second after they start.
func (w *world) run(from, until time.Time) {
	w.t.Helper()
	clk := clocktesting.NewFakeClock(from)
	for i := 0; clk.Now().Before(until); i++ {
		if i > 100000 {
			w.t.Fatal("the reconciler did not move forward (hot loop)")
		}
		p := w.step(clk.Now())
		if p.requeueAfter <= 0 {
			w.t.Fatalf("RequeueAfter %v at %s: the reconciler would never wake up", p.requeueAfter, clk.Now())
		}
		clk.Step(time.Second)
		w.finish(clk.Now())
		w.step(clk.Now()) // the Job event's reconcile
		clk.SetTime(clk.Now().Add(p.requeueAfter - time.Second))
	}
}

func TestCronSlotsAcrossDST(t *testing.T) {
	tests := []struct {
		name, schedule, zone string
		from, until          time.Time
		want                 []string
	}{{
		name: "New York spring forward: 02:30 does not exist and runs at the jump instant (03:00 EDT)",
		// 2027-03-14: clocks jump from 02:00 EST to 03:00 EDT.
		schedule: "30 2 * * *", zone: "America/New_York",
		from: utc("2027-03-12T12:00:00Z"), until: utc("2027-03-15T12:00:00Z"),
		want: []string{"2027-03-13T07:30:00Z", "2027-03-14T07:00:00Z", "2027-03-15T06:30:00Z"},
	}, {
		name: "New York fall back: 01:30 occurs twice and runs once, at its first occurrence (EDT)",
		// 2027-11-07: clocks go back from 02:00 EDT to 01:00 EST.
		schedule: "30 1 * * *", zone: "America/New_York",
		from: utc("2027-11-05T12:00:00Z"), until: utc("2027-11-08T12:00:00Z"),
		want: []string{"2027-11-06T05:30:00Z", "2027-11-07T05:30:00Z", "2027-11-08T06:30:00Z"},
	}, {
		name: "Berlin spring forward: 02:30 runs at 03:00 CEST",
		// 2027-03-28: clocks jump from 02:00 CET to 03:00 CEST.
		schedule: "30 2 * * *", zone: "Europe/Berlin",
		from: utc("2027-03-26T12:00:00Z"), until: utc("2027-03-29T12:00:00Z"),
		want: []string{"2027-03-27T01:30:00Z", "2027-03-28T01:00:00Z", "2027-03-29T00:30:00Z"},
	}, {
		name: "Berlin fall back: 02:30 occurs twice and runs once (CEST)",
		// 2027-10-31: clocks go back from 03:00 CEST to 02:00 CET.
		schedule: "30 2 * * *", zone: "Europe/Berlin",
		from: utc("2027-10-29T12:00:00Z"), until: utc("2027-11-01T12:00:00Z"),
		want: []string{"2027-10-30T00:30:00Z", "2027-10-31T00:30:00Z", "2027-11-01T01:30:00Z"},
	}, {
		name:     "Berlin spring forward, every 20 minutes: the gap's slots and 03:00 run once, at the jump",
		schedule: "*/20 1-3 28 3 *", zone: "Europe/Berlin",
		from: utc("2027-03-27T12:00:00Z"), until: utc("2027-03-28T12:00:00Z"),
		want: []string{
			"2027-03-28T00:00:00Z", "2027-03-28T00:20:00Z", "2027-03-28T00:40:00Z", // 01:00-01:40 CET
			"2027-03-28T01:00:00Z", // 02:00, 02:20, 02:40 (gap) and 03:00 CEST
			"2027-03-28T01:20:00Z", "2027-03-28T01:40:00Z",
		},
	}, {
		name:     "New York fall back, every 30 minutes: the repeated hour runs once",
		schedule: "*/30 0-2 7 11 *", zone: "America/New_York",
		from: utc("2027-11-06T12:00:00Z"), until: utc("2027-11-07T12:00:00Z"),
		want: []string{
			"2027-11-07T04:00:00Z", "2027-11-07T04:30:00Z", // 00:00, 00:30 EDT
			"2027-11-07T05:00:00Z", "2027-11-07T05:30:00Z", // 01:00, 01:30 EDT (not again in EST)
			"2027-11-07T07:00:00Z", "2027-11-07T07:30:00Z", // 02:00, 02:30 EST
		},
	}}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			w := &world{t: t, sj: cronSJ(tt.schedule, tt.zone, tt.from)}
			w.sj.Spec.SuccessfulJobsHistoryLimit = ptr.To[int32](100)
			w.run(tt.from, tt.until)
			var got []string
			for _, s := range w.created {
				got = append(got, batchv1alpha1.FormatTime(s))
			}
			if diff := cmp.Diff(tt.want, got); diff != "" {
				t.Errorf("runs (-want +got):\n%s", diff)
			}
			if w.sj.Status.MissedRuns != 0 {
				t.Errorf("missedRuns = %d, want 0", w.sj.Status.MissedRuns)
			}
			seen := map[string]bool{}
			for _, j := range w.jobs {
				if seen[j.Name] {
					t.Errorf("two Jobs named %s", j.Name)
				}
				seen[j.Name] = true
			}
		})
	}
}

func TestCronRequeuesExactlyAtTheNextSlot(t *testing.T) {
	created := utc("2027-03-14T06:10:07Z")
	sj := cronSJ("30 2 * * *", "America/New_York", created)
	now := created.Add(1500 * time.Millisecond)
	p := decideAt(sj, nil, nil, time.Time{}, now)
	// 02:30 is in the gap that day: the next run is at 03:00 EDT.
	if want := utc("2027-03-14T07:00:00Z").Sub(now); p.requeueAfter != want {
		t.Errorf("requeueAfter = %v, want %v", p.requeueAfter, want)
	}
	if !p.run.IsZero() {
		t.Errorf("run = %s, want none", p.run)
	}
	st := nextStatus(sj, &p, outcome{}, nil, now)
	if got := st.NextScheduleTime; got == nil || !got.Equal(&metav1.Time{Time: utc("2027-03-14T07:00:00Z")}) {
		t.Errorf("nextScheduleTime = %v, want 2027-03-14T07:00:00Z", got)
	}
}

func TestConcurrencyPolicy(t *testing.T) {
	created := utc("2027-05-01T00:00:30Z")
	slot := utc("2027-05-01T00:02:00Z")
	running := func(w *world) *batchv1.Job { return w.job(utc("2027-05-01T00:01:00Z")) }
	tests := []struct {
		policy      batchv1alpha1.ConcurrencyPolicy
		wantRun     bool
		wantReplace int
		wantMissed  int64
	}{
		{policy: "", wantRun: true},
		{policy: batchv1alpha1.ConcurrencyPolicyAllow, wantRun: true},
		{policy: batchv1alpha1.ConcurrencyPolicyForbid, wantMissed: 1},
		{policy: batchv1alpha1.ConcurrencyPolicyReplace, wantRun: true, wantReplace: 1},
	}
	for _, tt := range tests {
		t.Run(string(tt.policy), func(t *testing.T) {
			w := &world{t: t, sj: cronSJ("* * * * *", "UTC", created)}
			w.sj.Spec.ConcurrencyPolicy = tt.policy
			w.sj.Status.LastScheduleTime = &metav1.Time{Time: utc("2027-05-01T00:01:00Z")}
			w.jobs = []*batchv1.Job{running(w)}
			p := w.step(slot.Add(10 * time.Millisecond))
			if got := !p.run.IsZero(); got != tt.wantRun {
				t.Errorf("run = %v, want %v", got, tt.wantRun)
			}
			if len(p.replace) != tt.wantReplace {
				t.Errorf("replace = %d Jobs, want %d", len(p.replace), tt.wantReplace)
			}
			st := w.sj.Status
			if st.MissedRuns != tt.wantMissed {
				t.Errorf("missedRuns = %d, want %d", st.MissedRuns, tt.wantMissed)
			}
			wantActive := 1
			if tt.wantRun && tt.wantReplace == 0 {
				wantActive = 2
			}
			if len(st.Active) != wantActive {
				t.Errorf("active = %v, want %d Jobs", st.Active, wantActive)
			}
			if tt.wantMissed > 0 {
				if st.LastMissedTime == nil || !st.LastMissedTime.Time.Equal(slot) {
					t.Errorf("lastMissedTime = %v, want %s", st.LastMissedTime, slot)
				}
				if st.LastScheduleTime.Time.Equal(slot) {
					t.Error("a skipped slot is recorded as run")
				}
				// It does not run later either.
				if p := w.step(slot.Add(30 * time.Second)); !p.run.IsZero() {
					t.Errorf("the skipped slot ran later, at %s", p.run)
				}
			}
		})
	}
}

func TestDeadlineAndMissedRuns(t *testing.T) {
	created := utc("2027-05-01T00:00:30Z")
	tests := []struct {
		name          string
		deadline      int64
		lastRun       string
		now           time.Time
		wantRun       string
		wantMissed    int64
		wantLastMiss  string
		wantMissedWhy map[string]int64
	}{{
		name: "on time", deadline: 600, now: utc("2027-05-01T00:01:00.004Z"), wantRun: "2027-05-01T00:01:00Z",
	}, {
		name: "deadline 0 counts whole seconds: 900 ms late still runs", deadline: 0,
		now: utc("2027-05-01T00:01:00.9Z"), wantRun: "2027-05-01T00:01:00Z",
	}, {
		name: "deadline 0, a second late: missed", deadline: 0, now: utc("2027-05-01T00:01:01Z"),
		wantMissed: 1, wantLastMiss: "2027-05-01T00:01:00Z", wantMissedWhy: map[string]int64{jobs.MissDeadline: 1},
	}, {
		name: "down for 5 slots within the deadline: one catch-up (the latest), 4 missed", deadline: 600,
		lastRun: "2027-05-01T00:10:00Z", now: utc("2027-05-01T00:15:30Z"), wantRun: "2027-05-01T00:15:00Z",
		wantMissed: 4, wantLastMiss: "2027-05-01T00:14:00Z", wantMissedWhy: map[string]int64{jobs.MissSuperseded: 4},
	}, {
		name: "down past the deadline: nothing runs, every slot counted", deadline: 20,
		lastRun: "2027-05-01T00:10:00Z", now: utc("2027-05-01T00:15:30Z").Add(2 * time.Minute),
		wantMissed: 7, wantLastMiss: "2027-05-01T00:17:00Z",
		wantMissedWhy: map[string]int64{jobs.MissSuperseded: 6, jobs.MissDeadline: 1},
	}, {
		name: "a month down with an every-minute schedule: counted, not listed", deadline: 600,
		lastRun: "2027-05-01T00:10:00Z", now: utc("2027-06-01T00:10:00Z"), wantRun: "2027-06-01T00:10:00Z",
		wantMissed: 31*24*60 - 1, wantLastMiss: "2027-06-01T00:09:00Z",
		wantMissedWhy: map[string]int64{jobs.MissSuperseded: 31*24*60 - 1},
	}, {
		// Stored before the schema's maximum (315360000) existed: time.Duration(9999999999) *
		// time.Second wrapped around to a negative deadline, and every slot was missed
		// (DeadlinePassed) while admission and preview said the Job would run.
		name: "a deadline longer than a Duration holds: it runs on time", deadline: 9999999999,
		now: utc("2027-05-01T00:01:00.004Z"), wantRun: "2027-05-01T00:01:00Z",
	}, {
		name: "a deadline longer than a Duration holds: after downtime, the latest slot runs", deadline: math.MaxInt64,
		lastRun: "2027-05-01T00:10:00Z", now: utc("2027-05-01T00:15:30Z"), wantRun: "2027-05-01T00:15:00Z",
		wantMissed: 4, wantLastMiss: "2027-05-01T00:14:00Z", wantMissedWhy: map[string]int64{jobs.MissSuperseded: 4},
	}, {
		name: "the schema's maximum: it runs", deadline: batchv1alpha1.MaxStartingDeadlineSeconds,
		lastRun: "2027-05-01T00:00:00Z", now: utc("2027-05-01T00:01:30Z"), wantRun: "2027-05-01T00:01:00Z",
	}}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			w := &world{t: t, sj: cronSJ("* * * * *", "UTC", created)}
			w.sj.Spec.StartingDeadlineSeconds = ptr.To(tt.deadline)
			if tt.lastRun != "" {
				w.sj.Status.LastScheduleTime = &metav1.Time{Time: utc(tt.lastRun)}
			}
			p := w.step(tt.now)
			if got := fmtOrEmpty(p.run); got != tt.wantRun {
				t.Errorf("run = %q, want %q", got, tt.wantRun)
			}
			st := w.sj.Status
			if st.MissedRuns != tt.wantMissed {
				t.Errorf("missedRuns = %d, want %d", st.MissedRuns, tt.wantMissed)
			}
			if got := fmtOrEmpty(timeOr(st.LastMissedTime)); got != tt.wantLastMiss {
				t.Errorf("lastMissedTime = %q, want %q", got, tt.wantLastMiss)
			}
			if diff := cmp.Diff(tt.wantMissedWhy, p.missed); diff != "" {
				t.Errorf("missed by reason (-want +got):\n%s", diff)
			}
			// A second reconcile at the same instant counts nothing again and runs nothing.
			before := st.MissedRuns
			if p := w.step(tt.now); !p.run.IsZero() || w.sj.Status.MissedRuns != before {
				t.Errorf("second reconcile: run %s, missedRuns %d → %d", p.run, before, w.sj.Status.MissedRuns)
			}
		})
	}
}

// TestLongDowntimeIsWalkedInParts: after a year without a reconcile, an every-minute
// ScheduledJob has 527,040 slots to account for; one reconcile walks at most maxSlotWalk of
// them, records them, and asks to continue at once. The parts add up to what one walk would
// record: every slot but the latest missed, the latest run once. A Job of the latest slot
// created by an attempt whose status write failed is recorded by the part that reaches it,
// never skipped over and never created again.
func TestLongDowntimeIsWalkedInParts(t *testing.T) {
	last, now := utc("2027-05-01T00:10:00Z"), utc("2028-05-01T00:10:30Z")
	const slots = 366 * 24 * 60
	for _, createdBefore := range []bool{false, true} {
		w := &world{t: t, sj: cronSJ("* * * * *", "UTC", utc("2027-05-01T00:00:30Z"))}
		w.sj.Status.LastScheduleTime = &metav1.Time{Time: last}
		latest := utc("2028-05-01T00:10:00Z")
		if createdBefore {
			w.jobs = append(w.jobs, w.job(latest))
		}
		parts := 0
		for {
			parts++
			p := w.step(now)
			if walked := p.missedTotal(); walked > maxSlotWalk {
				t.Fatalf("part %d walked %d slots, more than %d", parts, walked, maxSlotWalk)
			}
			if !p.more {
				break
			}
			if !p.run.IsZero() || p.requeueAfter != time.Nanosecond || !w.sj.Status.LastScheduleTime.Time.Equal(last) {
				t.Fatalf("part %d: run %s, requeue after %s, lastScheduleTime %s; want no run, at once, unchanged", parts, p.run, p.requeueAfter, w.sj.Status.LastScheduleTime)
			}
		}
		if want := (slots + maxSlotWalk - 1) / maxSlotWalk; parts != want {
			t.Errorf("created before %v: %d parts, want %d", createdBefore, parts, want)
		}
		st := w.sj.Status
		if st.MissedRuns != slots-1 || !st.LastScheduleTime.Time.Equal(latest) || !st.LastMissedTime.Time.Equal(latest.Add(-time.Minute)) {
			t.Errorf("created before %v: missedRuns %d, lastScheduleTime %s, lastMissedTime %s; want %d, %s, %s",
				createdBefore, st.MissedRuns, st.LastScheduleTime, st.LastMissedTime, slots-1, latest, latest.Add(-time.Minute))
		}
		if wantCreated := !createdBefore; (len(w.created) == 1) != wantCreated || len(w.jobs) != 1 {
			t.Errorf("created before %v: %d Jobs created, %d in all; want the latest slot's, once", createdBefore, len(w.created), len(w.jobs))
		}
	}
}

// A Job was created but the status write failed (or the manager stopped in between): the
// next reconcile must not create a second Job, must record the slot as run, and must still
// count the slots that the first attempt found missed.
func TestCreatedButStatusNotWritten(t *testing.T) {
	w := &world{t: t, sj: cronSJ("* * * * *", "UTC", utc("2027-05-01T00:00:30Z"))}
	w.sj.Status.LastScheduleTime = &metav1.Time{Time: utc("2027-05-01T00:10:00Z")}
	stored := w.sj.Status.DeepCopy()
	now := utc("2027-05-01T00:13:20Z")
	p := w.step(now) // runs 00:13, misses 00:11 and 00:12
	if p.run.IsZero() {
		t.Fatal("no run")
	}
	w.sj.Status = *stored // the status write "failed"
	for _, later := range []time.Time{now, now.Add(20 * time.Second)} {
		p = w.step(later)
		if !p.run.IsZero() {
			t.Fatalf("ran %s again at %s", p.run, later)
		}
	}
	st := w.sj.Status
	if got := st.LastScheduleTime.UTC(); !got.Equal(utc("2027-05-01T00:13:00Z")) {
		t.Errorf("lastScheduleTime = %s, want 00:13", got)
	}
	if st.MissedRuns != 2 {
		t.Errorf("missedRuns = %d, want 2", st.MissedRuns)
	}
	if len(w.created) != 1 {
		t.Errorf("created %d Jobs, want 1", len(w.created))
	}
}

// History limits and manual deletes: a slot whose Job is gone never runs again, because
// status.lastScheduleTime is the record.
func TestPrunedJobNeverRunsAgain(t *testing.T) {
	w := &world{t: t, sj: cronSJ("*/5 * * * *", "UTC", utc("2027-05-01T00:00:30Z"))}
	w.step(utc("2027-05-01T00:05:00Z"))
	w.finish(utc("2027-05-01T00:05:10Z"))
	w.jobs = nil // pruned, or deleted by hand
	for _, now := range []time.Time{utc("2027-05-01T00:05:20Z"), utc("2027-05-01T00:09:59Z")} {
		if p := w.step(now); !p.run.IsZero() {
			t.Errorf("slot %s ran again at %s", p.run, now)
		}
	}
	if len(w.created) != 1 {
		t.Errorf("created %d Jobs, want 1", len(w.created))
	}
}

// TestSuspend: while suspended, a cron ScheduledJob is not woken at its slots and writes
// nothing per slot; the slots that fell due are counted once, when it is next reconciled
// (here: resumed), and none of them runs. Issue 11, finding 8: it woke, wrote status and
// emitted RunSkipped at every slot.
func TestSuspend(t *testing.T) {
	w := &world{t: t, sj: cronSJ("* * * * *", "UTC", utc("2027-05-01T00:00:30Z"))}
	w.sj.Spec.Suspend = true
	p := w.step(utc("2027-05-01T00:00:40Z")) // the spec change that suspended it
	if !p.run.IsZero() || p.requeueAfter != 0 {
		t.Fatalf("suspended: run %s, requeueAfter %v; want no run and no wake-up at the slots", p.run, p.requeueAfter)
	}
	st := w.sj.Status
	if st.MissedRuns != 0 || st.NextScheduleTime != nil || st.Conditions[0].Reason != batchv1alpha1.ReasonSuspended {
		t.Errorf("suspended: missedRuns %d, next %v, condition %v", st.MissedRuns, st.NextScheduleTime, st.Conditions)
	}
	// Resumed 20 seconds after the 00:05 slot: the five slots that fell due while suspended
	// are counted, once, and do not run.
	w.sj.Spec.Suspend = false
	p = w.step(utc("2027-05-01T00:05:20Z"))
	if !p.run.IsZero() {
		t.Errorf("ran %s, a slot that fell due while suspended", p.run)
	}
	if diff := cmp.Diff(map[string]int64{jobs.SkipSuspended: 5}, p.missed); diff != "" {
		t.Errorf("missed (-want +got):\n%s", diff)
	}
	st = w.sj.Status
	if st.MissedRuns != 5 || !timeOr(st.LastMissedTime).Equal(utc("2027-05-01T00:05:00Z")) || st.Conditions[0].Reason != batchv1alpha1.ReasonScheduled {
		t.Errorf("resumed: missedRuns %d, lastMissedTime %v, condition %v", st.MissedRuns, st.LastMissedTime, st.Conditions)
	}
	if p.requeueAfter != 40*time.Second {
		t.Errorf("resumed: requeueAfter %v, want 40s (the 00:06 slot)", p.requeueAfter)
	}
	if p := w.step(utc("2027-05-01T00:06:00Z")); !p.run.Equal(utc("2027-05-01T00:06:00Z")) {
		t.Errorf("after resuming: run %s, want 00:06", p.run)
	}
}

// TestResumeWhileNotLooking: the controller was not looking when the ScheduledJob was
// resumed (down, or not the leader) and looks again later: the slots before the resume
// are counted as suspended, the slots after it run as the deadline allows (the latest
// within it), and status records the resume. Issue 24: every slot until the first
// reconcile after the resume was counted as suspended.
func TestResumeWhileNotLooking(t *testing.T) {
	newWorld := func() *world {
		w := &world{t: t, sj: cronSJ("* * * * *", "UTC", utc("2027-05-01T00:00:30Z"))}
		w.sj.Spec.Suspend = true
		w.step(utc("2027-05-01T00:00:40Z"))
		w.sj.Spec.Suspend = false
		return w
	}
	t.Run("resumed at 00:02:30, seen at 00:05:10", func(t *testing.T) {
		w := newWorld()
		w.resumed = utc("2027-05-01T00:02:30Z")
		p := w.step(utc("2027-05-01T00:05:10Z"))
		if !p.run.Equal(utc("2027-05-01T00:05:00Z")) {
			t.Errorf("run %s, want the 00:05 slot, due after the resume and within the deadline", p.run)
		}
		want := map[string]int64{jobs.SkipSuspended: 2, jobs.MissSuperseded: 2}
		if diff := cmp.Diff(want, p.missed); diff != "" {
			t.Errorf("missed (-want +got):\n%s", diff)
		}
		st := w.sj.Status
		if !timeOr(st.LastResumeTime).Equal(w.resumed) || st.Conditions[0].Reason == batchv1alpha1.ReasonSuspended {
			t.Errorf("status: lastResumeTime %v, condition %v; want the resume and no longer Suspended", st.LastResumeTime, st.Conditions)
		}
		// The next reconcile reads the status just written: no resume to account for.
		w.resumed = time.Time{}
		if p := w.step(utc("2027-05-01T00:06:00Z")); !p.run.Equal(utc("2027-05-01T00:06:00Z")) || !timeOr(w.sj.Status.LastResumeTime).Equal(utc("2027-05-01T00:02:30Z")) {
			t.Errorf("after: run %s, lastResumeTime %v", p.run, w.sj.Status.LastResumeTime)
		}
	})
	t.Run("a slot at the very second of the resume fell due while suspended", func(t *testing.T) {
		w := newWorld()
		w.resumed = utc("2027-05-01T00:05:00Z")
		if p := w.step(utc("2027-05-01T00:05:10Z")); !p.run.IsZero() || p.missed[jobs.SkipSuspended] != 5 {
			t.Errorf("run %s, missed %v; want no run and 5 suspended", p.run, p.missed)
		}
	})
	t.Run("an unknown or future resume counts as now", func(t *testing.T) {
		for _, resumed := range []time.Time{{}, utc("2027-05-01T00:09:00Z")} {
			w := newWorld()
			w.resumed = resumed
			if p := w.step(utc("2027-05-01T00:05:10Z")); !p.run.IsZero() || p.missed[jobs.SkipSuspended] != 5 {
				t.Errorf("resumed %v: run %s, missed %v; want no run and 5 suspended", resumed, p.run, p.missed)
			}
		}
	})
	t.Run("a one-shot due while suspended does not run after the resume", func(t *testing.T) {
		w := &world{t: t, sj: atSJ("2027-05-01T00:03:00", "UTC", utc("2027-05-01T00:00:30Z"))}
		w.sj.Spec.Suspend = true
		w.step(utc("2027-05-01T00:00:40Z"))
		w.sj.Spec.Suspend = false
		w.resumed = utc("2027-05-01T00:04:00Z")
		if p := w.step(utc("2027-05-01T00:04:10Z")); !p.run.IsZero() || p.missed[jobs.SkipSuspended] != 1 {
			t.Errorf("run %s, missed %v; want the one-shot skipped (Suspended)", p.run, p.missed)
		}
	})
	t.Run("a one-shot due after the resume runs", func(t *testing.T) {
		w := &world{t: t, sj: atSJ("2027-05-01T00:03:00", "UTC", utc("2027-05-01T00:00:30Z"))}
		w.sj.Spec.Suspend = true
		w.step(utc("2027-05-01T00:00:40Z"))
		w.sj.Spec.Suspend = false
		w.resumed = utc("2027-05-01T00:02:00Z")
		if p := w.step(utc("2027-05-01T00:03:10Z")); !p.run.Equal(utc("2027-05-01T00:03:00Z")) {
			t.Errorf("run %s, missed %v; want the one-shot run", p.run, p.missed)
		}
	})
}

func TestOneShot(t *testing.T) {
	created := utc("2027-03-14T05:00:00Z")
	at := utc("2027-03-14T07:00:00Z") // 02:30 in New York does not exist that day: 03:00 EDT
	w := &world{t: t, sj: atSJ("2027-03-14T02:30", "America/New_York", created)}

	now := created.Add(1234 * time.Millisecond)
	p := w.step(now)
	if p.requeueAfter != at.Sub(now) || !p.run.IsZero() {
		t.Fatalf("before the instant: requeueAfter %v, run %s; want %v and none", p.requeueAfter, p.run, at.Sub(now))
	}
	if got := w.sj.Status.Phase; got != batchv1alpha1.ScheduledJobPhasePending {
		t.Errorf("phase %s, want Pending", got)
	}
	p = w.step(at)
	if !p.run.Equal(at) || p.requeueAfter != 0 {
		t.Fatalf("at the instant: run %s, requeueAfter %v; want %s and 0", p.run, p.requeueAfter, at)
	}
	if got, want := w.jobs[0].Name, "report-"+itoa(at.Unix()/60); got != want {
		t.Errorf("Job name %s, want %s", got, want)
	}
	if got := w.sj.Status.Phase; got != batchv1alpha1.ScheduledJobPhaseRunning {
		t.Errorf("phase %s, want Running", got)
	}
	if p := w.step(at.Add(time.Second)); !p.run.IsZero() {
		t.Errorf("ran again")
	}
	complete(w.jobs[0], at.Add(time.Minute))
	w.step(at.Add(time.Minute))
	if got := w.sj.Status.Phase; got != batchv1alpha1.ScheduledJobPhaseSucceeded {
		t.Errorf("phase %s, want Succeeded", got)
	}
	w.jobs = nil // pruned with successfulJobsHistoryLimit 0
	if p := w.step(at.Add(2 * time.Minute)); !p.run.IsZero() || w.sj.Status.Phase != batchv1alpha1.ScheduledJobPhaseSucceeded {
		t.Errorf("after pruning: run %s, phase %s; want none and Succeeded", p.run, w.sj.Status.Phase)
	}
}

// TestOneShotToTheSecond checks exactly-once for an at with seconds (the "AT" controller's
// instants): the Job starts at the second, is named by its minute, and neither a lost status
// write, a removed annotation, a status read back from JSON nor an update of at within the
// same minute creates a second Job.
func TestOneShotToTheSecond(t *testing.T) {
	at := utc("2036-03-21T13:53:55Z")
	w := &world{t: t, sj: atSJ("2036-03-21T13:53:55", "UTC", at.Add(-time.Hour))}
	if p := w.step(at.Add(-time.Second)); !p.run.IsZero() || p.requeueAfter != time.Second {
		t.Fatalf("a second early: run %s, requeueAfter %v; want none and 1s", p.run, p.requeueAfter)
	}
	before := *w.sj.Status.DeepCopy()
	p := w.step(at)
	if !p.run.Equal(at) {
		t.Fatalf("at the instant: run %s, want %s", p.run, at)
	}
	if got, want := w.jobs[0].Name, "report-"+itoa(utc("2036-03-21T13:53:00Z").Unix()/60); got != want {
		t.Errorf("Job name %s, want %s (the minute of the slot)", got, want)
	}
	if got := w.jobs[0].Annotations[batchv1alpha1.AnnotationScheduledTime]; got != "2036-03-21T13:53:55Z" {
		t.Errorf("scheduled-time annotation %q, want the instant to the second", got)
	}

	// The status write of that reconcile failed, and someone removed the annotation: the
	// Job's name still says that the slot ran.
	w.sj.Status = before
	delete(w.jobs[0].Annotations, batchv1alpha1.AnnotationScheduledTime)
	if p := w.step(at.Add(2 * time.Second)); !p.run.IsZero() || !p.ran.Equal(at) {
		t.Fatalf("after a lost status write: run %s, ran %s; want none and %s", p.run, p.ran, at)
	}
	if got := w.sj.Status.LastScheduleTime; got == nil || !got.Time.Equal(at) {
		t.Fatalf("lastScheduleTime %v, want %s", got, at)
	}

	// The status as the API server stores it (RFC 3339, seconds).
	raw, err := json.Marshal(w.sj.Status)
	if err != nil {
		t.Fatal(err)
	}
	w.sj.Status = batchv1alpha1.ScheduledJobStatus{}
	if err := json.Unmarshal(raw, &w.sj.Status); err != nil {
		t.Fatal(err)
	}
	if p := w.step(at.Add(3 * time.Second)); !p.run.IsZero() {
		t.Fatalf("after a status round trip: ran again at %s", p.run)
	}

	// at moved later within the same minute: its Job exists already.
	w.sj.Spec.At = "2036-03-21T13:53:58"
	if p := w.step(utc("2036-03-21T13:53:58Z")); !p.run.IsZero() {
		t.Fatalf("at moved within its minute: ran again at %s", p.run)
	}
	if len(w.created) != 1 {
		t.Errorf("%d Jobs created, want 1", len(w.created))
	}
	// at moved to another minute is another run, with another name.
	w.sj.Spec.At = "2036-03-21T13:54:30"
	if p := w.step(utc("2036-03-21T13:54:30Z")); !p.run.Equal(utc("2036-03-21T13:54:30Z")) {
		t.Fatalf("at moved to the next minute: run %s", p.run)
	}
	if len(w.jobs) != 2 || w.jobs[0].Name == w.jobs[1].Name {
		t.Errorf("Jobs %v, want two with different names", []string{w.jobs[0].Name, w.jobs[len(w.jobs)-1].Name})
	}
}

func TestOneShotFailedAndDeleted(t *testing.T) {
	at := utc("2027-05-01T10:00:00Z")
	w := &world{t: t, sj: atSJ("2027-05-01T10:00", "UTC", at.Add(-time.Hour))}
	w.step(at)
	w.jobs[0].Status.Conditions = []batchv1.JobCondition{{Type: batchv1.JobFailed, Status: corev1.ConditionTrue}}
	w.step(at.Add(time.Minute))
	if got := w.sj.Status.Phase; got != batchv1alpha1.ScheduledJobPhaseFailed {
		t.Errorf("phase %s, want Failed", got)
	}

	w = &world{t: t, sj: atSJ("2027-05-01T10:00", "UTC", at.Add(-time.Hour))}
	w.step(at)
	w.jobs = nil // deleted while running
	if p := w.step(at.Add(time.Minute)); !p.run.IsZero() {
		t.Errorf("ran again after its Job was deleted")
	}
	if got := w.sj.Status.Phase; got != batchv1alpha1.ScheduledJobPhaseFailed {
		t.Errorf("phase %s after the running Job was deleted, want Failed", got)
	}
}

// TestOneShotOutcomeOfADeletedJob: a one-shot's Job is kept by its finalizer until its
// outcome is recorded, so a Job that completed and was then deleted (ttlSecondsAfterFinished:
// 0, or while the manager was down) is read as it ended: Succeeded. A Job deleted before it
// finished never finishes: Failed. Issue 11, finding 5.
func TestOneShotOutcomeOfADeletedJob(t *testing.T) {
	at := utc("2027-05-01T10:00:00Z")
	for _, tt := range []struct {
		name     string
		complete bool
		want     batchv1alpha1.ScheduledJobPhase
	}{
		{"completed, then deleted", true, batchv1alpha1.ScheduledJobPhaseSucceeded},
		{"deleted while running", false, batchv1alpha1.ScheduledJobPhaseFailed},
	} {
		t.Run(tt.name, func(t *testing.T) {
			w := &world{t: t, sj: atSJ("2027-05-01T10:00", "UTC", at.Add(-time.Hour))}
			w.step(at)
			if tt.complete {
				complete(w.jobs[0], at.Add(10*time.Second))
			}
			w.jobs[0].DeletionTimestamp = &metav1.Time{Time: at.Add(10 * time.Second)}
			w.step(at.Add(time.Minute))
			if got := w.sj.Status.Phase; got != tt.want {
				t.Errorf("phase %s, want %s", got, tt.want)
			}
		})
	}
}

func TestOneShotMissed(t *testing.T) {
	at := utc("2027-05-01T10:00:00Z")
	tests := []struct {
		name    string
		suspend bool
		now     time.Time
		why     string
	}{
		{name: "deadline passed", now: at.Add(601 * time.Second), why: jobs.MissDeadline},
		{name: "suspended at its instant", suspend: true, now: at, why: jobs.SkipSuspended},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			w := &world{t: t, sj: atSJ("2027-05-01T10:00", "UTC", at.Add(-time.Hour))}
			w.sj.Spec.Suspend = tt.suspend
			p := w.step(tt.now)
			if !p.run.IsZero() || p.missed[tt.why] != 1 {
				t.Fatalf("run %s, missed %v; want none and 1 %s", p.run, p.missed, tt.why)
			}
			st := w.sj.Status
			if st.Phase != batchv1alpha1.ScheduledJobPhaseMissed || st.MissedRuns != 1 || !st.LastMissedTime.Time.Equal(at) {
				t.Errorf("status %+v", st)
			}
			w.sj.Spec.Suspend = false
			if p := w.step(tt.now.Add(time.Second)); !p.run.IsZero() || w.sj.Status.MissedRuns != 1 {
				t.Errorf("later: run %s, missedRuns %d", p.run, w.sj.Status.MissedRuns)
			}
		})
	}
	// Within the deadline it still runs.
	w := &world{t: t, sj: atSJ("2027-05-01T10:00", "UTC", at.Add(-time.Hour))}
	if p := w.step(at.Add(600 * time.Second)); !p.run.Equal(at) {
		t.Errorf("600 s late with a deadline of 600 s: run %s, want %s", p.run, at)
	}
}

func TestInvalidScheduleStopsWithoutRetry(t *testing.T) {
	now := utc("2027-05-01T10:00:00Z")
	utcZone, _ := timing.NormalizeZone("UTC")
	tests := []struct {
		name    string
		sj      *batchv1alpha1.ScheduledJob
		compile func(timing.JobSpec) (*timing.JobSchedule, []timing.FieldError)
	}{
		{name: "unknown zone", sj: cronSJ("* * * * *", "Mars/Olympus", now)},
		{name: "bad cron", sj: cronSJ("61 * * * *", "UTC", now)},
		{name: "TZ= prefix", sj: cronSJ("TZ= * * * * *", "UTC", now)},
		{name: "bad at", sj: atSJ("2027-02-29T10:00", "UTC", now)},
		{name: "neither at nor schedule", sj: cronSJ("", "UTC", now)},
		{name: "the engine panics", sj: cronSJ("* * * * *", "UTC", now),
			compile: func(timing.JobSpec) (*timing.JobSchedule, []timing.FieldError) { panic("index out of range") }},
		{name: "never fires", sj: cronSJ("0 0 30 2 *", "UTC", now),
			compile: func(timing.JobSpec) (*timing.JobSchedule, []timing.FieldError) {
				return &timing.JobSchedule{Zone: utcZone}, nil // a zero Cron never fires
			}},
		{name: "engine error", sj: cronSJ("* * * * *", "UTC", now),
			compile: func(timing.JobSpec) (*timing.JobSchedule, []timing.FieldError) {
				return nil, []timing.FieldError{{Field: "schedule", Detail: "broken"}}
			}},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			if tt.compile != nil {
				defer func(old func(timing.JobSpec) (*timing.JobSchedule, []timing.FieldError)) { compileJob = old }(compileJob)
				compileJob = tt.compile
			}
			p := decideAt(tt.sj, nil, nil, time.Time{}, now)
			if p.invalid == nil || !p.run.IsZero() || p.requeueAfter != 0 {
				t.Fatalf("invalid %v, run %s, requeueAfter %v; want an error, no run, no requeue", p.invalid, p.run, p.requeueAfter)
			}
			st := nextStatus(tt.sj, &p, outcome{}, nil, now)
			if c := st.Conditions[0]; c.Status != metav1.ConditionFalse || c.Reason != batchv1alpha1.ReasonInvalidSchedule {
				t.Errorf("condition %+v", c)
			}
		})
	}
}

func TestJobNamesAndLabels(t *testing.T) {
	sj := atSJ("2036-03-21T13:53", "UTC", utc("2036-03-01T00:00:00Z"))
	sj.Name = "at-sample"
	sj.Spec.JobTemplate.Labels = map[string]string{"team": "a", batchv1alpha1.LabelScheduledJob: "spoofed"}
	at := utc("2036-03-21T13:53:00Z")
	j := jobs.NewJob(&sj.Spec.JobTemplate, jobs.Run{Name: batchv1alpha1.ScheduledJobName(sj.Name, at), Namespace: "ns", Owner: sj, OwnerGVK: gvk,
		Labels:      map[string]string{batchv1alpha1.LabelScheduledJob: sj.Name},
		Annotations: map[string]string{batchv1alpha1.AnnotationScheduledTime: batchv1alpha1.FormatTime(at)}})
	if want := "at-sample-" + itoa(at.Unix()/60); j.Name != want {
		t.Errorf("name %s, want %s", j.Name, want)
	}
	if diff := cmp.Diff(map[string]string{"team": "a", batchv1alpha1.LabelScheduledJob: "at-sample"}, j.Labels); diff != "" {
		t.Errorf("labels (-want +got):\n%s", diff)
	}
	ref := metav1.GetControllerOf(j)
	if ref == nil || ref.UID != types.UID("sj-uid") || ref.Kind != "ScheduledJob" || !*ref.BlockOwnerDeletion {
		t.Errorf("controller reference %+v", ref)
	}
	if got, _ := slotOf(sj.Name, j); !got.Equal(at) {
		t.Errorf("slotOf = %s", got)
	}
	delete(j.Annotations, batchv1alpha1.AnnotationScheduledTime)
	if got, ok := slotOf(sj.Name, j); !ok || !got.Equal(at) {
		t.Errorf("slotOf without the annotation = %s, %v", got, ok)
	}
}

func TestNameOverBudgetIsAConditionNotARetry(t *testing.T) {
	long := "a-very-long-scheduled-job-name-that-is-over-the-budget-x" // 56 characters
	name := batchv1alpha1.ScheduledJobName(long, utc("2027-05-01T10:00:00Z"))
	if err := batchv1alpha1.CheckJobName(name, "ScheduledJob", long); err == nil {
		t.Fatalf("%s (%d characters) passed", name, len(name))
	}
	ok := long[:batchv1alpha1.MaxOwnerNameLength]
	if err := batchv1alpha1.CheckJobName(batchv1alpha1.ScheduledJobName(ok, utc("9999-12-31T23:59:00Z")), "ScheduledJob", ok); err != nil {
		t.Errorf("a name within the budget failed in the year 9999: %v", err)
	}
}

func fmtOrEmpty(t time.Time) string {
	if t.IsZero() {
		return ""
	}
	return batchv1alpha1.FormatTime(t)
}

func timeOr(t *metav1.Time) time.Time {
	if t == nil {
		return time.Time{}
	}
	return t.Time
}

func itoa(n int64) string { return fmtInt(n) }

// The schedule is compiled once per reconcile, by Reconcile, and every step after reads that
// (compiled, plan.sched): deciding and computing the status compile nothing. Issue 38: one
// reconcile compiled it up to seven times (the one-shot's Job name, the plan, the record's
// offset, the phase, each instant described, the events, the release).
func TestScheduleCompiledOncePerReconcile(t *testing.T) {
	calls := 0
	defer func(old func(timing.JobSpec) (*timing.JobSchedule, []timing.FieldError)) { compileJob = old }(compileJob)
	compileJob = func(s timing.JobSpec) (*timing.JobSchedule, []timing.FieldError) {
		calls++
		return timing.JobSpec.Compile(s)
	}
	for _, sj := range []*batchv1alpha1.ScheduledJob{
		cronSJ("*/5 * * * *", "Europe/Berlin", utc("2027-05-01T00:00:30Z")),
		atSJ("2027-05-01T10:00", "Europe/Berlin", utc("2027-05-01T00:00:30Z")),
	} {
		w := &world{t: t, sj: sj}
		for _, now := range []time.Time{utc("2027-05-01T07:59:00Z"), utc("2027-05-01T08:00:01Z"), utc("2027-05-01T08:00:02Z")} {
			calls = 0
			sched := compile(w.sj, w.book)
			p := decide(w.sj, sched, w.jobs, time.Time{}, now, newBudget(context.Background()))
			var out outcome
			if !p.run.IsZero() {
				j := w.job(p.run)
				w.jobs = append(w.jobs, j)
				out = outcome{job: j, created: true}
			}
			w.sj.Status = *nextStatus(w.sj, &p, out, w.jobs, now)
			_ = p.describe(now)
			if calls != 1 {
				t.Errorf("%s at %s: compiled %d times, want once", sched.s, now, calls)
			}
		}
	}
}
