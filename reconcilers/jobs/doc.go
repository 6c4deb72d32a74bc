// Package jobs holds what the ScheduledJob and EventJob reconcilers share about the Jobs they
// create: building a Job from a template (named, labelled and annotated by the contract in
// api/batch/v1alpha1: deterministic names are the lock against duplicate runs), reading a
// Job's outcome from its conditions, concurrency policy, history pruning, field indexes,
// event reasons and metrics.
//
// It owns no objects and watches nothing; the reconcilers in reconcilers/scheduledjob and
// reconcilers/eventjob do.
package jobs
