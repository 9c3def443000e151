package engine_test

import (
	"context"
	"strconv"
	"testing"
	"time"

	"github.com/convengine/engine"
	"github.com/convengine/engine/enginetest"
)

func TestMemoryStoreSuite(t *testing.T) {
	enginetest.StoreSuite{New: func(*testing.T) enginetest.Store { return &engine.MemoryStore{} }}.Run(t)
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
