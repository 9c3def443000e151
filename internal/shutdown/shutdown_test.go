package shutdown

import (
	"context"
	"errors"
	"testing"
)

func TestRun(t *testing.T) {
	h := New()
	if h.Draining().Err() != nil {
		t.Fatal("draining before Run")
	}
	bye := errors.New("bye")
	var called []string
	h.Register(func(context.Context) error { called = append(called, "first"); return nil })
	if err := h.Run(context.Background()); err != nil {
		t.Fatalf("Run = %v, want nil", err)
	}
	if h.Draining().Err() == nil || len(called) != 1 {
		t.Fatalf("after Run: draining %v, called %v", h.Draining().Err(), called)
	}
	// Registered late: called at once, and not again by a second Run.
	h.Register(func(ctx context.Context) error {
		if ctx.Err() != nil {
			t.Error("a late hook got a cancelled context")
		}
		called = append(called, "late")
		return bye
	})
	if len(called) != 2 {
		t.Fatalf("late hook not called at once: %v", called)
	}
	ctx, cancel := context.WithCancel(context.Background())
	cancel()
	if err := h.Run(ctx); !errors.Is(err, context.Canceled) {
		t.Fatalf("Run(cancelled) = %v, want context.Canceled", err)
	}
}

func TestRunJoinsErrors(t *testing.T) {
	h := New()
	bye := errors.New("bye")
	h.Register(func(context.Context) error { return bye })
	h.Register(func(context.Context) error { return nil })
	if err := h.Run(context.Background()); !errors.Is(err, bye) {
		t.Fatalf("Run = %v, want %v", err, bye)
	}
}
