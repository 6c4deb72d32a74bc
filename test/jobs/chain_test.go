package jobs_test

import (
	"context"
	"fmt"
	"strings"
	"sync"
	"testing"
	"time"

	batchv1 "k8s.io/api/batch/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/types"
	"k8s.io/utils/ptr"
	"sigs.k8s.io/controller-runtime/pkg/client"

	batchv1alpha1 "github.com/almanac-dev/almanac/api/batch/v1alpha1"
	"github.com/almanac-dev/almanac/reconcilers/base"
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

// countingReader counts the reads of EventJobs through the reader around the cache, by name.
type countingReader struct {
	client.Reader
	mu    sync.Mutex
	reads map[string]int
}

func (r *countingReader) Get(ctx context.Context, key client.ObjectKey, obj client.Object, opts ...client.GetOption) error {
	if _, ok := obj.(*batchv1alpha1.EventJob); ok {
		r.mu.Lock()
		r.reads[key.Name]++
		r.mu.Unlock()
	}
	return r.Reader.Get(ctx, key, obj, opts...)
}

func (r *countingReader) readsOf(name string) int {
	r.mu.Lock()
	defer r.mu.Unlock()
	return r.reads[name]
}

// An EventJob below another ("below" triggers on "above") reads its chain of triggers around
// the cache only before it starts a run: the status changes of its own Jobs (a burst of them
// here, each a reconcile) read "above" from the cache only. Issue 38: every reconcile read the
// whole chain around the cache (up to 100 GETs), its own Jobs' status changes included.
func TestChainIsReadAroundTheCacheOnlyBeforeARun(t *testing.T) {
	ns := namespace(t)
	clk := newTestClock(t, time.Now())
	counter := &countingReader{reads: map[string]int{}}
	startManagerWith(t, ns, clk, nil, nil, base.WithAPIReader(func(r client.Reader) client.Reader {
		counter.Reader = r
		return counter
	}))
	ctx := context.Background()
	cj := newCronJob(t, ns, "nightly")
	for _, ej := range []*batchv1alpha1.EventJob{
		newEJ(ns, "above", batchv1alpha1.TriggerKindCronJob, "nightly"),
		newEJ(ns, "below", batchv1alpha1.TriggerKindEventJob, "above"),
	} {
		if err := env.Client.Create(ctx, ej); err != nil {
			t.Fatal(err)
		}
	}
	// Three runs of "above" finish; "below" starts a Job for each, reading its chain around
	// the cache before it does.
	const runs = 3
	var below []string
	for i := range runs {
		up := upstreamJob(t, ns, fmt.Sprintf("nightly-%d", i), cj, "CronJob")
		finishJob(t, ns, up.Name, batchv1.JobComplete, time.Now())
		aboveJob := batchv1alpha1.EventJobName("above", up.UID)
		eventually(t, "above's Job", func() (bool, error) {
			_, err := getJob(ns, aboveJob)
			return err == nil, client.IgnoreNotFound(err)
		})
		a := finishJob(t, ns, aboveJob, batchv1.JobComplete, time.Now())
		below = append(below, batchv1alpha1.EventJobName("below", a.UID))
	}
	eventually(t, "below's Jobs running, in its status", func() (bool, error) {
		return len(getEJ(t, ns, "below").Status.Active) == runs, nil
	})
	if counter.readsOf("above") < runs {
		t.Errorf("%d reads of EventJob above around the cache for %d runs, want one before each run at least", counter.readsOf("above"), runs)
	}
	clk.JumpTo(clk.Now())
	readsBefore := counter.readsOf("above")

	// A burst of status changes of below's own Jobs: each starts, then finishes.
	for _, name := range below {
		j, err := getJob(ns, name)
		if err != nil {
			t.Fatal(err)
		}
		j.Status.StartTime = &metav1.Time{Time: time.Now()}
		j.Status.Active, j.Status.Ready = 1, ptr.To[int32](1)
		if err := env.Client.Status().Update(ctx, j); err != nil {
			t.Fatal(err)
		}
		finishJob(t, ns, name, batchv1.JobComplete, time.Now())
	}
	// Fence: below's status records that every one of them finished, which takes its
	// reconciles of their changes.
	eventually(t, "below's Jobs finished, in its status", func() (bool, error) {
		return len(getEJ(t, ns, "below").Status.Active) == 0, nil
	})
	clk.JumpTo(clk.Now())
	if n := counter.readsOf("above") - readsBefore; n != 0 {
		t.Errorf("%d reads of EventJob above around the cache across %d status changes of below's own Jobs, want none: no run started", n, 2*runs)
	}
}
