package jobs

import "time"

// WithinDeadline reports whether a run whose nominal instant is slot may still start at now,
// given startingDeadlineSeconds. Lateness is counted in whole seconds, so that a run that
// starts a few milliseconds after its instant is on time even with a deadline of 0.
func WithinDeadline(slot, now time.Time, deadlineSeconds int64) bool {
	late := now.Sub(slot)
	return late < time.Duration(deadlineSeconds+1)*time.Second
}
