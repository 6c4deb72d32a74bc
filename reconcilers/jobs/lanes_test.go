package jobs

import (
	"slices"
	"testing"
	"time"

	"github.com/google/go-cmp/cmp"
	"k8s.io/apimachinery/pkg/types"
	clocktesting "k8s.io/utils/clock/testing"
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
	wake := l.channel("schedule")

	l.Expect("scheduledpodautoscaler", key("a"), boundary)
	l.Expect("scheduledpodautoscaler", key("b"), boundary)
	l.Expect("scheduledpodautoscaler", key("c"), boundary.Add(time.Hour))
	if l.Defer("schedule", key("s1")) {
		t.Fatal("a report before the boundary was deferred")
	}

	clk.SetTime(boundary)
	if !l.Defer("schedule", key("s1")) || !l.Defer("schedule", key("s2")) {
		t.Fatal("reports were not deferred while HPA writes are due")
	}
	doneA := l.Urgent("scheduledpodautoscaler", key("a"))
	doneB := l.Urgent("scheduledpodautoscaler", key("b"))
	doneA()
	doneA() // idempotent
	select {
	case ev := <-wake:
		t.Fatalf("woke %s while an HPA write is under way", ev.Object.GetName())
	case <-time.After(20 * time.Millisecond):
	}
	doneB()
	var woken []string
	for len(woken) < 2 {
		select {
		case ev := <-wake:
			woken = append(woken, ev.Object.GetNamespace()+"/"+ev.Object.GetName())
		case <-time.After(5 * time.Second):
			t.Fatalf("woke %v after the last HPA write, want both deferred reports", woken)
		}
	}
	slices.Sort(woken)
	if diff := cmp.Diff([]string{"ns/s1", "ns/s2"}, woken); diff != "" {
		t.Errorf("woken (-want +got):\n%s", diff)
	}
	if l.Defer("schedule", key("s3")) {
		t.Error("a report was deferred after every HPA write of the boundary was done")
	}

	// c is due an hour later and never comes (its autoscaler was deleted): the reports wait
	// for it at most maxDelay.
	clk.SetTime(boundary.Add(time.Hour))
	if !l.Defer("schedule", key("s4")) {
		t.Fatal("a report was not deferred while an HPA write is due")
	}
	clk.SetTime(boundary.Add(time.Hour + 50*time.Millisecond))
	select {
	case ev := <-wake:
		if ev.Object.GetName() != "s4" {
			t.Errorf("woke %s, want s4", ev.Object.GetName())
		}
	case <-time.After(5 * time.Second):
		t.Fatal("the deferred report was not woken after maxDelay")
	}
	if l.Defer("schedule", key("s5")) {
		t.Error("an urgent write that never came still holds the reports after maxDelay")
	}

	// Forget drops what was expected; Expect with a zero instant too.
	l.Expect("scheduledpodautoscaler", key("d"), clk.Now())
	l.Forget("scheduledpodautoscaler", key("d"))
	l.Expect("scheduledjob", key("e"), clk.Now())
	l.Expect("scheduledjob", key("e"), time.Time{})
	if l.Defer("schedule", key("s6")) {
		t.Error("a forgotten urgent write holds the reports")
	}

	// Writes that no instant called for hold nothing back: a manager starting (nothing was
	// expected of f), or a reconcile that runs before the instant expected of g.
	cold := l.Urgent("scheduledpodautoscaler", key("f"))
	l.Expect("scheduledpodautoscaler", key("g"), clk.Now().Add(time.Minute))
	early := l.Urgent("scheduledpodautoscaler", key("g"))
	if l.Defer("schedule", key("s7")) {
		t.Error("a report was deferred behind writes that no instant called for")
	}
	cold()
	early()

	var none *Lanes
	none.Expect("scheduledpodautoscaler", key("a"), clk.Now())
	none.Urgent("scheduledpodautoscaler", key("a"))()
	if none.Defer("schedule", key("s1")) {
		t.Error("nil Lanes deferred a report")
	}
}
