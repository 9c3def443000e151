package record

import (
	"context"
	"errors"
	"time"
)

// Errors a [Store] returns, wrapped or as they are; test them with [errors.Is].
var (
	// ErrNotFound says that what was asked for (a chain, a data key, an entry) is not stored.
	ErrNotFound = errors.New("record: not found")
	// ErrLegalHold says that a user is under legal hold: their data key cannot be erased nor
	// their conversations pruned.
	ErrLegalHold = errors.New("record: the user is under legal hold")
	// ErrErased says that a user's data key was destroyed: what they said and were told can no
	// longer be read.
	ErrErased = errors.New("record: the user's data key was erased")
	// ErrConflict says that an append found its chain's head moved in a way it cannot follow
	// (a link callback that returned entries the chain cannot take).
	ErrConflict = errors.New("record: conflicting append")
	// ErrClosed says that the Store or the Recorder was closed.
	ErrClosed = errors.New("record: closed")
)

// Kind is what an entry holds.
type Kind string

// The kinds of entries.
const (
	// KindTurn is one turn: what the user said or typed and what they were told (personal).
	KindTurn Kind = "turn"
	// KindAction is a confirmed action's evidence, kept before its backend is called.
	KindAction Kind = "action"
	// KindOutcome is how a recorded action ended.
	KindOutcome Kind = "outcome"
	// KindHandoff is one event of a conversation handed to a person: requested, joined, a
	// message of the person or of the customer, released, rejected or failed (personal).
	KindHandoff Kind = "handoff"
)

// HashSize is the size of every hash the record keeps (SHA-256).
const HashSize = 32

// Entry is one stored entry of a chain, as [Store] keeps it. Every field but Personal and
// Evidence is committed to by Hash (see the package doc for the header); Personal and Evidence
// are committed to through PersonalHash and EvidenceHash, so that they can be erased or pruned
// while the chain still verifies.
type Entry struct {
	// ID is the entry's UUID, unique in the store: appends are idempotent by it.
	ID    string
	Chain string
	// Seq is the entry's place in its chain, from 1 without gaps.
	Seq  int64
	Kind Kind
	// At is the engine's time of the entry, UTC, with microsecond precision: a store returns
	// it exactly as it was given.
	At time.Time

	Tenant, Environment, User, Session, Conversation, Turn, Request string

	// Prev is the hash of the entry before it in its chain (32 zero bytes for seq 1), Hash
	// the entry's own: both HashSize bytes.
	Prev, Hash []byte
	// Personal is the sealed personal content (under the user's data key), nil when none;
	// PersonalHash the SHA-256 of those sealed bytes. A store keeps PersonalHash when
	// Personal is gone.
	Personal, PersonalHash []byte
	// Evidence is the sealed evidence (under the tenant's evidence key), nil when none;
	// EvidenceHash the SHA-256 of those sealed bytes.
	Evidence, EvidenceHash []byte
}

// Head is a chain's last entry: its seq and hash. The head of an empty chain has Seq 0 and
// Hash of HashSize zero bytes.
type Head struct {
	Chain string
	Seq   int64
	Hash  []byte
}

// Chain is one conversation's chain as a store lists it.
type Chain struct {
	// ID is hex(SHA-256(tenant "\x00" environment "\x00" user "\x00" conversation)): see
	// [ChainID].
	ID                                      string
	Tenant, Environment, User, Conversation string
	Head                                    Head
	// FirstAt and LastAt are the earliest and the latest At of the chain's entries (not those
	// of seq 1 and of its head: a clock may step back).
	FirstAt, LastAt time.Time
	// CoveredSeq is the head's seq in the newest checkpoint that names the chain, 0 when none
	// does. Entries past it are not yet covered.
	CoveredSeq int64
}

// ChainQuery selects chains. Chains are listed in (FirstAt, ID) order.
type ChainQuery struct {
	// Tenant and User narrow the list; "" is every tenant (or every user of the tenant).
	Tenant, User string
	// From and To keep the chains with an entry in [From, To): LastAt >= From and
	// FirstAt < To. A zero time is unbounded.
	From, To time.Time
	// EndedBefore, when not zero, keeps the chains whose LastAt is before it.
	EndedBefore time.Time
	// AfterAt and AfterID continue a listing after the chain (AfterAt, AfterID) in
	// (FirstAt, ID) order; AfterID "" starts at the beginning.
	AfterAt time.Time
	AfterID string
	// Limit bounds the list; a store may return fewer, never more. 0 means 100.
	Limit int
}

// Checkpoint is a signed statement that commits, by an RFC 9162 Merkle tree, to the heads
// of the chains that moved since the one before it. Checkpoints form their own chain: Prev
// is the SHA-256 of the previous checkpoint's statement (nil for the first).
type Checkpoint struct {
	Seq       int64
	At        time.Time
	Prev      []byte
	Root      []byte
	Size      int64
	KeyID     string
	Signature []byte
}

// Leaf is one head a checkpoint commits to, at its index in the checkpoint's tree.
type Leaf struct {
	Checkpoint int64
	Index      int64
	Head       Head
}

// PruneStatement is the signed statement that a chain was deleted by retention, so that
// retention is told apart from tampering. It is written in the transaction that deletes.
type PruneStatement struct {
	ID      string
	At      time.Time
	Tenant  string
	Chain   string
	Through int64 // the head's seq when it was deleted
	Head    []byte
	Entries int64 // the entries deleted
	Reason  string
	KeyID   string
	// Signature is the Ed25519 signature of the statement (see the package doc).
	Signature []byte
}

// DataKey is a user's data key as a store keeps it: wrapped, never in clear.
type DataKey struct {
	Tenant, User string
	// KeyID names the tenant wrapping key that wrapped it.
	KeyID string
	// Wrapped is the data key sealed under the tenant wrapping key; nil once erased.
	Wrapped   []byte
	CreatedAt time.Time
	// ErasedAt is when the key was destroyed, zero while it lives.
	ErasedAt time.Time
	// Hold says that the user is under legal hold.
	Hold bool
}

// Store keeps the record: chains of entries, checkpoints, prune statements and users' wrapped
// data keys. Its methods are safe for concurrent use, by several goroutines and by several
// processes sharing the same database (replicas): appends lock one chain, never the store.
//
// Package record/recordtest is its conformance suite. A store never interprets what it keeps:
// hashing, sealing and signing happen in the callbacks package record passes it.
type Store interface {
	// Append adds entries to the end of chain c (whose ID, Tenant, Environment, User and
	// Conversation name it; the chain is created by its first append) in one transaction,
	// holding a lock on that chain alone until it commits or rolls back:
	//
	//  1. it drops from entries those whose ID the store already holds (appends are
	//     idempotent by entry ID: a retry after a lost acknowledgement adds nothing twice);
	//  2. when none is left it returns the chain's head and calls nothing;
	//  3. it calls link once with the locked head and the entries left, in their order;
	//     link sets each one's Seq, Prev and Hash (head.Seq+1, head.Seq+2, … chained from
	//     head.Hash), and may fail, which rolls back and is returned;
	//  4. it inserts them, moves the chain's head to the last one, widens FirstAt/LastAt to
	//     their At, and commits, returning the new head.
	//
	// Either every entry left is stored, or none is. An entry whose (Chain, Seq) is taken
	// fails the append with ErrConflict. The link callback must not call the Store.
	Append(ctx context.Context, c Chain, entries []Entry, link func(head Head, entries []Entry) error) (Head, error)

	// Chain returns one chain, or ErrNotFound.
	Chain(ctx context.Context, id string) (Chain, error)
	// Chains lists chains as q selects them, in (FirstAt, ID) order.
	Chains(ctx context.Context, q ChainQuery) ([]Chain, error)
	// Entries returns at most limit entries of a chain with Seq > after, in Seq order, as they
	// are stored (a store does not check them); none past the end. limit 0 means 100.
	Entries(ctx context.Context, chain string, after int64, limit int) ([]Entry, error)

	// Checkpoint writes the next checkpoint under the store's checkpoint lock (one checkpoint
	// at a time across replicas; appends go on). In one transaction it reads the newest
	// checkpoint (nil when none) and the heads of the chains whose head is past their covered
	// seq, in chain ID order, and, when there is at least one, calls sign with them; sign
	// returns the checkpoint (Seq = last.Seq+1, or 1) and the store inserts it with its leaves
	// (index i for heads[i]) and sets each chain's CoveredSeq to its leaf's seq (never
	// lowering it). With no head to cover it returns nil and calls nothing. sign must not
	// call the Store.
	Checkpoint(ctx context.Context, sign func(last *Checkpoint, heads []Head) (*Checkpoint, error)) (*Checkpoint, error)
	// Checkpoints returns at most limit checkpoints with Seq > after, in Seq order. limit 0
	// means 100.
	Checkpoints(ctx context.Context, after int64, limit int) ([]Checkpoint, error)
	// Leaves returns at most limit leaves of checkpoint seq with Index >= from, in Index
	// order. limit 0 means 1000.
	Leaves(ctx context.Context, seq int64, from int64, limit int) ([]Leaf, error)
	// Coverage returns the leaves that name chain, in checkpoint order: what an export needs to
	// prove the chain against the checkpoints.
	Coverage(ctx context.Context, chain string) ([]Leaf, error)

	// Key returns a user's data key: ErrNotFound when none was made (a hold alone is not a
	// key), ErrErased (with the row, Wrapped nil) once erased.
	Key(ctx context.Context, tenant, user string) (DataKey, error)
	// PutKey stores k unless the user has a live key, and returns the key that is stored
	// (k, or the one another replica made first): two replicas creating a user's key at once
	// agree on one. It replaces an erased key (a user who comes back after erasure gets a new
	// one) and keeps the user's hold.
	PutKey(ctx context.Context, k DataKey) (DataKey, error)
	// EraseKey destroys a user's data key (Wrapped set to nil, ErasedAt to at): ErrLegalHold
	// when the user is held, ErrNotFound when there is no key; erasing an erased key is nil.
	EraseKey(ctx context.Context, tenant, user string, at time.Time) error
	// Hold sets or releases a user's legal hold; it may precede any key (the user's row is
	// made without one).
	Hold(ctx context.Context, tenant, user string, hold bool) error

	// Prune deletes a chain (its entries and its row; never a checkpoint nor a leaf) with the
	// statement that says why, in one transaction holding the chain's lock: it calls sign with
	// the chain as locked and the number of its entries, and stores the statement sign returns
	// in the same transaction. ErrLegalHold when the chain's user is held (sign is not
	// called), ErrNotFound when the chain is gone.
	Prune(ctx context.Context, chain string, sign func(c Chain, entries int64) (*PruneStatement, error)) error
	// Prunes returns the prune statements of a chain ("" for every chain), in ID order, at
	// most limit of them with ID > after ("" from the first). limit 0 means 100.
	Prunes(ctx context.Context, chain string, after string, limit int) ([]PruneStatement, error)

	// Close releases the store's resources. The store is not used after it.
	Close() error
}
