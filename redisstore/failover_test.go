package redisstore_test

import (
	"errors"
	"testing"
	"time"

	"github.com/convengine/engine"
	"github.com/convengine/engine/enginetest"
	"github.com/convengine/engine/internal/testkit"
	"github.com/convengine/engine/redisstore"
)

// TestFollowsSentinelFailover: a store on a redis+sentinel URL fails closed while its primary
// is gone (a claim, a budget reservation: ErrUnavailable, never a claim granted twice or a
// budget passed unchecked) and, once the sentinels have promoted the replica and a replica
// follows it again, answers from it without being told; a claim it granted before the
// failover is still there, for it waited until the replica had it.
func TestFollowsSentinelFailover(t *testing.T) {
	f := testkit.StartRedisFailoverT(t)
	// A second bounds each call: the replica's confirmation gets half of it, ample on loopback
	// even under a loaded machine.
	s, err := redisstore.NewFromURL(f.URL()+"&dial_timeout=200ms&max_retries=1", &redisstore.Options{Prefix: prefix(t), Timeout: time.Second})
	if err != nil {
		t.Fatal(err)
	}
	defer s.Close()
	ctx := t.Context()
	exp := time.Now().Add(time.Hour)
	if ok, err := s.Claim(ctx, "pk_demo:before", exp); !ok || err != nil {
		t.Fatalf("a claim on the primary: %v %v", ok, err)
	}
	tenant := &engine.Tenant{Key: "pk_demo", Limits: engine.Limits{TurnsPerUserPerDay: 100}}
	if _, err := s.Reserve(ctx, engine.Spend{Tenant: tenant, User: "u", Turns: 1}); err != nil {
		t.Fatal(err)
	}
	old := f.Primary.Addr
	f.Primary.Stop() // SIGKILL
	killed := time.Now()
	ok, err := s.Claim(ctx, "pk_demo:during", exp)
	if ok || !errors.Is(err, redisstore.ErrUnavailable) {
		t.Errorf("a claim with the primary gone: %v %v, want ErrUnavailable", ok, err)
	}
	if _, err := s.Reserve(ctx, engine.Spend{Tenant: tenant, User: "u", Turns: 1}); !errors.Is(err, engine.ErrStoreUnavailable) {
		t.Errorf("a budget reservation with the primary gone: %v, want a store unavailable", err)
	}

	promoted, err := f.WaitFailover(ctx, old, 20*time.Second)
	if err != nil {
		t.Fatal(err)
	}
	t.Logf("the sentinels promoted %s %v after the kill", promoted, time.Since(killed).Round(10*time.Millisecond))
	// The new primary has no replica to confirm a claim until the old one rejoins it.
	if ok, err := s.Claim(ctx, "pk_demo:alone", exp); ok || !errors.Is(err, redisstore.ErrUnavailable) {
		t.Errorf("a claim on a primary without a replica: %v %v, want ErrUnavailable", ok, err)
	}
	if err := f.Rejoin(); err != nil {
		t.Fatal(err)
	}
	// The rejoined replica loads the new primary's data before it confirms writes; under a
	// loaded machine that can take seconds.
	if err := f.Ready(30 * time.Second); err != nil {
		t.Fatal(err)
	}
	var recovered time.Duration
	for deadline := time.Now().Add(10 * time.Second); ; time.Sleep(50 * time.Millisecond) {
		ok, err = s.Claim(ctx, "pk_demo:after", exp)
		if err == nil {
			recovered = time.Since(killed)
			break
		}
		if time.Now().After(deadline) {
			t.Fatalf("the store did not follow the failover: %v", err)
		}
	}
	t.Logf("the store answered again %v after the kill", recovered.Round(10*time.Millisecond))
	if !ok {
		t.Error("a new claim after the failover was refused")
	}
	if ok, err := s.Claim(ctx, "pk_demo:before", exp); ok || err != nil {
		t.Errorf("a claim made before the failover, claimed again on the new primary: %v %v", ok, err)
	}
}

// TestSingleUseWritesWaitForTheReplica: on a redis+sentinel URL a claim, a passkey binding and
// an action's claim and result are reported only once the replica has them. With the replica
// down they fail closed, and the claims are given back, so the same token works once it is up.
func TestSingleUseWritesWaitForTheReplica(t *testing.T) {
	f := testkit.StartRedisFailoverT(t)
	open := func(t *testing.T, opts *redisstore.Options) *redisstore.Store {
		s, err := redisstore.NewFromURL(f.URL(), opts)
		if err != nil {
			t.Fatal(err)
		}
		t.Cleanup(func() { s.Close() })
		return s
	}
	t.Run("suite", func(t *testing.T) {
		enginetest.StoreSuite{New: func(t *testing.T) enginetest.Store {
			s := open(t, &redisstore.Options{Prefix: prefix(t), Timeout: generous})
			// Asking the sentinels for the primary is not what the suite times.
			if err := s.Ping(t.Context()); err != nil {
				t.Fatal(err)
			}
			return s
		}}.Run(t)
	})

	s := open(t, &redisstore.Options{Prefix: prefix(t), Timeout: time.Second})
	ctx := t.Context()
	exp := time.Now().Add(time.Hour)
	f.Replica.Stop()
	if ok, err := s.Claim(ctx, "pk_demo:jti", exp); ok || !errors.Is(err, redisstore.ErrUnavailable) {
		t.Errorf("a claim with the replica down: %v %v, want ErrUnavailable", ok, err)
	}
	if _, err := s.BeginAction(ctx, "pk_demo:pay", "owner-1", exp); !errors.Is(err, redisstore.ErrUnavailable) {
		t.Errorf("an action's claim with the replica down: %v, want ErrUnavailable", err)
	}
	if _, err := s.Bind(ctx, "pk_demo:cred", "thumb", exp); !errors.Is(err, redisstore.ErrUnavailable) {
		t.Errorf("a binding with the replica down: %v, want ErrUnavailable", err)
	}
	if err := f.Replica.Start(); err != nil {
		t.Fatal(err)
	}
	if err := f.Ready(20 * time.Second); err != nil {
		t.Fatal(err)
	}
	if ok, err := s.Claim(ctx, "pk_demo:jti", exp); !ok || err != nil {
		t.Errorf("the same claim with the replica back: %v %v, want it granted", ok, err)
	}
	if prev, err := s.BeginAction(ctx, "pk_demo:pay", "owner-2", exp); prev != nil || err != nil {
		t.Errorf("the same action with the replica back: %s %v, want it claimed", prev, err)
	}
	if v, err := s.Bind(ctx, "pk_demo:cred", "thumb", exp); v != "thumb" || err != nil {
		t.Errorf("the same binding with the replica back: %q %v", v, err)
	}

	// replica_acks=0 turns the wait off, for a deployment that takes the risk.
	f.Replica.Stop()
	u := f.URL() + "&replica_acks=0"
	fast, err := redisstore.NewFromURL(u, &redisstore.Options{Prefix: prefix(t)})
	if err != nil {
		t.Fatal(err)
	}
	defer fast.Close()
	if ok, err := fast.Claim(ctx, "pk_demo:unconfirmed", exp); !ok || err != nil {
		t.Errorf("a claim with replica_acks=0 and the replica down: %v %v", ok, err)
	}
}
