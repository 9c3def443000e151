package engine_test

import (
	"encoding/json"
	"fmt"
	"net/http"
	"net/http/httptest"
	"strings"
	"sync"
	"sync/atomic"
	"testing"
	"time"

	"github.com/convengine/engine"
	"github.com/convengine/engine/enginetest"
	"github.com/convengine/engine/examples/demobank"
	"github.com/convengine/engine/widgets"
)

// confirmFor runs a turn that asks for a transfer and returns its confirm widget.
func confirmFor(t *testing.T, d *enginetest.Demo, key, say string) widgets.Confirm {
	t.Helper()
	req := httptest.NewRequest(http.MethodPost, "/engine", strings.NewReader(`{"transcript":"`+say+`"}`))
	req.Header = headers()
	req.Header.Set("X-Engine-Key", key)
	rec := httptest.NewRecorder()
	d.Handler.ServeHTTP(rec, req)
	turn, err := enginetest.ReadTurn(rec.Body)
	if rec.Code != 200 || err != nil {
		t.Fatalf("turn: %d %v", rec.Code, err)
	}
	for _, w := range turn.Spec.Widgets {
		if c, ok := w.(widgets.Confirm); ok {
			return c
		}
	}
	t.Fatalf("no confirm widget in %+v", turn.Spec)
	return widgets.Confirm{}
}

// execute posts an execute body and returns the status and the body.
func execute(t *testing.T, d *enginetest.Demo, key, body string) (int, string) {
	t.Helper()
	req := httptest.NewRequest(http.MethodPost, "/engine/execute", strings.NewReader(body))
	req.Header = headers()
	req.Header.Set("X-Engine-Key", key)
	rec := httptest.NewRecorder()
	d.Handler.ServeHTTP(rec, req)
	return rec.Code, rec.Body.String()
}

func executeBody(execute widgets.Execute, auth string) string {
	x, _ := json.Marshal(execute)
	return fmt.Sprintf(`{"execute":%s,"auth":%s,"context":{"locale":"en"}}`, x, auth)
}

func freshAuth() string {
	return `{"method":"faceid","verifiedAt":"` + time.Now().UTC().Format(time.RFC3339) + `"}`
}

func TestExecuteRunsAConfirmedActionOnce(t *testing.T) {
	d := newDemo(t, nil)
	c := confirmFor(t, d, demobank.EngineKey, "send 20 dollars to Alex")
	status, body := execute(t, d, demobank.EngineKey, executeBody(c.Execute, freshAuth()))
	if status != 200 {
		t.Fatalf("%d %s", status, body)
	}
	want := `{"done":{"type":"success","title":"Money sent","line1":"$20.00 to Alex","line2":"New balance $1,214.56"},"speak":"Done. I sent $20.00 to Alex."}`
	if body != want {
		t.Errorf("reply %s\nwant  %s", body, want)
	}
	got := d.Backend.Received()
	if key := got[len(got)-1].Get("Idempotency-Key"); key != c.ID {
		t.Errorf("Idempotency-Key %q, want the token id %q", key, c.ID)
	}
	// The same token again: the first reply, and no second transfer.
	status, again := execute(t, d, demobank.EngineKey, executeBody(c.Execute, `{"method":"passcode","verifiedAt":`+fmt.Sprint(time.Now().UnixMilli())+`}`))
	if status != 200 || again != body {
		t.Errorf("replay: %d %s", status, again)
	}
	if n := d.Bank.Transfers(testToken); n != 1 {
		t.Errorf("%d transfers", n)
	}
}

func TestExecuteConcurrentDuplicatesCallTheBackendOnce(t *testing.T) {
	d := newDemo(t, nil)
	c := confirmFor(t, d, demobank.EngineKey, "send 20 dollars to Alex")
	d.Backend.SetDelay(50 * time.Millisecond) // keep the first call running while the others arrive
	body := executeBody(c.Execute, freshAuth())
	var ok, busy atomic.Int64
	var wg sync.WaitGroup
	for range 100 {
		wg.Go(func() {
			switch status, reply := execute(t, d, demobank.EngineKey, body); {
			case status == 200 && strings.Contains(reply, "Money sent"):
				ok.Add(1)
			case status == 409 && strings.Contains(reply, engine.CodeActionInProgress) && strings.Contains(reply, `"retryable":true`):
				busy.Add(1)
			default:
				t.Errorf("%d %s", status, reply)
			}
		})
	}
	wg.Wait()
	transfers := 0
	for _, h := range d.Backend.Received() {
		if h.Get("Idempotency-Key") != "" {
			transfers++
		}
	}
	if transfers != 1 || d.Bank.Transfers(testToken) != 1 || ok.Load() == 0 {
		t.Fatalf("backend calls %d, transfers %d, 200s %d, 409s %d", transfers, d.Bank.Transfers(testToken), ok.Load(), busy.Load())
	}
	t.Logf("100 concurrent executes: %d answered 200, %d answered 409, 1 backend call", ok.Load(), busy.Load())
}

func TestExecuteRefusals(t *testing.T) {
	now := time.Now()
	var clock atomic.Pointer[time.Time]
	clock.Store(&now)
	d := newDemo(t, &enginetest.DemoOptions{
		Config: engine.Config{Now: func() time.Time { return *clock.Load() }},
		Extra: func(base *engine.Tenant) []*engine.Tenant {
			other := *base
			other.Key = "pk_other"
			return []*engine.Tenant{&other}
		},
	})
	c := confirmFor(t, d, demobank.EngineKey, "send 20 dollars to Alex")
	foreign := confirmFor(t, d, "pk_other", "send 20 dollars to Alex")
	with := func(edit func(x *widgets.Execute)) widgets.Execute {
		x := c.Execute
		x.Arguments = append(json.RawMessage(nil), x.Arguments...)
		edit(&x)
		return x
	}
	fresh := freshAuth()
	cases := []struct {
		name   string
		body   string
		status int
		code   string
	}{
		{"no execute", `{"auth":` + fresh + `}`, 400, engine.CodeInvalidRequest},
		{"data tool", executeBody(with(func(x *widgets.Execute) { x.Tool = "get_balance" }), fresh), 403, engine.CodeActionNotAllowed},
		{"unknown tool", executeBody(with(func(x *widgets.Execute) { x.Tool = "wire_everything" }), fresh), 403, engine.CodeActionNotAllowed},
		{"no token", executeBody(with(func(x *widgets.Execute) { x.Token = "" }), fresh), 403, engine.CodeInvalidActionToken},
		{"forged token", executeBody(with(func(x *widgets.Execute) { x.Token = forge(x.Token) }), fresh), 403, engine.CodeInvalidActionToken},
		{"garbage token", executeBody(with(func(x *widgets.Execute) { x.Token = "not.a.jws" }), fresh), 403, engine.CodeInvalidActionToken},
		{"another tenant's token", executeBody(with(func(x *widgets.Execute) { x.Token = foreign.Execute.Token }), fresh), 403, engine.CodeInvalidActionToken},
		{"payee changed by one character", executeBody(with(func(x *widgets.Execute) { x.Arguments = json.RawMessage(`{"amount":20,"to":"Alexa"}`) }), fresh), 403, engine.CodeInvalidActionToken},
		{"amount changed", executeBody(with(func(x *widgets.Execute) { x.Arguments = json.RawMessage(`{"amount":2000,"to":"Alex"}`) }), fresh), 403, engine.CodeInvalidActionToken},
		{"argument added", executeBody(with(func(x *widgets.Execute) { x.Arguments = json.RawMessage(`{"amount":20,"to":"Alex","currency":"USD"}`) }), fresh), 403, engine.CodeInvalidActionToken},
		{"arguments not an object", executeBody(with(func(x *widgets.Execute) { x.Arguments = json.RawMessage(`[20]`) }), fresh), 403, engine.CodeInvalidActionToken},
		{"no auth", executeBody(c.Execute, `null`), 400, engine.CodeInvalidRequest},
		{"unknown method", executeBody(c.Execute, `{"method":"pin","verifiedAt":"`+now.UTC().Format(time.RFC3339)+`"}`), 400, engine.CodeInvalidRequest},
		{"no verifiedAt", executeBody(c.Execute, `{"method":"faceid"}`), 400, engine.CodeInvalidRequest},
		{"malformed verifiedAt", executeBody(c.Execute, `{"method":"faceid","verifiedAt":"yesterday"}`), 400, engine.CodeInvalidRequest},
		{"verifiedAt in seconds", executeBody(c.Execute, `{"method":"faceid","verifiedAt":`+fmt.Sprint(now.Unix())+`}`), 400, engine.CodeInvalidRequest},
		{"verifiedAt in fractional seconds", executeBody(c.Execute, `{"method":"faceid","verifiedAt":`+fmt.Sprintf("%.3f", float64(now.UnixMilli())/1000)+`}`), 400, engine.CodeInvalidRequest},
		{"stale verifiedAt", executeBody(c.Execute, `{"method":"faceid","verifiedAt":"`+now.Add(-3*time.Minute).UTC().Format(time.RFC3339)+`"}`), 403, engine.CodeVerificationStale},
		{"future verifiedAt", executeBody(c.Execute, `{"method":"touchid","verifiedAt":`+fmt.Sprint(now.Add(time.Minute).UnixMilli())+`}`), 403, engine.CodeVerificationStale},
	}
	for _, tc := range cases {
		t.Run(tc.name, func(t *testing.T) {
			status, body := execute(t, d, demobank.EngineKey, tc.body)
			var p engine.Problem
			json.Unmarshal([]byte(body), &p)
			if status != tc.status || p.Code != tc.code {
				t.Fatalf("%d %s, want %d %s", status, body, tc.status, tc.code)
			}
		})
	}
	t.Run("seconds are named", func(t *testing.T) {
		_, body := execute(t, d, demobank.EngineKey, executeBody(c.Execute, `{"method":"faceid","verifiedAt":`+fmt.Sprint(now.Unix())+`}`))
		var p engine.Problem
		json.Unmarshal([]byte(body), &p)
		if !strings.Contains(p.Detail, "auth.verifiedAt") || !strings.Contains(p.Detail, "epoch seconds") || !strings.Contains(p.Detail, "milliseconds") {
			t.Fatalf("the detail does not say what is wrong: %s", body)
		}
	})
	t.Run("expired token", func(t *testing.T) {
		later := now.Add(11 * time.Minute)
		clock.Store(&later)
		defer clock.Store(&now)
		status, body := execute(t, d, demobank.EngineKey, executeBody(c.Execute, `{"method":"faceid","verifiedAt":"`+later.UTC().Format(time.RFC3339)+`"}`))
		if status != 410 || !strings.Contains(body, engine.CodeActionExpired) {
			t.Fatalf("%d %s", status, body)
		}
	})
	if n := d.Bank.Transfers(testToken); n != 0 {
		t.Fatalf("a refused execute moved money: %d transfers", n)
	}
	// Arguments in another order and spacing are the same arguments.
	reordered := with(func(x *widgets.Execute) { x.Arguments = json.RawMessage(`{ "to" : "Alex", "amount" : 20.0 }`) })
	if status, body := execute(t, d, demobank.EngineKey, executeBody(reordered, fresh)); status != 200 {
		t.Fatalf("reordered arguments: %d %s", status, body)
	}
}

func TestExecuteDeclinedAndUnreachable(t *testing.T) {
	d := newDemo(t, nil)
	declined := confirmFor(t, d, demobank.EngineKey, "send 5000 dollars to Alex")
	status, body := execute(t, d, demobank.EngineKey, executeBody(declined.Execute, freshAuth()))
	if status != 200 || !strings.Contains(body, `"type":"error","title":"Transfer not sent","line1":"Checking holds`) {
		t.Fatalf("declined: %d %s", status, body)
	}

	// A backend that cannot be reached did nothing: the token stays usable.
	c := confirmFor(t, d, demobank.EngineKey, "send 15 dollars to Sam")
	bankURL := d.Tenant.Environments[engine.EnvProduction].BackendURL
	d.Tenant.Environments[engine.EnvProduction].BackendURL = "http://127.0.0.1:1"
	status, body = execute(t, d, demobank.EngineKey, executeBody(c.Execute, freshAuth()))
	if status != 502 || !strings.Contains(body, engine.CodeToolUnavailable) || !strings.Contains(body, `"retryable":true`) {
		t.Fatalf("backend down: %d %s", status, body)
	}
	d.Tenant.Environments[engine.EnvProduction].BackendURL = bankURL
	status, body = execute(t, d, demobank.EngineKey, executeBody(c.Execute, freshAuth()))
	if status != 200 || !strings.Contains(body, "$15.00 to Sam") {
		t.Fatalf("backend back: %d %s", status, body)
	}

	// A backend that took the request and did not answer in time may have run it: the engine
	// says so, and never calls it again for that token.
	slow := confirmFor(t, d, demobank.EngineKey, "send 7 dollars to Sam")
	d.Backend.SetDelay(2 * time.Second) // past the demo's tool time-out
	calls := len(d.Backend.Received())
	status, body = execute(t, d, demobank.EngineKey, executeBody(slow.Execute, freshAuth()))
	if status != 200 || !strings.Contains(body, `"title":"Not confirmed"`) {
		t.Fatalf("backend too slow: %d %s", status, body)
	}
	d.Backend.SetDelay(0)
	status, again := execute(t, d, demobank.EngineKey, executeBody(slow.Execute, freshAuth()))
	if status != 200 || again != body || len(d.Backend.Received()) != calls+1 {
		t.Fatalf("the retry: %d %s, %d backend calls", status, again, len(d.Backend.Received())-calls)
	}
	waitFor(t, "the slow transfer lands", func() bool { return d.Bank.Transfers(testToken) == 2 })
	if n := d.Bank.Transfers(testToken); n != 2 {
		t.Fatalf("%d transfers, want 2", n)
	}
}

// forge changes one character in the middle of a token's signature: always other bytes. (The
// last characters of an unpadded base64 signature carry padding bits, which decoders ignore:
// replacing them may leave the signature as it was.)
func forge(token string) string {
	i := len(token) - 10
	c := byte('A')
	if token[i] == 'A' {
		c = 'B'
	}
	return token[:i] + string(c) + token[i+1:]
}
