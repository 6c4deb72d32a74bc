// Package putback is the one rule for what almanac does when another field manager (a Helm
// upgrade, an Argo CD or Flux sync, a person with kubectl) changes a field that almanac owns:
// an attached ScheduledPodAutoscaler's target bounds, or a slept workload's replicas,
// suspension or pause. almanac puts its value back, with an event that names the other
// manager; after Max put-backs within Window it stops writing and says so with a condition
// that names the manager, the object and the field, and the fix (docs/gitops.md), until the
// spec of its object changes. So almanac never fights a GitOps tool forever, and a one-off
// change (a hand edit, one sync) is undone.
package putback

import (
	"encoding/json"
	"slices"
	"time"

	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
)

// The rule's bounds.
const (
	// Max is how many put-backs within Window almanac makes; the next change by another
	// manager within Window is left in place.
	Max = 3
	// Window is the stretch of time over which put-backs are counted.
	Window = 5 * time.Minute
)

// Count returns the put-backs of times (instants of earlier put-backs) that fall within
// Window before now, with one more at now, and whether that one is still allowed (at most
// Max within Window).
func Count(times []time.Time, now time.Time) (recent []time.Time, allowed bool) {
	recent = slices.DeleteFunc(append(slices.Clone(times), now), func(t time.Time) bool {
		return now.Sub(t) >= Window
	})
	return recent, len(recent) <= Max
}

// OtherManagers returns the field managers other than self that own the field at path (of an
// object with these managedFields entries: spec.replicas, say), sorted: who changed it.
func OtherManagers(entries []metav1.ManagedFieldsEntry, self string, path []string) []string {
	return ChangedSince(entries, self, path, time.Time{})
}

// ChangedSinceOwn is OtherManagers of the entries written no earlier than self's latest
// entry: a manager that owned the field before self last wrote the object, and has not
// written since, did not change it (self's write of another field, such as a record
// annotation written before the field itself, left it its owner). Both times are the API
// server's, in whole seconds; one of the same second counts as later.
func ChangedSinceOwn(entries []metav1.ManagedFieldsEntry, self string, path []string) []string {
	var since time.Time
	for _, e := range entries {
		if e.Manager == self && e.Time != nil && e.Time.After(since) {
			since = e.Time.Time
		}
	}
	return ChangedSince(entries, self, path, since)
}

// ChangedSince is OtherManagers of the entries written at or after since (zero: all).
func ChangedSince(entries []metav1.ManagedFieldsEntry, self string, path []string, since time.Time) []string {
	var out []string
	for _, e := range entries {
		if e.Manager == self || e.FieldsV1 == nil {
			continue
		}
		if !since.IsZero() && e.Time != nil && e.Time.Time.Before(since) {
			continue
		}
		var tree map[string]any
		if json.Unmarshal(e.FieldsV1.GetRawBytes(), &tree) != nil {
			continue
		}
		node, ok := any(tree), true
		for _, p := range path {
			m, isMap := node.(map[string]any)
			if !isMap {
				ok = false
				break
			}
			if node, ok = m["f:"+p]; !ok {
				break
			}
		}
		if ok && !slices.Contains(out, e.Manager) {
			out = append(out, e.Manager)
		}
	}
	slices.Sort(out)
	return out
}
