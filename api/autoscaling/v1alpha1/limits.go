package v1alpha1

// MaxSchedules is the most Schedules that one ScheduledPodAutoscaler may have. Admission
// compares a new or changed Schedule's windows with those of every sibling, and under
// overlapPolicy Forbid the reconcilers compare every pair of them at each boundary, so the
// work grows with the square of their number; admission refuses a Schedule beyond this limit
// (docs/webhooks.md#limits). Schedules whose windows have all ended still count: delete them.
const MaxSchedules = 100
