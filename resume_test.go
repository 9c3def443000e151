package engine_test

import (
	"bufio"
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"iter"
	"net/http"
	"strconv"
	"strings"
	"sync"
	"sync/atomic"
	"testing"
	"time"

	"github.com/convengine/engine"
	"github.com/convengine/engine/enginetest"
)

// resumable is an engine that keeps its turns, whose model calls a counted tool and then
// speaks slowly.
type resumable struct {
	h     *harness
	calls atomic.Int32
}

func newResumable(t *testing.T, cfg engine.Config, tenants ...*engine.Tenant) *resumable {
	r := &resumable{}
	cfg.TurnLog = &engine.MemoryTurnLog{}
	cfg.Toolset = &enginetest.FuncToolset{
		ToolList: []engine.Tool{{Name: "get_balance"}},
		Funcs: map[string]func(context.Context, *engine.ToolEnv, engine.ToolCall) (engine.ToolResult, error){
			"get_balance": func(context.Context, *engine.ToolEnv, engine.ToolCall) (engine.ToolResult, error) {
				r.calls.Add(1)
				return engine.ToolResult{Content: json.RawMessage(`{"balance":12}`)}, nil
			},
		},
	}
	words := []engine.ModelEvent{}
	for i := range 30 {
		words = append(words, engine.TextEvent("w"+strconv.Itoa(i)+" "))
	}
	cfg.Model = &enginetest.ScriptedModel{Delay: 5 * time.Millisecond, Steps: [][]engine.ModelEvent{
		{engine.TextEvent("Checking. "), call("1", "get_balance", `{}`)}, words}}
	r.h = newHarness(t, cfg, tenants...)
	return r
}

// sseEvent is one event read off a stream.
type sseEvent struct {
	id   int
	name string
	data string
}

// readUntil reads events from body until stop says so, or the stream ends.
func readUntil(t *testing.T, body io.Reader, stop func(sseEvent) bool) []sseEvent {
	t.Helper()
	var (
		out []sseEvent
		cur sseEvent
	)
	sc := bufio.NewScanner(body)
	sc.Buffer(make([]byte, 1<<20), 1<<20)
	for sc.Scan() {
		line := sc.Text()
		switch {
		case strings.HasPrefix(line, "id: "):
			cur.id, _ = strconv.Atoi(line[4:])
		case strings.HasPrefix(line, "event: "):
			cur.name = line[7:]
		case strings.HasPrefix(line, "data: "):
			cur.data = line[6:]
		case line == "" && cur.name != "":
			out = append(out, cur)
			if stop(cur) {
				return out
			}
			cur = sseEvent{}
		}
	}
	return out
}

func (r *resumable) resume(t *testing.T, hdr http.Header, turn string, lastID string) *http.Response {
	t.Helper()
	return resumeTurn(t, r.h, hdr, turn, lastID)
}

// resumeTurn asks h for turn's events after lastID ("": from the start), with hdr.
func resumeTurn(t *testing.T, h *harness, hdr http.Header, turn string, lastID string) *http.Response {
	t.Helper()
	if lastID != "" {
		hdr.Set("Last-Event-ID", lastID)
	}
	hdr.Set("Accept", "text/event-stream")
	return h.doStreaming(t.Context(), http.MethodGet, engine.PathTurns+turn, hdr, "")
}

// turnIDOf returns the turn id of a stream's start event.
func turnIDOf(evs []sseEvent) string {
	var start struct{ TurnID string }
	json.Unmarshal([]byte(evs[0].data), &start)
	return start.TurnID
}

// TestResumeATurn: a client that loses its stream after the first speak event resumes the
// turn from its last event; the turn ran on without it, its tool once, and the two parts make
// the whole answer.
func TestResumeATurn(t *testing.T) {
	r := newResumable(t, engine.Config{})
	ctx, cut := context.WithCancel(t.Context())
	resp := r.h.doStreaming(ctx, http.MethodPost, "/engine", headers(), `{"transcript":"balance"}`)
	first := readUntil(t, resp.Body, func(ev sseEvent) bool { return ev.name == engine.EventSpeak })
	cut() // the phone moved from Wi-Fi to cellular
	resp.Body.Close()
	turnID := turnIDOf(first)
	last := first[len(first)-1].id
	if turnID == "" || first[0].name != engine.EventStart || last != len(first) {
		t.Fatalf("the first part: %+v", first)
	}

	resp = r.resume(t, headers(), turnID, strconv.Itoa(last))
	defer resp.Body.Close()
	if resp.StatusCode != 200 || !strings.HasPrefix(resp.Header.Get("Content-Type"), "text/event-stream") {
		b, _ := io.ReadAll(resp.Body)
		t.Fatalf("resume: %d %s", resp.StatusCode, b)
	}
	rest := readUntil(t, resp.Body, func(ev sseEvent) bool { return ev.name == engine.EventDone })
	if len(rest) == 0 || rest[0].id != last+1 || rest[len(rest)-1].name != engine.EventDone {
		t.Fatalf("the resumed part: %+v", rest)
	}
	var speak strings.Builder
	for i, ev := range append(first, rest...) {
		if ev.id != i+1 {
			t.Fatalf("event %d has id %d", i+1, ev.id)
		}
		if ev.name == engine.EventSpeak {
			var d struct{ Delta string }
			json.Unmarshal([]byte(ev.data), &d)
			speak.WriteString(d.Delta)
		}
	}
	var done struct{ Speak string }
	json.Unmarshal([]byte(rest[len(rest)-1].data), &done)
	if done.Speak == "" || speak.String() != done.Speak || !strings.HasSuffix(done.Speak, "w29 ") {
		t.Errorf("deltas %q, done %q", speak.String(), done.Speak)
	}
	if n := r.calls.Load(); n != 1 {
		t.Errorf("the tool ran %d times", n)
	}

	// Resumed again from the start, after the turn is over: the whole turn, the same.
	resp2 := r.resume(t, headers(), turnID, "")
	all := readUntil(t, resp2.Body, func(ev sseEvent) bool { return ev.name == engine.EventDone })
	resp2.Body.Close()
	if len(all) != len(first)+len(rest) || all[len(all)-1].data != rest[len(rest)-1].data {
		t.Errorf("the whole turn again: %d events", len(all))
	}
	// From its last event: nothing more will come, 204 No Content (an EventSource stops
	// reconnecting on it).
	resp3 := r.resume(t, headers(), turnID, strconv.Itoa(len(all)))
	b, _ := io.ReadAll(resp3.Body)
	resp3.Body.Close()
	if resp3.StatusCode != http.StatusNoContent || len(b) != 0 {
		t.Errorf("from the last event: %d %q", resp3.StatusCode, b)
	}
	if n := r.calls.Load(); n != 1 {
		t.Errorf("resumes ran the tool: %d calls", n)
	}
}

// TestResumeRefusals: another user's, tenant's or session's turn, an unknown or malformed id,
// and a bad Last-Event-ID are refused; an engine without a TurnLog resumes nothing.
func TestResumeRefusals(t *testing.T) {
	other := testTenant()
	other.Key = "pk_other"
	r := newResumable(t, engine.Config{}, testTenant(), other)
	resp := r.h.doStreaming(t.Context(), http.MethodPost, "/engine", headers(), `{"transcript":"balance"}`)
	evs := readUntil(t, resp.Body, func(ev sseEvent) bool { return ev.name == engine.EventDone })
	// The stream ends once the turn's log has all of it: the checks below need the turn over.
	io.Copy(io.Discard, resp.Body)
	resp.Body.Close()
	turnID := turnIDOf(evs)

	status := func(hdr http.Header, turn, lastID string) (int, string) {
		t.Helper()
		resp := r.resume(t, hdr, turn, lastID)
		defer resp.Body.Close()
		if resp.StatusCode == 200 || resp.StatusCode == 204 {
			return resp.StatusCode, ""
		}
		p := readProblem(t, resp)
		return resp.StatusCode, p.Code + " " + p.Field
	}
	otherUser := headers()
	otherUser.Set("X-Token", "another-user")
	otherTenant := headers()
	otherTenant.Set("X-Engine-Key", "pk_other")
	staging := headers()
	staging.Set("X-Request-ID", "stg-resume")
	for name, tc := range map[string]struct {
		hdr          http.Header
		turn, lastID string
		status       int
		code         string
	}{
		"another user":               {otherUser, turnID, "", 404, "not_found "},
		"another tenant":             {otherTenant, turnID, "", 404, "not_found "},
		"another environment":        {staging, turnID, "", 404, "not_found "},
		"unknown turn":               {headers(), "00000000-0000-4000-8000-000000000000", "", 404, "not_found "},
		"not an id":                  {headers(), "../../etc/passwd", "", 404, "not_found "},
		"Last-Event-ID not a number": {headers(), turnID, "abc", 400, "invalid_request Last-Event-ID"},
		"Last-Event-ID negative":     {headers(), turnID, "-1", 400, "invalid_request Last-Event-ID"},
		"Last-Event-ID past the end": {headers(), turnID, "9999", 400, "invalid_request Last-Event-ID"},
		"Last-Event-ID with a sign":  {headers(), turnID, "+5", 400, "invalid_request Last-Event-ID"},
		// What an EventSource sends when its stream ends after done: nothing more will come.
		"Last-Event-ID of done":     {headers(), turnID, strconv.Itoa(evs[len(evs)-1].id), 204, ""},
		"Last-Event-ID before done": {headers(), turnID, strconv.Itoa(evs[len(evs)-2].id), 200, ""},
	} {
		if s, code := status(tc.hdr, tc.turn, tc.lastID); s != tc.status || code != tc.code {
			t.Errorf("%s: %d %q, want %d %q", name, s, code, tc.status, tc.code)
		}
	}
	if r.calls.Load() != 1 {
		t.Errorf("%d tool calls", r.calls.Load())
	}

	plain := newHarness(t, engine.Config{Model: &enginetest.ScriptedModel{Steps: [][]engine.ModelEvent{enginetest.Text("Hi.")}}})
	res := plain.turn(`{"transcript":"hi"}`)
	resp = plain.doStreaming(t.Context(), http.MethodGet, engine.PathTurns+res.spec.Meta.TurnID, headers(), "")
	if p := readProblem(t, resp); resp.StatusCode != 404 || p.Code != engine.CodeNotFound {
		t.Errorf("without a TurnLog: %d %s", resp.StatusCode, p.Code)
	}
}

// heldModel speaks one sentence, then holds the turn open until release is closed.
type heldModel struct{ release chan struct{} }

func (m heldModel) Stream(ctx context.Context, _ *engine.ModelRequest) iter.Seq2[engine.ModelEvent, error] {
	return func(yield func(engine.ModelEvent, error) bool) {
		if !yield(engine.TextEvent("Checking. "), nil) {
			return
		}
		select {
		case <-m.release:
		case <-ctx.Done():
			yield(engine.ModelEvent{}, ctx.Err())
			return
		}
		yield(engine.TextEvent("Done."), nil)
	}
}

// TestResumesAreBounded: 1,000 resumes of one turn at once: eight follow it, the others are
// told to retry, and the eight follow the turn to its end.
func TestResumesAreBounded(t *testing.T) {
	const resumes = 1000
	release := make(chan struct{})
	h := newHarness(t, engine.Config{TurnLog: &engine.MemoryTurnLog{}, Model: heldModel{release}})
	defer func() {
		select {
		case <-release:
		default:
			close(release)
		}
	}()
	resp := h.doStreaming(t.Context(), http.MethodPost, "/engine", headers(), `{"transcript":"balance"}`)
	defer resp.Body.Close()
	first := readUntil(t, resp.Body, func(ev sseEvent) bool { return ev.name == engine.EventSpeak })
	turnID := turnIDOf(first)

	client := &http.Client{Transport: &http.Transport{MaxIdleConnsPerHost: resumes}}
	defer client.CloseIdleConnections()
	var (
		wg                      sync.WaitGroup
		mu                      sync.Mutex
		held                    []*http.Response
		refused, other, noRetry int
	)
	for range resumes {
		wg.Go(func() {
			hdr := headers()
			hdr.Set("Accept", "text/event-stream")
			req, _ := http.NewRequestWithContext(t.Context(), http.MethodGet, h.srv.URL+engine.PathTurns+turnID, nil)
			req.Header = hdr
			resp, err := client.Do(req)
			mu.Lock()
			defer mu.Unlock()
			switch {
			case err != nil:
				other++
			case resp.StatusCode == http.StatusOK:
				held = append(held, resp)
			case resp.StatusCode == http.StatusTooManyRequests:
				var p struct{ Code string }
				json.NewDecoder(resp.Body).Decode(&p)
				resp.Body.Close()
				if p.Code != engine.CodeRateLimited || resp.Header.Get("Retry-After") == "" {
					noRetry++
				}
				refused++
			default:
				resp.Body.Close()
				other++
			}
		})
	}
	wg.Wait()
	if len(held) != 8 || refused != resumes-8 || other != 0 || noRetry != 0 {
		t.Errorf("of %d resumes at once: %d followed the turn, %d refused (%d without rate_limited and Retry-After), %d otherwise",
			resumes, len(held), refused, noRetry, other)
	}
	// Another user who knows the turn's id is told it is none of theirs, not to wait.
	stranger := headers()
	stranger.Set("X-Token", "someone-else")
	resp2 := resumeTurn(t, h, stranger, turnID, "")
	if p := readProblem(t, resp2); resp2.StatusCode != http.StatusNotFound {
		t.Errorf("another user's resume while the turn's are all taken: %d %s", resp2.StatusCode, p.Code)
	}
	close(release)
	for _, h := range held {
		evs := readUntil(t, h.Body, func(ev sseEvent) bool { return ev.name == engine.EventDone })
		h.Body.Close()
		if len(evs) == 0 || evs[len(evs)-1].name != engine.EventDone {
			t.Error("a held resume did not follow the turn to its end")
		}
	}
}

// TestResumeALongTurn: a turn of more events than the log hands out at once is resumed whole,
// to its done.
func TestResumeALongTurn(t *testing.T) {
	words := longAnswer(150) // 600 words
	h := newHarness(t, engine.Config{TurnLog: &engine.MemoryTurnLog{}, Model: &enginetest.ScriptedModel{Steps: [][]engine.ModelEvent{words}}})
	resp := h.doStreaming(t.Context(), http.MethodPost, "/engine", headers(), `{"transcript":"hi"}`)
	all := readUntil(t, resp.Body, func(ev sseEvent) bool { return ev.name == engine.EventDone })
	io.Copy(io.Discard, resp.Body) // the stream ends once the log has the whole turn
	resp.Body.Close()
	turnID := turnIDOf(all)

	resumed := resumeTurn(t, h, headers(), turnID, "")
	got := readUntil(t, resumed.Body, func(ev sseEvent) bool { return ev.name == engine.EventDone })
	resumed.Body.Close()
	if len(all) < 600 || len(got) != len(all) || got[len(got)-1].name != engine.EventDone {
		t.Errorf("the turn had %d events; its resume from the start gave %d, the last %q", len(all), len(got), got[len(got)-1].name)
	}
}

// hungLog is a TurnLog whose writes wait until released or their context ends.
type hungLog struct {
	engine.MemoryTurnLog
	release chan struct{}
	writes  atomic.Int32
}

func (l *hungLog) AppendEvents(ctx context.Context, turn string, owner *engine.TurnOwner, evs []engine.LoggedEvent, done bool, keep time.Time) error {
	l.writes.Add(1)
	select {
	case <-l.release:
		return errors.New("the store went away")
	case <-ctx.Done():
		return ctx.Err()
	}
}

// TestATurnDoesNotWaitForItsLog: while the turn log hangs, the turn streams to its done all
// the same, and once a write has failed the engine stops writing the turn.
func TestATurnDoesNotWaitForItsLog(t *testing.T) {
	words := longAnswer(75) // 300 words
	log := &hungLog{release: make(chan struct{})}
	h := newHarness(t, engine.Config{TurnLog: log, Model: &enginetest.ScriptedModel{Steps: [][]engine.ModelEvent{words}}})
	// Well under the engine's 5 s bound on a write: a turn held back by its log would not be
	// done by then.
	ctx, cancel := context.WithTimeout(t.Context(), 3*time.Second)
	defer cancel()
	resp := h.doStreaming(ctx, http.MethodPost, "/engine", headers(), `{"transcript":"hi"}`)
	evs := readUntil(t, resp.Body, func(ev sseEvent) bool { return ev.name == engine.EventDone })
	if len(evs) < 300 || evs[len(evs)-1].name != engine.EventDone {
		t.Errorf("with its log hung, the turn streamed %d events, the last %q", len(evs), evs[len(evs)-1].name)
	}
	close(log.release)
	io.Copy(io.Discard, resp.Body)
	resp.Body.Close()
	if n := log.writes.Load(); n != 1 {
		t.Errorf("%d writes to a log whose first write failed", n)
	}
}

// lateLog is a TurnLog whose first write waits until released, as a store's round trip does.
type lateLog struct {
	engine.MemoryTurnLog
	release chan struct{}
}

func (l *lateLog) AppendEvents(ctx context.Context, turn string, owner *engine.TurnOwner, evs []engine.LoggedEvent, done bool, keep time.Time) error {
	if owner != nil {
		<-l.release
	}
	return l.MemoryTurnLog.AppendEvents(ctx, turn, owner, evs, done, keep)
}

// TestResumeBeforeTheLogHasTheTurn: a client that resumes right after the start event, before
// the turn reached its log, gets the turn, not 404.
func TestResumeBeforeTheLogHasTheTurn(t *testing.T) {
	log := &lateLog{release: make(chan struct{})}
	h := newHarness(t, engine.Config{TurnLog: log, Model: &enginetest.ScriptedModel{Steps: [][]engine.ModelEvent{enginetest.Text("Hello there.")}}})
	resp := h.doStreaming(t.Context(), http.MethodPost, "/engine", headers(), `{"transcript":"hi"}`)
	defer resp.Body.Close()
	first := readUntil(t, resp.Body, func(ev sseEvent) bool { return ev.name == engine.EventStart })
	turnID := turnIDOf(first)
	time.AfterFunc(50*time.Millisecond, func() { close(log.release) })
	resumed := resumeTurn(t, h, headers(), turnID, "1")
	defer resumed.Body.Close()
	if resumed.StatusCode != http.StatusOK {
		p := readProblem(t, resumed)
		t.Fatalf("a resume before the turn reached its log: %d %s", resumed.StatusCode, p.Code)
	}
	if evs := readUntil(t, resumed.Body, func(ev sseEvent) bool { return ev.name == engine.EventDone }); evs[len(evs)-1].name != engine.EventDone {
		t.Error("the resume did not reach done")
	}
}

// slowLog is a TurnLog whose writes after the first take a while, as a busy store's do.
type slowLog struct {
	engine.MemoryTurnLog
}

func (l *slowLog) AppendEvents(ctx context.Context, turn string, owner *engine.TurnOwner, evs []engine.LoggedEvent, done bool, keep time.Time) error {
	if owner == nil {
		time.Sleep(300 * time.Millisecond)
	}
	return l.MemoryTurnLog.AppendEvents(ctx, turn, owner, evs, done, keep)
}

// TestResumeWhenTheLogIsBehind: a client that read further than the turn's log holds yet (the
// log is written behind the stream) is followed from where it is, not refused.
func TestResumeWhenTheLogIsBehind(t *testing.T) {
	words := longAnswer(5) // 20 words
	h := newHarness(t, engine.Config{TurnLog: &slowLog{}, Model: &enginetest.ScriptedModel{Delay: 5 * time.Millisecond, Steps: [][]engine.ModelEvent{words}}})
	ctx, cancel := context.WithCancel(t.Context())
	resp := h.doStreaming(ctx, http.MethodPost, "/engine", headers(), `{"transcript":"hi"}`)
	first := readUntil(t, resp.Body, func(ev sseEvent) bool { return ev.id >= 10 })
	cancel()
	resp.Body.Close()
	turnID := turnIDOf(first)
	resumed := resumeTurn(t, h, headers(), turnID, strconv.Itoa(first[len(first)-1].id))
	defer resumed.Body.Close()
	if resumed.StatusCode != http.StatusOK {
		p := readProblem(t, resumed)
		t.Fatalf("a resume past what the log holds yet: %d %s %s", resumed.StatusCode, p.Code, p.Field)
	}
	rest := readUntil(t, resumed.Body, func(ev sseEvent) bool { return ev.name == engine.EventDone })
	if len(rest) == 0 || rest[0].id != first[len(first)-1].id+1 || rest[len(rest)-1].name != engine.EventDone {
		t.Errorf("the rest: %d events from %v", len(rest), rest)
	}
}

// TestTurnTheLogRefusedStopsWithItsClient: a turn the TurnLog will not keep (it is full) says
// so in its start event, and is not detached from its client: once the client has gone, the
// first write that fails (here a keep-alive ping) stops it, and the tool it waits on is
// cancelled.
func TestTurnTheLogRefusedStopsWithItsClient(t *testing.T) {
	toolCancelled := make(chan struct{})
	tools := &enginetest.FuncToolset{
		ToolList: []engine.Tool{{Name: "slow"}},
		Funcs: map[string]func(context.Context, *engine.ToolEnv, engine.ToolCall) (engine.ToolResult, error){
			"slow": func(ctx context.Context, _ *engine.ToolEnv, _ engine.ToolCall) (engine.ToolResult, error) {
				<-ctx.Done()
				close(toolCancelled)
				return engine.ToolResult{}, ctx.Err()
			},
		},
	}
	model := &enginetest.ScriptedModel{Steps: [][]engine.ModelEvent{{engine.TextEvent("Checking."), call("1", "slow", `{}`)}}}
	h := newHarness(t, engine.Config{Model: model, Toolset: tools, PingInterval: 20 * time.Millisecond,
		TurnLog: &engine.MemoryTurnLog{MaxBytes: 1}}) // no room for any turn

	ctx, cancel := context.WithCancel(t.Context())
	resp := h.doStreaming(ctx, http.MethodPost, "/engine", headers(), `{"transcript":"go"}`)
	first := readUntil(t, resp.Body, func(ev sseEvent) bool { return ev.name == engine.EventStatus })
	if len(first) == 0 || first[0].name != engine.EventStart || !strings.Contains(first[0].data, `"resumable":false`) {
		t.Fatalf("the start of a turn the log refused: %+v", first)
	}
	cancel()
	resp.Body.Close()
	select {
	case <-toolCancelled:
	case <-time.After(5 * time.Second):
		t.Fatal("the turn the log refused ran on 5 s after its client went away")
	}
}

// dyingLog is a TurnLog whose replica dies when told: from then on what it writes goes
// nowhere, its lease included. Its clock can be moved on.
type dyingLog struct {
	engine.MemoryTurnLog
	dead  atomic.Bool
	ahead atomic.Int64 // how far its clock is ahead of time.Now
}

func (l *dyingLog) AppendEvents(ctx context.Context, turn string, owner *engine.TurnOwner, evs []engine.LoggedEvent, done bool, keep time.Time) error {
	if l.dead.Load() {
		return nil
	}
	return l.MemoryTurnLog.AppendEvents(ctx, turn, owner, evs, done, keep)
}

// TestResumeATurnWhoseReplicaDied: a turn whose replica stops writing it (killed mid-turn, a
// tool call running) is over for its followers once its lease lapses: a resume gets a
// retryable turn_lost error, the apology and done, at once rather than at the turn's deadline;
// after done, 204.
func TestResumeATurnWhoseReplicaDied(t *testing.T) {
	log := &dyingLog{}
	log.Now = func() time.Time { return time.Now().Add(time.Duration(log.ahead.Load())) }
	release := make(chan struct{})
	tools := &enginetest.FuncToolset{
		ToolList: []engine.Tool{{Name: "get_balance"}},
		Funcs: map[string]func(context.Context, *engine.ToolEnv, engine.ToolCall) (engine.ToolResult, error){
			"get_balance": func(ctx context.Context, _ *engine.ToolEnv, _ engine.ToolCall) (engine.ToolResult, error) {
				select { // the backend is slow: the replica dies while it waits
				case <-ctx.Done():
				case <-release:
				}
				return engine.ToolResult{}, errors.New("gone")
			},
		},
	}
	h := newHarness(t, engine.Config{TurnLog: log, Toolset: tools, Model: &enginetest.ScriptedModel{Steps: [][]engine.ModelEvent{
		{engine.TextEvent("Checking. "), call("1", "get_balance", `{}`)}, enginetest.Text("never said")}}})
	t.Cleanup(func() { close(release) })
	ctx, cut := context.WithCancel(t.Context())
	resp := h.doStreaming(ctx, http.MethodPost, "/engine", headers(), `{"transcript":"balance"}`)
	first := readUntil(t, resp.Body, func(ev sseEvent) bool { return ev.name == engine.EventSpeak })
	time.Sleep(100 * time.Millisecond) // the log has the speak event
	cut()
	resp.Body.Close()
	turnID, last := turnIDOf(first), first[len(first)-1].id

	// Alive, the turn is followed: the resume waits for more.
	wctx, stop := context.WithTimeout(t.Context(), time.Second)
	alive := h.doStreaming(wctx, http.MethodGet, engine.PathTurns+turnID, http.Header{"Accept": {"text/event-stream"}, "Last-Event-ID": {strconv.Itoa(last)},
		"X-Engine-Key": headers()["X-Engine-Key"], "X-Token": headers()["X-Token"]}, "")
	if evs := readUntil(t, alive.Body, func(sseEvent) bool { return true }); len(evs) != 0 {
		t.Errorf("a turn alive gave %+v", evs)
	}
	alive.Body.Close()
	stop()

	log.dead.Store(true)
	log.ahead.Store(int64(engine.TurnLease + time.Second))
	started := time.Now()
	resp = resumeTurn(t, h, headers(), turnID, strconv.Itoa(last))
	rest := readUntil(t, resp.Body, func(ev sseEvent) bool { return ev.name == engine.EventDone })
	resp.Body.Close()
	if len(rest) > 0 && rest[0].name == engine.EventStatus { // the tool's, logged before the death
		last, rest = rest[0].id, rest[1:]
	}
	if took := time.Since(started); took > 10*time.Second { // not the turn's deadline, a minute away
		t.Errorf("the lost turn's end took %v", took)
	}
	if len(rest) != 3 || rest[0].name != engine.EventError || rest[1].name != engine.EventSpeak || rest[2].name != engine.EventDone || rest[0].id != last+1 {
		t.Fatalf("the resume of a lost turn: %+v", rest)
	}
	var e struct {
		Code      string
		Retryable bool
	}
	json.Unmarshal([]byte(rest[0].data), &e)
	var done struct {
		Speak string
		Meta  struct{ Error, TurnID string }
	}
	json.Unmarshal([]byte(rest[2].data), &done)
	if e.Code != engine.CodeTurnLost || !e.Retryable || done.Meta.Error != engine.CodeTurnLost || done.Meta.TurnID != turnID ||
		!strings.HasPrefix(done.Speak, "Checking. ") || len(done.Speak) <= len("Checking. ") {
		t.Errorf("error %+v, done %+v", e, done)
	}
	// The client has it all: 204, as after any done.
	again := resumeTurn(t, h, headers(), turnID, strconv.Itoa(rest[2].id))
	again.Body.Close()
	if again.StatusCode != http.StatusNoContent {
		t.Errorf("resumed after the lost turn's done: %d", again.StatusCode)
	}
}

// TestShutdownEndsResumes: once the engine shuts down, a resume that follows a turn still
// running ends (its client resumes from another replica) without holding the shutdown up, and
// new turns and resumes get 503 shutting_down, retryable.
func TestShutdownEndsResumes(t *testing.T) {
	release := make(chan struct{})
	tools := &enginetest.FuncToolset{
		ToolList: []engine.Tool{{Name: "get_balance"}},
		Funcs: map[string]func(context.Context, *engine.ToolEnv, engine.ToolCall) (engine.ToolResult, error){
			"get_balance": func(ctx context.Context, _ *engine.ToolEnv, _ engine.ToolCall) (engine.ToolResult, error) {
				<-release
				return engine.ToolResult{Content: json.RawMessage(`{"balance":12}`)}, nil
			},
		},
	}
	h := newHarness(t, engine.Config{TurnLog: &engine.MemoryTurnLog{}, Toolset: tools, Model: &enginetest.ScriptedModel{Steps: [][]engine.ModelEvent{
		{engine.TextEvent("Checking. "), call("1", "get_balance", `{}`)}, enginetest.Text("Twelve.")}}})
	t.Cleanup(func() { close(release) })
	ctx, cut := context.WithCancel(t.Context())
	resp := h.doStreaming(ctx, http.MethodPost, "/engine", headers(), `{"transcript":"balance"}`)
	first := readUntil(t, resp.Body, func(ev sseEvent) bool { return ev.name == engine.EventSpeak })
	cut()
	resp.Body.Close()
	turnID := turnIDOf(first)

	following := resumeTurn(t, h, headers(), turnID, "1")
	defer following.Body.Close()
	ended := make(chan []sseEvent, 1)
	go func() {
		ended <- readUntil(t, following.Body, func(ev sseEvent) bool { return ev.name == engine.EventDone })
	}()
	time.Sleep(100 * time.Millisecond)
	sctx, cancel := context.WithTimeout(t.Context(), 5*time.Second)
	defer cancel()
	if err := h.engine.Shutdown(sctx); err != nil {
		t.Fatal(err)
	}
	select {
	case evs := <-ended:
		for _, ev := range evs {
			if ev.name == engine.EventDone {
				t.Errorf("the follower got done from a turn that is still waiting: %+v", evs)
			}
		}
	case <-time.After(3 * time.Second):
		t.Fatal("the resume still follows the turn after Shutdown")
	}
	for _, r := range []*http.Response{
		h.doStreaming(t.Context(), http.MethodPost, "/engine", headers(), `{"transcript":"balance"}`),
		resumeTurn(t, h, headers(), turnID, "1"),
	} {
		p := readProblem(t, r)
		if r.StatusCode != http.StatusServiceUnavailable || p.Code != engine.CodeShuttingDown || !p.Retryable || r.Header.Get("Retry-After") == "" {
			t.Errorf("%s while shutting down: %d %+v", r.Request.URL.Path, r.StatusCode, p)
		}
	}
}

// outageLog is a TurnLog whose store is unavailable for a while once told, as Redis is while
// it fails over; the writes it refuses meanwhile are counted.
type outageLog struct {
	engine.MemoryTurnLog
	until   atomic.Int64 // Unix nanoseconds
	refused atomic.Int32
}

func (l *outageLog) AppendEvents(ctx context.Context, turn string, owner *engine.TurnOwner, evs []engine.LoggedEvent, done bool, keep time.Time) error {
	if time.Now().UnixNano() < l.until.Load() {
		l.refused.Add(1)
		return fmt.Errorf("appending: %w", engine.ErrStoreUnavailable)
	}
	return l.MemoryTurnLog.AppendEvents(ctx, turn, owner, evs, done, keep)
}

// TestATurnOutlivesAStoreOutage: while the turn log's store is down for a second and a half
// (Redis failing over), the turn's writes are tried again; once it is back the turn is whole
// in the log, and a client whose stream broke meanwhile resumes it to its done.
func TestATurnOutlivesAStoreOutage(t *testing.T) {
	log := &outageLog{}
	words := longAnswer(10)
	h := newHarness(t, engine.Config{TurnLog: log, Model: &enginetest.ScriptedModel{Delay: 20 * time.Millisecond, Steps: [][]engine.ModelEvent{words}}})
	ctx, cut := context.WithCancel(t.Context())
	resp := h.doStreaming(ctx, http.MethodPost, "/engine", headers(), `{"transcript":"hi"}`)
	first := readUntil(t, resp.Body, func(ev sseEvent) bool { return ev.name == engine.EventSpeak })
	log.until.Store(time.Now().Add(1500 * time.Millisecond).UnixNano())
	cut()
	resp.Body.Close()
	time.Sleep(2 * time.Second)
	resumed := resumeTurn(t, h, headers(), turnIDOf(first), strconv.Itoa(first[len(first)-1].id))
	defer resumed.Body.Close()
	rest := readUntil(t, resumed.Body, func(ev sseEvent) bool { return ev.name == engine.EventDone })
	if len(rest) == 0 || rest[len(rest)-1].name != engine.EventDone || log.refused.Load() == 0 {
		t.Fatalf("after an outage of the store (%d writes refused), the resume gave %d events, the last %+v", log.refused.Load(), len(rest), rest)
	}
	for _, ev := range rest {
		if ev.name == engine.EventError {
			t.Errorf("the turn ended with an error after the outage: %s", ev.data)
		}
	}
}
