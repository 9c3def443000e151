package engine

import (
	"context"
	"errors"
	"fmt"
	"runtime/debug"

	"github.com/convengine/engine/widgets"
)

// Guards are the host's hooks on what a turn may do: refuse it, redact what reaches the model,
// refuse or audit each tool call, edit the finished spec. Every hook is optional. They run in
// this order, for every way in (POST /engine, the voice socket, Engine.Turn):
//
//  1. BeforeTurn, once the turn is validated and its audio heard, before its tools are listed.
//  2. ModelRequest, before each completion: the first, and each after tool results.
//  3. ToolCall, around each data tool's call during the turn, and around the action's call
//     when a confirmed action is executed.
//  4. Spec, on the finished spec, before its widgets and done are sent.
//
// A guard that returns an error, or panics, fails what it guards safely: before the stream, a
// problem (a *Problem it returns is the response as is; any other is logged and answered 500
// internal); during the turn, the turn's error event (internal) and the apology, with no
// widget; around a tool, the call's failure, which the model is told of. Hooks are called from
// many goroutines at once.
type Guards struct {
	// BeforeTurn may refuse a turn: an error refuses it before it starts, as a problem (use
	// NewProblem for the host's own status and code); a non-empty speak answers it with those
	// words instead of the model's, without tools or widgets.
	BeforeTurn func(ctx context.Context, t *TurnInfo) (speak string, err error)
	// ModelRequest may change what the model is given, such as redacting personal data from
	// the messages (the transcript, the history, the tool results); it is called with the
	// request the model will receive. The engine's logs never hold messages.
	ModelRequest func(ctx context.Context, t *TurnInfo, req *ModelRequest) error
	// ToolCall runs around each tool call: next calls the tool. It may refuse the call by
	// returning a result without calling next (IsError true: the model, or the action's card,
	// says it was declined), change the call or its result, or audit both. An error that
	// wraps ErrToolNotReached means the tool was not called.
	ToolCall func(ctx context.Context, env *ToolEnv, call ToolCall, next func(context.Context, ToolCall) (ToolResult, error)) (ToolResult, error)
	// Spec may edit the finished spec (its widgets, follow-up and suggestions). Its speak and
	// meta are kept as they were: the speech has already been streamed.
	Spec func(ctx context.Context, t *TurnInfo, spec *widgets.Spec) error
}

// TurnInfo is what a guard knows of a turn.
type TurnInfo struct {
	// Env is the turn's environment: its tenant, environment, user token, request id, client
	// metadata and forwarded headers.
	Env            *ToolEnv
	TurnID         string
	ConversationID string
	// SessionID is the turn's session, "" without one.
	SessionID string
	Mode      Mode
	Locale    string
	// Transcript is what the user said or typed; Heard reports that it came from audio.
	Transcript string
	Heard      bool
}

func (t *turn) info() *TurnInfo {
	return &TurnInfo{Env: t.env, TurnID: t.turnID, ConversationID: t.conversationID, SessionID: t.sessionID,
		Mode: t.mode, Locale: t.locale, Transcript: t.transcript, Heard: t.heard}
}

// errGuard marks a guard's failure.
var errGuard = errors.New("engine: a guard failed")

// guarded runs a guard, turning a panic into an error, and logs its failures.
func (e *Engine) guarded(ctx context.Context, name string, req *request, f func() error) (err error) {
	defer func() {
		if v := recover(); v != nil {
			e.log.ErrorContext(ctx, "guard panicked", "guard", name, "requestId", req.ID, "tenant", req.Tenant.Key,
				"panic", fmt.Sprintf("%T", v), "stack", string(debug.Stack()))
			err = fmt.Errorf("%w: %s panicked", errGuard, name)
		}
	}()
	if err = f(); err != nil {
		if _, ok := errors.AsType[*Problem](err); !ok {
			e.log.ErrorContext(ctx, "guard failed", "guard", name, "requestId", req.ID, "tenant", req.Tenant.Key, "err", err)
		}
	}
	return err
}

// beforeTurn runs the BeforeTurn guard: a problem refuses the turn, and a line answers it.
func (e *Engine) beforeTurn(ctx context.Context, t *turn) *Problem {
	if e.guards.BeforeTurn == nil {
		return nil
	}
	var speak string
	err := e.guarded(ctx, "BeforeTurn", t.req, func() (err error) {
		speak, err = e.guards.BeforeTurn(ctx, t.info())
		return err
	})
	if err != nil {
		return problemOf(err) // a guard's own problem, or 500 internal
	}
	t.guardAnswer = speak
	return nil
}

// guardModelRequest runs the ModelRequest guard before a completion.
func (e *Engine) guardModelRequest(ctx context.Context, t *turn, mreq *ModelRequest) error {
	if e.guards.ModelRequest == nil {
		return nil
	}
	return e.guarded(ctx, "ModelRequest", t.req, func() error { return e.guards.ModelRequest(ctx, t.info(), mreq) })
}

// guardSpec runs the Spec guard on the finished spec, keeping what was already streamed.
func (e *Engine) guardSpec(t *turn, spec *widgets.Spec) error {
	if e.guards.Spec == nil {
		return nil
	}
	speak, meta := spec.Speak, spec.Meta
	err := e.guarded(t.ctx, "Spec", t.req, func() error { return e.guards.Spec(t.ctx, t.info(), spec) })
	spec.Speak, spec.Meta = speak, meta
	if err == nil && len(spec.Widgets) > widgets.MaxWidgets {
		err = fmt.Errorf("%w: Spec left %d widgets, more than %d", errGuard, len(spec.Widgets), widgets.MaxWidgets)
	}
	return err
}

// guardToolCall calls a tool through the ToolCall guard, when there is one.
func (e *Engine) guardToolCall(ctx context.Context, env *ToolEnv, call ToolCall, next func(context.Context, ToolCall) (ToolResult, error)) (res ToolResult, err error) {
	if e.guards.ToolCall == nil {
		return next(ctx, call)
	}
	defer func() {
		if v := recover(); v != nil {
			e.log.ErrorContext(ctx, "guard panicked", "guard", "ToolCall", "requestId", env.RequestID, "tenant", env.Tenant.Key,
				"tool", call.Name, "panic", fmt.Sprintf("%T", v), "stack", string(debug.Stack()))
			res, err = ToolResult{}, fmt.Errorf("%w: ToolCall panicked", errGuard)
		}
	}()
	return e.guards.ToolCall(ctx, env, call, next)
}
