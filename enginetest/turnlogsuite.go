package enginetest

import (
	"errors"
	"fmt"
	"sync"
	"testing"
	"time"

	"github.com/convengine/engine"
)

func loggedEvents(from, to int) []engine.LoggedEvent {
	var evs []engine.LoggedEvent
	for i := from; i <= to; i++ {
		evs = append(evs, engine.LoggedEvent{ID: i, Name: engine.EventSpeak, Data: []byte(fmt.Sprintf(`{"delta":"w%d "}`, i))})
	}
	return evs
}

func checkEvents(t *testing.T, what string, got []engine.LoggedEvent, from, to int) {
	t.Helper()
	want := loggedEvents(from, to)
	if len(got) != len(want) {
		t.Fatalf("%s: %d events, want %d to %d", what, len(got), from, to)
	}
	for i := range want {
		if got[i].ID != want[i].ID || got[i].Name != want[i].Name || string(got[i].Data) != string(want[i].Data) {
			t.Fatalf("%s: event %d is %d %s %s", what, i, got[i].ID, got[i].Name, got[i].Data)
		}
	}
}

func turnLogRoundTrip(t *testing.T, l engine.TurnLog) {
	ctx := t.Context()
	keep := time.Now().Add(time.Hour)
	owner := &engine.TurnOwner{Tenant: "pk_a", User: "u1", Session: "s1", Environment: "staging"}
	if err := l.AppendEvents(ctx, "turn-1", owner, loggedEvents(1, 3), false, keep); err != nil {
		t.Fatal(err)
	}
	rec, err := l.ReadEvents(ctx, "turn-1", 0, 100, 0)
	if err != nil || rec.Done || rec.Owner != *owner {
		t.Fatalf("read: %+v %v", rec, err)
	}
	checkEvents(t, "the first three", rec.Events, 1, 3)
	if err := l.AppendEvents(ctx, "turn-1", nil, loggedEvents(4, 5), true, keep); err != nil {
		t.Fatal(err)
	}
	rec, err = l.ReadEvents(ctx, "turn-1", 3, 100, 0)
	if err != nil || !rec.Done || rec.Owner != *owner {
		t.Fatalf("read after 3: %+v %v", rec, err)
	}
	checkEvents(t, "after 3", rec.Events, 4, 5)
	rec, _ = l.ReadEvents(ctx, "turn-1", 1, 2, 0)
	checkEvents(t, "two after 1", rec.Events, 2, 3)
	rec, _ = l.ReadEvents(ctx, "turn-1", 5, 100, time.Second)
	if len(rec.Events) != 0 || !rec.Done {
		t.Errorf("after the last of a turn that is over: %+v", rec)
	}
	if _, err := l.ReadEvents(ctx, "turn-2", 0, 100, 0); !errors.Is(err, engine.ErrTurnNotFound) {
		t.Errorf("an unknown turn: %v", err)
	}
	// The owner of one turn is not another's.
	l.AppendEvents(ctx, "turn-3", &engine.TurnOwner{Tenant: "pk_b", User: "u2"}, loggedEvents(1, 1), false, keep)
	if rec, _ := l.ReadEvents(ctx, "turn-3", 0, 100, 0); rec.Owner.Tenant != "pk_b" || rec.Owner.Session != "" {
		t.Errorf("turn-3's owner: %+v", rec.Owner)
	}
}

func turnLogWaits(t *testing.T, l engine.TurnLog) {
	ctx := t.Context()
	keep := time.Now().Add(time.Hour)
	l.AppendEvents(ctx, "turn-w", &engine.TurnOwner{Tenant: "pk_a", User: "u"}, loggedEvents(1, 1), false, keep)
	go func() {
		time.Sleep(100 * time.Millisecond)
		l.AppendEvents(ctx, "turn-w", nil, loggedEvents(2, 2), false, keep)
	}()
	start := time.Now()
	rec, err := l.ReadEvents(ctx, "turn-w", 1, 100, 3*time.Second)
	if err != nil {
		t.Fatal(err)
	}
	checkEvents(t, "the event waited for", rec.Events, 2, 2)
	if d := time.Since(start); d > 2*time.Second {
		t.Errorf("the reader waited %v for an event appended after 100 ms", d)
	}
	start = time.Now()
	rec, err = l.ReadEvents(ctx, "turn-w", 2, 100, 300*time.Millisecond)
	if err != nil || len(rec.Events) != 0 || rec.Done {
		t.Errorf("nothing new: %+v %v", rec, err)
	}
	if d := time.Since(start); d < 250*time.Millisecond || d > 3*time.Second {
		t.Errorf("waiting for nothing took %v, want about 300 ms", d)
	}
}

func turnLogExpiry(t *testing.T, l engine.TurnLog) {
	ctx := t.Context()
	l.AppendEvents(ctx, "turn-e", &engine.TurnOwner{Tenant: "pk_a", User: "u"}, loggedEvents(1, 2), true, time.Now().Add(window))
	if _, err := l.ReadEvents(ctx, "turn-e", 0, 100, 0); err != nil {
		t.Fatal(err)
	}
	eventually(t, "the turn's expiry", func() bool {
		_, err := l.ReadEvents(ctx, "turn-e", 0, 100, 0)
		return errors.Is(err, engine.ErrTurnNotFound)
	})
}

func turnLogFollowers(t *testing.T, l engine.TurnLog) {
	ctx := t.Context()
	keep := time.Now().Add(time.Hour)
	const total = 100
	l.AppendEvents(ctx, "turn-f", &engine.TurnOwner{Tenant: "pk_a", User: "u"}, nil, false, keep)
	var wg sync.WaitGroup
	errs := make(chan error, 10)
	for range 10 {
		wg.Go(func() {
			var got []engine.LoggedEvent
			after := 0
			for deadline := time.Now().Add(10 * time.Second); time.Now().Before(deadline); {
				rec, err := l.ReadEvents(ctx, "turn-f", after, 16, time.Second)
				if err != nil {
					errs <- err
					return
				}
				for _, ev := range rec.Events {
					got = append(got, ev)
					after = ev.ID
				}
				if rec.Done && len(rec.Events) == 0 {
					break
				}
			}
			if len(got) != total {
				errs <- fmt.Errorf("a follower got %d events, want %d", len(got), total)
				return
			}
			for i, ev := range got {
				if ev.ID != i+1 {
					errs <- fmt.Errorf("a follower got event %d at %d", ev.ID, i+1)
					return
				}
			}
		})
	}
	for i := 1; i <= total; i += 5 {
		if err := l.AppendEvents(ctx, "turn-f", nil, loggedEvents(i, i+4), i+4 == total, keep); err != nil {
			t.Fatal(err)
		}
		time.Sleep(2 * time.Millisecond)
	}
	wg.Wait()
	close(errs)
	for err := range errs {
		t.Error(err)
	}
}
