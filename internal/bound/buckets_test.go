package bound_test

import (
	"fmt"
	"sync"
	"sync/atomic"
	"testing"
	"time"

	"github.com/convengine/engine/internal/bound"
)

var t0 = time.Date(2025, 1, 1, 0, 0, 0, 0, time.UTC)

func limit(user string, perMinute, burst int) bound.BucketLimit {
	return bound.BucketLimit{Key: bound.BucketKey{Tenant: "t", User: user}, PerMinute: perMinute, Burst: burst}
}

// allowN asks n times at now and returns how many were allowed.
func allowN(s *bound.Buckets, now time.Time, n int, ls ...bound.BucketLimit) int {
	got := 0
	for range n {
		if ok, _ := s.Allow(now, 0, ls); ok {
			got++
		}
	}
	return got
}

func TestBurstAndRefill(t *testing.T) {
	var s bound.Buckets
	l := limit("u", 60, 3) // one a second, three at once
	if got := allowN(&s, t0, 5, l); got != 3 {
		t.Fatalf("%d of 5 allowed at once, want the burst of 3", got)
	}
	ok, wait := s.Allow(t0, 0, []bound.BucketLimit{l})
	if ok || wait <= 0 || wait > time.Second {
		t.Fatalf("past the burst: Allow = %v, wait %v; want refused with a wait of at most a second", ok, wait)
	}
	if got := allowN(&s, t0.Add(wait), 2, l); got != 1 {
		t.Fatalf("after the wait it gave, %d allowed, want 1", got)
	}
	if got := allowN(&s, t0.Add(time.Hour), 10, l); got != 3 {
		t.Fatalf("after an hour idle, %d allowed at once, want the burst of 3 again (no more)", got)
	}
}

func TestBurstAtLeastOne(t *testing.T) {
	var s bound.Buckets
	l := limit("u", 60, 0)
	if got := allowN(&s, t0, 3, l); got != 1 {
		t.Fatalf("Burst 0: %d allowed at once, want 1", got)
	}
}

func TestNoLimit(t *testing.T) {
	var s bound.Buckets
	for _, pm := range []int{0, -1} {
		if got := allowN(&s, t0, 100, limit("u", pm, 1)); got != 100 {
			t.Fatalf("PerMinute %d: %d of 100 allowed", pm, got)
		}
	}
	if n := s.Len(); n != 0 {
		t.Fatalf("PerMinute 0 or less kept %d buckets", n)
	}
}

// TestAllOrNone: a request refused by one of its buckets takes nothing from the others.
func TestAllOrNone(t *testing.T) {
	var s bound.Buckets
	tenant := bound.BucketLimit{Key: bound.BucketKey{Tenant: "t"}, PerMinute: 60, Burst: 2}
	user := limit("u", 60, 1)
	if got := allowN(&s, t0, 1, user); got != 1 {
		t.Fatal("the user's first request refused")
	}
	for range 5 {
		if ok, wait := s.Allow(t0, 0, []bound.BucketLimit{tenant, user}); ok || wait <= 0 {
			t.Fatalf("with the user's bucket empty: Allow = %v, wait %v", ok, wait)
		}
	}
	if got := allowN(&s, t0, 3, tenant); got != 2 {
		t.Fatalf("the tenant's bucket gave %d, want its whole burst of 2: a refused request took from it", got)
	}
	// The wait is the longest of the buckets that refused.
	slow := limit("slow", 1, 1) // one a minute
	allowN(&s, t0, 1, slow)
	if ok, wait := s.Allow(t0, 0, []bound.BucketLimit{user, slow}); ok || wait <= 30*time.Second {
		t.Fatalf("Allow = %v, wait %v; want refused with the slow bucket's wait of about a minute", ok, wait)
	}
}

// TestConfigurationChange: a bucket whose limit changes follows the new one. The tokens it
// holds when the burst grows stay as they were, and refill up to the new burst.
func TestConfigurationChange(t *testing.T) {
	var s bound.Buckets
	if got := allowN(&s, t0, 5, limit("u", 60, 1)); got != 1 {
		t.Fatalf("Burst 1: %d allowed", got)
	}
	t1 := t0.Add(time.Hour)
	if got := allowN(&s, t1, 10, limit("u", 60, 4)); got != 1 {
		t.Fatalf("right after the burst became 4: %d allowed, want the 1 token held", got)
	}
	if got := allowN(&s, t1.Add(time.Hour), 10, limit("u", 60, 4)); got != 4 {
		t.Fatalf("an hour after the burst became 4: %d allowed", got)
	}
	if got := allowN(&s, t1.Add(2*time.Hour), 10, limit("u", 60, 2)); got != 2 {
		t.Fatalf("after the burst became 2: %d allowed", got)
	}
	if got := allowN(&s, t1.Add(2*time.Hour+time.Minute), 100, limit("u", 6000, 2)); got != 2 {
		t.Fatalf("after the rate became 100/s, a minute later: %d allowed at once, want the burst of 2", got)
	}
	if ok, wait := s.Allow(t1.Add(2*time.Hour+time.Minute), 0, []bound.BucketLimit{limit("u", 6000, 2)}); ok || wait > 10*time.Millisecond {
		t.Fatalf("at 100/s: Allow = %v, wait %v; want a wait of at most 10ms", ok, wait)
	}
	if n := s.Len(); n != 1 {
		t.Fatalf("a changed limit kept %d buckets, want 1", n)
	}
}

// TestBound: the set keeps at most bound buckets, dropping the least recently used, which
// starts again full.
func TestBound(t *testing.T) {
	var s bound.Buckets
	ask := func(user string) bool {
		ok, _ := s.Allow(t0, 2, []bound.BucketLimit{limit(user, 1, 1)})
		return ok
	}
	if !ask("a") || !ask("b") {
		t.Fatal("first requests refused")
	}
	if ask("a") || ask("b") {
		t.Fatal("second requests allowed within the minute")
	}
	ask("a") // a is now the most recently used, even though refused
	if !ask("c") {
		t.Fatal("a new user refused")
	}
	if n := s.Len(); n != 2 {
		t.Fatalf("Len = %d with a bound of 2", n)
	}
	if ask("a") {
		t.Fatal("a, recently used, was dropped instead of b")
	}
	if !ask("b") {
		t.Fatal("b, the least recently used, was kept: its bucket is still empty")
	}

	// A bound of 0 is DefaultBuckets, not 0 or 1.
	var d bound.Buckets
	for i := range 100 {
		d.Allow(t0, 0, []bound.BucketLimit{limit(fmt.Sprint(i), 1, 1)})
	}
	if n := d.Len(); n != 100 {
		t.Fatalf("bound 0: Len = %d after 100 users, want 100", n)
	}
}

// TestConcurrent: many goroutines on one bucket get exactly its burst, and on many buckets
// the set stays within its bound.
func TestConcurrent(t *testing.T) {
	var s bound.Buckets
	var allowed atomic.Int32
	var wg sync.WaitGroup
	for g := range 8 {
		wg.Go(func() {
			for i := range 200 {
				if ok, _ := s.Allow(t0, 16, []bound.BucketLimit{limit("shared", 1, 50)}); ok {
					allowed.Add(1)
				}
				s.Allow(t0, 16, []bound.BucketLimit{limit(fmt.Sprint(g, "/", i%20), 60, 1)})
				if n := s.Len(); n > 16 {
					t.Errorf("Len = %d with a bound of 16", n)
					return
				}
			}
		})
	}
	wg.Wait()
	// The shared bucket may have been dropped and started again full, never less than its burst.
	if n := allowed.Load(); n < 50 {
		t.Fatalf("%d allowed from a bucket of 50", n)
	}
}

func TestBurst(t *testing.T) {
	for _, tt := range []struct{ perMinute, burst, want int }{
		{60, 5, 5}, {60, 0, 6}, {5, 0, 1}, {0, 0, 1}, {600, -1, 60},
	} {
		if got := bound.Burst(tt.perMinute, tt.burst); got != tt.want {
			t.Errorf("Burst(%d, %d) = %d, want %d", tt.perMinute, tt.burst, got, tt.want)
		}
	}
}
