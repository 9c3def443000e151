package record

import (
	"bytes"
	"context"
	"crypto/ed25519"
	"errors"
	"fmt"
)

// Breakage is what is wrong at a place of the record.
type Breakage string

// The breakages Verify reports.
const (
	// Altered: an entry's content, hash or header is not what was written.
	Altered Breakage = "altered"
	// Removed: entries are missing (a gap, or the end of a chain a checkpoint covers).
	Removed Breakage = "removed"
	// Reordered: two entries are in each other's place.
	Reordered Breakage = "reordered"
	// Inserted: an entry is where none was written.
	Inserted Breakage = "inserted"
	// ConversationRemoved: a chain a checkpoint covers is gone, and no prune statement says why.
	ConversationRemoved Breakage = "conversation removed"
	// CheckpointAltered: a checkpoint's statement, signature or leaves are not what was signed.
	CheckpointAltered Breakage = "checkpoint altered"
	// CheckpointRemoved: a checkpoint is missing from the checkpoints' chain.
	CheckpointRemoved Breakage = "checkpoint removed"
	// StatementAltered: a prune statement's signature does not verify.
	StatementAltered Breakage = "statement altered"
	// ExportAltered: an export's lines are not those its signature covers.
	ExportAltered Breakage = "export altered"
	// UnknownKey: a checkpoint or a statement names a key the verifier was not given.
	UnknownKey Breakage = "unknown key"
)

// Problem is one broken place of the record.
type Problem struct {
	What Breakage
	// Chain, Tenant and Conversation name the conversation, Seq the place in it (0 when the
	// problem is a checkpoint's).
	Chain, Tenant, Conversation string
	Seq                         int64
	// Checkpoint is the checkpoint's seq when the problem is one's.
	Checkpoint int64
	Detail     string
}

func (p Problem) String() string {
	if p.Chain == "" && p.Checkpoint == 0 {
		return fmt.Sprintf("%s: %s", p.What, p.Detail)
	}
	if p.Chain == "" {
		return fmt.Sprintf("checkpoint %d: %s: %s", p.Checkpoint, p.What, p.Detail)
	}
	return fmt.Sprintf("chain %s (tenant %q, conversation %q) seq %d: %s: %s", p.Chain, p.Tenant, p.Conversation, p.Seq, p.What, p.Detail)
}

// MaxProblems bounds the problems a Report lists.
const MaxProblems = 100

// Report is what Verify found.
type Report struct {
	Chains, Entries, Checkpoints, Prunes int64
	// Uncovered counts the entries past their chain's newest checkpoint: not broken, but not
	// yet provable. After a clean Close there are none.
	Uncovered int64
	// Latest is the newest checkpoint, to compare with one published or kept elsewhere: the
	// record alone cannot tell that its newest checkpoints were removed.
	Latest *Checkpoint
	// Problems are the broken places, the first broken first; at most MaxProblems.
	Problems []Problem
	// More counts the problems past MaxProblems.
	More int64

	seen map[string]bool
}

// OK says that nothing is broken.
func (r *Report) OK() bool { return len(r.Problems) == 0 }

// Err is nil when nothing is broken, else an error naming the first broken place.
func (r *Report) Err() error {
	if r.OK() {
		return nil
	}
	return fmt.Errorf("%w: %s", ErrBroken, r.Problems[0])
}

// ErrBroken says that the record is not what was written.
var ErrBroken = errors.New("record: broken")

func (r *Report) add(p Problem) {
	if r.seen == nil {
		r.seen = map[string]bool{}
	}
	k := fmt.Sprint(p.Chain, "/", p.Seq, "/", p.Checkpoint)
	if r.seen[k] {
		return
	}
	if len(r.seen) < 10*MaxProblems {
		r.seen[k] = true
	}
	if len(r.Problems) >= MaxProblems {
		r.More++
		return
	}
	r.Problems = append(r.Problems, p)
}

// Verify recomputes the whole record in store and reports the first broken places: each
// chain's entries (seq 1..n without gaps, each linked to the one before, each hash and sealed
// content's hash recomputed), the checkpoints (signatures under keys, the chain of their
// statements, their Merkle roots over their leaves) and each leaf against the entry it names
// (a chain gone that no signed prune statement covers is a removed conversation). It holds one
// page of a chain's entries and one checkpoint's leaf hashes at a time. The error is the
// store's; a broken record is a Report with Problems.
func Verify(ctx context.Context, s Store, keys []ed25519.PublicKey) (*Report, error) {
	rep := &Report{}
	if err := verifyCheckpoints(ctx, s, keys, rep); err != nil {
		return rep, err
	}
	q := ChainQuery{Limit: 200}
	for {
		cs, err := s.Chains(ctx, q)
		if err != nil {
			return rep, fmt.Errorf("record: verifying: %w", err)
		}
		if len(cs) == 0 {
			return rep, nil
		}
		for _, c := range cs {
			if err := verifyChain(ctx, s, &c, rep); err != nil {
				return rep, err
			}
		}
		last := cs[len(cs)-1]
		q.AfterAt, q.AfterID = last.FirstAt, last.ID
	}
}

func verifyCheckpoints(ctx context.Context, s Store, keys []ed25519.PublicKey, rep *Report) error {
	var last *Checkpoint
	var after int64
	for {
		cps, err := s.Checkpoints(ctx, after, 100)
		if err != nil {
			return fmt.Errorf("record: verifying: %w", err)
		}
		if len(cps) == 0 {
			return nil
		}
		for i := range cps {
			cp := &cps[i]
			rep.Checkpoints++
			checkCheckpoint(cp, last, keys, rep)
			if err := checkLeaves(ctx, s, cp, keys, rep); err != nil {
				return err
			}
			last = cp
			after = cp.Seq
			rep.Latest = cp
		}
	}
}

// checkCheckpoint checks a checkpoint's signature and its link to the one before it.
func checkCheckpoint(cp, last *Checkpoint, keys []ed25519.PublicKey, rep *Report) {
	want := int64(1)
	if last != nil {
		want = last.Seq + 1
	}
	switch {
	case cp.Seq != want:
		rep.add(Problem{What: CheckpointRemoved, Checkpoint: want, Detail: fmt.Sprintf("checkpoints %d to %d are missing", want, cp.Seq-1)})
	case last != nil && !bytes.Equal(cp.Prev, statementHash(last)):
		rep.add(Problem{What: CheckpointAltered, Checkpoint: cp.Seq, Detail: "it does not follow the checkpoint before it"})
	case last == nil && len(cp.Prev) != 0:
		rep.add(Problem{What: CheckpointRemoved, Checkpoint: 1, Detail: "the first checkpoint follows another"})
	}
	pub := keyByID(keys, cp.KeyID)
	switch {
	case pub == nil:
		rep.add(Problem{What: UnknownKey, Checkpoint: cp.Seq, Detail: fmt.Sprintf("signed by key %s", cp.KeyID)})
	case !ed25519.Verify(pub, Statement(cp), cp.Signature):
		rep.add(Problem{What: CheckpointAltered, Checkpoint: cp.Seq, Detail: "its signature does not verify"})
	}
}

// checkLeaves recomputes a checkpoint's root from its leaves, and checks that each chain it
// names is there or was pruned by a signed statement.
func checkLeaves(ctx context.Context, s Store, cp *Checkpoint, keys []ed25519.PublicKey, rep *Report) error {
	var hashes [][]byte
	var from int64
	for {
		ls, err := s.Leaves(ctx, cp.Seq, from, 1000)
		if err != nil {
			return fmt.Errorf("record: verifying: %w", err)
		}
		if len(ls) == 0 {
			break
		}
		for _, l := range ls {
			if l.Index != int64(len(hashes)) {
				rep.add(Problem{What: CheckpointAltered, Checkpoint: cp.Seq, Detail: fmt.Sprintf("leaf %d is missing", len(hashes))})
				return nil
			}
			hashes = append(hashes, leafHash(LeafOf(l.Head)))
			if _, err := s.Chain(ctx, l.Head.Chain); errors.Is(err, ErrNotFound) {
				pruned, err := prunedThrough(ctx, s, l.Head.Chain, keys, rep)
				if err != nil {
					return err
				}
				if pruned < l.Head.Seq {
					rep.add(Problem{What: ConversationRemoved, Chain: l.Head.Chain, Seq: l.Head.Seq, Checkpoint: cp.Seq,
						Detail: fmt.Sprintf("checkpoint %d covers it at seq %d; no prune statement does", cp.Seq, l.Head.Seq)})
				}
			} else if err != nil {
				return fmt.Errorf("record: verifying: %w", err)
			}
		}
		from = ls[len(ls)-1].Index + 1
	}
	if int64(len(hashes)) != cp.Size || !bytes.Equal(merkleRoot(hashes), cp.Root) {
		rep.add(Problem{What: CheckpointAltered, Checkpoint: cp.Seq, Detail: fmt.Sprintf("its %d leaves do not make its root over %d", len(hashes), cp.Size)})
	}
	return nil
}

// prunedThrough is the highest seq a prune statement of the chain covers, 0 for none; a
// statement whose signature does not verify covers nothing.
func prunedThrough(ctx context.Context, s Store, chain string, keys []ed25519.PublicKey, rep *Report) (int64, error) {
	ps, err := s.Prunes(ctx, chain, "", 100)
	if err != nil {
		return 0, fmt.Errorf("record: verifying: %w", err)
	}
	var through int64
	for _, p := range ps {
		pub := keyByID(keys, p.KeyID)
		if pub == nil || !ed25519.Verify(pub, PruneStatementBytes(&p), p.Signature) || p.Chain != chain {
			rep.add(Problem{What: StatementAltered, Chain: chain, Seq: p.Through, Detail: fmt.Sprintf("prune statement %s does not verify", p.ID)})
			continue
		}
		rep.Prunes++
		through = max(through, p.Through)
	}
	return through, nil
}

// verifyChain walks one chain's entries against its coverage.
func verifyChain(ctx context.Context, s Store, c *Chain, rep *Report) error {
	rep.Chains++
	cov, err := s.Coverage(ctx, c.ID)
	if err != nil {
		return fmt.Errorf("record: verifying: %w", err)
	}
	var page []Entry
	var after int64
	var ferr error
	next := func() *Entry {
		if len(page) == 0 && ferr == nil {
			page, ferr = s.Entries(ctx, c.ID, after, 500)
			if len(page) > 0 {
				after = page[len(page)-1].Seq
			}
		}
		if len(page) == 0 {
			return nil
		}
		e := page[0]
		page = page[1:]
		return &e
	}
	w := newWalker(c.ID, c.Tenant, c.Conversation, cov, rep)
	for e := next(); e != nil; e = next() {
		w.feed(e)
	}
	w.finish()
	if ferr != nil {
		return fmt.Errorf("record: verifying: %w", ferr)
	}
	w.end(c.Head.Seq, c.Head.Hash, c.CoveredSeq)
	return nil
}

// walker checks a chain's entries, in the order given, against the leaves that cover it.
type walker struct {
	chain, tenant, conversation string
	rep                         *Report
	leaves                      map[int64][]byte // seq -> head hash, from the checkpoints
	covered                     int64
	n                           int64 // the entries seen
	held                        *Entry
	prev                        []byte // the hash the next entry must follow
	i                           int64  // the seq it must have
}

func newWalker(chain, tenant, conversation string, cov []Leaf, rep *Report) *walker {
	w := &walker{chain: chain, tenant: tenant, conversation: conversation, rep: rep, leaves: map[int64][]byte{}}
	for _, l := range cov {
		w.leaves[l.Head.Seq] = l.Head.Hash
		w.covered = max(w.covered, l.Head.Seq)
	}
	return w
}

func (w *walker) add(what Breakage, seq int64, detail string, args ...any) {
	w.rep.add(Problem{What: what, Chain: w.chain, Tenant: w.tenant, Conversation: w.conversation, Seq: seq, Detail: fmt.Sprintf(detail, args...)})
}

// feed takes the chain's next entry; finish ends the chain. One entry is held back, to tell
// two entries in each other's place from an altered one.
func (w *walker) feed(e *Entry) {
	if w.held == nil {
		w.held = e
		return
	}
	if w.step(w.held, e) {
		w.held = nil
	} else {
		w.held = e
	}
}

func (w *walker) finish() {
	if w.held != nil {
		w.step(w.held, nil)
		w.held = nil
	}
}

// step checks cur, nxt being the entry after it (nil at the end); it says whether it took
// nxt too.
func (w *walker) step(cur, nxt *Entry) bool {
	if w.prev == nil {
		w.prev, w.i = make([]byte, HashSize), 1
	}
	w.n++
	w.rep.Entries++
	switch {
	case cur.Seq > w.i:
		if cur.Seq == w.i+1 {
			w.add(Removed, w.i, "entry %d is missing", w.i)
		} else {
			w.add(Removed, w.i, "entries %d to %d are missing", w.i, cur.Seq-1)
		}
		w.i, w.prev = cur.Seq, cur.Prev // follow on from the gap
	case cur.Seq < w.i:
		w.add(Inserted, cur.Seq, "seq %d comes again after seq %d", cur.Seq, w.i-1)
		return false
	case !bytes.Equal(cur.Prev, w.prev) && nxt != nil && bytes.Equal(nxt.Hash, cur.Prev) && bytes.Equal(nxt.Prev, w.prev):
		w.add(Reordered, w.i, "seq %d and %d are in each other's place", w.i, w.i+1)
		w.check(nxt, w.i)
		w.check(cur, w.i+1)
		w.n++
		w.rep.Entries++
		w.prev, w.i = cur.Hash, w.i+2
		return true
	}
	if why := checkEntry(cur); why != "" {
		what, detail := w.misplaced(cur, why)
		w.add(what, cur.Seq, "%s", detail)
	} else if !bytes.Equal(cur.Prev, w.prev) {
		if w.i == 1 {
			w.add(Altered, 1, "it does not start a chain")
		} else {
			w.add(Altered, w.i-1, "seq %d does not follow it: it was altered, or an entry was removed or inserted", w.i)
		}
	} else if ChainID(cur.Tenant, cur.Environment, cur.User, cur.Conversation) != w.chain || cur.Chain != w.chain {
		w.add(Altered, cur.Seq, "it names another conversation")
	}
	w.check(cur, cur.Seq)
	w.prev, w.i = cur.Hash, cur.Seq+1
	return false
}

// misplaced tells an altered entry from one renumbered after a removal or an insertion: an
// entry whose hash recomputes at another seq was moved there.
func (w *walker) misplaced(e *Entry, why string) (Breakage, string) {
	if e.Personal != nil && !bytes.Equal(sum(e.Personal), e.PersonalHash) || e.Evidence != nil && !bytes.Equal(sum(e.Evidence), e.EvidenceHash) {
		return Altered, why
	}
	for _, k := range []int64{1, -1, 2, -2, 3, -3} {
		c := *e
		c.Seq += k
		if c.Seq > 0 && bytes.Equal(entryHash(&c), e.Hash) {
			if k > 0 {
				return Removed, fmt.Sprintf("it was written as seq %d: entries before it were removed and the chain renumbered", c.Seq)
			}
			return Inserted, fmt.Sprintf("it was written as seq %d: entries were inserted before it", c.Seq)
		}
	}
	return Altered, why
}

// check compares the entry at seq with the leaf that covers it, if any.
func (w *walker) check(e *Entry, seq int64) {
	if h, ok := w.leaves[seq]; ok && !bytes.Equal(h, e.Hash) {
		w.add(Altered, seq, "a checkpoint covers another entry here")
	}
}

// end checks the chain's length against its head and its coverage.
func (w *walker) end(headSeq int64, headHash []byte, coveredSeq int64) {
	if w.covered > w.n {
		w.add(Removed, w.n+1, "the chain ends at seq %d but a checkpoint covers it to seq %d", w.n, w.covered)
	}
	switch {
	case headSeq > w.n:
		w.add(Removed, w.n+1, "the chain ends at seq %d but its head is seq %d", w.n, headSeq)
	case headSeq < w.n:
		w.add(Inserted, headSeq+1, "the chain's head is seq %d but it has %d entries", headSeq, w.n)
	case headHash != nil && w.n > 0 && !bytes.Equal(headHash, w.prev):
		w.add(Altered, w.n, "the chain's head names another entry")
	}
	if coveredSeq > w.covered {
		w.add(CheckpointRemoved, coveredSeq, "the chain was covered to seq %d by a checkpoint that is gone", coveredSeq)
	}
	w.rep.Uncovered += max(0, w.n-w.covered)
}
