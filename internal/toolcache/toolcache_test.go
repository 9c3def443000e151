package toolcache_test

import (
	"context"
	"errors"
	"fmt"
	"sync/atomic"
	"testing"
	"testing/synctest"
	"time"

	"github.com/convengine/engine/internal/toolcache"
)

type tenant struct{ name string }

type index struct{ of []string }

type cache = toolcache.Cache[string, *tenant, *index]

const ttl = time.Minute

func TestListExpires(t *testing.T) {
	cases := []struct {
		name  string
		ttl   time.Duration
		keeps time.Duration // 0: nothing is kept
	}{
		{"given", ttl, ttl},
		{"default", 0, toolcache.DefaultTTL},
		{"negative keeps nothing", -1, 0},
	}
	for _, tc := range cases {
		t.Run(tc.name, func(t *testing.T) {
			synctest.Test(t, func(t *testing.T) {
				c := toolcache.New[string, *tenant, *index](tc.ttl)
				defer c.Close()
				c.PutList("k", []string{"a"}, time.Now())
				c.MarkWarm("k", time.Now())
				if tc.keeps == 0 {
					if _, ok := c.List("k", time.Now()); ok || c.IsWarm("k", time.Now()) {
						t.Fatal("kept a list or a warm mark")
					}
					return
				}
				time.Sleep(tc.keeps - time.Nanosecond)
				if l, ok := c.List("k", time.Now()); !ok || len(l) != 1 || l[0] != "a" {
					t.Fatalf("just before the ttl: %v, %v; want [a], fresh", l, ok)
				}
				if !c.IsWarm("k", time.Now()) {
					t.Fatal("just before the ttl: not warm")
				}
				if _, ok := c.List("other", time.Now()); ok {
					t.Fatal("a key never put is fresh")
				}
				time.Sleep(time.Nanosecond)
				if _, ok := c.List("k", time.Now()); ok {
					t.Fatal("at the ttl: still fresh")
				}
				if c.IsWarm("k", time.Now()) {
					t.Fatal("at the ttl: still warm")
				}
			})
		})
	}
}

func TestIndexFollowsItsList(t *testing.T) {
	synctest.Test(t, func(t *testing.T) {
		c := toolcache.New[string, *tenant, *index](ttl)
		defer c.Close()
		owner := &tenant{"t"}
		first := []string{"a", "b"}
		c.PutList("k", first, time.Now())
		if _, ok := c.Index("k", owner, time.Now()); ok {
			t.Fatal("an index before any was put")
		}
		idx := &index{first}
		c.PutIndex("k", first, owner, idx)
		if got, ok := c.Index("k", owner, time.Now()); !ok || got != idx {
			t.Fatalf("Index = %v, %v; want the index put", got, ok)
		}

		// A new listing drops the index of the old one, and an index made of the old list
		// (a caller that listed before) is not kept with the new one.
		second := []string{"a", "b"}
		c.PutList("k", second, time.Now())
		if _, ok := c.Index("k", owner, time.Now()); ok {
			t.Fatal("the old list's index is served with the new list")
		}
		c.PutIndex("k", first, owner, idx)
		if _, ok := c.Index("k", owner, time.Now()); ok {
			t.Fatal("an index of a list no longer kept (equal, not the same) is served")
		}
		c.PutIndex("other", second, owner, idx)
		if _, ok := c.Index("other", owner, time.Now()); ok {
			t.Fatal("an index of a key without a list is served")
		}

		idx2 := &index{second}
		c.PutIndex("k", second, owner, idx2)
		if got, ok := c.Index("k", owner, time.Now()); !ok || got != idx2 {
			t.Fatalf("Index = %v, %v; want the new list's index", got, ok)
		}
		time.Sleep(ttl)
		if _, ok := c.Index("k", owner, time.Now()); ok {
			t.Fatal("the index outlives its list")
		}
	})
}

// TestChangedOwnerGetsNoStaleIndex: a tenant store may hand out a changed tenant under the same
// key; the index made for the old one describes its tools, not the new one's.
func TestChangedOwnerGetsNoStaleIndex(t *testing.T) {
	c := toolcache.New[string, *tenant, *index](ttl)
	defer c.Close()
	now := time.Date(2025, 1, 1, 0, 0, 0, 0, time.UTC)
	old, changed := &tenant{"t"}, &tenant{"t"}
	list := []string{"a"}
	c.PutList("k", list, now)
	c.PutIndex("k", list, old, &index{list})
	if _, ok := c.Index("k", changed, now); ok {
		t.Fatal("the changed tenant is served the old tenant's index")
	}
	if _, ok := c.Index("k", old, now); !ok {
		t.Fatal("the old tenant is not served its index")
	}
	idx := &index{list}
	c.PutIndex("k", list, changed, idx)
	if got, ok := c.Index("k", changed, now); !ok || got != idx {
		t.Fatal("the changed tenant's own index is not served")
	}
	if _, ok := c.Index("k", old, now); ok {
		t.Fatal("the old tenant is served the changed tenant's index")
	}
}

func TestListsAreBounded(t *testing.T) {
	c := toolcache.New[string, *tenant, *index](ttl)
	defer c.Close()
	now := time.Date(2025, 1, 1, 0, 0, 0, 0, time.UTC)
	const n = 10000
	for i := range n {
		c.PutList(fmt.Sprint(i), []string{"a"}, now)
	}
	fresh := 0
	for i := range n {
		if _, ok := c.List(fmt.Sprint(i), now); ok {
			fresh++
		}
	}
	if _, ok := c.List(fmt.Sprint(n-1), now); !ok {
		t.Error("the list put last is not kept")
	}
	if fresh >= n || fresh < 1000 {
		t.Errorf("%d of %d lists kept; want a bound below %d, and most kept", fresh, n, n)
	}
}

func TestCloseStopsAndWaitsForWork(t *testing.T) {
	synctest.Test(t, func(t *testing.T) {
		c := toolcache.New[string, *tenant, *index](ttl)
		type key struct{}
		parent, cancelParent := context.WithCancel(context.WithValue(context.Background(), key{}, "v"))
		var ended atomic.Bool
		var cause error
		if !c.Go(parent, time.Hour, func(ctx context.Context) {
			if ctx.Value(key{}) != "v" {
				t.Error("the work's context lost the parent's values")
			}
			<-ctx.Done()
			cause = ctx.Err()
			time.Sleep(time.Second) // winding down takes a while
			ended.Store(true)
		}) {
			t.Fatal("Go refused work before Close")
		}
		cancelParent()
		synctest.Wait()
		if ended.Load() {
			t.Fatal("the work ended with its parent's context; it outlives it")
		}

		// Work registered by hand is waited for too.
		if !c.Enter() {
			t.Fatal("Enter refused before Close")
		}
		var exited atomic.Bool
		go func() {
			time.Sleep(2 * time.Second)
			exited.Store(true)
			c.Exit()
		}()

		c.Close()
		if !ended.Load() || !exited.Load() {
			t.Fatalf("Close returned before the work ended (Go's %v, Enter's %v)", ended.Load(), exited.Load())
		}
		if !errors.Is(cause, context.Canceled) {
			t.Errorf("the work's context ended with %v, want cancelled by Close", cause)
		}
		if c.Enter() {
			t.Error("Enter accepted work after Close")
		}
		if c.Go(context.Background(), time.Hour, func(context.Context) { t.Error("work ran after Close") }) {
			t.Error("Go accepted work after Close")
		}
		c.Close() // again
	})
}

func TestDetachEndsAfterItsTime(t *testing.T) {
	synctest.Test(t, func(t *testing.T) {
		c := toolcache.New[string, *tenant, *index](ttl)
		defer c.Close()
		parent, cancelParent := context.WithCancel(context.Background())
		ctx, cancel := c.Detach(parent, 10*time.Second)
		defer cancel()
		cancelParent()
		time.Sleep(10*time.Second - time.Nanosecond)
		if ctx.Err() != nil {
			t.Fatalf("ended before its time: %v", ctx.Err())
		}
		time.Sleep(time.Nanosecond)
		synctest.Wait()
		if !errors.Is(ctx.Err(), context.DeadlineExceeded) {
			t.Fatalf("after its time: %v, want the deadline", ctx.Err())
		}
	})
}
