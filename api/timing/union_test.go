package timing

import (
	"context"
	"errors"
	"testing"
	"time"
)

func TestUnion(t *testing.T) {
	compile := func(s Spec) *Window {
		w, errs := s.Compile()
		if len(errs) > 0 {
			t.Fatal(errs)
		}
		return w
	}
	at := func(s string) time.Time {
		v, err := time.Parse(time.RFC3339, s)
		if err != nil {
			t.Fatal(err)
		}
		return v
	}
	nights := compile(Spec{Type: TypeDaily, StartTime: "20:00", EndTime: "23:00", TimeZone: "UTC"})
	late := compile(Spec{Type: TypeDaily, StartTime: "23:00", EndTime: "07:00", TimeZone: "UTC"})
	u := Union{nights, late, nil}

	if !u.Open(at("2027-03-01T21:00:00Z")) || u.Open(at("2027-03-01T12:00:00Z")) {
		t.Error("Open")
	}
	// Touching windows carry the stretch on: 21:00 → the next 07:00.
	end, ok, err := u.OpenUntil(NewBudget(context.Background(), 100), at("2027-03-01T21:00:00Z"))
	if err != nil || !ok || !end.Equal(at("2027-03-02T07:00:00Z")) {
		t.Errorf("OpenUntil = %v, %v, %v", end, ok, err)
	}
	// Closed at t: t itself.
	end, ok, _ = u.OpenUntil(NewBudget(context.Background(), 100), at("2027-03-01T12:00:00Z"))
	if !ok || !end.Equal(at("2027-03-01T12:00:00Z")) {
		t.Errorf("OpenUntil closed = %v", end)
	}
	next, ok := u.NextOpen(at("2027-03-01T12:00:00Z"))
	if !ok || !next.Equal(at("2027-03-01T20:00:00Z")) {
		t.Errorf("NextOpen = %v", next)
	}
	next, _ = u.NextOpen(at("2027-03-01T22:00:00Z"))
	if !next.Equal(at("2027-03-01T22:00:00Z")) {
		t.Errorf("NextOpen while open = %v", next)
	}
	// Two windows that cover every instant never close: the budget stops the walk.
	always := Union{compile(Spec{Type: TypeDaily, StartTime: "00:00", EndTime: "12:00", TimeZone: "UTC"}),
		compile(Spec{Type: TypeDaily, StartTime: "12:00", EndTime: "00:00", TimeZone: "UTC"})}
	if _, _, err := always.OpenUntil(NewBudget(context.Background(), 50), at("2027-03-01T12:00:00Z")); !errors.Is(err, ErrBudgetSpent) {
		t.Errorf("always open: %v, want the budget spent", err)
	}
	if _, ok := (Union{}).NextOpen(at("2027-03-01T12:00:00Z")); ok {
		t.Error("an empty union opens")
	}
}
