package timing

import (
	"context"
	"errors"
	"testing"
)

// TestBudget: steps are spent until none is left; from then on, and once the context is done,
// every Spend returns the same error, which says which.
func TestBudget(t *testing.T) {
	b := NewBudget(context.Background(), 3)
	for i, want := range []error{nil, nil, nil, ErrBudgetSpent, ErrBudgetSpent} {
		if err := b.Spend(1); !errors.Is(err, want) {
			t.Errorf("step %d: %v, want %v", i+1, err, want)
		}
	}
	if b.Spent() != 3 || b.Steps() != 3 || !errors.Is(b.Err(), ErrBudgetSpent) {
		t.Errorf("spent %d of %d, err %v; want 3 of 3, ErrBudgetSpent", b.Spent(), b.Steps(), b.Err())
	}
	if err := NewBudget(context.Background(), 10).Spend(11); !errors.Is(err, ErrBudgetSpent) {
		t.Errorf("11 steps of 10 at once: %v, want ErrBudgetSpent", err)
	}

	// A done context stops a budget with steps left: at the first Spend, and within
	// ctxCheckEvery steps of any later one.
	ctx, cancel := context.WithCancel(context.Background())
	cancel()
	if err := NewBudget(ctx, 100).Spend(1); !errors.Is(err, context.Canceled) {
		t.Errorf("done before the first step: %v, want context.Canceled", err)
	}
	ctx, cancel = context.WithCancel(context.Background())
	b = NewBudget(ctx, 1000)
	if err := b.Spend(1); err != nil {
		t.Fatal(err)
	}
	cancel()
	var err error
	for i := 0; i < ctxCheckEvery+1 && err == nil; i++ {
		err = b.Spend(1)
	}
	if !errors.Is(err, context.Canceled) || errors.Is(err, ErrBudgetSpent) {
		t.Errorf("done after the first step: %v, want context.Canceled within %d steps", err, ctxCheckEvery+1)
	}
}
