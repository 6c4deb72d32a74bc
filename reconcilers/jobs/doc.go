// Package jobs holds what the ScheduledJob and EventJob reconcilers share about the Jobs they
// create: deterministic names (the lock against duplicate runs), the labels and annotations
// that say which object and which slot or upstream Job a Job belongs to, building a Job from
// a template, reading a Job's outcome from its conditions, concurrency policy, history
// pruning, field indexes, event reasons and metrics.
//
// It owns no objects and watches nothing; the reconcilers in reconcilers/scheduledjob and
// reconcilers/eventjob do.
package jobs
