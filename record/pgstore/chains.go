package pgstore

import (
	"context"
	"errors"
	"fmt"
	"strings"
	"time"

	"github.com/convengine/engine/record"
	"github.com/jackc/pgx/v5"
)

const chainColumns = `chain, tenant, environment, user_id, conversation_id, head_seq, head_hash,
	first_at, last_at, covered_seq`

// Chain returns one chain, or record.ErrNotFound.
func (s *Store) Chain(ctx context.Context, id string) (record.Chain, error) {
	if err := s.check(); err != nil {
		return record.Chain{}, err
	}
	rows, _ := s.pool.Query(ctx, "SELECT "+chainColumns+" FROM record_chains WHERE chain = $1", id)
	c, err := pgx.CollectExactlyOneRow(rows, scanChain)
	if errors.Is(err, pgx.ErrNoRows) {
		return record.Chain{}, fmt.Errorf("chain %s: %w", id, record.ErrNotFound)
	}
	return c, wrap("reading chain "+id, err)
}

// Chains lists chains as q selects them, in (FirstAt, ID) order, through the index of the
// tenant's, the user's or every chain by time.
func (s *Store) Chains(ctx context.Context, q record.ChainQuery) ([]record.Chain, error) {
	if err := s.check(); err != nil {
		return nil, err
	}
	var where []string
	var args []any
	cond := func(sql string, v any) {
		args = append(args, v)
		where = append(where, fmt.Sprintf(sql, len(args)))
	}
	if q.Tenant != "" {
		cond("tenant = $%d", q.Tenant)
	}
	if q.User != "" {
		cond("user_id = $%d", q.User)
	}
	if !q.From.IsZero() {
		cond("last_at >= $%d", q.From)
	}
	if !q.To.IsZero() {
		cond("first_at < $%d", q.To)
	}
	if !q.EndedBefore.IsZero() {
		cond("last_at < $%d", q.EndedBefore)
	}
	if q.AfterID != "" {
		args = append(args, q.AfterAt, q.AfterID)
		where = append(where, fmt.Sprintf("(first_at, chain) > ($%d, $%d)", len(args)-1, len(args)))
	}
	sql := "SELECT " + chainColumns + " FROM record_chains"
	if len(where) > 0 {
		sql += " WHERE " + strings.Join(where, " AND ")
	}
	args = append(args, limitOr(q.Limit, 100))
	sql += fmt.Sprintf(" ORDER BY first_at, chain LIMIT $%d", len(args))
	rows, _ := s.pool.Query(ctx, sql, args...)
	cs, err := pgx.CollectRows(rows, scanChain)
	return cs, wrap("listing chains", err)
}

// Entries returns at most limit entries of a chain with Seq > after, in Seq order.
func (s *Store) Entries(ctx context.Context, chain string, after int64, limit int) ([]record.Entry, error) {
	if err := s.check(); err != nil {
		return nil, err
	}
	rows, _ := s.pool.Query(ctx, `SELECT id, chain, seq, kind, at, tenant, environment, user_id,
		session_id, conversation_id, turn_id, request_id, prev, hash, personal, personal_hash,
		evidence, evidence_hash
		FROM record_entries WHERE chain = $1 AND seq > $2 ORDER BY seq LIMIT $3`,
		chain, after, limitOr(limit, 100))
	es, err := pgx.CollectRows(rows, func(r pgx.CollectableRow) (record.Entry, error) {
		var e record.Entry
		err := r.Scan(&e.ID, &e.Chain, &e.Seq, &e.Kind, &e.At, &e.Tenant, &e.Environment, &e.User,
			&e.Session, &e.Conversation, &e.Turn, &e.Request, &e.Prev, &e.Hash, &e.Personal,
			&e.PersonalHash, &e.Evidence, &e.EvidenceHash)
		e.At = e.At.UTC()
		return e, err
	})
	return es, wrap("reading the entries of chain "+chain, err)
}

func scanChain(r pgx.CollectableRow) (record.Chain, error) {
	var c record.Chain
	var first, last *time.Time
	err := r.Scan(&c.ID, &c.Tenant, &c.Environment, &c.User, &c.Conversation, &c.Head.Seq,
		&c.Head.Hash, &first, &last, &c.CoveredSeq)
	c.Head.Chain = c.ID
	if first != nil {
		c.FirstAt = first.UTC()
	}
	if last != nil {
		c.LastAt = last.UTC()
	}
	return c, err
}

func limitOr(limit, def int) int {
	if limit <= 0 {
		return def
	}
	return limit
}

func minTime(a, b time.Time) time.Time {
	if b.Before(a) {
		return b
	}
	return a
}

func maxTime(a, b time.Time) time.Time {
	if b.After(a) {
		return b
	}
	return a
}
