package scheduledpodautoscaler

import (
	"strings"
	"testing"
	"time"

	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	ctrl "sigs.k8s.io/controller-runtime"

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

func TestRequeueAt(t *testing.T) {
	now := time.Date(2027, 3, 1, 9, 59, 59, 0, time.UTC)
	tests := []struct {
		name string
		next time.Time
		want ctrl.Result
	}{
		{"no boundary ahead: never", time.Time{}, ctrl.Result{}},
		{"a boundary ahead: exactly then", now.Add(1500 * time.Millisecond), ctrl.Result{RequeueAfter: 1500 * time.Millisecond}},
		// The reconcile computed the boundary before it wrote, and its writes took longer
		// than the time that was left: controller-runtime would drop a RequeueAfter ≤ 0.
		{"the boundary passed while writing: at once", now.Add(-200 * time.Millisecond), ctrl.Result{RequeueAfter: time.Nanosecond}},
		{"the boundary is now: at once", now, ctrl.Result{RequeueAfter: time.Nanosecond}},
	}
	for _, tt := range tests {
		if got := RequeueAt(tt.next, now); got != tt.want {
			t.Errorf("%s: RequeueAt = %+v, want %+v", tt.name, got, tt.want)
		}
	}
}
