package pgstore_test

import (
	"context"
	"crypto/ed25519"
	"fmt"
	"sync"
	"sync/atomic"
	"testing"
	"time"

	"github.com/convengine/engine"
	"github.com/convengine/engine/client"
	"github.com/convengine/engine/enginetest"
	"github.com/convengine/engine/internal/testkit"
	"github.com/convengine/engine/record"
	"github.com/convengine/engine/widgets"
)

// TestTransfersThroughAnOutage: the demo bank's customers ask for transfers and confirm them
// through the engine, whose record is on PostgreSQL, while PostgreSQL is stopped and started
// again. Every transfer the bank received (money that moved) has its evidence in the record
// (zero missing): the ones asked while the database was down were refused record_unavailable
// before the bank was called. The turns of the outage are written once it is back, none twice,
// and the record verifies.
func TestTransfersThroughAnOutage(t *testing.T) {
	pg := testkit.StartPostgresT(t)
	s := open(t, pg.NewDatabase(t))
	rec, err := record.New(s, &record.Options{Key: recordKey, BatchEvery: 20 * time.Millisecond,
		ActionTimeout: time.Second, CheckpointEvery: 200 * time.Millisecond})
	if err != nil {
		t.Fatal(err)
	}
	d := enginetest.NewDemo(t, &enginetest.DemoOptions{Config: engine.Config{Recorder: rec}})

	var (
		stop                     atomic.Bool
		moved, refused, answered atomic.Int64
		mu                       sync.Mutex
		otherErrs                []error
		wg                       sync.WaitGroup
	)
	for w := range 4 {
		wg.Go(func() {
			c, err := client.New(d.URL, &client.Options{EngineKey: "pk_demo", UserToken: client.StaticToken(fmt.Sprint("outage-user-", w))})
			if err != nil {
				t.Error(err)
				return
			}
			for !stop.Load() {
				stream, err := c.Turn(t.Context(), &client.TurnRequest{Transcript: "send 1 dollar to Alex"})
				if err != nil {
					mu.Lock()
					otherErrs = append(otherErrs, err)
					mu.Unlock()
					continue
				}
				spec, err := stream.Spec()
				stream.Close()
				if err != nil || len(spec.Widgets) == 0 {
					continue
				}
				answered.Add(1)
				confirm := spec.Widgets[0].(widgets.Confirm)
				_, err = c.Execute(t.Context(), confirm.Execute, client.Auth{Method: client.AuthFaceID, VerifiedAt: time.Now()}, nil)
				switch {
				case err == nil:
					moved.Add(1)
				case client.IsCode(err, engine.CodeRecordUnavailable):
					refused.Add(1)
				default:
					mu.Lock()
					otherErrs = append(otherErrs, err)
					mu.Unlock()
				}
			}
		})
	}
	time.Sleep(700 * time.Millisecond)
	pg.Stop()
	time.Sleep(700 * time.Millisecond)
	if err := pg.Start(); err != nil {
		t.Fatal(err)
	}
	time.Sleep(700 * time.Millisecond)
	stop.Store(true)
	wg.Wait()
	ctx, cancel := context.WithTimeout(context.Background(), 30*time.Second)
	defer cancel()
	if err := rec.Close(ctx); err != nil {
		t.Fatalf("Close: %v", err)
	}
	t.Logf("%d turns answered, %d transfers made, %d refused while the record was down, %d other errors",
		answered.Load(), moved.Load(), refused.Load(), len(otherErrs))
	for _, err := range otherErrs {
		t.Errorf("unexpected: %v", err)
	}
	if refused.Load() == 0 || moved.Load() == 0 {
		t.Errorf("the outage was not met (%d refused) or nothing moved (%d)", refused.Load(), moved.Load())
	}

	// The bank's side: each transfer it received is named by its request id.
	received := map[string]bool{}
	for _, h := range d.Backend.Received() {
		if h.Get("Idempotency-Key") != "" {
			received[h.Get("X-Request-ID")] = true
		}
	}
	z := check(t, s) // every chain linked and hashed, and Verify as an auditor runs it
	actions := map[string]int{}
	turns := 0
	chains, err := s.Chains(ctx, record.ChainQuery{Limit: 500})
	if err != nil {
		t.Fatal(err)
	}
	for _, c := range chains {
		es, err := s.Entries(ctx, c.ID, 0, 10000)
		if err != nil {
			t.Fatal(err)
		}
		for _, e := range es {
			switch e.Kind {
			case record.KindAction:
				actions[e.Request]++
			case record.KindTurn:
				turns++
			}
		}
	}
	missing := 0
	for req := range received {
		if actions[req] != 1 {
			missing++
			t.Errorf("the transfer of request %s reached the bank with %d evidence entries", req, actions[req])
		}
	}
	if int64(len(received)) != moved.Load() {
		t.Errorf("the bank received %d transfers, the clients saw %d made", len(received), moved.Load())
	}
	if int64(turns) != answered.Load() {
		t.Errorf("%d turn entries for %d turns answered: a turn lost or written twice", turns, answered.Load())
	}
	t.Logf("evidence missing for %d of %d transfers; %d conversations", missing, len(received), z.chains)
	pub, _ := record.PublicKey(recordKey)
	if rep, err := record.Verify(ctx, s, []ed25519.PublicKey{pub}); err != nil || !rep.OK() || rep.Uncovered != 0 {
		t.Fatalf("Verify: %+v %v", rep, err)
	}
}
