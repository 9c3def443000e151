package engine

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"strings"
	"sync/atomic"
	"time"

	"github.com/convengine/engine/internal/jsonenc"
	localepkg "github.com/convengine/engine/internal/locale"
	"github.com/convengine/engine/internal/tenantrule"
)

// A TenantStore finds the tenant addressed by a publishable engine key. It is called on every
// request, from many goroutines at once; it returns [ErrUnknownTenant] for a key it does not
// know. Tenants it returns must not be modified afterwards. The engine runs [Tenant.Validate]
// on each *Tenant the first time it sees it, and remembers the result while the value lives;
// a request for a tenant that fails it is answered 500 internal and logged with the tenant's
// key and the field at fault.
type TenantStore interface {
	Tenant(ctx context.Context, engineKey string) (*Tenant, error)
}

// ErrUnknownTenant is returned by a [TenantStore] for an engine key it does not know.
var ErrUnknownTenant = errors.New("engine: unknown engine key")

// Tenant is one assistant: its prompt, voice, theme, backends, tools and actions.
type Tenant struct {
	// Key is the publishable engine key clients send as X-Engine-Key.
	Key  string `json:"key"`
	Name string `json:"name"`
	// Prompt is the tenant's system prompt for language models.
	Prompt string `json:"prompt,omitempty"`
	// Voice is the default voice of speech synthesis.
	Voice string `json:"voice,omitempty"`
	// Locale is used when a request names none, and for templates missing in a request's
	// locale. Default "en".
	Locale string `json:"locale,omitempty"`
	// Theme is handed to clients unchanged (colours, logo URL, display name).
	Theme json.RawMessage `json:"theme,omitempty"`
	// Environments are keyed by "production" and "staging"; production is required.
	Environments map[string]*Environment `json:"environments"`
	// Tools is the tool configuration, read by the [Toolset] (for example package httptools).
	Tools json.RawMessage `json:"tools,omitempty"`
	// MCP configures tools served by one or several MCP servers (package mcptools).
	MCP json.RawMessage `json:"mcp,omitempty"`
	// Actions is the action allow-list: the tools that only run after the user confirmed them
	// on the device, keyed by tool name, with the copy of their confirm widgets.
	Actions map[string]*Action `json:"actions,omitempty"`
	// Intents configures the offline intent model (package intent).
	Intents json.RawMessage `json:"intents,omitempty"`
	// Model names the model that answers the tenant, among those the host offers through
	// [ModelByTenant] (the reference server: "intent", or a model of its tenants file's
	// models section). Empty means the host's default.
	Model string `json:"model,omitempty"`
	// RequireSession refuses requests that carry no session token.
	RequireSession bool `json:"require_session,omitempty"`
	// RequireActionProof refuses an execute without a device proof signed by the session's
	// gate key (auth.proof), and so an execute of a session that is not device-bound.
	RequireActionProof bool `json:"require_action_proof,omitempty"`
	// DeviceCheck is the path, on each environment's backend, of the tenant's device check:
	// POST {"kind", "public_key" (JWK), "thumbprint", "credential_id"} with the user's X-Token,
	// answered 200 {"enrolled": true|false} (docs/actions.md). With it, a key counts for a user
	// only once the backend says it enrolled it. Empty: no check (the backend's verification
	// of each proof is then the only one).
	DeviceCheck string `json:"device_check,omitempty"`
	Limits      Limits `json:"limits,omitempty"`
	// Privacy is the tenant's policy for personal data, read by Config.Privacy (package pii).
	Privacy json.RawMessage `json:"privacy,omitempty"`
	// Disclosure is the line, by locale, that tells the user they talk to an AI (the EU AI
	// Act's article 50): the start event of a conversation's first turn carries it, to be shown
	// before the answer and, on voice, said first. Empty: none.
	Disclosure map[string]string `json:"disclosure,omitempty"`
	// Records configures the conversation record of the tenant, read by Config.Recorder
	// (package record).
	Records json.RawMessage `json:"records,omitempty"`
	// Handoff configures the handing of a conversation to a person, read by package handoff.
	Handoff json.RawMessage `json:"handoff,omitempty"`
	// Telephony configures the tenant's phone lines, read by package telephony.
	Telephony json.RawMessage `json:"telephony,omitempty"`
}

// Environment is one deployment of a tenant's backend.
type Environment struct {
	// Name is "production" or "staging"; set by [Tenant.Validate] from the map key.
	Name string `json:"-"`
	// BackendURL is the base URL of the tenant's tool backend.
	BackendURL string `json:"backend_url"`
}

// Action is an allow-listed action tool and the per-locale copy of its confirm widget and of
// the terminal card the execute endpoint answers with.
type Action struct {
	// Confirm holds the confirm widget's copy keyed by locale ("en", "es-MX", …). Texts may
	// name arguments in braces: "Send {amount} to {to}?"; {amount|money} writes a number with
	// two decimals and thousands separators.
	Confirm map[string]ConfirmCopy `json:"confirm"`
	// Done is the card's copy after the action ran, by locale. Texts may also name fields of
	// the tool's result: "{result.balance_formatted}". A backend may send the card itself as
	// {"card":{"title","line1","line2"},"speak":"…"} in its result.
	Done map[string]CardCopy `json:"done,omitempty"`
	// Declined is the card's copy when the backend declined the action (a 4xx answer);
	// {result.message} is the backend's reason.
	Declined map[string]CardCopy `json:"declined,omitempty"`
}

// CardCopy is the text of a terminal card and of the line spoken with it, in one locale.
type CardCopy struct {
	Title string `json:"title"`
	Line1 string `json:"line1"`
	Line2 string `json:"line2"`
	Speak string `json:"speak"`
}

// ConfirmCopy is the text of a confirm widget in one locale.
type ConfirmCopy struct {
	Title        string `json:"title"`
	Body         string `json:"body"`
	ConfirmLabel string `json:"confirm_label"`
	CancelLabel  string `json:"cancel_label"`
}

// Limits bound what one turn may use. Zero values take the defaults shown.
type Limits struct {
	// ToolTimeout bounds one tool call: up to 10m (default 10s).
	ToolTimeout Duration `json:"tool_timeout,omitempty"`
	// TurnTimeout bounds a whole turn: up to 1h (default 60s).
	TurnTimeout Duration `json:"turn_timeout,omitempty"`
	// MaxSteps bounds the model completions of one turn: 1 to 32 (default 6).
	MaxSteps int `json:"max_steps,omitempty"`
	// ActionTTL is how long a confirm widget can be executed: up to 24h (default 10m).
	ActionTTL Duration `json:"action_ttl,omitempty"`
	// VerificationMaxAge is how long ago the device gate may have passed when an action is
	// executed: up to 1h (default 120s).
	VerificationMaxAge Duration `json:"verification_max_age,omitempty"`
	// UserPerMinute bounds the requests one user (one X-Token) makes per minute: turns,
	// executions, speech and voice sockets; zero means no bound. UserBurst is how many may
	// come at once (default a tenth of UserPerMinute, at least 1). Each is at most 10^9.
	UserPerMinute int `json:"user_per_minute,omitempty"`
	UserBurst     int `json:"user_burst,omitempty"`
	// TenantPerMinute and TenantBurst bound the same requests of all the tenant's users
	// together: per engine process, or across every replica that shares Config.RateLimiter.
	// Each is at most 10^9.
	TenantPerMinute int `json:"tenant_per_minute,omitempty"`
	TenantBurst     int `json:"tenant_burst,omitempty"`
	// MaxOutputTokens bounds each completion of the model, at most 10^6 (default: the model's
	// own bound, or 4096 under a token budget).
	MaxOutputTokens int `json:"max_output_tokens,omitempty"`
	// Budgets, enforced by Config.Budget, in UTC days and months; zero means no limit.
	// TokensPerDay and TokensPerMonth (each at most 10^15) bound the input and output tokens
	// of the tenant's model calls, SpeechSecondsPerDay (at most 10^9) its audio transcribed
	// and synthesized, and TurnsPerUserPerDay (at most 10^6) the turns of one user. The
	// bounds keep every reservation and count exact, in an int64 and in a Redis script's
	// numbers.
	TokensPerDay        int64   `json:"tokens_per_day,omitempty"`
	TokensPerMonth      int64   `json:"tokens_per_month,omitempty"`
	SpeechSecondsPerDay float64 `json:"speech_seconds_per_day,omitempty"`
	TurnsPerUserPerDay  int     `json:"turns_per_user_per_day,omitempty"`
}

// Duration is a [time.Duration] written in configuration files as "10s", "1m30s".
type Duration time.Duration

// UnmarshalJSON reads a duration string or a number of seconds.
func (d *Duration) UnmarshalJSON(b []byte) error {
	v, err := tenantrule.ParseDuration(b)
	if err != nil {
		return err
	}
	*d = Duration(v)
	return nil
}

// MarshalJSON writes the duration as a string.
func (d Duration) MarshalJSON() ([]byte, error) { return json.Marshal(time.Duration(d).String()) }

func (d Duration) or(def time.Duration) time.Duration {
	if d <= 0 {
		return def
	}
	return time.Duration(d)
}

// Environments a request can address by the prefix of its X-Request-ID.
const (
	EnvProduction = "production"
	EnvStaging    = "staging"
)

// Validate checks t and fills in derived fields. Errors name the field.
func (t *Tenant) Validate() error {
	var errs []error
	bad := func(field, format string, args ...any) {
		errs = append(errs, fmt.Errorf("%s: "+format, append([]any{field}, args...)...))
	}
	if !tenantrule.Key(t.Key) {
		bad("key", "must be 1 to 128 letters, digits, '_', '.' or '-'")
	}
	if strings.TrimSpace(t.Name) == "" {
		bad("name", "is empty")
	}
	if t.Locale == "" {
		t.Locale = "en"
	} else if !ValidLocale(t.Locale) {
		bad("locale", "%q is not a BCP 47 language tag", t.Locale)
	}
	if t.Model != "" && !tenantrule.Model(t.Model) {
		bad("model", "must be 1 to 64 letters, digits, '_', '.' or '-'")
	}
	if len(t.Theme) > 0 && !jsonenc.IsObject(t.Theme) {
		bad("theme", "must be an object")
	}
	if len(t.Records) > 0 && !jsonenc.IsObject(t.Records) {
		bad("records", "must be an object")
	}
	if len(t.Handoff) > 0 && !jsonenc.IsObject(t.Handoff) {
		bad("handoff", "must be an object")
	}
	for tag, line := range t.Disclosure {
		if !tenantrule.Disclosure(tag, line) {
			bad("disclosure."+tag, "must be a BCP 47 language tag and a line of 1 to 500 characters")
		}
	}
	if t.DeviceCheck != "" && !tenantrule.DeviceCheck(t.DeviceCheck) {
		bad("device_check", "must be a path such as /devices/check, without query or fragment")
	}
	if t.Environments[EnvProduction] == nil {
		bad("environments.production", "is missing")
	}
	for name, env := range t.Environments {
		field := "environments." + name
		if name != EnvProduction && name != EnvStaging {
			bad(field, "is not %q or %q", EnvProduction, EnvStaging)
			continue
		}
		if env == nil {
			bad(field, "is empty")
			continue
		}
		if env.Name != name { // written only once: tenants are read concurrently after validation
			env.Name = name
		}
		if env.BackendURL != "" && !tenantrule.BackendURL(env.BackendURL) {
			bad(field+".backend_url", "must be an absolute http or https URL")
		}
	}
	for name, a := range t.Actions {
		field := "actions." + name
		if a == nil || len(a.Confirm) == 0 {
			bad(field+".confirm", "needs the confirm copy of at least one locale")
			continue
		}
		for kind, cards := range map[string]map[string]CardCopy{"done": a.Done, "declined": a.Declined} {
			for loc, c := range cards {
				if !ValidLocale(loc) || c.Title == "" {
					bad(field+"."+kind+"."+loc, "needs a BCP 47 locale and a title")
				}
			}
		}
		for loc, c := range a.Confirm {
			f := field + ".confirm." + loc
			if !ValidLocale(loc) {
				bad(f, "%q is not a BCP 47 language tag", loc)
			}
			if c.Title == "" || c.Body == "" || c.ConfirmLabel == "" || c.CancelLabel == "" {
				bad(f, "needs title, body, confirm_label and cancel_label")
			}
		}
	}
	tenantrule.Limits(&t.Limits, bad)
	return errors.Join(errs...)
}

// IsAction reports whether the tool named is on the tenant's action allow-list.
func (t *Tenant) IsAction(tool string) bool {
	_, ok := t.Actions[tool]
	return ok
}

// errInvalidTenant is the error of a tenant from the store that fails [Tenant.Validate].
var errInvalidTenant = errors.New("engine: the tenant store returned an invalid tenant")

// tenant returns the tenant of key from the store once it passed [Tenant.Validate], which runs
// once per *Tenant. An invalid tenant is logged, naming its key and the field at fault, and is
// errInvalidTenant rather than a turn run with an empty environment.
func (e *Engine) tenant(ctx context.Context, key, requestID string) (*Tenant, error) {
	t, err := e.tenants.Tenant(ctx, key)
	switch {
	case err != nil:
		return nil, err
	case t == nil:
		err = errors.New("the store returned no tenant and no error")
	default:
		err = e.validTenants.Check(t, func(t *Tenant) error {
			err := t.Validate()
			if err == nil {
				e.warnBudget(ctx, t)
			}
			return err
		})
	}
	if err != nil {
		field, _, _ := strings.Cut(err.Error(), ":")
		e.log.ErrorContext(ctx, "the tenant store returned an invalid tenant", "requestId", requestID, "tenant", key,
			"field", field, "err", err)
		return nil, fmt.Errorf("%w: %w", errInvalidTenant, err)
	}
	return t, nil
}

// StaticTenants is a [TenantStore] over a fixed set of tenants, such as those of a tenants file.
type StaticTenants struct {
	byKey map[string]*Tenant
}

// NewStaticTenants validates the tenants and returns a store of them. Keys must be unique.
func NewStaticTenants(tenants ...*Tenant) (*StaticTenants, error) {
	s := &StaticTenants{byKey: make(map[string]*Tenant, len(tenants))}
	var errs []error
	for i, t := range tenants {
		if t == nil {
			errs = append(errs, fmt.Errorf("tenant %d: is empty", i))
			continue
		}
		if err := t.Validate(); err != nil {
			errs = append(errs, fmt.Errorf("tenant %q: %w", t.Key, err))
			continue
		}
		if _, dup := s.byKey[t.Key]; dup {
			errs = append(errs, fmt.Errorf("tenant %q: key is used twice", t.Key))
		}
		s.byKey[t.Key] = t
	}
	if err := errors.Join(errs...); err != nil {
		return nil, err
	}
	return s, nil
}

// Tenant returns the tenant of engineKey.
func (s *StaticTenants) Tenant(_ context.Context, engineKey string) (*Tenant, error) {
	if t, ok := s.byKey[engineKey]; ok {
		return t, nil
	}
	return nil, ErrUnknownTenant
}

// All returns the tenants of the store, in no particular order.
func (s *StaticTenants) All() []*Tenant {
	out := make([]*Tenant, 0, len(s.byKey))
	for _, t := range s.byKey {
		out = append(out, t)
	}
	return out
}

// ReloadableTenants is a [TenantStore] whose tenants can be replaced while the engine serves,
// as when a tenants file is read again: a request keeps the tenant it looked up, so turns in
// progress finish with the configuration they started with. It is safe for concurrent use.
type ReloadableTenants struct {
	store atomic.Pointer[TenantStore]
}

// NewReloadableTenants returns a store serving s until [ReloadableTenants.Replace].
func NewReloadableTenants(s TenantStore) *ReloadableTenants {
	r := &ReloadableTenants{}
	r.Replace(s)
	return r
}

// Replace serves s from now on.
func (r *ReloadableTenants) Replace(s TenantStore) { r.store.Store(&s) }

// Tenant returns the tenant of engineKey in the current store.
func (r *ReloadableTenants) Tenant(ctx context.Context, engineKey string) (*Tenant, error) {
	return (*r.store.Load()).Tenant(ctx, engineKey)
}

// ValidLocale reports whether tag has the shape of a BCP 47 language tag, such as "es-MX".
func ValidLocale(tag string) bool { return localepkg.Valid(tag) }

// Direction returns "rtl" when locale is written right to left and "ltr" otherwise. An explicit
// script subtag decides ("az-Arab" is rtl, "ku-Latn" is ltr); otherwise the language does.
func Direction(locale string) string { return localepkg.Direction(locale) }

// LocaleFallbacks returns locale followed by its shorter prefixes: "pt-BR-x" gives
// "pt-BR-x", "pt-BR", "pt". Lookups of per-locale copy try them in order.
func LocaleFallbacks(locale string) []string { return localepkg.Fallbacks(locale) }
