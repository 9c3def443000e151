package engine

import (
	"bytes"
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"runtime/debug"

	"golang.org/x/sync/errgroup"

	"github.com/convengine/engine/internal/jsonenc"
	"github.com/convengine/engine/internal/locale"
	"github.com/convengine/engine/widgets"
)

// maxParallelTools bounds the data tools of one step that run at once.
const maxParallelTools = 8

// handleCalls answers the tool calls of one model step, in the order the model made them: UI
// calls become widgets, action calls confirm widgets, and data calls run through the Toolset,
// in parallel. It reports whether the model must see the results: a data tool ran, or a widget
// was refused, which the model may send again corrected.
func (e *Engine) handleCalls(ctx context.Context, t *turn, calls []ToolCall) ([]Message, bool) {
	results := make([]Message, len(calls))
	seeResults := false
	var g *errgroup.Group // made for the first data call
	for i, c := range calls {
		reply := func(content any, isError bool) {
			results[i] = toolMessage(c, content, isError)
		}
		// Under a Shield, widgets show values masked; other calls get them back, or fail.
		if t.shield != nil && (widgets.IsUITool(c.Name) || e.hostWidgets[c.Name] != nil) {
			if bytes.Contains(c.Arguments, []byte(`\u`)) { // "\u0034111…" is masked as "4111…" is
				if canon, err := jsonenc.Canonicalize(c.Arguments); err == nil {
					c.Arguments = canon
				}
			}
			c.Arguments = json.RawMessage(t.shield.ToUser(string(c.Arguments)))
		} else if t.shield != nil {
			args, err := t.shield.Restore(c.Arguments)
			if err != nil {
				reply(toolError("invalid_arguments", err.Error()), true)
				seeResults = true
				continue
			}
			c.Arguments = args
		}
		switch {
		case widgets.IsUITool(c.Name) || e.hostWidgets[c.Name] != nil:
			var err error
			if widgets.IsUITool(c.Name) {
				err = t.applyUI(c)
			} else {
				err = e.applyHostWidget(t, e.hostWidgets[c.Name], c)
			}
			if err != nil {
				e.log.WarnContext(ctx, "dropped an invalid widget", "requestId", t.req.ID, "tenant", t.req.Tenant.Key, "tool", c.Name, "err", err)
				reply(toolError("invalid_widget", err.Error()), true)
				seeResults = true
				continue
			}
			results[i] = Message{Role: RoleTool, ToolCallID: c.ID, Name: c.Name, Content: uiShown}
		case t.req.Tenant.IsAction(c.Name):
			if err := e.checkArguments(t, c); err != nil {
				reply(toolError("invalid_arguments", err.Error()), true)
				continue
			}
			w, err := e.confirmWidget(t, c)
			if errors.Is(err, errNotShownExactly) {
				e.log.WarnContext(ctx, "refused an action the user could not see exactly", "requestId", t.req.ID, "tenant", t.req.Tenant.Key, "tool", c.Name)
				reply(toolError("invalid_arguments", err.Error()), true)
				continue
			}
			if err != nil {
				e.log.ErrorContext(ctx, "confirm widget failed", "requestId", t.req.ID, "tenant", t.req.Tenant.Key, "tool", c.Name, "err", err)
				reply(toolError("action_unavailable", "the action cannot be offered right now"), true)
				continue
			}
			t.widgets = append(t.widgets, w)
			results[i] = Message{Role: RoleTool, ToolCallID: c.ID, Name: c.Name, Content: confirmationRequested}
		default:
			tool, ok := t.tools[c.Name]
			switch {
			case !ok:
				reply(toolError("unknown_tool", fmt.Sprintf("there is no tool named %q", c.Name)), true)
				continue
			case tool.Action:
				reply(toolError("action_not_allowed", "this action is not enabled for this assistant"), true)
				continue
			}
			if err := e.checkArguments(t, c); err != nil {
				reply(toolError("invalid_arguments", err.Error()), true)
				continue
			}
			seeResults = true
			t.toolCalls++
			if g == nil {
				g = new(errgroup.Group)
				g.SetLimit(maxParallelTools)
			}
			// The status goes out from the turn's goroutine, as every event does, when the
			// call is about to run.
			status := tool.Status
			if status == "" {
				status = locale.Working(t.locale)
			}
			t.out.Status(status, tool.Name)
			g.Go(func() error {
				results[i] = e.callTool(ctx, t, tool, c)
				return nil
			})
		}
	}
	if g != nil {
		g.Wait()
	}
	if e.recorder != nil {
		for i, c := range calls { // the widgets and confirms are in the spec the record keeps
			if !widgets.IsUITool(c.Name) && e.hostWidgets[c.Name] == nil && !t.req.Tenant.IsAction(c.Name) {
				t.records = append(t.records, ToolRecord{ID: c.ID, Name: c.Name, Arguments: t.toUser(string(c.Arguments)),
					Result: t.toUser(results[i].Content), IsError: results[i].IsError})
			}
		}
	}
	return results, seeResults
}

// The results of UI and action calls that succeeded, as encoding/json writes them.
const (
	uiShown               = `{"shown":true}`
	confirmationRequested = `{"note":"The user will be asked to confirm on their device. Do not say it is done.","status":"confirmation_requested"}`
)

// checkArguments validates a call's arguments against the tool's JSON Schema.
func (e *Engine) checkArguments(t *turn, c ToolCall) error {
	tool, ok := t.tools[c.Name]
	if !ok {
		if t.req.Tenant.IsAction(c.Name) {
			return fmt.Errorf("the action %s is not offered by the tenant's tools", c.Name)
		}
		return fmt.Errorf("there is no tool named %q", c.Name)
	}
	return e.schemas.Check(tool.Parameters, c.Arguments)
}

// callTool runs one data tool with its own time-out.
func (e *Engine) callTool(ctx context.Context, t *turn, tool Tool, c ToolCall) Message {
	timeout := tool.Timeout
	if timeout <= 0 {
		timeout = t.req.Tenant.Limits.ToolTimeout.or(defaultToolLimit)
	}
	cctx, cancel := context.WithTimeout(ctx, timeout)
	defer cancel()
	start := e.now()
	ev := ToolEvent{RequestID: t.req.ID, Tenant: t.req.Tenant.Key, Environment: t.req.Environment.Name, TurnID: t.turnID,
		SessionID: t.sessionID, User: t.userKey, Tool: c.Name, CallID: c.ID}
	res, err := e.observeTool(cctx, ev, func(ctx context.Context) (ToolResult, error) {
		return e.guardToolCall(ctx, t.env, c, func(ctx context.Context, c ToolCall) (ToolResult, error) { return e.safeCall(ctx, t, c) })
	})
	switch {
	case err == nil && !json.Valid(res.Content):
		err = errors.New("the tool answered with invalid JSON")
	case err == nil:
		e.log.DebugContext(ctx, "tool call", "requestId", t.req.ID, "tenant", t.req.Tenant.Key, "tool", c.Name,
			"isError", res.IsError, "duration", e.now().Sub(start))
		content := string(res.Content)
		if t.shield != nil { // a backend's values reach the model as the user's do
			content = t.shield.ToModel(content)
		}
		return Message{Role: RoleTool, ToolCallID: c.ID, Name: c.Name, Content: content, IsError: res.IsError}
	}
	if ctx.Err() != nil {
		return toolMessage(c, toolError("cancelled", "the turn ended"), true)
	}
	reason := "the tool is unavailable"
	if cctx.Err() == context.DeadlineExceeded {
		reason = fmt.Sprintf("the tool did not answer within %s", timeout)
	}
	e.log.WarnContext(ctx, "tool call failed", "requestId", t.req.ID, "tenant", t.req.Tenant.Key, "tool", c.Name,
		"duration", e.now().Sub(start), "err", err)
	return toolMessage(c, toolError("tool_unavailable", reason), true)
}

// safeCall calls the Toolset and turns a panic into an error, so that one broken tool cannot
// take the process down from its goroutine.
func (e *Engine) safeCall(ctx context.Context, t *turn, c ToolCall) (res ToolResult, err error) {
	defer func() {
		if v := recover(); v != nil {
			e.log.ErrorContext(ctx, "tool panicked", "requestId", t.req.ID, "tenant", t.req.Tenant.Key, "tool", c.Name,
				"panic", fmt.Sprintf("%T", v), "stack", string(debug.Stack()))
			res, err = ToolResult{}, errors.New("the tool panicked")
		}
	}()
	return e.toolset.Call(ctx, t.env, c)
}

// applyUI turns a UI tool call into a widget, the follow-up line or the suggestions.
func (t *turn) applyUI(c ToolCall) error {
	switch c.Name {
	case widgets.ToolSetFollow:
		s, err := widgets.FollowFromToolCall(c.Arguments)
		if err == nil {
			t.follow = s
		}
		return err
	case widgets.ToolSetSuggestions:
		s, err := widgets.SuggestionsFromToolCall(c.Arguments)
		if err == nil {
			t.suggestions = s
		}
		return err
	}
	if len(t.widgets) >= widgets.MaxWidgets {
		return fmt.Errorf("a spec holds at most %d widgets", widgets.MaxWidgets)
	}
	w, err := widgets.FromToolCall(c.Name, c.Arguments)
	if err == nil {
		t.widgets = append(t.widgets, w)
	}
	return err
}

func toolError(code, message string) map[string]string {
	return map[string]string{"error": code, "message": message}
}

func toolMessage(c ToolCall, content any, isError bool) Message {
	b, _ := json.Marshal(content)
	return Message{Role: RoleTool, ToolCallID: c.ID, Name: c.Name, Content: string(b), IsError: isError}
}
