package webhooks_test

import (
	"context"
	"fmt"
	"strings"
	"testing"

	"github.com/google/go-cmp/cmp"

	"github.com/almanac-dev/almanac/api/admission"
	"github.com/almanac-dev/almanac/commands/manifest"
)

// chainLink is the manifest of EventJob prefix<i>, which triggers on EventJob prefix<i-1>, or,
// for i == 1, on first (an EventJob, or a Job when first is not one).
func chainLink(prefix string, i int, first string, firstIsEventJob bool) string {
	kind, trigger := "EventJob", fmt.Sprintf("%s%d", prefix, i-1)
	if i == 1 {
		trigger = first
		if !firstIsEventJob {
			kind = "Job"
		}
	}
	return fmt.Sprintf("\napiVersion: batch.almanac.dev/v1alpha1\nkind: EventJob\nmetadata: {name: %s%d}\nspec:\n  trigger: {kind: %s, name: %s}%s", prefix, i, kind, trigger, jobTemplate)
}

// offlineErrors is what `almanac validate` says of the last of manifests, applied in order to
// namespace ns.
func offlineErrors(t *testing.T, ns string, manifests []string) []admission.ResultError {
	t.Helper()
	docs, err := manifest.Read([]string{"-"}, false, strings.NewReader("---"+strings.Join(manifests, "\n---")))
	if err != nil {
		t.Fatal(err)
	}
	for _, d := range docs {
		d.Object.SetNamespace(ns)
	}
	report, err := admission.Validate(context.Background(), docs, now)
	if err != nil {
		t.Fatal(err)
	}
	return report.Results[len(report.Results)-1].Errors
}

// TestEventJobChainTooLong: the API server, calling the webhooks, refuses the EventJob that
// makes a chain of EventJob triggers longer than MaxTriggerChain (100): the one that closes a
// ring of 101 (a cycle), the 101st of a chain, and one added upstream of a chain of 100 (which
// walking up from it would miss); with the field, the limit, the length found and the fix,
// and the same causes as `almanac validate` gives for the same manifests. A chain of 100 is
// admitted. Before, a ring of 101 was admitted and ran forever.
func TestEventJobChainTooLong(t *testing.T) {
	for _, tt := range []struct {
		name      string
		manifests []string // created in order; all but the last must be admitted
		field     string
		contains  []string
	}{{
		name:      "a ring of 101",
		manifests: links("r", 1, 101, "r101", true),
		field:     "spec.trigger.name",
		contains:  []string{`Invalid value: "r100": this trigger closes a cycle: EventJob "r101" triggers on EventJob "r100"`, "(93 more)", "trigger on an object outside the cycle"},
	}, {
		name:      "the 101st of a chain",
		manifests: links("e", 1, 101, "migrate", false),
		field:     "spec.trigger.name",
		contains:  []string{"is 101 EventJobs long, more than the 100 EventJobs that may trigger one after another", "trigger on an EventJob nearer the start of the chain"},
	}, {
		name:      "an EventJob added upstream of a chain of 100",
		manifests: append(links("e", 2, 101, "", false), chainLink("e", 1, "migrate", false)),
		field:     "metadata.name",
		contains:  []string{`with this EventJob, the chain of EventJob triggers from EventJob "e101", 100 EventJobs below it, would be 101 EventJobs long`, "or give this EventJob another name"},
	}} {
		t.Run(tt.name, func(t *testing.T) {
			ns := newNamespace(t)
			for _, m := range tt.manifests[:len(tt.manifests)-1] {
				mustCreate(t, ns, m)
			}
			_, _, err := create(t, ns, tt.manifests[len(tt.manifests)-1])
			got := causes(t, err)
			if len(got) != 1 || got[0].Field != tt.field {
				t.Fatalf("causes %+v, want one for %s", got, tt.field)
			}
			for _, s := range tt.contains {
				if !strings.Contains(got[0].Message, s) {
					t.Errorf("the cause does not say %q:\n%s", s, got[0].Message)
				}
			}
			offline := offlineErrors(t, ns, tt.manifests)
			live := []admission.ResultError{{Field: got[0].Field, Type: string(got[0].Type), Message: got[0].Message}}
			if diff := cmp.Diff(live, offline); diff != "" {
				t.Errorf("almanac validate differs from the API server (-API server +validate):\n%s", diff)
			}
		})
	}
	t.Run("a chain of 100", func(t *testing.T) {
		ns := newNamespace(t)
		for _, m := range links("e", 1, 100, "migrate", false) {
			mustCreate(t, ns, m)
		}
	})
}

// links returns the manifests of EventJobs prefix<from> … prefix<to> (see chainLink).
func links(prefix string, from, to int, first string, firstIsEventJob bool) []string {
	var out []string
	for i := from; i <= to; i++ {
		out = append(out, chainLink(prefix, i, first, firstIsEventJob))
	}
	return out
}
