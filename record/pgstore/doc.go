// Package pgstore keeps the conversation record in PostgreSQL: a [record.Store] that replicas
// share.
//
// [Open] connects a pool (github.com/jackc/pgx/v5's pgxpool) and applies the schema's
// migrations, embedded in the package, in order, in one transaction under an advisory lock, so
// that replicas starting together apply each once.
//
// # Concurrency
//
// An append locks its chain's row in record_chains (created by the chain's first append) for
// the length of its transaction, and nothing else: replicas append to different conversations
// at once, and to one conversation in turn. Checkpoints are written one at a time across
// replicas, under a transaction-scoped advisory lock; appends go on meanwhile.
//
// # Errors
//
// An error of a database that cannot be reached (refused or lost connections, a server
// shutting down or starting up, a time-out) wraps [ErrUnavailable]: the operation may succeed
// when retried, and appends are idempotent by entry ID.
package pgstore
