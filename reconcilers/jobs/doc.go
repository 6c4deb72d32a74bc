// Package jobs is the toolkit of almanac's reconcilers.
//
// Every reconciler (scheduledpodautoscaler, schedule, scheduledjob, eventjob) embeds Base and
// takes the same steps the same way: it reads the object it reconciles (the Job owners
// with ReadRecord, so that the record of which runs happened is never a stale cached copy
// when a Job is about to be created; the scaling reconcilers from the cache); computes the new
// status with a pure function; writes it with WriteStatus (only when it changed, under a
// resourceVersion precondition, so that a stale copy fails the write and is read again); then
// reports, as events and metrics, what changed between the status it read and the one it
// wrote; and asks to be called again with RequeueAt.
//
// For the Job owners (ScheduledJob and EventJob) it also holds what they share about the Jobs
// they create: building a Job from a template (named, labelled and annotated by the contract
// in api/batch/v1alpha1: deterministic names are the lock against duplicate runs), listing
// the Jobs of a controller with the cache-miss fallback (OwnedJobs), the create/AlreadyExists
// ladder (CreateJob), reading a Job's outcome from its conditions, concurrency policy,
// history pruning, event reasons and metrics.
//
// It owns no objects and watches nothing. It imports api/ only: a reconciler may import it,
// it never imports a reconciler.
package jobs
