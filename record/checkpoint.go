package record

import (
	"context"
	"crypto/ed25519"
	"crypto/sha256"
	"encoding/hex"
	"encoding/json"
	"fmt"
	"time"
)

// LeafOf is the Merkle leaf of a chain's head: the RFC 8785 canonical JSON of
// {"chain", "seq", "hash" (lowercase hex)}.
func LeafOf(h Head) []byte {
	raw, _ := json.Marshal(struct {
		Chain string `json:"chain"`
		Seq   int64  `json:"seq"`
		Hash  string `json:"hash"`
	}{h.Chain, h.Seq, hex.EncodeToString(h.Hash)})
	c, err := canonical(raw)
	if err != nil {
		panic(err)
	}
	return c
}

// Statement is the signed statement of a checkpoint: the RFC 8785 canonical JSON of
// {"v":1, "seq", "at" (RFC 3339, UTC), "prev" (hex SHA-256 of the previous statement, ""
// for the first), "root" (hex), "size", "key" (the signing key's id)}.
func Statement(cp *Checkpoint) []byte {
	raw, _ := json.Marshal(struct {
		V    int    `json:"v"`
		Seq  int64  `json:"seq"`
		At   string `json:"at"`
		Prev string `json:"prev"`
		Root string `json:"root"`
		Size int64  `json:"size"`
		Key  string `json:"key"`
	}{1, cp.Seq, cp.At.UTC().Format(time.RFC3339Nano), hex.EncodeToString(cp.Prev), hex.EncodeToString(cp.Root), cp.Size, cp.KeyID})
	c, err := canonical(raw)
	if err != nil {
		panic(err)
	}
	return c
}

// statementHash is what the next checkpoint's prev is.
func statementHash(cp *Checkpoint) []byte {
	s := sha256.Sum256(Statement(cp))
	return s[:]
}

// PruneStatementBytes is the signed statement of a prune: the RFC 8785 canonical JSON of
// {"v":1, "type":"prune", "id", "at", "tenant", "chain", "through", "head" (hex), "entries",
// "reason", "key"}.
func PruneStatementBytes(p *PruneStatement) []byte {
	raw, _ := json.Marshal(struct {
		V       int    `json:"v"`
		Type    string `json:"type"`
		ID      string `json:"id"`
		At      string `json:"at"`
		Tenant  string `json:"tenant"`
		Chain   string `json:"chain"`
		Through int64  `json:"through"`
		Head    string `json:"head"`
		Entries int64  `json:"entries"`
		Reason  string `json:"reason"`
		Key     string `json:"key"`
	}{1, "prune", p.ID, p.At.UTC().Format(time.RFC3339Nano), p.Tenant, p.Chain, p.Through, hex.EncodeToString(p.Head), p.Entries, p.Reason, p.KeyID})
	c, err := canonical(raw)
	if err != nil {
		panic(err)
	}
	return c
}

// Checkpoint signs a checkpoint over the chains that moved since the last one, and returns
// it; nil when none moved. The recorder makes one every CheckpointEvery and at Close.
func (r *Recorder) Checkpoint(ctx context.Context) (*Checkpoint, error) {
	set := r.keys.current()
	cp, err := r.store.Checkpoint(ctx, func(last *Checkpoint, heads []Head) (*Checkpoint, error) {
		leaves := make([][]byte, len(heads))
		for i, h := range heads {
			leaves[i] = leafHash(LeafOf(h))
		}
		cp := &Checkpoint{Seq: 1, At: microseconds(r.now()), Root: merkleRoot(leaves), Size: int64(len(heads)), KeyID: set.id}
		if last != nil {
			cp.Seq = last.Seq + 1
			cp.Prev = statementHash(last)
		}
		cp.Signature = ed25519.Sign(set.sign, Statement(cp))
		return cp, nil
	})
	if err != nil {
		return nil, fmt.Errorf("record: checkpointing: %w", err)
	}
	if cp != nil {
		r.checkpoints.Add(1)
	}
	return cp, nil
}

// keyByID finds the public key of an id among keys.
func keyByID(keys []ed25519.PublicKey, id string) ed25519.PublicKey {
	for _, k := range keys {
		if KeyID(k) == id {
			return k
		}
	}
	return nil
}
