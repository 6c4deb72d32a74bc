package timing

import (
	"context"
	"errors"
	"fmt"
)

// Budget is the work a caller lets walks over time do on its behalf: a number of steps and
// the context of the request or reconcile it serves. Each walk says what one of its steps is
// (a comparison of two windows, a stretch of a timeline, a slot counted) and spends them from
// the budget; when the steps are spent or the context is done, the walk stops and returns
// what stopped it, so that the caller can answer clearly instead of working on for a request
// that nobody waits for. A budget is not safe for concurrent use.
//
// The steps a walk spends depend only on its input, never on how fast the machine is or on
// what the engine's memos hold, so that the webhooks, the reconcilers and the CLI, given the
// same objects and the same budget, stop at the same place.
type Budget struct {
	ctx   context.Context
	steps int
	left  int
	err   error
	// unchecked counts the steps spent since the context was last looked at.
	unchecked int
}

// ErrBudgetSpent is the error of a walk that stopped because its budget's steps were spent.
var ErrBudgetSpent = errors.New("the work budget is spent")

// ctxCheckEvery is how many steps pass between two looks at the context.
const ctxCheckEvery = 64

// NewBudget returns a budget of steps (at least 0) that also stops once ctx is done.
func NewBudget(ctx context.Context, steps int) *Budget {
	return &Budget{ctx: ctx, steps: max(steps, 0), left: max(steps, 0)}
}

// Spend takes n steps. It returns nil while the budget lasts; once it does not, it returns,
// now and at every later call, an error that wraps ErrBudgetSpent or the context's error.
func (b *Budget) Spend(n int) error {
	if b.err != nil {
		return b.err
	}
	if b.unchecked == 0 || b.unchecked+n > ctxCheckEvery {
		if b.ctx.Err() != nil {
			b.err = fmt.Errorf("stopped: %w", context.Cause(b.ctx))
			return b.err
		}
		b.unchecked = 0
	}
	b.unchecked += max(n, 1)
	b.left -= n
	if b.left < 0 {
		b.err = fmt.Errorf("%w (%d steps)", ErrBudgetSpent, b.steps)
		return b.err
	}
	return nil
}

// Err returns what stopped the budget's walks: nil while it lasts, otherwise the error that
// Spend returned.
func (b *Budget) Err() error { return b.err }

// Spent returns the steps spent so far.
func (b *Budget) Spent() int { return b.steps - max(b.left, 0) }

// Steps returns the steps the budget started with.
func (b *Budget) Steps() int { return b.steps }
