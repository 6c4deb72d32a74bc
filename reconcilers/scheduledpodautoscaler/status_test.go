package scheduledpodautoscaler

import (
	"strings"
	"testing"

	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"

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
