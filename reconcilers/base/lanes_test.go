package base

import (
	"context"
	"fmt"
	"slices"
	"sync"
	"testing"
	"time"

	"github.com/google/go-cmp/cmp"
	batchv1 "k8s.io/api/batch/v1"
	corev1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/runtime"
	"k8s.io/apimachinery/pkg/types"
	clocktesting "k8s.io/utils/clock/testing"

	"github.com/almanac-dev/almanac/api/scheme"
)

// TestLanes walks Lanes through a boundary: before it, reports go out at once; at it, while
// an urgent write is due or under way, reports are deferred and woken together when the last
// one is done; an urgent write that never comes stops holding them after maxDelay; nil Lanes
// order nothing.
func TestLanes(t *testing.T) {
	boundary := time.Date(2030, 1, 7, 9, 0, 0, 0, time.UTC)
	key := func(name string) types.NamespacedName { return types.NamespacedName{Namespace: "ns", Name: name} }
	clk := clocktesting.NewFakeClock(boundary.Add(-time.Minute))
	l := NewLanes(clk, 50*time.Millisecond)
	wake := wakes(l, "schedule")

	l.Expect("scheduledpodautoscaler", key("a"), boundary)
	l.Expect("scheduledpodautoscaler", key("b"), boundary)
	l.Expect("scheduledpodautoscaler", key("c"), boundary.Add(time.Hour))
	if !l.Defer("schedule", key("s1")).IsZero() {
		t.Fatal("a report before the boundary was deferred")
	}

	clk.SetTime(boundary)
	if l.Defer("schedule", key("s1")).IsZero() || l.Defer("schedule", key("s2")).IsZero() {
		t.Fatal("reports were not deferred while HPA writes are due")
	}
	doneA := l.Urgent("scheduledpodautoscaler", key("a"))
	doneB := l.Urgent("scheduledpodautoscaler", key("b"))
	doneA()
	doneA() // idempotent
	select {
	case key := <-wake:
		t.Fatalf("woke %s while an HPA write is under way", key.Name)
	case <-time.After(20 * time.Millisecond):
	}
	doneB()
	var woken []string
	for len(woken) < 2 {
		select {
		case key := <-wake:
			woken = append(woken, key.String())
		case <-time.After(5 * time.Second):
			t.Fatalf("woke %v after the last HPA write, want both deferred reports", woken)
		}
	}
	slices.Sort(woken)
	if diff := cmp.Diff([]string{"ns/s1", "ns/s2"}, woken); diff != "" {
		t.Errorf("woken (-want +got):\n%s", diff)
	}
	if !l.Defer("schedule", key("s3")).IsZero() {
		t.Error("a report was deferred after every HPA write of the boundary was done")
	}

	// c is due an hour later and never comes (its autoscaler was deleted): the reports wait
	// for it at most maxDelay.
	clk.SetTime(boundary.Add(time.Hour))
	if l.Defer("schedule", key("s4")).IsZero() {
		t.Fatal("a report was not deferred while an HPA write is due")
	}
	clk.SetTime(boundary.Add(time.Hour + 50*time.Millisecond))
	select {
	case key := <-wake:
		if key.Name != "s4" {
			t.Errorf("woke %s, want s4", key.Name)
		}
	case <-time.After(5 * time.Second):
		t.Fatal("the deferred report was not woken after maxDelay")
	}
	if !l.Defer("schedule", key("s5")).IsZero() {
		t.Error("an urgent write that never came still holds the reports after maxDelay")
	}

	// Forget drops what was expected; Expect with a zero instant too.
	l.Expect("scheduledpodautoscaler", key("d"), clk.Now())
	l.Forget("scheduledpodautoscaler", key("d"))
	l.Expect("scheduledjob", key("e"), clk.Now())
	l.Expect("scheduledjob", key("e"), time.Time{})
	if !l.Defer("schedule", key("s6")).IsZero() {
		t.Error("a forgotten urgent write holds the reports")
	}

	// Writes that no instant called for hold nothing back: a manager starting (nothing was
	// expected of f), or a reconcile that runs before the instant expected of g.
	cold := l.Urgent("scheduledpodautoscaler", key("f"))
	l.Expect("scheduledpodautoscaler", key("g"), clk.Now().Add(time.Minute))
	early := l.Urgent("scheduledpodautoscaler", key("g"))
	if !l.Defer("schedule", key("s7")).IsZero() {
		t.Error("a report was deferred behind writes that no instant called for")
	}
	cold()
	early()

	var none *Lanes
	none.Expect("scheduledpodautoscaler", key("a"), clk.Now())
	none.Urgent("scheduledpodautoscaler", key("a"))()
	if !none.Defer("schedule", key("s1")).IsZero() {
		t.Error("nil Lanes deferred a report")
	}
}

// wakes returns the channel on which l wakes the deferred reconciles of controller, as its
// Wake source adds them to the controller's queue.
func wakes(l *Lanes, controller string) <-chan types.NamespacedName {
	ch := make(chan types.NamespacedName, 1024)
	l.mu.Lock()
	defer l.mu.Unlock()
	l.wake[controller] = func(key types.NamespacedName) { ch <- key }
	return ch
}

// recordedEvents is an events.EventRecorder that keeps the notes it was given.
type recordedEvents struct {
	mu                 sync.Mutex
	notes              []string
	regarding, related []runtime.Object
}

func (r *recordedEvents) Eventf(regarding, related runtime.Object, _, reason, _, note string, args ...any) {
	r.mu.Lock()
	defer r.mu.Unlock()
	r.notes = append(r.notes, reason+" "+nameOf(regarding)+": "+fmt.Sprintf(note, args...))
	r.regarding, r.related = append(r.regarding, regarding), append(r.related, related)
}

// nameOf returns the name of an object or of the reference that a held event hands over.
func nameOf(obj runtime.Object) string {
	if ref, ok := obj.(*corev1.ObjectReference); ok {
		return ref.Name
	}
	return obj.(metav1.Object).GetName()
}

func (r *recordedEvents) got() []string {
	r.mu.Lock()
	defer r.mu.Unlock()
	return slices.Clone(r.notes)
}

// TestLanesHoldEvents: an event recorded while the Jobs of a slot are being created waits
// until the last of them is created and the records written after them, as it read when it
// was recorded; one recorded when nothing is urgent goes out at once; nil Lanes hold nothing.
func TestLanesHoldEvents(t *testing.T) {
	slot := time.Date(2030, 1, 7, 0, 0, 0, 0, time.UTC)
	key := func(name string) types.NamespacedName { return types.NamespacedName{Namespace: "ns", Name: name} }
	clk := clocktesting.NewFakeClock(slot.Add(-time.Minute))
	l := NewLanes(clk, time.Minute)
	rec := &recordedEvents{}
	events := l.Events(rec, scheme.Scheme)
	job := &batchv1.Job{ObjectMeta: metav1.ObjectMeta{Name: "nightly-1"}}

	events.Eventf(job, nil, "Normal", "Quiet", "Observe", "at %s", "rest")
	if got := rec.got(); !slices.Equal(got, []string{"Quiet nightly-1: at rest"}) {
		t.Fatalf("an event when nothing is urgent: recorded %q", got)
	}

	l.Expect("scheduledjob", key("a"), slot)
	l.Expect("scheduledjob", key("b"), slot)
	clk.SetTime(slot)
	doneA := l.Urgent("scheduledjob", key("a"))
	events.Eventf(job, nil, "Normal", "JobCreated", "Create", "Created Job %s", job.Name)
	job.Name = "changed-after" // the held event keeps what it said
	doneA()
	if got := rec.got(); len(got) != 1 {
		t.Fatalf("recorded %q while b's Job is due, want the event held", got)
	}
	recordA := l.Recording() // a's record is written after the Jobs
	doneB := l.Urgent("scheduledjob", key("b"))
	doneB()
	if got := rec.got(); len(got) != 1 {
		t.Fatalf("recorded %q while a's record is being written, want the event held", got)
	}
	l.WaitUnderWay(context.Background(), "scheduledjob", time.Hour) // records do not hold it
	recordA()
	recordA() // idempotent
	want := []string{"Quiet nightly-1: at rest", "JobCreated nightly-1: Created Job nightly-1"}
	if got := rec.got(); !slices.Equal(got, want) {
		t.Fatalf("after the last Job and record: recorded %q, want %q", got, want)
	}
	var nilLanes *Lanes
	nilLanes.Recording()()

	var none *Lanes
	if _, wrapped := none.Events(rec, scheme.Scheme).(heldEvents); wrapped {
		t.Error("nil Lanes wrapped the recorder")
	}
}

// TestLanesWaitUnderWay: WaitUnderWay returns at once when no urgent write is under way
// (one due but not started does not count); otherwise it waits until none is, including those
// started after it, at most maxWait, or until its context is done; and it never leaves every
// worker of its controller waiting.
func TestLanesWaitUnderWay(t *testing.T) {
	ctx := context.Background()
	slot := time.Date(2030, 1, 7, 0, 0, 0, 0, time.UTC)
	key := func(name string) types.NamespacedName { return types.NamespacedName{Namespace: "ns", Name: name} }
	clk := clocktesting.NewFakeClock(slot)
	l := NewLanes(clk, time.Hour)
	l.SetWorkers("scheduledjob", 3)
	l.SetWorkers("eventjob", 3)
	urgent := func(name string) func() {
		l.Expect("scheduledjob", key(name), slot)
		return l.Urgent("scheduledjob", key(name))
	}
	waiting := func(controller string) int {
		l.mu.Lock()
		defer l.mu.Unlock()
		return len(l.waiters[controller])
	}
	// wait calls WaitUnderWay and returns once the call waits (or returned).
	wait := func(ctx context.Context, controller string, maxWait time.Duration) <-chan struct{} {
		before := waiting(controller)
		ch := make(chan struct{})
		go func() {
			l.WaitUnderWay(ctx, controller, maxWait)
			close(ch)
		}()
		for waiting(controller) == before {
			select {
			case <-ch:
				return ch
			case <-time.After(time.Millisecond):
			}
		}
		return ch
	}
	mustReturn := func(ch <-chan struct{}, what string) {
		t.Helper()
		select {
		case <-ch:
		case <-time.After(5 * time.Second):
			t.Fatalf("WaitUnderWay did not return %s", what)
		}
	}
	mustWait := func(ch <-chan struct{}, what string) {
		t.Helper()
		select {
		case <-ch:
			t.Fatalf("WaitUnderWay returned %s", what)
		case <-time.After(20 * time.Millisecond):
		}
	}

	var nilLanes *Lanes
	nilLanes.WaitUnderWay(ctx, "scheduledjob", time.Hour)
	l.Expect("scheduledjob", key("due"), slot) // due, its reconcile not started
	mustReturn(wait(ctx, "scheduledjob", time.Hour), "when nothing is under way (one Job due, not started)")

	// Three workers: two may wait, the third call lets them all go.
	doneA := urgent("a")
	w1, w2 := wait(ctx, "scheduledjob", time.Hour), wait(ctx, "eventjob", time.Hour)
	doneB := urgent("b") // starts after them
	doneA()
	mustWait(w1, "while a Job is under way")
	mustWait(w2, "while a Job is under way")
	w3 := wait(ctx, "scheduledjob", time.Hour)
	mustWait(w3, "with a worker of its controller free")
	mustReturn(wait(ctx, "scheduledjob", time.Hour), "when every other worker of its controller waits")
	mustReturn(w1, "when every worker of its controller would wait")
	mustReturn(w3, "when every worker of its controller would wait")
	mustWait(w2, "while a Job is under way (another controller's workers let go)")
	doneB()
	mustReturn(w2, "when the last Job was done")

	// A Job that stays under way: at most maxWait (on the clock), or until the context is done.
	doneC := urgent("c")
	w := wait(ctx, "scheduledjob", 30*time.Millisecond)
	clk.Step(29 * time.Millisecond)
	mustWait(w, "before maxWait")
	clk.Step(time.Millisecond)
	mustReturn(w, "after maxWait")
	cctx, cancel := context.WithCancel(ctx)
	w4 := wait(cctx, "scheduledjob", time.Hour)
	mustWait(w4, "while a Job is under way")
	cancel()
	mustReturn(w4, "when its context was done")
	if n := waiting("scheduledjob"); n != 0 {
		t.Errorf("%d calls counted as waiting after they returned", n)
	}
	doneC()

	// A controller whose worker count was not told has one: it never waits.
	doneD := urgent("d")
	mustReturn(wait(ctx, "unknown", time.Hour), "for a controller of one worker")
	doneD()
}

// TestLanesForgetWakesReports: a report deferred for an urgent write that is then forgotten
// (its object was deleted) is woken at once, not maxDelay later.
func TestLanesForgetWakesReports(t *testing.T) {
	boundary := time.Date(2030, 1, 7, 9, 0, 0, 0, time.UTC)
	key := func(name string) types.NamespacedName { return types.NamespacedName{Namespace: "ns", Name: name} }
	l := NewLanes(clocktesting.NewFakeClock(boundary), time.Hour)
	wake := wakes(l, "schedule")
	l.Expect("scheduledpodautoscaler", key("gone"), boundary)
	if l.Defer("schedule", key("s")).IsZero() {
		t.Fatal("a report was not deferred while an HPA write is due")
	}
	l.Forget("scheduledpodautoscaler", key("gone"))
	select {
	case key := <-wake:
		if key.Name != "s" {
			t.Errorf("woke %s, want s", key.Name)
		}
	case <-time.After(5 * time.Second):
		t.Fatal("the deferred report was not woken when the write it waited for was forgotten")
	}
}

// TestLanesLostCallbacks: an urgent write whose done is never called and a record never
// marked written each hold the reports for maxDelay of the
// clock after they began, and no longer: Lanes then forgets them and wakes what they held.
func TestLanesLostCallbacks(t *testing.T) {
	const spa = "scheduledpodautoscaler"
	const maxDelay = 30 * time.Second
	boundary := time.Date(2030, 1, 7, 9, 0, 0, 0, time.UTC)
	key := func(name string) types.NamespacedName { return types.NamespacedName{Namespace: "ns", Name: name} }
	clk := clocktesting.NewFakeClock(boundary)
	l := NewLanes(clk, maxDelay)
	wake := wakes(l, "schedule")
	mustWake := func(name, what string) {
		t.Helper()
		select {
		case got := <-wake:
			if got.Name != name {
				t.Fatalf("%s: woke %s, want %s", what, got.Name, name)
			}
		case <-time.After(5 * time.Second):
			t.Fatalf("%s: %s was not woken", what, name)
		}
	}

	for _, lost := range []struct {
		what  string
		start func() // starts the hold and loses its callback
	}{
		{"an urgent write whose done never came", func() {
			l.Expect(spa, key("a"), clk.Now())
			l.Urgent(spa, key("a"))
		}},
		{"a record never marked written", func() { l.Recording() }},
	} {
		clk.Step(time.Hour)
		began := clk.Now()
		lost.start()
		if until := l.Defer("schedule", key("s")); !until.Equal(began.Add(maxDelay)) {
			t.Fatalf("%s: the report is held until %s, want maxDelay after it began", lost.what, until)
		}
		clk.Step(maxDelay - time.Millisecond)
		if l.Defer("schedule", key("s")).IsZero() {
			t.Fatalf("%s: the report went out before maxDelay", lost.what)
		}
		select {
		case got := <-wake:
			t.Fatalf("%s: woke %s before maxDelay", lost.what, got.Name)
		case <-time.After(20 * time.Millisecond):
		}
		clk.Step(time.Millisecond)
		mustWake("s", lost.what+", after maxDelay")
		if !l.Defer("schedule", key("t")).IsZero() {
			t.Fatalf("%s still holds the reports after maxDelay", lost.what)
		}
		l.mu.Lock()
		left := len(l.underWay) + len(l.recording)
		l.mu.Unlock()
		if left != 0 {
			t.Fatalf("%s: %d holds remembered after maxDelay, want none", lost.what, left)
		}
	}
	// WaitUnderWay does not wait for an urgent write that Lanes has forgotten.
	l.SetWorkers("scheduledjob", 2)
	l.Expect(spa, key("c"), clk.Now())
	l.Urgent(spa, key("c"))
	clk.Step(maxDelay)
	returned := make(chan struct{})
	go func() { l.WaitUnderWay(context.Background(), "scheduledjob", time.Hour); close(returned) }()
	select {
	case <-returned:
	case <-time.After(5 * time.Second):
		t.Fatal("WaitUnderWay waits for an urgent write under way for longer than maxDelay")
	}
}

// TestLanesSteadyWrites: two EventJobs create a Job every 100 ms of the clock for two minutes,
// and their records overlap, so Lanes is never idle and never flushes. A report deferred in
// that traffic is still held at most maxDelay after it was first deferred, however often it
// is deferred again meanwhile; Defer says until when, so that its reconcile runs again by
// then; and the events recorded meanwhile go out maxDelay after the first of them.
func TestLanesSteadyWrites(t *testing.T) {
	const maxDelay = 30 * time.Second
	start := time.Date(2030, 1, 7, 9, 0, 0, 0, time.UTC)
	clk := clocktesting.NewFakeClock(start)
	l := NewLanes(clk, maxDelay)
	rec := &recordedEvents{}
	events := l.Events(rec, scheme.Scheme)
	report := types.NamespacedName{Namespace: "ns", Name: "web"}

	var recording []func()
	var written, firstHeld time.Time
	for end := start.Add(2 * time.Minute); clk.Now().Before(end); clk.Step(100 * time.Millisecond) {
		for _, name := range []string{"upstream-a", "upstream-b"} {
			ej := types.NamespacedName{Namespace: "ns", Name: name}
			l.Expect("eventjob", ej, clk.Now())
			l.Urgent("eventjob", ej)()
			recording = append(recording, l.Recording())
		}
		for len(recording) > 2 {
			recording[0]()
			recording = recording[1:]
		}
		if clk.Now().Equal(start.Add(10 * time.Second)) {
			events.Eventf(&batchv1.Job{ObjectMeta: metav1.ObjectMeta{Name: "upstream-a-1"}}, nil, "Normal", "JobCreated", "Create", "Created Job")
		}
		// The report is retried every second until it goes out, as a reconcile that asks to
		// run again by the hold's deadline at the latest would be.
		if written.IsZero() && clk.Now().Sub(start)%time.Second == 0 {
			until := l.Defer("scheduledpodautoscaler", report)
			switch {
			case until.IsZero():
				written = clk.Now()
			case firstHeld.IsZero():
				firstHeld = clk.Now()
				fallthrough
			default:
				if want := firstHeld.Add(maxDelay); !until.Equal(want) {
					t.Fatalf("at %s the report is held until %s, want %s (maxDelay after it was first held)", clk.Now().Format(time.TimeOnly), until.Format(time.TimeOnly), want.Format(time.TimeOnly))
				}
			}
		}
	}
	if firstHeld.IsZero() {
		t.Fatal("the report was never held back: the traffic does not keep Lanes busy")
	}
	if written.IsZero() || written.After(firstHeld.Add(maxDelay)) {
		t.Errorf("the report first held at %s went out at %s, want by %s", firstHeld.Format(time.TimeOnly), written.Format(time.TimeOnly), firstHeld.Add(maxDelay).Format(time.TimeOnly))
	}
	deadline := time.Now().Add(5 * time.Second)
	for len(rec.got()) == 0 && time.Now().Before(deadline) {
		time.Sleep(time.Millisecond) // the clock's timer flushes in a goroutine
	}
	if got := rec.got(); len(got) != 1 {
		t.Errorf("events recorded under steady writes: %q, want the one held, after maxDelay", got)
	}
}

// TestLanesPartsOff: each part that the benchmark's ablation switches off behaves as if
// Lanes had no such part, while the others still hold: the reports are not deferred, the
// records neither wait nor hold anything, the events go out at once.
func TestLanesPartsOff(t *testing.T) {
	boundary := time.Date(2030, 1, 7, 9, 0, 0, 0, time.UTC)
	key := types.NamespacedName{Namespace: "ns", Name: "a"}
	busy := func(off ...LanesPart) (*Lanes, func()) {
		clk := clocktesting.NewFakeClock(boundary.Add(-time.Second))
		l := NewLanes(clk, time.Minute, off...)
		l.Expect("scheduledpodautoscaler", key, boundary)
		clk.SetTime(boundary)
		return l, l.Urgent("scheduledpodautoscaler", key)
	}
	job := &batchv1.Job{ObjectMeta: metav1.ObjectMeta{Name: "nightly-1"}}

	l, done := busy(DeferReports)
	if !l.Defer("schedule", key).IsZero() {
		t.Error("defer off: a report was deferred")
	}
	rec := &recordedEvents{}
	l.Events(rec, scheme.Scheme).Eventf(job, nil, "Normal", "JobCreated", "Create", "held")
	if len(rec.got()) != 0 {
		t.Error("defer off: the events were not held (another part)")
	}
	done()

	l, done = busy(RecordsBetween)
	done()
	recorded := l.Recording()
	if !l.Defer("schedule", key).IsZero() {
		t.Error("recording off: a record held a report back")
	}
	recorded()
	_, done = busy(RecordsBetween)
	start := time.Now()
	l.WaitUnderWay(context.Background(), "scheduledjob", time.Hour) // returns at once
	if time.Since(start) > 10*time.Second {
		t.Error("recording off: a record waited")
	}
	done()

	l, done = busy(HoldEvents)
	rec = &recordedEvents{}
	l.Events(rec, scheme.Scheme).Eventf(job, nil, "Normal", "JobCreated", "Create", "at once")
	if len(rec.got()) != 1 {
		t.Error("events off: an event was held")
	}
	if l.Defer("schedule", key).IsZero() {
		t.Error("events off: a report was not deferred (another part)")
	}
	done()
}
