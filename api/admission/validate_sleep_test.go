package admission

import (
	"context"
	"encoding/json"
	"strings"
	"testing"
	"time"

	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"
	"sigs.k8s.io/yaml"
)

func sleepDocs(t *testing.T, manifests ...string) []Document {
	t.Helper()
	var docs []Document
	for i, m := range manifests {
		raw, err := yaml.YAMLToJSON([]byte(m))
		if err != nil {
			t.Fatal(err)
		}
		u := &unstructured.Unstructured{}
		if err := json.Unmarshal(raw, &u.Object); err != nil {
			t.Fatal(err)
		}
		docs = append(docs, Document{File: "sleep.yaml", Index: i, Object: u, Raw: raw})
	}
	return docs
}

// TestSleepAdmission: what admission stores of a Sleep and a ClusterSleep, and what it
// refuses, by field, with the limit and the fix.
func TestSleepAdmission(t *testing.T) {
	now := time.Date(2027, 3, 1, 12, 0, 0, 0, time.UTC)
	const head = "apiVersion: almanac.dev/v1alpha1\nkind: Sleep\nmetadata: {name: nights, namespace: dev}\n"
	for _, tc := range []struct {
		name, manifest string
		// errs are substrings "field: message" of the refusal; none: admitted.
		errs []string
	}{
		{"nights, defaulted", head + "spec:\n  asleep: [{type: Daily, startTime: '20:00', endTime: '7:00', timeZone: europe/berlin}]\n", nil},
		{"neither asleep nor awake", head + "spec: {selector: {matchLabels: {a: b}}}\n", []string{"exactly one of asleep"}},
		{"both", head + "spec:\n  asleep: [{type: Daily, startTime: '20:00', endTime: '07:00'}]\n  awake: [{type: Daily, startTime: '07:00', endTime: '20:00'}]\n", []string{"exactly one of asleep"}},
		{"a bad zone", head + "spec:\n  asleep: [{type: Daily, startTime: '20:00', endTime: '07:00', timeZone: Mars/Olympus}]\n", []string{"spec.asleep[0].timeZone"}},
		{"an empty zone", head + "spec:\n  asleep: [{type: Daily, startTime: '20:00', endTime: '07:00', timeZone: ''}]\n", []string{"timeZone is empty"}},
		{"a OneShot in the past", head + "spec:\n  asleep: [{type: OneShot, startTime: '2026-01-01T20:00', endTime: '2026-01-02T07:00'}]\n", []string{"spec.asleep[0].endTime"}},
		{"too many windows", head + "spec:\n  asleep: [" + strings.Repeat("{type: Daily, startTime: '20:00', endTime: '07:00'},", 17) + "]\n", []string{"spec.asleep"}},
		// Two Cron windows that take turns every minute, for good: more intervals than the
		// reconciler walks to find the end of a sleep.
		{"windows that never stop taking turns", head + "spec:\n  asleep: [{type: Cron, schedule: '0-58/2 * * * *', duration: 1m}, {type: Cron, schedule: '1-59/2 * * * *', duration: 1m}]\n",
			[]string{"spec.asleep", "more intervals than almanac walks"}},
		{"a DaemonSet", head + "spec:\n  asleep: [{type: Daily, startTime: '20:00', endTime: '07:00'}]\n  kinds: [{apiVersion: apps/v1, kind: DaemonSet}]\n",
			[]string{"spec.kinds[0]", "no replicas"}},
		{"a kind twice", head + "spec:\n  asleep: [{type: Daily, startTime: '20:00', endTime: '07:00'}]\n  kinds: [{apiVersion: apps/v1, kind: Deployment}, {apiVersion: apps/v1beta2, kind: Deployment}]\n",
			[]string{"spec.kinds[1]"}},
		{"a huge selector", head + "spec:\n  asleep: [{type: Daily, startTime: '20:00', endTime: '07:00'}]\n  selector: {matchExpressions: [{key: app, operator: In, values: [" +
			strings.Repeat("x,", 40) + "z]}]}\n", []string{"spec.selector", "at most 32"}},
		{"too many tiers", head + "spec:\n  asleep: [{type: Daily, startTime: '20:00', endTime: '07:00'}]\n  wake: {tiers: [" +
			strings.Repeat("{name: t, selector: {matchLabels: {a: b}}},", 9) + "]}\n", []string{"spec.wake.tiers"}},
		{"tier names twice", head + "spec:\n  asleep: [{type: Daily, startTime: '20:00', endTime: '07:00'}]\n  wake: {tiers: [{name: db, selector: {}}, {name: db, selector: {}}]}\n",
			[]string{"spec.wake.tiers[1].name"}},
		{"a lead beyond a day", head + "spec:\n  asleep: [{type: Daily, startTime: '20:00', endTime: '07:00'}]\n  wake: {lead: {max: 48h}}\n", []string{"spec.wake.lead.max"}},
		{"a fixed lead above the maximum", head + "spec:\n  asleep: [{type: Daily, startTime: '20:00', endTime: '07:00'}]\n  wake: {lead: {fixed: 2h}}\n", []string{"spec.wake.lead.fixed"}},
		{"a pace of 0", head + "spec:\n  asleep: [{type: Daily, startTime: '20:00', endTime: '07:00'}]\n  wake: {podsPerMinute: 0}\n", []string{"spec.wake.podsPerMinute"}},
		{"a ClusterSleep without namespaces", "apiVersion: almanac.dev/v1alpha1\nkind: ClusterSleep\nmetadata: {name: all}\nspec:\n  asleep: [{type: Daily, startTime: '20:00', endTime: '07:00'}]\n",
			[]string{"at least one of namespaceSelector and namespaces"}},
		{"a ClusterSleep naming a Calendar", "apiVersion: almanac.dev/v1alpha1\nkind: ClusterSleep\nmetadata: {name: all}\nspec:\n  namespaceSelector: {}\n" +
			"  awake: [{type: Daily, startTime: '07:00', endTime: '19:00'}]\n  calendars: {skip: [{name: holidays}]}\n", []string{"ClusterCalendars only"}},
		{"a ClusterSleep with a bad namespace", "apiVersion: almanac.dev/v1alpha1\nkind: ClusterSleep\nmetadata: {name: all}\nspec:\n  namespaces: [Dev_1]\n" +
			"  awake: [{type: Daily, startTime: '07:00', endTime: '19:00'}]\n", []string{"spec.namespaces[0]"}},
	} {
		t.Run(tc.name, func(t *testing.T) {
			report, err := Validate(context.Background(), sleepDocs(t, tc.manifest), now)
			if err != nil {
				t.Fatal(err)
			}
			r := report.Results[0]
			var got []string
			for _, e := range r.Errors {
				got = append(got, e.Field+": "+e.Message)
			}
			text := strings.Join(got, "\n")
			if len(tc.errs) == 0 {
				if !r.Allowed {
					t.Fatalf("refused:\n%s", text)
				}
				return
			}
			if r.Allowed {
				t.Fatalf("admitted, want %v", tc.errs)
			}
			for _, want := range tc.errs {
				if !strings.Contains(text, want) {
					t.Errorf("refusal does not say %q:\n%s", want, text)
				}
			}
		})
	}
}

func TestSleepDefaults(t *testing.T) {
	now := time.Date(2027, 3, 1, 12, 0, 0, 0, time.UTC)
	report, err := Validate(context.Background(), sleepDocs(t, "apiVersion: almanac.dev/v1alpha1\nkind: Sleep\nmetadata: {name: nights, namespace: dev}\n"+
		"spec:\n  asleep: [{type: Daily, startTime: '20:00', endTime: '7:00', daysOfWeek: [fri, mon], timeZone: europe/berlin}]\n"), now)
	if err != nil {
		t.Fatal(err)
	}
	r := report.Results[0]
	if !r.Allowed {
		t.Fatal(r.Errors)
	}
	spec := r.Defaulted["spec"].(map[string]any)
	w := spec["asleep"].([]any)[0].(map[string]any)
	if w["timeZone"] != "Europe/Berlin" || w["endTime"] != "07:00" || w["daysOfWeek"].([]any)[0] != "Monday" {
		t.Errorf("window stored as %v", w)
	}
	if kinds := spec["kinds"].([]any); len(kinds) != 7 {
		t.Errorf("kinds stored as %v, want the seven default kinds", kinds)
	}
	if spec["wake"].(map[string]any)["lead"].(map[string]any)["mode"] != "Auto" {
		t.Errorf("lead stored as %v", spec["wake"])
	}
}

// TestSleepSelectingNothingWarns: a selector that selects no workload of the sleep's kinds is
// admitted with a warning (the workloads may come later); one that selects a workload of the
// input is not warned about.
func TestSleepSelectingNothingWarns(t *testing.T) {
	now := time.Date(2027, 3, 1, 12, 0, 0, 0, time.UTC)
	sleep := "apiVersion: almanac.dev/v1alpha1\nkind: Sleep\nmetadata: {name: nights, namespace: dev}\n" +
		"spec:\n  asleep: [{type: Daily, startTime: '20:00', endTime: '07:00'}]\n  selector: {matchLabels: {team: a}}\n"
	deployment := "apiVersion: apps/v1\nkind: Deployment\nmetadata: {name: web, namespace: dev, labels: {team: a}}\n" +
		"spec: {selector: {matchLabels: {app: web}}, template: {metadata: {labels: {app: web}}, spec: {containers: [{name: c, image: x}]}}}\n"
	for _, tc := range []struct {
		name string
		docs []string
		warn bool
	}{
		{"alone", []string{sleep}, true},
		{"with a Deployment it selects", []string{deployment, sleep}, false},
	} {
		t.Run(tc.name, func(t *testing.T) {
			report, err := Validate(context.Background(), sleepDocs(t, tc.docs...), now)
			if err != nil {
				t.Fatal(err)
			}
			r := report.Results[0]
			warned := strings.Contains(strings.Join(r.Warnings, "\n"), "spec.selector: no Deployment, StatefulSet")
			if !r.Allowed || warned != tc.warn {
				t.Errorf("allowed %v, warnings %q; want a warning: %v", r.Allowed, r.Warnings, tc.warn)
			}
		})
	}
}
