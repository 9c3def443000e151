package sessiontable

import (
	"testing"
	"time"
)

func TestActions(t *testing.T) {
	var a Actions
	now := time.Unix(1000, 0)
	if res, held := a.Begin("x", "o1", now.Add(time.Minute), now); res != nil || held {
		t.Fatalf("first begin: %q %v", res, held)
	}
	if _, held := a.Begin("x", "o2", now.Add(time.Minute), now); !held {
		t.Fatal("a second owner took a running action")
	}
	if a.Finish("x", "o2", []byte("no"), now.Add(time.Hour), now) {
		t.Fatal("another owner recorded the result")
	}
	a.Abandon("x", "o2", now) // not o2's: stays
	if _, held := a.Begin("x", "o3", now.Add(time.Minute), now); !held {
		t.Fatal("another owner's abandon released the claim")
	}
	result := []byte("done")
	if !a.Finish("x", "o1", result, now.Add(time.Hour), now) {
		t.Fatal("the owner could not record its result")
	}
	result[0] = 'D' // the result is the store's own copy
	if res, held := a.Begin("x", "o4", now.Add(time.Minute), now.Add(time.Minute)); string(res) != "done" || held {
		t.Fatalf("begin after finish: %q %v", res, held)
	}
	a.Abandon("x", "o1", now) // a result stays
	if res, _ := a.Begin("x", "o4", now.Add(time.Minute), now); string(res) != "done" {
		t.Fatalf("abandon dropped a result: %q", res)
	}

	// A claim whose lease passed can be taken again; one abandoned too.
	a.Begin("y", "o1", now.Add(time.Second), now)
	if _, held := a.Begin("y", "o2", now.Add(time.Minute), now.Add(2*time.Second)); held {
		t.Fatal("an expired lease still held the action")
	}
	a.Abandon("y", "o2", now.Add(2*time.Second))
	if _, held := a.Begin("y", "o3", now.Add(time.Minute), now.Add(2*time.Second)); held {
		t.Fatal("an abandoned claim still held the action")
	}
}
