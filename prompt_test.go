package engine

import (
	"bytes"
	"context"
	"encoding/json"
	"io"
	"iter"
	"log/slog"
	"reflect"
	"strings"
	"testing"
)

type silentModel struct{}

func (silentModel) Stream(context.Context, *ModelRequest) iter.Seq2[ModelEvent, error] {
	return func(yield func(ModelEvent, error) bool) { yield(FinishEvent(FinishStop), nil) }
}

type listTools []Tool

func (l listTools) Tools(context.Context, *ToolEnv) ([]Tool, error) { return l, nil }
func (l listTools) Call(context.Context, *ToolEnv, ToolCall) (ToolResult, error) {
	return ToolResult{}, ErrToolNotFound
}

// TestStablePromptIsTheSameForEveryTurn checks that the warm-up request is exactly the stable
// part of every turn of the tenant, whatever its mode, locale, country, screen or metadata, and
// that the turn's facts reach the model in Context and the client's data in a quoted message.
func TestStablePromptIsTheSameForEveryTurn(t *testing.T) {
	tenant := &Tenant{Key: "pk_w", Name: "W", Prompt: "You are W's assistant.",
		Environments: map[string]*Environment{EnvProduction: {BackendURL: "http://127.0.0.1:1"}}}
	if err := tenant.Validate(); err != nil {
		t.Fatal(err)
	}
	store, _ := NewStaticTenants(tenant)
	tools := listTools{{Name: "get_balance", Parameters: json.RawMessage(`{"type":"object"}`)}, {Name: "transfer", Action: true}}
	e, err := New(Config{Tenants: store, Model: silentModel{}, Toolset: tools, SigningKey: bytes.Repeat([]byte{1}, 32),
		Logger: slog.New(slog.NewTextHandler(io.Discard, nil))})
	if err != nil {
		t.Fatal(err)
	}
	defer e.Close()
	env := &ToolEnv{Tenant: tenant, Environment: tenant.Environments[EnvProduction]}
	_, specs := describeTools(tenant, tools, nil)
	warm := e.warmRequest(env, specs)
	if warm.Context != "" || len(warm.Messages) != 0 || !strings.HasPrefix(warm.System, "You are W's assistant.") {
		t.Errorf("warm request %+v", warm)
	}
	for _, body := range []string{
		`{"transcript":"hi"}`,
		`{"transcript":"hola","mode":"voice","meta":{"locale":"es-MX"},"context":{"country_code":"mx","screen":"home"}}`,
		`{"mode":"home"}`,
	} {
		var b turnRequest
		if err := json.Unmarshal([]byte(body), &b); err != nil {
			t.Fatal(err)
		}
		req := &request{ID: "prod-2", Tenant: tenant, Environment: tenant.Environments[EnvProduction], UserToken: "other",
			Metadata: map[string]any{"userId": "u-9"}}
		tr, p := newTurn(req, &b)
		if p != nil {
			t.Fatal(p)
		}
		if p := e.loadTools(context.Background(), tr); p != nil {
			t.Fatal(p)
		}
		turn := e.modelRequest(tr)
		if turn.System != warm.System || !reflect.DeepEqual(turn.Tools, warm.Tools) {
			t.Errorf("%s: the turn's stable part differs from the warm-up's:\n%q\n%q", body, turn.System, warm.System)
		}
		if !strings.Contains(turn.Context, tr.locale) || strings.Contains(turn.Context, "u-9") || strings.Contains(turn.System, "u-9") {
			t.Errorf("%s: context %q", body, turn.Context)
		}
		// The client's data is quoted in the conversation, just before what the user said.
		data := turn.Messages[0]
		if !data.IsAppContext() || !strings.Contains(data.Content, `"userId":"u-9"`) {
			t.Errorf("%s: messages %+v", body, turn.Messages)
		}
	}
}
