package validate

import (
	"fmt"
	"strings"
	"testing"

	"github.com/almanac-dev/almanac/api/admission"
)

// eventJobsYAML writes EventJobs prefix1 … prefixN, each triggering on the one before it and
// prefix1 on first (an EventJob, or kind Job when first is not).
func eventJobsYAML(prefix string, n int, first string, firstIsEventJob bool) string {
	var b strings.Builder
	for i := 1; i <= n; i++ {
		kind, trigger := "EventJob", fmt.Sprintf("%s%d", prefix, i-1)
		if i == 1 {
			trigger = first
			if !firstIsEventJob {
				kind = "Job"
			}
		}
		fmt.Fprintf(&b, "---\napiVersion: batch.almanac.dev/v1alpha1\nkind: EventJob\nmetadata: {name: %s%d}\nspec:\n  trigger: {kind: %s, name: %s}%s\n",
			prefix, i, kind, trigger, jobTemplateYAML)
	}
	return b.String()
}

// TestEventJobChains: chains of EventJob triggers longer than MaxTriggerChain are refused at
// the EventJob that makes them so, with the field, the limit, the length found and the fix;
// chains at the limit are admitted.
func TestEventJobChains(t *testing.T) {
	only := func(r *admission.Report, name string) admission.Result {
		t.Helper()
		for _, res := range r.Results {
			if !res.Allowed && res.Name != name {
				t.Errorf("%s refused too: %+v", res.Name, res.Errors)
			}
		}
		for _, res := range r.Results {
			if res.Name == name {
				return res
			}
		}
		t.Fatalf("no result for %s", name)
		return admission.Result{}
	}
	t.Run("a chain of 100 is admitted", func(t *testing.T) {
		if r := validateString(t, eventJobsYAML("e", 100, "migrate", false)); r.Summary.Rejected != 0 {
			t.Errorf("%d rejected: %+v", r.Summary.Rejected, verdicts(r))
		}
	})
	t.Run("the 101st of a chain is refused", func(t *testing.T) {
		res := only(validateString(t, eventJobsYAML("e", 101, "migrate", false)), "e101")
		want := []admission.ResultError{{Field: "spec.trigger.name", Type: "FieldValueInvalid", Message: `Invalid value: "e100": the chain of EventJob triggers from this EventJob is 101 EventJobs long, ` +
			`more than the 100 EventJobs that may trigger one after another: EventJob "e101" triggers on EventJob "e100", which triggers on EventJob "e99", which triggers on EventJob "e98", ` +
			`which triggers on EventJob "e97", … (92 more) …, which triggers on EventJob "e4", which triggers on EventJob "e3", which triggers on EventJob "e2", which triggers on EventJob "e1"; ` +
			`trigger on an EventJob nearer the start of the chain, or on the Job, CronJob or ScheduledJob that starts it`}}
		if res.Allowed || fmt.Sprint(res.Errors) != fmt.Sprint(want) {
			t.Errorf("errors %+v\nwant %+v", res.Errors, want)
		}
	})
	t.Run("a ring of 101 is a cycle", func(t *testing.T) {
		res := only(validateString(t, eventJobsYAML("r", 101, "r101", true)), "r101")
		if res.Allowed || len(res.Errors) != 1 || res.Errors[0].Field != "spec.trigger.name" ||
			!strings.Contains(res.Errors[0].Message, `this trigger closes a cycle: EventJob "r101" triggers on EventJob "r100"`) ||
			!strings.Contains(res.Errors[0].Message, `(93 more)`) {
			t.Errorf("r101: %+v", res.Errors)
		}
	})
	t.Run("a ring of 150 is too long before it is a cycle", func(t *testing.T) {
		// r1 triggers on r150, which does not exist yet: r101 is the first whose chain is
		// longer than the limit, and it goes on. Without r101, r150 closes no cycle, but it
		// makes r52's chain (through r1) 101 long.
		r := validateString(t, eventJobsYAML("r", 150, "r150", true))
		var refused []string
		for _, res := range r.Results {
			if !res.Allowed {
				refused = append(refused, res.Name+": "+res.Errors[0].Field+": "+res.Errors[0].Message)
			}
		}
		if len(refused) != 2 ||
			!strings.HasPrefix(refused[0], `r101: spec.trigger.name: Invalid value: "r100": the chain of EventJob triggers from this EventJob is at least 101 EventJobs long, more than the 100`) ||
			!strings.Contains(refused[0], `, and so on; trigger on an EventJob nearer`) ||
			!strings.HasPrefix(refused[1], `r150: spec.trigger.name: Invalid value: "r149": with this EventJob, the chain of EventJob triggers from EventJob "r52", 52 EventJobs below it, would be 101 EventJobs long`) {
			t.Errorf("refused:\n%s", strings.Join(refused, "\n"))
		}
	})
	t.Run("an EventJob added upstream of a chain of 100 is refused", func(t *testing.T) {
		// e2 … e101 first (e2 triggers on e1, which does not exist yet), then e1.
		chain := eventJobsYAML("e", 101, "migrate", false)
		i := strings.Index(chain, "---\napiVersion: batch.almanac.dev/v1alpha1\nkind: EventJob\nmetadata: {name: e2}")
		res := only(validateString(t, chain[i:]+chain[:i]), "e1")
		if res.Allowed || len(res.Errors) != 1 || res.Errors[0].Field != "metadata.name" ||
			!strings.HasPrefix(res.Errors[0].Message, `Invalid value: "e1": with this EventJob, the chain of EventJob triggers from EventJob "e101", 100 EventJobs below it, would be 101 EventJobs long, more than the 100`) ||
			!strings.HasSuffix(res.Errors[0].Message, "so that no EventJob is more than 100 from the start, or give this EventJob another name") {
			t.Errorf("e1: %+v", res.Errors)
		}
	})
}
