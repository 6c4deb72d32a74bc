package eventjob

import (
	"fmt"
	"slices"
	"strings"
	"time"

	batchv1 "k8s.io/api/batch/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/types"

	batchv1alpha1 "github.com/almanac-dev/almanac/api/batch/v1alpha1"
	"github.com/almanac-dev/almanac/reconcilers/jobs"
)

// Fan-in: an EventJob with spec.triggers starts one Job per set of upstream runs.
//
// Each upstream run (a Job of a trigger that ended after the watermark and is not handled
// yet) joins a set, in the order the runs ended: by slot, the set of its slot (a run ending
// horizonSeconds or more after its slot, or of a slot at or before closedThrough, is late and
// joins none); by window, the oldest set that began at most windowSeconds before it ended and
// has no run of its trigger yet, else a set of its own. A run of a trigger that its set
// already has, a run of a set that no longer waits (complete, failed or decided), and a run
// with no slot start nothing and are not recorded. Every run that
// was looked at is handled (the watermark), and the sets with their runs are recorded in
// status.fanIn in the same write, so a run counts once, even when its upstream Job is gone
// by the time its set completes.
//
// Then each open set is judged (judge): complete, it starts its Job (start, with the
// concurrency policy and suspend, as an upstream Job of spec.trigger does); failed, it is
// decided without a Job (counted); waiting past its reach, it expires (counted). The Job's
// name comes from the set's key, and the set is recorded Started in the status write after
// the create, before the Job's outcome finalizer is released: a set's Job is created once,
// across restarts, leader changes and deleted Jobs. A Job of a set that the record does not
// show as Started (the write after its create failed) is recovered: recorded, not created
// again.
//
// The record is bounded: at most MaxFanInSets sets, the oldest closed first (an open one
// expires, counted), and decided sets are forgotten once closedThrough passes them (their
// reach is over, so a run of theirs is late anyway).

// fanInPlan is the fan-in part of a plan: the record of the sets after this round's upstream
// runs joined them and the sets were judged, before the complete ones start.
type fanInPlan struct {
	ej     *batchv1alpha1.EventJob
	policy batchv1alpha1.FanIn
	// record is status.fanIn before the complete sets' runs (plan.triggers) start.
	record batchv1alpha1.FanInStatus
	// handled are the upstream runs this round looked at, for the watermark.
	handled []batchv1alpha1.HandledTrigger
	// failed, expired and closedEarly are the sets decided Failed, expired at the end of
	// their reach, and expired because more than MaxFanInSets were recorded, this round;
	// unpaired the upstream Jobs that have no slot (pairBy Slot): for the events.
	failed, expired, closedEarly []batchv1alpha1.FanInSet
	unpaired                     []*batchv1.Job
	// next is when the earliest waiting set expires (zero: none waits).
	next time.Time
}

// run is an upstream run: a finished Job of one of the triggers.
type run struct {
	job     *batchv1.Job
	trigger int
	outcome jobs.Outcome
}

// decideFanIn fills p for an EventJob with spec.triggers (see above), from the upstream Jobs
// (those of every trigger, finished or not) and the downstream Jobs.
func decideFanIn(p *plan, ej *batchv1alpha1.EventJob, upstream, downstream []*batchv1.Job, now time.Time) {
	fp := &fanInPlan{ej: ej, policy: ej.Spec.EffectiveFanIn()}
	p.fanIn = fp
	p.watermark = startingWatermark(ej, now)
	if st := ej.Status.FanIn; st != nil {
		fp.record.FailedSets, fp.record.ExpiredSets = st.FailedSets, st.ExpiredSets
		if wm := ej.Status.Watermark; wm != nil && wm.Trigger == p.watermark.Trigger {
			// The same triggers and pairing: the sets go on (a change of require, onFailure or
			// the horizon judges them by the new rule).
			fp.record = *st.DeepCopy()
		}
	}
	handled := handledSet(&p.watermark)
	reach := fp.policy.Reach()

	// Jobs of sets that the record does not show as Started: an earlier attempt created them
	// and then failed to write status.
	for _, j := range downstream {
		key, ok := j.Annotations[batchv1alpha1.AnnotationFanInSet]
		at, timed := batchv1alpha1.ParseTime(j.Annotations[batchv1alpha1.AnnotationTriggerTime])
		if !ok || !timed || at.Before(p.watermark.Time.Time) || !jobs.IsControlledBy(j, ej) {
			continue // not a set's Job, or one of before the record started (over)
		}
		s := fp.find(key)
		if s != nil && s.Decision != "" {
			continue
		}
		if s == nil {
			at, ok := setTime(key)
			if !ok || fp.closed(at) {
				continue
			}
			fp.record.Sets = append(fp.record.Sets, batchv1alpha1.FanInSet{Key: key, Time: metav1.NewTime(at)})
			s = &fp.record.Sets[len(fp.record.Sets)-1]
		}
		s.Decision, s.Job = batchv1alpha1.FanInStarted, j.Name
		p.recovered = append(p.recovered, j)
		for _, uid := range setUIDs(j) {
			if !handled[uid] {
				handled[uid] = true
				fp.handled = append(fp.handled, batchv1alpha1.HandledTrigger{UID: uid, Time: metav1.NewTime(at)})
			}
			// The record lists the runs that made the set, of those that still exist.
			if up := byUID(upstream, uid); up != nil && !slices.ContainsFunc(s.Members, func(m batchv1alpha1.FanInMember) bool { return m.UID == uid }) {
				if i, o := triggerOf(ej, up), jobs.OutcomeOf(up); i >= 0 && o.Finished() && !hasTrigger(s, int32(i)) {
					s.Members = append(s.Members, member(run{job: up, trigger: i, outcome: o}))
				}
			}
		}
	}

	for _, r := range unhandledRuns(ej, upstream, &p.watermark, handled) {
		fp.handled = append(fp.handled, batchv1alpha1.HandledTrigger{UID: r.job.UID, Time: metav1.NewTime(r.outcome.Time)})
		fp.join(r, reach)
	}
	fp.bound()

	// Judge the open sets, oldest first.
	fp.sortSets()
	kept := fp.record.Sets[:0]
	for _, s := range fp.record.Sets {
		if s.Decision != "" {
			kept = append(kept, s)
			continue
		}
		switch done, completing := judge(ej, &fp.policy, &s); {
		case done == batchv1alpha1.FanInStarted:
			set := s.DeepCopy()
			p.triggers = append(p.triggers, trigger{job: memberJob(ej, completing), outcome: memberOutcome(completing), set: set, suspended: ej.Spec.Suspend})
		case done == batchv1alpha1.FanInFailed:
			s.Decision = batchv1alpha1.FanInFailed
			fp.record.FailedSets++
			fp.failed = append(fp.failed, *s.DeepCopy())
		case !now.Before(s.Time.Add(reach)):
			fp.record.ExpiredSets++
			fp.expired = append(fp.expired, s)
			continue
		default:
			if at := s.Time.Add(reach); fp.next.IsZero() || at.Before(fp.next) {
				fp.next = at
			}
		}
		kept = append(kept, s)
	}
	fp.record.Sets = kept
	p.running = jobs.Active(downstream)
}

// unhandledRuns returns the upstream runs that ended at or after the watermark's time and are
// not handled, each of the first trigger it is of, in the order they ended (then by UID).
func unhandledRuns(ej *batchv1alpha1.EventJob, upstream []*batchv1.Job, wm *batchv1alpha1.TriggerWatermark, handled map[types.UID]bool) []run {
	var out []run
	seen := map[types.UID]bool{}
	for _, j := range upstream {
		o := jobs.OutcomeOf(j)
		if !o.Finished() || o.Time.Before(wm.Time.Time) || handled[j.UID] || seen[j.UID] || jobs.IsControlledBy(j, ej) {
			continue
		}
		i := triggerOf(ej, j)
		if i < 0 {
			continue
		}
		seen[j.UID] = true
		out = append(out, run{job: j, trigger: i, outcome: o})
	}
	slices.SortFunc(out, func(a, b run) int {
		if c := a.outcome.Time.Compare(b.outcome.Time); c != 0 {
			return c
		}
		return strings.Compare(string(a.job.UID), string(b.job.UID))
	})
	return out
}

// triggerOf returns the index of the first of ej's triggers that j is a run of, or -1.
func triggerOf(ej *batchv1alpha1.EventJob, j *batchv1.Job) int {
	key := batchv1alpha1.ControllerKeyOf(j)
	for i := range ej.Spec.Triggers {
		t := &ej.Spec.Triggers[i]
		if t.Kind == batchv1alpha1.TriggerKindJob {
			if t.Name == j.Name {
				return i
			}
			continue
		}
		if key == t.UpstreamKey() {
			return i
		}
	}
	return -1
}

func byUID(list []*batchv1.Job, uid types.UID) *batchv1.Job {
	for _, j := range list {
		if j.UID == uid {
			return j
		}
	}
	return nil
}

func member(r run) batchv1alpha1.FanInMember {
	return batchv1alpha1.FanInMember{Trigger: int32(r.trigger), JobName: r.job.Name, UID: r.job.UID,
		Condition: string(r.outcome.Type), Time: metav1.NewTime(r.outcome.Time)}
}

// waits reports whether a set still takes runs: it is open, and neither complete nor failed.
// So the runs that a set records are those that made its decision, whatever the reconciles
// that saw them: a run that ends after an AnyOf set's first, or after the failed run of an
// AllOf set, starts nothing and is not recorded.
func (fp *fanInPlan) waits(s *batchv1alpha1.FanInSet) bool {
	d, _ := judge(fp.ej, &fp.policy, s)
	return s.Decision == "" && d == ""
}

// join puts an upstream run into its set, or leaves it out (late, unpaired, a second run of
// its trigger in its set, or a run of a set that no longer waits).
func (fp *fanInPlan) join(r run, reach time.Duration) {
	m := member(r)
	if fp.policy.PairBy == batchv1alpha1.FanInPairByWindow {
		fp.sortSets()
		for i := range fp.record.Sets {
			s := &fp.record.Sets[i]
			if !r.outcome.Time.Before(s.Time.Time) && r.outcome.Time.Sub(s.Time.Time) <= reach && !hasTrigger(s, m.Trigger) {
				if fp.waits(s) {
					s.Members = append(s.Members, m)
				}
				return
			}
		}
		if fp.closed(r.outcome.Time) {
			return
		}
		fp.record.Sets = append(fp.record.Sets, batchv1alpha1.FanInSet{
			Key: batchv1alpha1.WindowSetKey(r.outcome.Time, r.job.UID), Time: metav1.NewTime(r.outcome.Time), Members: []batchv1alpha1.FanInMember{m}})
		return
	}
	slot, ok := batchv1alpha1.SlotOf(r.job)
	if !ok {
		fp.unpaired = append(fp.unpaired, r.job)
		return
	}
	if fp.closed(slot) || !r.outcome.Time.Before(slot.Add(reach)) {
		return // late: the set of its slot is closed
	}
	key := batchv1alpha1.SlotSetKey(slot)
	switch s := fp.find(key); {
	case s == nil:
		fp.record.Sets = append(fp.record.Sets, batchv1alpha1.FanInSet{Key: key, Time: metav1.NewTime(slot), Members: []batchv1alpha1.FanInMember{m}})
	case fp.waits(s) && !hasTrigger(s, m.Trigger):
		s.Members = append(s.Members, m)
	}
}

// bound keeps at most MaxFanInSets sets: the oldest are closed, and closedThrough moves past
// them (an open one expires, counted), so that the record never outgrows what the schema lets
// status hold.
func (fp *fanInPlan) bound() {
	if len(fp.record.Sets) <= batchv1alpha1.MaxFanInSets {
		return
	}
	fp.sortSets()
	through := fp.record.Sets[len(fp.record.Sets)-batchv1alpha1.MaxFanInSets-1].Time
	if ct := fp.record.ClosedThrough; ct == nil || through.After(ct.Time) {
		fp.record.ClosedThrough = &through
	}
	kept := fp.record.Sets[:0]
	for _, s := range fp.record.Sets {
		if s.Time.After(through.Time) {
			kept = append(kept, s)
			continue
		}
		if s.Decision == "" {
			fp.record.ExpiredSets++
			fp.closedEarly = append(fp.closedEarly, s)
		}
	}
	fp.record.Sets = kept
}

// closed reports whether a set of time at is closed: at or before closedThrough.
func (fp *fanInPlan) closed(at time.Time) bool {
	ct := fp.record.ClosedThrough
	return ct != nil && !at.After(ct.Time)
}

func (fp *fanInPlan) find(key string) *batchv1alpha1.FanInSet {
	for i := range fp.record.Sets {
		if fp.record.Sets[i].Key == key {
			return &fp.record.Sets[i]
		}
	}
	return nil
}

// sortSets orders the sets by time, then key.
func (fp *fanInPlan) sortSets() {
	slices.SortStableFunc(fp.record.Sets, func(a, b batchv1alpha1.FanInSet) int {
		if c := a.Time.Compare(b.Time.Time); c != 0 {
			return c
		}
		return strings.Compare(a.Key, b.Key)
	})
}

func hasTrigger(s *batchv1alpha1.FanInSet, trigger int32) bool {
	return slices.ContainsFunc(s.Members, func(m batchv1alpha1.FanInMember) bool { return m.Trigger == trigger })
}

// judge says whether an open set is complete (Started: its run starts, completed by the
// returned member), failed (Failed), or waits (""), by fanIn's require and onFailure. A run
// meets its trigger when it ended with the trigger's type.
func judge(ej *batchv1alpha1.EventJob, f *batchv1alpha1.FanIn, s *batchv1alpha1.FanInSet) (batchv1alpha1.FanInDecision, *batchv1alpha1.FanInMember) {
	n := len(ej.Spec.Triggers)
	var met, unmet, all []*batchv1alpha1.FanInMember
	seen := map[int32]bool{}
	for i := range s.Members {
		m := &s.Members[i]
		if int(m.Trigger) >= n || seen[m.Trigger] {
			continue
		}
		seen[m.Trigger] = true
		all = append(all, m)
		if fires(ej.Spec.Triggers[m.Trigger].EffectiveType(), memberOutcome(m)) {
			met = append(met, m)
		} else {
			unmet = append(unmet, m)
		}
	}
	byTime := func(ms []*batchv1alpha1.FanInMember) {
		slices.SortStableFunc(ms, func(a, b *batchv1alpha1.FanInMember) int {
			if c := a.Time.Compare(b.Time.Time); c != 0 {
				return c
			}
			return strings.Compare(string(a.UID), string(b.UID))
		})
	}
	byTime(met)
	byTime(all)
	run := f.OnFailure == batchv1alpha1.FanInRun
	if f.Require == batchv1alpha1.FanInAnyOf {
		switch {
		case len(met) > 0 && !run:
			return batchv1alpha1.FanInStarted, met[0]
		case len(all) > 0 && run:
			return batchv1alpha1.FanInStarted, all[0]
		case len(all) == n:
			return batchv1alpha1.FanInFailed, nil
		}
		return "", nil
	}
	switch {
	case len(unmet) > 0 && !run:
		return batchv1alpha1.FanInFailed, nil
	case len(all) == n:
		return batchv1alpha1.FanInStarted, all[len(all)-1]
	}
	return "", nil
}

func memberOutcome(m *batchv1alpha1.FanInMember) jobs.Outcome {
	return jobs.Outcome{Type: batchv1.JobConditionType(m.Condition), Time: m.Time.UTC()}
}

// memberJob stands in for the upstream Job of a member in messages and events: its upstream
// Job may be gone by the time its set completes.
func memberJob(ej *batchv1alpha1.EventJob, m *batchv1alpha1.FanInMember) *batchv1.Job {
	j := &batchv1.Job{ObjectMeta: metav1.ObjectMeta{Name: m.JobName, Namespace: ej.Namespace, UID: m.UID}}
	j.SetGroupVersionKind(batchv1.SchemeGroupVersion.WithKind("Job"))
	return j
}

// setTime reads the time of a set from its key (SlotSetKey or WindowSetKey).
func setTime(key string) (time.Time, bool) {
	at, _, _ := strings.Cut(key, "/")
	return batchv1alpha1.ParseTime(at)
}

// setUIDs returns the upstream UIDs of a set's Job (AnnotationTriggerUIDs).
func setUIDs(j *batchv1.Job) []types.UID {
	v := j.Annotations[batchv1alpha1.AnnotationTriggerUIDs]
	if v == "" {
		return nil
	}
	var out []types.UID
	for _, uid := range strings.Split(v, ",") {
		out = append(out, types.UID(uid))
	}
	return out
}

// recordAfter returns status.fanIn after executing the plan: the started sets recorded Started
// with their Job, the skipped ones Skipped; the others (refused, or waiting for a replaced
// EventJob's Job of their name) stay open for the retry. closedThrough moves up to the reach
// before now, and the decided sets at or before it are forgotten.
func (fp *fanInPlan) recordAfter(res *result, now time.Time) *batchv1alpha1.FanInStatus {
	rec := fp.record.DeepCopy()
	decide := func(tr trigger, d batchv1alpha1.FanInDecision, job string) {
		for i := range rec.Sets {
			if s := &rec.Sets[i]; tr.set != nil && s.Key == tr.set.Key {
				s.Decision, s.Job = d, job
			}
		}
	}
	for _, s := range res.started {
		decide(s.trigger, batchv1alpha1.FanInStarted, s.job.Name)
	}
	for _, s := range res.skipped {
		decide(s.trigger, batchv1alpha1.FanInSkipped, "")
	}
	through := metav1.NewTime(now.Add(-fp.policy.Reach()).UTC().Truncate(time.Second))
	if rec.ClosedThrough == nil || through.After(rec.ClosedThrough.Time) {
		rec.ClosedThrough = &through
	}
	rec.Sets = slices.DeleteFunc(rec.Sets, func(s batchv1alpha1.FanInSet) bool {
		return s.Decision != "" && !s.Time.After(rec.ClosedThrough.Time)
	})
	if len(rec.Sets) == 0 {
		rec.Sets = nil
	}
	return rec
}

// describeSet names a set in messages: "the set of slot 2027-05-01T10:00:00Z (Jobs a-1, b-1)"
// or "the set from 2027-05-01T10:00:03Z (Jobs …)".
func describeSet(s *batchv1alpha1.FanInSet) string {
	var b strings.Builder
	if strings.Contains(s.Key, "/") {
		fmt.Fprintf(&b, "the set from %s", batchv1alpha1.FormatTime(s.Time.Time))
	} else {
		fmt.Fprintf(&b, "the set of slot %s", s.Key)
	}
	if len(s.Members) > 0 {
		names := make([]string, 0, len(s.Members))
		for _, m := range sortedMembers(s) {
			names = append(names, m.JobName)
		}
		fmt.Fprintf(&b, " (upstream Jobs %s)", strings.Join(names, ", "))
	}
	return b.String()
}

// sortedMembers returns a set's members in the order of spec.triggers.
func sortedMembers(s *batchv1alpha1.FanInSet) []batchv1alpha1.FanInMember {
	out := slices.Clone(s.Members)
	slices.SortStableFunc(out, func(a, b batchv1alpha1.FanInMember) int { return int(a.Trigger) - int(b.Trigger) })
	return out
}
