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
	// would exceed it, the user seen least recently who has no enrolled device is forgotten;
	// that token starts again from the seeded accounts. A user with an enrolled device is never
	// forgotten to make room: when every user kept has one, a new token is refused (503).
	MaxUsers int
	// RequireDeviceProof makes the bank run a transfer only with a device proof that it
	// verifies itself against a device it enrolled for the user (POST /devices): the proof
	// forwarded by the engine as Engine-Action-Proof, the device's public key, and the action
	// token the proof covers, whose argument digest must be that of the transfer's body.
	RequireDeviceProof bool
	// SendCode delivers a one-time enrolment code to the user, as a bank's SMS or app would.
	// user is a short label of the user (never the token). Without it, no code can be sent and
	// POST /devices/code answers 501.
	SendCode func(user, code string)
	// PasskeyRPID and PasskeyOrigins are the relying party id and page origins of the passkey
	// assertions the bank accepts as device proofs.
	PasskeyRPID    string
	PasskeyOrigins []string
	// MaxProofAge is how old a key proof's iat may be (default 2 minutes).
	MaxProofAge time.Duration
}

// Bank is the demo bank's HTTP API, an [http.Handler]. Its state lives in memory, one set of
// accounts per user token. It is safe for concurrent use.
type Bank struct {
	mux      *http.ServeMux
	now      func() time.Time
	maxUsers int
	opts     Options

	mu    sync.Mutex
	users map[userKey]*user
	lru   list.List // of *user without an enrolled device; front: most recently seen
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
		opts:     *opts,
		users:    make(map[userKey]*user),
	}
	if b.opts.MaxProofAge <= 0 {
		b.opts.MaxProofAge = defaultMaxProofAge
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
	b.mux.HandleFunc("POST /devices/code", b.handleDeviceCode)
	b.mux.HandleFunc("POST /devices", b.handleEnrol)
	b.mux.HandleFunc("POST /devices/check", b.handleDeviceCheck)
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
	u, ok := b.users[keyOf(token)]
	if !ok {
		return 0
	}
	a := u.account(account)
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
	if u, ok := b.users[keyOf(token)]; ok {
		return u.transfers
	}
	return 0
}

// user returns the user of key, seeding a new one, and forgetting the least recently seen
// user without an enrolled device when the bank is full. It returns nil when the bank is full
// of users with enrolled devices. b.mu must be held.
func (b *Bank) user(key userKey) *user {
	if u, ok := b.users[key]; ok {
		if u.elem != nil {
			b.lru.MoveToFront(u.elem)
		}
		return u
	}
	for len(b.users) >= b.maxUsers {
		oldest := b.lru.Back()
		if oldest == nil {
			return nil
		}
		delete(b.users, oldest.Value.(*user).key)
		b.lru.Remove(oldest)
	}
	u := newUser(key, b.now())
	u.elem = b.lru.PushFront(u)
	b.users[key] = u
	return u
}

// keep makes u a user the bank never forgets to make room: one with an enrolled device.
// b.mu must be held.
func (b *Bank) keep(u *user) {
	if u.elem != nil {
		b.lru.Remove(u.elem)
		u.elem = nil
	}
}

// withUser runs f with the user of key under the bank's lock, or answers 503 when the bank
// cannot take another user.
func (b *Bank) withUser(w http.ResponseWriter, key userKey, f func(u *user)) bool {
	b.mu.Lock()
	defer b.mu.Unlock()
	u := b.user(key)
	if u == nil {
		writeError(w, http.StatusServiceUnavailable, "bank_full", "The bank cannot take new customers right now. Try again later.")
		return false
	}
	f(u)
	return true
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
