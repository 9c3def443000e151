package main

import (
	"bytes"
	"crypto/ecdsa"
	"crypto/elliptic"
	"crypto/rand"
	"encoding/base64"
	"encoding/json"
	"fmt"
	"net/http"
	"regexp"
	"strings"
	"testing"
	"time"

	"github.com/convengine/engine"
	"github.com/convengine/engine/client"
	"github.com/convengine/engine/examples/demobank"
	"github.com/convengine/engine/widgets"
)

// proofDemo is the reference server with what a test of its proof bank needs.
type proofDemo struct {
	base, bank string // the engine, and pk_demo_proof's production bank
	demoBank   string // pk_demo's production bank
	out, logs  *lineWriter
}

func startProofDemo(t *testing.T) *proofDemo {
	base, out, logs := startServerLogs(t, []string{"-speech", "off"}, nil)
	banks := regexp.MustCompile(`(?m)^\s*(\S+) bank: production (http://\S+)\s+staging (http://\S+)`).FindAllStringSubmatch(out.String(), -1)
	d := &proofDemo{base: base, out: out, logs: logs}
	for _, m := range banks {
		switch m[1] {
		case demobank.EngineKey:
			d.demoBank = m[2]
		case demobank.ProofEngineKey:
			d.bank = m[2]
		}
	}
	if d.bank == "" || d.demoBank == "" || d.bank == d.demoBank {
		t.Fatalf("the banner names no separate bank for each demo key:\n%s", out.String())
	}
	return d
}

// post sends a JSON body with the user's token to url.
func post(t *testing.T, url, token string, body any, header map[string]string) (int, map[string]any) {
	t.Helper()
	raw, _ := json.Marshal(body)
	req, _ := http.NewRequest(http.MethodPost, url, bytes.NewReader(raw))
	req.Header.Set("X-Token", token)
	req.Header.Set("Content-Type", "application/json")
	for k, v := range header {
		req.Header.Set(k, v)
	}
	resp, err := http.DefaultClient.Do(req)
	if err != nil {
		t.Fatal(err)
	}
	defer resp.Body.Close()
	var got map[string]any
	json.NewDecoder(resp.Body).Decode(&got)
	return resp.StatusCode, got
}

// code waits for the bank's newest one-time code for user on the server's console.
func (d *proofDemo) code(t *testing.T, user string) string {
	t.Helper()
	re := regexp.MustCompile(`demo bank: one-time code for ` + regexp.QuoteMeta(user) + `: (\d{6})`)
	for deadline := time.Now().Add(5 * time.Second); time.Now().Before(deadline); time.Sleep(20 * time.Millisecond) {
		if m := re.FindAllStringSubmatch(d.out.String(), -1); m != nil {
			return m[len(m)-1][1]
		}
	}
	t.Fatalf("no one-time code for %s on the console", user)
	return ""
}

// enrol enrols key for token with the bank's code, through the reference server's /demo/bank/.
func (d *proofDemo) enrol(t *testing.T, token string, key *ecdsa.PrivateKey) {
	t.Helper()
	jwk, err := client.PublicJWK(key)
	if err != nil {
		t.Fatal(err)
	}
	status, got := post(t, d.base+"/demo/bank/devices/code", token, map[string]any{"public_key": jwk}, nil)
	if status != http.StatusAccepted || got["user"] != demobank.UserLabel(token) {
		t.Fatalf("asking for a code: %d %v", status, got)
	}
	if status, got := post(t, d.base+"/demo/bank/devices", token, map[string]any{"code": d.code(t, demobank.UserLabel(token)), "public_key": jwk}, nil); status != http.StatusCreated {
		t.Fatalf("enrolling: %d %v", status, got)
	}
}

func (d *proofDemo) client(t *testing.T, key, token string, forward map[string]string) *client.Client {
	h := http.Header{}
	for k, v := range forward {
		h.Set(k, v)
	}
	c, err := client.New(d.base, &client.Options{EngineKey: key, UserToken: client.StaticToken(token), Forward: h})
	if err != nil {
		t.Fatal(err)
	}
	return c
}

// transfer asks for the transfer and confirms it.
func transfer(t *testing.T, c *client.Client, say string) (*client.ExecuteResult, error) {
	t.Helper()
	stream, err := c.Turn(t.Context(), &client.TurnRequest{Transcript: say})
	if err != nil {
		return nil, err
	}
	spec, err := stream.Spec()
	stream.Close()
	if err != nil || len(spec.Widgets) == 0 {
		t.Fatalf("turn: %v %+v", err, spec)
	}
	confirm := spec.Widgets[0].(widgets.Confirm)
	return c.Execute(t.Context(), confirm.Execute, client.Auth{Method: client.AuthFaceID, VerifiedAt: time.Now()}, nil)
}

func (d *proofDemo) balance(t *testing.T, bank, token string) float64 {
	t.Helper()
	req, _ := http.NewRequest(http.MethodGet, bank+"/balance", nil)
	req.Header.Set("X-Token", token)
	resp, err := http.DefaultClient.Do(req)
	if err != nil {
		t.Fatal(err)
	}
	defer resp.Body.Close()
	var b struct{ Balance float64 }
	json.NewDecoder(resp.Body).Decode(&b)
	return b.Balance
}

func newKey(t *testing.T) *ecdsa.PrivateKey {
	k, err := ecdsa.GenerateKey(elliptic.P256(), rand.Reader)
	if err != nil {
		t.Fatal(err)
	}
	return k
}

// TestProofBankRedTeam: with only the victim's X-Token and keys of their own, a stranger moves
// none of the victim's money at the proof tenant's bank, by any of the paths a red team took;
// the victim, with a device the bank enrolled by one-time code, does. pk_demo still runs the
// spec's basic execute, on a ledger of its own.
func TestProofBankRedTeam(t *testing.T) {
	d := startProofDemo(t)
	const victim = "red-team-victim"
	start := d.balance(t, d.bank, victim)
	untouched := func(path string) {
		t.Helper()
		if got := d.balance(t, d.bank, victim); got != start {
			t.Fatalf("%s: the victim's balance went from %v to %v", path, start, got)
		}
	}

	// No proof: an unbound session, and no session at all.
	unbound := d.client(t, demobank.ProofEngineKey, victim, nil)
	if _, err := unbound.CreateSession(t.Context(), nil); err != nil {
		t.Fatal(err)
	}
	if _, err := transfer(t, unbound, "send 500 dollars to Jordan"); !client.IsCode(err, engine.CodeDeviceProofRequired) {
		t.Fatalf("no proof: %v", err)
	}
	if _, err := transfer(t, d.client(t, demobank.ProofEngineKey, victim, nil), "send 500 dollars to Jordan"); !client.IsCode(err, engine.CodeDeviceProofRequired) {
		t.Fatalf("no session: %v", err)
	}
	untouched("no proof")

	// The stranger's own keys, as a gate key or as the device key: not enrolled, no session.
	for name, opts := range map[string]*client.SessionOptions{
		"own gate key":   {Bind: true, Gate: newKey(t)},
		"own device key": {Key: newKey(t)},
	} {
		c := d.client(t, demobank.ProofEngineKey, victim, nil)
		if _, err := c.CreateSession(t.Context(), opts); !client.IsCode(err, engine.CodeDeviceNotEnrolled) {
			t.Fatalf("%s: create-session %v", name, err)
		}
	}

	// Forwarded Engine-* headers never reach the bank as the engine's.
	forged := map[string]string{"Engine-Device-Key": "forged", "Engine-Action-Proof": "forged", "Engine-Action-Token": "forged", "Engine-Action-Proof-Type": "webauthn"}
	if _, err := transfer(t, d.client(t, demobank.ProofEngineKey, victim, forged), "send 500 dollars to Jordan"); !client.IsCode(err, engine.CodeDeviceProofRequired) {
		t.Fatalf("forwarded proof headers: %v", err)
	}
	untouched("forwarded headers")

	// Through pk_demo: the spec's basic execute runs, on pk_demo's own bank.
	if res, err := transfer(t, d.client(t, demobank.EngineKey, victim, nil), "send 500 dollars to Jordan"); err != nil || res.Done.Type != "success" {
		t.Fatalf("pk_demo's basic execute: %+v %v", res, err)
	}
	if got := d.balance(t, d.demoBank, victim); got != start-500 {
		t.Fatalf("pk_demo's bank holds %v for the user, want %v", got, start-500)
	}
	untouched("pk_demo")

	// The bank called directly with the X-Token alone, and with a proof of a key of one's own.
	status, got := post(t, d.bank+"/transfers", victim, map[string]any{"amount": 500, "to": "Jordan"}, map[string]string{"Idempotency-Key": "direct-1"})
	msg, _ := got["message"].(string)
	if status != http.StatusForbidden || got["error"] != "device_proof_required" || msg == "" || msg[:1] != strings.ToUpper(msg[:1]) || strings.Contains(strings.ToLower(msg), "success") {
		t.Fatalf("the bank called directly: %d %v", status, got)
	}
	own, _ := client.PublicJWK(newKey(t))
	status, got = post(t, d.bank+"/transfers", victim, map[string]any{"amount": 500, "to": "Jordan"}, map[string]string{"Idempotency-Key": "direct-2",
		"Engine-Device-Key": b64(own), "Engine-Action-Proof": "a.b.c", "Engine-Action-Token": "a.b.c", "Engine-Action-Proof-Type": "action-proof+jwt"})
	if status != http.StatusForbidden || got["error"] != "device_not_enrolled" {
		t.Fatalf("the bank called directly with a key of one's own: %d %v", status, got)
	}
	untouched("the bank directly")

	// The victim enrols a device with the code the bank sent, and moves money with it.
	gate := newKey(t)
	d.enrol(t, victim, gate)
	c := d.client(t, demobank.ProofEngineKey, victim, nil)
	if _, err := c.CreateSession(t.Context(), &client.SessionOptions{Bind: true, Gate: gate}); err != nil {
		t.Fatalf("the victim's enrolled device: %v", err)
	}
	if res, err := transfer(t, c, "send 20 dollars to Alex"); err != nil || res.Done.Title != "Money sent" {
		t.Fatalf("the victim's transfer: %+v %v", res, err)
	}
	if got := d.balance(t, d.bank, victim); got != start-20 {
		t.Fatalf("after the victim's transfer the bank holds %v, want %v", got, start-20)
	}

	// Codes: bound to the key they were sent for, and locked after five wrong tries.
	stranger, _ := client.PublicJWK(newKey(t))
	victimKey, _ := client.PublicJWK(newKey(t))
	post(t, d.base+"/demo/bank/devices/code", victim, map[string]any{"public_key": victimKey}, nil)
	seen := d.code(t, demobank.UserLabel(victim))
	if status, got := post(t, d.base+"/demo/bank/devices", victim, map[string]any{"code": seen, "public_key": stranger}, nil); status != http.StatusForbidden || got["error"] != "wrong_code" {
		t.Fatalf("a code for another key: %d %v", status, got)
	}
	var last int
	for i := range 5 {
		last, got = post(t, d.base+"/demo/bank/devices", victim, map[string]any{"code": fmt.Sprintf("%06d", i), "public_key": stranger}, nil)
	}
	if last != http.StatusTooManyRequests || got["error"] != "enrolment_locked" {
		t.Fatalf("guessing codes: %d %v", last, got)
	}
	if status, got := post(t, d.base+"/demo/bank/devices", victim, map[string]any{"code": seen, "public_key": victimKey}, nil); status != http.StatusTooManyRequests {
		t.Fatalf("the right code once locked: %d %v", status, got)
	}
	// The lock stops enrolment, never the devices already enrolled.
	if res, err := transfer(t, c, "send 20 dollars to Alex"); err != nil || res.Done.Title != "Money sent" {
		t.Fatalf("the enrolled device while enrolment is locked: %+v %v", res, err)
	}
	// Nothing of the user's token, the codes or the proofs reaches the server's log.
	for _, secret := range []string{victim, "one-time code", "forged"} {
		if strings.Contains(d.logs.String(), secret) {
			t.Errorf("the server's log holds %q", secret)
		}
	}
}

func b64(raw []byte) string { return base64.RawURLEncoding.EncodeToString(raw) }
