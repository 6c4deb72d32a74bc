package sleep

import (
	"fmt"
	"strings"
	"time"

	corev1 "k8s.io/api/core/v1"
	"k8s.io/apimachinery/pkg/api/meta"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"

	calendarv1alpha1 "github.com/almanac-dev/almanac/api/calendar/v1alpha1"
	"github.com/almanac-dev/almanac/api/conditions"
	"github.com/almanac-dev/almanac/api/putback"
	sleepv1alpha1 "github.com/almanac-dev/almanac/api/sleep/v1alpha1"
	"github.com/almanac-dev/almanac/api/sleeping"
	"github.com/almanac-dev/almanac/api/timing"
	"github.com/almanac-dev/almanac/reconcilers/base"
)

// Event reasons of this reconciler (besides the condition reasons of the API package).
const (
	// EventPhase: the sleep started, its wake started, or its wake ended.
	EventPhase = "Phase"
	// EventPutBack (Warning): another field manager woke a workload during its sleep, and
	// almanac put it back to sleep; the note names the manager and the field.
	EventPutBack = "PutBack"
	// EventContested (Warning): almanac stopped putting a workload back (condition Contested).
	EventContested = sleepv1alpha1.ConditionContested
)

// maxMessage keeps condition messages well below the API's limit of 32768 bytes.
const maxMessage = 4096

// Bounds of what status keeps.
const (
	maxMeasuredWakes = 10
	maxContested     = 16
)

// nextStatus returns the status that describes what this reconcile found and did, from the
// status it read (so that transition times, the wake under way, the measured wakes and the
// savings carry on).
func nextStatus(h *holder, plan *sleeping.Plan, st sleeping.State, lead sleepv1alpha1.LeadStatus, d sleeping.Decision, outcomes []outcome, rep report, now time.Time) sleepv1alpha1.SleepStatus {
	gen := h.obj.GetGeneration()
	out := *h.status.DeepCopy()
	out.ObservedGeneration = gen
	out.NextTransitionTime = timeOrNil(st.Next)
	out.WakeTime = timeOrNil(st.WakeAt)
	out.Lead = &lead
	out.Namespaces = int32(rep.namespaces)

	counts := d.Counts
	contested := d.Contested
	var woken, wokenByTime int
	var wokenPods, wokenCPU, wokenMem int64
	var notes []string
	for _, o := range outcomes {
		if o.err != nil || o.skipped {
			continue
		}
		switch o.step.Action {
		case sleeping.ActWake:
			woken++
			if o.step.ByTime {
				wokenByTime++
			}
			pods := int64(o.step.Pods)
			if o.step.Record != nil && o.step.Record.Replicas != nil {
				pods = int64(*o.step.Record.Replicas)
			}
			if o.step.W.Handling == sleepv1alpha1.HandleReplicas || o.step.W.Handling == sleepv1alpha1.HandleScale {
				wokenPods += pods
				wokenCPU += pods * o.step.W.PodCPUMillicores
				wokenMem += pods * o.step.W.PodMemoryMebibytes
			}
		case sleeping.ActResleep:
			if o.contested != nil {
				counts.Contested++
				if len(contested) < maxContested {
					contested = append(contested, sleepv1alpha1.ContestedWorkload{Namespace: o.step.W.Namespace, Kind: o.step.W.GVK.Kind, Name: o.step.W.Name,
						Manager: o.contested.Manager, Field: o.contested.Field})
				}
			}
		}
	}
	counts.Asleep -= int32(woken)
	counts.Awake += int32(woken)
	out.Workloads = counts
	out.Contested = contested

	wakeProgress(&out, plan.Suspend, st, d, wokenByTime, rep.wakeTime, now)
	if len(out.Wakes) != len(h.status.Wakes) {
		lead = plan.LeadFrom(out.Wakes) // what the next wake starts early by
		out.Lead = &lead
	}

	account(&out.Savings, d.AsleepPods-wokenPods, d.AsleepCPUMillicores-wokenCPU, d.AsleepMemoryMebibytes-wokenMem, now)

	switch {
	case plan.Suspend && len(rep.invalid) == 0:
		out.Phase = sleepv1alpha1.PhaseSuspended
	case st.Asleep:
		out.Phase = sleepv1alpha1.PhaseAsleep
	case out.Wake != nil || st.InLead:
		out.Phase = sleepv1alpha1.PhaseWaking
	default:
		out.Phase = sleepv1alpha1.PhaseAwake
	}

	notes = append(notes, d.Notes...)
	for _, k := range rep.notServed {
		notes = append(notes, "not served by the cluster, not readable by almanac, or without a scale subresource, so nothing of it sleeps: "+k)
	}
	switch {
	case d.TimedOut && d.WakeDone:
		notes = append(notes, fmt.Sprintf("the last wake ended without these Ready after %s, and was not measured: %s", plan.TierTimeout, strings.Join(d.Waiting, ", ")))
	case d.TimedOut:
		notes = append(notes, fmt.Sprintf("%s woke although these were not Ready after %s: %s", plan.TierName(d.Tier), plan.TierTimeout, strings.Join(d.Waiting, ", ")))
	}
	conditions.Set(&out.Conditions, readyCondition(plan, st, lead, out, d, outcomes, rep, notes), gen, now)
	if len(contested) > 0 {
		conditions.Set(&out.Conditions, contestedCondition(contested[0], int(counts.Contested)), gen, now)
	} else {
		meta.RemoveStatusCondition(&out.Conditions, sleepv1alpha1.ConditionContested)
	}
	if c, ok := calendarv1alpha1.Condition(h.spec.Calendars, rep.calendars); ok {
		conditions.Set(&out.Conditions, c, gen, now)
	} else {
		meta.RemoveStatusCondition(&out.Conditions, calendarv1alpha1.ConditionCalendars)
	}
	conditions.SetStalled(&out.Conditions, out.Stalled(), gen, now)
	return out
}

// account adds to the savings what was asleep since they were last accounted, and, when what
// is asleep changed, starts accounting the new amounts from now; a sleep that holds nothing
// any more is over: its savings become last's.
func account(s *sleepv1alpha1.Savings, pods, cpu, mem int64, now time.Time) {
	if pods == s.AsleepPods && cpu == s.AsleepCPUMillicores && mem == s.AsleepMemoryMebibytes {
		return
	}
	if s.AccountedAt != nil {
		secs := int64(now.Sub(s.AccountedAt.Time) / time.Second)
		add := sleepv1alpha1.Reclaimed{PodSeconds: s.AsleepPods * secs, CPUMillicoreSeconds: s.AsleepCPUMillicores * secs, MemoryMebibyteSeconds: s.AsleepMemoryMebibytes * secs}
		s.Current = sum(s.Current, add)
		s.Total = sum(s.Total, add)
	}
	s.AsleepPods, s.AsleepCPUMillicores, s.AsleepMemoryMebibytes = max(pods, 0), max(cpu, 0), max(mem, 0)
	s.AccountedAt = timeOrNil(now)
	if s.AsleepPods == 0 && s.AsleepCPUMillicores == 0 && s.AsleepMemoryMebibytes == 0 {
		s.AccountedAt = nil
		if s.Current != (sleepv1alpha1.Reclaimed{}) {
			s.Last, s.Current = s.Current, sleepv1alpha1.Reclaimed{}
		}
	}
}

func sum(a, b sleepv1alpha1.Reclaimed) sleepv1alpha1.Reclaimed {
	return sleepv1alpha1.Reclaimed{PodSeconds: a.PodSeconds + b.PodSeconds, CPUMillicoreSeconds: a.CPUMillicoreSeconds + b.CPUMillicoreSeconds,
		MemoryMebibyteSeconds: a.MemoryMebibyteSeconds + b.MemoryMebibyteSeconds}
}

func timeOrNil(t time.Time) *metav1.Time {
	if t.IsZero() {
		return nil
	}
	return new(metav1.NewTime(t.UTC()))
}

// readyCondition says what the sleep did, or why it cannot.
func readyCondition(plan *sleeping.Plan, st sleeping.State, lead sleepv1alpha1.LeadStatus, status sleepv1alpha1.SleepStatus, d sleeping.Decision,
	outcomes []outcome, rep report, notes []string) metav1.Condition {
	c := metav1.Condition{Type: sleepv1alpha1.ConditionReady, Status: metav1.ConditionTrue}
	if failed := firstFailure(outcomes); failed != nil && base.Refused(failed) {
		c.Status, c.Reason, c.Message = metav1.ConditionFalse, sleepv1alpha1.ReasonRequestRefused, base.RefusalMessage(failed)
		return c
	}
	switch {
	case len(rep.invalid) > 0:
		c.Status, c.Reason = metav1.ConditionFalse, sleepv1alpha1.ReasonInvalidSpec
		c.Message = "the spec cannot be evaluated, so nothing is kept asleep: " + strings.Join(rep.invalid, "; ")
	case len(d.Unreadable) > 0:
		c.Status, c.Reason = metav1.ConditionFalse, sleepv1alpha1.ReasonRecordUnreadable
		c.Message = strings.Join(d.Unreadable, "; ")
	case status.Phase == sleepv1alpha1.PhaseSuspended:
		c.Reason, c.Message = sleepv1alpha1.ReasonSuspended, fmt.Sprintf("suspended: every workload it held is awake (%s)", countsText(status.Workloads))
	case status.Phase == sleepv1alpha1.PhaseAsleep:
		c.Reason = sleepv1alpha1.ReasonAsleep
		c.Message = fmt.Sprintf("asleep: %s", countsText(status.Workloads))
		if !st.WakeAt.IsZero() {
			c.Message += fmt.Sprintf("; wakes by %s, the wake starting %s early (%s)", st.WakeAt.UTC().Format(time.RFC3339), lead.Duration.Duration, strings.ToLower(lead.Source))
		}
	case status.Phase == sleepv1alpha1.PhaseWaking:
		c.Reason = sleepv1alpha1.ReasonWaking
		c.Message = fmt.Sprintf("waking: %s", countsText(status.Workloads))
		if d.Tier >= 0 {
			c.Message += "; now " + plan.TierName(d.Tier)
		}
		if len(d.Waiting) > 0 {
			c.Message += "; waiting for Ready: " + strings.Join(d.Waiting, ", ")
		}
	default:
		c.Reason = sleepv1alpha1.ReasonAwake
		c.Message = fmt.Sprintf("awake: %s", countsText(status.Workloads))
		if !st.Next.IsZero() {
			c.Message += "; sleeps next at " + st.Next.UTC().Format(time.RFC3339)
		}
	}
	if len(notes) > 0 {
		c.Message += ". Note: " + strings.Join(notes, "; ")
	}
	if len(c.Message) > maxMessage {
		c.Message = c.Message[:maxMessage-len(" … (truncated)")] + " … (truncated)"
	}
	return c
}

func countsText(c sleepv1alpha1.WorkloadCounts) string {
	parts := []string{fmt.Sprintf("%d asleep", c.Asleep), fmt.Sprintf("%d awake", c.Awake)}
	for _, p := range []struct {
		n    int32
		what string
	}{{c.OptedOut, "opted out"}, {c.Contested, "contested"}, {c.HeldElsewhere, "held by another sleep"}, {c.NotSlept, "left awake"}} {
		if p.n > 0 {
			parts = append(parts, fmt.Sprintf("%d %s", p.n, p.what))
		}
	}
	return strings.Join(parts, ", ") + fmt.Sprintf(" of %d selected", c.Selected)
}

// contestedCondition names who keeps a workload awake, and what to configure.
func contestedCondition(first sleepv1alpha1.ContestedWorkload, n int) metav1.Condition {
	who := "another field manager"
	if first.Manager != "" {
		who = fmt.Sprintf("field manager %q", first.Manager)
	}
	more := ""
	if n > 1 {
		more = fmt.Sprintf(" (and %d more workloads: status.contested lists them)", n-1)
	}
	pointer := "/" + strings.ReplaceAll(first.Field, ".", "/")
	return metav1.Condition{Type: sleepv1alpha1.ConditionContested, Status: metav1.ConditionTrue, Reason: sleepv1alpha1.ReasonFieldManagerConflict,
		Message: fmt.Sprintf("%s keeps putting back %s of %s %s/%s during its sleep (more than %d times within %s)%s, and almanac has stopped putting it to sleep: "+
			"stop that manager from writing the field while almanac owns it (Argo CD: ignoreDifferences with managedFieldsManagers: [almanac], or jsonPointers: [%s]; "+
			"Flux: driftIgnoreRules of the Kustomization, or driftDetection.ignore of the HelmRelease, with paths: [%s]; see docs/gitops.md#sleep). "+
			"almanac tries again when this sleep's spec changes or its next sleep starts",
			who, first.Field, first.Kind, first.Namespace, first.Name, putback.Max, putback.Window, more, pointer, pointer)}
}

// reported records the events and metrics of a status that was written: what changed between
// the status read and this one, and the put-backs of this reconcile.
func (r *Reconciler) reported(h *holder, next sleepv1alpha1.SleepStatus, outcomes []outcome) {
	old := h.status
	if old.Phase != next.Phase {
		r.Recorder.Eventf(h.obj, nil, corev1.EventTypeNormal, EventPhase, string(next.Phase), "%s: %s", next.Phase, countsText(next.Workloads))
	}
	for _, o := range outcomes {
		if o.err != nil || o.step.Action != sleeping.ActResleep || o.skipped {
			continue
		}
		w := o.step.W
		if o.contested != nil {
			r.Recorder.Eventf(h.obj, nil, corev1.EventTypeWarning, EventContested, "PutBack", "%s keeps waking %s (%s): almanac stopped putting it back to sleep",
				managerText(o.contested.Manager), w.Ref(), o.contested.Field)
			continue
		}
		if len(o.changedBy) > 0 {
			putBacksTotal.Inc()
			r.Recorder.Eventf(h.obj, nil, corev1.EventTypeWarning, EventPutBack, "PutBack", "%s woke %s during its sleep (%s); almanac put it back to sleep, and it wakes to that value. After %d such changes within %s almanac stops and sets the Contested condition",
				managerText(strings.Join(o.changedBy, ", ")), w.Ref(), strings.Join(sleeping.Field(w.Handling), "."), putback.Max, putback.Window)
		}
	}
	observe(h, old, next)
}

func managerText(m string) string {
	if m == "" {
		return "another field manager"
	}
	return "field manager " + m
}

// wakeProgress updates status.wake for what this reconcile decided (wokenByTime: the wakes of
// the boundary that it made, or is about to make), and measures a wake that ended.
func wakeProgress(out *sleepv1alpha1.SleepStatus, suspended bool, st sleeping.State, d sleeping.Decision, wokenByTime int, wakeTime *metav1.Time, now time.Time) {
	boundary := now
	switch {
	case st.InLead:
		boundary = st.WakeAt
	case wakeTime != nil && !wakeTime.After(now):
		boundary = wakeTime.Time
	}
	switch {
	case st.Asleep || suspended:
		out.Wake = nil
	case d.Waking || wokenByTime > 0:
		if out.Wake == nil {
			out.Wake = &sleepv1alpha1.WakeProgress{Boundary: metav1.NewTime(boundary.UTC())}
		}
		if wokenByTime > 0 {
			if out.Wake.StartedAt == nil {
				out.Wake.StartedAt = timeOrNil(now)
			}
			if d.TierStarted {
				out.Wake.Tier, out.Wake.TierStartedAt = int32(d.Tier), timeOrNil(now)
			}
		}
		out.Wake.Paced = d.Paced
	}
	if d.WakeDone && out.Wake != nil {
		// A wake that timed out is not measured: the lead would learn the timeout.
		if out.Wake.StartedAt != nil && !d.TimedOut {
			m := sleepv1alpha1.MeasuredWake{Boundary: out.Wake.Boundary, StartedAt: *out.Wake.StartedAt, ReadyAt: metav1.NewTime(now.UTC()),
				Duration: metav1.Duration{Duration: now.Sub(out.Wake.StartedAt.Time)}, Lateness: metav1.Duration{Duration: timing.Lateness(out.Wake.Boundary.Time, now)}}
			out.Wakes = append(out.Wakes, m)
			if n := len(out.Wakes); n > maxMeasuredWakes {
				out.Wakes = out.Wakes[n-maxMeasuredWakes:]
			}
		}
		out.Wake = nil
	}

}
