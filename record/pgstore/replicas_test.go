package pgstore_test

import (
	"bytes"
	"context"
	"crypto/sha256"
	"fmt"
	"sync"
	"testing"
	"time"

	"github.com/convengine/engine/record"
)

// chainOf is the chain of a conversation of tenant t.
func chainOf(conversation string) record.Chain {
	return record.Chain{ID: record.ChainID("t", "prod", "u", conversation), Tenant: "t",
		Environment: "prod", User: "u", Conversation: conversation}
}

// entry is an entry of c, not yet linked.
func entry(c record.Chain, id string) record.Entry {
	return record.Entry{ID: id, Chain: c.ID, Kind: record.KindTurn, At: time.Now().UTC().Truncate(time.Microsecond),
		Tenant: c.Tenant, Environment: c.Environment, User: c.User, Conversation: c.Conversation,
		Personal: []byte("sealed " + id), PersonalHash: make([]byte, record.HashSize)}
}

// link chains entries from head as the record does, with a stand-in hash.
func link(head record.Head, es []record.Entry) error {
	prev := head.Hash
	for i := range es {
		es[i].Seq = head.Seq + int64(i) + 1
		es[i].Prev = prev
		h := sha256.Sum256(append(append([]byte{}, prev...), es[i].ID...))
		es[i].Hash = h[:]
		prev = es[i].Hash
	}
	return nil
}

// intact checks that chain c holds exactly n entries, linked from seq 1, each id once.
func intact(t *testing.T, s record.Store, c record.Chain, n int) {
	t.Helper()
	ctx := context.Background()
	prev, seen := make([]byte, record.HashSize), map[string]bool{}
	var after int64
	for {
		es, err := s.Entries(ctx, c.ID, after, 500)
		if err != nil {
			t.Fatal(err)
		}
		if len(es) == 0 {
			break
		}
		for _, e := range es {
			h := sha256.Sum256(append(append([]byte{}, prev...), e.ID...))
			if e.Seq != after+1 || !bytes.Equal(e.Prev, prev) || !bytes.Equal(e.Hash, h[:]) || seen[e.ID] {
				t.Fatalf("chain %s broken at seq %d (want %d): %s", c.Conversation, e.Seq, after+1, e.ID)
			}
			seen[e.ID], prev, after = true, e.Hash, e.Seq
		}
	}
	if after != int64(n) {
		t.Fatalf("chain %s holds %d entries, want %d", c.Conversation, after, n)
	}
	got, err := s.Chain(ctx, c.ID)
	if err != nil || got.Head.Seq != int64(n) || !bytes.Equal(got.Head.Hash, prev) {
		t.Fatalf("chain %s's head %+v, %v; want seq %d", c.Conversation, got.Head, err, n)
	}
}

// TestReplicasAppend has two Stores on one database (two replicas, each with its pool) append
// at once to one conversation (a resumed turn on another replica) and to conversations of
// their own, retrying every append once as after a lost acknowledgement: every chain ends
// intact, each entry once.
func TestReplicasAppend(t *testing.T) {
	url := database(t)
	replicas := []record.Store{open(t, url), open(t, url)}
	ctx := context.Background()
	const workers, appends = 4, 25
	shared := chainOf("shared")
	var wg sync.WaitGroup
	for r, s := range replicas {
		for w := range workers {
			wg.Go(func() {
				own := chainOf(fmt.Sprintf("own-%d-%d", r, w))
				for i := range appends {
					for _, c := range []record.Chain{shared, own} {
						es := []record.Entry{entry(c, fmt.Sprintf("%s-%d-%d-%d-a", c.Conversation, r, w, i)),
							entry(c, fmt.Sprintf("%s-%d-%d-%d-b", c.Conversation, r, w, i))}
						for range 2 { // the retry adds nothing
							if _, err := s.Append(ctx, c, es, link); err != nil {
								t.Error(err)
								return
							}
						}
					}
				}
			})
		}
	}
	wg.Wait()
	if t.Failed() {
		return
	}
	intact(t, replicas[0], shared, len(replicas)*workers*appends*2)
	for r := range replicas {
		for w := range workers {
			intact(t, replicas[1-r], chainOf(fmt.Sprintf("own-%d-%d", r, w)), appends*2)
		}
	}
}

// TestReplicasAppendOneEntry has both replicas append the same entry at once, as a Recorder
// retrying on one replica while the first attempt commits on the other: it is kept once.
func TestReplicasAppendOneEntry(t *testing.T) {
	url := database(t)
	replicas := []record.Store{open(t, url), open(t, url)}
	ctx := context.Background()
	c := chainOf("retried")
	for i := range 20 {
		e := entry(c, fmt.Sprintf("entry-%d", i))
		var wg sync.WaitGroup
		for _, s := range replicas {
			wg.Go(func() {
				if _, err := s.Append(ctx, c, []record.Entry{e}, link); err != nil {
					t.Error(err)
				}
			})
		}
		wg.Wait()
	}
	intact(t, replicas[0], c, 20)
}
