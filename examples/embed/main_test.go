package main

import (
	"context"
	"io"
	"net"
	"net/http"
	"net/http/httptest"
	"strings"
	"testing"
	"time"
)

func TestEmbeddedEngine(t *testing.T) {
	h, _, err := newHandler()
	if err != nil {
		t.Fatal(err)
	}
	srv := httptest.NewServer(h)
	defer srv.Close()

	resp, err := http.Get(srv.URL + "/")
	if err != nil {
		t.Fatal(err)
	}
	body, _ := io.ReadAll(resp.Body)
	resp.Body.Close()
	if string(body) != "the host's home page\n" {
		t.Fatalf("host route: %q", body)
	}

	req, _ := http.NewRequest(http.MethodPost, srv.URL+"/assistant/engine", strings.NewReader(`{"transcript":"where is my order"}`))
	req.Header.Set("X-Engine-Key", "pk_shop")
	req.Header.Set("X-Token", "u1")
	req.Header.Set("X-Request-ID", "prod-1")
	req.Header.Set("Content-Type", "application/json")
	resp, err = http.DefaultClient.Do(req)
	if err != nil {
		t.Fatal(err)
	}
	body, _ = io.ReadAll(resp.Body)
	resp.Body.Close()
	for _, want := range []string{`"text":"Looking up your order"`, `"speak":"Your order A-1042 is out for delivery."`, `{"type":"stat","label":"Arriving","value":"today, 14:00-16:00"}`} {
		if !strings.Contains(string(body), want) {
			t.Errorf("the turn lacks %s:\n%s", want, body)
		}
	}
}

// TestProbesAndShutdown: the host's lines serve health at /healthz and the OpenAPI document at
// /assistant/openapi.yaml; when the host's context ends, serve shuts the server and the engine
// down and returns, and the address takes no more connections.
func TestProbesAndShutdown(t *testing.T) {
	h, eng, err := newHandler()
	if err != nil {
		t.Fatal(err)
	}
	ln, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	ctx, cancel := context.WithCancel(t.Context())
	served := make(chan error, 1)
	go func() { served <- serve(ctx, ln, h, eng) }()
	base := "http://" + ln.Addr().String()
	for path, want := range map[string]string{"/healthz": `{"status":"ok"}`, "/assistant/openapi.yaml": "openapi: 3."} {
		resp, err := http.Get(base + path)
		if err != nil {
			t.Fatal(err)
		}
		body, _ := io.ReadAll(resp.Body)
		resp.Body.Close()
		if resp.StatusCode != http.StatusOK || !strings.Contains(string(body), want) {
			t.Errorf("GET %s: %d %.200s", path, resp.StatusCode, body)
		}
	}
	cancel()
	select {
	case err := <-served:
		if err != nil {
			t.Fatalf("serve: %v", err)
		}
	case <-time.After(10 * time.Second):
		t.Fatal("serve did not return after its context ended")
	}
	if conn, err := net.Dial("tcp", ln.Addr().String()); err == nil {
		conn.Close()
		t.Error("the address still takes connections after the shutdown")
	}
}
