package main

import (
	"encoding/json"
	"net/http"
	"net/http/httptest"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/convengine/engine"
	"github.com/convengine/engine/examples/demobank"
)

// TestTenantLogPolicy runs two tenants whose MCP server refuses them with a message that names
// the user's phone number and card, which the engine logs ("listing tools failed"): the
// server's log masks the phone number in the line of the tenant whose policy says so, not in
// the other's, and the card in both.
func TestTenantLogPolicy(t *testing.T) {
	const (
		phone = "+34 612 345 678"
		card  = "4111 1111 1111 1111"
	)
	// The backend's MCP endpoint refuses the session, as an authorization layer in front of it
	// would, with a JSON-RPC error that quotes the account's details.
	backend := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		w.Header().Set("Content-Type", "application/json")
		w.WriteHeader(http.StatusForbidden)
		w.Write([]byte(`{"jsonrpc":"2.0","id":1,"error":{"code":-32001,"message":"account locked: call ` + phone + ` about card ` + card + `"}}`))
	}))
	defer backend.Close()

	var tenants []*engine.Tenant
	for key, policy := range map[string]string{
		"pk_masks":  `{"preset":"banking","kinds":{"phone":{"model":"pass","logs":"mask"}}}`,
		"pk_passes": `{"preset":"banking"}`,
	} {
		tn, err := demobank.Tenant("http://placeholder.invalid", "")
		if err != nil {
			t.Fatal(err)
		}
		tn.Environments[engine.EnvProduction].BackendURL = "${BANK_URL}"
		tn.Key, tn.Tools, tn.MCP, tn.Privacy = key, nil, json.RawMessage(`{"path":"/mcp"}`), json.RawMessage(policy)
		tenants = append(tenants, tn)
	}
	data, err := json.Marshal(map[string]any{"tenants": tenants})
	if err != nil {
		t.Fatal(err)
	}
	path := filepath.Join(t.TempDir(), "tenants.json")
	if err := os.WriteFile(path, data, 0o600); err != nil {
		t.Fatal(err)
	}
	base, _, logs := startServerLogs(t, []string{"-tenants", path}, map[string]string{"BANK_URL": backend.URL})

	lineOf := func(key string) string {
		t.Helper()
		req, _ := http.NewRequest(http.MethodPost, base+"/engine", strings.NewReader(`{"transcript":"what is my balance"}`))
		req.Header.Set("X-Engine-Key", key)
		req.Header.Set("X-Token", "demo-user-token")
		req.Header.Set("X-Request-ID", "prod-logs-1")
		req.Header.Set("Content-Type", "application/json")
		resp, err := http.DefaultClient.Do(req)
		if err != nil {
			t.Fatal(err)
		}
		var p engine.Problem
		json.NewDecoder(resp.Body).Decode(&p)
		resp.Body.Close()
		if resp.StatusCode != http.StatusBadGateway || p.Code != engine.CodeToolsUnavailable {
			t.Fatalf("%d %+v, want 502 tools_unavailable", resp.StatusCode, p)
		}
		for wait := time.Now().Add(5 * time.Second); time.Now().Before(wait); time.Sleep(10 * time.Millisecond) {
			for _, l := range strings.Split(logs.String(), "\n") {
				if strings.Contains(l, `"tenant":"`+key+`"`) && strings.Contains(l, "account locked") {
					return l
				}
			}
		}
		t.Fatalf("no log line of %s quotes the backend's refusal:\n%s", key, logs.String())
		return ""
	}
	masks, passes := lineOf("pk_masks"), lineOf("pk_passes")
	if strings.Contains(masks, phone) || !strings.Contains(masks, "call •••• 5678") {
		t.Errorf("the phone number is not masked in the line of the tenant whose policy masks it:\n%s", masks)
	}
	if !strings.Contains(passes, phone) {
		t.Errorf("the phone number is masked in the line of a tenant whose policy does not look for it:\n%s", passes)
	}
	for _, l := range []string{masks, passes} {
		if strings.Contains(l, card) || !strings.Contains(l, "card •••• 1111") {
			t.Errorf("the card is not masked:\n%s", l)
		}
	}
}
