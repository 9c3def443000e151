package pgstore

import (
	"context"
	"errors"

	"github.com/convengine/engine/record"
	"github.com/jackc/pgx/v5"
)

// checkpointLock is the advisory lock key that makes checkpoints one at a time across
// replicas; appends never take it.
const checkpointLock = 0x7265636f72646370 // "recordcp"

// Checkpoint writes the next checkpoint under the checkpoint lock: see
// [record.Store.Checkpoint].
func (s *Store) Checkpoint(ctx context.Context, sign func(last *record.Checkpoint, heads []record.Head) (*record.Checkpoint, error)) (*record.Checkpoint, error) {
	if err := s.check(); err != nil {
		return nil, err
	}
	var written *record.Checkpoint
	err := pgx.BeginFunc(ctx, s.pool, func(tx pgx.Tx) error {
		if _, err := tx.Exec(ctx, "SELECT pg_advisory_xact_lock($1)", int64(checkpointLock)); err != nil {
			return err
		}
		rows, _ := tx.Query(ctx, "SELECT "+checkpointColumns+" FROM record_checkpoints ORDER BY seq DESC LIMIT 1")
		last, err := pgx.CollectExactlyOneRow(rows, scanCheckpoint)
		var lastp *record.Checkpoint
		switch {
		case err == nil:
			lastp = &last
		case !errors.Is(err, pgx.ErrNoRows):
			return err
		}
		rows, _ = tx.Query(ctx, `SELECT chain, head_seq, head_hash FROM record_chains
			WHERE head_seq > covered_seq ORDER BY chain`)
		heads, err := pgx.CollectRows(rows, func(r pgx.CollectableRow) (record.Head, error) {
			var h record.Head
			return h, r.Scan(&h.Chain, &h.Seq, &h.Hash)
		})
		if err != nil || len(heads) == 0 {
			return err
		}
		cp, err := sign(lastp, heads)
		if err != nil {
			return errLink{err}
		}
		if _, err := tx.Exec(ctx, "INSERT INTO record_checkpoints ("+checkpointColumns+`)
			VALUES ($1, $2, $3, $4, $5, $6, $7)`,
			cp.Seq, cp.At, cp.Prev, cp.Root, cp.Size, cp.KeyID, cp.Signature); err != nil {
			return err
		}
		// COPY, since a checkpoint after a busy minute names many chains.
		if _, err := tx.CopyFrom(ctx, pgx.Identifier{"record_checkpoint_heads"},
			[]string{"checkpoint_seq", "leaf_index", "chain", "head_seq", "head_hash"},
			pgx.CopyFromSlice(len(heads), func(i int) ([]any, error) {
				return []any{cp.Seq, int64(i), heads[i].Chain, heads[i].Seq, heads[i].Hash}, nil
			})); err != nil {
			return err
		}
		chains, seqs := make([]string, len(heads)), make([]int64, len(heads))
		for i, h := range heads {
			chains[i], seqs[i] = h.Chain, h.Seq
		}
		if _, err := tx.Exec(ctx, `UPDATE record_chains c SET covered_seq = greatest(c.covered_seq, h.seq)
			FROM unnest($1::text[], $2::bigint[]) AS h(chain, seq) WHERE c.chain = h.chain`,
			chains, seqs); err != nil {
			return err
		}
		written = cp
		return nil
	})
	var le errLink
	if errors.As(err, &le) {
		return nil, le.err
	}
	return written, wrap("writing a checkpoint", err)
}

const checkpointColumns = "seq, at, prev, root, size, key_id, signature"

// Checkpoints returns at most limit checkpoints with Seq > after, in Seq order.
func (s *Store) Checkpoints(ctx context.Context, after int64, limit int) ([]record.Checkpoint, error) {
	if err := s.check(); err != nil {
		return nil, err
	}
	rows, _ := s.pool.Query(ctx, "SELECT "+checkpointColumns+` FROM record_checkpoints
		WHERE seq > $1 ORDER BY seq LIMIT $2`, after, limitOr(limit, 100))
	cps, err := pgx.CollectRows(rows, scanCheckpoint)
	return cps, wrap("reading checkpoints", err)
}

// Leaves returns at most limit leaves of checkpoint seq with Index >= from, in Index order.
func (s *Store) Leaves(ctx context.Context, seq int64, from int64, limit int) ([]record.Leaf, error) {
	if err := s.check(); err != nil {
		return nil, err
	}
	rows, _ := s.pool.Query(ctx, `SELECT checkpoint_seq, leaf_index, chain, head_seq, head_hash
		FROM record_checkpoint_heads WHERE checkpoint_seq = $1 AND leaf_index >= $2
		ORDER BY leaf_index LIMIT $3`, seq, from, limitOr(limit, 1000))
	ls, err := pgx.CollectRows(rows, scanLeaf)
	return ls, wrap("reading the leaves of a checkpoint", err)
}

// Coverage returns the leaves that name chain, in checkpoint order.
func (s *Store) Coverage(ctx context.Context, chain string) ([]record.Leaf, error) {
	if err := s.check(); err != nil {
		return nil, err
	}
	rows, _ := s.pool.Query(ctx, `SELECT checkpoint_seq, leaf_index, chain, head_seq, head_hash
		FROM record_checkpoint_heads WHERE chain = $1 ORDER BY checkpoint_seq`, chain)
	ls, err := pgx.CollectRows(rows, scanLeaf)
	return ls, wrap("reading the checkpoints of chain "+chain, err)
}

func scanCheckpoint(r pgx.CollectableRow) (record.Checkpoint, error) {
	var c record.Checkpoint
	err := r.Scan(&c.Seq, &c.At, &c.Prev, &c.Root, &c.Size, &c.KeyID, &c.Signature)
	c.At = c.At.UTC()
	return c, err
}

func scanLeaf(r pgx.CollectableRow) (record.Leaf, error) {
	var l record.Leaf
	return l, r.Scan(&l.Checkpoint, &l.Index, &l.Head.Chain, &l.Head.Seq, &l.Head.Hash)
}
