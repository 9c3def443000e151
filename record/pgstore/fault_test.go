package pgstore_test

import (
	"context"
	"errors"
	"fmt"
	"sync"
	"sync/atomic"
	"testing"
	"time"

	"github.com/convengine/engine"

	"github.com/convengine/engine/internal/testkit"
	"github.com/convengine/engine/record"
	"github.com/convengine/engine/record/pgstore"
)

// TestUnavailable stops the server under a Store: its errors say the database is unavailable
// (so that the Recorder retries), and once the server is back the same Store appends again.
func TestUnavailable(t *testing.T) {
	pg := testkit.StartPostgresT(t)
	s := open(t, pg.NewDatabase(t))
	ctx := context.Background()
	c := chainOf("outage")
	if _, err := s.Append(ctx, c, []record.Entry{entry(c, "before")}, link); err != nil {
		t.Fatal(err)
	}
	pg.Stop()
	for i, call := range []func(ctx context.Context) error{
		func(ctx context.Context) error {
			_, err := s.Append(ctx, c, []record.Entry{entry(c, "during")}, link)
			return err
		},
		func(ctx context.Context) error { _, err := s.Chain(ctx, c.ID); return err },
		func(ctx context.Context) error { _, err := s.Key(ctx, "t", "u"); return err },
	} {
		ctx, cancel := context.WithTimeout(ctx, 5*time.Second)
		err := call(ctx)
		cancel()
		if !errors.Is(err, pgstore.ErrUnavailable) {
			t.Errorf("call %d while the server is down: %v, want ErrUnavailable", i, err)
		}
	}
	if err := pg.Start(); err != nil {
		t.Fatal(err)
	}
	for i := range 3 {
		e := entry(c, fmt.Sprintf("after-%d", i))
		if _, err := s.Append(ctx, c, []record.Entry{e}, link); err != nil {
			t.Fatalf("after the restart: %v", err)
		}
	}
	intact(t, s, c, 4)
}

// TestRecorderOutage stops PostgreSQL under a Recorder taking turns and actions from several
// goroutines, then starts it again: while it is down, actions are refused and turns queued;
// once it is back the queued turns are written, none twice, every action the Recorder accepted
// has its evidence stored (zero missing), and the chains are intact and covered.
func TestRecorderOutage(t *testing.T) {
	pg := testkit.StartPostgresT(t)
	s := open(t, pg.NewDatabase(t))
	r := newRecorder(t, s)
	ctx := context.Background()

	var down atomic.Int32 // 1 from the server's stop until just before its start
	type result struct {
		turns, accepted []string
		refusedDown     int
		acceptedDown    []string
	}
	const workers = 4
	results := make([]result, workers)
	stop := make(chan struct{})
	var wg sync.WaitGroup
	for w := range workers {
		wg.Go(func() {
			res := &results[w]
			for i := 0; ; i++ {
				select {
				case <-stop:
					return
				case <-time.After(5 * time.Millisecond):
				}
				conv := fmt.Sprintf("conv-%d-%d", w, i%3)
				id := fmt.Sprintf("%d-%d", w, i)
				r.Turn(ctx, turnOf(conv, "turn-"+id))
				res.turns = append(res.turns, "turn-"+id)
				if i%4 != 3 {
					continue
				}
				wasDown := down.Load() == 1
				outcome, err := r.Action(ctx, actionOf(conv, "action-"+id))
				stillDown := down.Load() == 1
				if err != nil {
					if wasDown && stillDown {
						res.refusedDown++
					}
					continue
				}
				if wasDown && stillDown {
					res.acceptedDown = append(res.acceptedDown, "action-"+id)
				}
				res.accepted = append(res.accepted, "action-"+id)
				outcome(ctx, &engine.ActionOutcome{Time: time.Now(), Outcome: "ok", Result: `{"id":"tr"}`})
			}
		})
	}
	time.Sleep(400 * time.Millisecond)
	pg.Stop()
	down.Store(1)
	time.Sleep(600 * time.Millisecond)
	down.Store(0)
	if err := pg.Start(); err != nil {
		t.Fatal(err)
	}
	time.Sleep(400 * time.Millisecond)
	close(stop)
	wg.Wait()
	closeCtx, cancel := context.WithTimeout(ctx, 20*time.Second)
	defer cancel()
	if err := r.Close(closeCtx); err != nil {
		t.Fatal(err)
	}
	if st := r.Stats(); st.Dropped != 0 || st.Failures == 0 {
		t.Errorf("recorder stats %+v: want no entry dropped, and failed appends while the server was down", st)
	}

	z := check(t, s)
	if !z.covered {
		t.Error("after Close, a chain's head is not covered by a checkpoint")
	}
	var turns, accepted, refused int
	for _, res := range results {
		for _, a := range res.acceptedDown {
			t.Errorf("action %s was accepted while the server was down", a)
		}
		refused += res.refusedDown
		for _, id := range res.turns {
			if n := z.byKind[record.KindTurn][id]; n != 1 {
				t.Errorf("turn %s is stored %d times, want once", id, n)
			}
		}
		for _, id := range res.accepted {
			if n := z.byKind[record.KindAction][id]; n != 1 {
				t.Errorf("accepted action %s: its evidence is stored %d times, want once", id, n)
			}
			if n := z.byKind[record.KindOutcome][id]; n != 1 {
				t.Errorf("accepted action %s: its outcome is stored %d times, want once", id, n)
			}
		}
		turns, accepted = turns+len(res.turns), accepted+len(res.accepted)
	}
	if refused == 0 {
		t.Error("no action was refused while the server was down")
	}
	if len(z.byKind[record.KindTurn]) != turns {
		t.Errorf("%d turns stored, %d recorded", len(z.byKind[record.KindTurn]), turns)
	}
	t.Logf("%d turns and %d accepted actions recorded (%d refused while the server was down), in %d conversations",
		turns, accepted, refused, z.chains)
}
