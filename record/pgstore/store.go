package pgstore

import (
	"context"
	"strings"
	"sync/atomic"

	"github.com/convengine/engine/record"
	"github.com/jackc/pgx/v5/pgxpool"
)

// Store is a [record.Store] over a PostgreSQL database. Its methods are safe for concurrent
// use, and several Stores (replicas) may share one database.
type Store struct {
	pool   *pgxpool.Pool
	closed atomic.Bool
}

var _ record.Store = (*Store)(nil)

// defaultMaxConns is the pool's size when the URL does not set pool_max_conns.
const defaultMaxConns = 16

// Open connects to the database of url (a postgres:// URL or a key=value string, as pgx
// reads them; pool_max_conns, 16 by default, and the other pool_ settings bound the pool) and brings its
// schema up to date. The Store owns the pool: [Store.Close] closes it.
func Open(ctx context.Context, url string) (*Store, error) {
	cfg, err := pgxpool.ParseConfig(url)
	if err != nil {
		return nil, wrap("pgstore: reading the database URL", err)
	}
	if !strings.Contains(url, "pool_max_conns") {
		// pgx's default (the CPUs, at least 4) held the Recorder's writers, which append to
		// several conversations at once, each a transaction, to four at a time.
		cfg.MaxConns = defaultMaxConns
	}
	pool, err := pgxpool.NewWithConfig(ctx, cfg)
	if err != nil {
		return nil, wrap("pgstore: connecting", err)
	}
	if err := migrate(ctx, pool); err != nil {
		pool.Close()
		return nil, err
	}
	return &Store{pool: pool}, nil
}

// Close closes the pool, waiting for the connections in use to be given back. Calls after it
// return [record.ErrClosed].
func (s *Store) Close() error {
	if s.closed.CompareAndSwap(false, true) {
		s.pool.Close()
	}
	return nil
}

// check returns record.ErrClosed once the Store is closed.
func (s *Store) check() error {
	if s.closed.Load() {
		return record.ErrClosed
	}
	return nil
}
