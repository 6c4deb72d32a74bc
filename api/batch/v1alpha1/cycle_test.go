package v1alpha1

import (
	"testing"

	"github.com/google/go-cmp/cmp"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
)

func TestTriggerCycle(t *testing.T) {
	ej := func(name string, kind TriggerKind, trigger string) *EventJob {
		return &EventJob{ObjectMeta: metav1.ObjectMeta{Name: name}, Spec: EventJobSpec{Trigger: Trigger{Kind: kind, Name: trigger}}}
	}
	all := map[string]*EventJob{
		"a": ej("a", TriggerKindEventJob, "b"),
		"b": ej("b", TriggerKindEventJob, "c"),
		"c": ej("c", TriggerKindEventJob, "a"),
		"d": ej("d", TriggerKindEventJob, "a"), // leads into the cycle, is not on it
		"e": ej("e", TriggerKindCronJob, "hello"),
		"f": ej("f", TriggerKindEventJob, "e"),
		"g": ej("g", TriggerKindEventJob, "missing"),
	}
	get := func(name string) (*EventJob, error) { return all[name], nil }
	for _, tt := range []struct {
		name string
		want []string
	}{
		{"a", []string{"a", "b", "c", "a"}},
		{"c", []string{"c", "a", "b", "c"}},
		{"d", nil},
		{"e", nil},
		{"f", nil},
		{"g", nil},
	} {
		got, err := TriggerCycle(all[tt.name], get)
		if err != nil {
			t.Fatal(err)
		}
		if diff := cmp.Diff(tt.want, got); diff != "" {
			t.Errorf("TriggerCycle(%s) (-want +got):\n%s", tt.name, diff)
		}
	}
	if got := CycleText([]string{"a", "b", "c", "a"}); got != `EventJob "a" triggers on EventJob "b", which triggers on EventJob "c", which triggers on EventJob "a"` {
		t.Errorf("CycleText = %s", got)
	}
}
