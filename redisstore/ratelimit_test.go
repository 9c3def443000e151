package redisstore_test

import (
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"net/http"
	"slices"
	"strconv"
	"strings"
	"sync"
	"sync/atomic"
	"testing"
	"time"

	"github.com/convengine/engine"
	"github.com/convengine/engine/enginetest"
	"github.com/convengine/engine/redisstore"
)

func TestRateLimiterSuite(t *testing.T) {
	for name, client := range backends(t) {
		t.Run(name, func(t *testing.T) {
			enginetest.RateLimiterSuite{New: func(t *testing.T) engine.RateLimiter {
				return redisstore.New(client(t), &redisstore.Options{Prefix: prefix(t), Timeout: generous})
			}}.Run(t)
		})
	}
}

// TestRateLimitKeys checks the keys of a request's buckets: named by the tenant and the user's
// hash, in one Redis Cluster slot, expiring when the bucket is full again, gone once idle.
func TestRateLimitKeys(t *testing.T) {
	for name, newClient := range backends(t) {
		t.Run(name, func(t *testing.T) {
			ctx := t.Context()
			raw := newClient(t)
			p := prefix(t)
			s := redisstore.New(raw, &redisstore.Options{Prefix: p, Timeout: generous})
			user := strings.Repeat("ab", 16)
			limits := []engine.RateLimit{{Tenant: "pk_demo", User: user, PerMinute: 6, Burst: 3},
				{Tenant: "pk_demo", PerMinute: 120, Burst: 10}} // full again, and gone, after half a second
			if ok, _, err := s.Allow(ctx, limits); !ok || err != nil {
				t.Fatalf("Allow = %v, %v", ok, err)
			}
			userKey, tenantKey := p+"rate:{pk_demo}:u:"+user, p+"rate:{pk_demo}:t"
			keys, err := raw.Keys(ctx, p+"*").Result()
			if err != nil {
				t.Fatal(err)
			}
			if len(keys) != 2 || !slices.Contains(keys, userKey) || !slices.Contains(keys, tenantKey) {
				t.Errorf("keys %q, want %q and %q", keys, userKey, tenantKey)
			}
			// A user's bucket of 3 with 2 left refills one request at 6 a minute: 10 s.
			if ttl := raw.PTTL(ctx, userKey).Val(); ttl <= 9*time.Second || ttl > 10*time.Second {
				t.Errorf("the user's bucket expires in %v, want when it is full again, 10 s", ttl)
			}
			if a, b := raw.ClusterKeySlot(ctx, userKey).Val(), raw.ClusterKeySlot(ctx, tenantKey).Val(); a != b {
				t.Errorf("the buckets of one request are in slots %d and %d", a, b)
			}
			eventually(t, "the idle tenant's bucket expiring", func() bool { return raw.Exists(ctx, tenantKey).Val() == 0 })

			// A bucket written by something else is taken as full, and replaced.
			raw.Set(ctx, userKey, "not a bucket", time.Hour)
			if ok, _, err := s.Allow(ctx, limits[:1]); !ok || err != nil {
				t.Fatalf("Allow over an unreadable bucket = %v, %v", ok, err)
			}
			if v := raw.Get(ctx, userKey).Val(); !strings.HasPrefix(v, "1 2 ") {
				t.Errorf("the bucket holds %q after a request, want 2 requests left", v)
			}
		})
	}
}

// eventually polls cond until it holds, failing after 5 s.
func eventually(t *testing.T, what string, cond func() bool) {
	t.Helper()
	for deadline := time.Now().Add(5 * time.Second); !cond(); time.Sleep(10 * time.Millisecond) {
		if time.Now().After(deadline) {
			t.Fatalf("%s did not happen within 5 s", what)
		}
	}
}

// TestRateLimitReplicas has four stores, each with a client of its own as four replicas would,
// send 640 requests at once against a tenant's burst of 100: exactly 100 pass.
func TestRateLimitReplicas(t *testing.T) {
	needRedis(t)
	const replicas, callers, each, burst = 4, 8, 20, 100
	p := prefix(t)
	var passed atomic.Int64
	var wg sync.WaitGroup
	for range replicas {
		s := redisstore.New(client(t, standalone), &redisstore.Options{Prefix: p, Timeout: generous})
		for c := range callers {
			limits := []engine.RateLimit{{Tenant: "pk_demo", User: fmt.Sprintf("%032x", c), PerMinute: 1, Burst: burst},
				{Tenant: "pk_demo", PerMinute: 1, Burst: burst}}
			wg.Go(func() {
				for range each {
					ok, _, err := s.Allow(t.Context(), limits)
					if err != nil {
						t.Error(err)
						return
					}
					if ok {
						passed.Add(1)
					}
				}
			})
		}
	}
	wg.Wait()
	if n := passed.Load(); n != burst {
		t.Errorf("%d of %d requests from %d replicas passed, want the burst of %d", n, replicas*callers*each, replicas, burst)
	}
}

// TestRateLimitUnavailable checks that a limiter whose Redis is down says so, and that a call
// mixing tenants is refused.
func TestRateLimitUnavailable(t *testing.T) {
	srv := startTestRedis(t)
	s := redisstore.New(client(t, srv), &redisstore.Options{Prefix: prefix(t)})
	limits := []engine.RateLimit{{Tenant: "pk_demo", PerMinute: 60, Burst: 1}}
	if ok, _, err := s.Allow(t.Context(), limits); !ok || err != nil {
		t.Fatalf("Allow = %v, %v", ok, err)
	}
	srv.Stop()
	_, _, err := s.Allow(t.Context(), limits)
	if !errors.Is(err, redisstore.ErrUnavailable) || !errors.Is(err, engine.ErrStoreUnavailable) {
		t.Errorf("Allow without Redis: %v, want ErrUnavailable and engine.ErrStoreUnavailable", err)
	}
	two := append(limits, engine.RateLimit{Tenant: "pk_other", PerMinute: 60, Burst: 1})
	if _, _, err := s.Allow(t.Context(), two); err == nil {
		t.Error("a call with the buckets of two tenants was not refused")
	}
}

// TestReplicasShareRateLimits serves a tenant with a user's burst of 3 and the tenant's of 5 from
// two replicas: the limits hold across both. With Redis down, each replica applies them alone;
// once Redis is back, they share them again.
func TestReplicasShareRateLimits(t *testing.T) {
	srv := startTestRedis(t)
	d := newDeploymentWith(t, srv, engine.Limits{UserPerMinute: 1, UserBurst: 3, TenantPerMinute: 1, TenantBurst: 5})
	turn := func(replica int, token string) (int, int) {
		t.Helper()
		resp := d.postAs(t, replica, token, "/engine", `{"transcript":"what is my balance"}`)
		if resp == nil {
			t.FailNow()
		}
		defer resp.Body.Close()
		body, _ := io.ReadAll(resp.Body)
		if resp.StatusCode == http.StatusTooManyRequests {
			var p engine.Problem
			if err := json.Unmarshal(body, &p); err != nil || p.Code != engine.CodeRateLimited {
				t.Errorf("429 answered %s", body)
			}
			secs, _ := strconv.Atoi(resp.Header.Get("Retry-After"))
			return resp.StatusCode, secs
		}
		if resp.StatusCode != http.StatusOK || !strings.Contains(string(body), "event: done") {
			t.Errorf("replica %d: %d %s", replica, resp.StatusCode, body)
		}
		return resp.StatusCode, 0
	}
	want := func(what string, replica int, token string, status int) {
		t.Helper()
		got, secs := turn(replica, token)
		if got != status {
			t.Fatalf("%s: replica %d answered %d, want %d", what, replica, got, status)
		}
		if status == http.StatusTooManyRequests && (secs < 50 || secs > 60) {
			t.Errorf("%s: Retry-After %d, want about 60 at one request a minute", what, secs)
		}
	}

	for range 3 {
		want("alice's burst", 0, "alice-token", http.StatusOK)
	}
	want("alice's fourth, on the other replica", 1, "alice-token", http.StatusTooManyRequests)
	want("bob's first", 1, "bob-token", http.StatusOK)
	want("bob's second", 0, "bob-token", http.StatusOK)
	want("carol past the tenant's burst", 1, "carol-token", http.StatusTooManyRequests)

	srv.Stop()
	for i := range d.replicas {
		for range 3 {
			want("alice without Redis", i, "alice-token", http.StatusOK)
		}
		want("alice past her burst on one replica without Redis", i, "alice-token", http.StatusTooManyRequests)
	}

	if err := srv.Start(); err != nil {
		t.Fatal(err)
	}
	time.Sleep(1100 * time.Millisecond) // the replicas ask Redis again a second after it failed
	for i := range 3 {
		want("dave's burst once Redis is back", i%2, "dave-token", http.StatusOK)
	}
	want("dave's fourth once Redis is back", 1, "dave-token", http.StatusTooManyRequests)
}
