package toolcache_test

import (
	"testing"
	"time"

	"github.com/convengine/engine/internal/toolcache"
)

func TestExpired(t *testing.T) {
	now := time.Date(2025, 1, 1, 0, 0, 0, 0, time.UTC)
	fill := func() map[string]time.Time {
		return map[string]time.Time{"past": now.Add(-time.Second), "now": now, "later": now.Add(time.Second)}
	}
	id := func(t time.Time) time.Time { return t }

	t.Run("all", func(t *testing.T) {
		m := fill()
		toolcache.Sweep(m, -1, id, now)
		if len(m) != 1 || m["later"].IsZero() {
			t.Fatalf("kept %v, want only the entry that expires later", m)
		}
	})
	t.Run("some", func(t *testing.T) {
		for range 20 {
			m := fill()
			toolcache.Sweep(m, 1, id, now)
			if _, ok := m["later"]; !ok || len(m) < 2 {
				t.Fatalf("kept %v: one visit deletes at most one expired entry, never a live one", m)
			}
		}
	})
}
