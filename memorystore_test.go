package engine_test

import (
	"context"
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

// TestMemoryStoreBoundsSessions: a user's sessions past MaxSessionsPerUser, and the oldest
// sessions past MaxSessionBytes, are dropped oldest first; other users' stay; expired sessions
// go as new ones come.
func TestMemoryStoreBoundsSessions(t *testing.T) {
	ctx := context.Background()
	now := time.Now()
	m := &engine.MemoryStore{Now: func() time.Time { return now }, MaxSessionsPerUser: 3, MaxSessionBytes: 10_000}
	put := func(id, user string, metadata int) {
		s := &engine.Session{ID: id, TenantKey: "pk", User: user, CreatedAt: now, ExpiresAt: now.Add(time.Hour)}
		if metadata > 0 {
			s.Metadata = []byte(`{"x":"` + strings.Repeat("a", metadata) + `"}`)
		}
		if err := m.PutSession(ctx, s); err != nil {
			t.Fatal(err)
		}
	}
	has := func(id string) bool {
		_, err := m.Session(ctx, id)
		return err == nil
	}
	put("bob-1", "bob", 0)
	for i := range 5 {
		put("alice-"+strconv.Itoa(i), "alice", 0)
	}
	if has("alice-0") || has("alice-1") || !has("alice-2") || !has("alice-4") || !has("bob-1") {
		t.Fatal("alice keeps more than 3 sessions, or bob lost his")
	}
	// 4 KB of metadata each from users of one session: the oldest sessions make room, as
	// few as needed.
	put("carol-1", "carol", 4000)
	put("dave-1", "dave", 4000)
	if has("bob-1") || !has("alice-2") || !has("carol-1") || !has("dave-1") {
		t.Fatal("the oldest session did not make room for the new one, or more went")
	}
	put("erin-1", "erin", 4000)
	if has("alice-4") || has("carol-1") || !has("dave-1") || !has("erin-1") {
		t.Fatal("past the bytes bound, the oldest did not go first")
	}
	now = now.Add(2 * time.Hour)
	if has("erin-1") {
		t.Fatal("an expired session is found")
	}
}
