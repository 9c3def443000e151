package agui_test

import (
	"context"
	"net/http"
	"strings"
	"testing"
	"time"

	"go.uber.org/goleak"

	"github.com/convengine/engine"
	"github.com/convengine/engine/examples/demobank"
)

// A run in a session binds its confirm to the session, as POST /engine does: the resume must
// come in the same session.
func TestSessionBindsTheInterrupt(t *testing.T) {
	f := newFixture(t)
	s, err := f.demo.Engine.CreateSession(t.Context(), &engine.Caller{EngineKey: demobank.EngineKey, UserToken: userToken}, nil)
	if err != nil {
		t.Fatal(err)
	}
	inSession := http.Header{"Authorization": {"Bearer " + string(s.Token)}}

	bogus := f.run(t, http.Header{"Authorization": {"Bearer not-a-session"}}, input("thread-s", "r", "What's my balance?"))
	if bogus.status != 401 || bogus.problem["code"] != engine.CodeInvalidSession {
		t.Fatalf("a bogus session: %d %v", bogus.status, bogus.problem)
	}

	r := f.run(t, inSession, input("thread-s", "r1", "send 20 dollars to Alex"))
	checkSequence(t, r)
	o, _ := r.last()["outcome"].(map[string]any)
	if o["type"] != "interrupt" {
		t.Fatalf("end %v", r.last())
	}
	id := o["interrupts"].([]any)[0].(map[string]any)["id"].(string)

	outside := f.run(t, nil, resumeInput("thread-s", "r2", id, "resolved", basicAuth()))
	checkSequence(t, outside)
	if end := outside.last(); end["type"] != "RUN_ERROR" || end["code"] != engine.CodeInvalidActionToken {
		t.Fatalf("a resume outside the session: %v", end)
	}
	inside := f.run(t, inSession, resumeInput("thread-s", "r3", id, "resolved", basicAuth()))
	if len(inside.customs("done")) != 1 || f.demo.Bank.Transfers(userToken) != 1 {
		t.Fatalf("a resume in the session: %v, %d transfers", inside.types(), f.demo.Bank.Transfers(userToken))
	}
}

// A client that goes away mid-run stops its turn; the handler returns and leaves nothing
// running.
func TestClientGoneStopsTheRun(t *testing.T) {
	f := newFixture(t)
	f.demo.Backend.SetDelay(time.Minute) // the balance tool is still running when the client leaves
	// The run's goroutines must end; the idle connections the tools' HTTP client keeps to the
	// bank (its tool list, read while the run started) are the pool's, not the run's, and so is
	// the bank's side of them, waiting for their next request (readRequest: no handler runs).
	defer goleak.VerifyNone(t, goleak.IgnoreCurrent(), goleak.IgnoreAnyFunction("net/http.(*persistConn).readLoop"),
		goleak.IgnoreAnyFunction("net/http.(*persistConn).writeLoop"), goleak.IgnoreAnyFunction("net/http.(*conn).readRequest"))
	ctx, cancel := context.WithCancel(t.Context())
	req, _ := http.NewRequestWithContext(ctx, http.MethodPost, f.srv.URL, strings.NewReader(input("thread-g", "r", "What's my balance?")))
	req.Header = http.Header{"Content-Type": {"application/json"}, "X-Engine-Key": {demobank.EngineKey},
		"X-Token": {userToken}, "X-Request-Id": {"prod-agui-gone"}}
	resp, err := f.srv.Client().Do(req)
	if err != nil {
		t.Fatal(err)
	}
	buf := make([]byte, 16)
	if _, err := resp.Body.Read(buf); err != nil || !strings.HasPrefix(string(buf), "data: ") {
		t.Fatalf("%q %v", buf, err)
	}
	cancel()
	resp.Body.Close()
	f.srv.Client().CloseIdleConnections()
	// goleak waits a while for the handler's goroutine, which waits for the backend's delay
	// unless the turn stopped.
}
