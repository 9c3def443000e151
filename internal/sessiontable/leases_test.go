package sessiontable_test

import (
	"strconv"
	"testing"
	"time"

	"github.com/convengine/engine/internal/sessiontable"
)

func TestLeases(t *testing.T) {
	var l sessiontable.Leases[string]
	if _, ok := l.Get("k", t0); ok {
		t.Fatal("an empty set found a lease")
	}
	if v, fresh := l.Add("k", "a", t0.Add(time.Minute), t0); !fresh || v != "a" {
		t.Fatalf("Add = %q, %v; want a, true", v, fresh)
	}
	if v, fresh := l.Add("k", "b", t0.Add(time.Hour), t0); fresh || v != "a" {
		t.Fatalf("Add of a bound key = %q, %v; want the value bound, false", v, fresh)
	}
	if v, ok := l.Get("k", t0.Add(time.Minute-time.Nanosecond)); !ok || v != "a" {
		t.Fatalf("Get before expiry = %q, %v", v, ok)
	}
	if _, ok := l.Get("k", t0.Add(time.Minute)); ok {
		t.Fatal("a lease found at its expiry")
	}
	if v, fresh := l.Add("k", "c", t0.Add(2*time.Hour), t0.Add(time.Minute)); !fresh || v != "c" {
		t.Fatalf("Add of an expired key = %q, %v; want c, true", v, fresh)
	}
	l.Put("k", "d", t0.Add(2*time.Hour), t0.Add(time.Minute))
	if v, _ := l.Get("k", t0.Add(time.Minute)); v != "d" {
		t.Fatalf("Put did not replace the value: %q", v)
	}
	l.Delete("k")
	if _, ok := l.Get("k", t0.Add(time.Minute)); ok {
		t.Fatal("a deleted lease found")
	}
}

// TestLeasesSweep: expired entries go as new ones are written, so that a set through which
// many short leases pass holds a fraction more than the live ones.
func TestLeasesSweep(t *testing.T) {
	var l sessiontable.Leases[struct{}]
	const live = 100
	for i := range 100_000 {
		now := t0.Add(time.Duration(i) * time.Second)
		l.Add(strconv.Itoa(i), struct{}{}, now.Add(live*time.Second), now)
	}
	if n := l.Len(); n > 4*live {
		t.Fatalf("%d entries held for %d live ones", n, live)
	}
}
