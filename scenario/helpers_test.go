package scenario_test

import (
	"bytes"
	"context"
	"crypto/rand"
	"encoding/json"
	"fmt"
	"net/http"
	"net/http/httptest"
	"os"
	"path/filepath"
	"sync"
	"testing"
	"time"

	"github.com/convengine/engine"
	"github.com/convengine/engine/enginetest"
	"github.com/convengine/engine/examples/demobank"
	"github.com/convengine/engine/httptools"
	"github.com/convengine/engine/intent"
	"github.com/convengine/engine/scenario"
)

// demo builds engine configurations of the demo tenants, each with banks of its own, as the
// reference server's demo: pk_demo, and pk_demo_proof whose bank requires device proofs and
// sends its enrolment codes here, as its SMS would.
type demo struct {
	t      testing.TB
	speech func(engine.Config) engine.Config
	mu     sync.Mutex
	codes  map[string]string // by bank URL and user label
}

func newDemo(t testing.TB) *demo {
	return &demo{t: t, codes: map[string]string{}}
}

func (d *demo) config(ctx context.Context) (engine.Config, func() error, error) {
	bank := httptest.NewServer(demobank.New(nil))
	var proofURL string
	proof := httptest.NewUnstartedServer(demobank.New(&demobank.Options{RequireDeviceProof: true, SendCode: func(user, code string) {
		d.mu.Lock()
		defer d.mu.Unlock()
		d.codes[proofURL+" "+user] = code
	}}))
	proof.Start()
	proofURL = proof.URL
	done := func() error { bank.Close(); proof.Close(); return nil }
	t1, err := demobank.Tenant(bank.URL, "")
	if err != nil {
		return engine.Config{}, done, err
	}
	t2, err := demobank.ProofTenant(proof.URL, "")
	if err != nil {
		return engine.Config{}, done, err
	}
	tenants, err := engine.NewStaticTenants(t1, t2)
	if err != nil {
		return engine.Config{}, done, err
	}
	key := make([]byte, 32)
	rand.Read(key)
	cfg := engine.Config{Tenants: tenants, Model: intent.New(nil), Toolset: httptools.New(nil), SigningKey: key,
		Widgets: []engine.WidgetType{demobank.CardWidget}, Logger: enginetest.DebugLogger()}
	if d.speech != nil {
		cfg = d.speech(cfg)
	}
	return cfg, done, nil
}

// enrol enrols a device through the demo bank's enrolment routes: a code, sent to the user,
// then the code with the key.
func (d *demo) enrol(ctx context.Context, e *scenario.Enrolment) error {
	bank := e.Environment.BackendURL
	post := func(path string, body any, want int) error {
		raw, _ := json.Marshal(body)
		req, _ := http.NewRequestWithContext(ctx, http.MethodPost, bank+path, bytes.NewReader(raw))
		req.Header.Set("X-Token", e.UserToken.Reveal())
		req.Header.Set("Content-Type", "application/json")
		resp, err := http.DefaultClient.Do(req)
		if err != nil {
			return err
		}
		resp.Body.Close()
		if resp.StatusCode != want {
			return fmt.Errorf("POST %s: %s", path, resp.Status)
		}
		return nil
	}
	if err := post("/devices/code", map[string]any{"public_key": e.PublicKey}, http.StatusAccepted); err != nil {
		return err
	}
	d.mu.Lock()
	code := d.codes[bank+" "+demobank.UserLabel(e.UserToken.Reveal())]
	d.mu.Unlock()
	return post("/devices", map[string]any{"code": code, "public_key": e.PublicKey}, http.StatusCreated)
}

func (d *demo) runner(t testing.TB, opts *scenario.RunnerOptions) *scenario.Runner {
	t.Helper()
	if opts == nil {
		opts = &scenario.RunnerOptions{}
	}
	opts.Config = d.config
	if opts.Enrol == nil {
		opts.Enrol = d.enrol
	}
	if opts.TurnTimeout == 0 {
		opts.TurnTimeout = 30 * time.Second
	}
	r, err := scenario.NewRunner(opts)
	if err != nil {
		t.Fatal(err)
	}
	return r
}

// write writes a scenario file in a temporary folder and returns its path.
func write(t testing.TB, name, content string) string {
	t.Helper()
	p := filepath.Join(t.TempDir(), name)
	if err := os.WriteFile(p, []byte(content), 0o644); err != nil {
		t.Fatal(err)
	}
	return p
}

// runFile loads and runs one file's scenarios.
func runFile(t testing.TB, r *scenario.Runner, path string) *scenario.Report {
	t.Helper()
	list, err := scenario.Load(path)
	if err != nil {
		t.Fatal(err)
	}
	rep, err := r.Run(context.Background(), list)
	if err != nil {
		t.Fatal(err)
	}
	return rep
}

func writeIn(t testing.TB, dir, name, content string) {
	t.Helper()
	p := filepath.Join(dir, name)
	if err := os.MkdirAll(filepath.Dir(p), 0o755); err != nil {
		t.Fatal(err)
	}
	if err := os.WriteFile(p, []byte(content), 0o644); err != nil {
		t.Fatal(err)
	}
}
