package webhooks

import (
	"context"
	"fmt"
	"time"

	autoscalingv2 "k8s.io/api/autoscaling/v2"
	corev1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/labels"
	"k8s.io/apimachinery/pkg/runtime/schema"
	"k8s.io/utils/ptr"
	"sigs.k8s.io/controller-runtime/pkg/client"

	apiadmission "github.com/almanac-dev/almanac/api/admission"
	autoscalingv1alpha1 "github.com/almanac-dev/almanac/api/autoscaling/v1alpha1"
	batchv1alpha1 "github.com/almanac-dev/almanac/api/batch/v1alpha1"
	calendarv1alpha1 "github.com/almanac-dev/almanac/api/calendar/v1alpha1"
)

// The handlers' tests build their objects as api/admission's tests of the rules do.

// now is Friday 2027-01-15 12:00 UTC.
var now = time.Date(2027, time.January, 15, 12, 0, 0, 0, time.UTC)

// objectsLookup is a Lookup over a few autoscalers in namespace "ns": all that the handlers'
// tests need (the rules' own tests, in api/admission, look up every kind).
type objectsLookup struct {
	autoscalers map[string]*autoscalingv1alpha1.ScheduledPodAutoscaler
}

var _ apiadmission.Lookup = (*objectsLookup)(nil)

// lookupOf is a Lookup over the given objects, in namespace "ns"; only autoscalers are
// supported.
func lookupOf(objs ...client.Object) *objectsLookup {
	l := &objectsLookup{autoscalers: map[string]*autoscalingv1alpha1.ScheduledPodAutoscaler{}}
	for _, obj := range objs {
		spa, ok := obj.(*autoscalingv1alpha1.ScheduledPodAutoscaler)
		if !ok {
			panic(fmt.Sprintf("lookupOf: %T is not supported", obj))
		}
		spa.SetNamespace("ns")
		l.autoscalers[spa.Name] = spa
	}
	return l
}

func (l *objectsLookup) ScheduledPodAutoscaler(_ context.Context, namespace, name string) (*autoscalingv1alpha1.ScheduledPodAutoscaler, error) {
	if namespace != "ns" {
		return nil, nil
	}
	return l.autoscalers[name], nil
}

func (l *objectsLookup) Schedules(context.Context, string, string) ([]autoscalingv1alpha1.Schedule, error) {
	return nil, nil
}

func (l *objectsLookup) EventJob(context.Context, string, string) (*batchv1alpha1.EventJob, error) {
	return nil, nil
}

func (l *objectsLookup) EventJobFollowers(context.Context, string, string) ([]*batchv1alpha1.EventJob, error) {
	return nil, nil
}

func (l *objectsLookup) Exists(context.Context, schema.GroupVersionKind, string, string) (bool, error) {
	return false, nil
}

func (l *objectsLookup) AttachedAutoscalers(context.Context, string, string, string, string) ([]autoscalingv1alpha1.ScheduledPodAutoscaler, error) {
	return nil, nil
}

func (l *objectsLookup) HorizontalPodAutoscalers(context.Context, string) ([]autoscalingv2.HorizontalPodAutoscaler, error) {
	return nil, nil
}

func (l *objectsLookup) Selects(context.Context, schema.GroupVersionKind, string, labels.Selector) (bool, error) {
	return true, nil
}

func (l *objectsLookup) Calendar(context.Context, string, string) (*calendarv1alpha1.Calendar, error) {
	return nil, nil
}

func (l *objectsLookup) ClusterCalendar(context.Context, string) (*calendarv1alpha1.ClusterCalendar, error) {
	return nil, nil
}

var defaultRef = autoscalingv1alpha1.ScaleTargetReference{APIVersion: "autoscaling.almanac.dev/v1alpha1", Kind: "ScheduledPodAutoscaler", Name: "web"}

func spa(name string, policy autoscalingv1alpha1.OverlapPolicy) *autoscalingv1alpha1.ScheduledPodAutoscaler {
	return &autoscalingv1alpha1.ScheduledPodAutoscaler{
		ObjectMeta: metav1.ObjectMeta{Name: name},
		Spec:       autoscalingv1alpha1.ScheduledPodAutoscalerSpec{OverlapPolicy: policy},
	}
}

func schedule(name string, spec autoscalingv1alpha1.ScheduleSpec) *autoscalingv1alpha1.Schedule {
	if spec.ScaleTargetRef.Name == "" {
		spec.ScaleTargetRef = defaultRef
	}
	if spec.MinReplicas == nil {
		spec.MinReplicas = ptr.To(int32(2))
	}
	return &autoscalingv1alpha1.Schedule{ObjectMeta: metav1.ObjectMeta{Name: name, Namespace: "ns"}, Spec: spec}
}

func daily(start, end, zone string) autoscalingv1alpha1.ScheduleSpec {
	return autoscalingv1alpha1.ScheduleSpec{Type: "Daily", StartTime: start, EndTime: end, TimeZone: zone}
}

func scheduledJob(name string, spec batchv1alpha1.ScheduledJobSpec) *batchv1alpha1.ScheduledJob {
	if spec.TimeZone == "" {
		spec.TimeZone = "UTC"
	}
	if spec.JobTemplate.Spec.Template.Spec.RestartPolicy == "" {
		spec.JobTemplate.Spec.Template.Spec.RestartPolicy = corev1.RestartPolicyNever
	}
	return &batchv1alpha1.ScheduledJob{ObjectMeta: metav1.ObjectMeta{Name: name, Namespace: "ns"}, Spec: spec}
}

func eventJob(name string, kind batchv1alpha1.TriggerKind, trigger string) *batchv1alpha1.EventJob {
	var apiVersion string
	switch kind {
	case batchv1alpha1.TriggerKindJob, batchv1alpha1.TriggerKindCronJob:
		apiVersion = "batch/v1"
	case batchv1alpha1.TriggerKindScheduledJob, batchv1alpha1.TriggerKindEventJob:
		apiVersion = batchv1alpha1.GroupVersion.String()
	}
	ej := &batchv1alpha1.EventJob{ObjectMeta: metav1.ObjectMeta{Name: name, Namespace: "ns"}}
	ej.Spec.Trigger = batchv1alpha1.Trigger{APIVersion: apiVersion, Kind: kind, Name: trigger, Type: "Complete"}
	ej.Spec.JobTemplate.Spec.Template.Spec.RestartPolicy = corev1.RestartPolicyOnFailure
	return ej
}
