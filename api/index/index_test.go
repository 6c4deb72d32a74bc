package index

import (
	"fmt"
	"testing"

	"github.com/google/go-cmp/cmp"
	batchv1 "k8s.io/api/batch/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/utils/ptr"

	autoscalingv1alpha1 "github.com/almanac-dev/almanac/api/autoscaling/v1alpha1"
	batchv1alpha1 "github.com/almanac-dev/almanac/api/batch/v1alpha1"
	calendarv1alpha1 "github.com/almanac-dev/almanac/api/calendar/v1alpha1"
)

func TestValues(t *testing.T) {
	job := &batchv1.Job{ObjectMeta: metav1.ObjectMeta{Name: "hello-1", OwnerReferences: []metav1.OwnerReference{
		{APIVersion: "batch/v1", Kind: "CronJob", Name: "hello", Controller: ptr.To(true)},
	}}}
	schedule := &autoscalingv1alpha1.Schedule{ObjectMeta: metav1.ObjectMeta{Namespace: "shop"}, Spec: autoscalingv1alpha1.ScheduleSpec{
		ScaleTargetRef: autoscalingv1alpha1.ScaleTargetReference{Name: "web"},
		Calendars: &calendarv1alpha1.Calendars{
			Skip: []calendarv1alpha1.CalendarReference{{Name: "holidays"}, {Kind: "ClusterCalendar", Name: "de"}},
			Only: []calendarv1alpha1.CalendarReference{{Kind: "Calendar", Name: "holidays"}},
		},
	}}
	eventJob := &batchv1alpha1.EventJob{Spec: batchv1alpha1.EventJobSpec{Trigger: batchv1alpha1.Trigger{Kind: "CronJob", Name: "hello"}}}
	got := map[string][]string{}
	seen := map[string]bool{}
	for _, ix := range All() {
		key := fmt.Sprintf("%T %s", ix.Object, ix.Field)
		if seen[key] {
			t.Errorf("index %s is listed twice", key)
		}
		seen[key] = true
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
		// A Schedule is found by each calendar it names, once; a Calendar by its namespace.
		calendarv1alpha1.CalendarField: {"Calendar/shop/holidays", "ClusterCalendar/de"},
	}
	if diff := cmp.Diff(want, got); diff != "" {
		t.Errorf("index values (-want +got):\n%s", diff)
	}
}
