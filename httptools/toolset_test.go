package httptools_test

import (
	"context"
	"encoding/json"
	"errors"
	"reflect"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/convengine/engine"
	"github.com/convengine/engine/httptools"
)

// tenantWith returns a tenant whose tools are raw, its production backend at backendURL.
func tenantWith(raw, backendURL string) *engine.Tenant {
	return &engine.Tenant{
		Key:          "demo",
		Name:         "Demo",
		Tools:        json.RawMessage(raw),
		Environments: map[string]*engine.Environment{engine.EnvProduction: {Name: engine.EnvProduction, BackendURL: backendURL}},
	}
}

func envOf(t *engine.Tenant) *engine.ToolEnv {
	return &engine.ToolEnv{
		Tenant:      t,
		Environment: t.Environments[engine.EnvProduction],
		UserToken:   "user-token-123",
		RequestID:   "prod-req-1",
	}
}

func TestTools(t *testing.T) {
	tenant := tenantWith(`[
		{"name":"get_balance","description":"Balance.","parameters":{"type":"object","properties":{}},"method":"GET","path":"/balance","status":"Checking your balance","timeout":"5s"},
		{"name":"transfer","description":"Send money.","method":"POST","path":"/transfers","action":true}
	]`, "http://backend.invalid")
	ts := httptools.New(nil)
	got, err := ts.Tools(context.Background(), envOf(tenant))
	if err != nil {
		t.Fatal(err)
	}
	want := []engine.Tool{
		{Name: "get_balance", Description: "Balance.", Parameters: json.RawMessage(`{"type":"object","properties":{}}`), Status: "Checking your balance", Timeout: 5 * time.Second},
		{Name: "transfer", Description: "Send money.", Parameters: json.RawMessage(`{"type":"object","properties":{}}`), Action: true},
	}
	if !reflect.DeepEqual(got, want) {
		t.Errorf("Tools =\n%+v\nwant\n%+v", got, want)
	}

	// The list is the caller's: changing it changes nothing for the next call.
	got[0].Name = "changed"
	again, _ := ts.Tools(context.Background(), envOf(tenant))
	if again[0].Name != "get_balance" {
		t.Errorf("Tools returned a list shared between calls")
	}
}

func TestToolsNone(t *testing.T) {
	tools, err := httptools.New(nil).Tools(context.Background(), envOf(tenantWith("", "http://backend.invalid")))
	if err != nil || len(tools) != 0 {
		t.Errorf("Tools of a tenant without tools = %v, %v", tools, err)
	}
}

func TestToolsInvalidConfig(t *testing.T) {
	tenant := tenantWith(`[{"name":"t","method":"GET","path":"t"}]`, "http://backend.invalid")
	ts := httptools.New(nil)
	for range 2 { // the error is kept, not only returned the first time
		_, err := ts.Tools(context.Background(), envOf(tenant))
		if err == nil || !strings.Contains(err.Error(), "tools[0].path: must start with /") || !strings.Contains(err.Error(), `"demo"`) {
			t.Errorf("Tools = %v, want the parse error naming the tenant and the field", err)
		}
		_, err = ts.Call(context.Background(), envOf(tenant), engine.ToolCall{Name: "t"})
		if err == nil || !strings.Contains(err.Error(), "tools[0].path") {
			t.Errorf("Call = %v, want the parse error", err)
		}
	}
}

func TestToolsNoTenant(t *testing.T) {
	ts := httptools.New(nil)
	if _, err := ts.Tools(context.Background(), &engine.ToolEnv{}); err == nil {
		t.Error("Tools without a tenant succeeded")
	}
	if _, err := ts.Call(context.Background(), nil, engine.ToolCall{Name: "t"}); err == nil {
		t.Error("Call without an environment succeeded")
	}
}

func TestToolsConcurrent(t *testing.T) {
	ts := httptools.New(nil)
	tenants := make([]*engine.Tenant, 4)
	for i := range tenants {
		tenants[i] = tenantWith(`[{"name":"t","method":"GET","path":"/t"}]`, "http://backend.invalid")
	}
	var wg sync.WaitGroup
	errs := make(chan error, 100)
	for i := range 100 {
		wg.Go(func() {
			tools, err := ts.Tools(context.Background(), envOf(tenants[i%len(tenants)]))
			if err == nil && (len(tools) != 1 || tools[0].Name != "t") {
				err = errors.New("wrong tools")
			}
			if err != nil {
				errs <- err
			}
		})
	}
	wg.Wait()
	close(errs)
	for err := range errs {
		t.Error(err)
	}
}
