package engine_test

import (
	"errors"
	"fmt"
	"runtime"
	"testing"
	"time"

	"github.com/convengine/engine"
)

// TestMemoryTurnLogIsBounded: a log at its MaxBytes keeps the turns it has and refuses new
// ones with ErrStoreFull; one user's turns are refused past their share while another user's
// still fit; and what it holds stays near its bound in the heap.
func TestMemoryTurnLogIsBounded(t *testing.T) {
	l := &engine.MemoryTurnLog{MaxBytes: 4 << 20}
	keep := time.Now().Add(time.Hour)
	data := []byte(`{"delta":"` + fmt.Sprintf("%090d", 0) + `"}`)
	var before runtime.MemStats
	runtime.GC()
	runtime.ReadMemStats(&before)
	evs := make([]engine.LoggedEvent, 10)
	for j := range evs {
		evs[j] = engine.LoggedEvent{ID: j + 1, Name: engine.EventSpeak, Data: data}
	}
	turn := func(id, user string) error {
		return l.AppendEvents(t.Context(), id, &engine.TurnOwner{Tenant: "pk", User: user}, evs, true, keep)
	}
	kept := 0
	for i := range 20000 {
		switch err := turn(fmt.Sprint("turn-", i), fmt.Sprint("user-", i%1000)); {
		case err == nil:
			kept++
		case !errors.Is(err, engine.ErrStoreFull):
			t.Fatal(err)
		}
	}
	var after runtime.MemStats
	runtime.GC()
	runtime.ReadMemStats(&after)
	if grew := int64(after.HeapAlloc) - int64(before.HeapAlloc); grew > 6<<20 {
		t.Errorf("the heap grew by %d MB for a log bounded at 4 MB", grew>>20)
	}
	if kept == 0 || kept == 20000 {
		t.Fatalf("%d turns of 20 000 kept", kept)
	}
	if rec, err := l.ReadEvents(t.Context(), "turn-0", 0, 100, 0); err != nil || len(rec.Events) != 10 {
		t.Errorf("the first turn is no longer kept: %v", err)
	}
	if _, err := l.ReadEvents(t.Context(), "turn-19999", 0, 100, 0); !errors.Is(err, engine.ErrTurnNotFound) {
		t.Errorf("a turn past the bound is kept: %v", err)
	}
	runtime.KeepAlive(l)

	// One user fills their share (an eighth) and no more; another user's turn still fits.
	l = &engine.MemoryTurnLog{MaxBytes: 1 << 20}
	mine := 0
	for i := range 1000 {
		if turn(fmt.Sprint("mine-", i), "me") == nil {
			mine++
		}
	}
	if share := mine * (len(data) + 96 + len(engine.EventSpeak)) * 10; mine == 0 || share > 1<<20/8 {
		t.Errorf("one user kept %d turns, %d bytes, of a log of 1 MB", mine, share)
	}
	if err := turn("yours", "you"); err != nil {
		t.Errorf("another user's turn: %v", err)
	}
}

// TestMemoryTurnLogDroppedTurn: a running turn that would take the log past its bound stops
// being kept, not the turns that are over; it is not written again without its owner and
// first events, and its follower is told it is gone.
func TestMemoryTurnLogDroppedTurn(t *testing.T) {
	l := &engine.MemoryTurnLog{MaxBytes: 64 << 10}
	keep := time.Now().Add(time.Hour)
	owner := func(i int) *engine.TurnOwner { return &engine.TurnOwner{Tenant: "pk", User: fmt.Sprint("u", i)} }
	if err := l.AppendEvents(t.Context(), "a", owner(0), []engine.LoggedEvent{{ID: 1, Name: engine.EventStart, Data: []byte(`{}`)}}, false, keep); err != nil {
		t.Fatal(err)
	}
	followed := make(chan error, 1)
	go func() {
		// Waiting for events past any the test writes, so that it is still waiting when the
		// turn is dropped, however late it starts.
		_, err := l.ReadEvents(t.Context(), "a", 1000, 10, 10*time.Second)
		followed <- err
	}()
	var others []string
	for i := range 100 { // other turns fill the log
		big := []engine.LoggedEvent{{ID: 1, Name: engine.EventStart, Data: make([]byte, 4<<10)}}
		id := fmt.Sprint("other-", i)
		if l.AppendEvents(t.Context(), id, owner(i+1), big, true, keep) == nil {
			others = append(others, id)
		}
	}
	var err error
	for i := 2; err == nil && i < 100; i++ { // a grows past the bound
		err = l.AppendEvents(t.Context(), "a", nil, []engine.LoggedEvent{{ID: i, Name: engine.EventSpeak, Data: make([]byte, 4<<10)}}, false, keep)
	}
	if !errors.Is(err, engine.ErrStoreFull) {
		t.Fatalf("a running turn past the bound: %v, want ErrStoreFull", err)
	}
	if err := <-followed; !errors.Is(err, engine.ErrTurnNotFound) {
		t.Errorf("the follower of a dropped turn: %v", err)
	}
	err = l.AppendEvents(t.Context(), "a", nil, []engine.LoggedEvent{{ID: 200, Name: engine.EventSpeak, Data: []byte(`{}`)}}, false, keep)
	if !errors.Is(err, engine.ErrTurnNotFound) {
		t.Errorf("the dropped turn's next events: %v, want ErrTurnNotFound", err)
	}
	if _, err := l.ReadEvents(t.Context(), "a", 0, 10, 0); !errors.Is(err, engine.ErrTurnNotFound) {
		t.Errorf("the dropped turn is back: %v", err)
	}
	for _, id := range others {
		if _, err := l.ReadEvents(t.Context(), id, 0, 10, 0); err != nil {
			t.Errorf("turn %s, over, was dropped: %v", id, err)
		}
	}
}
