package engine_test

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"net"
	"net/http"
	"os"
	"strconv"
	"strings"
	"sync"
	"sync/atomic"
	"testing"
	"time"

	"github.com/google/uuid"

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
	t.Logf("200 strangers' create-sessions in a store of 20 kB: %d refused 503", refused)
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

// gatedLog is a MemoryTurnLog that counts the reads of each turn and, once gate is set, holds
// the second read of every turn but open's (the resume's look-again) until gate closes.
type gatedLog struct {
	engine.MemoryTurnLog
	open string

	mu      sync.Mutex
	reads   map[string]int
	gate    chan struct{}
	waiting atomic.Int32
}

func (l *gatedLog) ReadEvents(ctx context.Context, turn string, after, max int, wait time.Duration) (*engine.TurnRecord, error) {
	l.mu.Lock()
	if l.reads == nil {
		l.reads = map[string]int{}
	}
	l.reads[turn]++
	n, gate := l.reads[turn], l.gate
	l.mu.Unlock()
	if gate != nil && n == 2 && turn != l.open {
		l.waiting.Add(1)
		defer l.waiting.Add(-1)
		select {
		case <-gate:
		case <-ctx.Done():
		}
	}
	return l.MemoryTurnLog.ReadEvents(ctx, turn, after, max, wait)
}

func (l *gatedLog) readsOf(turn string) int {
	l.mu.Lock()
	defer l.mu.Unlock()
	return l.reads[turn]
}

// TestStrangerResumesDoNotHoldTheOwners: 300 resumes of random turn ids at once from one
// stranger, each looking again for its turn, leave the owner's resume of their own turn the
// room to stream; an unknown id and another user's turn both take the look-again path before
// their 404.
func TestStrangerResumesDoNotHoldTheOwners(t *testing.T) {
	const strangers = 300
	log := &gatedLog{}
	h := newHarness(t, engine.Config{TurnLog: log, Model: &enginetest.ScriptedModel{Steps: [][]engine.ModelEvent{enginetest.Text("Your balance is 12.")}}})
	res := h.turn(`{"transcript":"balance"}`)
	victimTurn := res.spec.Meta.TurnID

	// Another user's turn, and an unknown one, are looked for twice.
	unknown := uuid.NewString()
	for _, id := range []string{victimTurn, unknown} {
		resp := resumeTurn(t, h, withToken("stranger"), id, "")
		if p := readProblem(t, resp); resp.StatusCode != http.StatusNotFound || p.Code != engine.CodeNotFound {
			t.Fatalf("a stranger's resume: %d %s", resp.StatusCode, p.Code)
		}
	}
	if a, b := log.readsOf(victimTurn), log.readsOf(unknown); a != 2 || b != 2 {
		t.Errorf("reads before the 404 of another user's turn: %d, of an unknown turn: %d; want 2 and 2", a, b)
	}

	log.mu.Lock()
	log.open, log.gate = victimTurn, make(chan struct{})
	log.mu.Unlock()
	client := &http.Client{Transport: &http.Transport{MaxIdleConnsPerHost: strangers}}
	defer client.CloseIdleConnections()
	var (
		wg       sync.WaitGroup
		answered atomic.Int32
		statuses sync.Map
	)
	for range strangers {
		wg.Go(func() {
			defer answered.Add(1)
			hdr := withToken("stranger")
			hdr.Set("Accept", "text/event-stream")
			req, _ := http.NewRequestWithContext(t.Context(), http.MethodGet, h.srv.URL+engine.PathTurns+uuid.NewString(), nil)
			req.Header = hdr
			resp, err := client.Do(req)
			if err != nil {
				statuses.Store(err.Error(), true)
				return
			}
			resp.Body.Close()
			statuses.Store(resp.StatusCode, true)
		})
	}
	waitFor(t, "the stranger's resumes to wait or be answered", func() bool {
		return int(log.waiting.Load())+int(answered.Load()) == strangers
	})
	resp := resumeTurn(t, h, headers(), victimTurn, "")
	evs := readUntil(t, resp.Body, func(ev sseEvent) bool { return ev.name == engine.EventDone })
	resp.Body.Close()
	close(log.gate)
	wg.Wait()
	if resp.StatusCode != http.StatusOK || len(evs) == 0 || evs[len(evs)-1].name != engine.EventDone {
		t.Errorf("the owner's resume during %d strangers' resumes: %d, %d events", strangers, resp.StatusCode, len(evs))
	}
	statuses.Range(func(k, _ any) bool {
		if k != http.StatusNotFound {
			t.Errorf("a stranger's resume of a random id: %v, want 404", k)
		}
		return true
	})
}

// startOf returns the data of a turn stream's start event.
func startOf(t *testing.T, res *turnResult) map[string]any {
	t.Helper()
	var start map[string]any
	if len(res.events) == 0 || res.events[0].Name != engine.EventStart || json.Unmarshal([]byte(res.events[0].Data), &start) != nil {
		t.Fatalf("no start event: %+v", res.events)
	}
	return start
}

// TestTurnLogFloodKeepsFinishedTurns: turns of many users that fill the turn log do not push
// out a finished turn before its time: the victim still resumes it whole. The turns that
// found the log full ran and answered as usual, their start event saying they cannot be
// resumed, and the observer counted them.
func TestTurnLogFloodKeepsFinishedTurns(t *testing.T) {
	var notKept atomic.Int32
	obs := engine.Observer{Overload: func(_ context.Context, e engine.OverloadEvent) {
		if e.Bound == engine.BoundTurnLog {
			notKept.Add(1)
		}
	}}
	h := newHarness(t, engine.Config{TurnLog: &engine.MemoryTurnLog{MaxBytes: 64 << 10}, Observer: &obs,
		Model: &enginetest.ScriptedModel{Steps: [][]engine.ModelEvent{enginetest.Text("Your balance is 12 dollars and 40 cents.")}}})
	victim := h.turn(`{"transcript":"balance"}`)
	if start := startOf(t, victim); start["resumable"] != true {
		t.Fatalf("the victim's start event: %v", start)
	}
	unresumable := 0
	for i := range 300 {
		res := h.turnWith(withToken("flood-"+strconv.Itoa(i)), `{"transcript":"balance"}`)
		if res.spec.Speak == "" {
			t.Fatalf("flood turn %d answered nothing", i)
		}
		if startOf(t, res)["resumable"] == false {
			unresumable++
		}
	}
	t.Logf("300 turns of other users in a log of 64 KiB: %d not kept", unresumable)
	if unresumable == 0 || int(notKept.Load()) != unresumable {
		t.Errorf("%d flood turns said they were not kept, the observer counted %d", unresumable, notKept.Load())
	}
	resp := resumeTurn(t, h, headers(), victim.spec.Meta.TurnID, "")
	evs := readUntil(t, resp.Body, func(ev sseEvent) bool { return ev.name == engine.EventDone })
	resp.Body.Close()
	if resp.StatusCode != http.StatusOK || len(evs) != len(victim.events) {
		t.Fatalf("the victim's resume after the flood: %d, %d events of %d", resp.StatusCode, len(evs), len(victim.events))
	}
}

// TestTurnLogKeepsOneUsersConcurrentTurns: 64 turns of one user at once, as the load tool
// runs them, all answer and are all kept with the default bounds.
func TestTurnLogKeepsOneUsersConcurrentTurns(t *testing.T) {
	h := newHarness(t, engine.Config{TurnLog: &engine.MemoryTurnLog{},
		Model: &enginetest.ScriptedModel{Steps: [][]engine.ModelEvent{enginetest.Text("Your balance is 12.")}}})
	var wg sync.WaitGroup
	var kept atomic.Int32
	for range 64 {
		wg.Go(func() {
			resp := h.doStreaming(t.Context(), http.MethodPost, "/engine", headers(), `{"transcript":"balance"}`)
			defer resp.Body.Close()
			evs := readUntil(t, resp.Body, func(ev sseEvent) bool { return ev.name == engine.EventDone })
			if resp.StatusCode == http.StatusOK && len(evs) > 0 && strings.Contains(evs[0].data, `"resumable":true`) && evs[len(evs)-1].name == engine.EventDone {
				kept.Add(1)
			}
		})
	}
	wg.Wait()
	if kept.Load() != 64 {
		t.Errorf("%d of 64 turns of one user at once answered and were kept", kept.Load())
	}
}

// TestHeaderMemoryIsBounded: connections that each send most of a header block and then stall
// hold at most Config.HeaderMemory together: past it, the connection whose bytes do not fit is
// closed, and counted. Once they close, an ordinary request is served again.
func TestHeaderMemoryIsBounded(t *testing.T) {
	var closed atomic.Int32
	obs := engine.Observer{Overload: func(_ context.Context, e engine.OverloadEvent) {
		if e.Bound == engine.BoundHeaders {
			closed.Add(1)
		}
	}}
	h := newHarness(t, engine.Config{HeaderMemory: 1 << 20, Observer: &obs,
		Model: &enginetest.ScriptedModel{Steps: [][]engine.ModelEvent{enginetest.Text("Hi.")}}})
	ln, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	srv := &http.Server{Handler: h.engine.Handler(), MaxHeaderBytes: 128 << 10}
	go srv.Serve(h.engine.Listener(srv, ln))
	t.Cleanup(func() { srv.Close() })
	base := "http://" + ln.Addr().String()

	var block strings.Builder
	block.WriteString("POST /engine HTTP/1.1\r\nHost: engine\r\n")
	for i := range 100 {
		fmt.Fprintf(&block, "X-Pad-%03d: %s\r\n", i, strings.Repeat("v", 1000))
	}
	var conns []net.Conn
	defer func() {
		for _, c := range conns {
			c.Close()
		}
	}()
	for range 20 { // 2 MB of header blocks that never end
		c, err := net.Dial("tcp", ln.Addr().String())
		if err != nil {
			t.Fatal(err)
		}
		conns = append(conns, c)
		c.Write([]byte(block.String()))
	}
	waitFor(t, "connections past the header memory to be closed", func() bool { return closed.Load() > 0 })
	open := 0
	for _, c := range conns {
		c.SetReadDeadline(time.Now().Add(100 * time.Millisecond))
		if _, err := c.Read(make([]byte, 1)); errors.Is(err, os.ErrDeadlineExceeded) {
			open++
		}
	}
	t.Logf("20 connections of 100 kB of headers each, header memory 1 MiB: %d held, %d closed", open, closed.Load())
	if open < 8 || open > 10 || int(closed.Load()) != 20-open {
		t.Errorf("of 20 connections holding 100 kB of headers each in 1 MiB: %d open, %d closed as counted", open, closed.Load())
	}
	for _, c := range conns {
		c.Close()
	}
	conns = nil
	waitFor(t, "a turn once the stalled connections closed", func() bool {
		req, _ := http.NewRequestWithContext(t.Context(), http.MethodPost, base+engine.PathTurn, strings.NewReader(`{"transcript":"hi"}`))
		req.Header = headers()
		resp, err := (&http.Client{Transport: &http.Transport{DisableKeepAlives: true}}).Do(req)
		if err != nil {
			return false
		}
		io.Copy(io.Discard, resp.Body)
		resp.Body.Close()
		return resp.StatusCode == http.StatusOK
	})
}
