package scheduledjob

import (
	"context"
	"fmt"
	"time"

	batchv1 "k8s.io/api/batch/v1"
	"k8s.io/apimachinery/pkg/api/meta"

	batchv1alpha1 "github.com/almanac-dev/almanac/api/batch/v1alpha1"
	calendarv1alpha1 "github.com/almanac-dev/almanac/api/calendar/v1alpha1"
	"github.com/almanac-dev/almanac/api/timing"
	"github.com/almanac-dev/almanac/reconcilers/jobs"
)

// compileJob compiles a ScheduledJob's timing with the time engine; tests swap it to check that
// a panicking or never-firing engine becomes a condition rather than a crash or a hot loop.
var compileJob = timing.JobSpec.Compile

// compiled is a ScheduledJob's schedule as one reconcile reads it: compiled once, with the
// calendars that spec.calendars names, and read by every step after (the one-shot's Job name,
// the plan, the status, the events, the release of recorded Jobs).
type compiled struct {
	// s is the schedule; nil when err says why it cannot be evaluated.
	s *timing.JobSchedule
	// problems says what is wrong with the calendars that spec.calendars names (see
	// calendarv1alpha1.Book.Mask); such a calendar skips every slot.
	problems []string
	err      error
}

// compile evaluates spec.at or spec.schedule in spec.timeZone, shifted by spec.spread, with the
// time engine, by the rules that admission and `almanac preview` apply too (a timestamp in
// schedule is a one-shot), with the calendars that spec.calendars names, from book: the slots
// they skip do not run. A panic in the engine becomes an error, so that bad input never
// crashes the manager or makes it retry in a loop.
func compile(sj *batchv1alpha1.ScheduledJob, book *calendarv1alpha1.Book) (c compiled) {
	defer func() {
		if r := recover(); r != nil {
			c = compiled{err: fmt.Errorf("cannot be evaluated (the time engine failed: %v)", r)}
		}
	}()
	spec, problems := sj.TimingWith(book)
	s, errs := compileJob(spec)
	if len(errs) > 0 {
		return compiled{err: timing.Join("spec.", errs)}
	}
	return compiled{s: s, problems: problems}
}

// plan is what a ScheduledJob should do now: a pure function of its spec, its status (the
// record of what ran), the Jobs it controls and the time.
type plan struct {
	// sched is the schedule the plan was made with.
	sched compiled
	// run is the nominal instant of the slot to start a Job for now; zero for none.
	run time.Time
	// replace are the running Jobs to delete before starting run (concurrencyPolicy Replace).
	replace []*batchv1.Job
	// ran is the latest slot that has a Job but is not yet in status.lastScheduleTime (a Job
	// created by an attempt whose status write failed); zero for none.
	ran time.Time
	// missed counts, by reason, the slots that are now recorded as not run; lastMissed is
	// the latest of them. A long downtime of an every-minute schedule misses many slots, so
	// they are counted rather than listed.
	missed     map[string]int64
	lastMissed time.Time
	// resumed is the instant of a resume that this plan accounts for (status said
	// suspended, the spec no longer does); zero for none.
	resumed time.Time
	// next is the nominal instant of the next run; zero for none.
	next time.Time
	// requeueAfter is when to look again (next − now, or the one-shot's instant); zero for
	// never: Job events bring the reconciler back.
	requeueAfter time.Duration
	// invalid is a user error that stops all runs until the spec changes.
	invalid error
	// more is true when the slots since the watermark were more than one reconcile walks
	// (maxSlotWalk): the plan records those walked, and the next reconcile, at once, the rest.
	more bool
	// now is the run-now request to handle (batchv1alpha1.AnnotationRunNow).
	now runNow
	// skipped counts the slots that calendars skip now; lastSkipped is the latest of them,
	// and skippedReason names the calendar entries that skip it.
	skipped       int64
	lastSkipped   time.Time
	skippedReason string
	// calendarProblems says what is wrong with the calendars that spec.calendars names.
	calendarProblems []string
}

func (p *plan) addSkip(slot time.Time, reason string) {
	p.skipped++
	if !slot.Before(p.lastSkipped) {
		p.lastSkipped, p.skippedReason = slot, reason
	}
}

// maxSlotWalk is the most slots one reconcile walks since the watermark, the steps of its
// timing.Budget (one per slot): 100,000, 69 days of a schedule that fires every minute (a
// manager down that long, or a ScheduledJob suspended or held by a calendar that long). The
// walk goes on in the next reconcile, so that none takes long however long it was.
const maxSlotWalk = 100_000

// newBudget returns the budget of one reconcile's walk over the slots since the watermark.
func newBudget(ctx context.Context) *timing.Budget { return timing.NewBudget(ctx, maxSlotWalk) }

func (p *plan) addMiss(slot time.Time, reason string) {
	if p.missed == nil {
		p.missed = map[string]int64{}
	}
	p.missed[reason]++
	if slot.After(p.lastMissed) {
		p.lastMissed = slot
	}
}

func (p *plan) missedTotal() int64 {
	var n int64
	for _, c := range p.missed {
		n += c
	}
	return n
}

// slotOf returns the nominal slot a Job of ours belongs to: from its annotation, or, if
// someone removed that, from the minute in its name. A run-now Job belongs to no slot.
func slotOf(owner string, job *batchv1.Job) (time.Time, bool) {
	if batchv1alpha1.IsRunNowJob(owner, job.Annotations, job.Name) {
		return time.Time{}, false
	}
	if t, ok := batchv1alpha1.ParseTime(job.Annotations[batchv1alpha1.AnnotationScheduledTime]); ok {
		return t, true
	}
	if minute, ok := batchv1alpha1.ParseSlotMinute(owner, job.Name); ok {
		return time.Unix(minute*60, 0).UTC(), true
	}
	return time.Time{}, false
}

// isOneShotJob reports whether j is the Job of the one-shot s: its slot, from the annotation
// or, if someone removed that, from the name, is in the minute of s.Due. The Job's name holds
// the minute, so an at to the second (13:53:55) and an update of at within the same minute
// name the same Job, which is created once. It is false for a cron schedule (s nil or not a
// one-shot).
func isOneShotJob(s *timing.JobSchedule, owner string, j *batchv1.Job) bool {
	if s == nil || !s.OneShot() {
		return false
	}
	slot, ok := slotOf(owner, j)
	return ok && batchv1alpha1.SlotMinute(slot) == batchv1alpha1.SlotMinute(s.Due)
}

// accountedUntil is the watermark of the status: every slot at or before it has been run or
// counted as missed, and never runs (again).
//
// The record is written in nominal instants, shifted by spec.spread's offset at the time
// (status.spreadOffsetSeconds); with another offset now, every slot moved by the difference,
// and so does the watermark.
func accountedUntil(st *batchv1alpha1.ScheduledJobStatus, offset time.Duration) time.Time {
	var t time.Time
	for _, m := range []*time.Time{timeOf(st.LastScheduleTime), timeOf(st.LastMissedTime), timeOf(st.LastSkippedTime)} {
		if m != nil && m.After(t) {
			t = *m
		}
	}
	if t.IsZero() {
		return t
	}
	return t.Add(offset - time.Duration(st.SpreadOffsetSeconds)*time.Second)
}

// decide computes the plan for sj at now, given its schedule (compiled with the calendars it
// names), the Jobs it controls and, when status says suspended but the spec no longer does,
// the instant of the resume (batchv1alpha1.ResumedAt). The walk over the slots since the
// watermark spends budget, a step per slot.
func decide(sj *batchv1alpha1.ScheduledJob, sched compiled, owned []*batchv1.Job, resumed, now time.Time, budget *timing.Budget) plan {
	var p plan
	susp := suspension(sj, resumed, now)
	switch {
	case sched.err != nil:
		p = plan{invalid: sched.err}
	case sched.s.OneShot():
		p = decideOneShot(sj, sched.s, owned, susp, now)
	default:
		p = decideCron(sj, sched.s, owned, susp, now, budget)
	}
	if sched.err == nil && susp.resumed() {
		p.resumed = susp.until
	}
	p.sched = sched
	p.calendarProblems = sched.problems
	// A run-now request does not depend on the schedule: it is handled while the schedule
	// is invalid or suspended too.
	p.now = decideRunNow(sj, owned, &p)
	if p.now.deferred && (p.requeueAfter == 0 || p.requeueAfter > time.Second) {
		p.requeueAfter = time.Second
	}
	return p
}

// suspended says which slots fall due while a ScheduledJob is suspended: every slot when
// spec.suspend is true; when status says suspended (as the controller last saw it) and the
// spec no longer does, the slots up to the resume; none otherwise.
type suspended struct {
	all   bool
	until time.Time
}

// suspension returns the slots that count as suspended for sj. resumed is the instant of the
// resume as the API server recorded it; zero (unknown) counts as now, so that no slot that
// may have fallen due while suspended runs.
func suspension(sj *batchv1alpha1.ScheduledJob, resumed, now time.Time) suspended {
	switch {
	case sj.Spec.Suspend:
		return suspended{all: true}
	case !recordedSuspended(&sj.Status):
		return suspended{}
	case resumed.IsZero() || resumed.After(now):
		return suspended{until: now}
	}
	return suspended{until: resumed}
}

// at reports whether the slot at t falls due while suspended.
func (s suspended) at(t time.Time) bool { return s.all || !t.After(s.until) }

// resumed reports whether the ScheduledJob was resumed since the controller last wrote status.
func (s suspended) resumed() bool { return !s.all && !s.until.IsZero() }

// decideOneShot: the one slot runs at its instant, if it can start within the deadline and
// the ScheduledJob is not suspended then; otherwise it is Missed.
func decideOneShot(sj *batchv1alpha1.ScheduledJob, s *timing.JobSchedule, owned []*batchv1.Job, susp suspended, now time.Time) plan {
	var p plan
	mark := accountedUntil(&sj.Status, s.Offset)
	for _, j := range owned {
		if isOneShotJob(s, sj.Name, j) && s.Due.After(mark) {
			p.ran = s.Due
		}
	}
	switch {
	case !p.ran.IsZero() || !s.Due.After(mark):
		// It ran (or was missed) already.
	case now.Before(s.Due):
		// A one-shot that its calendars skip has no next run, but the reconciler looks at
		// its instant, to record the skip then.
		p.next, p.requeueAfter = s.NextRun(now), s.Due.Sub(now)
	case skips(s, s.Due, &p):
	case !timing.WithinDeadline(s.Due, now, sj.Spec.StartingDeadline()):
		p.addMiss(s.Due, jobs.MissDeadline)
	case susp.at(s.Due):
		p.addMiss(s.Due, jobs.SkipSuspended)
	default:
		p.run = s.Due
	}
	return p
}

// decideCron: every slot in (watermark, now] is either run (at most one: the latest, when it
// is within the deadline) or counted as missed or skipped.
//
// The reconciler does not wake at the slots that do not run: while the ScheduledJob is
// suspended (it does not wake at all), or while its calendars skip them (it wakes at the next
// slot that they let run). The slots that fell due meanwhile are counted (Suspended, or
// skipped by the calendars) when it next looks, all at once, and written with one status
// write and one event; the walk over them is bounded by budget (a step per slot), and a
// stretch longer than that is walked in parts, one reconcile after another (more). It looks
// again at the next slot that runs, when the spec changes (resuming is a spec change), a
// calendar it names or a Job changes, or the manager starts; the slots before a resume are
// counted then, because the status it reads still says Suspended, and the slots after it are
// run or missed as if it had been looking at the resume, however late it looks.
func decideCron(sj *batchv1alpha1.ScheduledJob, s *timing.JobSchedule, owned []*batchv1.Job, susp suspended, now time.Time, budget *timing.Budget) plan {
	var p plan
	mark := accountedUntil(&sj.Status, s.Offset)
	if created := sj.CreationTimestamp.UTC(); created.After(mark) {
		mark = created
	}
	// Jobs whose slots are after the watermark ran, but their status write failed.
	ran := map[int64]bool{}
	for _, j := range owned {
		if slot, ok := slotOf(sj.Name, j); ok && slot.After(mark) {
			ran[batchv1alpha1.SlotMinute(slot)] = true
			if slot.After(p.ran) {
				p.ran = slot
			}
		}
	}
	// Slots are nominal instants: the cron slots shifted by spec.spread's offset.
	latest := latestRun(s, mark, now)
	if s.Prev(now).After(mark) {
		var last time.Time
		for slot := s.Next(mark); !slot.IsZero() && !slot.After(now); slot = s.Next(slot) {
			if budget.Spend(1) != nil {
				// The rest in the next reconcile, at once: what is recorded now moves the
				// watermark to the last slot walked, and nothing past it counts yet.
				if p.ran.After(last) {
					p.ran = time.Time{}
				}
				p.more, p.requeueAfter = true, time.Nanosecond
				return p
			}
			last = slot
			switch {
			case ran[batchv1alpha1.SlotMinute(slot)]:
			case susp.at(slot):
				p.addMiss(slot, jobs.SkipSuspended)
			case skips(s, slot, &p):
			case !slot.Equal(latest):
				p.addMiss(slot, jobs.MissSuperseded)
			case !timing.WithinDeadline(slot, now, sj.Spec.StartingDeadline()):
				p.addMiss(slot, jobs.MissDeadline)
			default:
				p.run = slot
			}
		}
	}
	if !p.run.IsZero() {
		active := jobs.Active(owned)
		switch jobs.Decide(sj.Spec.ConcurrencyPolicy, len(active)) {
		case jobs.Skip:
			p.addMiss(p.run, jobs.SkipForbid)
			p.run = time.Time{}
		case jobs.ReplaceAndStart:
			p.replace = active
		}
	}
	if s.Next(now).IsZero() {
		// ParseCron rejects schedules that never fire, but the calendars can close every day
		// that a business-day form (LW, 15W, W#2) could pick: the engine says so (a change
		// of the calendars wakes the ScheduledJob). It also guards against a hot loop.
		p.invalid = fmt.Errorf("schedule: %q has no run within eight years after %s", sj.Spec.Schedule, batchv1alpha1.FormatTime(now))
		if _, err := s.NextSlot(nil, now); err != nil {
			p.invalid = fmt.Errorf("schedule: %w", err)
		}
		return p
	}
	// The next run is the next slot that the calendars do not skip, and the reconciler wakes
	// then: the slots they skip before it are counted when it does. None (a calendar that
	// does not exist holds every slot, and condition Calendars says so): it wakes when a
	// calendar, the spec or a Job changes.
	p.next = s.NextRun(now)
	if !sj.Spec.Suspend && !p.next.IsZero() {
		p.requeueAfter = p.next.Sub(now)
	}
	return p
}

// skips records the slot as skipped when the calendars skip it, and reports whether they do.
func skips(s *timing.JobSchedule, slot time.Time, p *plan) bool {
	reason, skipped := s.Skips(slot)
	if skipped {
		p.addSkip(slot, reason)
	}
	return skipped
}

// maxLatestWalk is the most skipped slots latestRun steps back over.
const maxLatestWalk = 1000

// latestRun returns the latest slot at or before now, after mark, that the calendars do not
// skip: after downtime it is the one that may still run (zero when there is none within
// maxLatestWalk slots).
func latestRun(s *timing.JobSchedule, mark, now time.Time) time.Time {
	slot := s.Prev(now)
	for range maxLatestWalk {
		if slot.IsZero() || !slot.After(mark) {
			return time.Time{}
		}
		if _, skipped := s.Skips(slot); !skipped {
			return slot
		}
		slot = s.Prev(slot.Add(-time.Nanosecond))
	}
	return time.Time{}
}

// recordedSuspended reports whether the status says the ScheduledJob was suspended when it was
// last written (its Ready condition's reason).
func recordedSuspended(st *batchv1alpha1.ScheduledJobStatus) bool {
	ready := meta.FindStatusCondition(st.Conditions, batchv1alpha1.ConditionReady)
	return ready != nil && ready.Reason == batchv1alpha1.ReasonSuspended
}
