package engine

import (
	"cmp"
	"context"
	"errors"
	"fmt"
	"log/slog"
	"net/http"
	"time"

	"github.com/convengine/engine/internal/bound"
	"github.com/convengine/engine/internal/dpop"
	"github.com/convengine/engine/internal/schema"
	"github.com/convengine/engine/internal/shutdown"
	"github.com/convengine/engine/internal/token"
	"github.com/convengine/engine/internal/validity"
	"github.com/convengine/engine/internal/verbalize"
)

// Version is the engine's version, sent on every response as the Engine-Version header. It
// follows semantic versioning; the API it serves is the one of docs/protocol.md at this
// version (2.0.0 introduced forwarded headers).
const Version = "2.0.0"

// Config is what an [Engine] is made of. Tenants, Model and SigningKey are required; nil or
// zero values of the other fields mean the defaults documented on each.
type Config struct {
	// Tenants finds the tenant of each request's X-Engine-Key.
	Tenants TenantStore
	// Model writes the answers.
	Model Model
	// Toolset reaches the tenants' backends. Nil means tenants have no tools.
	Toolset Toolset
	// Synthesizer speaks answers for the tts endpoint and the voice socket. Nil answers 503.
	Synthesizer Synthesizer
	// SpeechText rewrites text for the synthesizer, in the language of locale. The default
	// writes money, numbers, percentages, dates, times and symbols as words ("$20.00" is
	// "twenty dollars", "65%" "sixty-five percent"), which offline synthesizers otherwise read
	// wrongly. A synthesizer that reads them well itself may be given func(s, _ string)
	// string { return s }.
	SpeechText func(text, locale string) string
	// Transcriber turns audio input into text. Nil answers 503 to audio input.
	Transcriber Transcriber
	// Sessions keeps sessions; nil means an in-memory store (a single replica).
	Sessions SessionStore
	// Replay remembers single-use proof ids; nil means an in-memory store.
	Replay ReplayStore
	// Actions makes confirmed actions run at most once; nil means an in-memory store.
	Actions ActionStore
	// SigningKey signs session and action tokens: at least 32 random bytes, the same on every
	// replica.
	SigningKey []byte
	// PublicURL is the engine's public base URL, such as "https://api.example.com". DPoP proofs
	// are checked against it; empty means the URL of each request.
	PublicURL string
	// SessionKeys sign and verify session tokens, newest first, for key rotation. Empty means
	// HS256 with a key derived from SigningKey.
	SessionKeys []SessionKey
	// SessionLifetime is how long a session lasts (default 24h).
	SessionLifetime time.Duration
	// DPoP tunes the proofs of device-bound sessions; nil means the defaults.
	DPoP *DPoPOptions
	// ToolListTTL is how long a tenant environment's tool list and warm-up are reused
	// (default 5m); negative lists the tools for every turn.
	ToolListTTL time.Duration
	// Observer receives what the engine does, for tracing and metrics (package otel); nil
	// means nobody watches.
	Observer *Observer
	// Logger receives the engine's logs; nil means slog.Default(). Secrets never reach it.
	Logger *slog.Logger
	// MaxTurnBody bounds the body of a turn (default 1 MiB); MaxBody every other body
	// (default 64 KiB).
	MaxTurnBody int64
	MaxBody     int64
	// PingInterval is the silence after which a turn stream sends ": ping" (default 15s).
	PingInterval time.Duration
	// RateLimiter keeps the tenants' and users' rate limits (Tenant.Limits); nil means
	// buckets in this process's memory, so that N replicas allow N times the limits. While it
	// fails, each process applies the limits alone.
	RateLimiter RateLimiter
	// MaxConcurrentTurns bounds the turns the engine runs at once (default 1024), those of
	// voice sockets included; a turn past it is answered 503 overloaded (on a socket, an
	// overloaded error message). Negative means no bound.
	MaxConcurrentTurns int
	// MaxConcurrentSyntheses bounds the syntheses of the tts endpoint at once (default 32),
	// each of which may hold a synthesizer process until its client has read the audio; one
	// past it is answered 503 overloaded. Negative means no bound.
	MaxConcurrentSyntheses int
	// HeaderMemory bounds the bytes of the header blocks that connections served through
	// [Engine.Listener] are still sending, all connections together (default 16 MiB):
	// http.Server.MaxHeaderBytes bounds one block, not how many arrive at once. A connection
	// whose header bytes would pass it is closed. Negative means no bound.
	HeaderMemory int64
	// MaxSynthesesPerUser bounds the syntheses of the tts endpoint that one user of a tenant
	// holds at once (default 4), so that one user's slow readers cannot take every slot; one
	// past it is answered 429 rate_limited with Retry-After. Negative means no bound.
	MaxSynthesesPerUser int
	// MaxConcurrentTranscriptions bounds the audio being transcribed at once, running or
	// waiting for the Transcriber (default 8), of turns and voice sockets alike: one past it is
	// answered 503 overloaded at once (on a socket, an overloaded error message) rather than
	// queued behind them. MaxTranscriptionsPerUser bounds those of one user of a tenant
	// (default 2; past it 429 rate_limited with Retry-After). Negative means no bound.
	MaxConcurrentTranscriptions int
	MaxTranscriptionsPerUser    int
	// WriteTimeout bounds how long one write of a response may wait for a client that does not
	// read (default 10s): the tts endpoint's audio and the turn stream's events. The response
	// is then abandoned and its synthesis or turn stopped, so that a slow reader cannot hold
	// them. It does not bound the length of a response.
	WriteTimeout time.Duration
	// Passkeys verifies the passkeys that gate actions in browsers, as their relying party:
	// passkey.New of this module's package passkey, in one line. Nil means sessions cannot
	// register one (gate_credential), and device proofs are JWS only.
	Passkeys Passkeys
	// Environment chooses the environment of a request for hosts that know it otherwise (from
	// their gateway, hostname or route): it returns EnvProduction or EnvStaging, or "" to leave
	// the choice to the X-Request-ID prefix. While it is set, request ids need no prefix: any 1
	// to 128 letters, digits or ._:- (a gateway's UUID) are accepted. Nil means the prefix
	// decides, as the protocol says.
	Environment func(r *http.Request) string
	// Identify tells who a request comes from, for hosts that authenticate their users
	// themselves: it returns the tenant's engine key, the user's token for the tenant's
	// backend and the environment, from the host's own session, cookie or middleware (the
	// request's context). When set, it replaces the header rules: X-Engine-Key and X-Token are
	// not read, Environment is not called, and X-Request-ID is optional (any 1 to 128 letters,
	// digits or ._:-; a new UUID when absent). An error that is a *Problem (see NewProblem) is
	// the response; any other is logged and answered 500 internal. The engine's own sessions
	// are still read from Authorization and DPoP, so the host's credential travels elsewhere
	// (a cookie, a header of its own).
	Identify func(r *http.Request) (Identity, error)
	// Recorder keeps the conversation record: each turn, and each action's evidence before it
	// runs (package record). Nil keeps none.
	Recorder Recorder
	// TurnLog keeps the events of each turn of the turn stream, so that a client whose stream
	// broke resumes it with GET /engine/turns/{turnId} on any replica sharing the log
	// (MemoryTurnLog for one replica, redisstore for several). With it, a turn whose client
	// went away runs to its end, bounded by its deadline. Nil: turns are not kept, and a turn
	// stops when its client goes.
	TurnLog TurnLog
	// ResumeFor is how long a finished turn can still be resumed (default 5 minutes).
	ResumeFor time.Duration
	// Widgets are the host's own widget types, offered to the model as UI tools beside the
	// built-in ones; nil means none.
	Widgets []WidgetType
	// Guards are the host's hooks that may refuse a turn, redact what reaches the model, refuse
	// or audit tool calls and edit the finished spec; nil means none.
	Guards *Guards
	// Budget holds tenants to the budgets of their Limits (tokens, speech, turns per user) before
	// the work is done; nil means none. Package usage has one for a process, redisstore one for
	// every replica on a Redis.
	Budget Budget
	// Privacy hides personal data from the model and masks it for the user, per tenant
	// (package pii); nil means none.
	Privacy Privacy
	// Now is the clock; nil means time.Now.
	Now func() time.Time
}

// Engine runs conversational turns for many tenants. It is safe for concurrent use; make one
// with [New] and mount [Engine.Handler] or the per-endpoint handlers on any router.
type Engine struct {
	tenants       TenantStore
	validTenants  validity.Cache[Tenant]
	model         Model
	toolset       Toolset
	synthesizer   Synthesizer
	speechText    func(text, locale string) string
	transcriber   Transcriber
	sessions      SessionStore
	replay        ReplayStore
	actions       ActionStore
	actionTokens  *token.Actions
	tickets       *token.Tickets
	obs           Observer
	sessionTokens *token.Sessions
	sessionTTL    time.Duration
	proofs        dpop.Verifier // the DPoP proofs of bound sessions
	warm          *warmer
	schemas       schema.Cache
	log           *slog.Logger
	maxTurnBody   int64
	maxBody       int64
	ping          time.Duration
	now           func() time.Time
	shutdown      *shutdown.Hooks
	limits        *rateLimiting
	turnSlots     bound.Slots
	syntheses     *Hold // the syntheses of the process and of each user
	headerMemory  *bound.Budget
	writeTimeout  time.Duration
	environmentOf func(r *http.Request) string
	identifyHook  func(r *http.Request) (Identity, error)
	recorder      Recorder
	guards        Guards
	budget        Budget
	privacy       Privacy
	turnLog       TurnLog
	resumeFor     time.Duration
	resumes       bound.Slots
	resumesOfTurn *bound.PerUser // the resumes of each turn
	// hostWidgets are Config.Widgets by tool name; hostWidgetSpecs describe them to the model.
	hostWidgets     map[string]*WidgetType
	hostWidgetSpecs []ToolSpec
	passkeys        Passkeys
	transcriptions  *Hold // the audio being transcribed, in the process and of each user
}

// ErrConfig is wrapped by the errors [New] returns for an incomplete configuration.
var ErrConfig = errors.New("engine: invalid configuration")

// New returns an engine made of cfg, or an error naming each missing or invalid part.
func New(cfg Config) (*Engine, error) {
	var errs []error
	if cfg.Tenants == nil {
		errs = append(errs, fmt.Errorf("%w: Tenants is required", ErrConfig))
	}
	if cfg.Model == nil {
		errs = append(errs, fmt.Errorf("%w: Model is required", ErrConfig))
	}
	if len(cfg.SigningKey) < 32 {
		errs = append(errs, fmt.Errorf("%w: SigningKey must be at least 32 bytes", ErrConfig))
	}
	if cfg.MaxTurnBody < 0 || cfg.MaxBody < 0 || cfg.PingInterval < 0 || cfg.WriteTimeout < 0 {
		errs = append(errs, fmt.Errorf("%w: MaxTurnBody, MaxBody, PingInterval and WriteTimeout cannot be negative", ErrConfig))
	}
	e := &Engine{
		tenants:       cfg.Tenants,
		model:         cfg.Model,
		toolset:       cfg.Toolset,
		synthesizer:   cfg.Synthesizer,
		speechText:    cfg.SpeechText,
		transcriber:   cfg.Transcriber,
		sessions:      cfg.Sessions,
		replay:        cfg.Replay,
		actions:       cfg.Actions,
		log:           cfg.Logger,
		maxTurnBody:   cfg.MaxTurnBody,
		maxBody:       cfg.MaxBody,
		ping:          cfg.PingInterval,
		now:           cfg.Now,
		turnSlots:     bound.NewSlots(cfg.MaxConcurrentTurns, defaultMaxConcurrentTurns),
		headerMemory:  &bound.Budget{Limit: cmp.Or(cfg.HeaderMemory, defaultHeaderMemory)},
		writeTimeout:  cmp.Or(cfg.WriteTimeout, defaultWriteTimeout),
		environmentOf: cfg.Environment,
		identifyHook:  cfg.Identify,
		recorder:      cfg.Recorder,
		passkeys:      cfg.Passkeys,
	}
	e.syntheses = newHold(BoundSyntheses, "syntheses", 1, bound.NewSlots(cfg.MaxConcurrentSyntheses, defaultMaxConcurrentSyntheses),
		0, cmp.Or(cfg.MaxSynthesesPerUser, defaultMaxSynthesesPerUser))
	e.transcriptions = newHold(BoundTranscriptions, "recordings being transcribed", 1,
		bound.NewSlots(cfg.MaxConcurrentTranscriptions, defaultMaxTranscriptions), 0, cmp.Or(cfg.MaxTranscriptionsPerUser, defaultMaxTranscriptionsPerUser))
	e.shutdown = shutdown.New()
	if e.speechText == nil {
		e.speechText = verbalize.Text
	}
	if e.now == nil {
		e.now = time.Now
	}
	if cfg.Observer != nil {
		e.obs = *cfg.Observer
	}
	if cfg.Guards != nil {
		e.guards = *cfg.Guards
	}
	e.budget, e.turnLog, e.resumeFor, e.privacy = cfg.Budget, cfg.TurnLog, cfg.ResumeFor, cfg.Privacy
	if e.resumeFor <= 0 {
		e.resumeFor = defaultResumeFor
	}
	e.resumes, e.resumesOfTurn = bound.NewSlots(0, defaultMaxResumes), bound.NewPerUser(maxResumesPerTurn, 0)
	if err := e.initSessions(&cfg); err != nil {
		errs = append(errs, err)
	}
	if err := e.initWidgets(cfg.Widgets); err != nil {
		errs = append(errs, err)
	}
	e.warm = newWarmer(cfg.ToolListTTL, e.hostWidgetSpecs)
	if err := errors.Join(errs...); err != nil {
		return nil, err
	}
	mem := &MemoryStore{Now: e.now} // the stores cfg leaves nil
	e.sessions, e.replay, e.actions = cmp.Or[SessionStore](e.sessions, mem), cmp.Or[ReplayStore](e.replay, mem), cmp.Or[ActionStore](e.actions, mem)
	if e.log == nil {
		e.log = slog.Default()
	}
	e.maxTurnBody, e.maxBody, e.ping = cmp.Or(e.maxTurnBody, 1<<20), cmp.Or(e.maxBody, 64<<10), cmp.Or(e.ping, 15*time.Second)
	var err error
	if e.actionTokens, err = token.NewActions(cfg.SigningKey); err != nil {
		return nil, fmt.Errorf("%w: SigningKey: %v", ErrConfig, err)
	}
	if e.tickets, err = token.NewTickets(cfg.SigningKey); err != nil {
		return nil, fmt.Errorf("%w: SigningKey: %v", ErrConfig, err)
	}
	if e.limits, err = newRateLimiting(cfg.RateLimiter, cfg.SigningKey, e.now); err != nil {
		return nil, fmt.Errorf("%w: SigningKey: %v", ErrConfig, err)
	}
	return e, nil
}

// Close stops the engine's background work, such as the warm-ups that create-session starts,
// and waits for it to end. Handlers keep working afterwards, without background work. Call it
// once the HTTP server in front of the engine has shut down. It is safe to call more than once.
func (e *Engine) Close() error {
	e.warm.Close()
	return nil
}

// Shutdown tells the transports that registered with [Engine.OnShutdown] that the engine is
// going away, and waits until they are done: package voice closes its sockets with 1001 (going
// away) and refuses new ones, a socket running a turn once the turn has been answered. When ctx
// ends first, they stop what still runs at once, and Shutdown returns ctx.Err(). An
// http.Server's Shutdown does not wait for WebSockets, which it no longer tracks: call both.
func (e *Engine) Shutdown(ctx context.Context) error { return e.shutdown.Run(ctx) }

// Route is a handler a transport serves at its own path, for [Engine.Handler] to mount beside
// the engine's routes.
type Route struct {
	// Pattern is the path as http.ServeMux reads it, such as "/engine/stream".
	Pattern string
	Handler http.Handler
}

// Routes of the engine's HTTP surface.
const (
	PathCreateSession = "/api/v1/create-session"
	PathTurn          = "/engine"
	PathExecute       = "/engine/execute"
	PathTTS           = "/engine/tts"
	PathStream        = "/engine/stream"
	// PathStreamTicket is where a client that cannot set the voice socket's headers (a
	// browser) gets a ticket to open it with.
	PathStreamTicket = "/engine/stream-ticket"
)

// Handler returns a handler serving every route of the engine at its path, and the routes of
// transports given (package voice's socket). Unknown paths get a 404 problem, a known path with
// another method a 405 problem. It serves no health probe and no OpenAPI document: the host
// mounts [Engine.HealthHandler] and [Engine.OpenAPI] where it wants them (docs/embedding.md).
func (e *Engine) Handler(routes ...Route) http.Handler {
	mux := http.NewServeMux()
	for _, r := range routes {
		mux.Handle(r.Pattern, r.Handler)
	}
	mux.Handle(PathCreateSession, e.SessionHandler())
	mux.Handle(PathTurn, e.TurnHandler())
	mux.Handle(PathExecute, e.ExecuteHandler())
	mux.Handle(PathTTS, e.TTSHandler())
	mux.Handle(PathTurns, e.ResumeHandler())
	mux.Handle("/", e.route("", "", http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		writeProblem(w, newProblem(http.StatusNotFound, CodeNotFound, "no such route"), e.validRequestID(r))
	})))
	return mux
}
