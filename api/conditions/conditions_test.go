package conditions_test

import (
	"testing"
	"time"

	"github.com/google/go-cmp/cmp"
	"k8s.io/apimachinery/pkg/api/meta"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"

	"github.com/almanac-dev/almanac/api/conditions"
)

func TestStalled(t *testing.T) {
	terminal := []conditions.Terminal{
		{Type: "Ready", Status: metav1.ConditionFalse, Reasons: []string{"Broken", "Gone"}},
		{Type: "Overlap", Status: metav1.ConditionTrue, Reasons: []string{"LeftOut"}},
	}
	cond := func(typ string, status metav1.ConditionStatus, reason string) metav1.Condition {
		return metav1.Condition{Type: typ, Status: status, Reason: reason, Message: typ + " " + reason}
	}
	tests := []struct {
		name  string
		conds []metav1.Condition
		want  *metav1.Condition
	}{
		{name: "none"},
		{name: "ready", conds: []metav1.Condition{cond("Ready", metav1.ConditionTrue, "Fine")}},
		{name: "ready false, reason not terminal", conds: []metav1.Condition{cond("Ready", metav1.ConditionFalse, "Waiting")}},
		{name: "ready false, terminal", conds: []metav1.Condition{cond("Ready", metav1.ConditionFalse, "Gone")},
			want: conditions.StalledBy("Gone", "Ready Gone")},
		{name: "terminal reason in the other status", conds: []metav1.Condition{cond("Overlap", metav1.ConditionFalse, "LeftOut")}},
		{name: "the first in terminal's order wins", conds: []metav1.Condition{cond("Overlap", metav1.ConditionTrue, "LeftOut"), cond("Ready", metav1.ConditionFalse, "Broken")},
			want: conditions.StalledBy("Broken", "Ready Broken")},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			if diff := cmp.Diff(tc.want, conditions.Stalled(tc.conds, terminal...)); diff != "" {
				t.Errorf("(-want +got):\n%s", diff)
			}
		})
	}
}

func TestSetStalled(t *testing.T) {
	t0 := time.Date(2026, 11, 27, 6, 0, 0, 500, time.UTC)
	var conds []metav1.Condition
	conditions.SetStalled(&conds, conditions.StalledBy("Gone", "it is gone"), 3, t0)
	want := []metav1.Condition{{Type: conditions.TypeStalled, Status: metav1.ConditionTrue, Reason: "Gone", Message: "it is gone",
		ObservedGeneration: 3, LastTransitionTime: metav1.NewTime(t0.Truncate(time.Second))}}
	if diff := cmp.Diff(want, conds); diff != "" {
		t.Fatalf("(-want +got):\n%s", diff)
	}
	// Still stalled, for another reason: the transition time stays.
	conditions.SetStalled(&conds, conditions.StalledBy("Broken", "it is broken"), 4, t0.Add(time.Hour))
	got := meta.FindStatusCondition(conds, conditions.TypeStalled)
	if got.Reason != "Broken" || got.ObservedGeneration != 4 || !got.LastTransitionTime.Equal(&want[0].LastTransitionTime) {
		t.Fatalf("got %+v", got)
	}
	// Nothing stalls it: the condition goes (kstatus's abnormal-true convention).
	conditions.SetStalled(&conds, nil, 5, t0.Add(2*time.Hour))
	if len(conds) != 0 {
		t.Fatalf("got %+v, want no condition", conds)
	}
}
