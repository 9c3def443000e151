package client_test

import (
	"bytes"
	"context"
	"crypto/ecdsa"
	"crypto/elliptic"
	"crypto/rand"
	"crypto/sha256"
	"encoding/base64"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"net/http"
	"net/http/httptest"
	"strings"
	"sync"
	"testing"
	"time"

	"go.uber.org/goleak"

	"github.com/convengine/engine"
	"github.com/convengine/engine/client"
	"github.com/convengine/engine/enginetest"
	"github.com/convengine/engine/examples/demobank"
	"github.com/convengine/engine/intent"
	"github.com/convengine/engine/voice"
	"github.com/convengine/engine/widgets"
)

const userToken = enginetest.DemoUserToken

// demo is the reference server's demo (enginetest.NewDemo) behind a handler that counts the
// requests of each route and remembers how each was authenticated, with a clock the test
// moves, shared by the engine and its clients.
type demo struct {
	*enginetest.Demo
	t     *testing.T
	url   string
	clock *enginetest.Clock

	mu      sync.Mutex
	counts  map[string]int
	schemes map[string]string
}

func newDemo(t *testing.T, cfg engine.Config, opts ...*voice.Options) *demo {
	t.Helper()
	var sockets *voice.Options
	if len(opts) > 0 {
		sockets = opts[0]
	}
	d := &demo{t: t, clock: enginetest.NewClock(time.Now()), counts: map[string]int{}, schemes: map[string]string{}}
	cfg.Now = d.clock.Now
	d.Demo = enginetest.NewDemo(t, &enginetest.DemoOptions{Config: cfg, Voice: sockets, Handler: func(h http.Handler) http.Handler {
		return http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
			d.mu.Lock()
			d.counts[r.URL.Path]++
			scheme, _, _ := strings.Cut(r.Header.Get("Authorization"), " ")
			d.schemes[r.URL.Path] = scheme
			d.mu.Unlock()
			h.ServeHTTP(w, r)
		})
	}})
	d.url = d.URL
	return d
}

func (d *demo) count(path string) int {
	d.mu.Lock()
	defer d.mu.Unlock()
	return d.counts[path]
}

func (d *demo) scheme(path string) string {
	d.mu.Lock()
	defer d.mu.Unlock()
	return d.schemes[path]
}

func (d *demo) client(opts *client.Options) *client.Client {
	d.t.Helper()
	if opts == nil {
		opts = &client.Options{}
	}
	if opts.EngineKey == "" {
		opts.EngineKey = demobank.EngineKey
	}
	if opts.UserToken == nil {
		opts.UserToken = client.StaticToken(userToken)
	}
	opts.Now = d.clock.Now
	c, err := client.New(d.url, opts)
	if err != nil {
		d.t.Fatal(err)
	}
	return c
}

// runTurn runs a turn and checks its events: start first, status and speak before widgets,
// done last, and the deltas and widgets adding up to the done spec.
func runTurn(t *testing.T, c *client.Client, say string) *widgets.Spec {
	t.Helper()
	stream, err := c.Turn(t.Context(), &client.TurnRequest{Transcript: say})
	if err != nil {
		t.Fatal(err)
	}
	defer stream.Close()
	var (
		names  []string
		speak  strings.Builder
		ws     []widgets.Widget
		done   *widgets.Spec
		phase  int
		phases = map[string]int{client.EventStart: 0, client.EventStatus: 1, client.EventSpeak: 1, client.EventWidget: 2, client.EventDone: 3}
	)
	for ev, err := range stream.Events() {
		if err != nil {
			t.Fatalf("after %v: %v", names, err)
		}
		names = append(names, ev.EventName())
		if p := phases[ev.EventName()]; p < phase || (len(names) == 1) != (ev.EventName() == client.EventStart) {
			t.Fatalf("events out of order: %v", names)
		} else {
			phase = p
		}
		switch ev := ev.(type) {
		case *client.StartEvent:
			if ev.TurnID == "" || ev.ConversationID == "" || ev.ID != "1" {
				t.Errorf("start %+v", ev)
			}
		case *client.SpeakEvent:
			speak.WriteString(ev.Delta)
		case *client.WidgetEvent:
			ws = append(ws, ev.Widget)
		case *client.ErrorEvent:
			t.Errorf("error event %+v", ev)
		case *client.DoneEvent:
			done = &ev.Spec
		}
	}
	spec, err := stream.Spec()
	if err != nil || done == nil || spec != done {
		t.Fatalf("spec %+v, %v", spec, err)
	}
	if spec.Speak == "" || spec.Speak != speak.String() || len(spec.Widgets) != len(ws) {
		t.Fatalf("deltas %q and %d widgets do not add up to %+v", speak.String(), len(ws), spec)
	}
	return spec
}

// TestBoundSession runs the demo through a device-bound session: create-session, turns with a
// stat and a confirm widget, then execute and tts (not provided yet: typed 501 problems).
func TestBoundSession(t *testing.T) {
	defer goleak.VerifyNone(t, goleak.IgnoreCurrent())
	d := newDemo(t, engine.Config{})
	c := d.client(nil)
	ctx := t.Context()

	s, err := c.CreateSession(ctx, &client.SessionOptions{Bind: true, Metadata: map[string]any{"app": "test"}})
	if err != nil {
		t.Fatal(err)
	}
	if !s.Bound() || s.Thumbprint() == "" || !strings.Contains(string(s.Theme), "Demo Bank") || !s.ExpiresAt.After(s.CreatedAt) {
		t.Fatalf("session %v, theme %s", s, s.Theme)
	}
	if printed := fmt.Sprintf("%v %+v %#v", s, s, s); strings.Contains(printed, "eyJ") {
		t.Errorf("the session prints its token: %s", printed)
	}

	spec := runTurn(t, c, "what is my balance")
	if st, ok := spec.Widgets[0].(widgets.Stat); !ok || st.Value != "$1,234.56" {
		t.Fatalf("widgets %#v", spec.Widgets)
	}
	if d.scheme(client.PathTurn) != "DPoP" {
		t.Fatalf("the turn was sent as %q", d.scheme(client.PathTurn))
	}
	spec = runTurn(t, c, "send 20 dollars to Alex")
	confirm, ok := spec.Widgets[0].(widgets.Confirm)
	if !ok {
		t.Fatalf("widgets %#v", spec.Widgets)
	}

	res, err := c.Execute(ctx, confirm.Execute, client.Auth{Method: client.AuthFaceID, VerifiedAt: d.clock.Now()}, &client.ExecuteContext{Locale: "en"})
	if err != nil || res.Done.Type != "success" || res.Done.Title != "Money sent" || res.Speak != "Done. I sent $20.00 to Alex." {
		t.Fatalf("execute: %+v, %v", res, err)
	}
	// Again: the first reply, and the action does not run twice.
	again, err := c.Execute(ctx, confirm.Execute, client.Auth{Method: client.AuthPasscode, VerifiedAt: d.clock.Now()}, nil)
	if err != nil || *again != *res {
		t.Fatalf("execute again: %+v, %v", again, err)
	}
	if _, err := c.TTS(ctx, "Hello", ""); !client.IsCode(err, "synthesizer_unavailable") {
		t.Fatalf("tts: %v", err)
	}
	if d.scheme(client.PathExecute) != "DPoP" || d.scheme(client.PathTTS) != "DPoP" {
		t.Error("execute or tts went without the session")
	}
	if d.count(client.PathCreateSession) != 1 || d.count(client.PathTurn) != 2 {
		t.Errorf("requests: %v", d.counts)
	}
	d.Close()
}

func TestUnboundSession(t *testing.T) {
	d := newDemo(t, engine.Config{})
	c := d.client(nil)
	s, err := c.CreateSession(t.Context(), nil)
	if err != nil {
		t.Fatal(err)
	}
	if s.Bound() || s.Thumbprint() != "" || c.Session() != s {
		t.Fatalf("session %v", s)
	}
	spec := runTurn(t, c, "how close am I to my savings goal")
	if _, ok := spec.Widgets[0].(widgets.Progress); !ok {
		t.Fatalf("widgets %#v", spec.Widgets)
	}
	if d.scheme(client.PathTurn) != "Bearer" {
		t.Fatalf("the turn was sent as %q", d.scheme(client.PathTurn))
	}
}

// TestRecreateAndRetryOnce lets a bound session expire: the next turn is refused, the client
// creates a new session with the same device key and retries once, and the turn succeeds.
func TestRecreateAndRetryOnce(t *testing.T) {
	d := newDemo(t, engine.Config{SessionLifetime: time.Hour})
	c := d.client(nil)
	first, err := c.CreateSession(t.Context(), &client.SessionOptions{Bind: true})
	if err != nil {
		t.Fatal(err)
	}
	d.clock.Add(2 * time.Hour)
	runTurn(t, c, "what is my balance")
	second := c.Session()
	if second == first || second.ID == first.ID || second.Thumbprint() != first.Thumbprint() {
		t.Fatalf("sessions %v then %v", first, second)
	}
	if d.count(client.PathCreateSession) != 2 || d.count(client.PathTurn) != 2 {
		t.Fatalf("requests: %v", d.counts)
	}
	runTurn(t, c, "what is my balance")
	if d.count(client.PathCreateSession) != 2 || d.count(client.PathTurn) != 3 {
		t.Fatalf("requests after the retry: %v", d.counts)
	}
}

// TestConcurrentRequestsRecreateOnce lets the session expire under four concurrent turns:
// one new session serves them all.
func TestConcurrentRequestsRecreateOnce(t *testing.T) {
	d := newDemo(t, engine.Config{SessionLifetime: time.Hour})
	c := d.client(nil)
	if _, err := c.CreateSession(t.Context(), &client.SessionOptions{Bind: true}); err != nil {
		t.Fatal(err)
	}
	d.clock.Add(2 * time.Hour)
	var wg sync.WaitGroup
	for range 4 {
		wg.Go(func() {
			stream, err := c.Turn(t.Context(), &client.TurnRequest{Transcript: "what is my balance"})
			if err != nil {
				t.Error(err)
				return
			}
			defer stream.Close()
			if _, err := stream.Spec(); err != nil {
				t.Error(err)
			}
		})
	}
	wg.Wait()
	if n := d.count(client.PathCreateSession); n != 2 {
		t.Fatalf("%d create-session requests, want 2", n)
	}
}

// proofSpoiler is a transport that breaks the DPoP proof of the first n turn requests.
type proofSpoiler struct {
	mu sync.Mutex
	n  int
}

func (p *proofSpoiler) RoundTrip(r *http.Request) (*http.Response, error) {
	p.mu.Lock()
	spoil := r.URL.Path == client.PathTurn && p.n > 0
	if spoil {
		p.n--
	}
	p.mu.Unlock()
	if spoil {
		r = r.Clone(r.Context())
		proof := r.Header.Get("DPoP")
		r.Header.Set("DPoP", proof[:len(proof)-6]+"AAAAAA")
	}
	return http.DefaultTransport.RoundTrip(r)
}

// TestAnyUnauthorizedRecreatesOnce: a 401 other than invalid_session on a key-bound session
// (here invalid_dpop_proof, as a proxy that alters the proof causes) also re-creates the session
// and retries once; a second one is returned, not retried again.
func TestAnyUnauthorizedRecreatesOnce(t *testing.T) {
	for _, spoiled := range []int{1, 2} {
		t.Run(fmt.Sprint(spoiled, " refused"), func(t *testing.T) {
			d := newDemo(t, engine.Config{})
			c := d.client(&client.Options{HTTPClient: &http.Client{Transport: &proofSpoiler{n: spoiled}}})
			if _, err := c.CreateSession(t.Context(), &client.SessionOptions{Bind: true}); err != nil {
				t.Fatal(err)
			}
			stream, err := c.Turn(t.Context(), &client.TurnRequest{Transcript: "what is my balance"})
			if spoiled == 1 {
				if err != nil {
					t.Fatal(err)
				}
				stream.Close()
			} else if !client.IsCode(err, client.CodeInvalidDPoPProof) {
				t.Fatalf("error %v", err)
			}
			if d.count(client.PathCreateSession) != 2 || d.count(client.PathTurn) != 2 {
				t.Fatalf("requests: %v", d.counts)
			}
		})
	}
}

// forgetfulStore stores sessions and never finds them again.
type forgetfulStore struct{}

func (forgetfulStore) PutSession(context.Context, *engine.Session) error { return nil }
func (forgetfulStore) Session(context.Context, string) (*engine.Session, error) {
	return nil, engine.ErrSessionNotFound
}

// TestSecondRejectionSurfaces checks that the client re-creates the session once, and returns
// the engine's second refusal instead of trying again.
func TestSecondRejectionSurfaces(t *testing.T) {
	d := newDemo(t, engine.Config{Sessions: forgetfulStore{}})
	c := d.client(nil)
	if _, err := c.CreateSession(t.Context(), &client.SessionOptions{Bind: true}); err != nil {
		t.Fatal(err)
	}
	_, err := c.Turn(t.Context(), &client.TurnRequest{Transcript: "hi"})
	var ce *client.Error
	if !errors.As(err, &ce) || ce.Code != client.CodeInvalidSession || ce.Status != 401 || ce.WWWAuthenticate != `DPoP error="invalid_token"` {
		t.Fatalf("error %v", err)
	}
	if d.count(client.PathCreateSession) != 2 || d.count(client.PathTurn) != 2 {
		t.Fatalf("requests: %v", d.counts)
	}
}

// TestNonceRetry runs an engine that requires DPoP nonces: the client uses the nonce of
// create-session, and when it goes stale retries once with the fresh one, keeping its session.
func TestNonceRetry(t *testing.T) {
	d := newDemo(t, engine.Config{DPoP: &engine.DPoPOptions{RequireNonce: true, NonceLifetime: time.Minute}})
	c := d.client(nil)
	s, err := c.CreateSession(t.Context(), &client.SessionOptions{Bind: true})
	if err != nil {
		t.Fatal(err)
	}
	runTurn(t, c, "what is my balance")
	if d.count(client.PathTurn) != 1 {
		t.Fatalf("the nonce of create-session was not used: %v", d.counts)
	}
	d.clock.Add(3 * time.Minute)
	runTurn(t, c, "what is my balance")
	if d.count(client.PathTurn) != 3 || d.count(client.PathCreateSession) != 1 || c.Session() != s {
		t.Fatalf("requests: %v", d.counts)
	}
}

// TestHeadersReachTheTools checks the request id prefix and generator, forwarded headers and
// client metadata on their way to a tool.
func TestHeadersReachTheTools(t *testing.T) {
	tenant := &engine.Tenant{Key: "pk_t", Name: "T", Environments: map[string]*engine.Environment{
		engine.EnvProduction: {}, engine.EnvStaging: {}}}
	tenants, _ := engine.NewStaticTenants(tenant)
	tools := &enginetest.FuncToolset{
		ToolList: []engine.Tool{{Name: "lookup", Parameters: json.RawMessage(`{"type":"object"}`)}},
		Funcs: map[string]func(context.Context, *engine.ToolEnv, engine.ToolCall) (engine.ToolResult, error){
			"lookup": func(context.Context, *engine.ToolEnv, engine.ToolCall) (engine.ToolResult, error) {
				return engine.ToolResult{Content: json.RawMessage(`{}`)}, nil
			},
		},
	}
	model := &enginetest.ScriptedModel{Steps: [][]engine.ModelEvent{
		{engine.ToolCallEvent(engine.ToolCall{ID: "1", Name: "lookup", Arguments: json.RawMessage(`{}`)})},
		enginetest.Text("Done."),
	}}
	e, err := engine.New(engine.Config{Tenants: tenants, Model: model, Toolset: tools, SigningKey: bytes.Repeat([]byte{1}, 32),
		Logger: enginetest.DebugLogger()})
	if err != nil {
		t.Fatal(err)
	}
	srv := httptest.NewServer(e.Handler())
	defer srv.Close()
	defer e.Close()
	c, err := client.New(srv.URL+"/", &client.Options{
		EngineKey: "pk_t", UserToken: client.StaticToken(userToken), RequestIDPrefix: "stg-",
		NewRequestID: func() string { return "app.42" },
		Forward:      http.Header{"X-Tenant-Id": {"t-9"}, "X-Engine-Forward-Authorization": {"Bearer backend"}},
		Metadata:     map[string]any{"userId": "u1"},
	})
	if err != nil {
		t.Fatal(err)
	}
	stream, err := c.Turn(t.Context(), &client.TurnRequest{Transcript: "look it up"})
	if err != nil {
		t.Fatal(err)
	}
	if _, err := stream.Spec(); err != nil {
		t.Fatal(err)
	}
	stream.Close()
	calls := tools.Calls()
	if len(calls) != 1 {
		t.Fatalf("%d tool calls", len(calls))
	}
	env := calls[0].Env
	if env.RequestID != "stg-app.42" || env.Environment.Name != engine.EnvStaging || env.UserToken.Reveal() != userToken ||
		http.Header(env.Forward).Get("X-Tenant-Id") != "t-9" || http.Header(env.Forward).Get("Authorization") != "Bearer backend" ||
		env.Metadata["userId"] != "u1" {
		t.Fatalf("tool environment %+v", env)
	}
}

func TestErrors(t *testing.T) {
	d := newDemo(t, engine.Config{})
	t.Run("unknown engine key", func(t *testing.T) {
		c := d.client(&client.Options{EngineKey: "pk_nope"})
		_, err := c.CreateSession(t.Context(), nil)
		var ce *client.Error
		if !errors.As(err, &ce) || ce.Status != 401 || ce.Code != "unknown_engine_key" || ce.RequestID == "" || ce.Retryable {
			t.Fatalf("error %#v", err)
		}
		if !strings.Contains(err.Error(), "401 unknown_engine_key") {
			t.Errorf("message %q", err)
		}
	})
	t.Run("invalid request", func(t *testing.T) {
		c := d.client(nil)
		_, err := c.Turn(t.Context(), &client.TurnRequest{Mode: "shout", Transcript: "x"})
		var ce *client.Error
		if !errors.As(err, &ce) || ce.Code != "invalid_request" || ce.Field != "mode" {
			t.Fatalf("error %v", err)
		}
	})
	t.Run("no session to re-create", func(t *testing.T) {
		tn, _ := demobank.Tenant("http://127.0.0.1:1", "")
		tn.RequireSession = true
		tenants, _ := engine.NewStaticTenants(tn)
		e, _ := engine.New(engine.Config{Tenants: tenants, Model: intent.New(nil), SigningKey: bytes.Repeat([]byte{1}, 32),
			Logger: enginetest.DebugLogger()})
		srv := httptest.NewServer(e.Handler())
		defer srv.Close()
		c, _ := client.New(srv.URL, &client.Options{EngineKey: demobank.EngineKey, UserToken: client.StaticToken("u")})
		if _, err := c.Turn(t.Context(), &client.TurnRequest{Transcript: "hi"}); !client.IsCode(err, client.CodeInvalidSession) {
			t.Fatalf("error %v", err)
		}
	})
	t.Run("not a problem", func(t *testing.T) {
		proxy := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
			w.Header().Set("Content-Type", "text/html")
			w.WriteHeader(http.StatusBadGateway)
			io.WriteString(w, "<html>bad gateway</html>")
		}))
		defer proxy.Close()
		c, _ := client.New(proxy.URL, &client.Options{EngineKey: "k", UserToken: client.StaticToken("u")})
		_, err := c.Turn(t.Context(), &client.TurnRequest{Transcript: "hi"})
		var ce *client.Error
		if !errors.As(err, &ce) || ce.Status != 502 || ce.Code != "" || ce.Title != "Bad Gateway" {
			t.Fatalf("error %#v", err)
		}
	})
	t.Run("user token source fails", func(t *testing.T) {
		c := d.client(&client.Options{UserToken: failingToken{}})
		if _, err := c.CreateSession(t.Context(), nil); err == nil || strings.Contains(err.Error(), userToken) {
			t.Fatalf("error %v", err)
		}
	})
}

type failingToken struct{}

func (failingToken) UserToken(context.Context) (string, error) { return "", errors.New("signed out") }

// TestStreamEndsEarly checks a stream cut off before done, by an engine that does not keep its
// turns: the events that came, then ErrIncompleteStream, and the assembled part of the spec.
func TestStreamEndsEarly(t *testing.T) {
	srv := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		if r.Method != http.MethodPost {
			w.Header().Set("Content-Type", "application/problem+json")
			w.WriteHeader(http.StatusNotFound)
			io.WriteString(w, `{"type":"about:blank","title":"Not found","status":404,"code":"not_found","retryable":false}`)
			return
		}
		w.Header().Set("Content-Type", "text/event-stream")
		io.WriteString(w, "id: 1\nevent: start\ndata: {\"turnId\":\"t\",\"conversationId\":\"c\"}\n\n: ping\n\n"+
			"id: 2\nevent: speak\ndata: {\"delta\":\"Hel\"}\n\nid: 3\nevent: speak\ndata: {\"delta\":\"lo\"}\n\n"+
			"id: 4\nevent: widget\ndata: {\"type\":\"stat\",\"label\":\"A\",\"value\":\"1\"}\n\nid: 5\nevent: future\ndata: {}\n\n")
	}))
	defer srv.Close()
	c, _ := client.New(srv.URL, &client.Options{EngineKey: "k", UserToken: client.StaticToken("u")})
	stream, err := c.Turn(t.Context(), &client.TurnRequest{Transcript: "hi"})
	if err != nil {
		t.Fatal(err)
	}
	defer stream.Close()
	var names []string
	var last error
	for ev, err := range stream.Events() {
		if err != nil {
			last = err
			break
		}
		names = append(names, ev.EventName())
	}
	if strings.Join(names, ",") != "start,speak,speak,widget,future" || !errors.Is(last, client.ErrIncompleteStream) {
		t.Fatalf("events %v, error %v", names, last)
	}
	spec, err := stream.Spec()
	if !errors.Is(err, client.ErrIncompleteStream) || spec.Speak != "Hello" || len(spec.Widgets) != 1 {
		t.Fatalf("spec %+v, %v", spec, err)
	}
}

func TestNewRejectsBadOptions(t *testing.T) {
	for name, tc := range map[string]struct {
		url  string
		opts *client.Options
	}{
		"nil options":    {"http://a", nil},
		"no key":         {"http://a", &client.Options{UserToken: client.StaticToken("u")}},
		"no token":       {"http://a", &client.Options{EngineKey: "k"}},
		"relative url":   {"/engine", &client.Options{EngineKey: "k", UserToken: client.StaticToken("u")}},
		"url with query": {"http://a/?x", &client.Options{EngineKey: "k", UserToken: client.StaticToken("u")}},
	} {
		if _, err := client.New(tc.url, tc.opts); !errors.Is(err, client.ErrConfig) {
			t.Errorf("%s: %v", name, err)
		}
	}
	if s := client.StaticToken("secret"); strings.Contains(s.String()+s.GoString(), "secret") {
		t.Error("a static token prints its value")
	}
}

// TestDeviceProofOfActions runs a tenant that requires device proofs: a session with a gate
// key (a key the app would hold behind the biometric gate) executes, and its backend gets the
// proof, the gate key itself and the token it signs; a bound session without one signs with
// its device key; an unbound session cannot execute.
func TestDeviceProofOfActions(t *testing.T) {
	d := newDemo(t, engine.Config{})
	d.Tenant.RequireActionProof = true
	gate, err := ecdsa.GenerateKey(elliptic.P256(), rand.Reader)
	if err != nil {
		t.Fatal(err)
	}
	for _, tc := range []struct {
		name string
		opts *client.SessionOptions
		code string
	}{
		{"gate key", &client.SessionOptions{Bind: true, Gate: gate}, ""},
		{"device key", &client.SessionOptions{Bind: true}, ""},
		{"unbound", &client.SessionOptions{}, engine.CodeDeviceProofRequired},
	} {
		t.Run(tc.name, func(t *testing.T) {
			c := d.client(&client.Options{UserToken: client.StaticToken("proof-user-" + tc.name)})
			s, err := c.CreateSession(t.Context(), tc.opts)
			if err != nil {
				t.Fatal(err)
			}
			spec := runTurn(t, c, "send 20 dollars to Alex")
			confirm := spec.Widgets[0].(widgets.Confirm)
			res, err := c.Execute(t.Context(), confirm.Execute, client.Auth{Method: client.AuthFaceID, VerifiedAt: d.clock.Now()}, nil)
			if tc.code != "" {
				if !client.IsCode(err, tc.code) {
					t.Fatalf("execute: %+v %v, want %s", res, err, tc.code)
				}
				return
			}
			if err != nil || res.Done.Type != "success" {
				t.Fatalf("execute: %+v %v", res, err)
			}
			// The action's call, among the backend's requests: a session's warm-up or device
			// check may reach it after the action's.
			var sent http.Header
			for _, h := range d.Backend.Received() {
				if h.Get("Engine-Action-Token") == confirm.Execute.Token {
					sent = h
				}
			}
			if sent == nil {
				t.Fatal("the backend got no call with the action's token")
			}
			want := s.Thumbprint()
			if tc.opts.Gate != nil {
				want = thumbprintOf(t, &gate.PublicKey)
			}
			var jwk struct{ Crv, Kty, X, Y string }
			raw, _ := base64.RawURLEncoding.DecodeString(sent.Get("Engine-Device-Key"))
			json.Unmarshal(raw, &jwk)
			sum := sha256.Sum256([]byte(`{"crv":"` + jwk.Crv + `","kty":"` + jwk.Kty + `","x":"` + jwk.X + `","y":"` + jwk.Y + `"}`))
			if got := base64.RawURLEncoding.EncodeToString(sum[:]); sent.Get("Engine-Action-Proof") == "" || got != want ||
				sent.Get("Engine-Action-Token") != confirm.Execute.Token || sent.Get("Engine-Action-Proof-Type") != "action-proof+jwt" {
				t.Errorf("the backend got proof %q, a key of thumbprint %q (want %q)", sent.Get("Engine-Action-Proof"), got, want)
			}
		})
	}
}

// thumbprintOf is the RFC 7638 thumbprint of a P-256 public key.
func thumbprintOf(t *testing.T, pub *ecdsa.PublicKey) string {
	raw, err := pub.Bytes()
	if err != nil {
		t.Fatal(err)
	}
	b64 := base64.RawURLEncoding
	sum := sha256.Sum256([]byte(`{"crv":"P-256","kty":"EC","x":"` + b64.EncodeToString(raw[1:33]) + `","y":"` + b64.EncodeToString(raw[33:]) + `"}`))
	return b64.EncodeToString(sum[:])
}
