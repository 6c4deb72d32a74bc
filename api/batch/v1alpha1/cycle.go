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

// MaxChainReads bounds the reads of EventJobs with which a check walks up from an EventJob
// whose triggers name several EventJobs (fan-in): each EventJob above is read once, and an
// EventJob with more than this many EventJobs above it (its triggers, theirs, and so on) is
// refused by admission and starts no Job. A single chain takes at most MaxTriggerChain.
const MaxChainReads = 1000

// TriggerChainError is what is wrong with an EventJob's chain of EventJob triggers: it is on a
// cycle (Cycle), or it makes a chain longer than MaxTriggerChain (Chain), or more EventJobs
// are above it than a check reads (Unchecked). It is no API type.
//
// +kubebuilder:object:generate=false
type TriggerChainError struct {
	// Cycle lists the names along the cycle that the EventJob is on, starting and ending with
	// its name; nil when the chain is too long instead.
	Cycle []string
	// Chain lists the names along a chain longer than MaxTriggerChain, each triggering on
	// the next: from the EventJob at the chain's lower end (the checked one, or one below
	// it) up to where the walk stopped, at most MaxTriggerChain + 1 names past the checked
	// EventJob's. With several EventJob triggers, it is the longest chain.
	Chain []string
	// Below is how many of Chain's names are below the checked EventJob (it is Chain[Below]).
	Below int
	// Length is the number of EventJobs on Chain that were found, and AtLeast is true when
	// the walk stopped at the limit before the chain's upper end (it may be longer).
	Length  int
	AtLeast bool
	// Unchecked is true when more than MaxChainReads EventJobs are above the checked one.
	Unchecked bool
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
	switch {
	case e.Cycle != nil:
		return "the trigger closes a cycle: " + CycleText(e.Cycle)
	case e.Unchecked:
		return UncheckedText
	}
	return fmt.Sprintf("the chain of EventJob triggers is %s long, more than the %d allowed: %s", e.LengthText(), MaxTriggerChain, ChainText(e.Chain, e.AtLeast))
}

// UncheckedText says what an Unchecked TriggerChainError is.
var UncheckedText = fmt.Sprintf("more than %d EventJobs are above this EventJob (the EventJobs it triggers on, theirs, and so on), more than a check of its chains reads", MaxChainReads)

// CheckTriggerChain is the rule for chains of EventJob triggers, which admission and the
// reconciler both apply: an EventJob's chains (ej, an EventJob it triggers on, one that one
// triggers on, and so on, up to a trigger that is not an existing EventJob) must not close a
// cycle, and the longest must hold at most MaxTriggerChain EventJobs. It returns nil when
// ej's chains keep the rule.
//
// get reads an EventJob of ej's namespace by name (nil when it does not exist); EventJobs
// being deleted end a chain. It is called once per EventJob above ej, at most MaxChainReads
// times, and at most MaxTriggerChain times when each EventJob has one trigger.
//
// followers, when not nil, lists the EventJobs of ej's namespace that trigger on the named
// EventJob: admission passes it, because a new or changed EventJob also lengthens the chains
// of the EventJobs below it (an EventJob added upstream of a long chain), and those must keep
// the rule too. It is called at most MaxFollowerReads times, once per EventJob below; when
// that is not enough to see every EventJob within reach, the rest is left to those EventJobs'
// own checks. The reconciler passes nil: each EventJob checks its own chain, read around the
// cache, before it starts a Job.
func CheckTriggerChain(ej *EventJob, get func(name string) (*EventJob, error), followers func(name string) ([]*EventJob, error)) (*TriggerChainError, error) {
	up, problem, err := chainAbove(ej, get)
	if problem != nil || err != nil || followers == nil {
		return problem, err
	}
	return chainBelow(ej, up, followers)
}

// upWalk walks up from the checked EventJob, depth first, reading each EventJob once.
type upWalk struct {
	get   func(name string) (*EventJob, error)
	reads int
	// longest is the longest chain up from each EventJob read (its name first; nil for one
	// that does not exist or is being deleted).
	longest map[string][]string
}

// chainAbove walks up from ej and returns its longest chain (ej's name first), or the
// problem.
func chainAbove(ej *EventJob, get func(name string) (*EventJob, error)) ([]string, *TriggerChainError, error) {
	w := &upWalk{get: get, longest: map[string][]string{}}
	path, problem, err := w.visit(ej, []string{ej.Name})
	if problem != nil || err != nil {
		return nil, problem, err
	}
	return path, tooLong(path, false), nil
}

// visit returns the longest chain up from e, the last of stack (the names from the checked
// EventJob up to e).
func (w *upWalk) visit(e *EventJob, stack []string) ([]string, *TriggerChainError, error) {
	best := []string{e.Name}
	for _, name := range e.EventJobTriggerNames() {
		if name == stack[0] {
			return nil, &TriggerChainError{Cycle: append(slices.Clone(stack), name)}, nil
		}
		if slices.Contains(stack, name) {
			// A cycle further up, which the checked EventJob is not on: that cycle's
			// EventJobs start no Job.
			continue
		}
		if len(stack) > MaxTriggerChain {
			return nil, tooLong(slices.Clone(stack), true), nil
		}
		up, done := w.longest[name]
		if !done {
			if w.reads == MaxChainReads {
				return nil, &TriggerChainError{Unchecked: true}, nil
			}
			w.reads++
			next, err := w.get(name)
			if err != nil {
				return nil, nil, err
			}
			if next != nil && next.DeletionTimestamp == nil {
				var problem *TriggerChainError
				if up, problem, err = w.visit(next, append(stack, name)); problem != nil || err != nil {
					return nil, problem, err
				}
			}
			w.longest[name] = up
		}
		if len(up)+1 > len(best) {
			best = append([]string{e.Name}, up...)
		}
	}
	return best, nil, nil
}

// tooLong returns the problem of the chain up from the checked EventJob, or nil when it is
// within the limit.
func tooLong(chain []string, atLeast bool) *TriggerChainError {
	if len(chain) <= MaxTriggerChain {
		return nil
	}
	return &TriggerChainError{Chain: chain, Length: len(chain), AtLeast: atLeast}
}

// downWalk walks down from the checked EventJob, depth first, listing the followers of each
// EventJob once.
type downWalk struct {
	followers func(name string) ([]*EventJob, error)
	reads     int
	// room is how many EventJobs may be below the checked one.
	room int
	// longest is the longest chain below each EventJob listed, from the one that triggers on
	// it down to the lowest.
	longest map[string][]string
	// stop is set once the reads are used up: what was not seen is left to those EventJobs'
	// own checks.
	stop bool
}

// chainBelow looks for an EventJob below ej whose chain through ej (up, ej's longest chain)
// would be longer than MaxTriggerChain.
func chainBelow(ej *EventJob, up []string, followers func(name string) ([]*EventJob, error)) (*TriggerChainError, error) {
	w := &downWalk{followers: followers, room: MaxTriggerChain - len(up), longest: map[string][]string{}}
	below, err := w.visit(ej.Name, up)
	if err != nil || len(below) <= w.room {
		return nil, err
	}
	chain := slices.Clone(below)
	slices.Reverse(chain)
	return &TriggerChainError{Chain: append(chain, up...), Below: len(below), Length: len(below) + len(up)}, nil
}

// visit returns the longest chain below name (the EventJob that triggers on it first), stack
// being the names from name up (never followed again: a cycle, whose EventJobs start no Job).
// It stops as soon as a chain is longer than the room.
func (w *downWalk) visit(name string, stack []string) ([]string, error) {
	if w.reads == MaxFollowerReads {
		w.stop = true
		return nil, nil
	}
	w.reads++
	list, err := w.followers(name)
	if err != nil {
		return nil, err
	}
	slices.SortFunc(list, func(a, b *EventJob) int { return strings.Compare(a.Name, b.Name) })
	var best []string
	depth := len(stack) - (MaxTriggerChain - w.room) // how many of stack are below the checked EventJob
	for _, f := range list {
		if w.stop {
			break
		}
		if slices.Contains(stack, f.Name) || f.DeletionTimestamp != nil || !slices.Contains(f.EventJobTriggerNames(), name) {
			continue // a cycle (its EventJobs start no Job), or not a follower after all
		}
		below, done := w.longest[f.Name]
		if !done && depth < w.room {
			if below, err = w.visit(f.Name, append([]string{f.Name}, stack...)); err != nil {
				return nil, err
			}
			w.longest[f.Name] = below
		}
		if len(below)+1 > len(best) {
			best = append([]string{f.Name}, below...)
		}
		if depth+len(best) > w.room {
			break // too long already
		}
	}
	return best, nil
}

// EventJobTriggerNames returns the names of the EventJobs that ej's triggers name, each once,
// in the order of its triggers: ej is on a chain of EventJob triggers (CheckTriggerChain)
// when there is one.
func (ej *EventJob) EventJobTriggerNames() []string {
	var out []string
	for _, t := range ej.TriggerList() {
		if t.Kind == TriggerKindEventJob && t.Group() == GroupVersion.Group && !slices.Contains(out, t.Name) {
			out = append(out, t.Name)
		}
	}
	return out
}

// TriggersOnEventJob reports whether one of ej's triggers is an EventJob: ej is then on a
// chain of EventJob triggers (CheckTriggerChain).
func (ej *EventJob) TriggersOnEventJob() bool {
	return len(ej.EventJobTriggerNames()) > 0
}

// TriggersOnItself reports whether a trigger of ej names ej itself, so that each of its Jobs
// would start another one, forever: admission refuses it, and the reconciler starts no Job
// for it.
func (ej *EventJob) TriggersOnItself() bool {
	return slices.Contains(ej.EventJobTriggerNames(), ej.Name)
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
