package v1alpha1

import (
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"

	calendarv1alpha1 "github.com/almanac-dev/almanac/api/calendar/v1alpha1"
	"github.com/almanac-dev/almanac/api/conditions"
)

// Condition types and reasons of this API group. Each reason is a CamelCase word that a
// user can search for; the condition's message says what to do.
const (
	// ConditionReady on a ScheduledPodAutoscaler is True when its HorizontalPodAutoscaler
	// exists and has the bounds that status reports.
	ConditionReady = "Ready"
	// ConditionSchedulesValid on a ScheduledPodAutoscaler is False when one of its
	// Schedules cannot be evaluated; that Schedule is skipped and the others still apply.
	ConditionSchedulesValid = "SchedulesValid"
	// ConditionValid on a Schedule is False when it cannot be evaluated.
	ConditionValid = "Valid"

	// ReasonBoundsApplied: the HorizontalPodAutoscaler has the effective bounds.
	ReasonBoundsApplied = "BoundsApplied"
	// ReasonHeldAsleep: the workload that the autoscaler is attached to through its scale
	// subresource is held asleep by a Sleep or ClusterSleep (sleepv1alpha1.Holds): the sleep
	// wins, and the autoscaler writes its bounds again once the workload wakes.
	ReasonHeldAsleep = "HeldAsleep"
	// ReasonSuspended: the autoscaler is suspended and held at its baseline.
	ReasonSuspended = "Suspended"
	// ReasonApplyFailed: writing the HorizontalPodAutoscaler failed; the message has the
	// API server's answer and the controller retries with backoff.
	ReasonApplyFailed = "ApplyFailed"
	// ReasonRequestRefused: the API server refused almanac's write of the
	// HorizontalPodAutoscaler or the target (RBAC, an admission webhook or policy, a quota);
	// the message has its answer and the fix, and almanac tries again about a minute later,
	// at the next boundary if sooner, or when the autoscaler or its Schedules change.
	ReasonRequestRefused = conditions.ReasonRequestRefused
	// ReasonHPAConflict: a HorizontalPodAutoscaler of the same name exists and is not
	// controlled by this autoscaler; almanac leaves it alone.
	ReasonHPAConflict = "HorizontalPodAutoscalerConflict"
	// ReasonAllSchedulesValid: every Schedule of the autoscaler could be evaluated.
	ReasonAllSchedulesValid = "AllSchedulesValid"
	// ReasonInvalidSchedule: a Schedule could not be evaluated (bad zone, time or cron);
	// the message names it and says why.
	ReasonInvalidSchedule = "InvalidSchedule"
	// ReasonValid: the Schedule could be evaluated.
	ReasonValid = "Valid"

	// ConditionForbiddenOverlap is True, on a ScheduledPodAutoscaler with overlapPolicy
	// Forbid and on the Schedules it leaves out, while Schedules of the autoscaler overlap
	// anyway (admission reads a cache: two Schedules created at the same moment can both be
	// admitted). The reconciler keeps the Schedule created first (then the first by name) and
	// leaves the later one out of the bounds, and also leaves out a Schedule whose windows it
	// cannot compare (ReasonNotCompared). The condition is absent when nothing is left out.
	ConditionForbiddenOverlap = "ForbiddenOverlap"
	// ReasonSchedulesLeftOut: the autoscaler leaves the Schedules named in the message out of
	// its bounds; change or delete them to remove the overlap.
	ReasonSchedulesLeftOut = "SchedulesLeftOut"
	// ReasonLeftOut: this Schedule is left out of its autoscaler's bounds; the message names
	// the Schedule it overlaps and the first overlapping interval.
	ReasonLeftOut = "LeftOut"
	// ReasonNotCompared: this Schedule is left out of its autoscaler's bounds because its
	// windows could not be compared with those of the Schedules kept before it: it opens more
	// windows than almanac compares (timing.MaxWindows), or the autoscaler has more Schedules
	// than almanac compares (MaxSchedules). The message says which, and what to change.
	ReasonNotCompared = "NotCompared"

	// ReasonTargetNotFound: the object that spec.targetRef names does not exist; almanac
	// writes nothing and tries again when it appears.
	ReasonTargetNotFound = "TargetNotFound"
	// ReasonTargetKindNotServed: the API server serves no resource of targetRef's apiVersion
	// and kind (for a ScaledObject: KEDA is not installed), or the manager may not read it.
	ReasonTargetKindNotServed = "TargetKindNotServed"
	// ConditionConflict is True on an attached ScheduledPodAutoscaler while almanac has
	// stopped writing its target because another field manager keeps changing the fields that
	// almanac owns (MaxPutBacks in PutBackWindow); the message names the manager and the field
	// and says what to configure. It goes when the spec changes; it is absent otherwise.
	ConditionConflict = "Conflict"
	// ReasonFieldManagerConflict: another field manager keeps writing a field that almanac
	// owns.
	ReasonFieldManagerConflict = "FieldManagerConflict"
)

// The terminal states of this group's kinds: a user must change something (the spec, a
// Schedule, the target, another field manager, the cluster) before the object does what its
// spec asks. Every reason that the reconciler sets with Ready False is terminal, as the Argo
// CD health check has it (docs/gitops.md); ApplyFailed too, although the reconciler retries
// the write with backoff: kstatus's Stalled is an error met while reconciling, and it goes
// with the first write that succeeds.
var (
	scheduledPodAutoscalerTerminal = []conditions.Terminal{
		{Type: ConditionReady, Status: metav1.ConditionFalse, Reasons: []string{
			ReasonFieldManagerConflict, ReasonTargetNotFound, ReasonTargetKindNotServed, ReasonHPAConflict, ReasonApplyFailed, ReasonRequestRefused}},
		{Type: ConditionConflict, Status: metav1.ConditionTrue, Reasons: []string{ReasonFieldManagerConflict}},
		{Type: ConditionSchedulesValid, Status: metav1.ConditionFalse, Reasons: []string{ReasonInvalidSchedule}},
		{Type: ConditionForbiddenOverlap, Status: metav1.ConditionTrue, Reasons: []string{ReasonSchedulesLeftOut}},
	}
	scheduleTerminal = []conditions.Terminal{
		{Type: ConditionValid, Status: metav1.ConditionFalse, Reasons: []string{ReasonInvalidSchedule}},
		{Type: calendarv1alpha1.ConditionCalendars, Status: metav1.ConditionFalse, Reasons: []string{
			calendarv1alpha1.ReasonCalendarNotUsable}},
		// Left out of its autoscaler's bounds under overlapPolicy Forbid: it has no effect.
		{Type: ConditionForbiddenOverlap, Status: metav1.ConditionTrue, Reasons: []string{ReasonLeftOut, ReasonNotCompared}},
	}
)

// Stalled returns the ScheduledPodAutoscaler's Stalled condition (conditions.TypeStalled),
// which kstatus reads as Failed, from the rest of its status; nil when nothing stalls it. A
// suspended autoscaler is not stalled by being suspended: it holds its baseline, as asked.
func (st *ScheduledPodAutoscalerStatus) Stalled() *metav1.Condition {
	return conditions.Stalled(st.Conditions, scheduledPodAutoscalerTerminal...)
}

// Stalled returns the Schedule's Stalled condition (conditions.TypeStalled), which kstatus
// reads as Failed, from the rest of its status; nil when nothing stalls it. A suspended or
// completed Schedule is not stalled.
func (st *ScheduleStatus) Stalled() *metav1.Condition {
	if c := conditions.Stalled(st.Conditions, scheduleTerminal...); c != nil {
		return c
	}
	if st.Phase == SchedulePhaseInvalid {
		return conditions.StalledBy(ReasonInvalidSchedule, "The Schedule cannot be evaluated")
	}
	return nil
}
