package v1alpha1

import (
	"fmt"
	"strings"
)

// MaxTriggerChain bounds how far TriggerCycle follows EventJob → EventJob triggers.
const MaxTriggerChain = 100

// TriggerCycle follows the EventJob → EventJob triggers from ej, reading each upstream
// EventJob in ej's namespace with get (which returns nil for one that does not exist), and
// returns the names along the cycle that ej is on, starting and ending with ej's name, or nil
// when the chain ends elsewhere, or closes a cycle further up that ej is not on. EventJobs
// being deleted end the chain.
//
// The validating webhook rejects a trigger that closes a cycle; the reconciler applies the
// same rule to the EventJobs that exist, so that EventJobs admitted concurrently (admission
// reads a cache) never start a Job along a cycle.
func TriggerCycle(ej *EventJob, get func(name string) (*EventJob, error)) ([]string, error) {
	if ej.Spec.Trigger.Kind != TriggerKindEventJob || ej.Spec.Trigger.Group() != GroupVersion.Group {
		return nil, nil
	}
	path := []string{ej.Name}
	seen := map[string]bool{ej.Name: true}
	next := ej.Spec.Trigger.Name
	for range MaxTriggerChain {
		path = append(path, next)
		if next == ej.Name {
			return path, nil
		}
		if seen[next] {
			return nil, nil // a cycle further up the chain, which ej is not on
		}
		seen[next] = true
		up, err := get(next)
		if err != nil {
			return nil, err
		}
		if up == nil || up.DeletionTimestamp != nil || up.Spec.Trigger.Kind != TriggerKindEventJob || up.Spec.Trigger.Group() != GroupVersion.Group {
			return nil, nil
		}
		next = up.Spec.Trigger.Name
	}
	return nil, nil
}

// CycleText writes a cycle as `EventJob "a" triggers on EventJob "b", which triggers on
// EventJob "a"`.
func CycleText(cycle []string) string {
	var b strings.Builder
	fmt.Fprintf(&b, "EventJob %q triggers on EventJob %q", cycle[0], cycle[1])
	for _, name := range cycle[2:] {
		fmt.Fprintf(&b, ", which triggers on EventJob %q", name)
	}
	return b.String()
}
