package engine_test

import (
	"context"
	"errors"
	"strconv"
	"strings"
	"testing"
	"time"

	"github.com/convengine/engine"
	"github.com/convengine/engine/enginetest"
)

func TestMemoryStoreSuite(t *testing.T) {
	enginetest.StoreSuite{New: func(*testing.T) enginetest.Store { return &engine.MemoryStore{} },
		TurnLog: func(*testing.T) engine.TurnLog { return &engine.MemoryTurnLog{} }}.Run(t)
}

// BenchmarkMemoryStoreClaim measures recording a proof id while many are live, as a busy
// replica's replay window holds: the cost of a write must not grow with them.
func BenchmarkMemoryStoreClaim(b *testing.B) {
	for _, live := range []int{1000, 100000} {
		b.Run(strconv.Itoa(live)+"-live", func(b *testing.B) {
			m := &engine.MemoryStore{}
			ctx := context.Background()
			until := time.Now().Add(time.Hour)
			for i := range live {
				m.Claim(ctx, "live-"+strconv.Itoa(i), until)
			}
			keys := make([]string, b.N)
			for i := range keys {
				keys[i] = "new-" + strconv.Itoa(i)
			}
			b.ReportAllocs()
			b.ResetTimer()
			for i := range b.N {
				if ok, err := m.Claim(ctx, keys[i], until); !ok || err != nil {
					b.Fatal(ok, err)
				}
			}
		})
	}
}

// TestMemoryStoreForgetsExpiredClaims checks that a claim can be made again once it expired,
// and not before.
func TestMemoryStoreForgetsExpiredClaims(t *testing.T) {
	now := time.Unix(1_800_000_000, 0)
	m := &engine.MemoryStore{Now: func() time.Time { return now }}
	ctx := t.Context()
	if ok, _ := m.Claim(ctx, "jti", now.Add(time.Minute)); !ok {
		t.Fatal("a first claim was refused")
	}
	if ok, _ := m.Claim(ctx, "jti", now.Add(time.Minute)); ok {
		t.Fatal("a live claim was made twice")
	}
	now = now.Add(2 * time.Minute)
	for i := range 1000 { // writes that sweep
		m.Claim(ctx, "other-"+strconv.Itoa(i), now.Add(time.Minute))
	}
	if ok, _ := m.Claim(ctx, "jti", now.Add(time.Minute)); !ok {
		t.Fatal("an expired claim still blocks its id")
	}
}

// TestMemoryStoreBoundsSessions: a user's sessions past MaxSessionsPerUser drop that user's
// oldest; a session past MaxSessionBytes is refused with ErrStoreFull and no other user's
// session goes; expired sessions go as new ones come, and make room.
func TestMemoryStoreBoundsSessions(t *testing.T) {
	ctx := context.Background()
	now := time.Now()
	m := &engine.MemoryStore{Now: func() time.Time { return now }, MaxSessionsPerUser: 3, MaxSessionBytes: 10_000}
	put := func(id, user string, metadata int) error {
		s := &engine.Session{ID: id, TenantKey: "pk", User: user, CreatedAt: now, ExpiresAt: now.Add(time.Hour)}
		if metadata > 0 {
			s.Metadata = []byte(`{"x":"` + strings.Repeat("a", metadata) + `"}`)
		}
		return m.PutSession(ctx, s)
	}
	mustPut := func(id, user string, metadata int) {
		t.Helper()
		if err := put(id, user, metadata); err != nil {
			t.Fatal(err)
		}
	}
	has := func(id string) bool {
		_, err := m.Session(ctx, id)
		return err == nil
	}
	mustPut("bob-1", "bob", 0)
	for i := range 5 {
		mustPut("alice-"+strconv.Itoa(i), "alice", 0)
	}
	if has("alice-0") || has("alice-1") || !has("alice-2") || !has("alice-4") || !has("bob-1") {
		t.Fatal("alice keeps more than 3 sessions, or bob lost his")
	}
	// About 4 KB of metadata each from users of one session: two fit, the third is refused and
	// takes nobody's place.
	mustPut("carol-1", "carol", 3900)
	mustPut("dave-1", "dave", 3900)
	if err := put("erin-1", "erin", 4000); !errors.Is(err, engine.ErrStoreFull) {
		t.Fatalf("a session past the bytes bound: %v, want ErrStoreFull", err)
	}
	if has("erin-1") || !has("bob-1") || !has("alice-2") || !has("carol-1") || !has("dave-1") {
		t.Fatal("a session past the bytes bound was kept, or took another user's place")
	}
	// A user at their bound replaces their own oldest, full store or not.
	mustPut("alice-5", "alice", 0)
	if has("alice-2") || !has("alice-5") || !has("bob-1") {
		t.Fatal("alice's new session did not take the place of her oldest")
	}
	now = now.Add(2 * time.Hour)
	if has("dave-1") {
		t.Fatal("an expired session is found")
	}
	mustPut("erin-1", "erin", 4000) // the expired ones made room
}
