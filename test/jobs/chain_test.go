package jobs_test

import (
	"context"
	"fmt"
	"strings"
	"testing"
	"time"

	batchv1 "k8s.io/api/batch/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/types"
	"k8s.io/utils/ptr"
	"sigs.k8s.io/controller-runtime/pkg/client"

	batchv1alpha1 "github.com/almanac-dev/almanac/api/batch/v1alpha1"
)

// chainOf creates EventJobs prefix<from> … prefix<to>, each triggering on the one before it;
// prefix<1> triggers on first (an EventJob when firstKind is EventJob).
func chainOf(t *testing.T, ns, prefix string, from, to int, firstKind batchv1alpha1.TriggerKind, first string) {
	t.Helper()
	for i := from; i <= to; i++ {
		kind, upstream := batchv1alpha1.TriggerKindEventJob, fmt.Sprintf("%s%d", prefix, i-1)
		if i == 1 {
			kind, upstream = firstKind, first
		}
		if err := env.Client.Create(context.Background(), newEJ(ns, fmt.Sprintf("%s%d", prefix, i), kind, upstream)); err != nil {
			t.Fatal(err)
		}
	}
}

// finishJobOf creates a Job controlled by EventJob owner (as if it had started it) and
// finishes it: the EventJobs that trigger on owner would each start a Job.
func finishJobOf(t *testing.T, ns, owner, name string) {
	t.Helper()
	up := &batchv1.Job{ObjectMeta: metav1.ObjectMeta{Namespace: ns, Name: name, OwnerReferences: []metav1.OwnerReference{{
		APIVersion: batchv1alpha1.GroupVersion.String(), Kind: "EventJob", Name: owner, UID: getEJ(t, ns, owner).UID, Controller: ptr.To(true)}}},
		Spec: jobTemplate().Spec}
	if err := env.Client.Create(context.Background(), up); err != nil {
		t.Fatal(err)
	}
	finishJob(t, ns, up.Name, batchv1.JobComplete, time.Now())
}

// invalidTrigger waits until EventJob name says Ready=False, InvalidTrigger, with a message
// that contains each of says.
func invalidTrigger(t *testing.T, ns, name string, says ...string) {
	t.Helper()
	eventually(t, "EventJob "+name+": Ready=False InvalidTrigger saying "+strings.Join(says, ", "), func() (bool, error) {
		for _, c := range getEJ(t, ns, name).Status.Conditions {
			if c.Type == batchv1alpha1.ConditionReady && c.Status == metav1.ConditionFalse && c.Reason == batchv1alpha1.ReasonInvalidTrigger {
				for _, s := range says {
					if !strings.Contains(c.Message, s) {
						return false, nil
					}
				}
				return true, nil
			}
		}
		return false, nil
	})
}

// A ring of 101 EventJobs, one more than MaxTriggerChain, created while the webhooks were off
// (this harness has none): every EventJob on it finds the cycle, reading around the cache,
// says so (Ready=False, InvalidTrigger, an event) and starts no Job when a Job of the one
// before it finishes. Before, the walk stopped after 100 EventJobs, found no cycle, and the
// ring ran forever.
func TestEventJobRingLongerThanTheLimitStartsNoJob(t *testing.T) {
	ns := namespace(t)
	clk := newTestClock(t, time.Now())
	chainOf(t, ns, "r", 1, 101, batchv1alpha1.TriggerKindEventJob, "r101")
	startManager(t, ns, clk, nil)
	for _, name := range []string{"r1", "r50", "r101"} {
		invalidTrigger(t, ns, name, "closes a cycle", "(93 more)")
	}
	// The fence: the end of r50's Job brings a reconcile of r51, which follows it.
	clk.fence(t, "eventjob", types.NamespacedName{Namespace: ns, Name: "r51"}, func() { finishJobOf(t, ns, "r50", "r50-leftover") })
	if got := jobsIn(t, ns, client.MatchingLabels{batchv1alpha1.LabelEventJob: "r51"}); len(got) != 0 {
		t.Errorf("EventJob r51 started Job %s along the ring", got[0].Name)
	}
	// Events are recorded asynchronously (and aggregated): wait for it rather than expect it
	// within the second above.
	eventually(t, "an InvalidTrigger event on EventJob r51", func() (bool, error) {
		return eventReasons(t, ns, "r51")[batchv1alpha1.ReasonInvalidTrigger] > 0, nil
	})
}

// A chain of 100 EventJobs (e2 … e101, e2 triggering on an e1 that does not exist yet) gets an
// EventJob added upstream, e1, while the webhooks are off: e101 is now 101 from the chain's
// start. When a Job of e100 finishes, e101 starts no Job and says why; e100, 100 from the
// start, still runs.
func TestEventJobAddedUpstreamOfALongChain(t *testing.T) {
	ns := namespace(t)
	clk := newTestClock(t, time.Now())
	chainOf(t, ns, "e", 2, 101, "", "")
	startManager(t, ns, clk, nil)
	if err := env.Client.Create(context.Background(), newEJ(ns, "e1", batchv1alpha1.TriggerKindCronJob, "nightly")); err != nil {
		t.Fatal(err)
	}
	finishJobOf(t, ns, "e99", "e99-run")
	// The fence: the end of e100's Job brings a reconcile of e101, which follows it.
	clk.fence(t, "eventjob", types.NamespacedName{Namespace: ns, Name: "e101"}, func() { finishJobOf(t, ns, "e100", "e100-run") })
	invalidTrigger(t, ns, "e101", "is 101 EventJobs long, more than the 100 EventJobs that may trigger one after another",
		"so it starts no Job: trigger it, or an EventJob above it, on an object nearer the start of the chain")
	eventually(t, "EventJob e100 starts a Job for e99-run", func() (bool, error) {
		return len(jobsIn(t, ns, client.MatchingLabels{batchv1alpha1.LabelEventJob: "e100"})) == 1, nil
	})
	if got := jobsIn(t, ns, client.MatchingLabels{batchv1alpha1.LabelEventJob: "e101"}); len(got) != 0 {
		t.Errorf("EventJob e101 started Job %s, 101 from the chain's start", got[0].Name)
	}
}
