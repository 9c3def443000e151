package demobank_test

import (
	"crypto/ecdsa"
	"crypto/elliptic"
	"crypto/rand"
	"crypto/rsa"
	"encoding/base64"
	"fmt"
	"net/http"
	"sync"
	"testing"
	"time"

	"github.com/convengine/engine/examples/demobank"
)

// enrolBank is a bank that requires proofs, with its clock and the codes it sent.
type enrolBank struct {
	bank  *demobank.Bank
	mu    sync.Mutex
	now   time.Time
	codes map[string]string
}

func newEnrolBank(t *testing.T, maxUsers int) (*enrolBank, func(req request) (int, map[string]any)) {
	eb := &enrolBank{now: clock, codes: map[string]string{}}
	bank, srv := newServer(t, &demobank.Options{RequireDeviceProof: true, MaxUsers: maxUsers,
		Now:      func() time.Time { eb.mu.Lock(); defer eb.mu.Unlock(); return eb.now },
		SendCode: func(user, code string) { eb.mu.Lock(); eb.codes[user] = code; eb.mu.Unlock() }})
	eb.bank = bank
	return eb, func(req request) (int, map[string]any) { return do(t, srv, req) }
}

func (eb *enrolBank) advance(d time.Duration) { eb.mu.Lock(); eb.now = eb.now.Add(d); eb.mu.Unlock() }

func (eb *enrolBank) code(token string) string {
	eb.mu.Lock()
	defer eb.mu.Unlock()
	return eb.codes[demobank.UserLabel(token)]
}

func jwkOf(t *testing.T) string {
	k, err := ecdsa.GenerateKey(elliptic.P256(), rand.Reader)
	if err != nil {
		t.Fatal(err)
	}
	raw, _ := k.PublicKey.Bytes()
	b := base64.RawURLEncoding
	return `{"kty":"EC","crv":"P-256","x":"` + b.EncodeToString(raw[1:33]) + `","y":"` + b.EncodeToString(raw[33:]) + `"}`
}

func TestDeviceEnrolment(t *testing.T) {
	eb, call := newEnrolBank(t, 0)
	key, other := jwkOf(t), jwkOf(t)
	askCode := func(token, jwk string) (int, map[string]any) {
		return call(request{method: "POST", path: "/devices/code", token: token, body: `{"public_key":` + jwk + `}`})
	}
	enrol := func(token, code, jwk string) (int, map[string]any) {
		return call(request{method: "POST", path: "/devices", token: token, body: `{"code":"` + code + `","public_key":` + jwk + `}`})
	}
	check := func(token, jwk string) bool {
		_, got := call(request{method: "POST", path: "/devices/check", token: token, body: `{"kind":"gate_key","public_key":` + jwk + `}`})
		return got["enrolled"] == true
	}

	if status, got := enrol("u", "000000", key); status != http.StatusBadRequest || got["error"] != "no_code" {
		t.Fatalf("no code asked: %d %v", status, got)
	}
	if status, got := askCode("u", `{"kty":"EC","crv":"P-256","x":"AA","y":"AA"}`); status != http.StatusBadRequest {
		t.Fatalf("a key that is no point: %d %v", status, got)
	}
	// A code expires after 10 minutes.
	askCode("u", key)
	eb.advance(10 * time.Minute)
	if status, got := enrol("u", eb.code("u"), key); status != http.StatusGone || got["error"] != "code_expired" {
		t.Fatalf("an expired code: %d %v", status, got)
	}
	// A code enrols the key it was sent for, once, and the check then says so.
	askCode("u", key)
	code := eb.code("u")
	if status, got := enrol("u", code, other); status != http.StatusForbidden || got["error"] != "wrong_code" {
		t.Fatalf("the code with another key: %d %v", status, got)
	}
	if check("u", key) {
		t.Fatal("enrolled before the code was given")
	}
	if status, got := enrol("u", code, key); status != http.StatusCreated {
		t.Fatalf("the code: %d %v", status, got)
	}
	if !check("u", key) || check("u", other) || check("v", key) {
		t.Fatal("the check does not answer for the key and user enrolled alone")
	}
	if status, got := enrol("u", code, key); status != http.StatusBadRequest {
		t.Fatalf("the code used again: %d %v", status, got)
	}
	// Five wrong codes lock enrolment for 15 minutes, the right one included.
	askCode("u", other)
	right := eb.code("u")
	for i := range 5 {
		if status, got := enrol("u", fmt.Sprintf("x%05d", i), other); (i < 4 && status != http.StatusForbidden) || (i == 4 && status != http.StatusTooManyRequests) {
			t.Fatalf("wrong code %d: %d %v", i+1, status, got)
		}
	}
	if status, _ := enrol("u", right, other); status != http.StatusTooManyRequests {
		t.Fatalf("the right code while locked: %d", status)
	}
	if status, _ := askCode("u", other); status != http.StatusTooManyRequests {
		t.Fatalf("a code while locked: %d", status)
	}
	eb.advance(15 * time.Minute)
	askCode("u", other)
	if status, got := enrol("u", eb.code("u"), other); status != http.StatusCreated {
		t.Fatalf("after the lock: %d %v", status, got)
	}
	// At most five codes in ten minutes.
	for i := range 6 {
		status, got := askCode("w", key)
		if (i < 5 && status != http.StatusAccepted) || (i == 5 && (status != http.StatusTooManyRequests || got["error"] != "too_many_codes")) {
			t.Fatalf("code %d: %d %v", i+1, status, got)
		}
	}
}

// TestRSAPasskeyEnrolment: an RS256 passkey's public key enrols as an RSA JWK of at least 2048
// bits, n and e spelled without leading zero octets, and the check then answers for it.
func TestRSAPasskeyEnrolment(t *testing.T) {
	eb, call := newEnrolBank(t, 0)
	b := base64.RawURLEncoding
	rsaJWK := func(bits int) (string, *rsa.PrivateKey) {
		k, err := rsa.GenerateKey(rand.Reader, bits)
		if err != nil {
			t.Fatal(err)
		}
		return `{"kty":"RSA","n":"` + b.EncodeToString(k.N.Bytes()) + `","e":"AQAB"}`, k
	}
	key, k := rsaJWK(2048)
	small, _ := rsaJWK(1024)
	for name, jwk := range map[string]string{
		"a 1024-bit key":      small,
		"a leading zero in n": `{"kty":"RSA","n":"` + b.EncodeToString(append([]byte{0}, k.N.Bytes()...)) + `","e":"AQAB"}`,
		"an even exponent":    `{"kty":"RSA","n":"` + b.EncodeToString(k.N.Bytes()) + `","e":"AQAA"}`,
		"a private key":       `{"kty":"RSA","n":"` + b.EncodeToString(k.N.Bytes()) + `","e":"AQAB","d":"AQAB"}`,
	} {
		if status, got := call(request{method: "POST", path: "/devices/code", token: "u", body: `{"public_key":` + jwk + `}`}); status != http.StatusBadRequest {
			t.Errorf("%s: %d %v", name, status, got)
		}
	}
	if status, got := call(request{method: "POST", path: "/devices/code", token: "u", body: `{"public_key":` + key + `}`}); status != http.StatusAccepted {
		t.Fatalf("code for an RSA key: %d %v", status, got)
	}
	if status, got := call(request{method: "POST", path: "/devices", token: "u", body: `{"code":"` + eb.code("u") + `","public_key":` + key + `}`}); status != http.StatusCreated {
		t.Fatalf("enrol an RSA key: %d %v", status, got)
	}
	_, got := call(request{method: "POST", path: "/devices/check", token: "u", body: `{"kind":"passkey","public_key":` + key + `}`})
	if got["enrolled"] != true {
		t.Fatalf("the check of the enrolled RSA key: %v", got)
	}
}

// TestEnrolledUsersStay: a bank full of strangers forgets them first, never a user with an
// enrolled device; full of enrolled users, it refuses new ones.
func TestEnrolledUsersStay(t *testing.T) {
	eb, call := newEnrolBank(t, 2)
	key := jwkOf(t)
	call(request{method: "POST", path: "/devices/code", token: "victim", body: `{"public_key":` + key + `}`})
	call(request{method: "POST", path: "/devices", token: "victim", body: `{"code":"` + eb.code("victim") + `","public_key":` + key + `}`})
	for i := range 50 {
		if status, _ := call(request{method: "GET", path: "/balance", token: fmt.Sprint("stranger-", i)}); status != http.StatusOK {
			t.Fatalf("stranger %d: %d", i, status)
		}
	}
	if _, got := call(request{method: "POST", path: "/devices/check", token: "victim", body: `{"public_key":` + key + `}`}); got["enrolled"] != true {
		t.Fatal("the strangers evicted the victim's device")
	}
	other := jwkOf(t)
	call(request{method: "POST", path: "/devices/code", token: "second", body: `{"public_key":` + other + `}`})
	call(request{method: "POST", path: "/devices", token: "second", body: `{"code":"` + eb.code("second") + `","public_key":` + other + `}`})
	if status, got := call(request{method: "GET", path: "/balance", token: "third"}); status != http.StatusServiceUnavailable || got["error"] != "bank_full" {
		t.Fatalf("a new user of a bank full of enrolled users: %d %v", status, got)
	}
}
