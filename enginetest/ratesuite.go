package enginetest

import (
	"fmt"
	"sync"
	"sync/atomic"
	"testing"
	"time"

	"github.com/convengine/engine"
)

// RateLimiterSuite checks that an [engine.RateLimiter] keeps the contract the engine relies on:
// bursts and rates honoured, a Retry-After that tells when a request would pass, buckets taken
// all together or not at all, no more requests allowed than the buckets hold under 200
// concurrent callers, and the buckets of tenants and users kept apart.
// [engine.MemoryRateLimiter] passes it; implementers of a shared limiter run it from a test:
//
//	enginetest.RateLimiterSuite{New: func(t *testing.T) engine.RateLimiter { return newLimiter(t) }}.Run(t)
//
// Time is real: the limiter measures it with its own clock (a server's, say), and the checks
// that wait for a bucket to refill wait a few hundred milliseconds, in parallel.
type RateLimiterSuite struct {
	// New returns a limiter with no buckets for one check, whose clock is the real one.
	New func(t *testing.T) engine.RateLimiter
}

// Run runs the suite's checks as parallel subtests.
func (s RateLimiterSuite) Run(t *testing.T) {
	for _, c := range []struct {
		name string
		f    func(*testing.T, engine.RateLimiter)
	}{
		{"Burst", rateBurst},
		{"RetryAfter", rateRetryAfter},
		{"Refill", rateRefill},
		{"AllOrNothing", rateAllOrNothing},
		{"Concurrent", rateConcurrent},
		{"Apart", rateApart},
		{"Retune", rateRetune},
		{"NoLimits", rateNoLimits},
	} {
		t.Run(c.name, func(t *testing.T) {
			t.Parallel()
			c.f(t, s.New(t))
		})
	}
}

// userBucket returns the name of user n's bucket, as the engine would.
func userBucket(n int) string { return fmt.Sprintf("%032x", n) }

// allow calls Allow, failing t on an error.
func allow(t *testing.T, rl engine.RateLimiter, limits ...engine.RateLimit) (bool, time.Duration) {
	t.Helper()
	ok, wait, err := rl.Allow(t.Context(), limits)
	if err != nil {
		t.Fatalf("Allow: %v", err)
	}
	if ok && wait != 0 {
		t.Errorf("Allow allowed a request with a wait of %v", wait)
	}
	if !ok && wait <= 0 {
		t.Errorf("Allow refused a request with a wait of %v", wait)
	}
	return ok, wait
}

// rateBurst takes a burst of five at one request a minute: five pass, the sixth does not.
func rateBurst(t *testing.T, rl engine.RateLimiter) {
	user := engine.RateLimit{Tenant: "pk_a", User: userBucket(1), PerMinute: 1, Burst: 5}
	for i := range 5 {
		if ok, _ := allow(t, rl, user); !ok {
			t.Fatalf("request %d of a burst of 5 refused", i+1)
		}
	}
	if ok, _ := allow(t, rl, user); ok {
		t.Fatal("a sixth request in a burst of 5 allowed")
	}
}

// rateRetryAfter checks that a refused request is told when the slowest of its buckets will
// give one: a tenant's at one a minute, a user's at six a minute.
func rateRetryAfter(t *testing.T, rl engine.RateLimiter) {
	tenant := engine.RateLimit{Tenant: "pk_a", PerMinute: 1, Burst: 1}
	user := engine.RateLimit{Tenant: "pk_a", User: userBucket(1), PerMinute: 6, Burst: 1}
	start := time.Now()
	allow(t, rl, user, tenant)
	check := func(what string, want time.Duration, limits ...engine.RateLimit) {
		t.Helper()
		ok, wait := allow(t, rl, limits...)
		if ok {
			t.Fatalf("%s: a request past the burst allowed", what)
		}
		if lo := want - time.Since(start) - time.Second; wait > want || wait < lo {
			t.Errorf("%s: retry after %v, want %v less the time since the first request", what, wait, want)
		}
	}
	check("user", 10*time.Second, user)
	check("tenant", time.Minute, tenant)
	check("user and tenant", time.Minute, user, tenant)
	check("tenant and user", time.Minute, tenant, user)
}

// rateRefill waits the Retry-After of a bucket giving a request every 50 ms: the next request
// passes, and the one after it is refused again.
func rateRefill(t *testing.T, rl engine.RateLimiter) {
	user := engine.RateLimit{Tenant: "pk_a", User: userBucket(1), PerMinute: 1200, Burst: 1}
	allow(t, rl, user)
	for i := range 3 {
		ok, wait := allow(t, rl, user)
		if ok {
			continue // the machine was slow enough for the bucket to refill
		}
		if wait > 50*time.Millisecond {
			t.Fatalf("retry after %v at a request every 50 ms", wait)
		}
		time.Sleep(wait)
		if ok, wait := allow(t, rl, user); !ok {
			t.Fatalf("round %d: refused again %v after the Retry-After, with a wait of %v", i, wait, wait)
		}
	}
}

// rateAllOrNothing checks that a request refused by one bucket takes nothing from the other.
func rateAllOrNothing(t *testing.T, rl engine.RateLimiter) {
	t.Run("TenantEmpty", func(t *testing.T) {
		tenant := engine.RateLimit{Tenant: "pk_a", PerMinute: 1, Burst: 1}
		user := func(n int) engine.RateLimit {
			return engine.RateLimit{Tenant: "pk_a", User: userBucket(n), PerMinute: 1, Burst: 1}
		}
		if ok, _ := allow(t, rl, user(1), tenant); !ok {
			t.Fatal("first request refused")
		}
		if ok, _ := allow(t, rl, user(2), tenant); ok {
			t.Fatal("a request past the tenant's burst allowed")
		}
		if ok, _ := allow(t, rl, user(2)); !ok {
			t.Error("user 2's bucket lost a request to a request the tenant's bucket refused")
		}
	})
	t.Run("UserEmpty", func(t *testing.T) {
		tenant := engine.RateLimit{Tenant: "pk_b", PerMinute: 1, Burst: 3}
		user := func(n int) engine.RateLimit {
			return engine.RateLimit{Tenant: "pk_b", User: userBucket(n), PerMinute: 1, Burst: 1}
		}
		allow(t, rl, user(1), tenant)
		if ok, _ := allow(t, rl, user(1), tenant); ok {
			t.Fatal("a request past the user's burst allowed")
		}
		for n := 2; n <= 3; n++ {
			if ok, _ := allow(t, rl, user(n), tenant); !ok {
				t.Errorf("user %d refused: the tenant's bucket lost a request to a request the user's bucket refused", n)
			}
		}
	})
}

// rateConcurrent sends 200 requests at once from four users, in bursts of 20 per user and 50 for
// the tenant: exactly 50 pass, and no user has more than 20.
func rateConcurrent(t *testing.T, rl engine.RateLimiter) {
	const users, perUser, callers, each = 4, 20, 8, 25
	tenant := engine.RateLimit{Tenant: "pk_a", PerMinute: 1, Burst: 50}
	var passed [users]atomic.Int64
	var wg sync.WaitGroup
	for c := range callers {
		user := engine.RateLimit{Tenant: "pk_a", User: userBucket(c % users), PerMinute: 1, Burst: perUser}
		wg.Go(func() {
			for range each {
				ok, _, err := rl.Allow(t.Context(), []engine.RateLimit{user, tenant})
				if err != nil {
					t.Error(err)
					return
				}
				if ok {
					passed[c%users].Add(1)
				}
			}
		})
	}
	wg.Wait()
	total := int64(0)
	for u := range passed {
		n := passed[u].Load()
		if n > perUser {
			t.Errorf("user %d passed %d requests, burst %d", u, n, perUser)
		}
		total += n
	}
	if total != int64(tenant.Burst) {
		t.Errorf("%d of %d concurrent requests passed, want the tenant's burst of %d", total, callers*each, tenant.Burst)
	}
}

// rateApart empties buckets and checks that those of other tenants and users are untouched.
func rateApart(t *testing.T, rl engine.RateLimiter) {
	one := func(tenant, user string) engine.RateLimit {
		return engine.RateLimit{Tenant: tenant, User: user, PerMinute: 1, Burst: 1}
	}
	buckets := []engine.RateLimit{one("pk_a", ""), one("pk_a", userBucket(1)), one("pk_a", userBucket(2)),
		one("pk_b", ""), one("pk_b", userBucket(1)), one("pk_a:x", ""), one("pk_", ""), one("pk_a}", "")}
	for i, b := range buckets {
		if ok, _ := allow(t, rl, b); !ok {
			t.Errorf("bucket %d (%+v) refused its first request: it shares a bucket with one before it", i, b)
		}
		if ok, _ := allow(t, rl, b); ok {
			t.Errorf("bucket %d (%+v) allowed a second request", i, b)
		}
	}
}

// rateRetune empties a bucket at one request a minute, then gives it a thousand a second: it
// gives a request within a millisecond or two rather than a minute.
func rateRetune(t *testing.T, rl engine.RateLimiter) {
	slow := engine.RateLimit{Tenant: "pk_a", PerMinute: 1, Burst: 1}
	allow(t, rl, slow)
	if ok, _ := allow(t, rl, slow); ok {
		t.Fatal("a second request allowed at one a minute")
	}
	fast := slow
	fast.PerMinute = 60_000
	for range 3 {
		ok, wait := allow(t, rl, fast)
		if ok {
			return
		}
		if wait > time.Millisecond {
			t.Fatalf("retry after %v at the new rate of a request a millisecond", wait)
		}
		time.Sleep(wait)
	}
	t.Fatal("no request allowed at the new rate")
}

// rateNoLimits checks that no buckets, or buckets without a rate, allow every request.
func rateNoLimits(t *testing.T, rl engine.RateLimiter) {
	for range 3 {
		if ok, _ := allow(t, rl); !ok {
			t.Fatal("a request without limits refused")
		}
		if ok, _ := allow(t, rl, engine.RateLimit{Tenant: "pk_a"}); !ok {
			t.Fatal("a request with a bucket of no rate refused")
		}
	}
}
