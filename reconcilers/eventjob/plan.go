package eventjob

import (
	"context"
	"fmt"
	"slices"
	"sort"
	"time"

	batchv1 "k8s.io/api/batch/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/types"

	batchv1alpha1 "github.com/almanac-dev/almanac/api/batch/v1alpha1"
	"github.com/almanac-dev/almanac/reconcilers/base"
	"github.com/almanac-dev/almanac/reconcilers/jobs"
)

// retention is how far the watermark's time trails the latest handled upstream condition. An
// upstream Job whose condition is observed later than this after a newer one was handled
// would be lost; that takes a clock skew of an hour between Job controllers. A longer
// retention only keeps more UIDs in status.
const retention = time.Hour

// maxHandled bounds status.watermark.handled (the schema allows 1024). When more upstream
// Jobs finish within the retention, the time moves forward past the oldest ones.
const maxHandled = 1000

// fires reports whether an upstream outcome matches the trigger type.
func fires(tt batchv1alpha1.TriggerType, o jobs.Outcome) bool {
	switch tt {
	case batchv1alpha1.TriggerTypeAny:
		return o.Finished()
	case batchv1alpha1.TriggerTypeFailed:
		return o.Type == batchv1.JobFailed
	default:
		return o.Type == batchv1.JobComplete
	}
}

// trigger is a run to start: an upstream Job that reached the trigger condition and has not
// been handled, or (fan-in) a set of upstream runs that is complete.
type trigger struct {
	// job is the upstream Job; for a set, the run that completed it (read from the record, so
	// only its name, namespace and UID are set).
	job     *batchv1.Job
	outcome jobs.Outcome
	// suspended is true when the EventJob is suspended: the trigger is handled without a run.
	suspended bool
	// set is the complete set this run is for (a copy of its record); nil for an upstream Job
	// of spec.trigger.
	set *batchv1alpha1.FanInSet
}

// jobName returns the name of the run's Job: derived from the upstream Job's UID, or from the
// set's key.
func (tr *trigger) jobName(owner string) string {
	if tr.set != nil {
		return batchv1alpha1.FanInJobName(owner, tr.set.Key)
	}
	return batchv1alpha1.EventJobName(owner, tr.job.UID)
}

// describe names the run in messages: "upstream Job hello-1", or "the set of slot …".
func (tr *trigger) describe() string {
	if tr.set != nil {
		return describeSet(tr.set)
	}
	return "upstream Job " + tr.job.Name
}

// plan is what an EventJob should do now: a pure function of its spec and status, its
// upstream and downstream Jobs, and the time.
type plan struct {
	// watermark is the record before this round's triggers, possibly started over for a
	// changed trigger.
	watermark batchv1alpha1.TriggerWatermark
	// triggers are the unhandled upstream Jobs, ordered by condition time, then UID.
	triggers []trigger
	// recovered are downstream Jobs whose upstream Job is not in the watermark: an earlier
	// attempt created them and then failed to write status.
	recovered []*batchv1.Job
	// running are the downstream Jobs that run now: the concurrency policy of the first
	// trigger's run looks at them (see start).
	running []*batchv1.Job
	// invalid is a user error that stops all runs until the spec changes.
	invalid error
	// fanIn is the plan of an EventJob with spec.triggers: its sets; nil for spec.trigger.
	fanIn *fanInPlan
}

// decide computes the plan for ej at now, from the upstream Jobs (all Jobs the trigger
// follows, finished or not), the downstream Jobs (those ej controls) and what is wrong with
// ej's chain of EventJob triggers (batchv1alpha1.CheckTriggerChain; nil for nothing).
//
// An EventJob on a cycle starts no Job, and neither does any other EventJob on it: each
// finds the same cycle. Nor does an EventJob whose chain is longer than MaxTriggerChain (the
// EventJobs above it, within the limit, run). This is the reconciler's safety net behind
// admission, which rejects such a trigger but reads a cache, so that EventJobs created or
// changed at the same moment can close a cycle or make a chain too long anyway (or were
// created while the webhooks were off). The upstream Jobs that finish meanwhile are left
// unhandled: once the chain is fixed (by changing a trigger on it), they start their runs.
func decide(ej *batchv1alpha1.EventJob, upstream, downstream []*batchv1.Job, chain *batchv1alpha1.TriggerChainError, now time.Time) plan {
	var p plan
	if p.invalid = invalidTrigger(ej, chain); p.invalid != nil {
		return p
	}
	if ej.IsFanIn() {
		decideFanIn(&p, ej, upstream, downstream, now)
		return p
	}
	p.watermark = startingWatermark(ej, now)
	handled := handledSet(&p.watermark)
	for _, j := range downstream {
		uid := types.UID(j.Labels[batchv1alpha1.LabelTriggerUID])
		at, ok := batchv1alpha1.ParseTime(j.Annotations[batchv1alpha1.AnnotationTriggerTime])
		if uid != "" && ok && !handled[uid] && !at.Before(p.watermark.Time.Time) {
			p.recovered = append(p.recovered, j)
			handled[uid] = true
		}
	}
	tt := ej.Spec.Trigger.EffectiveType()
	for _, j := range upstream {
		o := jobs.OutcomeOf(j)
		if !fires(tt, o) || o.Time.Before(p.watermark.Time.Time) || handled[j.UID] || jobs.IsControlledBy(j, ej) {
			continue
		}
		p.triggers = append(p.triggers, trigger{job: j, outcome: o})
	}
	sort.Slice(p.triggers, func(a, b int) bool {
		ta, tb := p.triggers[a].outcome.Time, p.triggers[b].outcome.Time
		if !ta.Equal(tb) {
			return ta.Before(tb)
		}
		return p.triggers[a].job.UID < p.triggers[b].job.UID
	})
	for i := range p.triggers {
		p.triggers[i].suspended = ej.Spec.Suspend
	}
	p.running = jobs.Active(downstream)
	return p
}

// invalidTrigger returns what keeps ej from starting any Job: a trigger that names ej itself,
// a cycle, or a chain too long (chain, from batchv1alpha1.CheckTriggerChain); nil for nothing.
func invalidTrigger(ej *batchv1alpha1.EventJob, chain *batchv1alpha1.TriggerChainError) error {
	if ej.TriggersOnItself() {
		return fmt.Errorf("the trigger names this EventJob itself, which would start a run for each of its own runs; name another object")
	}
	switch {
	case chain == nil:
		return nil
	case chain.Cycle != nil:
		return fmt.Errorf("the trigger closes a cycle: %s; each Job would start the next one, forever, so no EventJob on the cycle starts a Job: "+
			"trigger one of them on an object outside the cycle", batchv1alpha1.CycleText(chain.Cycle))
	case chain.Unchecked:
		return fmt.Errorf("%s, so it starts no Job: trigger it on fewer EventJobs, or on the Jobs, CronJobs or ScheduledJobs that start them", batchv1alpha1.UncheckedText)
	}
	return fmt.Errorf("the chain of EventJob triggers from this EventJob is %s long, more than the %d EventJobs that may trigger one after another: %s; "+
		"this EventJob is more than %d from the chain's start, so it starts no Job: trigger it, or an EventJob above it, on an object nearer the start "+
		"of the chain (the Job, CronJob or ScheduledJob that starts it)",
		chain.LengthText(), batchv1alpha1.MaxTriggerChain, batchv1alpha1.ChainText(chain.Chain, chain.AtLeast), batchv1alpha1.MaxTriggerChain)
}

// startsRun reports whether the plan starts a run (or deletes Jobs to replace them): an
// upstream Job to handle while the EventJob is not suspended.
func (p *plan) startsRun() bool {
	for _, tr := range p.triggers {
		if !tr.suspended {
			return true
		}
	}
	return false
}

// actions are the API calls that starting runs makes: the reconciler's reach the API server,
// the tests' change their stand-in for it.
type actions interface {
	// replace deletes a running Job for the run of tr (concurrencyPolicy Replace).
	replace(ctx context.Context, old *batchv1.Job, tr trigger) error
	// create creates the Job named name for the run of tr.
	create(ctx context.Context, tr trigger, name string) (jobs.Creation, error)
}

// start starts the plan's runs in order, applying the concurrency policy to each with the Jobs
// that actually run at that point: the running ones, less those a Replace deleted, plus those
// this round created. A run whose Job could not be created never counts as running, so a later
// Replace deletes nothing in its name. User errors (a name over budget, a Job of that name
// that is not ours, a template the API server rejects) skip the run and become the Ready
// condition; API errors are returned for a retry, which finds the runs already started
// through their deterministic names. A request that the API server refuses (base.Refused:
// RBAC, an admission webhook or policy, a ResourceQuota) stops the round: what started before
// it is recorded, and its trigger and the later ones stay unhandled, in order, for the retry
// (result.refused).
func start(ctx context.Context, ej *batchv1alpha1.EventJob, p *plan, act actions) (*result, error) {
	res := &result{}
	running := slices.Clone(p.running)
	for _, tr := range p.triggers {
		if tr.suspended {
			res.skipped = append(res.skipped, skipped{trigger: tr, reason: jobs.SkipSuspended})
			continue
		}
		decision := jobs.Decide(ej.Spec.ConcurrencyPolicy, len(running))
		if decision == jobs.Skip {
			res.skipped = append(res.skipped, skipped{trigger: tr, reason: jobs.SkipForbid})
			continue
		}
		name := tr.jobName(ej.Name)
		if err := batchv1alpha1.CheckJobName(name, gvk.Kind, ej.Name); err != nil {
			res.fail(tr, batchv1alpha1.ReasonJobNameTooLong, jobs.SkipNameTooLong, err.Error())
			continue
		}
		if decision == jobs.ReplaceAndStart {
			for _, old := range running {
				if err := act.replace(ctx, old, tr); err != nil {
					if base.Refused(err) {
						res.refused = err
						return res, nil
					}
					return nil, err
				}
				res.replaced = append(res.replaced, old)
			}
			running = nil
		}
		c, err := act.create(ctx, tr, name)
		switch {
		case base.Refused(err):
			res.refused = err
			return res, nil
		case err != nil:
			return nil, err
		case c.Earlier != nil:
			// The Job of this name is an earlier EventJob's of this name, which ej replaced:
			// the run waits, unhandled, until that Job is gone (released, the garbage
			// collector deletes it, and its deletion brings the next reconcile).
			continue
		case c.Rejected != nil:
			res.fail(tr, batchv1alpha1.ReasonJobInvalid, jobs.SkipJobInvalid, fmt.Sprintf(
				"the run for %s did not start: %v", tr.describe(), c.Rejected))
		case c.Conflict:
			res.fail(tr, batchv1alpha1.ReasonJobConflict, jobs.SkipJobConflict, fmt.Sprintf(
				"Job %s exists and is not controlled by this EventJob; the run for %s did not start", name, tr.describe()))
		default:
			res.started = append(res.started, started{trigger: tr, job: c.Job, created: c.Created})
			if !jobs.OutcomeOf(c.Job).Finished() {
				running = append(running, c.Job)
			}
		}
	}
	return res, nil
}

// watermarkKey is the key of ej's watermark: its trigger's, or (fan-in) its triggers' and
// pairing's.
func watermarkKey(ej *batchv1alpha1.EventJob) string {
	if ej.IsFanIn() {
		return ej.FanInWatermarkKey()
	}
	return ej.Spec.Trigger.WatermarkKey()
}

// startingWatermark returns the stored watermark or, for a new EventJob, one that starts at
// its creation; for a changed trigger, one that starts now.
func startingWatermark(ej *batchv1alpha1.EventJob, now time.Time) batchv1alpha1.TriggerWatermark {
	key := watermarkKey(ej)
	switch wm := ej.Status.Watermark; {
	case wm == nil:
		return batchv1alpha1.TriggerWatermark{Trigger: key, Time: metav1.NewTime(ej.CreationTimestamp.UTC())}
	case wm.Trigger != key:
		return batchv1alpha1.TriggerWatermark{Trigger: key, Time: metav1.NewTime(now.UTC().Truncate(time.Second))}
	default:
		return *wm.DeepCopy()
	}
}

func handledSet(wm *batchv1alpha1.TriggerWatermark) map[types.UID]bool {
	out := make(map[types.UID]bool, len(wm.Handled))
	for _, h := range wm.Handled {
		out[h.UID] = true
	}
	return out
}

// advance adds the handled upstream Jobs to the watermark and compacts it: an entry is kept
// while its upstream Job or its downstream Job exists (otherwise it can neither fire again
// nor be recovered) and while it is within the retention of the newest entry; the time then
// moves up to the oldest entry it no longer needs. The result is sorted by time, then UID.
func advance(wm batchv1alpha1.TriggerWatermark, added []batchv1alpha1.HandledTrigger, upstream, downstream []*batchv1.Job) batchv1alpha1.TriggerWatermark {
	exists := map[types.UID]bool{}
	for _, j := range upstream {
		exists[j.UID] = true
	}
	for _, j := range downstream {
		if uid := j.Labels[batchv1alpha1.LabelTriggerUID]; uid != "" {
			exists[types.UID(uid)] = true
		}
		for _, uid := range setUIDs(j) {
			exists[uid] = true
		}
	}
	all := append(append([]batchv1alpha1.HandledTrigger(nil), wm.Handled...), added...)
	sort.Slice(all, func(a, b int) bool {
		if !all[a].Time.Equal(&all[b].Time) {
			return all[a].Time.Before(&all[b].Time)
		}
		return all[a].UID < all[b].UID
	})
	from := wm.Time.Time
	if n := len(all); n > 0 {
		if t := all[n-1].Time.Add(-retention).Truncate(time.Second); t.After(from) {
			from = t
		}
	}
	for {
		out := batchv1alpha1.TriggerWatermark{Trigger: wm.Trigger, Time: metav1.NewTime(from)}
		seen := map[types.UID]bool{}
		for _, h := range all {
			if exists[h.UID] && !h.Time.Time.Before(from) && !seen[h.UID] {
				out.Handled = append(out.Handled, h)
				seen[h.UID] = true
			}
		}
		if len(out.Handled) <= maxHandled {
			return out
		}
		// Too many within the retention: move the time past the oldest ones. Every upstream
		// Job visible now has been handled, so the time alone keeps them handled.
		from = out.Handled[len(out.Handled)-maxHandled].Time.Add(time.Second)
	}
}
