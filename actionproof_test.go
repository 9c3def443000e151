package engine_test

import (
	"context"
	"crypto/ecdsa"
	"crypto/hmac"
	"crypto/rand"
	"crypto/sha256"
	"encoding/json"
	"fmt"
	"io"
	"net/http"
	"strings"
	"testing"
	"time"

	"github.com/convengine/engine"
	"github.com/convengine/engine/enginetest"
	"github.com/convengine/engine/internal/dpop"
	"github.com/convengine/engine/widgets"
)

// gated is a tenant that requires device proofs, its harness, and a session bound to device
// whose action proofs gate signs.
type gated struct {
	h            *harness
	tools        *enginetest.FuncToolset
	device, gate *device
	sess         sessionOut
}

func newGated(t *testing.T, require bool) *gated {
	g := &gated{device: newDevice(t), gate: newDevice(t), tools: bankTools()}
	tn := testTenant()
	tn.RequireActionProof = require
	model := modelFunc(func(context.Context, *engine.ModelRequest) []engine.ModelEvent {
		return []engine.ModelEvent{engine.TextEvent("Please confirm."), call("c1", "transfer", `{"to":"Alex","amount":20}`)}
	})
	g.h = newHarness(t, engine.Config{Model: model, Toolset: g.tools}, tn)
	g.sess = g.h.createSession(t, headers(), `{"public_key":`+g.device.jwkJSON()+`,"gate_key":`+g.gate.jwkJSON()+`}`)
	return g
}

// signed sends body to path with the session and a DPoP proof of the device.
func (g *gated) signed(t *testing.T, path, body string) (int, []byte) {
	t.Helper()
	url := g.h.srv.URL + path
	hdr := withAuth("DPoP", g.sess.SessionToken, g.device.proof("POST", url, g.sess.SessionToken, time.Now()))
	req, _ := http.NewRequestWithContext(t.Context(), http.MethodPost, url, strings.NewReader(body))
	req.Header = hdr
	resp, err := g.h.srv.Client().Do(req)
	if err != nil {
		t.Fatal(err)
	}
	defer resp.Body.Close()
	b, _ := io.ReadAll(resp.Body)
	return resp.StatusCode, b
}

// confirm runs a turn and returns its confirm widget.
func (g *gated) confirm(t *testing.T) widgets.Confirm {
	t.Helper()
	status, body := g.signed(t, engine.PathTurn, `{"transcript":"send 20 to alex"}`)
	turn, err := enginetest.ReadTurn(strings.NewReader(string(body)))
	if status != 200 || err != nil {
		t.Fatalf("turn: %d %v", status, err)
	}
	for _, w := range turn.Spec.Widgets {
		if c, ok := w.(widgets.Confirm); ok {
			return c
		}
	}
	t.Fatalf("no confirm in %s", body)
	return widgets.Confirm{}
}

// thumbprint is the RFC 7638 thumbprint of the device's public key.
func (d *device) thumbprint() string {
	k, err := dpop.ParseKey([]byte(d.jwkJSON()))
	if err != nil {
		panic(err)
	}
	return k.Thumbprint
}

// actionProof returns a proof of the action token tok by key, the claims adjusted by edit.
func actionProof(key *device, tok, method, verifiedAt string, edit func(h, c map[string]any)) string {
	h := map[string]any{"typ": "action-proof+jwt", "alg": "ES256"}
	c := map[string]any{"ath": ath(tok), "method": method, "verifiedAt": verifiedAt, "iat": time.Now().Unix()}
	if edit != nil {
		edit(h, c)
	}
	return key.sign(h, c)
}

func executeWithProof(x widgets.Execute, method, verifiedAt string, proof *string) string {
	auth := map[string]any{"method": method, "verifiedAt": verifiedAt}
	if proof != nil {
		auth["proof"] = *proof
	}
	xb, _ := json.Marshal(x)
	ab, _ := json.Marshal(auth)
	return fmt.Sprintf(`{"execute":%s,"auth":%s}`, xb, ab)
}

// TestDeviceProofs: a tenant that requires device proofs runs an action only with a proof
// signed by the session's gate key for exactly this action token and device check; every other
// proof is refused with its code and the backend is never called. A proof that holds reaches
// the backend with the gate key's thumbprint.
func TestDeviceProofs(t *testing.T) {
	g := newGated(t, true)
	c := g.confirm(t)
	other := g.confirm(t)
	now := time.Now().UTC().Format(time.RFC3339)
	tok := c.Execute.Token
	str := func(s string) *string { return &s }
	hs256 := func() string {
		input := segment(map[string]any{"typ": "action-proof+jwt", "alg": "HS256"}) + "." +
			segment(map[string]any{"ath": ath(tok), "method": "faceid", "verifiedAt": now, "iat": time.Now().Unix()})
		m := hmac.New(sha256.New, []byte("secret"))
		m.Write([]byte(input))
		return input + "." + b64.EncodeToString(m.Sum(nil))
	}()
	none := segment(map[string]any{"typ": "action-proof+jwt", "alg": "none"}) + "." +
		segment(map[string]any{"ath": ath(tok), "method": "faceid", "verifiedAt": now, "iat": time.Now().Unix()}) + "."
	changed := c.Execute
	changed.Arguments = json.RawMessage(`{"amount":2000,"to":"Alex"}`)
	cases := []struct {
		name string
		body string
		code string
	}{
		{"no proof", executeWithProof(c.Execute, "faceid", now, nil), engine.CodeDeviceProofRequired},
		{"signed by the device key, not the gate key", executeWithProof(c.Execute, "faceid", now, str(actionProof(g.device, tok, "faceid", now, nil))), engine.CodeInvalidDeviceProof},
		{"signed by a stranger", executeWithProof(c.Execute, "faceid", now, str(actionProof(newDevice(t), tok, "faceid", now, nil))), engine.CodeInvalidDeviceProof},
		{"for another action's token", executeWithProof(c.Execute, "faceid", now, str(actionProof(g.gate, other.Execute.Token, "faceid", now, nil))), engine.CodeInvalidDeviceProof},
		{"the amount changed", executeWithProof(changed, "faceid", now, str(actionProof(g.gate, tok, "faceid", now, nil))), engine.CodeInvalidActionToken},
		{"alg none", executeWithProof(c.Execute, "faceid", now, str(none)), engine.CodeInvalidDeviceProof},
		{"alg HS256", executeWithProof(c.Execute, "faceid", now, str(hs256)), engine.CodeInvalidDeviceProof},
		{"iat an hour old", executeWithProof(c.Execute, "faceid", now, str(actionProof(g.gate, tok, "faceid", now, func(_, c map[string]any) { c["iat"] = time.Now().Add(-time.Hour).Unix() }))), engine.CodeInvalidDeviceProof},
		{"iat in the future", executeWithProof(c.Execute, "faceid", now, str(actionProof(g.gate, tok, "faceid", now, func(_, c map[string]any) { c["iat"] = time.Now().Add(time.Hour).Unix() }))), engine.CodeInvalidDeviceProof},
		{"another method", executeWithProof(c.Execute, "passcode", now, str(actionProof(g.gate, tok, "faceid", now, nil))), engine.CodeInvalidDeviceProof},
		{"another verifiedAt", executeWithProof(c.Execute, "faceid", now, str(actionProof(g.gate, tok, "faceid", time.Now().Add(-time.Minute).UTC().Format(time.RFC3339), nil))), engine.CodeInvalidDeviceProof},
		{"another typ", executeWithProof(c.Execute, "faceid", now, str(actionProof(g.gate, tok, "faceid", now, func(h, _ map[string]any) { h["typ"] = "dpop+jwt" }))), engine.CodeInvalidDeviceProof},
		{"not a JWS", executeWithProof(c.Execute, "faceid", now, str("garbage")), engine.CodeInvalidDeviceProof},
	}
	for _, tc := range cases {
		t.Run(tc.name, func(t *testing.T) {
			status, body := g.signed(t, engine.PathExecute, tc.body)
			var p engine.Problem
			json.Unmarshal(body, &p)
			if status != http.StatusForbidden || p.Code != tc.code {
				t.Fatalf("%d %s, want 403 %s", status, body, tc.code)
			}
		})
	}
	if n := len(g.tools.Calls()); n != 0 {
		t.Fatalf("a refused execute reached the backend %d times", n)
	}

	proof := actionProof(g.gate, tok, "faceid", now, nil)
	status, body := g.signed(t, engine.PathExecute, executeWithProof(c.Execute, "faceid", now, &proof))
	if status != 200 || len(g.tools.Calls()) != 1 {
		t.Fatalf("a valid proof: %d %s, %d backend calls", status, body, len(g.tools.Calls()))
	}
	env := g.tools.Calls()[0].Env
	if p := env.Proof; p == nil || p.Proof != proof || p.Type != engine.ProofTypeJWS || p.Key.Thumbprint != g.gate.thumbprint() ||
		p.Key.Kind != engine.DeviceKeyGate || p.Token != c.Execute.Token || !strings.Contains(string(p.Key.PublicKey), `"kty":"EC"`) {
		t.Errorf("the backend got proof %+v", env.Proof)
	}
}

// TestDeviceProofSessions: a gate key needs a device-bound session and must be a P-256 key; a
// tenant that requires proofs refuses the execute of an unbound session; one that does not
// still checks a proof that is present.
func TestDeviceProofSessions(t *testing.T) {
	g := newGated(t, false)
	d := newDevice(t)
	for _, tc := range []struct{ name, body string }{
		{"without a public_key", `{"gate_key":` + d.jwkJSON() + `}`},
		{"an RSA key", `{"public_key":` + d.jwkJSON() + `,"gate_key":{"kty":"RSA","n":"sXch","e":"AQAB"}}`},
		{"a P-384 key", `{"public_key":` + d.jwkJSON() + `,"gate_key":{"kty":"EC","crv":"P-384","x":"AAAA","y":"AAAA"}}`},
	} {
		resp := g.h.do(t.Context(), http.MethodPost, engine.PathCreateSession, headers(), tc.body)
		p := readProblem(t, resp)
		if resp.StatusCode != 400 || p.Code != engine.CodeInvalidPublicKey || p.Field != "gate_key" {
			t.Errorf("%s: %d %+v", tc.name, resp.StatusCode, p)
		}
	}

	// Not required, present, wrong: refused. Not required, absent: runs.
	c := g.confirm(t)
	now := time.Now().UTC().Format(time.RFC3339)
	bad := actionProof(g.device, c.Execute.Token, "faceid", now, nil)
	if status, body := g.signed(t, engine.PathExecute, executeWithProof(c.Execute, "faceid", now, &bad)); status != 403 || !strings.Contains(string(body), engine.CodeInvalidDeviceProof) {
		t.Fatalf("a wrong proof on a tenant that does not require one: %d %s", status, body)
	}
	if status, body := g.signed(t, engine.PathExecute, executeWithProof(c.Execute, "faceid", now, nil)); status != 200 {
		t.Fatalf("no proof on a tenant that does not require one: %d %s", status, body)
	}

	// Required, and the session is not bound.
	strict := newGated(t, true)
	unbound := strict.h.createSession(t, headers(), `{}`)
	hdr := withAuth("Bearer", unbound.SessionToken)
	resp := strict.h.do(t.Context(), http.MethodPost, engine.PathTurn, hdr, `{"transcript":"send 20 to alex"}`)
	turn, err := enginetest.ReadTurn(resp.Body)
	resp.Body.Close()
	if err != nil {
		t.Fatal(err)
	}
	var cw widgets.Confirm
	for _, w := range turn.Spec.Widgets {
		if x, ok := w.(widgets.Confirm); ok {
			cw = x
		}
	}
	proof := actionProof(strict.gate, cw.Execute.Token, "faceid", now, nil)
	resp = strict.h.do(t.Context(), http.MethodPost, engine.PathExecute, hdr, executeWithProof(cw.Execute, "faceid", now, &proof))
	if p := readProblem(t, resp); resp.StatusCode != 403 || p.Code != engine.CodeDeviceProofRequired {
		t.Fatalf("an unbound session on a tenant that requires proofs: %d %+v", resp.StatusCode, p)
	}
}

// TestProofsRepeatingAMember: a DPoP proof or a device proof whose payload names a claim twice
// is refused, although the last "ath" of each, the one encoding/json keeps, is the right one: a
// verifier that keeps the first would read another proof from the same signed text. So is an
// execute body that names auth.proof or a member of auth.webauthn twice.
func TestProofsRepeatingAMember(t *testing.T) {
	g := newGated(t, true)
	c := g.confirm(t)
	now := time.Now().UTC().Format(time.RFC3339)
	repeatAth := func(claims map[string]any) string {
		b, _ := json.Marshal(claims)
		return `{"ath":"` + ath("another token") + `",` + string(b[1:])
	}

	url := g.h.srv.URL + engine.PathTurn
	h, cl := g.device.proofParts("POST", url, g.sess.SessionToken, time.Now())
	hb, _ := json.Marshal(h)
	resp := g.h.do(t.Context(), http.MethodPost, engine.PathTurn, withAuth("DPoP", g.sess.SessionToken, g.device.signRaw(string(hb), repeatAth(cl))), `{"transcript":"hi"}`)
	p := readProblem(t, resp)
	if resp.StatusCode != http.StatusUnauthorized || p.Code != engine.CodeInvalidDPoPProof || !strings.Contains(p.Detail, "twice") {
		t.Fatalf("a DPoP proof with ath twice: %d %+v, want 401 %s", resp.StatusCode, p, engine.CodeInvalidDPoPProof)
	}

	proof := g.gate.signRaw(`{"typ":"action-proof+jwt","alg":"ES256"}`,
		repeatAth(map[string]any{"ath": ath(c.Execute.Token), "method": "faceid", "verifiedAt": now, "iat": time.Now().Unix()}))
	status, body := g.signed(t, engine.PathExecute, executeWithProof(c.Execute, "faceid", now, &proof))
	json.Unmarshal(body, &p)
	if status != http.StatusForbidden || p.Code != engine.CodeInvalidDeviceProof || !strings.Contains(p.Detail, "twice") {
		t.Fatalf("a device proof with ath twice: %d %s, want 403 %s", status, body, engine.CodeInvalidDeviceProof)
	}

	// The execute body itself, which carries the proof or the passkey's assertion.
	valid := actionProof(g.gate, c.Execute.Token, "faceid", now, nil)
	sent := executeWithProof(c.Execute, "faceid", now, &valid)
	for name, body := range map[string]string{
		"auth.proof twice":    strings.Replace(sent, `"proof":`, `"proof":"another proof","proof":`, 1),
		"auth.webauthn twice": strings.Replace(sent, `"proof":`, `"webauthn":{"credentialId":"a","signature":"b","signature":"c"},"proof":`, 1),
	} {
		status, reply := g.signed(t, engine.PathExecute, body)
		json.Unmarshal(reply, &p)
		if status != http.StatusBadRequest || p.Code != engine.CodeInvalidRequest || !strings.Contains(p.Detail, "twice") {
			t.Errorf("%s: %d %s, want 400 %s", name, status, reply, engine.CodeInvalidRequest)
		}
	}
	if n := len(g.tools.Calls()); n != 0 {
		t.Fatalf("the action ran %d times", n)
	}
}

// signRaw returns the compact ES256 JWS of header and claims, JSON texts signed as written.
func (d *device) signRaw(header, claims string) string {
	input := b64.EncodeToString([]byte(header)) + "." + b64.EncodeToString([]byte(claims))
	sum := sha256.Sum256([]byte(input))
	r, s, err := ecdsa.Sign(rand.Reader, d.key, sum[:])
	if err != nil {
		panic(err)
	}
	sig := make([]byte, 64)
	r.FillBytes(sig[:32])
	s.FillBytes(sig[32:])
	return input + "." + b64.EncodeToString(sig)
}
