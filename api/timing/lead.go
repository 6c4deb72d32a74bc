package timing

import (
	"slices"
	"time"
)

// The learned lead (docs/time-semantics.md, "Lead time"): how long before a boundary the work
// that must be Ready at it starts, learned from how long that work took before. A sleep's wake
// uses it (api/sleeping), and so can an autoscaler's raise: both measure, for each past
// occurrence, the time from the first write to everything Ready, and ask LearnedLead.
const (
	// LeadSamples is how many of the last measurements the lead is learned from.
	LeadSamples = 10
	// LeadPercentile is the percentile of those measurements that the lead covers.
	LeadPercentile = 90
	// MinLeadMargin is the least margin added to the percentile: a quarter of it, and at
	// least this.
	MinLeadMargin = 10 * time.Second
)

// LearnedLead returns the lead learned from samples (durations measured from the first write
// to Ready, oldest first): the LeadPercentile-th percentile (nearest rank) of the last
// LeadSamples of them, plus a margin of a quarter of it and at least MinLeadMargin, rounded up
// to a whole second (the instants a lead moves are written to the second), capped by maxLead.
// Without samples it is fallback (the fixed lead), capped too. learned reports
// whether samples decided it. A workload that became slower raises the percentile within a
// few wakes; one that became faster lowers it as the slow samples age out; one outlier among
// ten does not move the 90th percentile by more than the next sample below it. Negative
// samples (clocks that disagree) count as 0.
func LearnedLead(samples []time.Duration, fallback, maxLead time.Duration) (lead time.Duration, learned bool) {
	if len(samples) == 0 {
		return min(max(fallback, 0), max(maxLead, 0)), false
	}
	last := slices.Clone(samples[max(0, len(samples)-LeadSamples):])
	for i, s := range last {
		last[i] = max(s, 0)
	}
	slices.Sort(last)
	// Nearest rank: the smallest sample such that at least LeadPercentile % are at or below it.
	rank := (LeadPercentile*len(last) + 99) / 100
	p := last[max(rank, 1)-1]
	lead = (p + max(p/4, MinLeadMargin) + time.Second - 1).Truncate(time.Second)
	return min(lead, max(maxLead, 0)), true
}
