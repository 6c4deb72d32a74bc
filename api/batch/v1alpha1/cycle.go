package v1alpha1

import (
	"fmt"
	"slices"
	"strings"
)

// MaxTriggerChain is the most EventJobs that may follow one another, each triggering on the
// one before it: an EventJob whose chain of EventJob triggers (itself, the EventJob it
// triggers on, that one's, and so on) holds more is refused by admission and starts no Job.
// It bounds the reads that checking a chain takes, and a chain that long is no pipeline
// anyone maintains.
const MaxTriggerChain = 100

// MaxFollowerReads bounds the reads (each a list of the EventJobs that trigger on one
// EventJob) with which admission looks for the EventJobs below a new or changed EventJob,
// whose chains it makes longer. Beyond it admission stops looking; each of those EventJobs
// still checks its own chain before it starts a Job.
const MaxFollowerReads = 1000

// TriggerChainError is what is wrong with an EventJob's chain of EventJob triggers: it is on a
// cycle (Cycle), or it makes a chain longer than MaxTriggerChain (Chain). It is no API type.
//
// +kubebuilder:object:generate=false
type TriggerChainError struct {
	// Cycle lists the names along the cycle that the EventJob is on, starting and ending with
	// its name; nil when the chain is too long instead.
	Cycle []string
	// Chain lists the names along a chain longer than MaxTriggerChain, each triggering on
	// the next: from the EventJob at the chain's lower end (the checked one, or one below
	// it) up to where the walk stopped, at most MaxTriggerChain + 1 names past the checked
	// EventJob's.
	Chain []string
	// Below is how many of Chain's names are below the checked EventJob (it is Chain[Below]).
	Below int
	// Length is the number of EventJobs on Chain that were found, and AtLeast is true when
	// the walk stopped at the limit before the chain's upper end (it may be longer).
	Length  int
	AtLeast bool
}

// LengthText is "101 EventJobs" or "at least 101 EventJobs".
func (e *TriggerChainError) LengthText() string {
	if e.AtLeast {
		return fmt.Sprintf("at least %d EventJobs", e.Length)
	}
	return fmt.Sprintf("%d EventJobs", e.Length)
}

// Error describes the problem, without the fix (admission and the reconciler each say theirs).
func (e *TriggerChainError) Error() string {
	if e.Cycle != nil {
		return "the trigger closes a cycle: " + CycleText(e.Cycle)
	}
	return fmt.Sprintf("the chain of EventJob triggers is %s long, more than the %d allowed: %s", e.LengthText(), MaxTriggerChain, ChainText(e.Chain, e.AtLeast))
}

// CheckTriggerChain is the rule for chains of EventJob triggers, which admission and the
// reconciler both apply: an EventJob's chain (ej, the EventJob it triggers on, that one's, and
// so on, up to a trigger that is not an existing EventJob) must not close a cycle, and must
// hold at most MaxTriggerChain EventJobs. It returns nil when ej's chain keeps the rule.
//
// get reads an EventJob of ej's namespace by name (nil when it does not exist); EventJobs
// being deleted end a chain. It is called at most MaxTriggerChain times.
//
// followers, when not nil, lists the EventJobs of ej's namespace that trigger on the named
// EventJob: admission passes it, because a new or changed EventJob also lengthens the chains
// of the EventJobs below it (an EventJob added upstream of a long chain), and those must keep
// the rule too. It is called at most MaxFollowerReads times, breadth first; when that is not
// enough to see every EventJob within reach, the rest is left to those EventJobs' own checks.
// The reconciler passes nil: each EventJob checks its own chain, read around the cache, before
// it starts a Job.
func CheckTriggerChain(ej *EventJob, get func(name string) (*EventJob, error), followers func(name string) ([]*EventJob, error)) (*TriggerChainError, error) {
	up, problem, err := chainAbove(ej, get)
	if problem != nil || err != nil || followers == nil {
		return problem, err
	}
	return chainBelow(ej, up, followers)
}

// chainAbove walks up from ej and returns its chain (ej's name first), or the problem.
func chainAbove(ej *EventJob, get func(name string) (*EventJob, error)) ([]string, *TriggerChainError, error) {
	path := []string{ej.Name}
	if !ej.TriggersOnEventJob() {
		return path, nil, nil
	}
	seen := map[string]bool{ej.Name: true}
	next := ej.Spec.Trigger.Name
	for {
		if next == ej.Name {
			return nil, &TriggerChainError{Cycle: append(path, next)}, nil
		}
		if seen[next] {
			// A cycle further up, which ej is not on: that cycle's EventJobs start no Job.
			return path, tooLong(path, false), nil
		}
		if len(path) > MaxTriggerChain {
			return nil, tooLong(path, true), nil
		}
		seen[next] = true
		up, err := get(next)
		if err != nil {
			return nil, nil, err
		}
		if up == nil || up.DeletionTimestamp != nil {
			return path, tooLong(path, false), nil
		}
		path = append(path, next)
		if !up.TriggersOnEventJob() {
			return path, tooLong(path, false), nil
		}
		next = up.Spec.Trigger.Name
	}
}

// tooLong returns the problem of the chain up from the checked EventJob, or nil when it is
// within the limit.
func tooLong(chain []string, atLeast bool) *TriggerChainError {
	if len(chain) <= MaxTriggerChain {
		return nil
	}
	return &TriggerChainError{Chain: chain, Length: len(chain), AtLeast: atLeast}
}

// chainBelow looks, breadth first, for an EventJob below ej whose chain through ej (up, ej's
// chain) would be longer than MaxTriggerChain.
func chainBelow(ej *EventJob, up []string, followers func(name string) ([]*EventJob, error)) (*TriggerChainError, error) {
	room := MaxTriggerChain - len(up) // EventJobs that may still be below ej
	parent := map[string]string{}
	seen := map[string]bool{}
	for _, name := range up {
		seen[name] = true
	}
	level, reads := []string{ej.Name}, 0
	for depth := 1; len(level) > 0; depth++ {
		var next []string
		for _, name := range level {
			if reads == MaxFollowerReads {
				return nil, nil
			}
			reads++
			list, err := followers(name)
			if err != nil {
				return nil, err
			}
			slices.SortFunc(list, func(a, b *EventJob) int { return strings.Compare(a.Name, b.Name) })
			for _, f := range list {
				if seen[f.Name] || f.DeletionTimestamp != nil || !f.TriggersOnEventJob() || f.Spec.Trigger.Name != name {
					continue // a cycle (its EventJobs start no Job), or not a follower after all
				}
				seen[f.Name] = true
				parent[f.Name] = name
				if depth > room {
					chain := []string{f.Name}
					for n := name; n != ej.Name; n = parent[n] {
						chain = append(chain, n)
					}
					return &TriggerChainError{Chain: append(chain, up...), Below: depth, Length: depth + len(up)}, nil
				}
				next = append(next, f.Name)
			}
		}
		level = next
	}
	return nil, nil
}

// TriggersOnEventJob reports whether ej's trigger is an EventJob: ej is then on a chain of
// EventJob triggers (CheckTriggerChain).
func (ej *EventJob) TriggersOnEventJob() bool {
	return ej.Spec.Trigger.Kind == TriggerKindEventJob && ej.Spec.Trigger.Group() == GroupVersion.Group
}

// TriggersOnItself reports whether ej's trigger names ej itself, so that each of its Jobs
// would start another one, forever: admission refuses it, and the reconciler starts no Job
// for it.
func (ej *EventJob) TriggersOnItself() bool {
	return ej.TriggersOnEventJob() && ej.Spec.Trigger.Name == ej.Name
}

// TriggerCycle returns the names along the cycle of EventJob triggers that ej is on, starting
// and ending with ej's name, or nil (see CheckTriggerChain, which also checks the chain's
// length).
func TriggerCycle(ej *EventJob, get func(name string) (*EventJob, error)) ([]string, error) {
	problem, err := CheckTriggerChain(ej, get, nil)
	if err != nil || problem == nil {
		return nil, err
	}
	return problem.Cycle, nil
}

// shownLinks is how many EventJobs a cycle or chain text names before it abbreviates.
const shownLinks = 8

// CycleText writes a cycle as `EventJob "a" triggers on EventJob "b", which triggers on
// EventJob "a"`; a long one names its first and last EventJobs and how many are between.
func CycleText(cycle []string) string {
	return linksText(cycle, false)
}

// ChainText writes a chain as CycleText does; open adds that it goes on beyond its last name.
func ChainText(chain []string, open bool) string {
	return linksText(chain, open)
}

func linksText(names []string, open bool) string {
	var b strings.Builder
	fmt.Fprintf(&b, "EventJob %q triggers on EventJob %q", names[0], names[1])
	rest := names[2:]
	if len(names) > shownLinks+2 {
		for _, name := range names[2 : shownLinks/2+1] {
			fmt.Fprintf(&b, ", which triggers on EventJob %q", name)
		}
		fmt.Fprintf(&b, ", … (%d more) …", len(names)-shownLinks-1)
		rest = names[len(names)-shownLinks/2:]
	}
	for _, name := range rest {
		fmt.Fprintf(&b, ", which triggers on EventJob %q", name)
	}
	if open {
		b.WriteString(", and so on")
	}
	return b.String()
}
