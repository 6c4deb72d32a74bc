package index

import (
	"testing"

	"github.com/google/go-cmp/cmp"
	batchv1 "k8s.io/api/batch/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/utils/ptr"

	autoscalingv1alpha1 "github.com/almanac-dev/almanac/api/autoscaling/v1alpha1"
	batchv1alpha1 "github.com/almanac-dev/almanac/api/batch/v1alpha1"
)

func TestValues(t *testing.T) {
	job := &batchv1.Job{ObjectMeta: metav1.ObjectMeta{Name: "hello-1", OwnerReferences: []metav1.OwnerReference{
		{APIVersion: "batch/v1", Kind: "CronJob", Name: "hello", Controller: ptr.To(true)},
	}}}
	schedule := &autoscalingv1alpha1.Schedule{Spec: autoscalingv1alpha1.ScheduleSpec{ScaleTargetRef: autoscalingv1alpha1.ScaleTargetReference{Name: "web"}}}
	eventJob := &batchv1alpha1.EventJob{Spec: batchv1alpha1.EventJobSpec{Trigger: batchv1alpha1.Trigger{Kind: "CronJob", Name: "hello"}}}
	got := map[string][]string{}
	seen := map[string]bool{}
	for _, ix := range All() {
		if seen[ix.Field] {
			t.Errorf("index %s is listed twice", ix.Field)
		}
		seen[ix.Field] = true
		for _, obj := range []Object{job, schedule, eventJob} {
			if v := ix.Values(obj); v != nil {
				got[ix.Field] = append(got[ix.Field], v...)
			}
		}
	}
	want := map[string][]string{
		autoscalingv1alpha1.ScheduleTargetField: {"web"},
		batchv1alpha1.JobControllerField:        {"batch/CronJob/hello"},
		// An EventJob that follows a CronJob is found by the key of the CronJob's Jobs.
		batchv1alpha1.EventJobTriggerField: {"batch/CronJob/hello"},
	}
	if diff := cmp.Diff(want, got); diff != "" {
		t.Errorf("index values (-want +got):\n%s", diff)
	}
}
