package admission

import (
	"context"
	"time"

	"k8s.io/apimachinery/pkg/runtime/schema"

	autoscalingv1alpha1 "github.com/almanac-dev/almanac/api/autoscaling/v1alpha1"
	batchv1alpha1 "github.com/almanac-dev/almanac/api/batch/v1alpha1"
)

// Env is what validation knows besides the object itself.
type Env struct {
	// Now is the current time: staleness and the dates of DST warnings depend on it.
	Now time.Time
	// Objects finds the other objects that a rule looks at. Nil skips those rules (the
	// target-exists warnings, overlaps and cycles).
	Objects Lookup
}

// Lookup finds the objects that validation compares an object with. In the webhook it reads
// the manager's cache; in `almanac validate` it reads the input set. Implementations return
// nil (and no error) for an object that does not exist. What they return may be shared with
// the cache: validation only reads it.
type Lookup interface {
	// ScheduledPodAutoscaler returns the named autoscaler.
	ScheduledPodAutoscaler(ctx context.Context, namespace, name string) (*autoscalingv1alpha1.ScheduledPodAutoscaler, error)
	// Schedules returns the Schedules in namespace whose scaleTargetRef names the autoscaler:
	// shallow copies, whose fields point into the cache.
	Schedules(ctx context.Context, namespace, autoscaler string) ([]autoscalingv1alpha1.Schedule, error)
	// EventJob returns the named EventJob.
	EventJob(ctx context.Context, namespace, name string) (*batchv1alpha1.EventJob, error)
	// EventJobFollowers returns the EventJobs in namespace that trigger on the named EventJob.
	EventJobFollowers(ctx context.Context, namespace, name string) ([]*batchv1alpha1.EventJob, error)
	// Exists reports whether an object of the given kind exists: the trigger of an EventJob
	// (a Job, CronJob, ScheduledJob or EventJob).
	Exists(ctx context.Context, gvk schema.GroupVersionKind, namespace, name string) (bool, error)
}
