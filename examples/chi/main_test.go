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

	turn := func(session string, hdr map[string]string) (int, string) {
		req, _ := http.NewRequest(http.MethodPost, srv.URL+"/assistant/engine", strings.NewReader(`{"transcript":"what is my balance"}`))
		if session != "" {
			req.AddCookie(&http.Cookie{Name: "host_session", Value: session})
		}
		for k, v := range hdr {
			req.Header.Set(k, v)
		}
		req.Header.Set("Content-Type", "application/json")
		resp, err := http.DefaultClient.Do(req)
		if err != nil {
			t.Fatal(err)
		}
		defer resp.Body.Close()
		body, _ := io.ReadAll(resp.Body)
		return resp.StatusCode, string(body)
	}
	if status, _ := turn("", nil); status != http.StatusUnauthorized || len(backend.Received()) != 0 {
		t.Fatalf("without a host session: %d, %d backend calls", status, len(backend.Received()))
	}
	// Without any of the protocol's headers: the host's Identify names the tenant and the user.
	status, body := turn("alice", nil)
	if status != 200 || !strings.Contains(body, `"type":"stat"`) {
		t.Fatalf("%d %s", status, body)
	}
	// A client cannot choose another user or tenant with the headers Identify replaces.
	status, body = turn("alice", map[string]string{"X-Token": "backend-token-for-bob", "X-Engine-Key": "pk_other"})
	if status != 200 || !strings.Contains(body, `"type":"stat"`) {
		t.Fatalf("with the protocol's headers: %d %s", status, body)
	}
	got := backend.Received()
	if len(got) != 2 || got[0].Get("X-Token") != "backend-token-for-alice" || got[1].Get("X-Token") != "backend-token-for-alice" {
		t.Fatalf("the backend received %v", got)
	}
}
