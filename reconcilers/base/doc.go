// Package base is what almanac's reconcilers are built on.
//
// Every reconciler (scheduledpodautoscaler, schedule, scheduledjob, eventjob) embeds Base,
// built whole by NewBase with its Options, and takes the same steps the same way: it reads
// the object it reconciles (the Job owners with ReadRecord, so that the record of which runs
// happened is never a stale cached copy when a Job is about to be created; the scaling
// reconcilers from the cache); computes the new status with a pure function; writes it with
// WriteStatus (only when it changed, under a resourceVersion precondition, so that a stale
// copy fails the write and is read again); then reports, as events and metrics, what changed
// between the status it read and the one it wrote; and asks to be called again with
// RequeueAt. Lanes orders the writes of an instant: the writes it is for (HPA bounds, Jobs)
// first, the reports after them.
//
// It owns no objects and watches nothing. It imports api/ only: every reconciler may import
// it, it imports no reconciler and not reconcilers/jobs.
package base
