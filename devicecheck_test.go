package engine_test

import (
	"bytes"
	"context"
	"crypto/ecdsa"
	"crypto/rand"
	"crypto/rsa"
	"crypto/sha256"
	"encoding/json"
	"io"
	"net/http"
	"net/http/httptest"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/convengine/engine"
	"github.com/convengine/engine/examples/demobank"
	"github.com/convengine/engine/httptools"
)

// proofBank is the reference bank (demobank, requiring proofs) behind a recorder of the
// engine's transfer calls, with the engine in front of it.
type proofBank struct {
	*gated
	bank     *demobank.Bank
	url      string
	mu       sync.Mutex
	codes    map[string]string // user label → the last one-time code "sent"
	recorded []demobank.Forwarded
}

const bankRPID, bankOrigin = "bank.example", "https://bank.example"

func newProofBank(t *testing.T) *proofBank {
	pb := &proofBank{codes: map[string]string{}}
	pb.bank = demobank.New(&demobank.Options{RequireDeviceProof: true, PasskeyRPID: bankRPID, PasskeyOrigins: []string{bankOrigin},
		SendCode: func(user, code string) { pb.mu.Lock(); pb.codes[user] = code; pb.mu.Unlock() }})
	srv := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		if r.URL.Path == "/transfers" {
			body, _ := io.ReadAll(r.Body)
			pb.mu.Lock()
			pb.recorded = append(pb.recorded, demobank.Forwarded{Header: r.Header.Clone(), Body: body})
			pb.mu.Unlock()
			r.Body = io.NopCloser(bytes.NewReader(body))
		}
		pb.bank.ServeHTTP(w, r)
	}))
	t.Cleanup(srv.Close)
	pb.url = srv.URL
	tn, err := demobank.ProofTenant(srv.URL, "")
	if err != nil {
		t.Fatal(err)
	}
	tn.Key = testTenant().Key
	model := modelFunc(func(context.Context, *engine.ModelRequest) []engine.ModelEvent {
		return []engine.ModelEvent{engine.TextEvent("Please confirm."), call("c1", "transfer", `{"to":"Alex","amount":20}`)}
	})
	pb.gated = &gated{device: newDevice(t), gate: newDevice(t)}
	pb.h = newHarness(t, engine.Config{Model: model, Toolset: httptools.New(nil),
		Passkeys: passkeys(t, bankRPID, bankOrigin)}, tn)
	return pb
}

// bankPost sends body to the bank's path as the harness's user.
func (pb *proofBank) bankPost(t *testing.T, path string, body any) (int, map[string]any) {
	t.Helper()
	raw, _ := json.Marshal(body)
	req, _ := http.NewRequest(http.MethodPost, pb.url+path, bytes.NewReader(raw))
	req.Header.Set("X-Token", headers().Get("X-Token"))
	req.Header.Set("Content-Type", "application/json")
	resp, err := http.DefaultClient.Do(req)
	if err != nil {
		t.Fatal(err)
	}
	defer resp.Body.Close()
	var got map[string]any
	json.NewDecoder(resp.Body).Decode(&got)
	return resp.StatusCode, got
}

// enrol enrols the public JWK with the bank's one-time code.
func (pb *proofBank) enrol(t *testing.T, jwk json.RawMessage) {
	t.Helper()
	if status, got := pb.bankPost(t, "/devices/code", map[string]any{"public_key": jwk}); status != http.StatusAccepted {
		t.Fatalf("code: %d %v", status, got)
	}
	pb.mu.Lock()
	code := pb.codes[demobank.UserLabel(headers().Get("X-Token"))]
	pb.mu.Unlock()
	if status, got := pb.bankPost(t, "/devices", map[string]any{"code": code, "public_key": jwk}); status != http.StatusCreated {
		t.Fatalf("enrol: %d %v", status, got)
	}
}

func (pb *proofBank) last() demobank.Forwarded {
	pb.mu.Lock()
	defer pb.mu.Unlock()
	return pb.recorded[len(pb.recorded)-1]
}

// alterOneByte returns copies of f, each with one byte of what the bank verifies changed: the
// proof, the token (its claims, so its argument digest), the body, the device key.
func alterOneByte(f demobank.Forwarded) map[string]demobank.Forwarded {
	flip := func(s string, at int) string {
		b := []byte(s)
		if b[at] == 'A' {
			b[at] = 'B'
		} else {
			b[at] = 'A'
		}
		return string(b)
	}
	out := map[string]demobank.Forwarded{}
	for _, name := range []string{"Engine-Action-Proof", "Engine-Action-Token"} {
		h := f.Header.Clone()
		v := h.Get(name)
		at := strings.IndexByte(v, '.') + 5 // inside the payload
		if at < 5 {
			at = len(v) / 2
		}
		h.Set(name, flip(v, at))
		out["a byte of "+name] = demobank.Forwarded{Header: h, Body: f.Body}
	}
	body := bytes.Replace(f.Body, []byte(`20`), []byte(`21`), 1)
	out["a byte of the amount"] = demobank.Forwarded{Header: f.Header, Body: body}
	return out
}

// TestBankVerifiesTheProofItself: the reference bank moves money only for a device it enrolled
// by one-time code, verifying the forwarded proof itself (a gate key's JWS, a passkey's
// assertion, ES256 or RS256) with nothing but what it received; one altered byte of the proof,
// the token or the amount is refused. A stranger with the user's token and keys of their own gets no session,
// whatever credential id they register a passkey under.
func TestBankVerifiesTheProofItself(t *testing.T) {
	pb := newProofBank(t)
	verifier := &demobank.Verifier{RPID: bankRPID, Origins: []string{bankOrigin}}

	t.Run("gate key", func(t *testing.T) {
		// Not enrolled: no session, and the bank was asked.
		resp := pb.h.do(t.Context(), http.MethodPost, engine.PathCreateSession, headers(), `{"public_key":`+pb.device.jwkJSON()+`,"gate_key":`+pb.gate.jwkJSON()+`}`)
		if p := readProblem(t, resp); resp.StatusCode != http.StatusForbidden || p.Code != engine.CodeDeviceNotEnrolled {
			t.Fatalf("an unenrolled gate key: %d %+v", resp.StatusCode, p)
		}
		pb.enrol(t, json.RawMessage(pb.gate.jwkJSON()))
		pb.sess = pb.h.createSession(t, headers(), `{"public_key":`+pb.device.jwkJSON()+`,"gate_key":`+pb.gate.jwkJSON()+`}`)
		c := pb.confirm(t)
		now := time.Now().UTC().Format(time.RFC3339)
		proof := actionProof(pb.gate, c.Execute.Token, "faceid", now, nil)
		if status, body := pb.signed(t, engine.PathExecute, executeWithProof(c.Execute, "faceid", now, &proof)); status != 200 || !strings.Contains(string(body), "Money sent") {
			t.Fatalf("the enrolled device's transfer: %d %s", status, body)
		}
		if n := pb.bank.Transfers(headers().Get("X-Token")); n != 1 {
			t.Fatalf("%d transfers", n)
		}
		f := pb.last()
		key := pb.gate.key.Public().(*ecdsa.PublicKey)
		if _, err := verifier.Verify(&f, key, 0, time.Now()); err != nil {
			t.Fatalf("the forwarded proof does not verify: %v", err)
		}
		if tp, err := f.PresentedKey(); err != nil || tp != pb.gate.thumbprint() {
			t.Fatalf("the forwarded key is %q %v", tp, err)
		}
		for name, altered := range alterOneByte(f) {
			if _, err := verifier.Verify(&altered, key, 0, time.Now()); err == nil {
				t.Errorf("%s: verified", name)
			}
		}
		// Another key, even one the bank enrolled for someone else, does not verify it.
		if _, err := verifier.Verify(&f, newDevice(t).key.Public().(*ecdsa.PublicKey), 0, time.Now()); err == nil {
			t.Error("verified with another key")
		}
	})

	t.Run("passkey", func(t *testing.T) {
		device := newDevice(t)
		victim := newAuthenticator(t, bankRPID, bankOrigin)
		register := func(a *authenticator) *http.Response {
			return pb.h.do(t.Context(), http.MethodPost, engine.PathCreateSession, headers(),
				`{"public_key":`+device.jwkJSON()+`,"gate_credential":`+a.register(gateChallenge(device))+`}`)
		}
		pub, _ := victim.key.PublicKey.Bytes()
		pb.enrol(t, json.RawMessage(`{"kty":"EC","crv":"P-256","x":"`+b64.EncodeToString(pub[1:33])+`","y":"`+b64.EncodeToString(pub[33:])+`"}`))

		// The attacker's own passkey under the victim's credential id: its public key is
		// not enrolled, so there is no session.
		attacker := newAuthenticator(t, bankRPID, bankOrigin)
		attacker.id = victim.id
		if resp := register(attacker); resp.StatusCode != http.StatusForbidden || readProblem(t, resp).Code != engine.CodeDeviceNotEnrolled {
			t.Fatalf("an attacker's passkey under the victim's credential id: %d", resp.StatusCode)
		}

		resp := register(victim)
		var sess sessionOut
		json.NewDecoder(resp.Body).Decode(&sess)
		resp.Body.Close()
		if resp.StatusCode != http.StatusCreated {
			t.Fatalf("the enrolled passkey: %d", resp.StatusCode)
		}
		pb.device, pb.sess = device, sess
		c := pb.confirm(t)
		sum := sha256.Sum256([]byte(c.Execute.Token))
		now := time.Now().UTC().Format(time.RFC3339)
		if status, body := pb.signed(t, engine.PathExecute, executeWithPasskey(c.Execute, now, victim.assert(sum[:], bankOrigin))); status != 200 || !strings.Contains(string(body), "Money sent") {
			t.Fatalf("the passkey's transfer: %d %s", status, body)
		}
		f := pb.last()
		counter, err := verifier.Verify(&f, &victim.key.PublicKey, 0, time.Now())
		if err != nil || counter != victim.counter {
			t.Fatalf("the forwarded assertion: counter %d, %v", counter, err)
		}
		// The same assertion again is a replay: its counter did not advance.
		if _, err := verifier.Verify(&f, &victim.key.PublicKey, counter, time.Now()); err == nil {
			t.Error("a replayed assertion verified")
		}
		for name, altered := range alterOneByte(f) {
			if _, err := verifier.Verify(&altered, &victim.key.PublicKey, 0, time.Now()); err == nil {
				t.Errorf("%s: verified", name)
			}
		}
	})

	// An RS256 passkey, as authenticators that make RSA keys only register: the bank enrols
	// its RSA JWK and verifies its assertions (RSASSA-PKCS1-v1_5, SHA-256).
	t.Run("RS256 passkey", func(t *testing.T) {
		device := newDevice(t)
		auth := newAuthenticator(t, bankRPID, bankOrigin)
		k, err := rsa.GenerateKey(rand.Reader, 2048)
		if err != nil {
			t.Fatal(err)
		}
		auth.key, auth.rsa = nil, k
		pb.enrol(t, json.RawMessage(`{"kty":"RSA","n":"`+b64.EncodeToString(k.N.Bytes())+`","e":"AQAB"}`))
		resp := pb.h.do(t.Context(), http.MethodPost, engine.PathCreateSession, headers(),
			`{"public_key":`+device.jwkJSON()+`,"gate_credential":`+auth.register(gateChallenge(device))+`}`)
		var sess sessionOut
		json.NewDecoder(resp.Body).Decode(&sess)
		resp.Body.Close()
		if resp.StatusCode != http.StatusCreated {
			t.Fatalf("the enrolled RS256 passkey: %d", resp.StatusCode)
		}
		pb.device, pb.sess = device, sess
		c := pb.confirm(t)
		sum := sha256.Sum256([]byte(c.Execute.Token))
		now := time.Now().UTC().Format(time.RFC3339)
		if status, body := pb.signed(t, engine.PathExecute, executeWithPasskey(c.Execute, now, auth.assert(sum[:], bankOrigin))); status != 200 || !strings.Contains(string(body), "Money sent") {
			t.Fatalf("the RS256 passkey's transfer: %d %s", status, body)
		}
		f := pb.last()
		if _, err := verifier.Verify(&f, &k.PublicKey, 0, time.Now()); err != nil {
			t.Fatalf("the forwarded RS256 assertion: %v", err)
		}
		for name, altered := range alterOneByte(f) {
			if _, err := verifier.Verify(&altered, &k.PublicKey, 0, time.Now()); err == nil {
				t.Errorf("%s: verified", name)
			}
		}
		other, _ := rsa.GenerateKey(rand.Reader, 2048)
		if _, err := verifier.Verify(&f, &other.PublicKey, 0, time.Now()); err == nil {
			t.Error("verified with another RSA key")
		}
	})
}
