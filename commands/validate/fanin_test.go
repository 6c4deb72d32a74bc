package validate

import (
	"slices"
	"strings"
	"testing"

	"github.com/google/go-cmp/cmp"

	"github.com/almanac-dev/almanac/api/admission"
)

// TestValidateFanIn: `almanac validate` runs an EventJob's triggers and fanIn through the API
// server's steps (the schema's bounds and CEL rules) and the webhooks' (defaults, the chains
// of EventJob triggers), as the cluster would: each refusal names the field and the fix.
func TestValidateFanIn(t *testing.T) {
	ej := func(name, spec string) string {
		return "---\napiVersion: batch.almanac.dev/v1alpha1\nkind: EventJob\nmetadata: {name: " + name + ", namespace: etl}\nspec:\n" + spec + jobTemplateYAML + "\n"
	}
	sj := func(name string) string {
		return "---\napiVersion: batch.almanac.dev/v1alpha1\nkind: ScheduledJob\nmetadata: {name: " + name + ", namespace: etl}\nspec:\n  schedule: \"0 2 * * *\"" + jobTemplateYAML + "\n"
	}
	three := `  triggers:
  - {kind: ScheduledJob, name: a}
  - {kind: ScheduledJob, name: b}
  - {kind: ScheduledJob, name: c}
`
	var many strings.Builder
	many.WriteString("  triggers:\n")
	for i := range 17 {
		many.WriteString("  - {kind: ScheduledJob, name: s" + string(rune('a'+i)) + "}\n")
	}
	input := sj("a") + sj("b") + sj("c") +
		ej("report", three) +
		ej("both", three+"  trigger: {kind: ScheduledJob, name: a}\n") +
		ej("neither", "  fanIn: {require: AllOf}\n") +
		ej("twice", "  triggers:\n  - {kind: ScheduledJob, name: a}\n  - {kind: ScheduledJob, name: a, type: Failed}\n") +
		ej("window-without", three+"  fanIn: {pairBy: Window}\n") +
		ej("horizon-window", three+"  fanIn: {pairBy: Window, windowSeconds: 600, horizonSeconds: 3600}\n") +
		ej("short-horizon", three+"  fanIn: {horizonSeconds: 30}\n") +
		ej("fanin-single", "  trigger: {kind: ScheduledJob, name: a}\n  fanIn: {require: AnyOf}\n") +
		ej("many", many.String()) +
		ej("loop", "  triggers:\n  - {kind: ScheduledJob, name: a}\n  - {kind: EventJob, name: loop}\n")
	report := validateString(t, input)
	got := map[string]verdictLine{}
	for _, v := range verdicts(report) {
		got[v.Object] = v
	}
	if v := got["EventJob etl/report"]; !v.Allowed || len(v.Warnings) != 0 {
		t.Errorf("report: %+v", v)
	}
	for _, tt := range []struct {
		name  string
		field string
		want  string
	}{
		{"both", "spec", "exactly one of trigger and triggers is required"},
		{"neither", "spec", "exactly one of trigger and triggers is required"},
		{"neither", "spec.fanIn", "fanIn says how the runs of several triggers make a set: set it only with triggers"},
		{"twice", "spec.triggers", "each upstream object may be named once in triggers"},
		{"window-without", "spec.fanIn.windowSeconds", "windowSeconds is how long a set of pairBy Window waits for its runs: set it with pairBy: Window, and only then"},
		{"horizon-window", "spec.fanIn.horizonSeconds", "horizonSeconds is how long a set of one slot waits for its runs: set it only with pairBy: Slot"},
		{"short-horizon", "spec.fanIn.horizonSeconds", "horizonSeconds is at least 60 (a minute): a set waits that long after its slot for a run of each trigger; write 60 or more"},
		{"fanin-single", "spec.fanIn", "set it only with triggers"},
		{"many", "spec.triggers", "must have at most 16 items"},
		{"loop", "spec.triggers[1].name", "an EventJob cannot trigger on itself"},
	} {
		v := got["EventJob etl/"+tt.name]
		if v.Allowed || !slices.ContainsFunc(v.Errors, func(e admission.ResultError) bool { return e.Field == tt.field && strings.Contains(e.Message, tt.want) }) {
			t.Errorf("%s: want a refusal of %s saying %q, got %s", tt.name, tt.field, tt.want, cmp.Diff(nil, v.Errors))
		}
	}
}
