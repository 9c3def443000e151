package bound_test

import (
	"context"
	"errors"
	"testing"
	"time"

	"github.com/convengine/engine/internal/bound"
)

func TestUserNames(t *testing.T) {
	a, b := bound.NewUserNames([]byte("key a")), bound.NewUserNames([]byte("key b"))
	n := a.Name("pk_1", "token")
	if len(n) != 32 || n != a.Name("pk_1", "token") || n != bound.NewUserNames([]byte("key a")).Name("pk_1", "token") {
		t.Fatalf("Name = %q: want 32 hex digits, the same for the same key, tenant and token", n)
	}
	for _, other := range []string{a.Name("pk_2", "token"), a.Name("pk_1", "token2"), a.Name("pk_1to", "ken"), b.Name("pk_1", "token")} {
		if other == n {
			t.Fatalf("another key, tenant or token has the same name %q", n)
		}
	}
}

func TestFallback(t *testing.T) {
	t0 := time.Date(2025, 1, 1, 0, 0, 0, 0, time.UTC)
	var sharedErr error
	sharedCalls, failures := 0, 0
	f := &bound.Fallback[string]{
		Shared: func(context.Context, []string) (bool, time.Duration, error) {
			sharedCalls++
			return sharedErr == nil, time.Second, sharedErr
		},
		Local: func(context.Context, []string) (bool, time.Duration) { return false, time.Minute },
		Pause: time.Second,
	}
	failed := func(error) { failures++ }
	ctx := context.Background()
	if ok, wait, un := f.Allow(ctx, t0, nil, failed); !ok || un || wait != time.Second {
		t.Fatalf("shared limiter up: %v, %v, unavailable %v", ok, wait, un)
	}
	sharedErr = errors.New("down")
	if ok, wait, un := f.Allow(ctx, t0, nil, failed); ok || !un || wait != time.Minute || failures != 1 {
		t.Fatalf("shared limiter down: %v, %v, unavailable %v, %d failures; want the local answer", ok, wait, un, failures)
	}
	sharedErr = nil
	if _, _, un := f.Allow(ctx, t0.Add(time.Second-1), nil, failed); !un || sharedCalls != 2 {
		t.Fatalf("the shared limiter was asked within the pause (%d calls)", sharedCalls)
	}
	if ok, _, un := f.Allow(ctx, t0.Add(time.Second), nil, failed); !ok || un || sharedCalls != 3 {
		t.Fatal("the shared limiter was not asked again after the pause")
	}

	gone, cancel := context.WithCancel(ctx)
	cancel()
	sharedErr = context.Canceled
	if ok, _, un := f.Allow(gone, t0.Add(2*time.Second), nil, failed); !ok || un || failures != 1 {
		t.Fatal("a caller that left paused the shared limiter or was refused")
	}

	local := &bound.Fallback[string]{Local: func(context.Context, []string) (bool, time.Duration) { return true, 0 }}
	if ok, _, un := local.Allow(ctx, t0, nil, failed); !ok || un {
		t.Fatal("without a shared limiter, the local one answers and nothing is unavailable")
	}
}
