package main

import (
	"encoding/json"
	"io"
	"net/http"
	"net/http/httptest"
	"os"
	"path/filepath"
	"strconv"
	"strings"
	"sync/atomic"
	"testing"

	"github.com/convengine/engine"
	"github.com/convengine/engine/enginetest"
	"github.com/convengine/engine/examples/demobank"
	"github.com/convengine/engine/widgets"
)

// regionServer is an OpenAI-compatible server of a region: it answers the demo's
// conversations, or 500 with OpenAI's error while down, and counts what it receives.
type regionServer struct {
	*enginetest.ReplayServer
	down atomic.Bool
}

func newRegionServer(t *testing.T) *regionServer {
	s := &regionServer{}
	s.ReplayServer = enginetest.NewReplayServer(t, enginetest.OpenAIFixtures(), func(r *enginetest.ReplayRequest) string {
		if s.down.Load() {
			return "server_error"
		}
		return enginetest.DemoRoute(r)
	})
	return s
}

// tenantsWithChains writes a tenants file: models eu1 and eu2 of region eu and us1 of region
// us; pk_eu pinned to eu with the chain eu, pk_us on us1.
func tenantsWithChains(t *testing.T, bankURL string, eu1, eu2, us1 string, euChain []string) string {
	t.Helper()
	tenant := func(key string, model any, region string) map[string]any {
		d, _ := demobank.Tenant(bankURL, "")
		d.Key = key
		raw, _ := json.Marshal(d)
		var m map[string]any
		json.Unmarshal(raw, &m)
		m["model"] = model
		if region != "" {
			m["data_region"] = region
		}
		return m
	}
	data, _ := json.Marshal(map[string]any{
		"models": map[string]any{
			"eu1": map[string]string{"base_url": eu1, "model": "gpt-4o-mini", "region": "eu"},
			"eu2": map[string]string{"base_url": eu2, "model": "gpt-4o-mini", "region": "eu"},
			"us1": map[string]string{"base_url": us1, "model": "gpt-4o-mini", "region": "us"},
		},
		"tenants": []any{tenant("pk_eu", euChain, "eu"), tenant("pk_us", "us1", "")},
	})
	path := filepath.Join(t.TempDir(), "tenants.json")
	if err := os.WriteFile(path, data, 0o600); err != nil {
		t.Fatal(err)
	}
	return path
}

// TestChainPinnedToItsRegion: a tenant pinned to eu is answered by its chain's second model
// when the first is down; when both are, its turns fail with model_unavailable, first as the
// stream's error event, and once both breakers are open before the stream starts, 503 with
// Retry-After. The us server never receives anything of it.
func TestChainPinnedToItsRegion(t *testing.T) {
	eu1, eu2, us1 := newRegionServer(t), newRegionServer(t), newRegionServer(t)
	eu1.down.Store(true)
	bank := httptest.NewServer(demobank.New(nil))
	defer bank.Close()
	path := tenantsWithChains(t, bank.URL, eu1.URL, eu2.URL, us1.URL, []string{"eu1", "eu2"})
	base, _ := startServer(t, []string{"-tenants", path}, nil)

	_, spec := turnAs(t, base, "pk_eu", "prod-eu-1", `{"transcript":"what is my balance"}`)
	if spec.Meta.Error != "" || len(spec.Widgets) != 1 || spec.Widgets[0].WidgetType() != widgets.TypeStat {
		t.Fatalf("the answer through eu2: %+v", spec)
	}
	if len(eu2.Requests()) != 2 || len(eu1.Requests()) != 2 {
		t.Errorf("eu1 got %d requests, eu2 %d: want each step tried once on eu1, answered by eu2", len(eu1.Requests()), len(eu2.Requests()))
	}

	eu2.down.Store(true)
	refused := 0
	for i := range 8 {
		id := "prod-eu-down-" + strconv.Itoa(i)
		status, retryAfter, body := postTurnRaw(t, base, "pk_eu", id)
		switch {
		case status == http.StatusServiceUnavailable:
			refused++
			if !strings.Contains(body, `"code":"model_unavailable"`) || retryAfter == "" {
				t.Errorf("turn %d: 503 with Retry-After %q: %s", i, retryAfter, body)
			}
		case status == http.StatusOK:
			if !strings.Contains(body, `"code":"model_unavailable"`) || strings.Contains(body, "model_error") {
				t.Errorf("turn %d: the stream's error is not model_unavailable:\n%s", i, body)
			}
		default:
			t.Fatalf("turn %d: status %d: %s", i, status, body)
		}
	}
	if refused < 3 {
		t.Errorf("%d of 8 turns refused before the stream: the breakers did not open", refused)
	}
	if n := len(eu1.Requests()) + len(eu2.Requests()); n > 2+2+2*5 {
		t.Errorf("the eu servers got %d requests: the breakers did not stop the calls", n)
	}
	if n := len(us1.Requests()); n != 0 {
		t.Errorf("the us server received %d requests of a tenant pinned to eu", n)
	}

	// The us tenant is another chain's: it still answers.
	_, spec = turnAs(t, base, "pk_us", "prod-us-1", `{"transcript":"what is my balance"}`)
	if spec.Meta.Error != "" || len(us1.Requests()) != 2 {
		t.Errorf("the us tenant: %+v, %d requests", spec, len(us1.Requests()))
	}
}

// TestChainAcrossRegionsIsRefused: a pinned tenant's chain that names a model of another
// region stops the server at load, naming the tenant, the model and the regions.
func TestChainAcrossRegionsIsRefused(t *testing.T) {
	path := tenantsWithChains(t, "http://127.0.0.1:1", "http://127.0.0.1:2/v1/", "http://127.0.0.1:3/v1/", "http://127.0.0.1:4/v1/", []string{"eu1", "us1", "intent"})
	err := run(t.Context(), []string{"-tenants", path}, func(string) string { return "" }, io.Discard, io.Discard)
	if err == nil || !strings.Contains(err.Error(), `tenant "pk_eu": model: "us1" is of region "us", not of the tenant's data_region "eu"`) {
		t.Fatalf("run: %v", err)
	}
}

func postTurnRaw(t *testing.T, base, key, requestID string) (status int, retryAfter, body string) {
	t.Helper()
	req, _ := http.NewRequest(http.MethodPost, base+engine.PathTurn, strings.NewReader(`{"transcript":"what is my balance"}`))
	req.Header.Set("X-Engine-Key", key)
	req.Header.Set("X-Token", "demo-user-token")
	req.Header.Set("X-Request-ID", requestID)
	req.Header.Set("Content-Type", "application/json")
	resp, err := http.DefaultClient.Do(req)
	if err != nil {
		t.Fatal(err)
	}
	defer resp.Body.Close()
	raw, _ := io.ReadAll(resp.Body)
	return resp.StatusCode, resp.Header.Get("Retry-After"), string(raw)
}
