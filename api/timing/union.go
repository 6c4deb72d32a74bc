package timing

import "time"

// Union is a set of windows that is open at an instant when any one of them is: the asleep
// (or awake) windows of a sleep. A nil window is never open. Its walks spend one step of their
// budget for each interval of a window they look at, so that a caller bounds them with the
// number of windows it admits.
type Union []*Window

// Open reports whether any window is open at t.
func (u Union) Open(t time.Time) bool {
	for _, w := range u {
		if w == nil {
			continue
		}
		if _, ok := w.ActiveAt(t); ok {
			return true
		}
	}
	return false
}

// NextOpen returns the earliest instant at or after t at which a window is open (t itself
// when one is open at t); false when no window opens again within the engine's search
// horizon.
func (u Union) NextOpen(t time.Time) (time.Time, bool) {
	var next time.Time
	found := false
	for _, w := range u {
		if w == nil {
			continue
		}
		iv, ok := w.NextInterval(t)
		if !ok {
			continue
		}
		start := iv.Start
		if start.Before(t) {
			start = t
		}
		if !found || start.Before(next) {
			next, found = start, true
		}
	}
	return next, found
}

// OpenUntil returns the end of the stretch during which the union stays open without a break,
// starting at t: the first instant at or after t at which no window is open (t itself when
// none is open at t). Windows that touch or overlap carry the stretch on. It spends a step for
// each interval it looks at and stops with the budget's error once that is spent: a union
// always open (a Daily 00:00 to 00:00 is refused; two windows can still cover every instant)
// would walk to the end of the search horizon. ok is false when the stretch reaches past the
// search horizon: it does not end.
func (u Union) OpenUntil(budget *Budget, t time.Time) (end time.Time, ok bool, err error) {
	end = t
	horizon := t.Add(searchHorizon)
	for {
		moved := false
		for _, w := range u {
			if w == nil {
				continue
			}
			iv, active := w.ActiveAt(end)
			if !active {
				continue
			}
			if err := budget.Spend(1); err != nil {
				return time.Time{}, false, err
			}
			if iv.End.After(end) {
				end, moved = iv.End, true
			}
		}
		if !moved {
			return end, true, nil
		}
		if end.After(horizon) {
			return time.Time{}, false, nil
		}
	}
}
