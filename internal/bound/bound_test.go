package bound

import (
	"runtime"
	"sync"
	"sync/atomic"
	"testing"
)

func TestSlots(t *testing.T) {
	for _, tc := range []struct {
		name   string
		n, def int
		want   int // slots that can be held at once; -1 for no bound
	}{
		{"n", 3, 5, 3},
		{"default", 0, 2, 2},
		{"negative is no bound", -1, 2, -1},
	} {
		t.Run(tc.name, func(t *testing.T) {
			s := NewSlots(tc.n, tc.def)
			limit := tc.want
			if limit < 0 {
				limit = 1000
			}
			var releases []func()
			for i := range limit {
				release, ok := s.TryAcquire()
				if !ok {
					t.Fatalf("TryAcquire %d of %d refused", i+1, limit)
				}
				releases = append(releases, release)
			}
			if tc.want < 0 {
				return
			}
			if _, ok := s.TryAcquire(); ok {
				t.Fatalf("TryAcquire past %d slots accepted", tc.want)
			}
			releases[0]()
			release, ok := s.TryAcquire()
			if !ok {
				t.Fatal("TryAcquire after a release refused")
			}
			if _, ok := s.TryAcquire(); ok {
				t.Fatal("TryAcquire past the bound accepted after a release was used")
			}
			release()
			for _, r := range releases[1:] {
				r()
			}
			for i := range tc.want {
				release, ok := s.TryAcquire()
				if !ok {
					t.Fatalf("after every release, TryAcquire %d refused", i+1)
				}
				defer release()
			}
		})
	}
}

func TestBudget(t *testing.T) {
	b := &Budget{Limit: 10}
	if !b.Take(6) || !b.Take(4) {
		t.Fatal("Take up to the limit refused")
	}
	if b.Take(1) {
		t.Fatal("Take past the limit accepted")
	}
	b.Give(4)
	if b.Take(5) {
		t.Fatal("Take past the limit accepted after a Give")
	}
	if !b.Take(4) {
		t.Fatal("Take of what was given back refused")
	}
	if b.Take(1) {
		t.Fatal("Take of one more than the limit accepted")
	}

	b = &Budget{Limit: 0}
	if b.Take(1) {
		t.Fatal("a limit of 0 accepted a Take")
	}

	b = &Budget{Limit: -1}
	for range 100 {
		if !b.Take(1 << 40) {
			t.Fatal("a negative limit refused a Take")
		}
	}
}

// TestBudgetConcurrent: holders that take and give at once never hold more than the limit
// together, and every refused Take leaves nothing taken.
func TestBudgetConcurrent(t *testing.T) {
	const limit, n = 20, 7 // two holders fit at once, eight try
	b := &Budget{Limit: limit}
	var held, peak atomic.Int64
	var wg sync.WaitGroup
	for g := range 8 {
		wg.Go(func() {
			for i := range 2000 {
				size := int64(n + (g+i)%5)
				if !b.Take(size) {
					continue
				}
				h := held.Add(size)
				for p := peak.Load(); h > p && !peak.CompareAndSwap(p, h); p = peak.Load() {
				}
				runtime.Gosched()
				held.Add(-size)
				b.Give(size)
			}
		})
	}
	wg.Wait()
	if p := peak.Load(); p > limit {
		t.Fatalf("holders held %d at once, past the limit %d", p, limit)
	}
	if !b.Take(limit) {
		t.Fatal("after every Give, Take of the whole limit refused: something taken was not given back")
	}
}

func TestPerUser(t *testing.T) {
	u := NewPerUser(0, 2)
	if !u.Take("a") || !u.Take("a") {
		t.Fatal("Take up to the default refused")
	}
	if u.Take("a") {
		t.Fatal("Take past the limit accepted")
	}
	if !u.Take("b") {
		t.Fatal("another user's Take refused because of a")
	}
	u.Give("a")
	if !u.Take("a") {
		t.Fatal("Take after a Give refused")
	}
	if u.Take("a") {
		t.Fatal("Take past the limit accepted after a Give")
	}

	// A user who holds nothing any more leaves no entry behind: users come and go.
	u.Give("a")
	u.Give("a")
	u.Give("b")
	if len(u.held) != 0 {
		t.Fatalf("%d users kept after everything was given back", len(u.held))
	}
	u.Give("c") // a Give too many neither panics nor leaves a count below zero
	if len(u.held) != 0 {
		t.Fatal("a Give without a Take left an entry")
	}
	if !u.Take("c") || !u.Take("c") || u.Take("c") {
		t.Fatal("a Give without a Take changed the user's limit")
	}

	u = NewPerUser(3, 2)
	for i := range 3 {
		if !u.Take("a") {
			t.Fatalf("Take %d of n=3 refused", i+1)
		}
	}
	if u.Take("a") {
		t.Fatal("Take past n accepted")
	}

	u = NewPerUser(-1, 2)
	for range 100 {
		if !u.Take("a") {
			t.Fatal("a negative n refused a Take")
		}
	}
}

func TestPerUserConcurrent(t *testing.T) {
	u := NewPerUser(3, 0)
	var held [2]atomic.Int32
	var over atomic.Bool
	var wg sync.WaitGroup
	for g := range 8 {
		user, i := []string{"a", "b"}[g%2], g%2
		wg.Go(func() {
			for range 1000 {
				if !u.Take(user) {
					continue
				}
				if held[i].Add(1) > 3 {
					over.Store(true)
				}
				held[i].Add(-1)
				u.Give(user)
			}
		})
	}
	wg.Wait()
	if over.Load() {
		t.Fatal("a user held more than the limit at once")
	}
	if len(u.held) != 0 {
		t.Fatalf("%d users kept after everything was given back", len(u.held))
	}
}

func TestHold(t *testing.T) {
	h := &Hold{Process: NewSlots(3, 0), PerTenant: NewPerUser(2, 0), PerUser: NewPerUser(1, 0)}
	a, refused := h.Take("t1", "alice")
	if refused != "" {
		t.Fatalf("the first place: %s", refused)
	}
	if _, refused := h.Take("t1", "alice"); refused != HeldUser {
		t.Errorf("alice's second: %q", refused)
	}
	if _, refused := h.Take("t1", "bob"); refused != "" {
		t.Errorf("bob's: %q", refused)
	}
	if _, refused := h.Take("t1", "carol"); refused != HeldTenant {
		t.Errorf("the tenant's third: %q", refused)
	}
	if _, refused := h.Take("t2", "dave"); refused != "" {
		t.Errorf("another tenant's: %q", refused)
	}
	if _, refused := h.Take("t3", "erin"); refused != HeldProcess {
		t.Errorf("the process's fourth: %q", refused)
	}
	a()
	if _, refused := h.Take("t1", "carol"); refused != "" {
		t.Errorf("carol's once alice's ended: %q", refused)
	}
	// A refusal holds nothing: every bound is back where it was.
	if h.PerTenant.held["t1"] != 2 || h.PerUser.held["alice"] != 0 || len(h.Process) != 3 {
		t.Errorf("held: %v %v %d", h.PerTenant.held, h.PerUser.held, len(h.Process))
	}
}
