package next

import (
	"context"
	"errors"
	"fmt"
	"slices"
	"strings"
	"time"

	corev1 "k8s.io/api/core/v1"

	autoscalingv1alpha1 "github.com/almanac-dev/almanac/api/autoscaling/v1alpha1"
	batchv1alpha1 "github.com/almanac-dev/almanac/api/batch/v1alpha1"
	calendarv1alpha1 "github.com/almanac-dev/almanac/api/calendar/v1alpha1"
	"github.com/almanac-dev/almanac/api/scaling"
	"github.com/almanac-dev/almanac/api/timing"
	"github.com/almanac-dev/almanac/commands/kube"
)

// Entry is what happens next to one object.
type Entry struct {
	Kind, Namespace, Name string
	// Next is the instant of the next change (an autoscaler's bounds) or run (a
	// ScheduledJob's); zero when there is none.
	Next time.Time
	// Zone is the zone Next is written in: the Schedule's or ScheduledJob's; zero for UTC.
	Zone timing.Zone
	// From and To are an autoscaler's bounds before and after Next (From alone, the bounds
	// now, when nothing changes).
	From, To *timing.Bounds
	// Opens and Closes name the Schedules whose windows open and close at Next.
	Opens, Closes []string
	// What is what happens at Next, in a few words ("2-10 → 5-20", "run").
	What string
	// Reasons say why Next is what it is, or why there is none.
	Reasons []string
}

// maxBoundaries is the most window boundaries an autoscaler's next change is looked for in:
// boundaries at which its bounds stay the same (a window that opens with the bounds already
// in force) are passed over.
const maxBoundaries = 1000

// skippedShown is how many skipped windows of a Schedule, or slots of a ScheduledJob, are
// listed.
const skippedShown = 3

// autoscalerEntry finds the next change of spa's bounds after now with scaling.Compute, the
// reconciler's function, walking the boundaries of its Schedules.
func autoscalerEntry(ctx context.Context, spa *autoscalingv1alpha1.ScheduledPodAutoscaler, schedules []autoscalingv1alpha1.Schedule, book *calendarv1alpha1.Book, now time.Time) Entry {
	e := Entry{Kind: kube.ScheduledPodAutoscalers.Kind, Namespace: spa.Namespace, Name: spa.Name}
	d, err := scaling.Compute(ctx, spa, schedules, book, now)
	if err != nil {
		e.Reasons = append(e.Reasons, "cannot be computed: "+err.Error())
		return e
	}
	cur := d.Bounds
	e.From = &cur
	for _, inv := range d.Invalid {
		e.Reasons = append(e.Reasons, fmt.Sprintf("Schedule %s cannot be evaluated and is skipped: %s", inv.Name, inv.Message))
	}
	named := scaling.Named(spa, schedules, book, nil)
	var held []string
	for _, n := range named {
		if missing := n.Window.Canonical().Calendars.Missing(); len(missing) > 0 && !n.Suspended {
			held = append(held, fmt.Sprintf("Schedule %s is held by %s, which does not exist: no window of it opens until it does", n.Name, strings.Join(missing, " and ")))
		}
	}
	if d.Suspended {
		e.What = "-"
		e.Reasons = append(e.Reasons, fmt.Sprintf("suspended (spec.suspend): held at its baseline %s until resumed", boundsText(cur)))
		return e
	}
	for _, l := range d.LeftOut {
		if l.NotCompared != "" {
			e.Reasons = append(e.Reasons, fmt.Sprintf("Schedule %s is left out now (overlapPolicy Forbid): its windows were not compared with those of the other Schedules: %s", l.Name, l.NotCompared))
			continue
		}
		e.Reasons = append(e.Reasons, fmt.Sprintf("Schedule %s is left out now (overlapPolicy Forbid: its windows overlap those of Schedule %s, created earlier)", l.Name, l.Kept))
	}
	prev := d
	for i, t := 0, d.Next; i < maxBoundaries && !t.IsZero(); i++ {
		nd, err := scaling.Compute(ctx, spa, schedules, book, t)
		if err != nil {
			e.Reasons = append(e.Reasons, "cannot be computed: "+err.Error())
			return e
		}
		if nd.Bounds != cur {
			to := nd.Bounds
			e.Next, e.To = t, &to
			e.Opens, e.Closes = minus(nd.Active, prev.Active), minus(prev.Active, nd.Active)
			e.What = boundsText(cur) + " → " + boundsText(to)
			e.Zone = zoneOf(named, append(slices.Clone(e.Opens), e.Closes...))
			var why []string
			for _, name := range e.Opens {
				why = append(why, "Schedule "+name+" opens"+windowText(named, name, t))
			}
			for _, name := range e.Closes {
				why = append(why, "Schedule "+name+" closes")
			}
			if len(why) == 0 {
				why = append(why, "the Schedules in force change (overlapPolicy Forbid)")
			}
			e.Reasons = append(why, e.Reasons...)
			e.Reasons = append(e.Reasons, skippedWindows(ctx, named, now, t)...)
			e.Reasons = append(e.Reasons, held...)
			return e
		}
		prev, t = nd, nd.Next
	}
	e.What = "-"
	active := ""
	if len(d.Active) > 0 {
		active = " (Schedules open now: " + strings.Join(d.Active, ", ") + ")"
	}
	switch {
	case len(held) > 0:
		e.Reasons = append(held, e.Reasons...)
	case len(named) == 0:
		e.Reasons = append([]string{"no windows ahead: it has no Schedules"}, e.Reasons...)
	case !d.Next.IsZero():
		e.Reasons = append([]string{fmt.Sprintf("the next %d window boundaries leave its bounds at %s%s", maxBoundaries, boundsText(cur), active)}, e.Reasons...)
	case allSuspended(named):
		e.Reasons = append([]string{"no windows ahead: every Schedule of it is suspended"}, e.Reasons...)
	default:
		e.Reasons = append([]string{"no windows ahead: the windows of its Schedules have ended" + active}, e.Reasons...)
	}
	e.Reasons = append(e.Reasons, skippedWindows(ctx, named, now, now.Add(31*24*time.Hour))...)
	return e
}

func allSuspended(named []timing.Named) bool {
	for _, n := range named {
		if !n.Suspended {
			return false
		}
	}
	return true
}

// minus returns the names in a that are not in b.
func minus(a, b []string) []string {
	var out []string
	for _, n := range a {
		if !slices.Contains(b, n) {
			out = append(out, n)
		}
	}
	return out
}

// zoneOf is the zone of the first of names' Schedules (UTC when none).
func zoneOf(named []timing.Named, names []string) timing.Zone {
	for _, name := range names {
		for _, n := range named {
			if n.Name == name {
				return n.Window.Zone()
			}
		}
	}
	return timing.Zone{}
}

// windowText is " (window 2027-03-01 09:00 to 17:00 Europe/Berlin (…UTC))", the window of
// Schedule name that is open at t.
func windowText(named []timing.Named, name string, t time.Time) string {
	for _, n := range named {
		if n.Name != name {
			continue
		}
		if iv, ok := n.Window.ActiveAt(t); ok {
			return " (window " + timing.IntervalText(iv, n.Window.Zone()) + ")"
		}
	}
	return ""
}

// skippedWindows says which windows of the Schedules calendars close in [from, to), at most
// skippedShown of each. A Schedule held by a missing calendar is left out: it is said to be held.
func skippedWindows(ctx context.Context, named []timing.Named, from, to time.Time) []string {
	var out []string
	for _, n := range named {
		if n.Suspended || !n.Window.Masked() || len(n.Window.Canonical().Calendars.Missing()) > 0 {
			continue
		}
		skipped, err := n.Window.Skipped(timing.NewBudget(ctx, 10_000), from, to)
		if err != nil {
			continue
		}
		for i, sk := range skipped {
			if i == skippedShown {
				out = append(out, fmt.Sprintf("Schedule %s: %d more windows skipped", n.Name, len(skipped)-i))
				break
			}
			out = append(out, fmt.Sprintf("Schedule %s: skipped %s by %s", n.Name, timing.IntervalText(sk.Interval, n.Window.Zone()), sk.Reason))
		}
	}
	return out
}

func boundsText(b timing.Bounds) string { return fmt.Sprintf("%d-%d", b.Min, b.Max) }

// compileJob compiles a ScheduledJob's timing with the calendars of book, as the reconciler
// does; a panic in the engine is an error.
func compileJob(sj *batchv1alpha1.ScheduledJob, book *calendarv1alpha1.Book) (s *timing.JobSchedule, err error) {
	defer func() {
		if r := recover(); r != nil {
			s, err = nil, fmt.Errorf("the time engine failed on it (please report it): %v", r)
		}
	}()
	spec, _ := sj.TimingWith(book)
	s, errs := spec.Compile()
	if len(errs) > 0 {
		return nil, timing.Join("spec.", errs)
	}
	return s, nil
}

// noSlotSteps bounds the walk that looks for why a ScheduledJob has no slot: a step per day,
// and the engine looks eight years ahead.
const noSlotSteps = 8*366 + 2

// scheduledJobEntry finds sj's next run after now with the time engine (the slot that its
// calendars do not skip, timing.JobSchedule.NextRun, as the reconciler does), and says why.
func scheduledJobEntry(ctx context.Context, sj *batchv1alpha1.ScheduledJob, book *calendarv1alpha1.Book, now time.Time) Entry {
	e := Entry{Kind: kube.ScheduledJobs.Kind, Namespace: sj.Namespace, Name: sj.Name, What: "-"}
	s, err := compileJob(sj, book)
	if err != nil {
		e.Reasons = []string{"cannot be evaluated: " + err.Error()}
		return e
	}
	e.Zone = s.Zone
	if sj.Spec.Suspend {
		e.Reasons = append(e.Reasons, "suspended (spec.suspend): no Job starts until it is resumed, and the slots that fall due meanwhile do not run later")
		if next := s.NextRun(now); !next.IsZero() {
			e.Reasons = append(e.Reasons, "its next slot would be "+timing.InstantText(next, s.Zone))
		}
		return e
	}
	next := s.NextRun(now)
	if s.OneShot() && !s.Due.After(now) {
		phase := ""
		if sj.Status.Phase != "" {
			phase = fmt.Sprintf(" (phase %s)", sj.Status.Phase)
		}
		e.Reasons = append(e.Reasons, fmt.Sprintf("no run ahead: it runs once, at %s, which has passed%s", timing.InstantText(s.Due, s.Zone), phase))
		return e
	}
	if missing := s.Calendars.Missing(); len(missing) > 0 && next.IsZero() {
		e.Reasons = append(e.Reasons, fmt.Sprintf("held by %s, which does not exist: no slot runs until it does", strings.Join(missing, " and ")))
		return e
	}
	end := next
	if end.IsZero() {
		end = now.Add(366 * 24 * time.Hour)
	}
	skipped, _ := s.SkippedRuns(timing.NewBudget(ctx, 100_000), now.Add(time.Nanosecond), end)
	var skips []string
	for i, sk := range skipped {
		if i == skippedShown {
			skips = append(skips, fmt.Sprintf("%d more slots skipped", len(skipped)-i))
			break
		}
		skips = append(skips, fmt.Sprintf("skipped %s by %s", timing.InstantText(sk.Start, s.Zone), sk.Reason))
	}
	if next.IsZero() {
		none := "no run ahead"
		// A business-day form whose calendars close every business day has no slot at all;
		// the engine says why.
		if _, err := s.NextSlot(timing.NewBudget(ctx, noSlotSteps), now); errors.Is(err, timing.ErrNoSlot) {
			none += ": " + err.Error()
		}
		e.Reasons = append([]string{none}, skips...)
		return e
	}
	e.Next, e.What = next, "run"
	what := "the next slot of " + s.String()
	if s.OneShot() {
		what = "its one run, " + s.String()
	}
	e.Reasons = append(e.Reasons, what)
	e.Reasons = append(e.Reasons, skips...)
	e.Reasons = append(e.Reasons, concurrency(sj.Spec.ConcurrencyPolicy, sj.Status.Active, sj.Status.ActiveOverflow, "the slot is skipped if it still runs then")...)
	return e
}

// concurrency says what concurrencyPolicy makes of the next run while the Jobs of status.active
// run.
func concurrency(policy batchv1alpha1.ConcurrencyPolicy, active []corev1.ObjectReference, overflow int32, forbidden string) []string {
	n := len(active) + int(overflow)
	names := make([]string, 0, len(active))
	for _, a := range active {
		names = append(names, a.Name)
	}
	running := "a Job runs (" + strings.Join(names, ", ") + ")"
	if n > 1 {
		running = fmt.Sprintf("%d Jobs run (%s)", n, strings.Join(names, ", "))
	}
	switch policy.Decide(n) {
	case batchv1alpha1.SkipRun:
		return []string{"concurrencyPolicy Forbid: " + running + "; " + forbidden}
	case batchv1alpha1.ReplaceRun:
		return []string{"concurrencyPolicy Replace: " + running + "; the run deletes it first"}
	}
	return nil
}

// eventJobEntry says what ej waits for; jobs are the entries of the ScheduledJobs read, by
// namespace/name, for the next run of an upstream ScheduledJob.
func eventJobEntry(ej *batchv1alpha1.EventJob, jobs map[string]Entry, now time.Time) Entry {
	e := Entry{Kind: kube.EventJobs.Kind, Namespace: ej.Namespace, Name: ej.Name, What: "-"}
	tr := ej.Spec.Trigger
	if ej.Spec.Suspend {
		e.Reasons = append(e.Reasons, "suspended (spec.suspend): upstream Jobs that finish meanwhile start no run, now or later")
		return e
	}
	if ej.IsFanIn() {
		e.Reasons = append(e.Reasons, fanInReasons(ej, jobs, now)...)
		e.Reasons = append(e.Reasons, concurrency(ej.Spec.ConcurrencyPolicy, ej.Status.Active, ej.Status.ActiveOverflow, "a set that completes meanwhile starts no run")...)
		return e
	}
	outcome := map[batchv1alpha1.TriggerType]string{
		batchv1alpha1.TriggerTypeComplete: "completes", batchv1alpha1.TriggerTypeFailed: "fails", batchv1alpha1.TriggerTypeAny: "finishes",
	}[tr.EffectiveType()]
	switch tr.Kind {
	case batchv1alpha1.TriggerKindJob:
		if last := ej.Status.LastTrigger; last != nil && last.JobName == tr.Name {
			e.Reasons = append(e.Reasons, fmt.Sprintf("Job %s has started its run already (%s): a Job triggers once; nothing more unless a new Job %s is created", tr.Name, last.Condition, tr.Name))
			return e
		}
		e.Reasons = append(e.Reasons, fmt.Sprintf("waits until Job %s %s", tr.Name, outcome))
	default:
		e.Reasons = append(e.Reasons, fmt.Sprintf("waits until a Job of %s %s %s", tr.Kind, tr.Name, outcome))
	}
	if tr.Kind == batchv1alpha1.TriggerKindScheduledJob {
		if up, ok := jobs[ej.Namespace+"/"+tr.Name]; ok {
			if up.Next.IsZero() {
				e.Reasons = append(e.Reasons, "ScheduledJob "+tr.Name+" has no run ahead: "+strings.Join(up.Reasons, "; "))
			} else {
				e.Reasons = append(e.Reasons, fmt.Sprintf("ScheduledJob %s runs next at %s (in %s)", tr.Name, timing.InstantText(up.Next, up.Zone), humanIn(up.Next.Sub(now))))
			}
		}
	}
	e.Reasons = append(e.Reasons, concurrency(ej.Spec.ConcurrencyPolicy, ej.Status.Active, ej.Status.ActiveOverflow, "an upstream Job that finishes meanwhile starts no run")...)
	return e
}

// openSetsShown is how many open sets of a fan-in EventJob are listed.
const openSetsShown = 3

// fanInReasons says what an EventJob with spec.triggers waits for: the rule of its sets
// (batchv1alpha1.EventJob.FanInCondition, as its Ready condition says it), the open sets of
// its record (the newest first) with the runs they have and those they wait for, until when,
// and the next run of each upstream ScheduledJob.
func fanInReasons(ej *batchv1alpha1.EventJob, jobs map[string]Entry, now time.Time) []string {
	out := []string{"waits until " + ej.FanInCondition()}
	f := ej.Spec.EffectiveFanIn()
	var open []batchv1alpha1.FanInSet
	if st := ej.Status.FanIn; st != nil {
		for _, s := range st.Sets {
			if s.Decision == "" {
				open = append(open, s)
			}
		}
	}
	slices.Reverse(open)
	for i, s := range open {
		if i == openSetsShown {
			out = append(out, fmt.Sprintf("and %d more open sets", len(open)-openSetsShown))
			break
		}
		var has, waits []string
		for k, t := range ej.Spec.Triggers {
			m := slices.IndexFunc(s.Members, func(m batchv1alpha1.FanInMember) bool { return int(m.Trigger) == k })
			if m < 0 {
				waits = append(waits, fmt.Sprintf("%s %s", t.Kind, t.Name))
				continue
			}
			has = append(has, fmt.Sprintf("%s (%s)", s.Members[m].JobName, s.Members[m].Condition))
		}
		what := "the set of slot " + timing.InstantText(s.Time.Time, timing.Zone{})
		if f.PairBy == batchv1alpha1.FanInPairByWindow {
			what = "the set from " + timing.InstantText(s.Time.Time, timing.Zone{})
		}
		until := s.Time.Add(f.Reach())
		line := fmt.Sprintf("%s has %s", what, strings.Join(has, ", "))
		switch {
		case len(waits) == 0:
			line += "; it is complete, and its run has not started yet"
		case until.After(now):
			line += fmt.Sprintf("; it waits for %s until %s (in %s)", strings.Join(waits, ", "), timing.InstantText(until, timing.Zone{}), humanIn(until.Sub(now)))
		default:
			line += fmt.Sprintf("; it waited for %s until %s and expires at the next reconcile", strings.Join(waits, ", "), timing.InstantText(until, timing.Zone{}))
		}
		out = append(out, line)
	}
	if st := ej.Status.FanIn; st != nil && st.FailedSets+st.ExpiredSets > 0 {
		out = append(out, fmt.Sprintf("so far %d sets started no run because an upstream Job failed, %d because they expired", st.FailedSets, st.ExpiredSets))
	}
	for _, t := range ej.Spec.Triggers {
		if t.Kind != batchv1alpha1.TriggerKindScheduledJob {
			continue
		}
		if up, ok := jobs[ej.Namespace+"/"+t.Name]; ok {
			if up.Next.IsZero() {
				out = append(out, "ScheduledJob "+t.Name+" has no run ahead: "+strings.Join(up.Reasons, "; "))
			} else {
				out = append(out, fmt.Sprintf("ScheduledJob %s runs next at %s (in %s)", t.Name, timing.InstantText(up.Next, up.Zone), humanIn(up.Next.Sub(now))))
			}
		}
	}
	return out
}
