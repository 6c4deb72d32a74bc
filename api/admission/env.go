package admission

import (
	"context"
	"time"

	autoscalingv2 "k8s.io/api/autoscaling/v2"
	"k8s.io/apimachinery/pkg/labels"
	"k8s.io/apimachinery/pkg/runtime/schema"

	autoscalingv1alpha1 "github.com/almanac-dev/almanac/api/autoscaling/v1alpha1"
	batchv1alpha1 "github.com/almanac-dev/almanac/api/batch/v1alpha1"
	calendarv1alpha1 "github.com/almanac-dev/almanac/api/calendar/v1alpha1"
)

// Env is what validation knows besides the object itself.
type Env struct {
	// Now is the current time: staleness and the dates of DST warnings depend on it.
	Now time.Time
	// Objects finds the other objects that a rule looks at. Nil skips those rules (the
	// target-exists and calendar-exists warnings, overlaps and cycles).
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
	// (a Job, CronJob, ScheduledJob or EventJob), or the target of an attached
	// ScheduledPodAutoscaler that is a HorizontalPodAutoscaler or a KEDA ScaledObject (of any
	// version of their groups). For a kind it cannot look up, it reports true.
	Exists(ctx context.Context, gvk schema.GroupVersionKind, namespace, name string) (bool, error)
	// AttachedAutoscalers returns the ScheduledPodAutoscalers in namespace whose spec.targetRef
	// or status.target is the object of group, kind and name (the index
	// autoscalingv1alpha1.TargetField): shallow copies, whose fields point into the cache.
	AttachedAutoscalers(ctx context.Context, namespace, group, kind, name string) ([]autoscalingv1alpha1.ScheduledPodAutoscaler, error)
	// HorizontalPodAutoscalers returns the HorizontalPodAutoscalers in namespace, of which
	// validation reads the name and spec.scaleTargetRef.
	HorizontalPodAutoscalers(ctx context.Context, namespace string) ([]autoscalingv2.HorizontalPodAutoscaler, error)
	// Calendar returns the named Calendar of namespace, which spec.calendars of a Schedule
	// or ScheduledJob in that namespace names.
	Calendar(ctx context.Context, namespace, name string) (*calendarv1alpha1.Calendar, error)
	// ClusterCalendar returns the named ClusterCalendar.
	ClusterCalendar(ctx context.Context, name string) (*calendarv1alpha1.ClusterCalendar, error)
	// Selects reports whether an object of kind gvk (any version of its group) in namespace
	// ("": any) has labels that selector matches: whether a sleep's selector selects
	// anything. When it cannot tell (a kind it may not read), it reports true.
	Selects(ctx context.Context, gvk schema.GroupVersionKind, namespace string, selector labels.Selector) (bool, error)
}
