package sessiontable_test

import (
	"fmt"
	"testing"
	"time"

	"github.com/convengine/engine/internal/sessiontable"
)

var t0 = time.Date(2025, 1, 1, 0, 0, 0, 0, time.UTC)

const ttl = time.Hour

// entry is a session of user created at t0+at, living ttl, costing size bytes.
func entry(id, user string, at time.Duration, size int64) *sessiontable.Entry[string] {
	return &sessiontable.Entry[string]{ID: id, User: user, Expires: t0.Add(at + ttl), Size: size, Value: "v-" + id}
}

func has(t *testing.T, tb *sessiontable.Table[string], now time.Time, want map[string]bool) {
	t.Helper()
	for id, w := range want {
		v, ok := tb.Get(id, now)
		if ok != w {
			t.Errorf("Get(%s) found = %v, want %v", id, ok, w)
		}
		if ok && v != "v-"+id {
			t.Errorf("Get(%s) = %q", id, v)
		}
	}
}

func TestGetAndExpiry(t *testing.T) {
	var tb sessiontable.Table[string]
	if _, ok := tb.Get("a", t0); ok {
		t.Fatal("an empty table found a session")
	}
	if !tb.Put(entry("a", "u", 0, 10), t0, 0, 0) {
		t.Fatal("Put refused without bounds")
	}
	has(t, &tb, t0, map[string]bool{"a": true, "b": false})
	has(t, &tb, t0.Add(ttl-time.Nanosecond), map[string]bool{"a": true})
	has(t, &tb, t0.Add(ttl), map[string]bool{"a": false}) // expired at its Expires, not after
}

// TestBytes: a table past its bytes refuses new sessions and keeps every session it holds,
// until some expire.
func TestBytes(t *testing.T) {
	var tb sessiontable.Table[string]
	const max = 100
	for i := range 4 {
		if !tb.Put(entry(fmt.Sprint(i), fmt.Sprint("u", i), time.Duration(i)*time.Minute, 25), t0.Add(time.Duration(i)*time.Minute), max, 0) {
			t.Fatalf("session %d refused within the bytes", i)
		}
	}
	now := t0.Add(10 * time.Minute)
	if tb.Put(entry("x", "ux", 10*time.Minute, 1), now, max, 0) {
		t.Fatal("a session past the bytes accepted")
	}
	has(t, &tb, now, map[string]bool{"0": true, "1": true, "2": true, "3": true, "x": false})

	// The first one expires: its room is free for one new session, in creation order.
	now = t0.Add(ttl)
	if !tb.Put(entry("y", "uy", ttl, 25), now, max, 0) {
		t.Fatal("a session refused after the oldest expired")
	}
	if tb.Put(entry("z", "uz", ttl, 1), now, max, 0) {
		t.Fatal("a session past the bytes accepted after one expired and was replaced")
	}
	has(t, &tb, now, map[string]bool{"0": false, "1": true, "y": true})

	// A session larger than the whole bound never fits; a bound of 0 is no bound.
	var empty sessiontable.Table[string]
	if empty.Put(entry("big", "u", 0, max+1), t0, max, 0) {
		t.Fatal("a session larger than the bound accepted")
	}
	if !empty.Put(entry("big", "u", 0, 1<<40), t0, 0, 0) {
		t.Fatal("maxBytes 0 refused a session")
	}
}

// TestPerUser: a user past their bound loses their own oldest session, nobody else's.
func TestPerUser(t *testing.T) {
	var tb sessiontable.Table[string]
	put := func(id, user string, min int) {
		t.Helper()
		if !tb.Put(entry(id, user, time.Duration(min)*time.Minute, 1), t0.Add(time.Duration(min)*time.Minute), 0, 2) {
			t.Fatalf("Put(%s) refused", id)
		}
	}
	put("a1", "a", 0)
	put("b1", "b", 1)
	put("a2", "a", 2)
	put("a3", "a", 3)
	now := t0.Add(4 * time.Minute)
	has(t, &tb, now, map[string]bool{"a1": false, "a2": true, "a3": true, "b1": true})
	put("a4", "a", 4)
	has(t, &tb, now, map[string]bool{"a2": false, "a3": true, "a4": true, "b1": true})

	// Sessions of no user are not bounded by it.
	for i := range 5 {
		put(fmt.Sprint("n", i), "", 5)
	}
	has(t, &tb, t0.Add(5*time.Minute), map[string]bool{"n0": true, "n4": true})

	// A user whose sessions expired starts again with the whole bound.
	later := t0.Add(ttl + 10*time.Minute)
	for _, id := range []string{"a5", "a6"} {
		if !tb.Put(entry(id, "a", ttl+10*time.Minute, 1), later, 0, 2) {
			t.Fatalf("Put(%s) refused", id)
		}
	}
	has(t, &tb, later, map[string]bool{"a5": true, "a6": true})
}

// TestPerUserFreesBytes: the session a user loses to their bound frees its bytes for the new
// one, and a refused Put changes nothing, not even the user's oldest session.
func TestPerUserFreesBytes(t *testing.T) {
	var tb sessiontable.Table[string]
	const max = 30
	if !tb.Put(entry("a1", "a", 0, 10), t0, max, 2) || !tb.Put(entry("a2", "a", 0, 10), t0, max, 2) ||
		!tb.Put(entry("b1", "b", 0, 10), t0, max, 2) {
		t.Fatal("Put refused within bounds")
	}
	if !tb.Put(entry("a3", "a", 0, 10), t0, max, 2) {
		t.Fatal("a user's new session refused though the session it evicts frees its bytes")
	}
	has(t, &tb, t0, map[string]bool{"a1": false, "a2": true, "a3": true, "b1": true})

	if tb.Put(entry("a4", "a", 0, 11), t0, max, 2) {
		t.Fatal("a session past the bytes accepted")
	}
	has(t, &tb, t0, map[string]bool{"a2": true, "a3": true, "a4": false})
}

// TestReplace: a Put of an id the table holds replaces that session, freeing its bytes and
// not counting twice against its user.
func TestReplace(t *testing.T) {
	var tb sessiontable.Table[string]
	const max = 20
	if !tb.Put(entry("a1", "a", 0, 10), t0, max, 2) || !tb.Put(entry("a2", "a", 0, 10), t0, max, 2) {
		t.Fatal("Put refused within bounds")
	}
	for i := range 5 {
		e := entry("a1", "a", 0, 10)
		e.Value = fmt.Sprint("update ", i)
		if !tb.Put(e, t0, max, 2) {
			t.Fatalf("update %d of a1 refused", i)
		}
	}
	if v, ok := tb.Get("a1", t0); v != "update 4" {
		t.Fatalf("Get(a1) = %q, %v; want the last update", v, ok)
	}
	has(t, &tb, t0, map[string]bool{"a2": true})
	if tb.Put(entry("b1", "b", 0, 1), t0, max, 2) {
		t.Fatal("replacements took less room than they hold: a session past the bytes accepted")
	}
	// Updated sessions keep their expiry (sessions expire in the order they were created):
	// once it is over, their room is free, however often they were replaced.
	now := t0.Add(ttl)
	has(t, &tb, now, map[string]bool{"a2": false})
	if !tb.Put(entry("b1", "b", ttl, 20), now, max, 2) {
		t.Fatal("the room of an expired, replaced session was not freed")
	}
}

// TestManyExpire: a table through which many sessions pass keeps only the live ones.
func TestManyExpire(t *testing.T) {
	var tb sessiontable.Table[string]
	const max = 100
	for i := range 10000 {
		now := t0.Add(time.Duration(i) * time.Minute)
		e := &sessiontable.Entry[string]{ID: fmt.Sprint(i), User: fmt.Sprint("u", i%7), Expires: now.Add(10 * time.Minute), Size: 10, Value: "v-" + fmt.Sprint(i)}
		if !tb.Put(e, now, max, 3) {
			t.Fatalf("session %d refused: expired sessions still count", i)
		}
	}
	now := t0.Add(9999 * time.Minute)
	has(t, &tb, now, map[string]bool{"9999": true, "9990": true, "9989": false, "0": false})
}
