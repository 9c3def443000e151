package demobank

import (
	"container/list"
	"crypto/sha256"
	"net/http"
	"sync"
	"time"
)

// DefaultMaxUsers is how many users a [Bank] keeps when [Options] name no limit.
const DefaultMaxUsers = 10000

// Options configure a [Bank]. The zero value, like a nil *Options, means the defaults.
type Options struct {
	// Now is the bank's clock, which dates the seeded transactions and transfers. Default
	// time.Now; tests pass a fixed clock for deterministic dates.
	Now func() time.Time
	// MaxUsers bounds the users kept in memory (default DefaultMaxUsers). When a new token
	// would exceed it, the user seen least recently is forgotten; that token starts again
	// from the seeded accounts.
	MaxUsers int
}

// Bank is the demo bank's HTTP API, an [http.Handler]. Its state lives in memory, one set of
// accounts per user token. It is safe for concurrent use.
type Bank struct {
	mux      *http.ServeMux
	now      func() time.Time
	maxUsers int

	mu    sync.Mutex
	users map[userKey]*list.Element // of *user
	lru   list.List                 // front: most recently seen
}

// userKey identifies a user by a hash of the token, so that the bank never holds tokens.
type userKey [sha256.Size]byte

func keyOf(token string) userKey { return sha256.Sum256([]byte(token)) }

// New returns a bank with no users yet. opts may be nil.
func New(opts *Options) *Bank {
	if opts == nil {
		opts = &Options{}
	}
	b := &Bank{
		mux:      http.NewServeMux(),
		now:      opts.Now,
		maxUsers: opts.MaxUsers,
		users:    make(map[userKey]*list.Element),
	}
	if b.now == nil {
		b.now = time.Now
	}
	if b.maxUsers <= 0 {
		b.maxUsers = DefaultMaxUsers
	}
	b.mux.HandleFunc("GET /healthz", b.handleHealth)
	b.mux.HandleFunc("GET /balance", b.handleBalance)
	b.mux.HandleFunc("GET /transactions", b.handleTransactions)
	b.mux.HandleFunc("GET /goal", b.handleGoal)
	b.mux.HandleFunc("GET /card", b.handleCard)
	b.mux.HandleFunc("POST /transfers", b.handleTransfer)
	return b
}

// ServeHTTP serves the bank's API.
func (b *Bank) ServeHTTP(w http.ResponseWriter, r *http.Request) { b.mux.ServeHTTP(w, r) }

// Balance returns the balance in dollars of the account ("checking" or "savings") of the user
// with token, or 0 when the bank holds no accounts for the token or knows no such account. It
// creates no user.
func (b *Bank) Balance(token, account string) float64 {
	b.mu.Lock()
	defer b.mu.Unlock()
	e, ok := b.users[keyOf(token)]
	if !ok {
		return 0
	}
	a := e.Value.(*user).account(account)
	if a == nil {
		return 0
	}
	return a.balance.dollars()
}

// Transfers returns how many transfers the bank executed for the user with token; replays of an
// idempotent request and refused transfers do not count.
func (b *Bank) Transfers(token string) int {
	b.mu.Lock()
	defer b.mu.Unlock()
	if e, ok := b.users[keyOf(token)]; ok {
		return e.Value.(*user).transfers
	}
	return 0
}

// user returns the user of key, seeding a new one (and forgetting the least recently seen
// user when the bank is full). b.mu must be held.
func (b *Bank) user(key userKey) *user {
	if e, ok := b.users[key]; ok {
		b.lru.MoveToFront(e)
		return e.Value.(*user)
	}
	for len(b.users) >= b.maxUsers {
		oldest := b.lru.Back()
		delete(b.users, oldest.Value.(*user).key)
		b.lru.Remove(oldest)
	}
	u := newUser(key, b.now())
	b.users[key] = b.lru.PushFront(u)
	return u
}

// authorize returns the key of the request's user, or answers 401 and returns false.
func authorize(w http.ResponseWriter, r *http.Request) (userKey, bool) {
	token := r.Header.Get("X-Token")
	if token == "" {
		writeError(w, http.StatusUnauthorized, "unauthorized", "X-Token is required")
		return userKey{}, false
	}
	return keyOf(token), true
}

func (b *Bank) handleHealth(w http.ResponseWriter, _ *http.Request) {
	writeJSON(w, http.StatusOK, map[string]string{"status": "ok"})
}
