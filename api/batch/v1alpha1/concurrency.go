package v1alpha1

// ConcurrencyDecision is what concurrencyPolicy makes of a run that is due while Jobs of the
// same object still run.
type ConcurrencyDecision int

const (
	// StartRun starts the run (no Job runs, or the policy is Allow).
	StartRun ConcurrencyDecision = iota
	// SkipRun skips the run: a Job still runs and the policy is Forbid.
	SkipRun
	// ReplaceRun deletes the running Jobs, then starts the run (policy Replace).
	ReplaceRun
)

// Decide applies the policy to a run that is due while `active` Jobs of the same object still
// run. An empty policy means the default, Allow. The reconcilers decide with it, and
// `almanac next` says with it what becomes of a ScheduledJob's or EventJob's next run.
func (p ConcurrencyPolicy) Decide(active int) ConcurrencyDecision {
	if active == 0 {
		return StartRun
	}
	switch p {
	case ConcurrencyPolicyForbid:
		return SkipRun
	case ConcurrencyPolicyReplace:
		return ReplaceRun
	default:
		return StartRun
	}
}
