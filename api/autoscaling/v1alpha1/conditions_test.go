package v1alpha1

import (
	"testing"

	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
)

func cond(typ string, status metav1.ConditionStatus, reason string) metav1.Condition {
	return metav1.Condition{Type: typ, Status: status, Reason: reason, Message: reason + " says why"}
}

func stalledReason(t *testing.T, c *metav1.Condition) string {
	t.Helper()
	if c == nil {
		return ""
	}
	if c.Type != "Stalled" || c.Status != metav1.ConditionTrue || c.Message == "" {
		t.Fatalf("got %+v, want Stalled True with a message", c)
	}
	return c.Reason
}

func TestScheduledPodAutoscalerStalled(t *testing.T) {
	ready := cond(ConditionReady, metav1.ConditionTrue, ReasonBoundsApplied)
	valid := cond(ConditionSchedulesValid, metav1.ConditionTrue, ReasonAllSchedulesValid)
	tests := []struct {
		name  string
		conds []metav1.Condition
		want  string
	}{
		{name: "new"},
		{name: "applied", conds: []metav1.Condition{ready, valid}},
		{name: "suspended", conds: []metav1.Condition{cond(ConditionReady, metav1.ConditionTrue, ReasonSuspended), valid}},
		{name: "target not found", conds: []metav1.Condition{cond(ConditionReady, metav1.ConditionFalse, ReasonTargetNotFound), valid}, want: ReasonTargetNotFound},
		{name: "HPA conflict", conds: []metav1.Condition{cond(ConditionReady, metav1.ConditionFalse, ReasonHPAConflict), valid}, want: ReasonHPAConflict},
		{name: "apply failed", conds: []metav1.Condition{cond(ConditionReady, metav1.ConditionFalse, ReasonApplyFailed), valid}, want: ReasonApplyFailed},
		{name: "field manager conflict", conds: []metav1.Condition{ready, cond(ConditionConflict, metav1.ConditionTrue, ReasonFieldManagerConflict)}, want: ReasonFieldManagerConflict},
		{name: "a Schedule invalid", conds: []metav1.Condition{ready, cond(ConditionSchedulesValid, metav1.ConditionFalse, ReasonInvalidSchedule)}, want: ReasonInvalidSchedule},
		{name: "forbidden overlap", conds: []metav1.Condition{ready, valid, cond(ConditionForbiddenOverlap, metav1.ConditionTrue, ReasonSchedulesLeftOut)}, want: ReasonSchedulesLeftOut},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			st := ScheduledPodAutoscalerStatus{Conditions: tc.conds}
			if got := stalledReason(t, st.Stalled()); got != tc.want {
				t.Errorf("Stalled reason %q, want %q", got, tc.want)
			}
		})
	}
}

func TestScheduleStalled(t *testing.T) {
	valid := cond(ConditionValid, metav1.ConditionTrue, ReasonValid)
	tests := []struct {
		name string
		st   ScheduleStatus
		want string
	}{
		{name: "new"},
		{name: "scheduled", st: ScheduleStatus{Phase: SchedulePhaseScheduled, Conditions: []metav1.Condition{valid}}},
		{name: "suspended", st: ScheduleStatus{Phase: SchedulePhaseSuspended, Conditions: []metav1.Condition{valid}}},
		{name: "completed", st: ScheduleStatus{Phase: SchedulePhaseCompleted, Conditions: []metav1.Condition{valid}}},
		{name: "invalid", st: ScheduleStatus{Phase: SchedulePhaseInvalid, Conditions: []metav1.Condition{cond(ConditionValid, metav1.ConditionFalse, ReasonInvalidSchedule)}},
			want: ReasonInvalidSchedule},
		{name: "phase Invalid alone", st: ScheduleStatus{Phase: SchedulePhaseInvalid}, want: ReasonInvalidSchedule},
		{name: "calendar not usable", st: ScheduleStatus{Phase: SchedulePhaseScheduled, Conditions: []metav1.Condition{valid, cond("Calendars", metav1.ConditionFalse, "CalendarNotUsable")}},
			want: "CalendarNotUsable"},
		{name: "left out", st: ScheduleStatus{Phase: SchedulePhaseScheduled, Conditions: []metav1.Condition{valid, cond(ConditionForbiddenOverlap, metav1.ConditionTrue, ReasonLeftOut)}},
			want: ReasonLeftOut},
		{name: "not compared", st: ScheduleStatus{Phase: SchedulePhaseScheduled, Conditions: []metav1.Condition{valid, cond(ConditionForbiddenOverlap, metav1.ConditionTrue, ReasonNotCompared)}},
			want: ReasonNotCompared},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			if got := stalledReason(t, tc.st.Stalled()); got != tc.want {
				t.Errorf("Stalled reason %q, want %q", got, tc.want)
			}
		})
	}
}
