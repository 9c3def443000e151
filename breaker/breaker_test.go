package breaker_test

import (
	"errors"
	"testing"
	"testing/synctest"
	"time"

	"github.com/convengine/engine/breaker"
)

func call(t *testing.T, s *breaker.Set, name string, o breaker.Outcome) error {
	t.Helper()
	done, err := s.Allow(name)
	if err == nil {
		done(o)
	}
	return err
}

// TestOpensAfterFailuresAndProbes: five failures in a row open a breaker; after the cool-down
// one call probes it, and its success closes it. A failed probe opens it again.
func TestOpensAfterFailuresAndProbes(t *testing.T) {
	synctest.Test(t, func(t *testing.T) {
		var changes []breaker.State
		s := breaker.New(&breaker.Options{OnChange: func(_ string, _, to breaker.State) { changes = append(changes, to) }})
		for range 4 {
			call(t, s, "m", breaker.Failure)
		}
		call(t, s, "m", breaker.Success) // ends the run
		for i := range 5 {
			if err := call(t, s, "m", breaker.Failure); err != nil {
				t.Fatalf("call %d refused: %v", i, err)
			}
		}
		err := call(t, s, "m", breaker.Success)
		var o *breaker.OpenError
		if !errors.As(err, &o) || !errors.Is(err, breaker.ErrOpen) || o.RetryAfter != breaker.DefaultCoolDown {
			t.Fatalf("after 5 failures: %v", err)
		}
		if s.State("other") != breaker.Closed {
			t.Error("another name is open too")
		}
		time.Sleep(breaker.DefaultCoolDown + time.Millisecond)
		done, err := s.Allow("m")
		if err != nil {
			t.Fatalf("no probe after the cool-down: %v", err)
		}
		if _, err := s.Allow("m"); err == nil {
			t.Error("a second call went through while the probe runs")
		}
		done(breaker.Failure)
		if s.State("m") != breaker.Open {
			t.Errorf("a failed probe left the breaker %s", s.State("m"))
		}
		time.Sleep(breaker.DefaultCoolDown + time.Millisecond)
		if err := call(t, s, "m", breaker.Success); err != nil || s.State("m") != breaker.Closed {
			t.Errorf("probe %v, state %s", err, s.State("m"))
		}
		want := []breaker.State{breaker.Open, breaker.HalfOpen, breaker.Open, breaker.HalfOpen, breaker.Closed}
		if len(changes) != len(want) {
			t.Fatalf("changes %v", changes)
		}
		for i := range want {
			if changes[i] != want[i] {
				t.Fatalf("changes %v, want %v", changes, want)
			}
		}
	})
}

// TestIgnoredCallsCountForNothing: calls that ended for their caller's reasons neither open
// nor close a breaker, and a probe that is ignored lets the next call probe.
func TestIgnoredCallsCountForNothing(t *testing.T) {
	synctest.Test(t, func(t *testing.T) {
		s := breaker.New(&breaker.Options{MaxFailures: 2, CoolDown: time.Second})
		for range 10 {
			call(t, s, "m", breaker.Ignore)
		}
		call(t, s, "m", breaker.Failure)
		call(t, s, "m", breaker.Ignore)
		call(t, s, "m", breaker.Failure)
		if s.State("m") != breaker.Open {
			t.Fatalf("state %s", s.State("m"))
		}
		time.Sleep(time.Second + time.Millisecond)
		call(t, s, "m", breaker.Ignore)
		if err := call(t, s, "m", breaker.Success); err != nil || s.State("m") != breaker.Closed {
			t.Errorf("%v, %s", err, s.State("m"))
		}
	})
}

// TestHold: a server's Retry-After keeps a name out without a failure, bounded by MaxHold.
func TestHold(t *testing.T) {
	synctest.Test(t, func(t *testing.T) {
		s := breaker.New(nil)
		s.Hold("m", 10*time.Second)
		if wait, ok := s.Ready("m"); ok || wait != 10*time.Second {
			t.Errorf("ready %v, wait %v", ok, wait)
		}
		if err := call(t, s, "m", breaker.Success); !errors.Is(err, breaker.ErrOpen) {
			t.Errorf("held: %v", err)
		}
		time.Sleep(10 * time.Second)
		if _, ok := s.Ready("m"); !ok {
			t.Error("still held")
		}
		s.Hold("m", 24*time.Hour)
		if wait, _ := s.Ready("m"); wait != breaker.MaxHold {
			t.Errorf("held for %v", wait)
		}
	})
}
