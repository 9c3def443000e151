package turnbuf_test

import (
	"context"
	"errors"
	"fmt"
	"sync"
	"testing"
	"testing/synctest"
	"time"

	"github.com/convengine/engine/internal/turnbuf"
)

var t0 = time.Date(2025, 1, 1, 0, 0, 0, 0, time.UTC)

const keepFor = 10 * time.Minute

var (
	ua = turnbuf.User{Tenant: "t", User: "a"}
	ub = turnbuf.User{Tenant: "t", User: "b"}
)

func at(tm time.Time) func() time.Time { return func() time.Time { return tm } }

func owner(s string) *string { return &s }

func events(from, to int) []turnbuf.Event {
	var evs []turnbuf.Event
	for id := from; id <= to; id++ {
		evs = append(evs, turnbuf.Event{ID: id, Name: "delta", Data: fmt.Appendf(nil, `{"n":%d}`, id)})
	}
	return evs
}

func ids(evs []turnbuf.Event) []int {
	var out []int
	for _, ev := range evs {
		out = append(out, ev.ID)
	}
	return out
}

func read(t *testing.T, l *turnbuf.Log[string], turn string, after, max int, now time.Time) *turnbuf.Record[string] {
	t.Helper()
	rec, err := l.Read(context.Background(), turn, after, max, 0, at(now))
	if err != nil {
		t.Fatalf("Read(%s): %v", turn, err)
	}
	return rec
}

func TestEventsInOrder(t *testing.T) {
	var l turnbuf.Log[string]
	var b turnbuf.Bounds
	keep := t0.Add(keepFor)
	if err := l.Append("t1", owner("o"), ua, events(1, 3), false, keep, t0, b); err != nil {
		t.Fatal(err)
	}
	evs := events(4, 5)
	if err := l.Append("t1", nil, ua, evs, false, keep, t0, b); err != nil {
		t.Fatal(err)
	}
	evs[0].Data[0] = 'X' // the log holds its own copy

	rec := read(t, &l, "t1", 0, 100, t0)
	if fmt.Sprint(ids(rec.Events)) != "[1 2 3 4 5]" || rec.Owner != "o" || rec.Done {
		t.Fatalf("Read = owner %q, events %v, done %v", rec.Owner, ids(rec.Events), rec.Done)
	}
	if string(rec.Events[3].Data) != `{"n":4}` || rec.Events[3].Name != "delta" {
		t.Fatalf("event 4 = %s %s: the caller's slice changed it", rec.Events[3].Name, rec.Events[3].Data)
	}
	if got := ids(read(t, &l, "t1", 2, 2, t0).Events); fmt.Sprint(got) != "[3 4]" {
		t.Fatalf("after 2, at most 2: %v", got)
	}
	if got := ids(read(t, &l, "t1", 5, 100, t0).Events); len(got) != 0 {
		t.Fatalf("after the last: %v", got)
	}

	if err := l.Append("t1", nil, ua, nil, true, keep, t0, b); err != nil {
		t.Fatal(err)
	}
	if rec := read(t, &l, "t1", 5, 100, t0); !rec.Done || len(rec.Events) != 0 {
		t.Fatalf("after the turn ended: done %v, events %v", rec.Done, ids(rec.Events))
	}
}

func TestNotFound(t *testing.T) {
	var l turnbuf.Log[string]
	var b turnbuf.Bounds
	if err := l.Append("t1", nil, ua, events(1, 1), false, t0.Add(keepFor), t0, b); !errors.Is(err, turnbuf.ErrNotFound) {
		t.Fatalf("Append without an owner to a turn not kept: %v, want ErrNotFound", err)
	}
	if _, err := l.Read(context.Background(), "t1", 0, 10, 0, at(t0)); !errors.Is(err, turnbuf.ErrNotFound) {
		t.Fatalf("Read of a turn never logged: %v", err)
	}
}

// TestReserve: a reserved turn exists, empty, for its owner; reserving it again counts it once.
func TestReserve(t *testing.T) {
	var l turnbuf.Log[string]
	b := turnbuf.Bounds{MaxBytes: 1 << 20, MaxBytesPerUser: 1024} // two empty turns a user
	for range 5 {
		if err := l.Reserve("t1", "o", ua, t0.Add(keepFor), t0, b); err != nil {
			t.Fatal(err)
		}
	}
	if rec := read(t, &l, "t1", 0, 10, t0); rec.Owner != "o" || len(rec.Events) != 0 || rec.Done {
		t.Fatalf("a reserved turn: %+v", rec)
	}
	if err := l.Append("t1", nil, ua, events(1, 1), false, t0.Add(keepFor), t0, b); err != nil {
		t.Fatalf("Append without an owner to a reserved turn: %v", err)
	}
	if err := l.Reserve("t2", "o", ua, t0.Add(keepFor), t0, turnbuf.Bounds{MaxBytes: 1 << 20, MaxBytesPerUser: 2*512 + 200}); err != nil {
		t.Fatalf("a second turn refused: reserving the first again counted it more than once: %v", err)
	}
}

// TestExpiry: a turn is read until keep, not after; once over it is gone for writers too.
func TestExpiry(t *testing.T) {
	var l turnbuf.Log[string]
	var b turnbuf.Bounds
	keep := t0.Add(keepFor)
	if err := l.Append("t1", owner("o"), ua, events(1, 2), true, keep, t0, b); err != nil {
		t.Fatal(err)
	}
	read(t, &l, "t1", 0, 10, keep.Add(-time.Nanosecond))
	if _, err := l.Read(context.Background(), "t1", 0, 10, 0, at(keep)); !errors.Is(err, turnbuf.ErrNotFound) {
		t.Fatalf("Read at keep: %v, want ErrNotFound", err)
	}
	if err := l.Append("t1", nil, ua, events(3, 3), false, keep.Add(keepFor), keep, b); !errors.Is(err, turnbuf.ErrNotFound) {
		t.Fatalf("Append to a turn over: %v, want ErrNotFound", err)
	}
}

// TestReadWaits: a reader with nothing new waits until events arrive, the turn ends, the
// wait is over or its context is done.
func TestReadWaits(t *testing.T) {
	synctest.Test(t, func(t *testing.T) {
		var l turnbuf.Log[string]
		var b turnbuf.Bounds
		keep := time.Now().Add(keepFor)
		if err := l.Append("t1", owner("o"), ua, events(1, 1), false, keep, time.Now(), b); err != nil {
			t.Fatal(err)
		}
		type result struct {
			rec *turnbuf.Record[string]
			err error
		}
		start := func(ctx context.Context, after int, wait time.Duration) <-chan result {
			c := make(chan result, 1)
			go func() {
				rec, err := l.Read(ctx, "t1", after, 10, wait, time.Now)
				c <- result{rec, err}
			}()
			synctest.Wait()
			return c
		}
		returned := func(c <-chan result) bool {
			synctest.Wait()
			return len(c) > 0
		}

		// Events arrive.
		c := start(context.Background(), 1, time.Minute)
		if returned(c) {
			t.Fatal("Read with nothing new returned at once")
		}
		l.Append("t1", nil, ua, events(2, 3), false, keep, time.Now(), b)
		if r := <-c; r.err != nil || fmt.Sprint(ids(r.rec.Events)) != "[2 3]" {
			t.Fatalf("after events arrived: %v, %v", r.err, r.rec)
		}

		// The wait is over.
		c = start(context.Background(), 3, time.Minute)
		time.Sleep(time.Minute - time.Millisecond)
		if returned(c) {
			t.Fatal("Read returned before its wait was over")
		}
		time.Sleep(time.Millisecond)
		if !returned(c) {
			t.Fatal("Read still waiting after its wait")
		}
		if r := <-c; r.err != nil || len(r.rec.Events) != 0 || r.rec.Done || r.rec.Owner != "o" {
			t.Fatalf("after the wait: %v, %+v", r.err, r.rec)
		}

		// The context is done.
		ctx, cancel := context.WithCancel(context.Background())
		c = start(ctx, 3, time.Minute)
		cancel()
		if r := <-c; !errors.Is(r.err, context.Canceled) {
			t.Fatalf("after the context was canceled: %v", r.err)
		}

		// The turn ends with no event.
		c = start(context.Background(), 3, time.Minute)
		l.Append("t1", nil, ua, nil, true, keep, time.Now(), b)
		if r := <-c; r.err != nil || !r.rec.Done || len(r.rec.Events) != 0 {
			t.Fatalf("after the turn ended: %v, %+v", r.err, r.rec)
		}
	})
}

// TestUserBound: a new turn is refused when its user's turns fill theirs, not another user's
// (a user is a tenant's).
func TestUserBound(t *testing.T) {
	var l turnbuf.Log[string]
	b := turnbuf.Bounds{MaxBytes: 1 << 20, MaxBytesPerUser: 4 * 512} // four empty turns
	keep := t0.Add(keepFor)
	for i := range 4 {
		if err := l.Reserve(fmt.Sprint("a", i), "o", ua, keep, t0, b); err != nil {
			t.Fatalf("turn %d of a: %v", i, err)
		}
	}
	if err := l.Reserve("a4", "o", ua, keep, t0, b); !errors.Is(err, turnbuf.ErrFull) {
		t.Fatalf("a fifth turn of a: %v, want ErrFull", err)
	}
	if err := l.Append("a4", owner("o"), ua, nil, false, keep, t0, b); !errors.Is(err, turnbuf.ErrFull) {
		t.Fatalf("a fifth turn of a by Append: %v, want ErrFull", err)
	}
	if err := l.Reserve("b0", "o", ub, keep, t0, b); err != nil {
		t.Fatalf("b's turn refused because of a's: %v", err)
	}
	if err := l.Reserve("x0", "o", turnbuf.User{Tenant: "other", User: "a"}, keep, t0, b); err != nil {
		t.Fatalf("another tenant's user a refused because of this one's: %v", err)
	}
	if err := l.Reserve("a4", "o", ua, keep.Add(keepFor), keep, b); err != nil {
		t.Fatalf("a's turn refused after a's turns were over: %v", err)
	}

	// By default, a user has an eighth of the log.
	var d turnbuf.Log[string]
	db := turnbuf.Bounds{MaxBytes: 8 * 1024}
	for i := range 2 {
		if err := d.Reserve(fmt.Sprint("a", i), "o", ua, keep, t0, db); err != nil {
			t.Fatalf("turn %d of a: %v", i, err)
		}
	}
	if err := d.Reserve("a2", "o", ua, keep, t0, db); !errors.Is(err, turnbuf.ErrFull) {
		t.Fatalf("past an eighth of the log: %v, want ErrFull", err)
	}
}

// TestLogBound: new turns may fill three quarters of the log; the rest is room for running
// turns to grow into. A running turn that would pass the log's memory stops being kept; the
// other turns stay, and a reader waiting for it learns it is gone.
func TestLogBound(t *testing.T) {
	synctest.Test(t, func(t *testing.T) {
		var l turnbuf.Log[string]
		b := turnbuf.Bounds{MaxBytes: 8 * 512, MaxBytesPerUser: 1 << 20}
		now := time.Now()
		keep := now.Add(keepFor)
		for i := range 6 {
			if err := l.Reserve(fmt.Sprint(i), "o", ua, keep, now, b); err != nil {
				t.Fatalf("turn %d: %v", i, err)
			}
		}
		if err := l.Reserve("6", "o", ub, keep, now, b); !errors.Is(err, turnbuf.ErrFull) {
			t.Fatalf("a new turn past three quarters of the log: %v, want ErrFull", err)
		}
		// Turn 0 grows into the last quarter, filling the log: an event of 1024 bytes with its overhead.
		big := []turnbuf.Event{{ID: 1, Name: "n", Data: make([]byte, 1024-96-1)}}
		if err := l.Append("0", nil, ua, big, false, keep, now, b); err != nil {
			t.Fatalf("a running turn growing into the room left: %v", err)
		}

		waiting := make(chan error, 1)
		go func() {
			_, err := l.Read(context.Background(), "1", 0, 10, time.Minute, time.Now)
			waiting <- err
		}()
		synctest.Wait()
		if err := l.Append("1", nil, ua, events(1, 1), false, keep, now, b); !errors.Is(err, turnbuf.ErrFull) {
			t.Fatalf("an event past the log's memory: %v, want ErrFull", err)
		}
		if err := <-waiting; !errors.Is(err, turnbuf.ErrNotFound) {
			t.Fatalf("a reader of the dropped turn: %v, want ErrNotFound", err)
		}
		if _, err := l.Read(context.Background(), "1", 0, 10, 0, time.Now); !errors.Is(err, turnbuf.ErrNotFound) {
			t.Fatalf("Read of the dropped turn: %v, want ErrNotFound", err)
		}
		if err := l.Append("1", nil, ua, events(2, 2), false, keep, now, b); !errors.Is(err, turnbuf.ErrNotFound) {
			t.Fatalf("Append to the dropped turn: %v, want ErrNotFound", err)
		}
		if rec, err := l.Read(context.Background(), "0", 0, 10, 0, time.Now); err != nil || len(rec.Events) != 1 {
			t.Fatalf("the turn that filled the log: %v, %v", err, rec)
		}
		// The dropped turn's room is free again: its 512 bytes are left for the running turns.
		fill := []turnbuf.Event{{ID: 1, Name: "n", Data: make([]byte, 512-96-1)}}
		if err := l.Append("2", nil, ua, fill, false, keep, now, b); err != nil {
			t.Fatalf("an event that fits the room the dropped turn left: %v", err)
		}
		if err := l.Append("3", nil, ua, events(1, 1), false, keep, now, b); !errors.Is(err, turnbuf.ErrFull) {
			t.Fatalf("an event past the log's memory: %v, want ErrFull", err)
		}
	})
}

// TestSweepAll: turns over behind a turn that is kept longer still leave room once the log is
// full.
func TestSweepAll(t *testing.T) {
	var l turnbuf.Log[string]
	b := turnbuf.Bounds{MaxBytes: 8 * 512, MaxBytesPerUser: 1 << 20}
	if err := l.Reserve("long", "o", ua, t0.Add(24*time.Hour), t0, b); err != nil {
		t.Fatal(err)
	}
	for i := range 5 {
		if err := l.Reserve(fmt.Sprint(i), "o", ua, t0.Add(keepFor), t0, b); err != nil {
			t.Fatalf("turn %d: %v", i, err)
		}
	}
	now := t0.Add(keepFor)
	for i := range 5 {
		if err := l.Reserve(fmt.Sprint("new", i), "o", ua, now.Add(keepFor), now, b); err != nil {
			t.Fatalf("new turn %d, once the turns behind the long one were over: %v", i, err)
		}
	}
	read(t, &l, "long", 0, 10, now)
}

func TestConcurrent(t *testing.T) {
	var l turnbuf.Log[string]
	var b turnbuf.Bounds
	keep := time.Now().Add(time.Hour)
	var wg sync.WaitGroup
	for g := range 4 {
		turn := fmt.Sprint(g)
		if err := l.Reserve(turn, "o", ua, keep, time.Now(), b); err != nil {
			t.Fatal(err)
		}
		wg.Go(func() {
			for id := 1; id <= 200; id++ {
				if err := l.Append(turn, nil, ua, events(id, id), id == 200, keep, time.Now(), b); err != nil {
					t.Error(err)
					return
				}
			}
		})
		wg.Go(func() {
			after := 0
			for {
				rec, err := l.Read(context.Background(), turn, after, 7, time.Second, time.Now)
				if err != nil {
					t.Error(err)
					return
				}
				for _, ev := range rec.Events {
					if ev.ID != after+1 {
						t.Errorf("turn %s: event %d after %d", turn, ev.ID, after)
						return
					}
					after = ev.ID
				}
				if rec.Done && after == 200 {
					return
				}
			}
		})
	}
	wg.Wait()
}
