package v1alpha1

import (
	"testing"

	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
)

func TestScheduledJobStalled(t *testing.T) {
	cond := func(typ string, status metav1.ConditionStatus, reason string) metav1.Condition {
		return metav1.Condition{Type: typ, Status: status, Reason: reason, Message: reason + " says why"}
	}
	tests := []struct {
		name string
		st   ScheduledJobStatus
		want string // the Stalled reason; "" not stalled
	}{
		{name: "new"},
		{name: "scheduled", st: ScheduledJobStatus{Phase: ScheduledJobPhasePending, Conditions: []metav1.Condition{cond(ConditionReady, metav1.ConditionTrue, ReasonScheduled)}}},
		{name: "suspended", st: ScheduledJobStatus{Conditions: []metav1.Condition{cond(ConditionReady, metav1.ConditionTrue, ReasonSuspended)}}},
		{name: "run-now refused", st: ScheduledJobStatus{Conditions: []metav1.Condition{
			cond(ConditionReady, metav1.ConditionTrue, ReasonScheduled), cond(ConditionRunNow, metav1.ConditionFalse, ReasonRunNowRefused)}}},
		{name: "one-shot succeeded", st: ScheduledJobStatus{Phase: ScheduledJobPhaseSucceeded, Conditions: []metav1.Condition{cond(ConditionReady, metav1.ConditionTrue, ReasonCompleted)}}},
		{name: "one-shot skipped", st: ScheduledJobStatus{Phase: ScheduledJobPhaseSkipped}},
		{name: "invalid schedule", st: ScheduledJobStatus{Conditions: []metav1.Condition{cond(ConditionReady, metav1.ConditionFalse, ReasonInvalidSchedule)}}, want: ReasonInvalidSchedule},
		{name: "job conflict", st: ScheduledJobStatus{Conditions: []metav1.Condition{cond(ConditionReady, metav1.ConditionFalse, ReasonJobConflict)}}, want: ReasonJobConflict},
		{name: "calendar not usable", st: ScheduledJobStatus{Conditions: []metav1.Condition{
			cond(ConditionReady, metav1.ConditionTrue, ReasonScheduled), cond("Calendars", metav1.ConditionFalse, "CalendarNotUsable")}}, want: "CalendarNotUsable"},
		{name: "one-shot failed", st: ScheduledJobStatus{Phase: ScheduledJobPhaseFailed, Conditions: []metav1.Condition{cond(ConditionReady, metav1.ConditionTrue, ReasonCompleted)}},
			want: ReasonOneShotFailed},
		{name: "one-shot missed", st: ScheduledJobStatus{Phase: ScheduledJobPhaseMissed}, want: ReasonOneShotMissed},
		{name: "a Job failure wins over the phase", st: ScheduledJobStatus{Phase: ScheduledJobPhaseMissed, Conditions: []metav1.Condition{
			cond(ConditionReady, metav1.ConditionFalse, ReasonJobInvalid)}}, want: ReasonJobInvalid},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			got := ""
			if c := tc.st.Stalled(); c != nil {
				if c.Type != "Stalled" || c.Status != metav1.ConditionTrue || c.Message == "" {
					t.Fatalf("got %+v, want Stalled True with a message", c)
				}
				got = c.Reason
			}
			if got != tc.want {
				t.Errorf("Stalled reason %q, want %q", got, tc.want)
			}
		})
	}
}

func TestEventJobStalled(t *testing.T) {
	for reason, want := range map[string]bool{
		ReasonWatching: false, ReasonSuspended: false,
		ReasonInvalidTrigger: true, ReasonJobConflict: true, ReasonJobInvalid: true, ReasonJobNameTooLong: true,
	} {
		status := metav1.ConditionFalse
		if !want {
			status = metav1.ConditionTrue
		}
		st := EventJobStatus{Conditions: []metav1.Condition{{Type: ConditionReady, Status: status, Reason: reason, Message: "m"}}}
		if got := st.Stalled() != nil; got != want {
			t.Errorf("Ready %s %s: stalled %t, want %t", status, reason, got, want)
		}
	}
}
