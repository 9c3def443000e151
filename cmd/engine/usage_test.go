package main

import (
	"encoding/base64"
	"encoding/json"
	"io"
	"net/http"
	"regexp"
	"strings"
	"testing"
	"time"

	"github.com/convengine/engine/internal/testkit"
)

// The reference server meters every turn: the tenant's usage is served at /usage of the debug
// address, never at the engine's, and counted in the Prometheus metrics.
func TestUsageOnTheDebugAddress(t *testing.T) {
	base, out := startServer(t, []string{"-debug-addr", "127.0.0.1:0", "-metrics", "-speech", "off"}, nil)
	m := regexp.MustCompile(`Usage by tenant \(private\): (http://\S+)/usage`).FindStringSubmatch(out.String())
	if m == nil {
		t.Fatalf("the banner names no usage address:\n%s", out.String())
	}
	debug := m[1]
	turn(t, base, "prod-usage-1", `{"transcript":"what is my balance"}`)

	resp, err := http.Get(base + "/usage?tenant=pk_demo")
	if err != nil {
		t.Fatal(err)
	}
	resp.Body.Close()
	if resp.StatusCode != http.StatusNotFound {
		t.Errorf("the engine's own address answers /usage with %s", resp.Status)
	}

	var rep struct {
		Tenant string
		Totals map[string]float64
		Days   []map[string]any
	}
	// The meter writes in the background: the turn's records arrive within moments.
	deadline := time.Now().Add(5 * time.Second)
	for {
		resp, err := http.Get(debug + "/usage?tenant=pk_demo")
		if err != nil {
			t.Fatal(err)
		}
		body, _ := io.ReadAll(resp.Body)
		resp.Body.Close()
		if resp.StatusCode != http.StatusOK || resp.Header.Get("Content-Type") != "application/json" {
			t.Fatalf("/usage: %s %s", resp.Status, body)
		}
		if err := json.Unmarshal(body, &rep); err != nil {
			t.Fatal(err)
		}
		if rep.Totals["tool_calls"] >= 1 && rep.Totals["model_calls"] >= 2 || time.Now().After(deadline) {
			break
		}
		time.Sleep(20 * time.Millisecond)
	}
	// The offline intent model reports no usage: its calls count the engine's estimate.
	tt := rep.Totals
	if rep.Tenant != "pk_demo" || tt["model_calls"] < 2 || tt["tool_calls"] != 1 || tt["turns"] != 1 || tt["estimated_tokens"] <= 0 ||
		tt["input_tokens"] != 0 || len(rep.Days) != 1 {
		t.Errorf("the usage after a turn: %+v", rep)
	}
	for _, k := range []string{"input_tokens", "cached_input_tokens", "output_tokens", "model_calls", "tool_calls", "speech_in_seconds", "speech_out_characters"} {
		if _, ok := tt[k]; !ok {
			t.Errorf("totals.%s missing", k)
		}
	}

	// The report and the problems match the OpenAPI document.
	checked := &http.Client{Transport: testkit.NewOpenAPITransport(t, http.DefaultTransport)}
	for _, q := range []string{"tenant=pk_demo", "tenant=pk_demo&from=2026-01-01&to=2026-01-31", "tenant=pk_none", "from=2026-01-01"} {
		resp, err := checked.Get(debug + "/usage?" + q)
		if err != nil {
			t.Fatal(err)
		}
		io.Copy(io.Discard, resp.Body)
		resp.Body.Close()
	}

	resp, err = http.Get(debug + "/usage?tenant=pk_demo&from=yesterday")
	if err != nil {
		t.Fatal(err)
	}
	body, _ := io.ReadAll(resp.Body)
	resp.Body.Close()
	if resp.StatusCode != http.StatusBadRequest || !strings.Contains(string(body), `"invalid_request"`) {
		t.Errorf("a bad from: %s %s", resp.Status, body)
	}

	resp, err = http.Get(debug + "/metrics")
	if err != nil {
		t.Fatal(err)
	}
	body, _ = io.ReadAll(resp.Body)
	resp.Body.Close()
	for _, want := range []string{`engine_usage_model_calls_total{outcome="ok",tenant="pk_demo"}`, `engine_usage_tool_calls_total{outcome="ok",tenant="pk_demo"} 1`,
		`engine_usage_tokens_total{estimated="true",model="intent",tenant="pk_demo",type="input"}`} {
		if !strings.Contains(string(body), want) {
			t.Errorf("/metrics has no %s", want)
		}
	}
}

// usageAt reads the usage of pk_demo at a debug address, until it counts want turns or 5
// seconds have passed: the meters write in the background.
func usageAt(t *testing.T, debug string, want float64) map[string]float64 {
	t.Helper()
	deadline := time.Now().Add(5 * time.Second)
	for {
		resp, err := http.Get(debug + "/usage?tenant=pk_demo")
		if err != nil {
			t.Fatal(err)
		}
		var rep struct{ Totals map[string]float64 }
		err = json.NewDecoder(resp.Body).Decode(&rep)
		resp.Body.Close()
		if err != nil || resp.StatusCode != http.StatusOK {
			t.Fatalf("/usage: %s, %v", resp.Status, err)
		}
		if rep.Totals["turns"] >= want || time.Now().After(deadline) {
			return rep.Totals
		}
		time.Sleep(20 * time.Millisecond)
	}
}

// Two replicas on one Redis meter into one ledger: either's debug address reads both turns.
func TestTwoReplicasShareUsage(t *testing.T) {
	redis := testkit.StartRedisT(t)
	env := map[string]string{
		"ENGINE_SIGNING_KEY": base64.StdEncoding.EncodeToString([]byte("a shared signing key of 32 bytes")),
		"ENGINE_REDIS_URL":   "redis://" + redis.Addr,
	}
	var debug [2]string
	for i := range debug {
		base, out := startServer(t, []string{"-debug-addr", "127.0.0.1:0", "-speech", "off"}, env)
		m := regexp.MustCompile(`Usage by tenant \(private\): (http://\S+)/usage`).FindStringSubmatch(out.String())
		if m == nil {
			t.Fatalf("the banner names no usage address:\n%s", out.String())
		}
		debug[i] = m[1]
		turn(t, base, "prod-shared-usage", `{"transcript":"what is my balance"}`)
	}
	for i, d := range debug {
		if tt := usageAt(t, d, 2); tt["turns"] != 2 || tt["tool_calls"] != 2 || tt["estimated_tokens"] <= 0 {
			t.Errorf("replica %d reads %v, want both turns", i, tt)
		}
	}
}
