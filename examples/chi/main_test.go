package main

import (
	"io"
	"net/http"
	"net/http/httptest"
	"strings"
	"testing"

	"github.com/convengine/engine/enginetest"
	"github.com/convengine/engine/examples/demobank"
)

func TestEngineBehindHostAuth(t *testing.T) {
	backend := enginetest.NewBackend(demobank.New(nil))
	bank := httptest.NewServer(backend)
	defer bank.Close()
	h, err := newRouter(bank.URL)
	if err != nil {
		t.Fatal(err)
	}
	srv := httptest.NewServer(h)
	defer srv.Close()

	turn := func(auth string) (int, string) {
		req, _ := http.NewRequest(http.MethodPost, srv.URL+"/assistant/engine", strings.NewReader(`{"transcript":"what is my balance"}`))
		if auth != "" {
			req.Header.Set("Authorization", auth)
		}
		req.Header.Set("X-Engine-Key", demobank.EngineKey)
		req.Header.Set("X-Request-ID", "prod-chi-1")
		req.Header.Set("Content-Type", "application/json")
		resp, err := http.DefaultClient.Do(req)
		if err != nil {
			t.Fatal(err)
		}
		defer resp.Body.Close()
		body, _ := io.ReadAll(resp.Body)
		return resp.StatusCode, string(body)
	}
	if status, _ := turn(""); status != http.StatusUnauthorized || len(backend.Received()) != 0 {
		t.Fatalf("without a host session: %d, %d backend calls", status, len(backend.Received()))
	}
	status, body := turn("Bearer host-session-alice")
	if status != 200 || !strings.Contains(body, `"type":"stat"`) {
		t.Fatalf("%d %s", status, body)
	}
	got := backend.Received()
	if len(got) != 1 || got[0].Get("X-Token") != "backend-token-for-alice" || got[0].Get("Authorization") != "" {
		t.Fatalf("the backend received %v", got)
	}
}
