package pgstore

import (
	"context"
	"errors"
	"fmt"
	"strings"

	"github.com/convengine/engine/record"
	"github.com/jackc/pgx/v5"
)

// Prune deletes a chain with the statement that says why, in one transaction holding the
// chain's lock: see [record.Store.Prune].
func (s *Store) Prune(ctx context.Context, chain string, sign func(c record.Chain, entries int64) (*record.PruneStatement, error)) error {
	if err := s.check(); err != nil {
		return err
	}
	err := pgx.BeginFunc(ctx, s.pool, func(tx pgx.Tx) error {
		rows, _ := tx.Query(ctx, "SELECT "+chainColumns+" FROM record_chains WHERE chain = $1 FOR UPDATE", chain)
		c, err := pgx.CollectExactlyOneRow(rows, scanChain)
		if errors.Is(err, pgx.ErrNoRows) {
			return record.ErrNotFound
		} else if err != nil {
			return err
		}
		// FOR SHARE: a hold set meanwhile waits for the prune, or the prune for it.
		var held bool
		err = tx.QueryRow(ctx, `SELECT legal_hold FROM record_keys WHERE tenant = $1 AND user_id = $2 FOR SHARE`,
			c.Tenant, c.User).Scan(&held)
		if err != nil && !errors.Is(err, pgx.ErrNoRows) {
			return err
		}
		if held {
			return record.ErrLegalHold
		}
		var n int64
		if err := tx.QueryRow(ctx, "SELECT count(*) FROM record_entries WHERE chain = $1", chain).Scan(&n); err != nil {
			return err
		}
		st, err := sign(c, n)
		if err != nil {
			return errLink{err}
		}
		b := &pgx.Batch{}
		b.Queue("DELETE FROM record_entries WHERE chain = $1", chain)
		b.Queue("DELETE FROM record_chains WHERE chain = $1", chain)
		b.Queue(`INSERT INTO record_prunes (id, at, tenant, chain, through_seq, head_hash, entries, reason, key_id, signature)
			VALUES ($1, $2, $3, $4, $5, $6, $7, $8, $9, $10)`,
			st.ID, st.At, st.Tenant, st.Chain, st.Through, st.Head, st.Entries, st.Reason, st.KeyID, st.Signature)
		return tx.SendBatch(ctx, b).Close()
	})
	var le errLink
	if errors.As(err, &le) {
		return le.err
	}
	return wrap("pruning chain "+chain, err)
}

// Prunes returns the prune statements of a chain ("" for every chain), in ID order.
func (s *Store) Prunes(ctx context.Context, chain string, after string, limit int) ([]record.PruneStatement, error) {
	if err := s.check(); err != nil {
		return nil, err
	}
	sql := `SELECT id, at, tenant, chain, through_seq, head_hash, entries, reason, key_id, signature
		FROM record_prunes WHERE id > $1 AND chain = $2 ORDER BY id LIMIT $3`
	if chain == "" {
		sql = strings.Replace(sql, "chain = $2", "$2 = ''", 1)
	}
	rows, _ := s.pool.Query(ctx, sql, after, chain, limitOr(limit, 100))
	ps, err := pgx.CollectRows(rows, func(r pgx.CollectableRow) (record.PruneStatement, error) {
		var p record.PruneStatement
		err := r.Scan(&p.ID, &p.At, &p.Tenant, &p.Chain, &p.Through, &p.Head, &p.Entries, &p.Reason, &p.KeyID, &p.Signature)
		p.At = p.At.UTC()
		return p, err
	})
	if err != nil {
		return nil, wrap(fmt.Sprintf("reading the prune statements of chain %q", chain), err)
	}
	return ps, nil
}
