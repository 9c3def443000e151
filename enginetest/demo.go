package enginetest

import (
	"bytes"
	"encoding/json"
	"log/slog"
	"net/http"
	"net/http/httptest"
	"strings"
	"sync"
	"testing"

	"github.com/convengine/engine"
	"github.com/convengine/engine/examples/demobank"
	"github.com/convengine/engine/httptools"
	"github.com/convengine/engine/intent"
	"github.com/convengine/engine/mcptools"
	"github.com/convengine/engine/voice"
)

// DemoUserToken is the end user's token of [Demo.Headers].
const DemoUserToken = "demo-user-token-s3cr3t"

// DemoOptions adjust [NewDemo]. The zero value serves the demo as cmd/engine does.
type DemoOptions struct {
	// Config is the engine's configuration. NewDemo fills in what is not set: Tenants (the
	// demo tenant, and Extra's), Model (the intent model), Toolset (httptools, or mcptools
	// with MCP), SigningKey and Logger (JSON at debug level into Demo.Logs).
	Config engine.Config
	// MCP serves the demo bank's tools over MCP (streamable HTTP) instead of plain HTTP.
	MCP bool
	// Tenant adjusts the demo tenant before the engine is made.
	Tenant func(t *engine.Tenant)
	// Extra returns more tenants to serve, made from the demo tenant.
	Extra func(demo *engine.Tenant) []*engine.Tenant
	// Handler wraps the engine's handler, to watch or change its requests.
	Handler func(http.Handler) http.Handler
	// Voice configures the voice socket, which the demo serves as cmd/engine does; nil means
	// its defaults.
	Voice *voice.Options
	// Bank configures the demo bank; nil means its defaults.
	Bank *demobank.Options
}

// Demo is the reference server's demo, in process: the demo bank (behind a [Backend] that
// records what it receives) on a loopback server for both environments, the demo tenant, and
// an engine on a loopback server of its own. When the test ends, the servers close, and the
// test fails if a user token the bank received appears in the engine's logs.
type Demo struct {
	// URL is the engine's base URL, Server's.
	URL    string
	Server *httptest.Server
	// Handler is what Server serves: the engine's handler, wrapped by DemoOptions.Handler.
	Handler http.Handler
	Engine  *engine.Engine
	// Voice is the engine's voice socket, served at its paths.
	Voice   *voice.Server
	Tenant  *engine.Tenant
	Bank    *demobank.Bank
	Backend *Backend
	BankURL string
	Logs    *Logs

	bankServer *httptest.Server
	closeOnce  sync.Once
	t          testing.TB
}

// NewDemo serves the demo engine for the length of the test.
func NewDemo(t testing.TB, o *DemoOptions) *Demo {
	t.Helper()
	if o == nil {
		o = &DemoOptions{}
	}
	d := &Demo{Bank: demobank.New(o.Bank), Logs: &Logs{}, t: t}
	mux := http.NewServeMux()
	mux.Handle("/mcp", demobank.MCPHandler(d.Bank))
	mux.Handle("/", d.Bank)
	d.Backend = NewBackend(mux)
	bank := httptest.NewServer(d.Backend)
	d.bankServer = bank
	d.BankURL = bank.URL

	tenant, err := demobank.Tenant(bank.URL, bank.URL)
	if err != nil {
		bank.Close()
		t.Fatal(err)
	}
	t.Cleanup(d.Close)
	cfg := o.Config
	if o.MCP {
		tenant.Tools, tenant.MCP = nil, json.RawMessage(`{"path":"/mcp"}`)
		if cfg.Toolset == nil {
			m := mcptools.New(nil)
			t.Cleanup(func() { m.Close() })
			cfg.Toolset = m
		}
	}
	if o.Tenant != nil {
		o.Tenant(tenant)
	}
	d.Tenant = tenant
	if cfg.Tenants == nil {
		tenants := []*engine.Tenant{tenant}
		if o.Extra != nil {
			tenants = append(tenants, o.Extra(tenant)...)
		}
		store, err := engine.NewStaticTenants(tenants...)
		if err != nil {
			t.Fatal(err)
		}
		cfg.Tenants = store
	}
	if cfg.Model == nil {
		cfg.Model = intent.New(nil)
	}
	if cfg.Toolset == nil {
		cfg.Toolset = httptools.New(nil)
	}
	if cfg.SigningKey == nil {
		cfg.SigningKey = bytes.Repeat([]byte{9}, 32)
	}
	if cfg.Logger == nil {
		cfg.Logger = slog.New(slog.NewJSONHandler(d.Logs, &slog.HandlerOptions{Level: slog.LevelDebug}))
	}
	cfg.TurnLog = KeepTurnLog(cfg.TurnLog)
	if d.Engine, err = engine.New(cfg); err != nil {
		t.Fatal(err)
	}
	if d.Voice, err = voice.New(d.Engine, o.Voice); err != nil {
		t.Fatal(err)
	}
	d.Handler = d.Engine.Handler(d.Voice.Routes()...)
	if o.Handler != nil {
		d.Handler = o.Handler(d.Handler)
	}
	d.Server = httptest.NewServer(d.Handler)
	d.URL = d.Server.URL
	return d
}

// Close closes the engine's server, the engine and the bank's server, and checks the logs. It
// runs when the test ends; a test that checks for leaks calls it before.
func (d *Demo) Close() {
	d.closeOnce.Do(func() {
		if d.Server != nil {
			d.Server.Close()
		}
		if d.Engine != nil {
			d.Engine.Close()
		}
		d.bankServer.Close()
		logs := d.Logs.String()
		for _, hdr := range d.Backend.Received() {
			if tok := hdr.Get(engine.HeaderUserToken); tok != "" && strings.Contains(logs, tok) {
				d.t.Errorf("a user token the bank received appears in the engine's logs")
				return
			}
		}
	})
}

// Headers returns the common headers of a production request of the demo tenant's user with
// [DemoUserToken], and a JSON body.
func (d *Demo) Headers() http.Header {
	h := http.Header{}
	h.Set(engine.HeaderEngineKey, demobank.EngineKey)
	h.Set(engine.HeaderUserToken, DemoUserToken)
	h.Set(engine.HeaderRequestID, "prod-demo-1")
	h.Set("Content-Type", "application/json")
	return h
}

// Logs collects log output. It is safe for concurrent use.
type Logs struct {
	mu  sync.Mutex
	buf bytes.Buffer
}

// Write appends p, and keeps it as an artifact (see [ArtifactsEnv]).
func (l *Logs) Write(p []byte) (int, error) {
	KeepArtifact(ArtifactLog, p)
	l.mu.Lock()
	defer l.mu.Unlock()
	return l.buf.Write(p)
}

// String returns everything written so far.
func (l *Logs) String() string {
	l.mu.Lock()
	defer l.mu.Unlock()
	return l.buf.String()
}
