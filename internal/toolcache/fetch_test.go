package toolcache_test

import (
	"context"
	"errors"
	"strings"
	"sync/atomic"
	"testing"
	"testing/synctest"
	"time"

	"github.com/convengine/engine/internal/toolcache"
)

// TestFetch: callers that ask together share one listing, which outlives a caller that gives
// up; a fresh list is reused, a failed one is not kept, and after Close the caller lists alone.
func TestFetch(t *testing.T) {
	synctest.Test(t, func(t *testing.T) {
		c := toolcache.New[string, *tenant, *index](ttl)
		now := func() time.Time { return time.Now() }
		var calls atomic.Int32
		var fail atomic.Bool
		list := func(ctx context.Context) ([]string, error) {
			calls.Add(1)
			time.Sleep(time.Second)
			if fail.Load() {
				return nil, errors.New("down")
			}
			return []string{"a"}, ctx.Err()
		}
		gone, cancel := context.WithTimeout(context.Background(), time.Millisecond)
		defer cancel()
		if _, err := c.Fetch(gone, "k", now, time.Minute, list); !errors.Is(err, context.DeadlineExceeded) {
			t.Fatalf("a caller that gave up: %v", err)
		}
		done := make(chan []string)
		for range 3 {
			go func() {
				l, _ := c.Fetch(context.Background(), "k", now, time.Minute, list)
				done <- l
			}()
		}
		for range 3 {
			if l := <-done; len(l) != 1 {
				t.Fatalf("a caller got %v", l)
			}
		}
		if l, err := c.Fetch(context.Background(), "k", now, time.Minute, list); len(l) != 1 || err != nil || calls.Load() != 1 {
			t.Fatalf("got %v, %v after %d listings; want one listing for all", l, err, calls.Load())
		}

		fail.Store(true)
		for range 2 {
			if _, err := c.Fetch(context.Background(), "failing", now, time.Minute, list); err == nil {
				t.Fatal("a failed listing answered")
			}
		}
		if calls.Load() != 3 {
			t.Fatalf("%d listings: a failed one was kept", calls.Load())
		}

		c.Close()
		fail.Store(false)
		if l, err := c.Fetch(context.Background(), "other", now, time.Minute, list); len(l) != 1 || err != nil {
			t.Fatalf("after Close: %v, %v", l, err)
		}
	})
}

func TestWarm(t *testing.T) {
	synctest.Test(t, func(t *testing.T) {
		c := toolcache.New[string, *tenant, *index](ttl)
		var runs atomic.Int32
		var failures atomic.Int32
		warm := func(context.Context) error { runs.Add(1); time.Sleep(time.Second); return errors.New("cold") }
		for range 3 {
			c.Warm(context.Background(), "k", time.Minute, warm, func(context.Context, error) { failures.Add(1) })
		}
		synctest.Wait()
		time.Sleep(2 * time.Second)
		synctest.Wait()
		if runs.Load() != 1 || failures.Load() != 3 {
			t.Fatalf("%d runs, %d failures; want one run whose failure each caller learns", runs.Load(), failures.Load())
		}
		c.Close()
	})
}

func TestRecover(t *testing.T) {
	err := func() (err error) {
		defer toolcache.Recover(&err, "listing tools")
		panic("secret value")
	}()
	if err == nil || err.Error() != "listing tools panicked: string" || strings.Contains(err.Error(), "secret") {
		t.Fatalf("Recover gave %v", err)
	}
}
