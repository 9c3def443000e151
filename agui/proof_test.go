package agui_test

import (
	"bytes"
	"encoding/base64"
	"encoding/json"
	"net/http"
	"net/http/httptest"
	"strings"
	"testing"
	"time"

	"github.com/convengine/engine"
	"github.com/convengine/engine/agui"
	"github.com/convengine/engine/enginetest"
	"github.com/convengine/engine/examples/demobank"
)

// checkedEngineKey is a tenant of the reference bank that asks it about devices but does not
// require proofs: a proof it gets is still checked, enrolment included.
const checkedEngineKey = "pk_demo_checked"

// proofFixture serves AG-UI runs of pk_demo_proof, the tenant that requires device proofs, on
// the reference bank: it enrols devices by one-time code and verifies every transfer's proof
// itself.
type proofFixture struct {
	*fixture
	bank    *demobank.Bank
	bankURL string
	codes   chan string
}

func newProofFixture(t *testing.T) *proofFixture {
	t.Helper()
	pf := &proofFixture{codes: make(chan string, 4)}
	pf.bank = demobank.New(&demobank.Options{RequireDeviceProof: true, SendCode: func(_, code string) { pf.codes <- code }})
	bank := httptest.NewServer(pf.bank)
	t.Cleanup(bank.Close)
	pf.bankURL = bank.URL
	d := enginetest.NewDemo(t, &enginetest.DemoOptions{Extra: func(*engine.Tenant) []*engine.Tenant {
		proof, err := demobank.ProofTenant(bank.URL, bank.URL)
		if err != nil {
			t.Fatal(err)
		}
		checked, _ := demobank.ProofTenant(bank.URL, bank.URL)
		checked.Key, checked.RequireActionProof = checkedEngineKey, false
		return []*engine.Tenant{proof, checked}
	}})
	srv := httptest.NewServer(agui.Handler(d.Engine, nil))
	t.Cleanup(srv.Close)
	pf.fixture = &fixture{demo: d, srv: srv}
	return pf
}

// enrol enrols dev for the user at the bank, with the code the bank sends.
func (pf *proofFixture) enrol(t *testing.T, dev *device) {
	t.Helper()
	post := func(path string, body any) int {
		raw, _ := json.Marshal(body)
		req, _ := http.NewRequestWithContext(t.Context(), http.MethodPost, pf.bankURL+path, bytes.NewReader(raw))
		req.Header = http.Header{"Content-Type": {"application/json"}, "X-Token": {userToken}}
		resp, err := http.DefaultClient.Do(req)
		if err != nil {
			t.Fatal(err)
		}
		resp.Body.Close()
		return resp.StatusCode
	}
	if status := post("/devices/code", map[string]any{"public_key": dev.jwk}); status != http.StatusAccepted {
		t.Fatalf("asking for a code: %d", status)
	}
	var code string
	select {
	case code = <-pf.codes:
	case <-time.After(5 * time.Second):
		t.Fatal("the bank sent no code")
	}
	if status := post("/devices", map[string]any{"code": code, "public_key": dev.jwk}); status != http.StatusCreated {
		t.Fatalf("enrolling: %d", status)
	}
}

// session is a session of tenant bound to dev, whose key proves its actions.
type session struct {
	tenant, token string
	dev           *device
}

func (pf *proofFixture) session(t *testing.T, tenant string, dev *device) *session {
	t.Helper()
	s, err := pf.demo.Engine.CreateSession(t.Context(), &engine.Caller{EngineKey: tenant, UserToken: userToken},
		&engine.SessionInput{PublicKey: dev.jwk})
	if err != nil {
		t.Fatal(err)
	}
	return &session{tenant: tenant, token: string(s.Token), dev: dev}
}

// run runs body in the session, with a new DPoP proof.
func (pf *proofFixture) run(t *testing.T, s *session, body string) *response {
	t.Helper()
	hdr := s.dev.headers(t, pf.srv.URL+"/", s.token)
	hdr.Set("X-Engine-Key", s.tenant)
	return pf.fixture.run(t, hdr, body)
}

// interrupt runs the transfer turn in the session and returns its interrupt's id.
func (pf *proofFixture) interrupt(t *testing.T, s *session, thread string) string {
	t.Helper()
	r := pf.run(t, s, input(thread, "run-transfer", "send 20 dollars to Alex"))
	if r.status != 200 {
		t.Fatalf("%d %v", r.status, r.problem)
	}
	checkSequence(t, r)
	o, _ := r.last()["outcome"].(map[string]any)
	if o["type"] != "interrupt" {
		t.Fatalf("end %v, want an interrupt", r.last())
	}
	return o["interrupts"].([]any)[0].(map[string]any)["id"].(string)
}

// jsTime is verifiedAt as JavaScript's Date.toISOString writes it: milliseconds, always three
// digits, here with trailing zeros that Go's RFC 3339 form would drop.
func jsTime() json.RawMessage {
	at := time.Now().UTC().Truncate(time.Second).Add(-time.Second + 100*time.Millisecond)
	return json.RawMessage(`"` + at.Format("2006-01-02T15:04:05.000Z") + `"`)
}

// proofAuth is a resolved resume's payload with the proof.
func proofAuth(verifiedAt json.RawMessage, proof string) string {
	auth := map[string]any{"method": "faceid", "verifiedAt": verifiedAt}
	if proof != "" {
		auth["proof"] = proof
	}
	out, _ := json.Marshal(map[string]any{"auth": auth})
	return string(out)
}

// A resume on the tenant that requires device proofs runs the action with a proof of the
// session's enrolled device, once; a missing, forged or tampered proof ends the run with
// RUN_ERROR and the engine's code, and the bank is not called; a replay is action_replayed.
func TestDeviceProofResume(t *testing.T) {
	pf := newProofFixture(t)
	dev := newDevice(t)
	pf.enrol(t, dev)
	s := pf.session(t, demobank.ProofEngineKey, dev)
	id := pf.interrupt(t, s, "thread-proof")
	tok := tokenOf(t, id)
	at := jsTime()
	good := dev.actionProof(t, tok, "faceid", at)
	tampered := tamper(t, good)

	start := pf.bank.Balance(userToken, "checking")
	for _, tt := range []struct {
		name, payload, code string
	}{
		{"no proof", proofAuth(at, ""), engine.CodeDeviceProofRequired},
		{"signed by a key that is not the session's", proofAuth(at, newDevice(t).actionProof(t, tok, "faceid", at)), engine.CodeInvalidDeviceProof},
		{"tampered signature", proofAuth(at, tampered), engine.CodeInvalidDeviceProof},
		{"another method", proofAuth(at, dev.actionProof(t, tok, "passcode", at)), engine.CodeInvalidDeviceProof},
	} {
		t.Run(tt.name, func(t *testing.T) {
			r := pf.run(t, s, resumeInput("thread-proof", "run-bad", id, "resolved", tt.payload))
			if r.status != 200 {
				t.Fatalf("%d %v", r.status, r.problem)
			}
			checkSequence(t, r)
			if end := r.last(); end["type"] != "RUN_ERROR" || end["code"] != tt.code {
				t.Fatalf("end %v, want RUN_ERROR %s", end, tt.code)
			}
			if len(r.customs("done")) != 0 {
				t.Errorf("a done card: %v", r.events)
			}
			if n := pf.bank.Transfers(userToken); n != 0 {
				t.Fatalf("%d transfers", n)
			}
		})
	}

	r := pf.run(t, s, resumeInput("thread-proof", "run-resume", id, "resolved", proofAuth(at, good)))
	checkSequence(t, r)
	if done := r.customs("done"); len(done) != 1 || done[0]["title"] != "Money sent" || r.last()["type"] != "RUN_FINISHED" {
		t.Fatalf("the proved resume: %v", r.events)
	}
	if n, got := pf.bank.Transfers(userToken), pf.bank.Balance(userToken, "checking"); n != 1 || got != start-20 {
		t.Fatalf("%d transfers, balance %v, want 1 and %v", n, got, start-20)
	}

	again := pf.run(t, s, resumeInput("thread-proof", "run-again", id, "resolved", proofAuth(at, good)))
	checkSequence(t, again)
	if end := again.last(); end["type"] != "RUN_ERROR" || end["code"] != engine.CodeActionReplayed {
		t.Fatalf("the replayed resume: %v", again.events)
	}
	if n := pf.bank.Transfers(userToken); n != 1 {
		t.Fatalf("the replayed resume: %d transfers, want 1", n)
	}
	if logs := pf.demo.Logs.String(); strings.Contains(logs, good) || strings.Contains(logs, s.token) {
		t.Error("a proof or the session token reached the log")
	}
}

// A proof from a device the bank never enrolled is device_not_enrolled, on a tenant that asks
// its bank about devices, and the bank's transfer is not called.
func TestUnenrolledDeviceProofResume(t *testing.T) {
	pf := newProofFixture(t)
	dev := newDevice(t) // never enrolled
	s := pf.session(t, checkedEngineKey, dev)
	id := pf.interrupt(t, s, "thread-unenrolled")
	at := jsTime()
	r := pf.run(t, s, resumeInput("thread-unenrolled", "run-resume", id, "resolved", proofAuth(at, dev.actionProof(t, tokenOf(t, id), "faceid", at))))
	checkSequence(t, r)
	if end := r.last(); end["type"] != "RUN_ERROR" || end["code"] != engine.CodeDeviceNotEnrolled {
		t.Fatalf("end %v, want RUN_ERROR %s", end, engine.CodeDeviceNotEnrolled)
	}
	if n := pf.bank.Transfers(userToken); n != 0 {
		t.Fatalf("%d transfers", n)
	}
}

// Two replicas share the ActionStore: a resume replayed on the other one is action_replayed,
// and the action ran once.
func TestReplayedResumeOnAnotherReplica(t *testing.T) {
	actions := &engine.MemoryStore{}
	a := enginetest.NewDemo(t, &enginetest.DemoOptions{Config: engine.Config{Actions: actions}})
	tenants, err := engine.NewStaticTenants(a.Tenant)
	if err != nil {
		t.Fatal(err)
	}
	b := enginetest.NewDemo(t, &enginetest.DemoOptions{Config: engine.Config{Actions: actions, Tenants: tenants}})
	fa, fb := &fixture{demo: a, srv: httptest.NewServer(agui.Handler(a.Engine, nil))}, &fixture{demo: b, srv: httptest.NewServer(agui.Handler(b.Engine, nil))}
	defer fa.srv.Close()
	defer fb.srv.Close()

	id := fa.transfer(t, "thread-replicas")["id"].(string)
	if r := fa.run(t, nil, resumeInput("thread-replicas", "run-a", id, "resolved", basicAuth())); len(r.customs("done")) != 1 {
		t.Fatalf("the resume on A: %v", r.events)
	}
	r := fb.run(t, nil, resumeInput("thread-replicas", "run-b", id, "resolved", basicAuth()))
	checkSequence(t, r)
	if end := r.last(); end["type"] != "RUN_ERROR" || end["code"] != engine.CodeActionReplayed || len(r.customs("done")) != 0 {
		t.Fatalf("the resume replayed on B: %v", r.events)
	}
	if n := a.Bank.Transfers(userToken); n != 1 {
		t.Fatalf("%d transfers, want 1", n)
	}
}

// tamper returns the JWS with one bit of its signature flipped.
func tamper(t *testing.T, jws string) string {
	t.Helper()
	i := strings.LastIndexByte(jws, '.')
	sig, err := base64.RawURLEncoding.DecodeString(jws[i+1:])
	if err != nil {
		t.Fatal(err)
	}
	sig[10] ^= 1
	return jws[:i+1] + base64.RawURLEncoding.EncodeToString(sig)
}
