package eventjob

import (
	"fmt"
	"time"

	batchv1 "k8s.io/api/batch/v1"
	"k8s.io/apimachinery/pkg/api/meta"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/types"

	batchv1alpha1 "github.com/almanac-dev/almanac/api/batch/v1alpha1"
	"github.com/almanac-dev/almanac/api/conditions"
	"github.com/almanac-dev/almanac/reconcilers/base"
	"github.com/almanac-dev/almanac/reconcilers/jobs"
)

// started is a run that has its Job.
type started struct {
	trigger trigger
	job     *batchv1.Job
	created bool // false: an earlier attempt created it
}

// skipped is a trigger that started no run, and why (a jobs.Skip* reason).
type skipped struct {
	trigger trigger
	reason  string
}

// result is what executing a plan did.
type result struct {
	started  []started
	skipped  []skipped
	replaced []*batchv1.Job
	// failReason and failMessage say why a Job could not be created (a condition reason).
	failReason, failMessage string
	// refused is the API server's refusal (base.Refused) that stopped the round: its
	// trigger is left unhandled, for the retry.
	refused error
}

// handled returns the watermark entries of everything this round handled.
func (res *result) handled(p *plan) []batchv1alpha1.HandledTrigger {
	var out []batchv1alpha1.HandledTrigger
	add := func(tr trigger) {
		out = append(out, batchv1alpha1.HandledTrigger{UID: tr.job.UID, Time: metav1.NewTime(tr.outcome.Time)})
	}
	for _, s := range res.started {
		add(s.trigger)
	}
	for _, s := range res.skipped {
		add(s.trigger)
	}
	for _, j := range p.recovered {
		if rec, ok := recordOf(j); ok {
			out = append(out, batchv1alpha1.HandledTrigger{UID: rec.UID, Time: rec.Time})
		}
	}
	return out
}

// recordOf reads the trigger record from a downstream Job's labels and annotations.
func recordOf(j *batchv1.Job) (batchv1alpha1.TriggerRecord, bool) {
	at, ok := batchv1alpha1.ParseTime(j.Annotations[batchv1alpha1.AnnotationTriggerTime])
	uid := j.Labels[batchv1alpha1.LabelTriggerUID]
	if !ok || uid == "" {
		return batchv1alpha1.TriggerRecord{}, false
	}
	return batchv1alpha1.TriggerRecord{
		JobName:   j.Annotations[batchv1alpha1.AnnotationTriggerJob],
		UID:       types.UID(uid),
		Condition: j.Annotations[batchv1alpha1.AnnotationTriggerCondition],
		Time:      metav1.NewTime(at),
	}, true
}

// currentJobs is the EventJob's downstream Jobs after executing the plan: the observed ones
// and the started ones, less the replaced ones (a run started in this round may already be
// replaced by a later one).
func currentJobs(downstream []*batchv1.Job, res *result) []*batchv1.Job {
	byName := map[string]*batchv1.Job{}
	var order []string
	put := func(j *batchv1.Job) {
		if _, ok := byName[j.Name]; !ok {
			order = append(order, j.Name)
		}
		byName[j.Name] = j
	}
	for _, j := range downstream {
		put(j)
	}
	for _, s := range res.started {
		put(s.job)
	}
	for _, j := range res.replaced {
		delete(byName, j.Name)
	}
	var out []*batchv1.Job
	for _, name := range order {
		if j, ok := byName[name]; ok {
			out = append(out, j)
		}
	}
	return out
}

// nextStatus computes the status from the old one, the plan and what executing it did.
func nextStatus(ej *batchv1alpha1.EventJob, p *plan, res *result, upstream, current []*batchv1.Job, now time.Time) *batchv1alpha1.EventJobStatus {
	st := ej.Status.DeepCopy()
	st.ObservedGeneration = ej.Generation
	if p.invalid != nil {
		setReady(st, ej.Generation, now, metav1.ConditionFalse, batchv1alpha1.ReasonInvalidTrigger, p.invalid.Error())
		conditions.SetStalled(&st.Conditions, st.Stalled(), ej.Generation, now)
		return st
	}
	st.TriggerCount += int64(len(res.started) + len(p.recovered))
	st.SkippedCount += int64(len(res.skipped))
	for _, j := range p.recovered {
		if rec, ok := recordOf(j); ok {
			st.LastTrigger = later(st.LastTrigger, rec)
		}
	}
	for _, s := range res.started {
		st.LastTrigger = later(st.LastTrigger, batchv1alpha1.TriggerRecord{
			JobName: s.trigger.job.Name, UID: s.trigger.job.UID,
			Condition: string(s.trigger.outcome.Type), Time: metav1.NewTime(s.trigger.outcome.Time),
		})
	}
	handled := res.handled(p)
	st.FanIn = nil // the record of sets belongs to spec.triggers: gone with them
	if p.fanIn != nil {
		// Every run looked at is handled, whatever became of its set: the record holds it.
		handled = p.fanIn.handled
		st.FanIn = p.fanIn.recordAfter(res, now)
	}
	wm := advance(p.watermark, handled, upstream, current)
	st.Watermark = &wm
	st.Active, st.ActiveOverflow = jobs.ActiveStatus(current)
	readyCondition(ej, st, res, now)
	conditions.SetStalled(&st.Conditions, st.Stalled(), ej.Generation, now) // kstatus: Failed while True
	return st
}

func later(old *batchv1alpha1.TriggerRecord, rec batchv1alpha1.TriggerRecord) *batchv1alpha1.TriggerRecord {
	if old != nil && (rec.Time.Before(&old.Time) || rec.Time.Equal(&old.Time) && rec.UID < old.UID) {
		return old
	}
	return &rec
}

// readyCondition sets Ready. A failure to create a Job stays on the condition until a later
// Job is created or the spec changes.
func readyCondition(ej *batchv1alpha1.EventJob, st *batchv1alpha1.EventJobStatus, res *result, now time.Time) {
	t := &ej.Spec.Trigger
	switch old := meta.FindStatusCondition(ej.Status.Conditions, batchv1alpha1.ConditionReady); {
	case res.refused != nil:
		setReady(st, ej.Generation, now, metav1.ConditionFalse, batchv1alpha1.ReasonRequestRefused,
			"A run has not started. "+base.RefusalMessage(res.refused))
	case res.failReason != "":
		setReady(st, ej.Generation, now, metav1.ConditionFalse, res.failReason, res.failMessage)
	case old != nil && old.Status == metav1.ConditionFalse && old.Reason != batchv1alpha1.ReasonInvalidTrigger &&
		len(res.started) == 0 && old.ObservedGeneration == ej.Generation:
		// Keep it.
	case ej.Spec.Suspend:
		setReady(st, ej.Generation, now, metav1.ConditionTrue, batchv1alpha1.ReasonSuspended,
			"spec.suspend is true: no Job starts, and upstream Jobs that finish meanwhile start none later")
	case ej.IsFanIn():
		setReady(st, ej.Generation, now, metav1.ConditionTrue, batchv1alpha1.ReasonWatching, "Starts a Job once "+ej.FanInCondition())
	default:
		setReady(st, ej.Generation, now, metav1.ConditionTrue, batchv1alpha1.ReasonWatching,
			fmt.Sprintf("Starts a Job when a Job %s reaches %s", describeUpstream(t), describeType(t.EffectiveType())))
	}
}

func describeUpstream(t *batchv1alpha1.Trigger) string {
	if t.Kind == batchv1alpha1.TriggerKindJob {
		return fmt.Sprintf("named %s", t.Name)
	}
	return fmt.Sprintf("of %s %s", t.Kind, t.Name)
}

func describeType(tt batchv1alpha1.TriggerType) string {
	if tt == batchv1alpha1.TriggerTypeAny {
		return "Complete or Failed"
	}
	return string(tt)
}

// setReady sets the Ready condition; its lastTransitionTime comes from the injected clock.
func setReady(st *batchv1alpha1.EventJobStatus, gen int64, now time.Time, status metav1.ConditionStatus, reason, msg string) {
	conditions.Set(&st.Conditions, metav1.Condition{Type: batchv1alpha1.ConditionReady, Status: status, Reason: reason, Message: msg}, gen, now)
}
