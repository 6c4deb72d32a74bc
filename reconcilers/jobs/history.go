package jobs

import (
	"sort"

	batchv1 "k8s.io/api/batch/v1"
	"k8s.io/utils/ptr"

	batchv1alpha1 "github.com/almanac-dev/almanac/api/batch/v1alpha1"
)

// HistoryLimits returns the policy's history limits, with the defaults for omitted ones.
func HistoryLimits(p *batchv1alpha1.JobPolicy) (succeeded, failed int) {
	return int(ptr.Deref(p.SuccessfulJobsHistoryLimit, batchv1alpha1.DefaultSuccessfulJobsHistoryLimit)),
		int(ptr.Deref(p.FailedJobsHistoryLimit, batchv1alpha1.DefaultFailedJobsHistoryLimit))
}

// ToPrune returns the finished Jobs beyond the history limits: all but the `succeeded`
// newest completed Jobs and all but the `failed` newest failed Jobs, oldest first. Running
// Jobs are never pruned. "Newest" is by the time the Job finished, then by name.
//
// The callers delete them only after status records their runs, so that deleting a Job never
// makes its run happen again.
func ToPrune(jobs []*batchv1.Job, succeeded, failed int) []*batchv1.Job {
	var ok, bad []*batchv1.Job
	for _, j := range jobs {
		switch OutcomeOf(j).Type {
		case batchv1.JobComplete:
			ok = append(ok, j)
		case batchv1.JobFailed:
			bad = append(bad, j)
		}
	}
	return append(oldest(ok, succeeded), oldest(bad, failed)...)
}

// oldest returns all but the newest `keep` Jobs, oldest first.
func oldest(jobs []*batchv1.Job, keep int) []*batchv1.Job {
	if keep < 0 {
		keep = 0
	}
	if len(jobs) <= keep {
		return nil
	}
	sort.SliceStable(jobs, func(a, b int) bool {
		ta, tb := OutcomeOf(jobs[a]).Time, OutcomeOf(jobs[b]).Time
		if !ta.Equal(tb) {
			return ta.Before(tb)
		}
		return jobs[a].Name < jobs[b].Name
	})
	return jobs[:len(jobs)-keep]
}
