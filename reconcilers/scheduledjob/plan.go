package scheduledjob

import (
	"fmt"
	"time"

	batchv1 "k8s.io/api/batch/v1"
	"k8s.io/utils/ptr"

	batchv1alpha1 "github.com/almanac-dev/almanac/api/batch/v1alpha1"
	"github.com/almanac-dev/almanac/api/timing"
	"github.com/almanac-dev/almanac/reconcilers/jobs"
)

// parseCron is the cron parser; tests swap it to check that a panicking or never-firing
// parser becomes a condition rather than a crash or a hot loop.
var parseCron = timing.ParseCron

// schedule is a ScheduledJob's compiled timing: a one-shot instant or a cron schedule, in a
// zone.
type schedule struct {
	loc  *time.Location
	at   time.Time // the one-shot's instant, by the DST rule; zero for cron
	cron timing.Cron
}

func (s schedule) oneShot() bool { return !s.at.IsZero() }

// compile evaluates spec.at or spec.schedule in spec.timeZone with the time engine. A panic
// in a parser becomes an error, so that bad input never crashes the manager or makes it
// retry in a loop.
func compile(spec *batchv1alpha1.ScheduledJobSpec) (s schedule, err error) {
	defer func() {
		if r := recover(); r != nil {
			s, err = schedule{}, fmt.Errorf("cannot be evaluated (the parser failed: %v)", r)
		}
	}()
	zoneName := spec.TimeZone
	if zoneName == "" {
		zoneName = timing.DefaultZone
	}
	zone, err := timing.NormalizeZone(zoneName)
	if err != nil {
		return schedule{}, fmt.Errorf("timeZone: %w", err)
	}
	s.loc = zone.Location
	switch {
	case spec.At != "" && spec.Schedule != "":
		return schedule{}, fmt.Errorf("at and schedule are both set; set exactly one")
	case spec.At != "":
		local, err := timing.ParseAt(spec.At, zone.Location)
		if err != nil {
			return schedule{}, fmt.Errorf("at: %w", err)
		}
		s.at = local.In(zone.Location)
	case spec.Schedule != "":
		if s.cron, err = parseCron(spec.Schedule); err != nil {
			return schedule{}, fmt.Errorf("schedule: %w", err)
		}
	default:
		return schedule{}, fmt.Errorf("neither at nor schedule is set; set exactly one")
	}
	return s, nil
}

// plan is what a ScheduledJob should do now: a pure function of its spec, its status (the
// record of what ran), the Jobs it controls and the time.
type plan struct {
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
	// next is the nominal instant of the next run; zero for none.
	next time.Time
	// requeueAfter is when to look again (next − now, or the one-shot's instant); zero for
	// never: Job events bring the reconciler back.
	requeueAfter time.Duration
	// invalid is a user error that stops all runs until the spec changes.
	invalid error
}

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
// someone removed that, from the minute in its name.
func slotOf(owner string, job *batchv1.Job) (time.Time, bool) {
	if t, ok := jobs.ParseTime(job.Annotations[jobs.AnnotationScheduledTime]); ok {
		return t, true
	}
	if minute, ok := jobs.ParseSlotMinute(owner, job.Name); ok {
		return time.Unix(minute*60, 0).UTC(), true
	}
	return time.Time{}, false
}

// isOneShotJob reports whether j is the Job of the one-shot's slot: its slot, from the
// annotation or, if someone removed that, from the name, is in the minute of at. The Job's
// name holds the minute, so an at to the second (13:53:55) and an update of at within the same
// minute name the same Job, which is created once.
func (s schedule) isOneShotJob(owner string, j *batchv1.Job) bool {
	slot, ok := slotOf(owner, j)
	return ok && jobs.SlotMinute(slot) == jobs.SlotMinute(s.at)
}

// accountedUntil is the watermark of the status: every slot at or before it has been run or
// counted as missed, and never runs (again).
func accountedUntil(st *batchv1alpha1.ScheduledJobStatus) time.Time {
	var t time.Time
	for _, m := range []*time.Time{timeOf(st.LastScheduleTime), timeOf(st.LastMissedTime)} {
		if m != nil && m.After(t) {
			t = *m
		}
	}
	return t
}

// decide computes the plan for sj at now, given the Jobs it controls.
func decide(sj *batchv1alpha1.ScheduledJob, owned []*batchv1.Job, now time.Time) plan {
	s, err := compile(&sj.Spec)
	if err != nil {
		return plan{invalid: err}
	}
	if s.oneShot() {
		return decideOneShot(sj, s, owned, now)
	}
	return decideCron(sj, s, owned, now)
}

// decideOneShot: the one slot runs at its instant, if it can start within the deadline and
// the ScheduledJob is not suspended then; otherwise it is Missed.
func decideOneShot(sj *batchv1alpha1.ScheduledJob, s schedule, owned []*batchv1.Job, now time.Time) plan {
	var p plan
	mark := accountedUntil(&sj.Status)
	for _, j := range owned {
		if s.isOneShotJob(sj.Name, j) && s.at.After(mark) {
			p.ran = s.at
		}
	}
	switch {
	case !p.ran.IsZero() || !s.at.After(mark):
		// It ran (or was missed) already.
	case now.Before(s.at):
		p.next, p.requeueAfter = s.at, s.at.Sub(now)
	case !jobs.WithinDeadline(s.at, now, deadline(sj)):
		p.addMiss(s.at, jobs.MissDeadline)
	case sj.Spec.Suspend:
		p.addMiss(s.at, jobs.SkipSuspended)
	default:
		p.run = s.at
	}
	return p
}

// decideCron: every slot in (watermark, now] is either run (at most one: the latest, when it
// is within the deadline) or counted as missed.
func decideCron(sj *batchv1alpha1.ScheduledJob, s schedule, owned []*batchv1.Job, now time.Time) plan {
	var p plan
	mark := accountedUntil(&sj.Status)
	if created := sj.CreationTimestamp.UTC(); created.After(mark) {
		mark = created
	}
	// Jobs whose slots are after the watermark ran, but their status write failed.
	ran := map[int64]bool{}
	for _, j := range owned {
		if slot, ok := slotOf(sj.Name, j); ok && slot.After(mark) {
			ran[jobs.SlotMinute(slot)] = true
			if slot.After(p.ran) {
				p.ran = slot
			}
		}
	}
	latest := s.cron.Prev(s.loc, now)
	if latest.After(mark) {
		for slot := s.cron.Next(s.loc, mark); !slot.IsZero() && !slot.After(now); slot = s.cron.Next(s.loc, slot) {
			switch {
			case ran[jobs.SlotMinute(slot)]:
			case !slot.Equal(latest):
				p.addMiss(slot, jobs.MissSuperseded)
			case !jobs.WithinDeadline(slot, now, deadline(sj)):
				p.addMiss(slot, jobs.MissDeadline)
			case sj.Spec.Suspend:
				p.addMiss(slot, jobs.SkipSuspended)
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
	p.next = s.cron.Next(s.loc, now)
	if p.next.IsZero() {
		// ParseCron rejects schedules that never fire; this guards against a hot loop if one
		// got through anyway.
		p.invalid = fmt.Errorf("schedule: %q has no run within eight years after %s", sj.Spec.Schedule, jobs.FormatTime(now))
		return p
	}
	p.requeueAfter = p.next.Sub(now)
	return p
}

func deadline(sj *batchv1alpha1.ScheduledJob) int64 {
	return ptr.Deref(sj.Spec.StartingDeadlineSeconds, batchv1alpha1.DefaultStartingDeadlineSeconds)
}
