// Package recordtest is the conformance suite of [record.Store] implementations, as
// testing/slogtest is of slog handlers: a store passes when [Run] passes.
package recordtest

import (
	"bytes"
	"context"
	"crypto/sha256"
	"errors"
	"fmt"
	"slices"
	"sync"
	"testing"
	"time"

	"github.com/google/uuid"

	"github.com/convengine/engine/record"
)

// Run runs the conformance suite against the stores open makes: each subtest opens a new,
// empty store, and Run closes it when the subtest ends.
func Run(t *testing.T, open func(t *testing.T) record.Store) {
	tests := []struct {
		name string
		f    func(t *testing.T, s record.Store)
	}{
		{"AppendRoundTrips", testAppendRoundTrips},
		{"AppendIsIdempotentByID", testAppendIdempotent},
		{"AppendRollsBackOnLinkError", testAppendRollback},
		{"AppendLocksTheChain", testAppendConcurrent},
		{"AppendWidensTimes", testAppendTimes},
		{"Chains", testChains},
		{"Entries", testEntries},
		{"Checkpoint", testCheckpoint},
		{"CheckpointsAreSerialised", testCheckpointConcurrent},
		{"Keys", testKeys},
		{"KeysRace", testKeysRace},
		{"Hold", testHold},
		{"Prune", testPrune},
		{"CancelledContext", testCancelled},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			s := open(t)
			t.Cleanup(func() {
				if err := s.Close(); err != nil {
					t.Errorf("Close: %v", err)
				}
			})
			tt.f(t, s)
		})
	}
}

var zero = make([]byte, record.HashSize)

// link chains entries with a stand-in hash (the suite tests the store, not the record's
// hashing): SHA-256(prev || id || seq).
func link(head record.Head, es []record.Entry) error {
	prev := head.Hash
	if len(prev) == 0 {
		prev = zero
	}
	for i := range es {
		es[i].Seq = head.Seq + int64(i) + 1
		es[i].Prev = prev
		es[i].Hash = standIn(prev, es[i].ID, es[i].Seq)
		prev = es[i].Hash
	}
	return nil
}

func standIn(prev []byte, id string, seq int64) []byte {
	h := sha256.Sum256(fmt.Appendf(slices.Clone(prev), "%s/%d", id, seq))
	return h[:]
}

func chainOf(tenant, user, conversation string) record.Chain {
	return record.Chain{ID: record.ChainID(tenant, "live", user, conversation), Tenant: tenant, Environment: "live", User: user, Conversation: conversation}
}

var t0 = time.Date(2026, 3, 1, 9, 30, 0, 123456000, time.UTC)

func entry(c record.Chain, kind record.Kind, at time.Time) record.Entry {
	e := record.Entry{ID: uuid.NewString(), Chain: c.ID, Kind: kind, At: at, Tenant: c.Tenant, Environment: c.Environment,
		User: c.User, Session: "s-" + c.Conversation, Conversation: c.Conversation, Turn: uuid.NewString(), Request: "req-" + uuid.NewString()[:8]}
	switch kind {
	case record.KindTurn:
		e.Personal = []byte("sealed personal \x00\xff bytes")
		sum := sha256.Sum256(e.Personal)
		e.PersonalHash = sum[:]
	default:
		e.Evidence = []byte("sealed evidence \x00\xfe")
		sum := sha256.Sum256(e.Evidence)
		e.EvidenceHash = sum[:]
	}
	return e
}

func appendN(t *testing.T, s record.Store, c record.Chain, n int, at time.Time) []record.Entry {
	t.Helper()
	var es []record.Entry
	for i := range n {
		es = append(es, entry(c, record.KindTurn, at.Add(time.Duration(i)*time.Second)))
	}
	if _, err := s.Append(context.Background(), c, es, link); err != nil {
		t.Fatalf("Append: %v", err)
	}
	return es
}

// all reads a chain's entries, page by page.
func all(t *testing.T, s record.Store, chain string) []record.Entry {
	t.Helper()
	var out []record.Entry
	var after int64
	for {
		es, err := s.Entries(context.Background(), chain, after, 7)
		if err != nil {
			t.Fatalf("Entries: %v", err)
		}
		if len(es) > 7 {
			t.Fatalf("Entries returned %d entries, limit 7", len(es))
		}
		if len(es) == 0 {
			return out
		}
		out = append(out, es...)
		after = es[len(es)-1].Seq
	}
}

// checkLinked checks that es are seq 1..n, each linked to the one before.
func checkLinked(t *testing.T, es []record.Entry) {
	t.Helper()
	prev := zero
	for i, e := range es {
		if e.Seq != int64(i+1) {
			t.Fatalf("entry %d has seq %d", i, e.Seq)
		}
		if !bytes.Equal(e.Prev, prev) || !bytes.Equal(e.Hash, standIn(prev, e.ID, e.Seq)) {
			t.Fatalf("entry %d is not linked to the one before it", e.Seq)
		}
		prev = e.Hash
	}
}

func sameEntry(a, b record.Entry) bool {
	return a.ID == b.ID && a.Chain == b.Chain && a.Seq == b.Seq && a.Kind == b.Kind && a.At.Equal(b.At) && a.At.Location() == time.UTC &&
		a.Tenant == b.Tenant && a.Environment == b.Environment && a.User == b.User && a.Session == b.Session &&
		a.Conversation == b.Conversation && a.Turn == b.Turn && a.Request == b.Request &&
		bytes.Equal(a.Prev, b.Prev) && bytes.Equal(a.Hash, b.Hash) &&
		bytes.Equal(a.Personal, b.Personal) && (a.Personal == nil) == (b.Personal == nil) && bytes.Equal(a.PersonalHash, b.PersonalHash) &&
		bytes.Equal(a.Evidence, b.Evidence) && (a.Evidence == nil) == (b.Evidence == nil) && bytes.Equal(a.EvidenceHash, b.EvidenceHash)
}

func testAppendRoundTrips(t *testing.T, s record.Store) {
	ctx := context.Background()
	c := chainOf("bank", "u1", "conv-1")
	es := []record.Entry{entry(c, record.KindTurn, t0), entry(c, record.KindAction, t0.Add(time.Millisecond)), entry(c, record.KindOutcome, t0.Add(2*time.Millisecond))}
	calls := 0
	head, err := s.Append(ctx, c, es, func(h record.Head, got []record.Entry) error {
		calls++
		if h.Seq != 0 || !bytes.Equal(h.Hash, zero) && len(h.Hash) != 0 {
			t.Errorf("a new chain's head is %d %x, want 0 and zero bytes", h.Seq, h.Hash)
		}
		if len(got) != 3 || got[0].ID != es[0].ID || got[2].ID != es[2].ID {
			t.Errorf("link got the entries out of order")
		}
		return link(h, got)
	})
	if err != nil || calls != 1 {
		t.Fatalf("Append: %v, link called %d times", err, calls)
	}
	_ = link(record.Head{}, es)
	if head.Seq != 3 || !bytes.Equal(head.Hash, es[2].Hash) || head.Chain != c.ID {
		t.Fatalf("head %+v, want seq 3 and the last entry's hash", head)
	}
	got := all(t, s, c.ID)
	if len(got) != 3 {
		t.Fatalf("stored %d entries, want 3", len(got))
	}
	for i := range got {
		if !sameEntry(got[i], es[i]) {
			t.Errorf("entry %d came back as\n%+v\nwant\n%+v", i+1, got[i], es[i])
		}
	}
	ch, err := s.Chain(ctx, c.ID)
	if err != nil {
		t.Fatal(err)
	}
	if ch.Tenant != "bank" || ch.Environment != "live" || ch.User != "u1" || ch.Conversation != "conv-1" || ch.Head.Seq != 3 ||
		!bytes.Equal(ch.Head.Hash, es[2].Hash) || ch.CoveredSeq != 0 {
		t.Errorf("chain %+v", ch)
	}
	if _, err := s.Chain(ctx, "nope"); !errors.Is(err, record.ErrNotFound) {
		t.Errorf("Chain of an unknown id: %v, want ErrNotFound", err)
	}
	// A second append follows the head.
	more := appendN(t, s, c, 2, t0.Add(time.Second))
	got = all(t, s, c.ID)
	checkLinked(t, got)
	if got[4].ID != more[1].ID {
		t.Errorf("the second append's entries are not at the end")
	}
}

func testAppendIdempotent(t *testing.T, s record.Store) {
	ctx := context.Background()
	c := chainOf("bank", "u1", "conv-1")
	es := appendN(t, s, c, 3, t0)
	// The same entries again: nothing is added and link is not called.
	retry := slices.Clone(es)
	for i := range retry {
		retry[i].Seq, retry[i].Prev, retry[i].Hash = 0, nil, nil
	}
	head, err := s.Append(ctx, c, retry, func(record.Head, []record.Entry) error {
		t.Error("link was called for entries the store holds")
		return nil
	})
	if err != nil || head.Seq != 3 {
		t.Fatalf("Append of stored entries: %v, head %d", err, head.Seq)
	}
	// Some stored, some new: only the new ones are linked and added.
	extra := entry(c, record.KindTurn, t0.Add(time.Minute))
	head, err = s.Append(ctx, c, append(retry[1:], extra), func(h record.Head, got []record.Entry) error {
		if len(got) != 1 || got[0].ID != extra.ID {
			t.Errorf("link got %d entries, want only the new one", len(got))
		}
		return link(h, got)
	})
	if err != nil || head.Seq != 4 {
		t.Fatalf("Append: %v, head %d", err, head.Seq)
	}
	got := all(t, s, c.ID)
	checkLinked(t, got)
	if len(got) != 4 {
		t.Fatalf("%d entries, want 4", len(got))
	}
}

func testAppendRollback(t *testing.T, s record.Store) {
	ctx := context.Background()
	c := chainOf("bank", "u1", "conv-1")
	appendN(t, s, c, 2, t0)
	boom := errors.New("boom")
	es := []record.Entry{entry(c, record.KindTurn, t0), entry(c, record.KindTurn, t0)}
	_, err := s.Append(ctx, c, es, func(h record.Head, got []record.Entry) error {
		_ = link(h, got)
		return boom
	})
	if !errors.Is(err, boom) {
		t.Fatalf("Append returned %v, want link's error", err)
	}
	if got := all(t, s, c.ID); len(got) != 2 {
		t.Fatalf("%d entries after a failed append, want 2", len(got))
	}
	// A link that makes a taken seq is refused and adds nothing.
	_, err = s.Append(ctx, c, []record.Entry{entry(c, record.KindTurn, t0)}, func(h record.Head, got []record.Entry) error {
		_ = link(record.Head{Seq: h.Seq - 1, Hash: h.Hash}, got)
		return nil
	})
	if err == nil {
		t.Fatal("an append at a taken seq succeeded")
	}
	if got := all(t, s, c.ID); len(got) != 2 {
		t.Fatalf("%d entries after a conflicting append, want 2", len(got))
	}
	// A new chain whose first append fails is not listed.
	c2 := chainOf("bank", "u1", "conv-2")
	if _, err := s.Append(ctx, c2, []record.Entry{entry(c2, record.KindTurn, t0)}, func(record.Head, []record.Entry) error { return boom }); !errors.Is(err, boom) {
		t.Fatal(err)
	}
	if got := all(t, s, c2.ID); len(got) != 0 {
		t.Fatalf("a failed first append left %d entries", len(got))
	}
}

func testAppendConcurrent(t *testing.T, s record.Store) {
	ctx := context.Background()
	shared := chainOf("bank", "u1", "shared")
	const writers, each = 6, 5
	var wg sync.WaitGroup
	errs := make(chan error, writers*each*2)
	for w := range writers {
		own := chainOf("bank", fmt.Sprint("u", w), "own")
		wg.Go(func() {
			for i := range each {
				for _, c := range []record.Chain{shared, own} {
					es := []record.Entry{entry(c, record.KindTurn, t0.Add(time.Duration(i)*time.Second)), entry(c, record.KindTurn, t0)}
					if _, err := s.Append(ctx, c, es, link); err != nil {
						errs <- err
					}
				}
			}
		})
	}
	wg.Wait()
	close(errs)
	for err := range errs {
		t.Fatalf("concurrent Append: %v", err)
	}
	got := all(t, s, shared.ID)
	if len(got) != writers*each*2 {
		t.Fatalf("shared chain has %d entries, want %d", len(got), writers*each*2)
	}
	checkLinked(t, got)
	for w := range writers {
		own := chainOf("bank", fmt.Sprint("u", w), "own")
		if got := all(t, s, own.ID); len(got) != each*2 {
			t.Fatalf("chain of writer %d has %d entries", w, len(got))
		}
	}
}

func testAppendTimes(t *testing.T, s record.Store) {
	ctx := context.Background()
	c := chainOf("bank", "u1", "conv")
	appendN(t, s, c, 1, t0)
	// A clock that steps back: the entry is appended after the others; times widen.
	appendN(t, s, c, 1, t0.Add(-time.Hour))
	appendN(t, s, c, 1, t0.Add(time.Hour))
	ch, err := s.Chain(ctx, c.ID)
	if err != nil {
		t.Fatal(err)
	}
	if !ch.FirstAt.Equal(t0.Add(-time.Hour)) || !ch.LastAt.Equal(t0.Add(time.Hour)) {
		t.Errorf("FirstAt %v LastAt %v, want the earliest and the latest", ch.FirstAt, ch.LastAt)
	}
	checkLinked(t, all(t, s, c.ID))
}

func testChains(t *testing.T, s record.Store) {
	ctx := context.Background()
	var want []string
	for i := range 12 {
		user := []string{"ann", "bob"}[i%2]
		c := chainOf("bank", user, fmt.Sprint("conv-", i))
		appendN(t, s, c, 2, t0.Add(time.Duration(i)*time.Hour))
		want = append(want, c.ID)
	}
	appendN(t, s, chainOf("other", "ann", "x"), 1, t0)

	list := func(q record.ChainQuery) []string {
		t.Helper()
		var ids []string
		for {
			cs, err := s.Chains(ctx, q)
			if err != nil {
				t.Fatalf("Chains: %v", err)
			}
			if q.Limit > 0 && len(cs) > q.Limit {
				t.Fatalf("Chains returned %d, limit %d", len(cs), q.Limit)
			}
			if len(cs) == 0 {
				return ids
			}
			for _, c := range cs {
				ids = append(ids, c.ID)
			}
			last := cs[len(cs)-1]
			q.AfterAt, q.AfterID = last.FirstAt, last.ID
		}
	}
	if got := list(record.ChainQuery{Tenant: "bank", Limit: 5}); !slices.Equal(got, want) {
		t.Errorf("a tenant's chains, paged: got %d in order %v", len(got), got)
	}
	var anns []string
	for i, id := range want {
		if i%2 == 0 {
			anns = append(anns, id)
		}
	}
	if got := list(record.ChainQuery{Tenant: "bank", User: "ann", Limit: 4}); !slices.Equal(got, anns) {
		t.Errorf("a user's chains: %v, want %v", got, anns)
	}
	// Chains 3, 4 and 5 have entries in [t0+3h, t0+6h); chain 2's last entry is at t0+2h+1s.
	if got := list(record.ChainQuery{Tenant: "bank", From: t0.Add(3 * time.Hour), To: t0.Add(6 * time.Hour)}); !slices.Equal(got, want[3:6]) {
		t.Errorf("chains by time: %d chains", len(got))
	}
	if got := list(record.ChainQuery{Tenant: "bank", From: t0.Add(2*time.Hour + time.Second), To: t0.Add(3 * time.Hour)}); !slices.Equal(got, want[2:3]) {
		t.Errorf("From is inclusive of LastAt: %d chains", len(got))
	}
	if got := list(record.ChainQuery{Tenant: "bank", EndedBefore: t0.Add(2*time.Hour + time.Second)}); !slices.Equal(got, want[:2]) {
		t.Errorf("EndedBefore: %d chains, want 2", len(got))
	}
	if got := list(record.ChainQuery{}); len(got) != 13 {
		t.Errorf("every chain: %d, want 13", len(got))
	}
	if cs, err := s.Chains(ctx, record.ChainQuery{Tenant: "nobody"}); err != nil || len(cs) != 0 {
		t.Errorf("an unknown tenant's chains: %d, %v", len(cs), err)
	}
}

func testEntries(t *testing.T, s record.Store) {
	ctx := context.Background()
	c := chainOf("bank", "u1", "conv")
	appendN(t, s, c, 25, t0)
	es, err := s.Entries(ctx, c.ID, 10, 5)
	if err != nil || len(es) != 5 || es[0].Seq != 11 || es[4].Seq != 15 {
		t.Fatalf("Entries after 10, limit 5: %d entries, %v", len(es), err)
	}
	if es, err := s.Entries(ctx, c.ID, 0, 0); err != nil || len(es) == 0 || len(es) > 100 {
		t.Fatalf("Entries with limit 0: %d, %v", len(es), err)
	}
	if es, err := s.Entries(ctx, c.ID, 25, 10); err != nil || len(es) != 0 {
		t.Fatalf("Entries past the end: %d, %v", len(es), err)
	}
	if es, err := s.Entries(ctx, "unknown", 0, 10); err != nil || len(es) != 0 {
		t.Fatalf("Entries of an unknown chain: %d, %v", len(es), err)
	}
}

// signer makes checkpoints with a stand-in root and signature.
func signer(t *testing.T, seen *[]record.Head) func(*record.Checkpoint, []record.Head) (*record.Checkpoint, error) {
	return func(last *record.Checkpoint, heads []record.Head) (*record.Checkpoint, error) {
		*seen = heads
		cp := &record.Checkpoint{Seq: 1, At: t0, Root: make([]byte, 32), Size: int64(len(heads)), KeyID: "k1", Signature: []byte("sig")}
		if last != nil {
			cp.Seq = last.Seq + 1
			sum := sha256.Sum256(last.Root)
			cp.Prev = sum[:]
			cp.At = last.At.Add(time.Second)
		}
		cp.Root[0] = byte(cp.Seq)
		return cp, nil
	}
}

func testCheckpoint(t *testing.T, s record.Store) {
	ctx := context.Background()
	var heads []record.Head
	cp, err := s.Checkpoint(ctx, func(*record.Checkpoint, []record.Head) (*record.Checkpoint, error) {
		t.Error("sign called with nothing to cover")
		return nil, nil
	})
	if err != nil || cp != nil {
		t.Fatalf("Checkpoint of an empty store: %v %v", cp, err)
	}
	var chains []record.Chain
	for i := range 5 {
		c := chainOf("bank", "u", fmt.Sprint("c", i))
		appendN(t, s, c, i+1, t0)
		chains = append(chains, c)
	}
	cp, err = s.Checkpoint(ctx, signer(t, &heads))
	if err != nil || cp == nil || cp.Seq != 1 {
		t.Fatalf("first Checkpoint: %+v %v", cp, err)
	}
	if len(heads) != 5 || !slices.IsSortedFunc(heads, func(a, b record.Head) int { return cmpStr(a.Chain, b.Chain) }) {
		t.Fatalf("sign got %d heads, want 5 in chain ID order", len(heads))
	}
	for _, h := range heads {
		es := all(t, s, h.Chain)
		if h.Seq != int64(len(es)) || !bytes.Equal(h.Hash, es[len(es)-1].Hash) {
			t.Errorf("head of %s is %d, want its last entry", h.Chain, h.Seq)
		}
	}
	for _, c := range chains {
		ch, _ := s.Chain(ctx, c.ID)
		if ch.CoveredSeq != ch.Head.Seq {
			t.Errorf("CoveredSeq %d after a checkpoint, head %d", ch.CoveredSeq, ch.Head.Seq)
		}
	}
	// Nothing moved: no checkpoint.
	if cp, err := s.Checkpoint(ctx, signer(t, &heads)); err != nil || cp != nil {
		t.Fatalf("Checkpoint with nothing moved: %v %v", cp, err)
	}
	// Two chains move: the next covers them alone, and gets the last as last.
	appendN(t, s, chains[1], 2, t0)
	appendN(t, s, chains[3], 1, t0)
	var gotLast *record.Checkpoint
	cp2, err := s.Checkpoint(ctx, func(last *record.Checkpoint, hs []record.Head) (*record.Checkpoint, error) {
		gotLast = last
		return signer(t, &heads)(last, hs)
	})
	if err != nil || cp2 == nil || cp2.Seq != 2 || len(heads) != 2 {
		t.Fatalf("second Checkpoint: %+v, %d heads, %v", cp2, len(heads), err)
	}
	if gotLast == nil || gotLast.Seq != 1 || !bytes.Equal(gotLast.Root, cp.Root) || gotLast.KeyID != "k1" || !bytes.Equal(gotLast.Signature, []byte("sig")) || !gotLast.At.Equal(cp.At) {
		t.Fatalf("sign got last %+v, want the first checkpoint", gotLast)
	}
	cps, err := s.Checkpoints(ctx, 0, 10)
	if err != nil || len(cps) != 2 || cps[0].Seq != 1 || cps[1].Seq != 2 || !bytes.Equal(cps[1].Prev, cp2.Prev) || cps[1].Size != 2 || cps[0].Prev != nil && len(cps[0].Prev) != 0 {
		t.Fatalf("Checkpoints: %+v %v", cps, err)
	}
	if cps, _ := s.Checkpoints(ctx, 1, 10); len(cps) != 1 {
		t.Fatalf("Checkpoints after 1: %d", len(cps))
	}
	leaves, err := s.Leaves(ctx, 1, 2, 2)
	if err != nil || len(leaves) != 2 || leaves[0].Index != 2 || leaves[1].Index != 3 || leaves[0].Checkpoint != 1 {
		t.Fatalf("Leaves(1, from 2, limit 2): %+v %v", leaves, err)
	}
	cov, err := s.Coverage(ctx, chains[1].ID)
	if err != nil || len(cov) != 2 || cov[0].Checkpoint != 1 || cov[1].Checkpoint != 2 || cov[0].Head.Seq != 2 || cov[1].Head.Seq != 4 {
		t.Fatalf("Coverage: %+v %v", cov, err)
	}
	wantIndex := int64(0)
	if chains[3].ID < chains[1].ID {
		wantIndex = 1
	}
	if cov[1].Index != wantIndex || cov[0].Head.Chain != chains[1].ID || len(cov[0].Head.Hash) != 32 {
		t.Fatalf("Coverage leaf %+v", cov[1])
	}
	if cov, err := s.Coverage(ctx, "unknown"); err != nil || len(cov) != 0 {
		t.Fatalf("Coverage of an unknown chain: %v %v", cov, err)
	}
	// A failing sign writes nothing.
	appendN(t, s, chains[0], 1, t0)
	boom := errors.New("boom")
	if _, err := s.Checkpoint(ctx, func(*record.Checkpoint, []record.Head) (*record.Checkpoint, error) { return nil, boom }); !errors.Is(err, boom) {
		t.Fatalf("Checkpoint with a failing sign: %v", err)
	}
	if cps, _ := s.Checkpoints(ctx, 0, 10); len(cps) != 2 {
		t.Fatalf("a failed checkpoint was stored")
	}
	if ch, _ := s.Chain(ctx, chains[0].ID); ch.CoveredSeq != 1 {
		t.Fatalf("a failed checkpoint moved CoveredSeq to %d", ch.CoveredSeq)
	}
}

func cmpStr(a, b string) int {
	switch {
	case a < b:
		return -1
	case a > b:
		return 1
	}
	return 0
}

func testCheckpointConcurrent(t *testing.T, s record.Store) {
	ctx := context.Background()
	var wg sync.WaitGroup
	var mu sync.Mutex
	var failed error
	for w := range 4 {
		wg.Go(func() {
			for i := range 5 {
				c := chainOf("bank", fmt.Sprint("u", w), fmt.Sprint("c", i))
				if _, err := s.Append(ctx, c, []record.Entry{entry(c, record.KindTurn, t0)}, link); err != nil {
					mu.Lock()
					failed = err
					mu.Unlock()
				}
				var hs []record.Head
				if _, err := s.Checkpoint(ctx, signer(t, &hs)); err != nil {
					mu.Lock()
					failed = err
					mu.Unlock()
				}
			}
		})
	}
	wg.Wait()
	if failed != nil {
		t.Fatal(failed)
	}
	cps, err := s.Checkpoints(ctx, 0, 1000)
	if err != nil {
		t.Fatal(err)
	}
	var covered int64
	for i, cp := range cps {
		if cp.Seq != int64(i+1) {
			t.Fatalf("checkpoint %d has seq %d", i, cp.Seq)
		}
		covered += cp.Size
	}
	if covered != 20 {
		t.Fatalf("checkpoints covered %d heads, want each of the 20 chains once", covered)
	}
}

func testKeys(t *testing.T, s record.Store) {
	ctx := context.Background()
	if _, err := s.Key(ctx, "bank", "u1"); !errors.Is(err, record.ErrNotFound) {
		t.Fatalf("Key of nobody: %v, want ErrNotFound", err)
	}
	k := record.DataKey{Tenant: "bank", User: "u1", KeyID: "0011223344556677", Wrapped: []byte("wrapped-1"), CreatedAt: t0}
	got, err := s.PutKey(ctx, k)
	if err != nil || !bytes.Equal(got.Wrapped, k.Wrapped) {
		t.Fatalf("PutKey: %+v %v", got, err)
	}
	// A second key for the same user loses to the first.
	k2 := k
	k2.Wrapped = []byte("wrapped-2")
	if got, err := s.PutKey(ctx, k2); err != nil || !bytes.Equal(got.Wrapped, k.Wrapped) {
		t.Fatalf("a second PutKey returned %q, %v, want the first key", got.Wrapped, err)
	}
	got, err = s.Key(ctx, "bank", "u1")
	if err != nil || !bytes.Equal(got.Wrapped, k.Wrapped) || got.KeyID != k.KeyID || !got.CreatedAt.Equal(t0) || got.Hold || !got.ErasedAt.IsZero() {
		t.Fatalf("Key: %+v %v", got, err)
	}
	if _, err := s.Key(ctx, "other", "u1"); !errors.Is(err, record.ErrNotFound) {
		t.Fatalf("keys are per tenant: %v", err)
	}
	if err := s.EraseKey(ctx, "bank", "u1", t0.Add(time.Hour)); err != nil {
		t.Fatalf("EraseKey: %v", err)
	}
	got, err = s.Key(ctx, "bank", "u1")
	if !errors.Is(err, record.ErrErased) || got.Wrapped != nil || !got.ErasedAt.Equal(t0.Add(time.Hour)) {
		t.Fatalf("Key after erasure: %+v %v, want ErrErased", got, err)
	}
	if err := s.EraseKey(ctx, "bank", "u1", t0.Add(2*time.Hour)); err != nil {
		t.Fatalf("erasing twice: %v", err)
	}
	if err := s.EraseKey(ctx, "bank", "nobody", t0); !errors.Is(err, record.ErrNotFound) {
		t.Fatalf("erasing no key: %v, want ErrNotFound", err)
	}
	// A user who comes back gets a new key.
	if got, err := s.PutKey(ctx, k2); err != nil || !bytes.Equal(got.Wrapped, k2.Wrapped) {
		t.Fatalf("PutKey after erasure: %q %v", got.Wrapped, err)
	}
	if got, err := s.Key(ctx, "bank", "u1"); err != nil || !bytes.Equal(got.Wrapped, k2.Wrapped) || !got.ErasedAt.IsZero() {
		t.Fatalf("Key after a new key: %+v %v", got, err)
	}
}

func testKeysRace(t *testing.T, s record.Store) {
	ctx := context.Background()
	var wg sync.WaitGroup
	got := make([][]byte, 8)
	for i := range got {
		wg.Go(func() {
			k, err := s.PutKey(ctx, record.DataKey{Tenant: "bank", User: "u", KeyID: "k", Wrapped: fmt.Appendf(nil, "key-%d", i), CreatedAt: t0})
			if err != nil {
				t.Errorf("PutKey: %v", err)
			}
			got[i] = k.Wrapped
		})
	}
	wg.Wait()
	for _, g := range got {
		if !bytes.Equal(g, got[0]) {
			t.Fatalf("racing PutKeys agreed on no key: %q", got)
		}
	}
}

func testHold(t *testing.T, s record.Store) {
	ctx := context.Background()
	// A hold before any key.
	if err := s.Hold(ctx, "bank", "u1", true); err != nil {
		t.Fatal(err)
	}
	if _, err := s.Key(ctx, "bank", "u1"); !errors.Is(err, record.ErrNotFound) {
		t.Fatalf("a hold alone is not a key: %v", err)
	}
	k, err := s.PutKey(ctx, record.DataKey{Tenant: "bank", User: "u1", KeyID: "k", Wrapped: []byte("w"), CreatedAt: t0})
	if err != nil || !bytes.Equal(k.Wrapped, []byte("w")) || !k.Hold {
		t.Fatalf("PutKey of a held user: %+v %v", k, err)
	}
	if err := s.EraseKey(ctx, "bank", "u1", t0); !errors.Is(err, record.ErrLegalHold) {
		t.Fatalf("EraseKey under hold: %v, want ErrLegalHold", err)
	}
	if k, err := s.Key(ctx, "bank", "u1"); err != nil || !k.Hold || k.Wrapped == nil {
		t.Fatalf("the held key: %+v %v", k, err)
	}
	if err := s.Hold(ctx, "bank", "u1", false); err != nil {
		t.Fatal(err)
	}
	if err := s.EraseKey(ctx, "bank", "u1", t0); err != nil {
		t.Fatalf("EraseKey after release: %v", err)
	}
	// Hold and release an erased user's row.
	if err := s.Hold(ctx, "bank", "u1", true); err != nil {
		t.Fatal(err)
	}
	if k, err := s.Key(ctx, "bank", "u1"); !errors.Is(err, record.ErrErased) || !k.Hold {
		t.Fatalf("a held erased key: %+v %v", k, err)
	}
}

func testPrune(t *testing.T, s record.Store) {
	ctx := context.Background()
	c := chainOf("bank", "u1", "old")
	keep := chainOf("bank", "u1", "new")
	appendN(t, s, c, 4, t0)
	appendN(t, s, keep, 1, t0)
	var hs []record.Head
	if _, err := s.Checkpoint(ctx, signer(t, &hs)); err != nil {
		t.Fatal(err)
	}
	boom := errors.New("boom")
	if err := s.Prune(ctx, c.ID, func(record.Chain, int64) (*record.PruneStatement, error) { return nil, boom }); !errors.Is(err, boom) {
		t.Fatalf("Prune with a failing sign: %v", err)
	}
	if got := all(t, s, c.ID); len(got) != 4 {
		t.Fatalf("a failed prune deleted entries")
	}
	var st *record.PruneStatement
	err := s.Prune(ctx, c.ID, func(ch record.Chain, n int64) (*record.PruneStatement, error) {
		if ch.ID != c.ID || ch.Head.Seq != 4 || n != 4 || ch.User != "u1" {
			t.Errorf("sign got chain %+v and %d entries", ch, n)
		}
		st = &record.PruneStatement{ID: uuid.NewString(), At: t0.Add(time.Hour), Tenant: ch.Tenant, Chain: ch.ID, Through: ch.Head.Seq,
			Head: ch.Head.Hash, Entries: n, Reason: "retention", KeyID: "k1", Signature: []byte("sig")}
		return st, nil
	})
	if err != nil {
		t.Fatalf("Prune: %v", err)
	}
	if got := all(t, s, c.ID); len(got) != 0 {
		t.Fatalf("%d entries left after Prune", len(got))
	}
	if _, err := s.Chain(ctx, c.ID); !errors.Is(err, record.ErrNotFound) {
		t.Fatalf("the pruned chain: %v, want ErrNotFound", err)
	}
	if got := all(t, s, keep.ID); len(got) != 1 {
		t.Fatalf("Prune touched another chain")
	}
	if cov, err := s.Coverage(ctx, c.ID); err != nil || len(cov) != 1 {
		t.Fatalf("a pruned chain's leaves must stay: %v %v", cov, err)
	}
	ps, err := s.Prunes(ctx, c.ID, "", 10)
	if err != nil || len(ps) != 1 {
		t.Fatalf("Prunes: %+v %v", ps, err)
	}
	p := ps[0]
	if p.ID != st.ID || !p.At.Equal(st.At) || p.Tenant != "bank" || p.Chain != c.ID || p.Through != 4 || !bytes.Equal(p.Head, st.Head) ||
		p.Entries != 4 || p.Reason != "retention" || p.KeyID != "k1" || !bytes.Equal(p.Signature, st.Signature) {
		t.Fatalf("Prunes returned %+v, want %+v", p, st)
	}
	if ps, err := s.Prunes(ctx, "", "", 10); err != nil || len(ps) != 1 {
		t.Fatalf("every prune: %d %v", len(ps), err)
	}
	if ps, err := s.Prunes(ctx, "", st.ID, 10); err != nil || len(ps) != 0 {
		t.Fatalf("prunes after the last: %d %v", len(ps), err)
	}
	if err := s.Prune(ctx, c.ID, func(record.Chain, int64) (*record.PruneStatement, error) { return st, nil }); !errors.Is(err, record.ErrNotFound) {
		t.Fatalf("pruning a pruned chain: %v, want ErrNotFound", err)
	}
	// A held user's chains are not pruned.
	if err := s.Hold(ctx, "bank", "u1", true); err != nil {
		t.Fatal(err)
	}
	err = s.Prune(ctx, keep.ID, func(record.Chain, int64) (*record.PruneStatement, error) {
		t.Error("sign called for a held user's chain")
		return nil, boom
	})
	if !errors.Is(err, record.ErrLegalHold) {
		t.Fatalf("Prune under hold: %v, want ErrLegalHold", err)
	}
}

func testCancelled(t *testing.T, s record.Store) {
	ctx, cancel := context.WithCancel(context.Background())
	cancel()
	c := chainOf("bank", "u1", "conv")
	if _, err := s.Append(ctx, c, []record.Entry{entry(c, record.KindTurn, t0)}, link); err == nil {
		t.Error("Append with a cancelled context succeeded")
	}
	if got := all(t, s, c.ID); len(got) != 0 {
		t.Errorf("Append with a cancelled context stored %d entries", len(got))
	}
}
