package engine

import (
	"strconv"
	"strings"
	"testing"
	"time"
)

// TestRateLimitsStayBounded sends one request each of many users: the buckets kept never pass
// the bound, the most recent users keep theirs, and no key holds a user token.
func TestRateLimitsStayBounded(t *testing.T) {
	const bound, users = 100, 10_000
	rl := newRateLimits(bound)
	now := time.Date(2026, 1, 2, 3, 4, 5, 0, time.UTC)
	l := Limits{UserPerMinute: 1, UserBurst: 1, TenantPerMinute: 1_000_000, TenantBurst: users}
	for i := range users {
		if ok, _ := rl.admit(l, "pk_test", Secret("token-"+strconv.Itoa(i)), now); !ok {
			t.Fatalf("user %d refused on a first request", i)
		}
		if n := rl.len(); n > bound {
			t.Fatalf("%d buckets kept after %d users, bound %d", n, i+1, bound)
		}
	}
	if ok, _ := rl.admit(l, "pk_test", Secret("token-"+strconv.Itoa(users-1)), now); ok {
		t.Error("the most recent user's bucket was dropped")
	}
	for key := range rl.entries {
		if strings.Contains(key, "token-") {
			t.Errorf("a bucket key holds a user token: %q", key)
		}
	}
}

// TestRateLimitsRefuseWithoutTaking checks that a request refused by the tenant's bucket takes
// nothing from the user's.
func TestRateLimitsRefuseWithoutTaking(t *testing.T) {
	rl := newRateLimits(10)
	now := time.Date(2026, 1, 2, 3, 4, 5, 0, time.UTC)
	l := Limits{UserPerMinute: 60, UserBurst: 1, TenantPerMinute: 60, TenantBurst: 1}
	if ok, _ := rl.admit(l, "pk", "a", now); !ok {
		t.Fatal("first request refused")
	}
	if ok, wait := rl.admit(l, "pk", "b", now); ok || wait != time.Second {
		t.Fatalf("admit = %v, %v; want refused for 1s by the tenant's bucket", ok, wait)
	}
	now = now.Add(time.Second)
	if ok, _ := rl.admit(l, "pk", "b", now); !ok {
		t.Error("user b's bucket lost a token to a refused request")
	}
	if ok, _ := rl.admit(Limits{}, "pk", "b", now); !ok {
		t.Error("no limits refused a request")
	}
}
