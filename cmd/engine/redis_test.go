package main

import (
	"encoding/base64"
	"encoding/json"
	"io"
	"net/http"
	"net/http/httptest"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/convengine/engine"
	"github.com/convengine/engine/examples/demobank"
	"github.com/convengine/engine/internal/testkit"
	"github.com/convengine/engine/widgets"
)

func TestRedisNeedsAConfiguredSigningKey(t *testing.T) {
	err := run(t.Context(), []string{"-redis", "redis://127.0.0.1:1"}, func(string) string { return "" }, io.Discard, io.Discard)
	if err == nil || !strings.Contains(err.Error(), "ENGINE_SIGNING_KEY is required with Redis") {
		t.Fatalf("err = %v", err)
	}
	key := map[string]string{"ENGINE_SIGNING_KEY": base64.StdEncoding.EncodeToString(make([]byte, 32))}
	err = run(t.Context(), []string{"-redis", "redis://127.0.0.1:1"}, func(k string) string { return key[k] }, io.Discard, io.Discard)
	if err == nil || !strings.Contains(err.Error(), "does not answer") {
		t.Fatalf("unreachable Redis: %v", err)
	}
}

// TestTwoReplicasShareActions runs two reference servers on one Redis: an action confirmed on
// one runs on the other, and the first answers a replay from the record, without running it.
func TestTwoReplicasShareActions(t *testing.T) {
	redis := testkit.StartRedisT(t)
	env := map[string]string{
		"ENGINE_SIGNING_KEY": base64.StdEncoding.EncodeToString([]byte("a shared signing key of 32 bytes")),
		"ENGINE_REDIS_URL":   "redis://" + redis.Addr,
	}
	a, _ := startServer(t, nil, env)
	b, _ := startServer(t, nil, env)

	// A session made on A is known to B.
	req, _ := http.NewRequest(http.MethodPost, a+"/api/v1/create-session", nil)
	req.Header.Set("X-Engine-Key", "pk_demo")
	req.Header.Set("X-Token", "demo-user-token")
	req.Header.Set("X-Request-ID", "prod-r-0")
	resp, err := http.DefaultClient.Do(req)
	if err != nil {
		t.Fatal(err)
	}
	var session struct {
		SessionToken string `json:"session_token"`
	}
	json.NewDecoder(resp.Body).Decode(&session)
	resp.Body.Close()
	req, _ = http.NewRequest(http.MethodPost, b+"/engine", strings.NewReader(`{"transcript":"what is my balance"}`))
	req.Header.Set("X-Engine-Key", "pk_demo")
	req.Header.Set("X-Token", "demo-user-token")
	req.Header.Set("X-Request-ID", "prod-r-0")
	req.Header.Set("Content-Type", "application/json")
	req.Header.Set("Authorization", "Bearer "+session.SessionToken)
	resp, err = http.DefaultClient.Do(req)
	if err != nil {
		t.Fatal(err)
	}
	resp.Body.Close()
	if resp.StatusCode != 200 || session.SessionToken == "" {
		t.Fatalf("a session of A on B: %d", resp.StatusCode)
	}

	_, spec := turn(t, a, "prod-r-1", `{"transcript":"send 20 dollars to Alex"}`)
	confirm, ok := spec.Widgets[0].(widgets.Confirm)
	if !ok {
		t.Fatalf("widgets %#v", spec.Widgets)
	}
	x, _ := json.Marshal(confirm.Execute)
	body := `{"execute":` + string(x) + `,"auth":{"method":"faceid","verifiedAt":"` + time.Now().UTC().Format(time.RFC3339) + `"}}`
	execute := func(base string) (int, string) {
		req, _ := http.NewRequest(http.MethodPost, base+"/engine/execute", strings.NewReader(body))
		req.Header.Set("X-Engine-Key", "pk_demo")
		req.Header.Set("X-Token", "demo-user-token")
		req.Header.Set("X-Request-ID", "prod-r-2")
		req.Header.Set("Content-Type", "application/json")
		resp, err := http.DefaultClient.Do(req)
		if err != nil {
			t.Fatal(err)
		}
		defer resp.Body.Close()
		reply, _ := io.ReadAll(resp.Body)
		return resp.StatusCode, string(reply)
	}
	statusB, replyB := execute(b)
	if statusB != 200 || !strings.Contains(replyB, "Money sent") {
		t.Fatalf("execute on B: %d %s", statusB, replyB)
	}
	// A's own demo bank still holds $1,234.56: had A run the transfer, its card would say so.
	statusA, replyA := execute(a)
	if statusA != 200 || replyA != replyB {
		t.Fatalf("replay on A: %d %s, want B's reply %s", statusA, replyA, replyB)
	}
}

// TestTwoReplicasShareRateLimits runs two reference servers on one Redis with a tenant allowing
// each user a burst of two: the user's third turn is refused by the other server.
func TestTwoReplicasShareRateLimits(t *testing.T) {
	redis := testkit.StartRedisT(t)
	bank := httptest.NewServer(demobank.New(nil))
	defer bank.Close()
	tn, err := demobank.Tenant(bank.URL, "")
	if err != nil {
		t.Fatal(err)
	}
	tn.Limits.UserPerMinute, tn.Limits.UserBurst = 1, 2
	data, _ := json.Marshal(map[string]any{"tenants": []*engine.Tenant{tn}})
	path := filepath.Join(t.TempDir(), "tenants.json")
	if err := os.WriteFile(path, data, 0o600); err != nil {
		t.Fatal(err)
	}
	env := map[string]string{
		"ENGINE_SIGNING_KEY": base64.StdEncoding.EncodeToString([]byte("a shared signing key of 32 bytes")),
		"ENGINE_REDIS_URL":   "redis://" + redis.Addr,
	}
	a, _ := startServer(t, []string{"-tenants", path}, env)
	b, _ := startServer(t, []string{"-tenants", path}, env)

	status := func(base string) (int, string) {
		req, _ := http.NewRequest(http.MethodPost, base+"/engine", strings.NewReader(`{"transcript":"what is my balance"}`))
		req.Header.Set("X-Engine-Key", tn.Key)
		req.Header.Set("X-Token", "demo-user-token")
		req.Header.Set("X-Request-ID", "prod-limits")
		req.Header.Set("Content-Type", "application/json")
		resp, err := http.DefaultClient.Do(req)
		if err != nil {
			t.Fatal(err)
		}
		defer resp.Body.Close()
		io.Copy(io.Discard, resp.Body)
		return resp.StatusCode, resp.Header.Get("Retry-After")
	}
	for _, base := range []string{a, b} {
		if code, _ := status(base); code != http.StatusOK {
			t.Fatalf("a turn within the burst: %d", code)
		}
	}
	for _, base := range []string{a, b} {
		if code, retry := status(base); code != http.StatusTooManyRequests || retry == "" {
			t.Errorf("a third turn: %d, Retry-After %q; want 429 with a Retry-After", code, retry)
		}
	}
}
