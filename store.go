package engine

import (
	"context"
	"encoding/json"
	"errors"
	"net/http"
	"time"

	"github.com/convengine/engine/internal/response"
)

// Session is what the engine keeps of a session between requests.
type Session struct {
	ID        string
	TenantKey string
	CreatedAt time.Time
	ExpiresAt time.Time
	// KeyThumbprint is the RFC 7638 thumbprint of the device key of a bound session.
	KeyThumbprint string
	// GateKey is the public JWK that signs the action proofs of a bound session: its gate_key,
	// else its device key.
	GateKey json.RawMessage
	// GateCredential is the WebAuthn credential (a passkey, user verification required) that
	// proves the actions of a bound session instead of a gate key, with its signature counter.
	GateCredential json.RawMessage
	Metadata       json.RawMessage
	// User names the user who created the session: a keyed hash of the tenant and the user's
	// token, as [RateLimit.User] names its bucket, never the token. Stores may bound the
	// sessions of one user with it.
	User string
}

// A SessionStore keeps sessions until they expire. Its methods are called from many goroutines
// at once; with several engine replicas it must be shared by all of them.
type SessionStore interface {
	PutSession(ctx context.Context, s *Session) error
	// Session returns [ErrSessionNotFound] for an unknown or expired id.
	Session(ctx context.Context, id string) (*Session, error)
}

// A ReplayStore remembers single-use values, such as DPoP proof ids and action token ids, until
// they expire. It is called from many goroutines at once and, with several replicas, must be
// shared by all of them.
type ReplayStore interface {
	// Claim records key until expiry and reports true, or reports false when key is already
	// recorded and has not expired. It is atomic.
	Claim(ctx context.Context, key string, expiry time.Time) (bool, error)
}

// A Binder is a [ReplayStore] that can also bind a key to one value until expiry: the first
// value bound stays, and Bind returns it (value itself when it was free). The engine binds a
// passkey's credential id, for a user, to its public key with it, so that nobody registers
// another key under an id already in use. Bind is atomic; with several replicas the store
// must be shared. Stores that cannot bind leave it out, and the check is skipped.
type Binder interface {
	Bind(ctx context.Context, key, value string, expiry time.Time) (bound string, err error)
}

// ErrSessionNotFound is returned by a [SessionStore] for an unknown or expired session.
var ErrSessionNotFound = errors.New("engine: session not found")

// ErrStoreUnavailable is wrapped by the errors a store returns when its backend cannot be
// reached or does not answer in time. What needs the store then answers 503 store_unavailable,
// which the client may retry; a store never reports "not found" or "claimed" instead.
var ErrStoreUnavailable = errors.New("engine: store unavailable")

// ErrStoreFull is returned by a store at its bound that keeps what it holds rather than drop
// someone else's entries to make room: a [SessionStore] whose sessions fill its memory, or a
// [TurnLog] that cannot keep one more turn. The engine answers a session it cannot store with
// 503 overloaded and Retry-After, and runs a turn it cannot keep without keeping it.
var ErrStoreFull = errors.New("engine: store full")

// An ActionStore makes confirmed actions run at most once, across every replica: the execute
// endpoint claims an action token's id before it calls the tool, and records the result after.
// Each claim has an owner, a value unique to the execute that took it: only that execute can
// record its result or release it, so a replica whose lease passed cannot undo another's
// claim. Its methods are called from many goroutines at once.
type ActionStore interface {
	// BeginAction claims id for owner while its action runs, until leaseUntil. It returns the
	// recorded result of an action that already finished, [ErrActionInProgress] while another
	// claim holds id, or nil, nil when owner now holds the claim. A claim whose lease passed
	// (its replica crashed) can be taken again.
	BeginAction(ctx context.Context, id, owner string, leaseUntil time.Time) (result []byte, err error)
	// FinishAction records the result of owner's action until expiry, in place of its claim.
	// When another owner's claim or result holds id (owner's lease passed and another execute
	// took it), it records nothing and returns [ErrActionInProgress].
	FinishAction(ctx context.Context, id, owner string, result []byte, expiry time.Time) error
	// AbandonAction releases owner's claim of an action that did not reach the backend, so
	// that the same token can be tried again. Another owner's claim, and a result, stay.
	AbandonAction(ctx context.Context, id, owner string) error
}

// ErrActionInProgress is returned by [ActionStore.BeginAction] while another call holds the
// action's claim.
var ErrActionInProgress = errors.New("engine: action in progress")

// A Pinger is a store or other dependency that can report whether it is reachable. The health
// handler pings every part of the engine that implements it.
type Pinger interface {
	Ping(ctx context.Context) error
}

// HealthHandler returns a handler for liveness and readiness probes. It answers 200
// {"status":"ok"} when every part of the engine that implements [Pinger] answers within two
// seconds, and 503 {"status":"unavailable","failing":[…]} naming the parts that did not. It
// takes no authentication headers: mount it where only the platform can reach it.
func (e *Engine) HealthHandler() http.Handler {
	return http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		if r.Method != http.MethodGet && r.Method != http.MethodHead {
			w.Header().Set("Allow", "GET, HEAD")
			writeProblem(w, newProblem(http.StatusMethodNotAllowed, CodeMethodNotAllowed, "health takes GET"), "")
			return
		}
		parts := map[string]any{"tenants": e.tenants, "model": e.model, "toolset": e.toolset,
			"sessions": e.sessions, "replay": e.replay, "actions": e.actions}
		response.Health(w, r, parts, func(ctx context.Context, part string, err error) {
			e.log.WarnContext(ctx, "health check failed", "part", part, "err", err)
		})
	})
}
