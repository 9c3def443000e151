package redisstore_test

import (
	"errors"
	"testing"
	"time"

	"github.com/convengine/engine"
	"github.com/convengine/engine/internal/testkit"
	"github.com/convengine/engine/redisstore"
)

// TestFollowsSentinelFailover: a store on a redis+sentinel URL fails closed while its primary
// is gone (a claim, a budget reservation: ErrUnavailable, never a claim granted twice or a
// budget passed unchecked) and, once the sentinels have promoted the replica, answers from it
// without being told; what it wrote before the failover and the replica had is still there.
func TestFollowsSentinelFailover(t *testing.T) {
	f := testkit.StartRedisFailoverT(t)
	s, err := redisstore.NewFromURL(f.URL()+"&dial_timeout=200ms&max_retries=1", &redisstore.Options{Prefix: prefix(t), Timeout: 300 * time.Millisecond})
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
	time.Sleep(200 * time.Millisecond) // the replica has what was written (replication is asynchronous)

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
