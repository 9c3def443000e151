// Package sqlitestore is a [record.Store] over SQLite (modernc.org/sqlite, pure Go): the
// reference server's embedded record. The database runs in WAL mode with a busy timeout;
// appends take SQLite's write lock (BEGIN IMMEDIATE), so several processes may share one file,
// each append waiting its turn. Its schema migrations are embedded and applied at [Open].
package sqlitestore

import (
	"context"
	"database/sql"
	"embed"
	"errors"
	"fmt"
	"io/fs"
	"net/url"
	"os"
	"path"
	"slices"
	"strings"
	"sync"
	"time"

	"modernc.org/sqlite"
	sqlite3 "modernc.org/sqlite/lib"

	"github.com/convengine/engine/record"
)

//go:embed migrations/*.sql
var migrations embed.FS

// Options configure a Store; nil means defaults.
type Options struct {
	// BusyTimeout is how long a write waits for another writer's lock; 0 means 10 seconds.
	BusyTimeout time.Duration
	// MaxOpenConns bounds the pool; 0 means 4.
	MaxOpenConns int
}

// Store is a [record.Store] over one SQLite file. It is safe for concurrent use.
type Store struct {
	db   *sql.DB
	file string
	// writes takes this process's appends one at a time: SQLite has one writer, and
	// appends that met each other's lock waited in SQLite's busy handler, which sleeps
	// (milliseconds at a time), so that eight at once wrote a few hundred a second.
	writes sync.Mutex
}

var _ record.Store = (*Store)(nil)

// Open opens (creating it with mode 0600 when absent) the SQLite database at path and applies
// the migrations it lacks.
func Open(ctx context.Context, file string, o *Options) (*Store, error) {
	if o == nil {
		o = &Options{}
	}
	busy := o.BusyTimeout
	if busy <= 0 {
		busy = 10 * time.Second
	}
	conns := o.MaxOpenConns
	if conns <= 0 {
		conns = 4
	}
	// SQLite makes its -wal and -shm files with the database's mode: make it 0600 first.
	f, err := os.OpenFile(file, os.O_RDWR|os.O_CREATE, 0o600)
	if err != nil {
		return nil, fmt.Errorf("sqlitestore: opening %s: %w", file, err)
	}
	f.Close()
	q := url.Values{}
	q.Add("_pragma", fmt.Sprintf("busy_timeout(%d)", busy.Milliseconds()))
	q.Add("_pragma", "journal_mode(WAL)")
	// NORMAL: a commit is in the WAL, safe from a process that dies, without an fsync of its
	// own; the WAL is synced at its checkpoints, and at once after an append that holds an
	// action's evidence or outcome (syncWAL), so that those are safe from a power cut too
	// before the action's backend is called. A turn's entries may be lost to a power cut
	// until the next of those, never to a crash of the process.
	q.Add("_pragma", "synchronous(NORMAL)")
	q.Add("_pragma", "foreign_keys(ON)")
	q.Set("_txlock", "immediate")
	db, err := sql.Open("sqlite", "file:"+file+"?"+q.Encode())
	if err != nil {
		return nil, fmt.Errorf("sqlitestore: opening %s: %w", file, err)
	}
	db.SetMaxOpenConns(conns)
	db.SetMaxIdleConns(conns)
	s := &Store{db: db, file: file}
	if err := s.migrate(ctx); err != nil {
		db.Close()
		return nil, err
	}
	return s, nil
}

// migrate applies, in order and each in its transaction, the embedded migrations that the
// record_migrations table does not list.
func (s *Store) migrate(ctx context.Context) error {
	tx, err := s.db.BeginTx(ctx, nil)
	if err != nil {
		return fmt.Errorf("sqlitestore: migrating: %w", err)
	}
	defer tx.Rollback()
	if _, err := tx.ExecContext(ctx, `CREATE TABLE IF NOT EXISTS record_migrations (name TEXT PRIMARY KEY, applied_at TEXT NOT NULL)`); err != nil {
		return fmt.Errorf("sqlitestore: migrating: %w", err)
	}
	names, err := fs.Glob(migrations, "migrations/*.sql")
	if err != nil {
		return err
	}
	slices.Sort(names)
	for _, name := range names {
		base := path.Base(name)
		var n int
		if err := tx.QueryRowContext(ctx, `SELECT count(*) FROM record_migrations WHERE name = ?`, base).Scan(&n); err != nil {
			return fmt.Errorf("sqlitestore: migrating: %w", err)
		}
		if n > 0 {
			continue
		}
		body, err := migrations.ReadFile(name)
		if err != nil {
			return err
		}
		if _, err := tx.ExecContext(ctx, string(body)); err != nil {
			return fmt.Errorf("sqlitestore: applying %s: %w", base, err)
		}
		if _, err := tx.ExecContext(ctx, `INSERT INTO record_migrations (name, applied_at) VALUES (?, ?)`, base, ts(time.Now())); err != nil {
			return fmt.Errorf("sqlitestore: migrating: %w", err)
		}
	}
	if err := tx.Commit(); err != nil {
		return fmt.Errorf("sqlitestore: migrating: %w", err)
	}
	return nil
}

// Close closes the database.
func (s *Store) Close() error { return s.db.Close() }

// DB is the database, for tests and tools that read it (an auditor's queries); writing to it
// bypasses the record's chains.
func (s *Store) DB() *sql.DB { return s.db }

const tsLayout = "2006-01-02T15:04:05.000000000Z"

func ts(t time.Time) string { return t.UTC().Format(tsLayout) }

func parseTS(s string) (time.Time, error) {
	if s == "" {
		return time.Time{}, nil
	}
	return time.Parse(tsLayout, s)
}

func (s *Store) Append(ctx context.Context, c record.Chain, entries []record.Entry, link func(record.Head, []record.Entry) error) (record.Head, error) {
	if err := ctx.Err(); err != nil {
		return record.Head{}, err
	}
	s.writes.Lock()
	defer s.writes.Unlock()
	tx, err := s.db.BeginTx(ctx, nil)
	if err != nil {
		return record.Head{}, fmt.Errorf("sqlitestore: appending: %w", err)
	}
	defer tx.Rollback()
	head := record.Head{Chain: c.ID, Hash: make([]byte, record.HashSize)}
	var firstAt, lastAt string
	err = tx.QueryRowContext(ctx, `SELECT head_seq, head_hash, first_at, last_at FROM record_chains WHERE chain = ?`, c.ID).Scan(&head.Seq, &head.Hash, &firstAt, &lastAt)
	exists := err == nil
	if err != nil && !errors.Is(err, sql.ErrNoRows) {
		return record.Head{}, fmt.Errorf("sqlitestore: appending: %w", err)
	}
	stored, err := storedIDs(ctx, tx, entries)
	if err != nil {
		return record.Head{}, err
	}
	rest := make([]record.Entry, 0, len(entries))
	for _, e := range entries {
		if !stored[e.ID] {
			rest = append(rest, e)
		}
	}
	if len(rest) == 0 {
		return head, tx.Commit()
	}
	if err := link(head, rest); err != nil {
		return record.Head{}, err
	}
	ins, err := tx.PrepareContext(ctx, `INSERT INTO record_entries (id, chain, seq, kind, at, tenant, environment, user_id, session_id,
		conversation_id, turn_id, request_id, prev, hash, personal, personal_hash, evidence, evidence_hash)
		VALUES (?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?)`)
	if err != nil {
		return record.Head{}, fmt.Errorf("sqlitestore: appending: %w", err)
	}
	defer ins.Close()
	for i, e := range rest {
		if e.Chain != c.ID || e.Seq != head.Seq+int64(i)+1 {
			return record.Head{}, fmt.Errorf("sqlitestore: appending seq %d to a chain at %d: %w", e.Seq, head.Seq, record.ErrConflict)
		}
		if _, err := ins.ExecContext(ctx, e.ID, e.Chain, e.Seq, string(e.Kind), ts(e.At), e.Tenant, e.Environment, e.User, e.Session,
			e.Conversation, e.Turn, e.Request, e.Prev, e.Hash, e.Personal, e.PersonalHash, e.Evidence, e.EvidenceHash); err != nil {
			if isConstraint(err) {
				err = record.ErrConflict
			}
			return record.Head{}, fmt.Errorf("sqlitestore: appending: %w", err)
		}
		at := ts(e.At)
		if !exists || at < firstAt {
			firstAt = at
		}
		if !exists || at > lastAt {
			lastAt = at
		}
		exists = true
	}
	last := rest[len(rest)-1]
	if _, err := tx.ExecContext(ctx, `INSERT INTO record_chains (chain, tenant, environment, user_id, conversation_id, head_seq, head_hash, first_at, last_at)
		VALUES (?, ?, ?, ?, ?, ?, ?, ?, ?)
		ON CONFLICT (chain) DO UPDATE SET head_seq = excluded.head_seq, head_hash = excluded.head_hash, first_at = excluded.first_at, last_at = excluded.last_at`,
		c.ID, c.Tenant, c.Environment, c.User, c.Conversation, last.Seq, last.Hash, firstAt, lastAt); err != nil {
		return record.Head{}, fmt.Errorf("sqlitestore: appending: %w", err)
	}
	if err := tx.Commit(); err != nil {
		return record.Head{}, fmt.Errorf("sqlitestore: appending: %w", err)
	}
	for _, e := range rest {
		if e.Kind != record.KindTurn {
			if err := s.syncWAL(); err != nil {
				return record.Head{}, fmt.Errorf("sqlitestore: appending: syncing the WAL: %w", err)
			}
			break
		}
	}
	return record.Head{Chain: c.ID, Seq: last.Seq, Hash: last.Hash}, nil
}

// syncWAL makes what the WAL holds durable: every commit so far, whatever connection made it.
func (s *Store) syncWAL() error {
	f, err := os.OpenFile(s.file+"-wal", os.O_RDWR, 0)
	if errors.Is(err, os.ErrNotExist) {
		return nil // checkpointed into the database, which SQLite synced
	}
	if err != nil {
		return err
	}
	defer f.Close()
	return f.Sync()
}

// storedIDs returns which of the entries' ids the store holds.
func storedIDs(ctx context.Context, tx *sql.Tx, entries []record.Entry) (map[string]bool, error) {
	stored := map[string]bool{}
	for chunk := range slices.Chunk(entries, 400) {
		args := make([]any, len(chunk))
		for i, e := range chunk {
			args[i] = e.ID
		}
		rows, err := tx.QueryContext(ctx, `SELECT id FROM record_entries WHERE id IN (?`+strings.Repeat(",?", len(chunk)-1)+`)`, args...)
		if err != nil {
			return nil, fmt.Errorf("sqlitestore: appending: %w", err)
		}
		for rows.Next() {
			var id string
			if err := rows.Scan(&id); err != nil {
				rows.Close()
				return nil, fmt.Errorf("sqlitestore: appending: %w", err)
			}
			stored[id] = true
		}
		if err := rows.Close(); err != nil {
			return nil, fmt.Errorf("sqlitestore: appending: %w", err)
		}
	}
	return stored, nil
}

func isConstraint(err error) bool {
	var e *sqlite.Error
	return errors.As(err, &e) && e.Code()&0xff == sqlite3.SQLITE_CONSTRAINT
}

const chainCols = `chain, tenant, environment, user_id, conversation_id, head_seq, head_hash, first_at, last_at, covered_seq`

type scanner interface{ Scan(...any) error }

func scanChain(r scanner) (record.Chain, error) {
	var c record.Chain
	var first, last string
	if err := r.Scan(&c.ID, &c.Tenant, &c.Environment, &c.User, &c.Conversation, &c.Head.Seq, &c.Head.Hash, &first, &last, &c.CoveredSeq); err != nil {
		return c, err
	}
	c.Head.Chain = c.ID
	var err error
	if c.FirstAt, err = parseTS(first); err != nil {
		return c, err
	}
	c.LastAt, err = parseTS(last)
	return c, err
}

func (s *Store) Chain(ctx context.Context, id string) (record.Chain, error) {
	c, err := scanChain(s.db.QueryRowContext(ctx, `SELECT `+chainCols+` FROM record_chains WHERE chain = ?`, id))
	if errors.Is(err, sql.ErrNoRows) {
		return c, record.ErrNotFound
	}
	if err != nil {
		return c, fmt.Errorf("sqlitestore: reading a chain: %w", err)
	}
	return c, nil
}

func (s *Store) Chains(ctx context.Context, q record.ChainQuery) ([]record.Chain, error) {
	var where []string
	var args []any
	if q.Tenant != "" {
		where, args = append(where, "tenant = ?"), append(args, q.Tenant)
		if q.User != "" {
			where, args = append(where, "user_id = ?"), append(args, q.User)
		}
	}
	if !q.From.IsZero() {
		where, args = append(where, "last_at >= ?"), append(args, ts(q.From))
	}
	if !q.To.IsZero() {
		where, args = append(where, "first_at < ?"), append(args, ts(q.To))
	}
	if !q.EndedBefore.IsZero() {
		where, args = append(where, "last_at < ?"), append(args, ts(q.EndedBefore))
	}
	if q.AfterID != "" {
		at := ts(q.AfterAt)
		where, args = append(where, "(first_at > ? OR (first_at = ? AND chain > ?))"), append(args, at, at, q.AfterID)
	}
	limit := q.Limit
	if limit <= 0 {
		limit = 100
	}
	query := `SELECT ` + chainCols + ` FROM record_chains`
	if len(where) > 0 {
		query += ` WHERE ` + strings.Join(where, " AND ")
	}
	query += ` ORDER BY first_at, chain LIMIT ?`
	rows, err := s.db.QueryContext(ctx, query, append(args, limit)...)
	if err != nil {
		return nil, fmt.Errorf("sqlitestore: listing chains: %w", err)
	}
	defer rows.Close()
	var out []record.Chain
	for rows.Next() {
		c, err := scanChain(rows)
		if err != nil {
			return nil, fmt.Errorf("sqlitestore: listing chains: %w", err)
		}
		out = append(out, c)
	}
	return out, rows.Err()
}

func (s *Store) Entries(ctx context.Context, chain string, after int64, limit int) ([]record.Entry, error) {
	if limit <= 0 {
		limit = 100
	}
	rows, err := s.db.QueryContext(ctx, `SELECT id, chain, seq, kind, at, tenant, environment, user_id, session_id, conversation_id, turn_id,
		request_id, prev, hash, personal, personal_hash, evidence, evidence_hash
		FROM record_entries WHERE chain = ? AND seq > ? ORDER BY seq LIMIT ?`, chain, after, limit)
	if err != nil {
		return nil, fmt.Errorf("sqlitestore: reading entries: %w", err)
	}
	defer rows.Close()
	var out []record.Entry
	for rows.Next() {
		var e record.Entry
		var kind, at string
		if err := rows.Scan(&e.ID, &e.Chain, &e.Seq, &kind, &at, &e.Tenant, &e.Environment, &e.User, &e.Session, &e.Conversation,
			&e.Turn, &e.Request, &e.Prev, &e.Hash, &e.Personal, &e.PersonalHash, &e.Evidence, &e.EvidenceHash); err != nil {
			return nil, fmt.Errorf("sqlitestore: reading entries: %w", err)
		}
		e.Kind = record.Kind(kind)
		if e.At, err = parseTS(at); err != nil {
			return nil, fmt.Errorf("sqlitestore: reading entries: %w", err)
		}
		out = append(out, e)
	}
	return out, rows.Err()
}

const checkpointCols = `seq, at, prev, root, size, key_id, signature`

func scanCheckpoint(r scanner) (record.Checkpoint, error) {
	var cp record.Checkpoint
	var at string
	if err := r.Scan(&cp.Seq, &at, &cp.Prev, &cp.Root, &cp.Size, &cp.KeyID, &cp.Signature); err != nil {
		return cp, err
	}
	var err error
	cp.At, err = parseTS(at)
	return cp, err
}

func (s *Store) Checkpoint(ctx context.Context, sign func(*record.Checkpoint, []record.Head) (*record.Checkpoint, error)) (*record.Checkpoint, error) {
	tx, err := s.db.BeginTx(ctx, nil)
	if err != nil {
		return nil, fmt.Errorf("sqlitestore: checkpointing: %w", err)
	}
	defer tx.Rollback()
	var last *record.Checkpoint
	cp, err := scanCheckpoint(tx.QueryRowContext(ctx, `SELECT `+checkpointCols+` FROM record_checkpoints ORDER BY seq DESC LIMIT 1`))
	switch {
	case err == nil:
		last = &cp
	case !errors.Is(err, sql.ErrNoRows):
		return nil, fmt.Errorf("sqlitestore: checkpointing: %w", err)
	}
	rows, err := tx.QueryContext(ctx, `SELECT chain, head_seq, head_hash FROM record_chains WHERE head_seq > covered_seq ORDER BY chain`)
	if err != nil {
		return nil, fmt.Errorf("sqlitestore: checkpointing: %w", err)
	}
	var heads []record.Head
	for rows.Next() {
		var h record.Head
		if err := rows.Scan(&h.Chain, &h.Seq, &h.Hash); err != nil {
			rows.Close()
			return nil, fmt.Errorf("sqlitestore: checkpointing: %w", err)
		}
		heads = append(heads, h)
	}
	if err := rows.Close(); err != nil {
		return nil, fmt.Errorf("sqlitestore: checkpointing: %w", err)
	}
	if len(heads) == 0 {
		return nil, nil
	}
	next, err := sign(last, heads)
	if err != nil {
		return nil, err
	}
	if _, err := tx.ExecContext(ctx, `INSERT INTO record_checkpoints (`+checkpointCols+`) VALUES (?, ?, ?, ?, ?, ?, ?)`,
		next.Seq, ts(next.At), next.Prev, next.Root, next.Size, next.KeyID, next.Signature); err != nil {
		return nil, fmt.Errorf("sqlitestore: checkpointing: %w", err)
	}
	ins, err := tx.PrepareContext(ctx, `INSERT INTO record_checkpoint_heads (checkpoint_seq, leaf_index, chain, head_seq, head_hash) VALUES (?, ?, ?, ?, ?)`)
	if err != nil {
		return nil, fmt.Errorf("sqlitestore: checkpointing: %w", err)
	}
	defer ins.Close()
	cover, err := tx.PrepareContext(ctx, `UPDATE record_chains SET covered_seq = ? WHERE chain = ? AND covered_seq < ?`)
	if err != nil {
		return nil, fmt.Errorf("sqlitestore: checkpointing: %w", err)
	}
	defer cover.Close()
	for i, h := range heads {
		if _, err := ins.ExecContext(ctx, next.Seq, i, h.Chain, h.Seq, h.Hash); err != nil {
			return nil, fmt.Errorf("sqlitestore: checkpointing: %w", err)
		}
		if _, err := cover.ExecContext(ctx, h.Seq, h.Chain, h.Seq); err != nil {
			return nil, fmt.Errorf("sqlitestore: checkpointing: %w", err)
		}
	}
	if err := tx.Commit(); err != nil {
		return nil, fmt.Errorf("sqlitestore: checkpointing: %w", err)
	}
	return next, nil
}

func (s *Store) Checkpoints(ctx context.Context, after int64, limit int) ([]record.Checkpoint, error) {
	if limit <= 0 {
		limit = 100
	}
	rows, err := s.db.QueryContext(ctx, `SELECT `+checkpointCols+` FROM record_checkpoints WHERE seq > ? ORDER BY seq LIMIT ?`, after, limit)
	if err != nil {
		return nil, fmt.Errorf("sqlitestore: reading checkpoints: %w", err)
	}
	defer rows.Close()
	var out []record.Checkpoint
	for rows.Next() {
		cp, err := scanCheckpoint(rows)
		if err != nil {
			return nil, fmt.Errorf("sqlitestore: reading checkpoints: %w", err)
		}
		out = append(out, cp)
	}
	return out, rows.Err()
}

func (s *Store) leaves(ctx context.Context, query string, args ...any) ([]record.Leaf, error) {
	rows, err := s.db.QueryContext(ctx, query, args...)
	if err != nil {
		return nil, fmt.Errorf("sqlitestore: reading leaves: %w", err)
	}
	defer rows.Close()
	var out []record.Leaf
	for rows.Next() {
		var l record.Leaf
		if err := rows.Scan(&l.Checkpoint, &l.Index, &l.Head.Chain, &l.Head.Seq, &l.Head.Hash); err != nil {
			return nil, fmt.Errorf("sqlitestore: reading leaves: %w", err)
		}
		out = append(out, l)
	}
	return out, rows.Err()
}

func (s *Store) Leaves(ctx context.Context, seq, from int64, limit int) ([]record.Leaf, error) {
	if limit <= 0 {
		limit = 1000
	}
	return s.leaves(ctx, `SELECT checkpoint_seq, leaf_index, chain, head_seq, head_hash FROM record_checkpoint_heads
		WHERE checkpoint_seq = ? AND leaf_index >= ? ORDER BY leaf_index LIMIT ?`, seq, from, limit)
}

func (s *Store) Coverage(ctx context.Context, chain string) ([]record.Leaf, error) {
	return s.leaves(ctx, `SELECT checkpoint_seq, leaf_index, chain, head_seq, head_hash FROM record_checkpoint_heads
		WHERE chain = ? ORDER BY checkpoint_seq`, chain)
}

func (s *Store) Key(ctx context.Context, tenant, user string) (record.DataKey, error) {
	k := record.DataKey{Tenant: tenant, User: user}
	var created string
	var erased sql.NullString
	err := s.db.QueryRowContext(ctx, `SELECT key_id, wrapped, created_at, erased_at, legal_hold FROM record_keys WHERE tenant = ? AND user_id = ?`,
		tenant, user).Scan(&k.KeyID, &k.Wrapped, &created, &erased, &k.Hold)
	if errors.Is(err, sql.ErrNoRows) {
		return k, record.ErrNotFound
	}
	if err != nil {
		return k, fmt.Errorf("sqlitestore: reading a key: %w", err)
	}
	if k.CreatedAt, err = parseTS(created); err != nil {
		return k, fmt.Errorf("sqlitestore: reading a key: %w", err)
	}
	if erased.Valid {
		if k.ErasedAt, err = parseTS(erased.String); err != nil {
			return k, fmt.Errorf("sqlitestore: reading a key: %w", err)
		}
		return k, record.ErrErased
	}
	if k.Wrapped == nil {
		return k, record.ErrNotFound // a hold alone
	}
	return k, nil
}

func (s *Store) PutKey(ctx context.Context, k record.DataKey) (record.DataKey, error) {
	_, err := s.db.ExecContext(ctx, `INSERT INTO record_keys (tenant, user_id, key_id, wrapped, created_at) VALUES (?, ?, ?, ?, ?)
		ON CONFLICT (tenant, user_id) DO UPDATE SET key_id = excluded.key_id, wrapped = excluded.wrapped, created_at = excluded.created_at, erased_at = NULL
		WHERE record_keys.wrapped IS NULL`, k.Tenant, k.User, k.KeyID, k.Wrapped, ts(k.CreatedAt))
	if err != nil {
		return record.DataKey{}, fmt.Errorf("sqlitestore: storing a key: %w", err)
	}
	return s.Key(ctx, k.Tenant, k.User)
}

func (s *Store) EraseKey(ctx context.Context, tenant, user string, at time.Time) error {
	tx, err := s.db.BeginTx(ctx, nil)
	if err != nil {
		return fmt.Errorf("sqlitestore: erasing a key: %w", err)
	}
	defer tx.Rollback()
	var hold, live bool
	var erased sql.NullString
	err = tx.QueryRowContext(ctx, `SELECT legal_hold, wrapped IS NOT NULL, erased_at FROM record_keys WHERE tenant = ? AND user_id = ?`, tenant, user).Scan(&hold, &live, &erased)
	switch {
	case errors.Is(err, sql.ErrNoRows), err == nil && !live && !erased.Valid:
		return record.ErrNotFound
	case err != nil:
		return fmt.Errorf("sqlitestore: erasing a key: %w", err)
	case hold:
		return record.ErrLegalHold
	case !live:
		return nil
	}
	if _, err := tx.ExecContext(ctx, `UPDATE record_keys SET wrapped = NULL, erased_at = ? WHERE tenant = ? AND user_id = ?`, ts(at), tenant, user); err != nil {
		return fmt.Errorf("sqlitestore: erasing a key: %w", err)
	}
	if err := tx.Commit(); err != nil {
		return fmt.Errorf("sqlitestore: erasing a key: %w", err)
	}
	return nil
}

func (s *Store) Hold(ctx context.Context, tenant, user string, hold bool) error {
	_, err := s.db.ExecContext(ctx, `INSERT INTO record_keys (tenant, user_id, legal_hold) VALUES (?, ?, ?)
		ON CONFLICT (tenant, user_id) DO UPDATE SET legal_hold = excluded.legal_hold`, tenant, user, hold)
	if err != nil {
		return fmt.Errorf("sqlitestore: setting a hold: %w", err)
	}
	return nil
}

func (s *Store) Prune(ctx context.Context, chain string, sign func(record.Chain, int64) (*record.PruneStatement, error)) error {
	tx, err := s.db.BeginTx(ctx, nil)
	if err != nil {
		return fmt.Errorf("sqlitestore: pruning: %w", err)
	}
	defer tx.Rollback()
	c, err := scanChain(tx.QueryRowContext(ctx, `SELECT `+chainCols+` FROM record_chains WHERE chain = ?`, chain))
	if errors.Is(err, sql.ErrNoRows) {
		return record.ErrNotFound
	}
	if err != nil {
		return fmt.Errorf("sqlitestore: pruning: %w", err)
	}
	var hold bool
	err = tx.QueryRowContext(ctx, `SELECT legal_hold FROM record_keys WHERE tenant = ? AND user_id = ?`, c.Tenant, c.User).Scan(&hold)
	if err != nil && !errors.Is(err, sql.ErrNoRows) {
		return fmt.Errorf("sqlitestore: pruning: %w", err)
	}
	if hold {
		return record.ErrLegalHold
	}
	var n int64
	if err := tx.QueryRowContext(ctx, `SELECT count(*) FROM record_entries WHERE chain = ?`, chain).Scan(&n); err != nil {
		return fmt.Errorf("sqlitestore: pruning: %w", err)
	}
	st, err := sign(c, n)
	if err != nil {
		return err
	}
	if _, err := tx.ExecContext(ctx, `INSERT INTO record_prunes (id, at, tenant, chain, through_seq, head_hash, entries, reason, key_id, signature)
		VALUES (?, ?, ?, ?, ?, ?, ?, ?, ?, ?)`, st.ID, ts(st.At), st.Tenant, st.Chain, st.Through, st.Head, st.Entries, st.Reason, st.KeyID, st.Signature); err != nil {
		return fmt.Errorf("sqlitestore: pruning: %w", err)
	}
	if _, err := tx.ExecContext(ctx, `DELETE FROM record_entries WHERE chain = ?`, chain); err != nil {
		return fmt.Errorf("sqlitestore: pruning: %w", err)
	}
	if _, err := tx.ExecContext(ctx, `DELETE FROM record_chains WHERE chain = ?`, chain); err != nil {
		return fmt.Errorf("sqlitestore: pruning: %w", err)
	}
	if err := tx.Commit(); err != nil {
		return fmt.Errorf("sqlitestore: pruning: %w", err)
	}
	return nil
}

func (s *Store) Prunes(ctx context.Context, chain, after string, limit int) ([]record.PruneStatement, error) {
	if limit <= 0 {
		limit = 100
	}
	rows, err := s.db.QueryContext(ctx, `SELECT id, at, tenant, chain, through_seq, head_hash, entries, reason, key_id, signature FROM record_prunes
		WHERE (? = '' OR chain = ?) AND id > ? ORDER BY id LIMIT ?`, chain, chain, after, limit)
	if err != nil {
		return nil, fmt.Errorf("sqlitestore: reading prunes: %w", err)
	}
	defer rows.Close()
	var out []record.PruneStatement
	for rows.Next() {
		var p record.PruneStatement
		var at string
		if err := rows.Scan(&p.ID, &at, &p.Tenant, &p.Chain, &p.Through, &p.Head, &p.Entries, &p.Reason, &p.KeyID, &p.Signature); err != nil {
			return nil, fmt.Errorf("sqlitestore: reading prunes: %w", err)
		}
		if p.At, err = parseTS(at); err != nil {
			return nil, fmt.Errorf("sqlitestore: reading prunes: %w", err)
		}
		out = append(out, p)
	}
	return out, rows.Err()
}
