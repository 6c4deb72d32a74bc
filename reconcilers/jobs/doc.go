// Package jobs is the Job owners' Job logic: what the ScheduledJob and EventJob reconcilers
// share about the Jobs they create.
//
// Building a Job from a template (named, labelled and annotated by the contract in
// api/batch/v1alpha1: deterministic names are the lock against duplicate runs), listing the
// Jobs of a controller with the cache-miss fallback (Owned), the create/AlreadyExists ladder
// (Create), reading a Job's outcome from its conditions, concurrency policy, history pruning,
// the reports of Jobs that finished, event reasons and the Job metrics.
//
// It owns no objects and watches nothing. It imports api/ only: a Job owner may import it,
// it never imports a reconciler; the scaling reconcilers do not need it (they are built on
// reconcilers/base).
package jobs
