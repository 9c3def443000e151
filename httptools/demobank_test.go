package httptools_test

import (
	"context"
	"encoding/json"
	"net/http/httptest"
	"reflect"
	"sync"
	"testing"
	"time"

	"github.com/convengine/engine"
	"github.com/convengine/engine/examples/demobank"
	"github.com/convengine/engine/httptools"
)

// TestDemoBank calls the demo bank through its own tool configuration, as the engine's demo does.
func TestDemoBank(t *testing.T) {
	bank := demobank.New(&demobank.Options{Now: func() time.Time { return time.Date(2026, 11, 20, 9, 0, 0, 0, time.UTC) }})
	srv := httptest.NewServer(bank)
	defer srv.Close()
	ts := httptools.New(nil)
	env := envOf(tenantWith(string(demobank.ToolsJSON), srv.URL))
	ctx := context.Background()

	tools, err := ts.Tools(ctx, env)
	if err != nil {
		t.Fatal(err)
	}
	var names []string
	for _, tool := range tools {
		names = append(names, tool.Name)
		if tool.Action != (tool.Name == "transfer") {
			t.Errorf("tool %s: Action = %v", tool.Name, tool.Action)
		}
	}
	if want := []string{"get_balance", "list_transactions", "get_card", "get_savings_goal", "transfer"}; !reflect.DeepEqual(names, want) {
		t.Fatalf("tools %v, want %v", names, want)
	}

	call := func(name, args string) engine.ToolResult {
		t.Helper()
		res, err := ts.Call(ctx, env, engine.ToolCall{ID: "call-" + name, Name: name, Arguments: json.RawMessage(args)})
		if err != nil {
			t.Fatalf("%s(%s): %v", name, args, err)
		}
		return res
	}
	field := func(res engine.ToolResult, key string) any {
		t.Helper()
		var m map[string]any
		if err := json.Unmarshal(res.Content, &m); err != nil {
			t.Fatalf("result %s: %v", res.Content, err)
		}
		return m[key]
	}

	tests := []struct {
		name, tool, args string
		key              string
		want             any
		isError          bool
	}{
		{"balance", "get_balance", `{}`, "formatted", "$1,234.56", false},
		{"savings", "get_balance", `{"account":"savings"}`, "formatted", "$2,500.00", false},
		{"bad account", "get_balance", `{"account":"brokerage"}`, "error", "invalid_request", true},
		{"goal", "get_savings_goal", `{}`, "percent", "65%", false},
		{"card", "get_card", `{}`, "masked", "•••• 4242", false},
		{"unknown payee", "transfer", `{"amount":20,"to":"Mallory"}`, "error", "unknown_payee", true},
		{"too much", "transfer", `{"amount":5000,"to":"Alex"}`, "error", "insufficient_funds", true},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			res := call(tt.tool, tt.args)
			if res.IsError != tt.isError || field(res, tt.key) != tt.want {
				t.Errorf("%s(%s) = %s IsError=%v; want %s %v", tt.tool, tt.args, res.Content, res.IsError, tt.key, tt.want)
			}
		})
	}

	res := call("list_transactions", `{"limit":3.0}`)
	if txs, _ := field(res, "transactions").([]any); res.IsError || len(txs) != 3 {
		t.Errorf("list_transactions(limit 3) = %s", res.Content)
	}

	// A confirmed transfer, retried by the client: the key makes it one transfer.
	env.IdempotencyKey = "jti-1"
	var wg sync.WaitGroup
	results := make([]engine.ToolResult, 5)
	for i := range results {
		wg.Go(func() {
			r, err := ts.Call(ctx, env, engine.ToolCall{Name: "transfer", Arguments: json.RawMessage(`{"amount":20,"to":"Alex","currency":"USD"}`)})
			if err != nil {
				t.Error(err)
			}
			results[i] = r
		})
	}
	wg.Wait()
	for _, r := range results {
		if r.IsError || field(r, "balance_formatted") != "$1,214.56" || field(r, "to") != "Alex" {
			t.Errorf("transfer = %s", r.Content)
		}
	}
	if n := bank.Transfers("user-token-123"); n != 1 {
		t.Errorf("the bank executed %d transfers, want 1", n)
	}
	if b := bank.Balance("user-token-123", "checking"); b != 1214.56 {
		t.Errorf("checking holds %v, want 1214.56", b)
	}
	if got := field(call("get_balance", `{"account":"checking"}`), "formatted"); got != "$1,214.56" {
		t.Errorf("balance after the transfer: %v", got)
	}

	// Another user of the same tenant has accounts of their own.
	other := *env
	other.UserToken = "someone-else"
	other.IdempotencyKey = ""
	r, err := ts.Call(ctx, &other, engine.ToolCall{Name: "get_balance"})
	if err != nil || field(r, "formatted") != "$1,234.56" {
		t.Errorf("the other user's balance = %s, %v", r.Content, err)
	}
}
