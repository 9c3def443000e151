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
	// would exceed it, the user seen least recently who holds nothing but the seeded accounts
	// is forgotten; that token starts again from them. A user with an enrolled device is never
	// forgotten to make room, nor is one whose enrolment state protects them: a pending code,
	// codes sent in the last 10 minutes, wrong codes of the last 15 minutes (a lock). When every
	// user kept is one of those, a new token is refused (503 bank_full, with Retry-After when a
	// guard will lapse).
	MaxUsers int
	// MaxCodesPerAddress bounds the enrolment codes sent for one client address in 10 minutes
	// (default DefaultMaxCodesPerAddress), beside the bound of 5 per user; past it, POST
	// /devices/code answers 429 too_many_codes_here with Retry-After. It keeps one client, with
	// as many tokens as it likes, from sending SMS to many phones or filling the bank with users
	// it may not forget.
	MaxCodesPerAddress int
	// ClientAddress names the client of a request for MaxCodesPerAddress. Default
	// RemoteAddress, the host of r.RemoteAddr. A bank behind a proxy must return the client
	// address its trusted proxy gives (the address it appended to X-Forwarded-For), never one
	// the client wrote: the proxy's own address would put every client under one bound.
	ClientAddress func(r *http.Request) string
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
	// Phones are the callers the bank verifies on its phone line (POST /phone/verify).
	Phones []Phone
}

// Bank is the demo bank's HTTP API, an [http.Handler]. Its state lives in memory, one set of
// accounts per user token. It is safe for concurrent use.
type Bank struct {
	mux      *http.ServeMux
	now      func() time.Time
	maxUsers int
	opts     Options

	mu      sync.Mutex
	users   map[userKey]*user
	lru     list.List            // of the *user the bank may forget; front: most recently seen
	guarded guardedHeap          // of the *user it may not forget until their guard lapses
	senders senders              // the codes sent for each client address
	pins    map[string]*pinTries // wrong PINs by calling number
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
	if b.opts.ClientAddress == nil {
		b.opts.ClientAddress = RemoteAddress
	}
	b.senders = senders{max: b.opts.MaxCodesPerAddress, byAddr: make(map[string]*sender)}
	if b.senders.max <= 0 {
		b.senders.max = DefaultMaxCodesPerAddress
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
	b.mux.HandleFunc("POST /phone/verify", b.handlePhoneVerify)
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
