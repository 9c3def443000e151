package redisstore_test

import (
	"context"
	"fmt"
	"sync"
	"testing"
	"time"

	"github.com/redis/go-redis/v9"

	"github.com/convengine/engine"
	"github.com/convengine/engine/redisstore"
)

// TestResumesLeaveThePoolToOtherCalls: many resumes waiting for a turn's next events at once
// do not take every connection of the client's pool. A claim made meanwhile (a session's
// proof, a confirmed action) is answered, and each resume still gets the events once they come.
func TestResumesLeaveThePoolToOtherCalls(t *testing.T) {
	needRedis(t)
	const pool, followers = 8, 40
	c := redis.NewClient(&redis.Options{Addr: standalone.Addr, PoolSize: pool, ContextTimeoutEnabled: true})
	defer c.Close()
	s := redisstore.New(c, &redisstore.Options{Prefix: prefix(t)})
	ctx := t.Context()
	owner := &engine.TurnOwner{Tenant: "t", User: "u"}
	keep := time.Now().Add(time.Minute)
	for i := range followers {
		if err := s.AppendEvents(ctx, fmt.Sprint("turn", i), owner, []engine.LoggedEvent{{ID: 1, Name: "start", Data: []byte(`{}`)}}, false, keep); err != nil {
			t.Fatal(err)
		}
	}

	// Each follower waits for the event after its first, as a resume's loop does, until it
	// comes or 5 s pass.
	var wg sync.WaitGroup
	got := make([]int, followers)
	for i := range followers {
		wg.Go(func() {
			deadline := time.Now().Add(5 * time.Second)
			for time.Now().Before(deadline) {
				rec, err := s.ReadEvents(ctx, fmt.Sprint("turn", i), 1, 10, 2*time.Second)
				if err != nil {
					t.Errorf("follower %d: %v", i, err)
					return
				}
				if len(rec.Events) > 0 {
					got[i] = rec.Events[0].ID
					return
				}
			}
		})
	}
	time.Sleep(300 * time.Millisecond) // the followers are waiting

	start := time.Now()
	if _, err := s.Claim(ctx, "a proof", keep); err != nil {
		t.Errorf("a claim while %d resumes wait on a pool of %d: %v", followers, pool, err)
	}
	t.Logf("a claim while %d resumes wait on a pool of %d: %v", followers, pool, time.Since(start))

	for i := range followers {
		ev := engine.LoggedEvent{ID: 2, Name: "speak", Data: []byte(`{"delta":"hi"}`)}
		if err := s.AppendEvents(context.Background(), fmt.Sprint("turn", i), nil, []engine.LoggedEvent{ev}, false, keep); err != nil {
			t.Fatal(err)
		}
	}
	wg.Wait()
	for i, id := range got {
		if id != 2 {
			t.Errorf("follower %d got event %d, want 2", i, id)
		}
	}
}

// TestATurnWhoseLeaseLapsedIsLost: a running turn is held by its replica's lease, which each
// append renews and done ends; once the lease key is gone (it expires engine.TurnLease after
// the replica's last append), the turn reads as lost; a later write renews it.
func TestATurnWhoseLeaseLapsedIsLost(t *testing.T) {
	needRedis(t)
	c := redis.NewClient(&redis.Options{Addr: standalone.Addr, ContextTimeoutEnabled: true})
	defer c.Close()
	p := prefix(t)
	s := redisstore.New(c, &redisstore.Options{Prefix: p})
	ctx := t.Context()
	owner := &engine.TurnOwner{Tenant: "t", User: "u"}
	keep := time.Now().Add(time.Minute)
	start := []engine.LoggedEvent{{ID: 1, Name: "start", Data: []byte(`{}`)}}
	for _, turn := range []string{"running", "over"} {
		if err := s.AppendEvents(ctx, turn, owner, start, turn == "over", keep); err != nil {
			t.Fatal(err)
		}
	}
	if ttl := c.PTTL(ctx, p+"turnlease:{running}").Val(); ttl <= 0 || ttl > engine.TurnLease {
		t.Fatalf("the running turn's lease expires in %v, want within %v", ttl, engine.TurnLease)
	}
	for _, turn := range []string{"running", "over"} {
		if rec, err := s.ReadEvents(ctx, turn, 1, 10, 0); err != nil || rec.Lost {
			t.Fatalf("%s, leased: %+v %v", turn, rec, err)
		}
	}

	c.Del(ctx, p+"turnlease:{running}", p+"turnlease:{over}") // the replica died a lease ago
	if rec, err := s.ReadEvents(ctx, "running", 1, 10, time.Second); err != nil || !rec.Lost || rec.Done {
		t.Errorf("running, its lease lapsed: %+v %v", rec, err)
	}
	if rec, err := s.ReadEvents(ctx, "over", 1, 10, 0); err != nil || rec.Lost || !rec.Done {
		t.Errorf("over: %+v %v", rec, err)
	}
	// A write renews the lease: a replica that was only slow holds the turn again.
	if err := s.AppendEvents(ctx, "running", nil, nil, false, keep); err != nil {
		t.Fatal(err)
	}
	if rec, err := s.ReadEvents(ctx, "running", 1, 10, 0); err != nil || rec.Lost {
		t.Errorf("running, renewed: %+v %v", rec, err)
	}
}

// TestAppendEventsTakesABatchAgain: a batch written again (its first try's answer was lost, and
// the engine tried again) is taken without error and without a duplicate.
func TestAppendEventsTakesABatchAgain(t *testing.T) {
	needRedis(t)
	c := redis.NewClient(&redis.Options{Addr: standalone.Addr, ContextTimeoutEnabled: true})
	defer c.Close()
	s := redisstore.New(c, &redisstore.Options{Prefix: prefix(t)})
	ctx := t.Context()
	owner := &engine.TurnOwner{Tenant: "t", User: "u"}
	keep := time.Now().Add(time.Minute)
	evs := []engine.LoggedEvent{{ID: 1, Name: "start", Data: []byte(`{}`)}, {ID: 2, Name: "speak", Data: []byte(`{"delta":"hi"}`)}}
	for try := range 2 {
		if err := s.AppendEvents(ctx, "again", owner, evs, false, keep); err != nil {
			t.Fatalf("try %d: %v", try+1, err)
		}
	}
	rec, err := s.ReadEvents(ctx, "again", 0, 10, 0)
	if err != nil || len(rec.Events) != 2 || rec.Events[1].ID != 2 {
		t.Fatalf("read: %+v %v", rec, err)
	}
	// A batch after them is not mistaken for one written before.
	if err := s.AppendEvents(ctx, "again", nil, []engine.LoggedEvent{{ID: 3, Name: "done", Data: []byte(`{}`)}}, true, keep); err != nil {
		t.Fatal(err)
	}
	if rec, _ := s.ReadEvents(ctx, "again", 0, 10, 0); len(rec.Events) != 3 || !rec.Done {
		t.Errorf("after the next batch: %+v", rec)
	}
}
