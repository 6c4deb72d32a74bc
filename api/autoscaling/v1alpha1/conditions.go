package v1alpha1

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
	// ReasonSuspended: the autoscaler is suspended and held at its baseline.
	ReasonSuspended = "Suspended"
	// ReasonApplyFailed: writing the HorizontalPodAutoscaler failed; the message has the
	// API server's answer and the controller retries with backoff.
	ReasonApplyFailed = "ApplyFailed"
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
)
