package engine_test

import (
	"net/http"
	"strconv"
	"testing"
	"time"

	"github.com/convengine/engine"
	"github.com/convengine/engine/enginetest"
)

// withToken is headers() for the user of token.
func withToken(token string) http.Header {
	hdr := headers()
	hdr.Set("X-Token", token)
	return hdr
}

// TestSessionFloodKeepsOtherUsersSessions: a stranger creating sessions under many X-Tokens
// until the store is full gets 503 overloaded with Retry-After; the victim's session, created
// before, still carries a turn.
func TestSessionFloodKeepsOtherUsersSessions(t *testing.T) {
	store := &engine.MemoryStore{MaxSessionBytes: 20_000}
	h := newHarness(t, engine.Config{Model: &enginetest.ScriptedModel{}, Sessions: store})
	victim := h.createSession(t, headers(), `{}`)

	refused := 0
	for i := range 200 {
		resp := h.do(t.Context(), http.MethodPost, engine.PathCreateSession, withToken("stranger-"+strconv.Itoa(i)), `{}`)
		if resp.StatusCode == http.StatusCreated {
			resp.Body.Close()
			continue
		}
		p := readProblem(t, resp)
		if resp.StatusCode != http.StatusServiceUnavailable || p.Code != engine.CodeOverloaded || resp.Header.Get("Retry-After") == "" {
			t.Fatalf("create-session in a full store: %d %s, Retry-After %q", resp.StatusCode, p.Code, resp.Header.Get("Retry-After"))
		}
		refused++
	}
	if refused == 0 {
		t.Fatal("200 sessions fit in 20 kB: the store is not bounded")
	}
	resp, p := h.turnStatus(t, h.srv.URL+"/engine", withAuth("Bearer", victim.SessionToken))
	if resp.StatusCode != http.StatusOK {
		t.Fatalf("the victim's turn after the flood: %d %s %s", resp.StatusCode, p.Code, p.Detail)
	}
}

// TestCreateSessionDefaultRateLimit: a tenant without limits still bounds the sessions one
// user creates in a burst: 20 at once, then 429 with Retry-After; another user is not slowed.
func TestCreateSessionDefaultRateLimit(t *testing.T) {
	clk := newClock()
	h := newHarness(t, engine.Config{Model: &enginetest.ScriptedModel{}, Now: clk.Now})
	for range 20 {
		h.createSession(t, headers(), `{}`)
	}
	resp := h.do(t.Context(), http.MethodPost, engine.PathCreateSession, headers(), `{}`)
	if p := readProblem(t, resp); resp.StatusCode != http.StatusTooManyRequests || p.Code != engine.CodeRateLimited || resp.Header.Get("Retry-After") != "1" {
		t.Fatalf("the 21st session at once: %d %s, Retry-After %q", resp.StatusCode, p.Code, resp.Header.Get("Retry-After"))
	}
	h.createSession(t, withToken("another-user"), `{}`)
	clk.Add(time.Second)
	h.createSession(t, headers(), `{}`) // a second later, one more
}
