package jobs

import (
	batchv1alpha1 "github.com/almanac-dev/almanac/api/batch/v1alpha1"
)

// Decision is what to do with a run that is due.
type Decision int

const (
	// Start the run.
	Start Decision = iota
	// Skip the run: a Job still runs and the policy is Forbid.
	Skip
	// ReplaceAndStart deletes the running Jobs, then starts the run.
	ReplaceAndStart
)

// Decide applies a concurrency policy to a run that is due while `active` Jobs of the same
// object still run. An empty policy means the default, Allow.
func Decide(policy batchv1alpha1.ConcurrencyPolicy, active int) Decision {
	if active == 0 {
		return Start
	}
	switch policy {
	case batchv1alpha1.ConcurrencyPolicyForbid:
		return Skip
	case batchv1alpha1.ConcurrencyPolicyReplace:
		return ReplaceAndStart
	default:
		return Start
	}
}
