package handoff_test

import (
	"bufio"
	"context"
	"encoding/json"
	"io"
	"net/http"
	"net/http/httptest"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/google/uuid"

	"github.com/convengine/engine"
	"github.com/convengine/engine/enginetest"
	"github.com/convengine/engine/examples/demobank"
	"github.com/convengine/engine/handoff"
	"github.com/convengine/engine/httptools"
	"github.com/convengine/engine/pii"
	"github.com/convengine/engine/record"
	"github.com/convengine/engine/toolsets"
)

const secret = "centre-secret-0123456789"

// lazyTenants serves the demo's tenants once the demo exists.
type lazyTenants struct {
	mu sync.Mutex
	ts engine.TenantStore
}

func (l *lazyTenants) Tenant(ctx context.Context, key string) (*engine.Tenant, error) {
	l.mu.Lock()
	ts := l.ts
	l.mu.Unlock()
	return ts.Tenant(ctx, key)
}

// replica is the demo engine with a switchboard.
type replica struct {
	demo *enginetest.Demo
	sb   *handoff.Switchboard
}

type setup struct {
	store   handoff.Store
	replay  engine.ReplayStore
	handoff string // the tenant's handoff object
	now     func() time.Time
	backoff []time.Duration
	// recorder is the engine's Recorder and the switchboard's, nil for none.
	recorder *record.Recorder
}

func newReplica(t *testing.T, s *setup) *replica {
	t.Helper()
	tenants := &lazyTenants{}
	privacy, err := pii.NewPrivacy(nil)
	if err != nil {
		t.Fatal(err)
	}
	if s.backoff == nil {
		s.backoff = []time.Duration{time.Millisecond, time.Millisecond}
	}
	o := &handoff.Options{Tenants: tenants, Store: s.store, Replay: s.replay, Privacy: privacy,
		Desk: handoff.Desk{}, Now: s.now, Tick: time.Hour, Webhook: &handoff.WebhookOptions{Backoff: s.backoff, Now: s.now}}
	if s.recorder != nil {
		o.Recorder = s.recorder
	}
	sb, err := handoff.New(o)
	if err != nil {
		t.Fatal(err)
	}
	r := &replica{sb: sb}
	var routes http.Handler
	cfg := engine.Config{Privacy: privacy, Toolset: toolsets.Combine(httptools.New(nil), sb.Toolset())}
	if s.recorder != nil {
		cfg.Recorder = s.recorder
	}
	cfg.Guards = sb.Guards(nil)
	r.demo = enginetest.NewDemo(t, &enginetest.DemoOptions{Config: cfg,
		Tenant: func(tn *engine.Tenant) {
			if s.handoff != "" {
				tn.Handoff = json.RawMessage(s.handoff)
			}
		},
		Handler: func(h http.Handler) http.Handler {
			return http.HandlerFunc(func(w http.ResponseWriter, req *http.Request) {
				if strings.HasPrefix(req.URL.Path, "/engine/handoff/") {
					routes.ServeHTTP(w, req)
					return
				}
				h.ServeHTTP(w, req)
			})
		}})
	_ = privacy.Know(r.demo.Tenant)
	st, err := engine.NewStaticTenants(r.demo.Tenant)
	if err != nil {
		t.Fatal(err)
	}
	tenants.mu.Lock()
	tenants.ts = st
	tenants.mu.Unlock()
	if err := sb.Bind(r.demo.Engine); err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { sb.Close() })
	mux := http.NewServeMux()
	for _, rt := range sb.Routes() {
		mux.Handle(rt.Pattern, rt.Handler)
	}
	routes = mux
	return r
}

func caller(user string) *engine.Caller {
	return &engine.Caller{EngineKey: demobank.EngineKey, UserToken: user}
}

// say runs a turn and returns its spec.
func (r *replica) say(t *testing.T, user, conv, text string) *engine.Event {
	t.Helper()
	var done *engine.Event
	for ev, err := range r.demo.Engine.Turn(context.Background(), caller(user), &engine.TurnInput{Transcript: text, ConversationID: conv}) {
		if err != nil {
			t.Fatalf("turn %q: %v", text, err)
		}
		if ev.Type == engine.EventDone {
			done = &ev
		}
	}
	if done == nil {
		t.Fatalf("turn %q: no done", text)
	}
	return done
}

// handoffOf returns the id of the handoff widget of a spec, "" for none.
func handoffOf(ev *engine.Event) string {
	for _, w := range ev.Spec.Widgets {
		if w.WidgetType() == handoff.WidgetType {
			b, _ := json.Marshal(w)
			var f struct{ ID string }
			_ = json.Unmarshal(b, &f)
			return f.ID
		}
	}
	return ""
}

func newConv() string { return uuid.NewString() }

// centre is a fake contact centre: it keeps the events the engine posted, checking their
// signatures, and answers with status.
type centre struct {
	srv    *httptest.Server
	mu     sync.Mutex
	events []map[string]any
	bad    int
	status int
	got    chan map[string]any
}

func newCentre(t *testing.T) *centre {
	c := &centre{status: http.StatusOK, got: make(chan map[string]any, 64)}
	c.srv = httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		body, _ := io.ReadAll(r.Body)
		c.mu.Lock()
		status := c.status
		if _, err := handoff.Verify(secret, r.Header.Get(handoff.SignatureHeader), body, time.Now()); err != nil {
			c.bad++
			c.mu.Unlock()
			w.WriteHeader(http.StatusUnauthorized)
			return
		}
		var ev map[string]any
		_ = json.Unmarshal(body, &ev)
		if status < 300 {
			c.events = append(c.events, ev)
		}
		c.mu.Unlock()
		w.WriteHeader(status)
		if status < 300 {
			c.got <- ev
		}
	}))
	t.Cleanup(c.srv.Close)
	return c
}

func (c *centre) next(t *testing.T) map[string]any {
	t.Helper()
	select {
	case ev := <-c.got:
		return ev
	case <-time.After(5 * time.Second):
		t.Fatal("the contact centre got nothing")
		return nil
	}
}

// answer posts a signed answer to the replica's events endpoint and returns the status.
func (r *replica) answer(t *testing.T, body string, sign func([]byte) string) int {
	t.Helper()
	req, _ := http.NewRequest(http.MethodPost, r.demo.URL+handoff.PathEvents, strings.NewReader(body))
	req.Header.Set("Content-Type", "application/json")
	if sign == nil {
		sign = func(b []byte) string { return handoff.Sign(secret, time.Now(), b) }
	}
	req.Header.Set(handoff.SignatureHeader, sign([]byte(body)))
	res, err := http.DefaultClient.Do(req)
	if err != nil {
		t.Fatal(err)
	}
	res.Body.Close()
	return res.StatusCode
}

func headers(req *http.Request, user string) {
	req.Header.Set("X-Engine-Key", demobank.EngineKey)
	req.Header.Set("X-Token", user)
	req.Header.Set("X-Request-ID", "prod-"+uuid.NewString())
}

// stream is the customer's stream of a handoff.
type stream struct {
	events chan [2]string // event name, data
}

func (r *replica) open(t *testing.T, user, id string) *stream {
	t.Helper()
	ctx, cancel := context.WithCancel(context.Background())
	t.Cleanup(cancel)
	req, _ := http.NewRequestWithContext(ctx, http.MethodGet, r.demo.URL+"/engine/handoff/"+id+"/events", nil)
	headers(req, user)
	res, err := http.DefaultClient.Do(req)
	if err != nil {
		t.Fatal(err)
	}
	if res.StatusCode != 200 {
		t.Fatalf("stream: %d", res.StatusCode)
	}
	s := &stream{events: make(chan [2]string, 64)}
	go func() {
		defer res.Body.Close()
		defer close(s.events)
		sc := bufio.NewScanner(res.Body)
		var name string
		for sc.Scan() {
			line := sc.Text()
			if v, ok := strings.CutPrefix(line, "event: "); ok {
				name = v
			}
			if v, ok := strings.CutPrefix(line, "data: "); ok {
				s.events <- [2]string{name, v}
			}
		}
	}()
	return s
}

func (s *stream) next(t *testing.T) (string, map[string]any) {
	t.Helper()
	select {
	case ev, ok := <-s.events:
		if !ok {
			t.Fatal("the stream ended")
		}
		var m map[string]any
		_ = json.Unmarshal([]byte(ev[1]), &m)
		return ev[0], m
	case <-time.After(5 * time.Second):
		t.Fatal("the stream said nothing")
		return "", nil
	}
}

func (r *replica) write(t *testing.T, user, id, text string) int {
	t.Helper()
	req, _ := http.NewRequest(http.MethodPost, r.demo.URL+"/engine/handoff/"+id+"/messages", strings.NewReader(`{"text":`+quote(text)+`}`))
	headers(req, user)
	req.Header.Set("Content-Type", "application/json")
	res, err := http.DefaultClient.Do(req)
	if err != nil {
		t.Fatal(err)
	}
	res.Body.Close()
	return res.StatusCode
}

func quote(s string) string {
	b, _ := json.Marshal(s)
	return string(b)
}
