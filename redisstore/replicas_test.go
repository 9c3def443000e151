package redisstore_test

import (
	"bytes"
	"encoding/json"
	"fmt"
	"io"
	"net/http"
	"net/http/httptest"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/convengine/engine"
	"github.com/convengine/engine/enginetest"
	"github.com/convengine/engine/examples/demobank"
	"github.com/convengine/engine/httptools"
	"github.com/convengine/engine/intent"
	"github.com/convengine/engine/internal/testkit"
	"github.com/convengine/engine/redisstore"
	"github.com/convengine/engine/widgets"
)

const userToken = "user-token-s3cr3t-value"

// deployment is the demo tenant served by two engine replicas, each behind its own HTTP server
// and with its own Redis client, sharing one Redis and one signing key, as behind a load
// balancer without sticky sessions.
type deployment struct {
	replicas [2]*httptest.Server
	bank     *demobank.Bank
	backend  *enginetest.Backend
}

func newDeployment(t *testing.T, srv *testkit.RedisServer) *deployment {
	t.Helper()
	return newDeploymentWith(t, srv, engine.Limits{})
}

// newDeploymentWith is newDeployment with the tenant's rate limits set as in limits.
func newDeploymentWith(t *testing.T, srv *testkit.RedisServer, limits engine.Limits) *deployment {
	t.Helper()
	bank := demobank.New(nil)
	backend := enginetest.NewBackend(bank)
	bankSrv := httptest.NewServer(backend)
	t.Cleanup(bankSrv.Close)
	tn, err := demobank.Tenant(bankSrv.URL, bankSrv.URL)
	if err != nil {
		t.Fatal(err)
	}
	tn.Limits.ToolTimeout = engine.Duration(time.Second)
	tn.Limits.UserPerMinute, tn.Limits.UserBurst = limits.UserPerMinute, limits.UserBurst
	tn.Limits.TenantPerMinute, tn.Limits.TenantBurst = limits.TenantPerMinute, limits.TenantBurst
	tenants, err := engine.NewStaticTenants(tn)
	if err != nil {
		t.Fatal(err)
	}
	d := &deployment{bank: bank, backend: backend}
	key := bytes.Repeat([]byte{7}, 32)
	for i := range d.replicas {
		store := redisstore.New(client(t, srv), &redisstore.Options{Prefix: prefix(t), Timeout: generous})
		e, err := engine.New(engine.Config{Tenants: tenants, Model: intent.New(nil), Toolset: httptools.New(nil),
			SigningKey: key, Sessions: store, Replay: store, Actions: store, RateLimiter: store,
			Logger: enginetest.DebugLogger()})
		if err != nil {
			t.Fatal(err)
		}
		d.replicas[i] = httptest.NewServer(e.Handler())
		t.Cleanup(d.replicas[i].Close)
	}
	return d
}

// post sends body to path on replica i and returns the status and the body of the answer.
func (d *deployment) post(t *testing.T, i int, path, body string) (int, string) {
	t.Helper()
	resp := d.postAs(t, i, userToken, path, body)
	if resp == nil {
		return 0, ""
	}
	defer resp.Body.Close()
	b, _ := io.ReadAll(resp.Body)
	return resp.StatusCode, string(b)
}

// postAs sends body to path on replica i as the user of token, and returns the answer, or nil
// when there is none.
func (d *deployment) postAs(t *testing.T, i int, token, path, body string) *http.Response {
	t.Helper()
	req, err := http.NewRequestWithContext(t.Context(), http.MethodPost, d.replicas[i].URL+path, strings.NewReader(body))
	if err != nil {
		t.Fatal(err)
	}
	req.Header = http.Header{"X-Engine-Key": {demobank.EngineKey}, "X-Token": {token},
		"X-Request-Id": {"prod-replicas-test"}, "Content-Type": {"application/json"}}
	resp, err := d.replicas[i].Client().Do(req)
	if err != nil {
		t.Error(err)
		return nil
	}
	return resp
}

// turn runs a turn on replica i and returns its render spec.
func (d *deployment) turn(t *testing.T, i int, say string) widgets.Spec {
	t.Helper()
	status, body := d.post(t, i, "/engine", `{"transcript":"`+say+`"}`)
	j := strings.LastIndex(body, "event: done\ndata: ")
	if status != 200 || j < 0 {
		t.Fatalf("turn: %d %s", status, body)
	}
	var spec widgets.Spec
	if err := json.Unmarshal([]byte(strings.TrimSpace(body[j+len("event: done\ndata: "):])), &spec); err != nil {
		t.Fatal(err)
	}
	return spec
}

// confirm runs a turn on replica i that asks for a transfer, and returns its confirm widget.
func (d *deployment) confirm(t *testing.T, i int, say string) widgets.Confirm {
	t.Helper()
	for _, w := range d.turn(t, i, say).Widgets {
		if c, ok := w.(widgets.Confirm); ok {
			return c
		}
	}
	t.Fatalf("no confirm widget for %q", say)
	return widgets.Confirm{}
}

func executeBody(x widgets.Execute) string {
	b, _ := json.Marshal(x)
	return fmt.Sprintf(`{"execute":%s,"auth":{"method":"faceid","verifiedAt":%d},"context":{"locale":"en"}}`, b, time.Now().UnixMilli())
}

// TestReplicasRunAnActionOnce confirms a transfer on replica A, then executes it 100 times at
// once across A and B: one transfer at the bank, and every later try on either replica gets
// the first reply.
func TestReplicasRunAnActionOnce(t *testing.T) {
	needRedis(t)
	d := newDeployment(t, standalone)
	c := d.confirm(t, 0, "send 20 dollars to Alex")
	d.backend.SetDelay(50 * time.Millisecond) // keep the first call running while the others arrive

	type answer struct {
		status int
		body   string
	}
	answers := make([]answer, 100)
	var wg sync.WaitGroup
	for i := range answers {
		wg.Go(func() {
			status, body := d.post(t, i%2, "/engine/execute", executeBody(c.Execute))
			answers[i] = answer{status, body}
		})
	}
	wg.Wait()
	d.backend.SetDelay(0)

	var reply string
	ok, busy := 0, 0
	for _, a := range answers {
		switch {
		case a.status == 200 && (reply == "" || a.body == reply):
			reply = a.body
			ok++
		case a.status == 409 && strings.Contains(a.body, engine.CodeActionInProgress):
			busy++
		default:
			t.Errorf("execute: %d %s", a.status, a.body)
		}
	}
	if n := d.bank.Transfers(userToken); n != 1 {
		t.Fatalf("%d transfers at the bank, want 1 (%d answered 200, %d answered 409)", n, ok, busy)
	}
	if !strings.Contains(reply, "Money sent") {
		t.Fatalf("reply %s", reply)
	}
	t.Logf("100 concurrent executes on two replicas: %d answered 200, %d answered 409, 1 transfer", ok, busy)

	for i := range d.replicas {
		if status, body := d.post(t, i, "/engine/execute", executeBody(c.Execute)); status != 200 || body != reply {
			t.Errorf("replica %d, a retry: %d %s\nwant the first reply %s", i, status, body, reply)
		}
	}
	if n := d.bank.Transfers(userToken); n != 1 {
		t.Fatalf("%d transfers at the bank after the retries, want 1", n)
	}
}

// TestReplicasWithoutRedis stops Redis: executes answer 503 store_unavailable and move no
// money, turns that need no store still work, and executes work again once Redis is back.
func TestReplicasWithoutRedis(t *testing.T) {
	srv := startTestRedis(t)
	d := newDeployment(t, srv)
	c := d.confirm(t, 0, "send 15 dollars to Sam")

	srv.Stop()
	for i := range d.replicas {
		status, body := d.post(t, i, "/engine/execute", executeBody(c.Execute))
		if status != 503 || !strings.Contains(body, engine.CodeStoreUnavailable) || !strings.Contains(body, `"retryable":true`) {
			t.Errorf("replica %d without Redis: %d %s", i, status, body)
		}
	}
	if n := d.bank.Transfers(userToken); n != 0 {
		t.Fatalf("%d transfers without Redis, want 0", n)
	}
	if spec := d.turn(t, 1, "what is my balance"); !strings.Contains(spec.Speak, "$") {
		t.Errorf("a turn without Redis: %+v", spec)
	}

	if err := srv.Start(); err != nil {
		t.Fatal(err)
	}
	status, body := d.post(t, 1, "/engine/execute", executeBody(c.Execute))
	if status != 200 || !strings.Contains(body, "$15.00 to Sam") {
		t.Fatalf("execute once Redis is back: %d %s", status, body)
	}
	if status, again := d.post(t, 0, "/engine/execute", executeBody(c.Execute)); status != 200 || again != body {
		t.Errorf("the retry on the other replica: %d %s", status, again)
	}
	if n := d.bank.Transfers(userToken); n != 1 {
		t.Fatalf("%d transfers, want 1", n)
	}
}
