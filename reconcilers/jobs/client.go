package jobs

import (
	"context"
	"fmt"

	batchv1 "k8s.io/api/batch/v1"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	"k8s.io/apimachinery/pkg/types"
	"sigs.k8s.io/controller-runtime/pkg/client"

	batchv1alpha1 "github.com/almanac-dev/almanac/api/batch/v1alpha1"
)

// List returns the Jobs in namespace whose controller has the ControllerKey key, from the
// cache (batchv1alpha1.JobControllerField).
func List(ctx context.Context, c client.Reader, namespace, key string) ([]*batchv1.Job, error) {
	list := &batchv1.JobList{}
	if err := c.List(ctx, list, client.InNamespace(namespace), client.MatchingFields{batchv1alpha1.JobControllerField: key}); err != nil {
		return nil, fmt.Errorf("failed to list the Jobs of %s in %s: %w", key, namespace, err)
	}
	out := make([]*batchv1.Job, 0, len(list.Items))
	for i := range list.Items {
		out = append(out, &list.Items[i])
	}
	return out, nil
}

// Owned returns the Jobs that owner (of kind gvk's) controls, listed from the cache c, and
// the Jobs of an earlier object of owner's kind, namespace and name (earlier): one that was
// replaced by owner (kubectl replace --force, a delete and re-apply, Argo CD's Replace and
// Force, helm --force), whose Jobs name it as their controller by name but with its own UID.
// The cache may not have caught up with a Job created a moment ago, so the Jobs named in
// expected (those that status lists as active, a one-shot's Job) are read through api (around
// the cache) when the cache does not have them.
func Owned(ctx context.Context, c, api client.Reader, owner client.Object, kind string, expected []string) (owned, earlier []*batchv1.Job, err error) {
	key := batchv1alpha1.ControllerKey(batchv1alpha1.GroupVersion.Group, kind, owner.GetName())
	all, err := List(ctx, c, owner.GetNamespace(), key)
	if err != nil {
		return nil, nil, err
	}
	seen := map[string]bool{}
	classify := func(j *batchv1.Job) {
		seen[j.Name] = true
		switch {
		case IsControlledBy(j, owner):
			owned = append(owned, j)
		case batchv1alpha1.ControllerKeyOf(j) == key:
			earlier = append(earlier, j)
		}
	}
	for _, j := range all {
		classify(j)
	}
	for _, name := range expected {
		if seen[name] {
			continue
		}
		j := &batchv1.Job{}
		err := api.Get(ctx, types.NamespacedName{Namespace: owner.GetNamespace(), Name: name}, j)
		switch {
		case apierrors.IsNotFound(err):
			seen[name] = true
		case err != nil:
			return nil, nil, fmt.Errorf("failed to get Job %s/%s: %w", owner.GetNamespace(), name, err)
		default:
			classify(j)
		}
	}
	return owned, earlier, nil
}

// Creation is the outcome of Create.
type Creation struct {
	// Job is the run's Job: created now, or created by an earlier attempt. Nil when the Job
	// could not be created.
	Job *batchv1.Job
	// Created is true when this call created Job.
	Created bool
	// Conflict is true when a Job of that name exists and is not controlled by the owner nor
	// by an earlier object of its kind and name: almanac leaves it alone and the run does
	// not start.
	Conflict bool
	// Earlier is the Job of that name when an earlier object of the owner's kind, namespace
	// and name controls it (the owner replaced it: see Owned): it goes once released (the
	// garbage collector deletes the Jobs of an object that is gone), and the run waits for
	// that, within its starting deadline, rather than counting as not run.
	Earlier *batchv1.Job
	// Rejected is the API server's answer when it refused the Job built from the owner's
	// jobTemplate (Invalid or BadRequest): the run does not start.
	Rejected error
}

// Create creates a run's Job with c, reading an existing Job of its name through api. Deterministic names are the lock against duplicate runs:
// AlreadyExists on a Job that owner controls is success (an earlier attempt created it). User
// errors (a Job of that name that is not ours, a template the API server rejects) are
// returned in the Creation, for the owner's Ready condition; API errors are returned for a
// retry, which finds the Job through its name if it was created after all.
func Create(ctx context.Context, c client.Client, api client.Reader, owner client.Object, job *batchv1.Job) (Creation, error) {
	err := c.Create(ctx, job)
	switch {
	case err == nil:
		return Creation{Job: job, Created: true}, nil
	case apierrors.IsAlreadyExists(err):
		existing := &batchv1.Job{}
		if err := api.Get(ctx, client.ObjectKeyFromObject(job), existing); err != nil {
			return Creation{}, fmt.Errorf("failed to get Job %s/%s: %w", job.Namespace, job.Name, err)
		}
		switch {
		case IsControlledBy(existing, owner):
			return Creation{Job: existing}, nil
		case batchv1alpha1.ControllerKeyOf(existing) == batchv1alpha1.ControllerKeyOf(job):
			return Creation{Earlier: existing}, nil
		}
		return Creation{Conflict: true}, nil
	case apierrors.IsInvalid(err) || apierrors.IsBadRequest(err):
		return Creation{Rejected: err}, nil
	default:
		return Creation{}, fmt.Errorf("failed to create Job %s/%s: %w", job.Namespace, job.Name, err)
	}
}
