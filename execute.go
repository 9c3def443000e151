package engine

import (
	"bytes"
	"cmp"
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"net/http"
	"strconv"
	"time"

	"github.com/convengine/engine/internal/body"
	"github.com/convengine/engine/internal/dpop"
	"github.com/convengine/engine/internal/fill"
	"github.com/convengine/engine/internal/jsonenc"
	"github.com/convengine/engine/internal/locale"
	"github.com/convengine/engine/internal/token"
	"github.com/google/uuid"
)

const (
	defaultVerificationAge = 120 * time.Second
	verificationSkew       = 30 * time.Second
	// actionLeaseMargin is how long a claim outlasts its action's time-out: the lease after
	// which another replica may take over the claim of one that died.
	actionLeaseMargin = 30 * time.Second
)

// executeRequest is the body of POST /engine/execute.
type executeRequest = body.Execute[PasskeyAssertion]

// Card is the terminal card the execute endpoint answers with.
type Card struct {
	Type  string `json:"type"` // "success", or "error" when the backend declined
	Title string `json:"title"`
	Line1 string `json:"line1"`
	Line2 string `json:"line2"`
}

// ExecuteResult is what a confirmed action came to: the 200 body of the execute endpoint, and
// the result of [Engine.Execute].
type ExecuteResult struct {
	Done  Card   `json:"done"`
	Speak string `json:"speak"`
	// Replayed says that the token had run before: this is its first result again, recorded in
	// the ActionStore, and nothing ran now. The execute endpoint answers it as is, for the
	// client's retries; a transport whose replies must not repeat tells it apart.
	Replayed bool `json:"-"`
}

// ExecuteHandler returns the handler of POST /engine/execute.
func (e *Engine) ExecuteHandler() http.Handler {
	return e.route(http.MethodPost, PathExecute, http.HandlerFunc(e.serveExecute))
}

func (e *Engine) serveExecute(w http.ResponseWriter, r *http.Request) {
	var body executeRequest
	req, _ := e.readRequest(w, r, WorkRequest, &body)
	if req == nil {
		return
	}
	reply, _, p := e.execute(r.Context(), req, &body)
	if p != nil {
		writeProblem(w, p, req.ID)
		return
	}
	w.Header().Set("Content-Type", "application/json")
	w.Header().Set("Cache-Control", "no-store")
	w.Header().Set("Content-Length", strconv.Itoa(len(reply)))
	w.Write(reply)
}

// execute checks a confirmed action and runs it once; the reply is the JSON of its
// ExecuteResult, and replayed says that it is the recorded reply of a token that ran before.
func (e *Engine) execute(ctx context.Context, req *request, b *executeRequest) (reply []byte, replayed bool, p *Problem) {
	claims, canon, sent, p := e.checkExecute(req, b)
	var proof *ActionProof
	if p == nil {
		proof, p = e.checkDeviceProof(ctx, req, b)
	}
	if p == nil && proof != nil {
		// The bank says whether the key is still its customer's device, before anything runs.
		p = e.checkEnrolled(ctx, req, &proof.Key)
	}
	if p != nil {
		return nil, false, p
	}
	tag, bad := b.Locale()
	if bad != nil {
		return nil, false, fieldProblem(bad)
	}
	return e.runAction(ctx, req, claims, b, canon, sent, cmp.Or(tag, req.Tenant.Locale), proof)
}

// checkExecute applies the checks of docs/actions.md, in their order, and returns the token's claims
// and the canonical form of the arguments as the client was shown them and as the action sends
// them (different when the token sealed them).
func (e *Engine) checkExecute(req *request, b *executeRequest) (c *token.ActionClaims, canon, sent []byte, p *Problem) {
	if b.Execute == nil {
		return nil, nil, nil, fieldProblem(body.MissingExecute())
	}
	x := b.Execute
	if !req.Tenant.IsAction(x.Tool) {
		return nil, nil, nil, newProblem(http.StatusForbidden, CodeActionNotAllowed, "this assistant cannot run that action")
	}
	badToken := newProblem(http.StatusForbidden, CodeInvalidActionToken, "the action token does not match this action; ask the assistant again")
	c, err := e.actionTokens.Verify(x.Token)
	if err != nil {
		return nil, nil, nil, badToken
	}
	canon, err = jsonenc.Canonicalize(x.Arguments)
	switch {
	case err != nil, c.Tenant != req.Tenant.Key, c.Env != req.Environment.Name, c.User != e.userOf(req),
		c.Tool != x.Tool, c.ArgsHash != jsonenc.Hash(canon), c.Session != req.sessionID():
		return nil, nil, nil, badToken
	}
	sent = canon
	if c.Sealed != "" {
		// The client holds the arguments masked: the token carries those the action sends.
		if sent, err = e.actionTokens.OpenArguments(c.Sealed); err != nil {
			return nil, nil, nil, badToken
		}
	}
	now := e.now()
	if !now.Before(c.Expiry.Time()) {
		return nil, nil, nil, newProblem(http.StatusGone, CodeActionExpired, "the confirmation expired; ask the assistant again")
	}
	verified, bad := b.CheckAuth()
	if bad != nil {
		return nil, nil, nil, fieldProblem(bad)
	}
	maxAge := req.Tenant.Limits.VerificationMaxAge.or(defaultVerificationAge)
	if now.Sub(verified) > maxAge || verified.Sub(now) > verificationSkew {
		return nil, nil, nil, newProblem(http.StatusForbidden, CodeVerificationStale, "the device check is too old or in the future; verify again")
	}
	return c, canon, sent, nil
}

// checkDeviceProof checks the device's proof of the action: auth.proof against the session's
// gate key, or auth.webauthn against its gate passkey. It is required when the tenant says so,
// and checked whenever it is present; it returns the proof that held, for the backend, nil
// without one.
func (e *Engine) checkDeviceProof(ctx context.Context, req *request, b *executeRequest) (*ActionProof, *Problem) {
	proof, assertion := b.Auth.Proof, b.Auth.WebAuthn
	if proof == nil && assertion == nil && !req.Tenant.RequireActionProof {
		return nil, nil
	}
	s := req.Session
	required := func(detail string) (*ActionProof, *Problem) {
		return nil, newProblem(http.StatusForbidden, CodeDeviceProofRequired, detail)
	}
	invalid := func(detail string) (*ActionProof, *Problem) {
		return nil, newProblem(http.StatusForbidden, CodeInvalidDeviceProof, detail)
	}
	switch {
	case (proof == nil || *proof == "") && assertion == nil:
		return required("this assistant runs actions only with a device proof: auth.proof, signed by the session's gate key, or auth.webauthn")
	case s == nil || (len(s.GateKey) == 0 && len(s.GateCredential) == 0):
		return required("a device proof needs a device-bound session (create-session with public_key, and gate_key or gate_credential)")
	case assertion != nil && len(s.GateCredential) == 0:
		return invalid("the session has no gate passkey: send auth.proof, signed by its gate key")
	case assertion == nil && len(s.GateCredential) > 0:
		return invalid("the session's gate is a passkey: send auth.webauthn")
	}
	if assertion != nil {
		return e.checkPasskeyProof(ctx, req, b, assertion)
	}
	key, err := dpop.ParseKey(s.GateKey)
	if err != nil {
		e.log.Error("a session's gate key does not parse", "requestId", req.ID, "tenant", req.Tenant.Key, "err", err)
		return invalid("the session's gate key cannot check proofs; create a new session")
	}
	err = dpop.VerifyAction(*proof, &dpop.ActionCheck{Key: key, Token: b.Execute.Token, Method: b.Auth.Method,
		VerifiedAt: b.Auth.VerifiedAt, Now: e.now(), MaxAge: req.Tenant.Limits.VerificationMaxAge.or(defaultVerificationAge),
		MaxFuture: verificationSkew})
	if perr, ok := errors.AsType[*dpop.Error](err); ok {
		return invalid(perr.Reason)
	}
	return &ActionProof{Type: ProofTypeJWS, Proof: *proof, Key: *sessionGateKey(s, key), Token: b.Execute.Token}, nil
}

// sessionGateKey is the device key of a session whose gate is a key: its gate_key, or its
// device key when it has none.
func sessionGateKey(s *Session, key *dpop.Key) *DeviceKey {
	kind := DeviceKeyGate
	if key.Thumbprint == s.KeyThumbprint {
		kind = DeviceKeyDevice
	}
	return &DeviceKey{Kind: kind, PublicKey: s.GateKey, Thumbprint: key.Thumbprint}
}

// checkPasskeyProof checks auth.webauthn against the session's gate passkey, takes its
// signature counter once, and keeps the new counter in the session.
func (e *Engine) checkPasskeyProof(ctx context.Context, req *request, b *executeRequest, a *PasskeyAssertion) (*ActionProof, *Problem) {
	s := req.Session
	invalid := func(detail string) (*ActionProof, *Problem) {
		return nil, newProblem(http.StatusForbidden, CodeInvalidDeviceProof, detail)
	}
	unavailable := func(err error) (*ActionProof, *Problem) {
		e.log.ErrorContext(ctx, "storing a passkey's counter failed", "requestId", req.ID, "tenant", req.Tenant.Key, "err", err)
		return nil, newProblem(http.StatusServiceUnavailable, CodeStoreUnavailable, "the engine cannot record the device check right now; try again")
	}
	device, err := e.passkeyDevice(s.GateCredential)
	if err != nil {
		return invalid(err.Error() + "; create a new session")
	}
	cred, counter, err := e.verifyPasskey(ctx, s, a, b.Execute.Token)
	if err != nil {
		return invalid(err.Error())
	}
	fresh, err := e.claimPasskeyCounter(ctx, req.Tenant.Key, device.CredentialID, counter, e.now().Add(e.sessionTTL))
	switch {
	case err != nil:
		return unavailable(err)
	case !fresh:
		return invalid("the passkey's signature counter was used before: a replayed assertion or a cloned authenticator")
	}
	// Keep the new signature counter, so that a replayed assertion is refused next time.
	updated := *s
	updated.GateCredential = cred
	if err := e.sessions.PutSession(ctx, &updated); err != nil {
		return unavailable(err)
	}
	raw, _ := json.Marshal(a)
	return &ActionProof{Type: ProofTypeWebAuthn, Proof: b64url.EncodeToString(raw), Key: *device, Token: b.Execute.Token}, nil
}

// runAction runs the action at most once: a token that already ran gets its first reply, one
// that is running gets 409, and one whose backend was not reached stays usable. canon is the
// arguments in canonical form as the user saw them (for the done card), sent as the backend
// gets them.
//
// Once claimed, the action runs to its end on a context of its own, bounded by its time-out: a
// client that goes away mid-call must not cancel a payment half-made, release the claim, and
// have its retry make the payment again. A failure that leaves the outcome unknown (a time-out,
// a broken answer) is recorded as such, so that the token never calls the backend again.
func (e *Engine) runAction(ctx context.Context, req *request, c *token.ActionClaims, b *executeRequest, canon, sent json.RawMessage, locale string, proof *ActionProof) ([]byte, bool, *Problem) {
	tool := b.Execute.Tool
	id := req.Tenant.Key + ":" + c.ID
	owner := uuid.NewString()
	timeout := req.Tenant.Limits.ToolTimeout.or(defaultToolLimit)
	prev, err := e.actions.BeginAction(ctx, id, owner, e.now().Add(timeout+actionLeaseMargin))
	switch {
	case errors.Is(err, ErrActionInProgress):
		p := newProblem(http.StatusConflict, CodeActionInProgress, "this action is already running; try again in a moment")
		p.Retryable = true
		return nil, false, p
	case err != nil:
		e.log.ErrorContext(ctx, "action store failed", "requestId", req.ID, "tenant", req.Tenant.Key, "err", err)
		return nil, false, newProblem(http.StatusServiceUnavailable, CodeStoreUnavailable, "the engine cannot record actions right now; try again")
	case prev != nil:
		return prev, true, nil
	}
	// From here the claim must end: recorded, or released when nothing reached the backend.
	actx := context.WithoutCancel(ctx)
	release := func() {
		if err := e.actions.AbandonAction(actx, id, owner); err != nil {
			e.log.ErrorContext(ctx, "releasing an action failed", "requestId", req.ID, "tenant", req.Tenant.Key, "err", err)
		}
	}
	// Its evidence is kept before anything moves: an action that cannot be recorded is refused.
	recorded, p := e.recordAction(actx, req, c, b, canon, locale, proof)
	if p != nil {
		release()
		return nil, false, p
	}
	env := req.toolEnv()
	env.IdempotencyKey = c.ID
	env.Proof = proof
	res, callErr := e.callAction(actx, req, env, ToolCall{ID: c.ID, Name: tool, Arguments: sent}, timeout)
	outcome := &ActionOutcome{Outcome: "ok"}
	if errors.Is(callErr, ErrToolNotReached) || errors.Is(callErr, ErrToolNotFound) {
		release()
		recorded(actx, &ActionOutcome{Time: e.now(), Outcome: "not_run"})
		e.log.WarnContext(ctx, "action failed", "requestId", req.ID, "tenant", req.Tenant.Key, "tool", tool, "err", callErr)
		return nil, false, newProblem(http.StatusBadGateway, CodeToolUnavailable, "the service could not be reached; nothing was done, try again")
	}
	var reply []byte
	if callErr != nil {
		e.log.ErrorContext(ctx, "action outcome unknown", "requestId", req.ID, "tenant", req.Tenant.Key, "tool", tool, "err", callErr)
		r := unknownOutcome(locale)
		outcome.Outcome, outcome.Reply = "unknown", &r
		reply, _ = json.Marshal(r)
	} else {
		toUser := e.userView(req.Tenant)
		r := maskReply(toUser, e.actionReply(req.Tenant, tool, canon, res, locale))
		outcome.Reply, outcome.Result = &r, toUser(string(res.Content))
		if res.IsError {
			outcome.Outcome = "declined"
		}
		reply, err = json.Marshal(r)
		if err != nil {
			reply = []byte(`{"done":{"type":"success","title":"Done","line1":"","line2":""},"speak":"Done."}`)
		}
	}
	outcome.Time = e.now()
	recorded(actx, outcome)
	if err := e.actions.FinishAction(actx, id, owner, reply, c.Expiry.Time()); err != nil {
		// The action ran: answer it, and say loudly that a replay could run it again.
		e.log.ErrorContext(ctx, "recording an action failed", "requestId", req.ID, "tenant", req.Tenant.Key, "tool", tool, "err", err)
	}
	e.log.InfoContext(ctx, "action", "requestId", req.ID, "tenant", req.Tenant.Key, "tool", tool, "declined", res.IsError,
		"outcomeUnknown", callErr != nil, "clientGone", ctx.Err() != nil)
	return reply, false, nil
}

// userView returns the masking of what the tenant's users are shown, one Shield for the whole
// reply: the done card, its line, and the result the record keeps.
func (e *Engine) userView(t *Tenant) func(string) string {
	if e.privacy != nil {
		if sh := e.privacy.Turn(t); sh != nil {
			return sh.ToUser
		}
	}
	return func(s string) string { return s }
}

// maskReply masks, under a privacy policy, what the done card shows of the backend's reply:
// the user and the action record see it as the turn's widgets are seen.
func maskReply(toUser func(string) string, r ExecuteResult) ExecuteResult {
	r.Done.Title, r.Done.Line1, r.Done.Line2 = toUser(r.Done.Title), toUser(r.Done.Line1), toUser(r.Done.Line2)
	r.Speak = toUser(r.Speak)
	return r
}

// unknownOutcome is the reply of an action whose backend may have run it but did not say so.
func unknownOutcome(tag string) ExecuteResult {
	cp := locale.UnknownOutcome(tag)
	return ExecuteResult{Done: Card{Type: "error", Title: cp.Title, Line1: cp.Line1, Line2: cp.Line2}, Speak: cp.Speak}
}

// callAction calls the tool with its time-out; a panic is a failure, never a crash.
func (e *Engine) callAction(ctx context.Context, req *request, env *ToolEnv, call ToolCall, timeout time.Duration) (res ToolResult, err error) {
	if e.toolset == nil {
		return ToolResult{}, ErrToolNotFound
	}
	defer func() {
		if v := recover(); v != nil {
			err = fmt.Errorf("the tool panicked: %T", v)
		}
	}()
	cctx, cancel := context.WithTimeout(ctx, timeout)
	defer cancel()
	ev := ToolEvent{RequestID: env.RequestID, Tenant: env.Tenant.Key, Environment: env.Environment.Name, SessionID: req.sessionID(),
		User: e.userOf(req), Tool: call.Name, CallID: call.ID, Action: true}
	res, err = e.observeTool(cctx, ev, func(ctx context.Context) (ToolResult, error) {
		return e.guardToolCall(ctx, env, call, func(ctx context.Context, c ToolCall) (ToolResult, error) {
			// What the user confirmed is what runs: a guard may refuse it, not change it.
			if c.Name != call.Name || !bytes.Equal(c.Arguments, call.Arguments) {
				return ToolResult{}, fmt.Errorf("%w: a guard changed a confirmed action", ErrToolNotReached)
			}
			return e.toolset.Call(ctx, env, c)
		})
	})
	if err == nil && !json.Valid(res.Content) {
		err = errors.New("the tool answered with invalid JSON")
	}
	return res, err
}

// actionReply builds the terminal card and its spoken line: the backend's own when its result
// carries one, else the tenant's copy for the locale, filled from the arguments and the result.
func (e *Engine) actionReply(t *Tenant, tool string, args json.RawMessage, res ToolResult, tag string) ExecuteResult {
	copies, fallback := t.Actions[tool].Done, locale.Done
	if res.IsError {
		copies, fallback = t.Actions[tool].Declined, locale.Declined
	}
	cp, ok := locale.Lookup(copies, tag, t.Locale)
	if !ok {
		cp = CardCopy(fallback(tag))
	}
	typ, c := fill.Reply(res.Content, args, res.IsError, fill.Copy(cp))
	return ExecuteResult{Done: Card{Type: typ, Title: c.Title, Line1: c.Line1, Line2: c.Line2}, Speak: c.Speak}
}
