package record

import (
	"bufio"
	"bytes"
	"context"
	"crypto/cipher"
	"crypto/ed25519"
	"crypto/sha256"
	"encoding/hex"
	"encoding/json"
	"errors"
	"fmt"
	"hash"
	"io"
	"time"
)

// MaxExportLine bounds a line of an export that VerifyExport reads: a longer one is an error,
// not an allocation.
const MaxExportLine = 16 << 20

// ExportQuery names what Export writes: a user's conversations in a tenant, or one of them.
type ExportQuery struct {
	Tenant, User string
	// Conversation, when set, narrows the export to that conversation id.
	Conversation string
}

// ExportedEntry is an entry as an export and the admin handler show it: its header and hash
// (which verify), and its contents opened where their keys exist.
type ExportedEntry struct {
	Header Header `json:"header"`
	Hash   string `json:"hash"`
	// Personal is a turn's content ([TurnContent]) or a handoff's ([HandoffContent]); absent once the user's key was erased
	// (Erased says so).
	Personal json.RawMessage `json:"personal,omitempty"`
	Erased   bool            `json:"erased,omitempty"`
	// Evidence is an action's ([ActionEvidence]) or an outcome's ([OutcomeEvidence]).
	Evidence json.RawMessage `json:"evidence,omitempty"`
}

// The lines of an export (see the package doc).
type (
	exportHeader struct {
		Type         string `json:"type"`
		V            int    `json:"v"`
		Tenant       string `json:"tenant"`
		User         string `json:"user"`
		Conversation string `json:"conversation,omitempty"`
		At           string `json:"at"`
	}
	exportChain struct {
		Type         string     `json:"type"`
		Chain        string     `json:"chain"`
		Tenant       string     `json:"tenant"`
		Environment  string     `json:"environment"`
		User         string     `json:"user"`
		Conversation string     `json:"conversation"`
		Head         exportHead `json:"head"`
		Erased       bool       `json:"erased,omitempty"`
	}
	exportHead struct {
		Seq  int64  `json:"seq"`
		Hash string `json:"hash"`
	}
	exportProof struct {
		Type       string           `json:"type"`
		Chain      string           `json:"chain"`
		Checkpoint exportCheckpoint `json:"checkpoint"`
		Leaf       exportHead       `json:"leaf"`
		Index      int64            `json:"index"`
		Path       []string         `json:"path"`
	}
	exportCheckpoint struct {
		Seq       int64  `json:"seq"`
		At        string `json:"at"`
		Prev      string `json:"prev"`
		Root      string `json:"root"`
		Size      int64  `json:"size"`
		Key       string `json:"key"`
		Signature string `json:"signature"`
	}
	exportEntry struct {
		Type string `json:"type"`
		ExportedEntry
	}
	exportEnd struct {
		Type      string `json:"type"`
		Chains    int64  `json:"chains"`
		Entries   int64  `json:"entries"`
		SHA256    string `json:"sha256"`
		At        string `json:"at"`
		Key       string `json:"key"`
		Signature string `json:"signature"`
	}
)

// endStatement is what an export's last line signs: the RFC 8785 canonical JSON of
// {"v":1, "type":"export", "chains", "entries", "sha256", "at", "key"}.
func endStatement(e *exportEnd) []byte {
	raw, _ := json.Marshal(struct {
		V       int    `json:"v"`
		Type    string `json:"type"`
		Chains  int64  `json:"chains"`
		Entries int64  `json:"entries"`
		SHA256  string `json:"sha256"`
		At      string `json:"at"`
		Key     string `json:"key"`
	}{1, "export", e.Chains, e.Entries, e.SHA256, e.At, e.Key})
	c, err := canonical(raw)
	if err != nil {
		panic(err)
	}
	return c
}

func cpOut(cp *Checkpoint) exportCheckpoint {
	return exportCheckpoint{Seq: cp.Seq, At: cp.At.UTC().Format(time.RFC3339Nano), Prev: hex.EncodeToString(cp.Prev), Root: hex.EncodeToString(cp.Root),
		Size: cp.Size, Key: cp.KeyID, Signature: hex.EncodeToString(cp.Signature)}
}

// lineWriter writes JSON lines and hashes them.
type lineWriter struct {
	w   *bufio.Writer
	sum hash.Hash
	err error
}

func (lw *lineWriter) line(v any) {
	if lw.err != nil {
		return
	}
	b, err := json.Marshal(v)
	if err != nil {
		lw.err = err
		return
	}
	b = append(b, '\n')
	lw.sum.Write(b)
	_, lw.err = lw.w.Write(b)
}

// Export writes a user's conversations as JSON lines (see the package doc): a header, then for
// each conversation its chain, the inclusion proofs of the checkpoints that cover it and its
// entries with their contents opened, then a signed end line. It verifies offline with
// [VerifyExport] and the public key alone. It holds one page of entries and one checkpoint's
// leaf hashes at a time.
func (r *Recorder) Export(ctx context.Context, w io.Writer, q ExportQuery) error {
	if q.Tenant == "" || q.User == "" {
		return errors.New("record: an export names a tenant and a user")
	}
	lw := &lineWriter{w: bufio.NewWriterSize(w, 64<<10), sum: sha256.New()}
	lw.line(exportHeader{Type: "header", V: 1, Tenant: q.Tenant, User: q.User, Conversation: q.Conversation, At: microseconds(r.now()).Format(time.RFC3339Nano)})
	personal, erased, err := r.readKey(ctx, q.Tenant, q.User)
	if err != nil {
		return err
	}
	var chains, entries int64
	cq := ChainQuery{Tenant: q.Tenant, User: q.User, Limit: 100}
	for {
		cs, err := r.store.Chains(ctx, cq)
		if err != nil {
			return fmt.Errorf("record: exporting: %w", err)
		}
		if len(cs) == 0 {
			break
		}
		for _, c := range cs {
			if q.Conversation != "" && c.Conversation != q.Conversation {
				continue
			}
			n, err := r.exportChain(ctx, lw, &c, personal, erased)
			if err != nil {
				return err
			}
			chains++
			entries += n
		}
		last := cs[len(cs)-1]
		cq.AfterAt, cq.AfterID = last.FirstAt, last.ID
	}
	set := r.keys.current()
	end := exportEnd{Type: "end", Chains: chains, Entries: entries, SHA256: hex.EncodeToString(lw.sum.Sum(nil)),
		At: microseconds(r.now()).Format(time.RFC3339Nano), Key: set.id}
	end.Signature = hex.EncodeToString(ed25519.Sign(set.sign, endStatement(&end)))
	lw.line(end)
	if lw.err != nil {
		return fmt.Errorf("record: exporting: %w", lw.err)
	}
	if err := lw.w.Flush(); err != nil {
		return fmt.Errorf("record: exporting: %w", err)
	}
	return nil
}

// readKey returns a user's data key without making one: nil when there is none, and erased
// when it was destroyed.
func (r *Recorder) readKey(ctx context.Context, tenant, user string) (a cipher.AEAD, erased bool, err error) {
	k, err := r.store.Key(ctx, tenant, user)
	switch {
	case errors.Is(err, ErrNotFound):
		return nil, false, nil
	case errors.Is(err, ErrErased):
		return nil, true, nil
	case err != nil:
		return nil, false, fmt.Errorf("record: reading a data key: %w", err)
	}
	raw, err := r.unwrap(&k)
	if err != nil {
		return nil, false, err
	}
	return newGCM(raw), false, nil
}

func (r *Recorder) exportChain(ctx context.Context, lw *lineWriter, c *Chain, personal cipher.AEAD, erased bool) (int64, error) {
	lw.line(exportChain{Type: "chain", Chain: c.ID, Tenant: c.Tenant, Environment: c.Environment, User: c.User, Conversation: c.Conversation,
		Head: exportHead{Seq: c.Head.Seq, Hash: hex.EncodeToString(c.Head.Hash)}, Erased: erased})
	cov, err := r.store.Coverage(ctx, c.ID)
	if err != nil {
		return 0, fmt.Errorf("record: exporting: %w", err)
	}
	for _, l := range cov {
		p, err := r.proof(ctx, l)
		if err != nil {
			return 0, err
		}
		lw.line(p)
	}
	var n, after int64
	for {
		es, err := r.store.Entries(ctx, c.ID, after, 500)
		if err != nil {
			return n, fmt.Errorf("record: exporting: %w", err)
		}
		if len(es) == 0 {
			return n, lw.err
		}
		for i := range es {
			lw.line(exportEntry{Type: "entry", ExportedEntry: r.opened(&es[i], personal, erased)})
			n++
		}
		after = es[len(es)-1].Seq
	}
}

// opened is an entry with its contents opened where their keys exist.
func (r *Recorder) opened(e *Entry, personal cipher.AEAD, erased bool) ExportedEntry {
	x := ExportedEntry{Header: HeaderOf(e), Hash: hex.EncodeToString(e.Hash)}
	if e.PersonalHash != nil {
		if personal != nil {
			if p, err := open(personal, e.ID, e.Personal); err == nil {
				x.Personal = p
			}
		}
		// Sealed under an erased key (or one made before the user came back): unreadable.
		x.Erased = x.Personal == nil && (erased || personal != nil)
	}
	if e.Evidence != nil {
		for i := range r.keys.sets {
			a, _ := r.keys.aead(i, infoEvidence, e.Tenant)
			if p, err := open(a, e.ID, e.Evidence); err == nil {
				x.Evidence = p
				break
			}
		}
	}
	return x
}

// proof is the inclusion proof of a leaf in its checkpoint.
func (r *Recorder) proof(ctx context.Context, l Leaf) (*exportProof, error) {
	cps, err := r.store.Checkpoints(ctx, l.Checkpoint-1, 1)
	if err != nil {
		return nil, fmt.Errorf("record: exporting: %w", err)
	}
	if len(cps) == 0 || cps[0].Seq != l.Checkpoint {
		return nil, fmt.Errorf("record: exporting: checkpoint %d is missing", l.Checkpoint)
	}
	cp := &cps[0]
	var hashes [][]byte
	for from := int64(0); ; {
		ls, err := r.store.Leaves(ctx, cp.Seq, from, 1000)
		if err != nil {
			return nil, fmt.Errorf("record: exporting: %w", err)
		}
		if len(ls) == 0 {
			break
		}
		for _, x := range ls {
			hashes = append(hashes, leafHash(LeafOf(x.Head)))
		}
		from = ls[len(ls)-1].Index + 1
	}
	if l.Index >= int64(len(hashes)) {
		return nil, fmt.Errorf("record: exporting: checkpoint %d has no leaf %d", cp.Seq, l.Index)
	}
	path := inclusionProof(hashes, int(l.Index))
	p := &exportProof{Type: "proof", Chain: l.Head.Chain, Checkpoint: cpOut(cp), Leaf: exportHead{Seq: l.Head.Seq, Hash: hex.EncodeToString(l.Head.Hash)},
		Index: l.Index, Path: make([]string, len(path))}
	for i, h := range path {
		p.Path[i] = hex.EncodeToString(h)
	}
	return p, nil
}

// VerifyExport checks an export read from r against the checkpoint public keys, in bounded
// memory (a line at a time, and a conversation's covered seqs): every line's place under the
// signed end line, each conversation's chain, each inclusion proof against its signed
// checkpoint, and each covered entry against its leaf. An export that cannot be read (a line
// longer than MaxExportLine, a line that is not one of the export's, no end line) is an error
// wrapping ErrBroken; a broken chain is a Report with Problems.
func VerifyExport(r io.Reader, keys []ed25519.PublicKey) (*Report, error) {
	rep := &Report{}
	sc := bufio.NewScanner(r)
	sc.Buffer(make([]byte, 64<<10), MaxExportLine)
	sum := sha256.New()
	var w *walker
	var chain exportChain
	var chains, entries int64
	seenEntries := false
	lineNo := 0
	bad := func(format string, args ...any) (*Report, error) {
		return rep, fmt.Errorf("%w: export line %d: %s", ErrBroken, lineNo, fmt.Sprintf(format, args...))
	}
	endChain := func() {
		if w != nil {
			w.finish()
			h, _ := hex.DecodeString(chain.Head.Hash)
			w.end(chain.Head.Seq, h, 0)
		}
	}
	for sc.Scan() {
		lineNo++
		line := sc.Bytes()
		var t struct {
			Type string `json:"type"`
		}
		if err := json.Unmarshal(line, &t); err != nil {
			return bad("not JSON: %v", err)
		}
		if lineNo == 1 && t.Type != "header" {
			return bad("an export starts with its header")
		}
		switch t.Type {
		case "header":
			var h exportHeader
			if err := strict(line, &h); err != nil || lineNo != 1 || h.V != 1 {
				return bad("a header that is not the first line of a version 1 export")
			}
		case "chain":
			endChain()
			if err := strict(line, &chain); err != nil {
				return bad("%v", err)
			}
			if ChainID(chain.Tenant, chain.Environment, chain.User, chain.Conversation) != chain.Chain {
				return bad("chain %s is not its conversation's", chain.Chain)
			}
			rep.Chains++
			chains++
			w = newWalker(chain.Chain, chain.Tenant, chain.Conversation, nil, rep)
			seenEntries = false
		case "proof":
			var p exportProof
			if err := strict(line, &p); err != nil {
				return bad("%v", err)
			}
			if w == nil || p.Chain != chain.Chain || seenEntries {
				return bad("a proof out of its place")
			}
			leaf, ok := checkProof(&p, keys, rep)
			if !ok {
				continue
			}
			w.leaves[leaf.Seq] = leaf.Hash
			w.covered = max(w.covered, leaf.Seq)
		case "entry":
			var x exportEntry
			if err := strict(line, &x); err != nil {
				return bad("%v", err)
			}
			if w == nil {
				return bad("an entry before its chain")
			}
			e, err := entryOf(&x.ExportedEntry)
			if err != nil {
				return bad("%v", err)
			}
			seenEntries = true
			entries++
			w.feed(e)
		case "end":
			endChain()
			var end exportEnd
			if err := strict(line, &end); err != nil {
				return bad("%v", err)
			}
			got := hex.EncodeToString(sum.Sum(nil))
			sig, _ := hex.DecodeString(end.Signature)
			pub := keyByID(keys, end.Key)
			switch {
			case pub == nil:
				rep.add(Problem{What: UnknownKey, Detail: fmt.Sprintf("the export is signed by key %s", end.Key)})
			case end.SHA256 != got || end.Chains != chains || end.Entries != entries:
				rep.add(Problem{What: ExportAltered, Detail: "its lines are not those its end line signs"})
			case !ed25519.Verify(pub, endStatement(&end), sig):
				rep.add(Problem{What: ExportAltered, Detail: "its end line's signature does not verify"})
			}
			if sc.Scan() {
				lineNo++
				return bad("a line after the end")
			}
			if err := sc.Err(); err != nil {
				return bad("%v", err)
			}
			rep.seen = nil
			return rep, nil
		default:
			return bad("a line of unknown type %q", t.Type)
		}
		sum.Write(line)
		sum.Write([]byte{'\n'})
	}
	if err := sc.Err(); err != nil {
		if errors.Is(err, bufio.ErrTooLong) {
			lineNo++
			return bad("longer than %d bytes", MaxExportLine)
		}
		return rep, fmt.Errorf("record: reading an export: %w", err)
	}
	return bad("the export has no end line: it was cut")
}

func strict(line []byte, v any) error {
	dec := json.NewDecoder(bytes.NewReader(line))
	dec.DisallowUnknownFields()
	if err := dec.Decode(v); err != nil {
		return err
	}
	if dec.More() {
		return errors.New("more than one value")
	}
	return nil
}

// checkProof checks a proof line: its checkpoint's signature and the leaf's inclusion.
func checkProof(p *exportProof, keys []ed25519.PublicKey, rep *Report) (Head, bool) {
	fail := func(what Breakage, detail string) (Head, bool) {
		rep.add(Problem{What: what, Checkpoint: p.Checkpoint.Seq, Detail: detail})
		return Head{}, false
	}
	cp, err := checkpointOf(&p.Checkpoint)
	if err != nil {
		return fail(CheckpointAltered, err.Error())
	}
	pub := keyByID(keys, cp.KeyID)
	if pub == nil {
		return fail(UnknownKey, fmt.Sprintf("signed by key %s", cp.KeyID))
	}
	if !ed25519.Verify(pub, Statement(cp), cp.Signature) {
		return fail(CheckpointAltered, "its signature does not verify")
	}
	h, err := hex.DecodeString(p.Leaf.Hash)
	if err != nil || len(h) != HashSize {
		return fail(CheckpointAltered, "a leaf's hash is not a hash")
	}
	head := Head{Chain: p.Chain, Seq: p.Leaf.Seq, Hash: h}
	path := make([][]byte, len(p.Path))
	for i, s := range p.Path {
		if path[i], err = hex.DecodeString(s); err != nil || len(path[i]) != HashSize {
			return fail(CheckpointAltered, "an audit path holds a non-hash")
		}
	}
	if len(path) > 64 || !verifyInclusion(p.Index, cp.Size, leafHash(LeafOf(head)), path, cp.Root) {
		return fail(CheckpointAltered, fmt.Sprintf("chain %s seq %d is not in it", p.Chain, p.Leaf.Seq))
	}
	return head, true
}

func checkpointOf(x *exportCheckpoint) (*Checkpoint, error) {
	at, err := time.Parse(time.RFC3339Nano, x.At)
	if err != nil {
		return nil, err
	}
	cp := &Checkpoint{Seq: x.Seq, At: at, Size: x.Size, KeyID: x.Key}
	if cp.Prev, err = hex.DecodeString(x.Prev); err != nil {
		return nil, err
	}
	if len(cp.Prev) == 0 {
		cp.Prev = nil
	}
	if cp.Root, err = hex.DecodeString(x.Root); err != nil {
		return nil, err
	}
	if cp.Signature, err = hex.DecodeString(x.Signature); err != nil {
		return nil, err
	}
	return cp, nil
}

// entryOf is the entry an exported one stands for, without its sealed contents (their hashes
// are in the header).
func entryOf(x *ExportedEntry) (*Entry, error) {
	h := &x.Header
	if h.V != 1 {
		return nil, fmt.Errorf("an entry of version %d", h.V)
	}
	at, err := time.Parse(time.RFC3339Nano, h.At)
	if err != nil {
		return nil, fmt.Errorf("an entry's time: %w", err)
	}
	e := &Entry{ID: h.ID, Chain: h.Chain, Seq: h.Seq, Kind: h.Kind, At: at, Tenant: h.Tenant, Environment: h.Environment, User: h.User,
		Session: h.Session, Conversation: h.Conversation, Turn: h.Turn, Request: h.Request}
	for _, f := range []struct {
		dst *[]byte
		src string
	}{{&e.Prev, h.Prev}, {&e.Hash, x.Hash}, {&e.PersonalHash, h.Personal}, {&e.EvidenceHash, h.Evidence}} {
		b, err := hex.DecodeString(f.src)
		if err != nil {
			return nil, fmt.Errorf("an entry's hash: %w", err)
		}
		if len(b) > 0 {
			*f.dst = b
		}
	}
	// The header is hashed as it reads: a time written otherwise is another header.
	if e.At.UTC().Format(time.RFC3339Nano) != h.At {
		return nil, fmt.Errorf("an entry's time %q is not in the record's form", h.At)
	}
	return e, nil
}
