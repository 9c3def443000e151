package engine_test

import (
	"errors"
	"fmt"
	"runtime"
	"testing"
	"time"

	"github.com/convengine/engine"
)

// TestMemoryTurnLogIsBounded: a log past its MaxBytes drops the turns logged first, and what
// it holds stays near its bound in the heap.
func TestMemoryTurnLogIsBounded(t *testing.T) {
	l := &engine.MemoryTurnLog{MaxBytes: 4 << 20}
	keep := time.Now().Add(time.Hour)
	data := []byte(`{"delta":"` + fmt.Sprintf("%090d", 0) + `"}`)
	var before runtime.MemStats
	runtime.GC()
	runtime.ReadMemStats(&before)
	for i := range 20000 {
		evs := make([]engine.LoggedEvent, 10)
		for j := range evs {
			evs[j] = engine.LoggedEvent{ID: j + 1, Name: engine.EventSpeak, Data: data}
		}
		if err := l.AppendEvents(t.Context(), fmt.Sprint("turn-", i), &engine.TurnOwner{Tenant: "pk", User: "u"}, evs, true, keep); err != nil {
			t.Fatal(err)
		}
	}
	var after runtime.MemStats
	runtime.GC()
	runtime.ReadMemStats(&after)
	if grew := int64(after.HeapAlloc) - int64(before.HeapAlloc); grew > 6<<20 {
		t.Errorf("the heap grew by %d MB for a log bounded at 4 MB", grew>>20)
	}
	if _, err := l.ReadEvents(t.Context(), "turn-0", 0, 100, 0); !errors.Is(err, engine.ErrTurnNotFound) {
		t.Errorf("the first turn is still kept: %v", err)
	}
	if rec, err := l.ReadEvents(t.Context(), "turn-19999", 0, 100, 0); err != nil || len(rec.Events) != 10 {
		t.Errorf("the last turn: %v", err)
	}
	runtime.KeepAlive(l)
}

// TestMemoryTurnLogDroppedTurn: a running turn dropped to make room is not written again
// without its owner and first events; its follower is told it is gone.
func TestMemoryTurnLogDroppedTurn(t *testing.T) {
	l := &engine.MemoryTurnLog{MaxBytes: 64 << 10}
	keep := time.Now().Add(time.Hour)
	owner := &engine.TurnOwner{Tenant: "pk", User: "u"}
	if err := l.AppendEvents(t.Context(), "a", owner, []engine.LoggedEvent{{ID: 1, Name: engine.EventStart, Data: []byte(`{}`)}}, false, keep); err != nil {
		t.Fatal(err)
	}
	followed := make(chan error, 1)
	go func() {
		_, err := l.ReadEvents(t.Context(), "a", 1, 10, 10*time.Second)
		followed <- err
	}()
	for i := range 100 { // other turns push a out
		big := []engine.LoggedEvent{{ID: 1, Name: engine.EventStart, Data: make([]byte, 4<<10)}}
		if err := l.AppendEvents(t.Context(), fmt.Sprint("other-", i), owner, big, true, keep); err != nil {
			t.Fatal(err)
		}
	}
	if err := <-followed; !errors.Is(err, engine.ErrTurnNotFound) {
		t.Errorf("the follower of a dropped turn: %v", err)
	}
	err := l.AppendEvents(t.Context(), "a", nil, []engine.LoggedEvent{{ID: 2, Name: engine.EventSpeak, Data: []byte(`{}`)}}, false, keep)
	if !errors.Is(err, engine.ErrTurnNotFound) {
		t.Errorf("the dropped turn's next events: %v, want ErrTurnNotFound", err)
	}
	if _, err := l.ReadEvents(t.Context(), "a", 0, 10, 0); !errors.Is(err, engine.ErrTurnNotFound) {
		t.Errorf("the dropped turn is back: %v", err)
	}
}
