package pgstore

import (
	"context"
	"errors"
	"fmt"
	"slices"

	"github.com/convengine/engine/record"
	"github.com/jackc/pgx/v5"
	"github.com/jackc/pgx/v5/pgconn"
)

// Append adds entries to the end of chain c, locking the chain's row alone: see
// [record.Store.Append].
func (s *Store) Append(ctx context.Context, c record.Chain, entries []record.Entry, link func(head record.Head, entries []record.Entry) error) (record.Head, error) {
	if err := s.check(); err != nil {
		return record.Head{}, err
	}
	ids := make([]string, len(entries))
	for i, e := range entries {
		ids[i] = e.ID
	}
	var head record.Head
	err := func() error {
		// One round trip: the transaction begun, the chain's row made if new, then locked,
		// then the entries already kept, read once the lock is held so that a concurrent
		// append of the same entries has committed.
		b := &pgx.Batch{}
		b.BeginTx(pgx.TxOptions{})
		b.Queue(`INSERT INTO record_chains (chain, tenant, environment, user_id, conversation_id, head_hash)
			VALUES ($1, $2, $3, $4, $5, $6) ON CONFLICT (chain) DO NOTHING`,
			c.ID, c.Tenant, c.Environment, c.User, c.Conversation, make([]byte, record.HashSize))
		b.Queue("SELECT head_seq, head_hash FROM record_chains WHERE chain = $1 FOR UPDATE", c.ID)
		b.Queue("SELECT id FROM record_entries WHERE id = ANY($1)", ids)
		res := s.pool.SendBatch(ctx, b)
		tx := res.Tx()
		defer tx.Rollback(context.WithoutCancel(ctx))
		for range 2 { // begin, and the chain's row
			if _, err := res.Exec(); err != nil {
				res.Close()
				return err
			}
		}
		head.Chain = c.ID
		if err := res.QueryRow().Scan(&head.Seq, &head.Hash); err != nil {
			res.Close()
			return err
		}
		rows, _ := res.Query()
		kept, err := pgx.CollectRows(rows, pgx.RowTo[string])
		if err != nil {
			res.Close()
			return err
		}
		if err := res.Close(); err != nil {
			return err
		}

		left := make([]record.Entry, 0, len(entries))
		for _, e := range entries {
			if !slices.Contains(kept, e.ID) {
				left = append(left, e)
			}
		}
		if len(left) == 0 {
			return errNothingLeft
		}
		if err := link(head, left); err != nil {
			return errLink{err}
		}

		b = &pgx.Batch{}
		first, last := left[0].At, left[0].At
		for _, e := range left {
			b.Queue(`INSERT INTO record_entries (chain, seq, id, kind, at, tenant, environment, user_id,
				session_id, conversation_id, turn_id, request_id, prev, hash, personal, personal_hash,
				evidence, evidence_hash)
				VALUES ($1, $2, $3, $4, $5, $6, $7, $8, $9, $10, $11, $12, $13, $14, $15, $16, $17, $18)`,
				c.ID, e.Seq, e.ID, string(e.Kind), e.At, e.Tenant, e.Environment, e.User,
				e.Session, e.Conversation, e.Turn, e.Request, e.Prev, e.Hash, e.Personal, e.PersonalHash,
				e.Evidence, e.EvidenceHash)
			first, last = minTime(first, e.At), maxTime(last, e.At)
		}
		end := left[len(left)-1]
		b.Queue(`UPDATE record_chains SET head_seq = $2, head_hash = $3,
			first_at = least(first_at, $4), last_at = greatest(last_at, $5) WHERE chain = $1`,
			c.ID, end.Seq, end.Hash, first, last)
		if err := tx.SendBatch(ctx, b).Close(); err != nil {
			return err
		}
		if err := tx.Commit(ctx); err != nil {
			return err
		}
		head.Seq, head.Hash = end.Seq, end.Hash
		return nil
	}()
	var le errLink
	switch {
	case err == nil, errors.Is(err, errNothingLeft):
		return head, nil
	case errors.As(err, &le):
		return record.Head{}, le.err
	case uniqueViolation(err):
		return record.Head{}, fmt.Errorf("appending to chain %s: %w: %w", c.ID, record.ErrConflict, err)
	}
	return record.Head{}, wrap("appending to chain "+c.ID, err)
}

// errNothingLeft rolls back an append whose entries were all kept already.
var errNothingLeft = errors.New("nothing left to append")

// errLink carries the link callback's error out of the transaction as it was.
type errLink struct{ err error }

func (e errLink) Error() string { return e.err.Error() }

func uniqueViolation(err error) bool {
	var pgErr *pgconn.PgError
	return errors.As(err, &pgErr) && pgErr.Code == "23505"
}
