package scheduledpodautoscaler

import (
	"strings"
	"testing"
	"time"

	autoscalingv2 "k8s.io/api/autoscaling/v2"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/utils/ptr"
	"sigs.k8s.io/controller-runtime/pkg/event"

	"github.com/almanac-dev/almanac/api/index"
	"github.com/almanac-dev/almanac/api/scaling"
)

func TestSchedulesValidConditionNamesTheSkippedSchedules(t *testing.T) {
	d := scaling.Desired{Invalid: []scaling.InvalidSchedule{
		{Name: "bad-cron", Message: "spec.schedule: @every is not supported"},
		{Name: "bad-zone", Message: "spec.timeZone: unknown"},
	}}
	c := schedulesValidCondition(d)
	if c.Status != metav1.ConditionFalse || !strings.Contains(c.Message, `Schedule "bad-zone" is skipped: spec.timeZone`) || !strings.Contains(c.Message, `Schedule "bad-cron" is skipped`) {
		t.Errorf("SchedulesValid condition = %+v", c)
	}
	if c := schedulesValidCondition(scaling.Desired{}); c.Status != metav1.ConditionTrue {
		t.Errorf("SchedulesValid condition without invalid Schedules = %+v", c)
	}
}

func TestHPAChangedIgnoresAlmanacsOwnWrites(t *testing.T) {
	at := func(sec int) *metav1.Time {
		return ptr.To(metav1.NewTime(time.Date(2030, 1, 7, 9, 0, sec, 0, time.UTC)))
	}
	bounds := metav1.NewFieldsV1(`{"f:spec":{"f:maxReplicas":{},"f:minReplicas":{}}}`)
	fewer := metav1.NewFieldsV1(`{"f:spec":{"f:maxReplicas":{}}}`)
	ours := func(t *metav1.Time, f *metav1.FieldsV1) metav1.ManagedFieldsEntry {
		return metav1.ManagedFieldsEntry{Manager: index.FieldManager, Operation: metav1.ManagedFieldsOperationApply, APIVersion: "autoscaling/v2", Time: t, FieldsV1: f}
	}
	theirs := metav1.ManagedFieldsEntry{Manager: "kubectl-edit", Operation: metav1.ManagedFieldsOperationUpdate, Time: at(9)}
	hpa := func(minReplicas int32, entries ...metav1.ManagedFieldsEntry) *autoscalingv2.HorizontalPodAutoscaler {
		return &autoscalingv2.HorizontalPodAutoscaler{
			ObjectMeta: metav1.ObjectMeta{Name: "web", Namespace: "ns", ManagedFields: entries},
			Spec:       autoscalingv2.HorizontalPodAutoscalerSpec{MinReplicas: ptr.To(minReplicas), MaxReplicas: 10},
		}
	}
	for _, tc := range []struct {
		name     string
		old, new *autoscalingv2.HorizontalPodAutoscaler
		want     bool
	}{
		{"created by almanac", nil, hpa(2, ours(at(0), bounds)), false},
		{"created by someone else (a conflict to report)", nil, hpa(2, theirs), true},
		{"almanac applied new bounds", hpa(2, ours(at(0), bounds)), hpa(5, ours(at(1), bounds)), false},
		{"someone took minReplicas over", hpa(2, ours(at(0), bounds)), hpa(7, ours(at(0), fewer), theirs), true},
		{"someone edited it, almanac's entry unchanged", hpa(2, ours(at(0), bounds)), hpa(7, ours(at(0), bounds), theirs), true},
		{"almanac's apply changed what it owns: reconcile, to be sure", hpa(2, ours(at(0), bounds)), hpa(5, ours(at(1), fewer)), true},
		{"the HPA controller's status write", hpa(2, ours(at(0), bounds)), hpa(2, ours(at(0), bounds)), false},
	} {
		t.Run(tc.name, func(t *testing.T) {
			var got bool
			if tc.old == nil {
				got = hpaChanged{}.Create(event.CreateEvent{Object: tc.new})
			} else {
				got = hpaChanged{}.Update(event.UpdateEvent{ObjectOld: tc.old, ObjectNew: tc.new})
			}
			if got != tc.want {
				t.Errorf("reconcile = %v, want %v", got, tc.want)
			}
		})
	}
}
