package voice_test

import (
	"context"
	"encoding/base64"
	"encoding/json"
	"io"
	"net/http"
	"net/http/httptest"
	"strings"
	"testing"
	"time"

	"github.com/convengine/engine"
	"github.com/convengine/engine/agui"
	"github.com/convengine/engine/audio"
	"github.com/convengine/engine/enginetest"
	"github.com/convengine/engine/usage"
)

// refusal is what a transport shows of a turn the admission refused: its code, and its HTTP
// status and Retry-After where the transport has them (0 and "" on the voice socket, which
// answers with an error message).
type refusal struct {
	code       string
	status     int
	retryAfter string
}

// A transport runs one turn of the test's user, typed or spoken, that the test expects to be
// refused, and returns what its client saw.
type transport struct {
	name   string
	spoken bool // it carries speech
	turn   func(t *testing.T, h *harness, spoken bool) refusal
}

var transports = []transport{
	{"stream", true, sseTurn},
	{"in-process", true, inProcessTurn},
	{"voice socket", true, socketTurn},
	{"AG-UI", false, aguiTurn},
}

func sseTurn(t *testing.T, h *harness, spoken bool) refusal {
	body := `{"transcript":"hi"}`
	if spoken {
		b, _ := json.Marshal(map[string]string{"audio_base64": base64.StdEncoding.EncodeToString(audio.EncodeWAV(voiced(8000), 16000))})
		body = string(b)
	}
	resp := h.do(t.Context(), http.MethodPost, engine.PathTurn, headers(), body)
	defer resp.Body.Close()
	if resp.StatusCode == http.StatusOK {
		io.Copy(io.Discard, resp.Body)
		return refusal{status: http.StatusOK}
	}
	p := readProblem(t, resp)
	return refusal{p.Code, resp.StatusCode, resp.Header.Get("Retry-After")}
}

func inProcessTurn(t *testing.T, h *harness, spoken bool) refusal {
	in := &engine.TurnInput{Transcript: "hi"}
	if spoken {
		in = &engine.TurnInput{Samples: voiced(8000)}
	}
	for _, err := range h.engine.Turn(t.Context(), &engine.Caller{EngineKey: testKey, UserToken: testToken}, in) {
		if p, ok := err.(*engine.Problem); ok {
			// The status and Retry-After a host writes with WriteProblem.
			rec := httptest.NewRecorder()
			engine.WriteProblem(rec, p)
			return refusal{p.Code, rec.Code, rec.Header().Get("Retry-After")}
		}
	}
	return refusal{status: http.StatusOK}
}

func socketTurn(t *testing.T, h *harness, spoken bool) refusal {
	c := h.dialed
	if spoken {
		c.sayHi()
	} else {
		c.send(map[string]any{"type": "text", "transcript": "hi"})
	}
	m := c.next()
	if m.Type != "error" {
		return refusal{status: http.StatusOK}
	}
	if !m.Error.Retryable {
		t.Errorf("the socket's refusal is not retryable: %s", m.raw)
	}
	return refusal{code: m.Error.Code}
}

func aguiTurn(t *testing.T, h *harness, _ bool) refusal {
	srv := httptest.NewServer(agui.Handler(h.engine, nil))
	defer srv.Close()
	req, _ := http.NewRequestWithContext(t.Context(), http.MethodPost, srv.URL,
		strings.NewReader(`{"threadId":"t1","runId":"r1","messages":[{"id":"m1","role":"user","content":"hi"}],"tools":[],"context":[],"state":{}}`))
	req.Header = headers()
	req.Header.Set("Accept", "text/event-stream")
	resp, err := srv.Client().Do(req)
	if err != nil {
		t.Fatal(err)
	}
	defer resp.Body.Close()
	if resp.StatusCode == http.StatusOK {
		io.Copy(io.Discard, resp.Body)
		return refusal{status: http.StatusOK}
	}
	p := readProblem(t, resp)
	return refusal{p.Code, resp.StatusCode, resp.Header.Get("Retry-After")}
}

// gate is a transcriber that holds every transcription until the test opens it.
type gate struct {
	started chan struct{}
	open    chan struct{}
}

func (g *gate) Transcribe(ctx context.Context, _ []int16, _ int, _ string) (string, error) {
	g.started <- struct{}{}
	select {
	case <-g.open:
	case <-ctx.Done():
	}
	return "hi", nil
}

// TestEveryTransportGetsTheSameRefusal: each refusal of the admission (the user's rate limit,
// the process's turn slots, the tenant's budget, the user's and the process's transcriptions)
// reaches the client of every transport with the same code, and with the same status and
// Retry-After on those that have them: the turn stream, in-process turns, the voice socket and
// AG-UI runs are admitted by one pipeline.
func TestEveryTransportGetsTheSameRefusal(t *testing.T) {
	clock := enginetest.NewClock(time.Date(2026, 11, 28, 12, 0, 0, 0, time.UTC))
	hi := enginetest.ModelFunc(func(context.Context, *engine.ModelRequest) []engine.ModelEvent { return enginetest.Text("Hi.") })
	other := &engine.Caller{EngineKey: testKey, UserToken: "another-user"}
	// exhaust runs the user's turns in process until one is refused.
	exhaust := func(t *testing.T, h *harness) {
		for range 10 {
			for _, err := range h.engine.Turn(t.Context(), &engine.Caller{EngineKey: testKey, UserToken: testToken}, &engine.TurnInput{Transcript: "hi"}) {
				if err != nil {
					return
				}
			}
		}
		t.Fatal("the user's turns were never refused")
	}
	// holdTranscription starts a spoken turn of caller that waits in its transcription; the
	// returned function lets it finish.
	holdTranscription := func(t *testing.T, h *harness, g *gate, caller *engine.Caller) func() {
		done := make(chan struct{})
		go func() {
			defer close(done)
			for range h.engine.Turn(context.Background(), caller, &engine.TurnInput{Samples: voiced(8000)}) {
			}
		}()
		<-g.started
		return func() { close(g.open); <-done }
	}
	cases := []struct {
		name    string
		spoken  bool
		want    refusal
		tenant  func(*engine.Tenant)
		config  func(*engine.Config)
		prepare func(t *testing.T, h *harness) (undo func())
	}{
		{
			name: "the user's rate limit", want: refusal{engine.CodeRateLimited, 429, "1"},
			tenant: func(tn *engine.Tenant) { tn.Limits.UserPerMinute, tn.Limits.UserBurst = 60, 4 },
			prepare: func(t *testing.T, h *harness) func() {
				exhaust(t, h)
				return func() {}
			},
		},
		{
			name: "the process's turn slots", want: refusal{engine.CodeOverloaded, 503, "1"},
			config: func(c *engine.Config) { c.MaxConcurrentTurns = 1 },
			prepare: func(t *testing.T, h *harness) func() {
				a, err := h.engine.Admit(t.Context(), other, engine.Work{Kind: engine.WorkTurn})
				if err != nil {
					t.Fatal(err)
				}
				return a.Release
			},
		},
		{
			name: "the budget's turns per user", want: refusal{engine.CodeQuotaExceeded, 429, "43200"},
			tenant: func(tn *engine.Tenant) { tn.Limits.TurnsPerUserPerDay = 1 },
			config: func(c *engine.Config) { c.Budget = &usage.MemoryBudget{Now: clock.Now} },
			prepare: func(t *testing.T, h *harness) func() {
				exhaust(t, h)
				return func() {}
			},
		},
		{
			name: "the user's transcriptions", spoken: true, want: refusal{engine.CodeRateLimited, 429, "1"},
			config: func(c *engine.Config) { c.MaxTranscriptionsPerUser = 1 },
			prepare: func(t *testing.T, h *harness) func() {
				return holdTranscription(t, h, h.gate, &engine.Caller{EngineKey: testKey, UserToken: testToken})
			},
		},
		{
			name: "the process's transcriptions", spoken: true, want: refusal{engine.CodeOverloaded, 503, "1"},
			config:  func(c *engine.Config) { c.MaxConcurrentTranscriptions = 1 },
			prepare: func(t *testing.T, h *harness) func() { return holdTranscription(t, h, h.gate, other) },
		},
	}
	for _, tc := range cases {
		for _, tr := range transports {
			if tc.spoken && !tr.spoken {
				continue // AG-UI runs carry text
			}
			t.Run(tc.name+"/"+tr.name, func(t *testing.T) {
				g := &gate{started: make(chan struct{}, 4), open: make(chan struct{})}
				cfg := engine.Config{Model: hi, Now: clock.Now, Transcriber: g}
				if tc.config != nil {
					tc.config(&cfg)
				}
				tn := testTenant()
				if tc.tenant != nil {
					tc.tenant(tn)
				}
				h := newHarness(t, cfg, tn)
				h.gate = g
				if tr.name == "voice socket" {
					h.dialed = h.dial(t, headers()) // the socket is open before the user's bounds are reached
				}
				undo := tc.prepare(t, h)
				defer undo()
				got := tr.turn(t, h, tc.spoken)
				want := tc.want
				if tr.name == "voice socket" {
					want = refusal{code: want.code}
				}
				if got != want {
					t.Errorf("got %+v, want %+v", got, want)
				}
			})
		}
	}
}
