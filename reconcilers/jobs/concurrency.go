package jobs

import (
	batchv1alpha1 "github.com/almanac-dev/almanac/api/batch/v1alpha1"
)

// Decision is what to do with a run that is due (batchv1alpha1.ConcurrencyDecision).
type Decision = batchv1alpha1.ConcurrencyDecision

const (
	// Start the run.
	Start = batchv1alpha1.StartRun
	// Skip the run: a Job still runs and the policy is Forbid.
	Skip = batchv1alpha1.SkipRun
	// ReplaceAndStart deletes the running Jobs, then starts the run.
	ReplaceAndStart = batchv1alpha1.ReplaceRun
)

// Decide applies a concurrency policy to a run that is due while `active` Jobs of the same
// object still run (batchv1alpha1.ConcurrencyPolicy.Decide: the rule's one home, which the
// CLI reads too). An empty policy means the default, Allow.
func Decide(policy batchv1alpha1.ConcurrencyPolicy, active int) Decision {
	return policy.Decide(active)
}
