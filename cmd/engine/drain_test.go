package main

import (
	"context"
	"encoding/json"
	"errors"
	"io"
	"net/http"
	"net/http/httptest"
	"os"
	"path/filepath"
	"regexp"
	"strings"
	"testing"
	"time"

	"github.com/coder/websocket"

	"github.com/convengine/engine"
	"github.com/convengine/engine/client"
	"github.com/convengine/engine/enginetest"
	"github.com/convengine/engine/examples/demobank"
)

// TestDrainOnSIGTERM: a server told to stop (SIGTERM) mid-turn fails its readiness at once
// while its liveness holds, serves through its drain delay, then refuses new turns with 503
// shutting_down (retryable) while it finishes the turn in flight, closes an idle voice socket
// with 1012 and exits within its drain timeout.
func TestDrainOnSIGTERM(t *testing.T) {
	backend := enginetest.NewBackend(demobank.New(nil))
	bank := httptest.NewServer(backend)
	defer bank.Close()
	tn, err := demobank.Tenant(bank.URL, "")
	if err != nil {
		t.Fatal(err)
	}
	data, _ := json.Marshal(map[string]any{"tenants": []*engine.Tenant{tn}})
	path := filepath.Join(t.TempDir(), "tenants.json")
	if err := os.WriteFile(path, data, 0o600); err != nil {
		t.Fatal(err)
	}
	const delay, timeout = 700 * time.Millisecond, 10 * time.Second
	ctx, sigterm := context.WithCancel(context.Background())
	defer sigterm()
	out := &lineWriter{re: regexp.MustCompile(`engine listening on (\S+)`), found: make(chan string, 1)}
	ran := make(chan error, 1)
	go func() {
		ran <- run(ctx, []string{"-addr", "127.0.0.1:0", "-tenants", path, "-speech", "off", "-drain-delay", delay.String(), "-drain-timeout", timeout.String()},
			debugEnv(withRecords(t, nil)), out, io.Discard)
	}()
	var base string
	select {
	case base = <-out.found:
	case err := <-ran:
		t.Fatalf("run: %v", err)
	case <-time.After(20 * time.Second):
		t.Fatal("the server did not start")
	}
	c, err := client.New(base, &client.Options{EngineKey: demobank.EngineKey, UserToken: client.StaticToken("demo-user-token")})
	if err != nil {
		t.Fatal(err)
	}

	hdr := demoRequest(t, http.MethodGet, base, "").Header
	hdr.Set("X-Engine-Key", demobank.EngineKey)
	ws, _, err := websocket.Dial(t.Context(), "ws"+strings.TrimPrefix(base, "http")+engine.PathStream, &websocket.DialOptions{HTTPHeader: hdr})
	if err != nil {
		t.Fatal(err)
	}
	defer ws.CloseNow()

	backend.SetDelay(2 * time.Second) // the bank is slow: the turn is in flight at SIGTERM
	stream, err := c.Turn(t.Context(), &client.TurnRequest{Transcript: "what is my balance"})
	if err != nil {
		t.Fatal(err)
	}
	defer stream.Close()
	for ev, err := range stream.Events() {
		if err != nil {
			t.Fatal(err)
		}
		if _, ok := ev.(*client.StatusEvent); ok {
			break // the bank is being asked
		}
	}
	sigterm()
	stopped := time.Now()
	time.Sleep(100 * time.Millisecond)
	status := func(path string) int {
		resp, err := http.Get(base + path)
		if err != nil {
			return 0
		}
		resp.Body.Close()
		return resp.StatusCode
	}
	if got := status("/readyz"); got != http.StatusServiceUnavailable {
		t.Errorf("readiness while draining: %d, want 503", got)
	}
	if got := status("/healthz"); got != http.StatusOK {
		t.Errorf("liveness while draining: %d, want 200", got)
	}

	// The idle voice socket is told to connect again elsewhere.
	_, _, err = ws.Read(t.Context())
	if code := websocket.CloseStatus(err); code != websocket.StatusServiceRestart {
		t.Errorf("the idle socket ended with %v, want 1012", err)
	}
	// Past the drain delay, a new turn is not taken.
	time.Sleep(time.Until(stopped.Add(delay + 100*time.Millisecond)))
	backend.SetDelay(0)
	_, err = c.Turn(t.Context(), &client.TurnRequest{Transcript: "what is my balance"})
	var cerr *client.Error
	if !errors.As(err, &cerr) || cerr.Code != engine.CodeShuttingDown || !cerr.Retryable || cerr.Status != http.StatusServiceUnavailable {
		t.Errorf("a new turn while draining: %v, want 503 shutting_down, retryable", err)
	}

	spec, err := stream.Spec()
	if err != nil || !strings.Contains(spec.Speak, "balance is") {
		t.Errorf("the turn in flight at SIGTERM: %+v %v", spec, err)
	}
	select {
	case err := <-ran:
		if err != nil {
			t.Errorf("run: %v", err)
		}
		t.Logf("exited %v after SIGTERM", time.Since(stopped).Round(time.Millisecond))
	case <-time.After(timeout + 5*time.Second):
		t.Fatal("the server did not exit within its drain timeout")
	}
}
