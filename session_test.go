package engine_test

import (
	"context"
	"crypto/ecdsa"
	"crypto/ed25519"
	"crypto/elliptic"
	"crypto/hmac"
	"crypto/rand"
	"crypto/sha256"
	"encoding/base64"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"net/http"
	"strings"
	"testing"
	"time"

	"github.com/google/uuid"

	"github.com/convengine/engine"
	"github.com/convengine/engine/enginetest"
)

var b64 = base64.RawURLEncoding

// newClock returns a clock for the engine and its stores, at the start of the current second.
func newClock() *enginetest.Clock { return enginetest.NewClock(time.Now().Truncate(time.Second)) }

// device is a client's P-256 key, signing proofs the way a phone would, or any wrong way a
// test asks for.
type device struct{ key *ecdsa.PrivateKey }

func newDevice(t testing.TB) *device {
	k, err := ecdsa.GenerateKey(elliptic.P256(), rand.Reader)
	if err != nil {
		t.Fatal(err)
	}
	return &device{key: k}
}

func (d *device) jwk() map[string]any {
	raw, _ := d.key.PublicKey.Bytes()
	return map[string]any{"kty": "EC", "crv": "P-256", "x": b64.EncodeToString(raw[1:33]), "y": b64.EncodeToString(raw[33:])}
}

func (d *device) jwkJSON() string {
	b, _ := json.Marshal(d.jwk())
	return string(b)
}

func segment(v any) string {
	b, err := json.Marshal(v)
	if err != nil {
		panic(err)
	}
	return b64.EncodeToString(b)
}

// sign returns the compact ES256 JWS of header and claims.
func (d *device) sign(header, claims map[string]any) string {
	h, _ := json.Marshal(header)
	c, _ := json.Marshal(claims)
	return d.signRaw(string(h), string(c))
}

func ath(token string) string {
	sum := sha256.Sum256([]byte(token))
	return b64.EncodeToString(sum[:])
}

func newJTI() string { return uuid.NewString() }

// proofParts returns the header and claims of a valid proof.
func (d *device) proofParts(method, htu, token string, now time.Time) (map[string]any, map[string]any) {
	return map[string]any{"typ": "dpop+jwt", "alg": "ES256", "jwk": d.jwk()},
		map[string]any{"jti": newJTI(), "htm": method, "htu": htu, "iat": now.Unix(), "ath": ath(token)}
}

func (d *device) proof(method, htu, token string, now time.Time) string {
	h, c := d.proofParts(method, htu, token, now)
	return d.sign(h, c)
}

// sessionOut is the 201 body of create-session.
type sessionOut struct {
	SessionID    string          `json:"session_id"`
	CreatedAt    string          `json:"created_at"`
	SessionToken string          `json:"session_token"`
	ExpiresAt    string          `json:"expires_at"`
	Theme        json.RawMessage `json:"theme"`
}

func (h *harness) createSession(t testing.TB, hdr http.Header, body string) sessionOut {
	t.Helper()
	resp := h.do(t.Context(), http.MethodPost, engine.PathCreateSession, hdr, body)
	defer resp.Body.Close()
	data, _ := io.ReadAll(resp.Body)
	if resp.StatusCode != http.StatusCreated {
		t.Fatalf("create-session: %d %s", resp.StatusCode, data)
	}
	var s sessionOut
	if err := json.Unmarshal(data, &s); err != nil {
		t.Fatal(err)
	}
	return s
}

func (h *harness) boundSession(t testing.TB, d *device) sessionOut {
	t.Helper()
	return h.createSession(t, headers(), `{"public_key":`+d.jwkJSON()+`}`)
}

// turnStatus runs a turn with hdr and returns its status, draining a stream.
func (h *harness) turnStatus(t *testing.T, url string, hdr http.Header) (*http.Response, engine.Problem) {
	t.Helper()
	req, err := http.NewRequestWithContext(t.Context(), http.MethodPost, url, strings.NewReader(`{"transcript":"hi"}`))
	if err != nil {
		t.Fatal(err)
	}
	req.Header = hdr
	resp, err := h.srv.Client().Do(req)
	if err != nil {
		t.Fatal(err)
	}
	if resp.StatusCode == http.StatusOK {
		io.Copy(io.Discard, resp.Body)
		resp.Body.Close()
		return resp, engine.Problem{}
	}
	return resp, readProblem(t, resp)
}

func withAuth(scheme, token string, proofs ...string) http.Header {
	hdr := headers()
	hdr.Set("Authorization", scheme+" "+token)
	for _, p := range proofs {
		hdr.Add("DPoP", p)
	}
	return hdr
}

const (
	proofChallenge = `DPoP error="invalid_dpop_proof", algs="ES256"`
	dpopToken      = `DPoP error="invalid_token"`
	bearerToken    = `Bearer error="invalid_token"`
)

func TestCreateSession(t *testing.T) {
	clk := newClock()
	store := &engine.MemoryStore{Now: clk.Now}
	h := newHarness(t, engine.Config{Model: &enginetest.ScriptedModel{}, Sessions: store, Now: clk.Now, SessionLifetime: 2 * time.Hour})

	resp := h.do(t.Context(), http.MethodPost, engine.PathCreateSession, headers(), `{"metadata":{"app":"ios","build":42}}`)
	defer resp.Body.Close()
	if resp.StatusCode != http.StatusCreated || resp.Header.Get("Cache-Control") != "no-store" ||
		resp.Header.Get("Content-Type") != "application/json" || resp.Header.Get("X-Request-ID") != "prod-test-1" {
		t.Fatalf("status %d, headers %v", resp.StatusCode, resp.Header)
	}
	var s sessionOut
	if err := json.NewDecoder(resp.Body).Decode(&s); err != nil {
		t.Fatal(err)
	}
	id, err := uuid.Parse(s.SessionID)
	if err != nil || id.Version() != 4 {
		t.Errorf("session_id %q is not a UUIDv4", s.SessionID)
	}
	created, err1 := time.Parse(time.RFC3339, s.CreatedAt)
	expires, err2 := time.Parse(time.RFC3339, s.ExpiresAt)
	if err1 != nil || err2 != nil || !strings.HasSuffix(s.CreatedAt, "Z") || !created.Equal(clk.Now()) || expires.Sub(created) != 2*time.Hour {
		t.Errorf("created_at %q, expires_at %q", s.CreatedAt, s.ExpiresAt)
	}
	if string(s.Theme) != `{"primary":"#0B5FFF"}` {
		t.Errorf("theme %s", s.Theme)
	}
	stored, err := store.Session(t.Context(), s.SessionID)
	if err != nil || string(stored.Metadata) != `{"app":"ios","build":42}` || stored.TenantKey != testKey || stored.KeyThumbprint != "" {
		t.Fatalf("stored %+v, %v", stored, err)
	}
	claims := tokenClaims(t, s.SessionToken)
	if claims["sid"] != s.SessionID || claims["tid"] != testKey || claims["cnf"] != nil ||
		claims["iat"] != float64(created.Unix()) || claims["exp"] != float64(expires.Unix()) {
		t.Errorf("claims %v", claims)
	}

	d := newDevice(t)
	bound := h.boundSession(t, d)
	claims = tokenClaims(t, bound.SessionToken)
	cnf, _ := claims["cnf"].(map[string]any)
	stored, _ = store.Session(t.Context(), bound.SessionID)
	if cnf == nil || cnf["jkt"] == "" || cnf["jkt"] != stored.KeyThumbprint {
		t.Errorf("bound claims %v, stored thumbprint %q", claims, stored.KeyThumbprint)
	}
}

// tokenClaims decodes a JWS payload without verifying it.
func tokenClaims(t *testing.T, token string) map[string]any {
	t.Helper()
	parts := strings.Split(token, ".")
	if len(parts) != 3 {
		t.Fatalf("token has %d parts", len(parts))
	}
	data, err := b64.DecodeString(parts[1])
	if err != nil {
		t.Fatal(err)
	}
	var m map[string]any
	if err := json.Unmarshal(data, &m); err != nil {
		t.Fatal(err)
	}
	return m
}

func tokenHeader(t *testing.T, token string) map[string]any {
	t.Helper()
	data, err := b64.DecodeString(strings.Split(token, ".")[0])
	if err != nil {
		t.Fatal(err)
	}
	var m map[string]any
	json.Unmarshal(data, &m)
	return m
}

func TestCreateSessionBody(t *testing.T) {
	h := newHarness(t, engine.Config{Model: &enginetest.ScriptedModel{}})
	d := newDevice(t)
	jwk := func(edit func(m map[string]any)) string {
		m := d.jwk()
		edit(m)
		b, _ := json.Marshal(map[string]any{"public_key": m})
		return string(b)
	}
	offCurve := func(m map[string]any) {
		y, _ := b64.DecodeString(m["y"].(string))
		y[31] ^= 1
		m["y"] = b64.EncodeToString(y)
	}
	p384, _ := ecdsa.GenerateKey(elliptic.P384(), rand.Reader)
	p384raw, _ := p384.PublicKey.Bytes()
	cases := []struct {
		name, body, ctype string
		status            int
		code, field       string
	}{
		{"empty body", ``, "", 201, "", ""},
		{"empty object", `{}`, "", 201, "", ""},
		{"null members", `{"public_key":null,"metadata":null}`, "", 201, "", ""},
		{"unknown members ignored", `{"device":"iPhone"}`, "", 201, "", ""},
		{"public key", jwk(func(map[string]any) {}), "", 201, "", ""},
		{"public key with alg ES256, use sig and kid", jwk(func(m map[string]any) { m["alg"] = "ES256"; m["use"] = "sig"; m["kid"] = "k1" }), "", 201, "", ""},
		{"public key not an object", `{"public_key":"abc"}`, "", 400, engine.CodeInvalidPublicKey, "public_key"},
		{"public key array", `{"public_key":[1]}`, "", 400, engine.CodeInvalidPublicKey, "public_key"},
		{"kty RSA", jwk(func(m map[string]any) { m["kty"] = "RSA" }), "", 400, engine.CodeInvalidPublicKey, "public_key"},
		{"kty missing", jwk(func(m map[string]any) { delete(m, "kty") }), "", 400, engine.CodeInvalidPublicKey, "public_key"},
		{"crv P-384", jwk(func(m map[string]any) {
			m["crv"] = "P-384"
			m["x"], m["y"] = b64.EncodeToString(p384raw[1:49]), b64.EncodeToString(p384raw[49:])
		}), "", 400, engine.CodeInvalidPublicKey, "public_key"},
		{"alg RS256", jwk(func(m map[string]any) { m["alg"] = "RS256" }), "", 400, engine.CodeInvalidPublicKey, "public_key"},
		{"alg none", jwk(func(m map[string]any) { m["alg"] = "none" }), "", 400, engine.CodeInvalidPublicKey, "public_key"},
		{"use enc", jwk(func(m map[string]any) { m["use"] = "enc" }), "", 400, engine.CodeInvalidPublicKey, "public_key"},
		{"private d", jwk(func(m map[string]any) { m["d"] = b64.EncodeToString(d.key.D.Bytes()) }), "", 400, engine.CodeInvalidPublicKey, "public_key"},
		{"x missing", jwk(func(m map[string]any) { delete(m, "x") }), "", 400, engine.CodeInvalidPublicKey, "public_key"},
		{"x a number", jwk(func(m map[string]any) { m["x"] = 5 }), "", 400, engine.CodeInvalidPublicKey, "public_key"},
		{"x 31 bytes", jwk(func(m map[string]any) { m["x"] = b64.EncodeToString(make([]byte, 31)) }), "", 400, engine.CodeInvalidPublicKey, "public_key"},
		{"y 33 bytes", jwk(func(m map[string]any) { m["y"] = b64.EncodeToString(make([]byte, 33)) }), "", 400, engine.CodeInvalidPublicKey, "public_key"},
		{"x padded", jwk(func(m map[string]any) { m["x"] = m["x"].(string) + "=" }), "", 400, engine.CodeInvalidPublicKey, "public_key"},
		{"x standard base64", jwk(func(m map[string]any) { m["x"] = base64.StdEncoding.EncodeToString(make([]byte, 32)) }), "", 400, engine.CodeInvalidPublicKey, "public_key"},
		{"point off the curve", jwk(offCurve), "", 400, engine.CodeInvalidPublicKey, "public_key"},
		{"point at zero", jwk(func(m map[string]any) {
			m["x"], m["y"] = b64.EncodeToString(make([]byte, 32)), b64.EncodeToString(make([]byte, 32))
		}), "", 400, engine.CodeInvalidPublicKey, "public_key"},
		{"metadata array", `{"metadata":[1,2]}`, "", 400, engine.CodeInvalidRequest, "metadata"},
		{"metadata string", `{"metadata":"x"}`, "", 400, engine.CodeInvalidRequest, "metadata"},
		{"metadata number", `{"metadata":5}`, "", 400, engine.CodeInvalidRequest, "metadata"},
		{"metadata 8 KiB", `{"metadata":{"a":"` + strings.Repeat("x", 8<<10-8) + `"}}`, "", 201, "", ""},
		{"metadata over 8 KiB", `{"metadata":{"a":"` + strings.Repeat("x", 8<<10) + `"}}`, "", 400, engine.CodeInvalidRequest, "metadata"},
		{"not json", `hello`, "", 400, engine.CodeInvalidRequest, ""},
		{"array body", `[]`, "", 400, engine.CodeInvalidRequest, ""},
		{"trailing data", `{} {}`, "", 400, engine.CodeInvalidRequest, ""},
		{"form body", `a=b`, "application/x-www-form-urlencoded", 415, engine.CodeUnsupportedMediaType, ""},
		{"over 64 KiB", `{"metadata":{"a":"` + strings.Repeat("x", 64<<10) + `"}}`, "", 413, engine.CodePayloadTooLarge, ""},
	}
	for _, tc := range cases {
		t.Run(tc.name, func(t *testing.T) {
			hdr := headers()
			if tc.ctype != "" {
				hdr.Set("Content-Type", tc.ctype)
			}
			resp := h.do(t.Context(), http.MethodPost, engine.PathCreateSession, hdr, tc.body)
			if tc.status == http.StatusCreated {
				defer resp.Body.Close()
				if resp.StatusCode != 201 {
					b, _ := io.ReadAll(resp.Body)
					t.Fatalf("got %d %s", resp.StatusCode, b)
				}
				return
			}
			p := readProblem(t, resp)
			if resp.StatusCode != tc.status || p.Code != tc.code || p.Field != tc.field {
				t.Fatalf("got %d %s field %q (%s), want %d %s field %q", resp.StatusCode, p.Code, p.Field, p.Detail, tc.status, tc.code, tc.field)
			}
		})
	}
}

// TestCreateSessionNeedsTheCommonHeaders checks that create-session applies the common header
// checks but no session rule: a tenant that requires sessions can still create one.
func TestCreateSessionNeedsTheCommonHeaders(t *testing.T) {
	tn := testTenant()
	tn.RequireSession = true
	h := newHarness(t, engine.Config{Model: &enginetest.ScriptedModel{Steps: [][]engine.ModelEvent{enginetest.Text("Hi.")}}}, tn)
	for _, name := range []string{"X-Engine-Key", "X-Token", "X-Request-ID"} {
		hdr := headers()
		hdr.Del(name)
		resp := h.do(t.Context(), http.MethodPost, engine.PathCreateSession, hdr, ``)
		if p := readProblem(t, resp); resp.StatusCode/100 != 4 {
			t.Errorf("without %s: %d %s", name, resp.StatusCode, p.Code)
		}
	}
	s := h.createSession(t, withAuth("Bearer", "stale-token"), ``)
	if resp, p := h.turnStatus(t, h.srv.URL+"/engine", headers()); resp.StatusCode != 401 || p.Code != engine.CodeInvalidSession {
		t.Fatalf("turn without a session: %d %s", resp.StatusCode, p.Code)
	}
	if resp, p := h.turnStatus(t, h.srv.URL+"/engine", withAuth("Bearer", s.SessionToken)); resp.StatusCode != 200 {
		t.Fatalf("turn with the session: %d %s %s", resp.StatusCode, p.Code, p.Detail)
	}
}

// TestSessionRejections is the negative table of device binding: every case is a 401 with the
// code and challenge of docs/sessions.md, and neither the model nor a tool runs.
func TestSessionRejections(t *testing.T) {
	clk := newClock()
	model := &enginetest.ScriptedModel{Steps: [][]engine.ModelEvent{enginetest.Text("Hi.")}}
	tools := bankTools()
	other := testTenant()
	other.Key = "pk_other"
	store := &engine.MemoryStore{Now: clk.Now}
	h := newHarness(t, engine.Config{Model: model, Toolset: tools, Now: clk.Now, Sessions: store, Replay: store}, testTenant(), other)
	url := h.srv.URL + "/engine"

	d := newDevice(t)
	bound := h.boundSession(t, d)
	unbound := h.createSession(t, headers(), ``)
	otherHdr := headers()
	otherHdr.Set("X-Engine-Key", "pk_other")
	foreign := h.createSession(t, otherHdr, ``)
	tok := bound.SessionToken

	// Tokens of engines that share nothing, or only the store, with this one.
	forger := newHarness(t, engine.Config{Model: model, SigningKey: []byte(strings.Repeat("f", 32)), Now: clk.Now, Sessions: store})
	forged := forger.boundSession(t, d).SessionToken
	edKey := ed25519.NewKeyFromSeed(make([]byte, 32))
	rotated := newHarness(t, engine.Config{Model: model, Now: clk.Now, Sessions: store,
		SessionKeys: []engine.SessionKey{{ID: "2031-01", Key: edKey}}})
	unknownKid := rotated.boundSession(t, d).SessionToken
	amnesiac := newHarness(t, engine.Config{Model: model, Now: clk.Now})
	forgotten := amnesiac.boundSession(t, d).SessionToken

	tampered := func() string {
		parts := strings.Split(tok, ".")
		c := tokenClaims(t, tok)
		c["exp"] = c["exp"].(float64) + 3600
		return parts[0] + "." + segment(c) + "." + parts[2]
	}()

	now := clk.Now()
	signed := func(edit func(h, c map[string]any)) string {
		hd, c := d.proofParts("POST", url, tok, now)
		edit(hd, c)
		return d.sign(hd, c)
	}
	raw := func(edit func(h, c map[string]any), sig []byte) string {
		hd, c := d.proofParts("POST", url, tok, now)
		edit(hd, c)
		return segment(hd) + "." + segment(c) + "." + b64.EncodeToString(sig)
	}
	hmacProof := func() string {
		hd, c := d.proofParts("POST", url, tok, now)
		hd["alg"] = "HS256"
		input := segment(hd) + "." + segment(c)
		m := hmac.New(sha256.New, []byte("secret"))
		m.Write([]byte(input))
		return input + "." + b64.EncodeToString(m.Sum(nil))
	}()
	stranger := newDevice(t)
	replayed := d.proof("POST", url, tok, now)
	if resp, p := h.turnStatus(t, url, withAuth("DPoP", tok, replayed)); resp.StatusCode != 200 {
		t.Fatalf("a valid proof was refused: %d %s %s", resp.StatusCode, p.Code, p.Detail)
	}
	replayedClaims := func() map[string]any {
		data, _ := b64.DecodeString(strings.Split(replayed, ".")[1])
		var c map[string]any
		json.Unmarshal(data, &c)
		return c
	}()
	sameJTI := func(htu string) string {
		hd, c := d.proofParts("POST", htu, tok, now)
		c["jti"] = replayedClaims["jti"]
		return d.sign(hd, c)
	}
	upperURL := strings.Replace(url, "http://", "HTTP://", 1)

	cases := []struct {
		name      string
		url       string
		hdr       http.Header
		code      string
		challenge string
	}{
		// The proof (RFC 9449 section 4.3).
		{"no DPoP header", url, withAuth("DPoP", tok), engine.CodeInvalidDPoPProof, proofChallenge},
		{"two DPoP headers", url, withAuth("DPoP", tok, d.proof("POST", url, tok, now), d.proof("POST", url, tok, now)), engine.CodeInvalidDPoPProof, proofChallenge},
		{"malformed proof", url, withAuth("DPoP", tok, "not-a-jwt"), engine.CodeInvalidDPoPProof, proofChallenge},
		{"proof of two parts", url, withAuth("DPoP", tok, "eyJhbGciOiJFUzI1NiJ9.e30"), engine.CodeInvalidDPoPProof, proofChallenge},
		{"proof of four parts", url, withAuth("DPoP", tok, d.proof("POST", url, tok, now)+".x"), engine.CodeInvalidDPoPProof, proofChallenge},
		{"header not JSON", url, withAuth("DPoP", tok, b64.EncodeToString([]byte("{typ"))+".e30.AAAA"), engine.CodeInvalidDPoPProof, proofChallenge},
		{"proof over 4 KiB", url, withAuth("DPoP", tok, signed(func(_, c map[string]any) { c["pad"] = strings.Repeat("x", 4096) })), engine.CodeInvalidDPoPProof, proofChallenge},
		{"alg none", url, withAuth("DPoP", tok, raw(func(h, _ map[string]any) { h["alg"] = "none" }, nil)+"AA"), engine.CodeInvalidDPoPProof, proofChallenge},
		{"alg none, empty signature", url, withAuth("DPoP", tok, strings.TrimSuffix(raw(func(h, _ map[string]any) { h["alg"] = "none" }, nil), ".")+"."), engine.CodeInvalidDPoPProof, proofChallenge},
		{"alg HS256", url, withAuth("DPoP", tok, hmacProof), engine.CodeInvalidDPoPProof, proofChallenge},
		{"alg RS256 with an EC key", url, withAuth("DPoP", tok, raw(func(h, _ map[string]any) { h["alg"] = "RS256" }, make([]byte, 256))), engine.CodeInvalidDPoPProof, proofChallenge},
		{"alg es256 (case)", url, withAuth("DPoP", tok, signed(func(h, _ map[string]any) { h["alg"] = "es256" })), engine.CodeInvalidDPoPProof, proofChallenge},
		{"missing alg", url, withAuth("DPoP", tok, signed(func(h, _ map[string]any) { delete(h, "alg") })), engine.CodeInvalidDPoPProof, proofChallenge},
		{"missing typ", url, withAuth("DPoP", tok, signed(func(h, _ map[string]any) { delete(h, "typ") })), engine.CodeInvalidDPoPProof, proofChallenge},
		{"typ JWT", url, withAuth("DPoP", tok, signed(func(h, _ map[string]any) { h["typ"] = "JWT" })), engine.CodeInvalidDPoPProof, proofChallenge},
		{"crit header", url, withAuth("DPoP", tok, signed(func(h, _ map[string]any) { h["crit"] = []string{"exp"} })), engine.CodeInvalidDPoPProof, proofChallenge},
		{"no jwk", url, withAuth("DPoP", tok, signed(func(h, _ map[string]any) { delete(h, "jwk") })), engine.CodeInvalidDPoPProof, proofChallenge},
		{"private d in jwk", url, withAuth("DPoP", tok, signed(func(h, _ map[string]any) {
			h["jwk"].(map[string]any)["d"] = b64.EncodeToString(d.key.D.FillBytes(make([]byte, 32)))
		})), engine.CodeInvalidDPoPProof, proofChallenge},
		{"jwk off the curve", url, withAuth("DPoP", tok, signed(func(h, _ map[string]any) {
			j := h["jwk"].(map[string]any)
			y, _ := b64.DecodeString(j["y"].(string))
			y[31] ^= 1
			j["y"] = b64.EncodeToString(y)
		})), engine.CodeInvalidDPoPProof, proofChallenge},
		{"jwk x of 31 bytes", url, withAuth("DPoP", tok, signed(func(h, _ map[string]any) {
			j := h["jwk"].(map[string]any)
			x, _ := b64.DecodeString(j["x"].(string))
			j["x"] = b64.EncodeToString(x[1:])
		})), engine.CodeInvalidDPoPProof, proofChallenge},
		{"jwk y of 33 bytes", url, withAuth("DPoP", tok, signed(func(h, _ map[string]any) {
			j := h["jwk"].(map[string]any)
			y, _ := b64.DecodeString(j["y"].(string))
			j["y"] = b64.EncodeToString(append([]byte{0}, y...))
		})), engine.CodeInvalidDPoPProof, proofChallenge},
		{"jwk kty RSA", url, withAuth("DPoP", tok, signed(func(h, _ map[string]any) { h["jwk"] = map[string]any{"kty": "RSA", "n": "AQAB", "e": "AQAB"} })), engine.CodeInvalidDPoPProof, proofChallenge},
		{"bad signature", url, withAuth("DPoP", tok, raw(func(map[string]any, map[string]any) {}, make([]byte, 64))), engine.CodeInvalidDPoPProof, proofChallenge},
		{"signature of 63 bytes", url, withAuth("DPoP", tok, raw(func(map[string]any, map[string]any) {}, make([]byte, 63))), engine.CodeInvalidDPoPProof, proofChallenge},
		{"signed by another key than its jwk", url, withAuth("DPoP", tok, func() string {
			hd, c := d.proofParts("POST", url, tok, now)
			return stranger.sign(hd, c)
		}()), engine.CodeInvalidDPoPProof, proofChallenge},
		{"valid proof with another key", url, withAuth("DPoP", tok, stranger.proof("POST", url, tok, now)), engine.CodeInvalidDPoPProof, proofChallenge},
		{"wrong htm", url, withAuth("DPoP", tok, d.proof("GET", url, tok, now)), engine.CodeInvalidDPoPProof, proofChallenge},
		{"htm in lower case", url, withAuth("DPoP", tok, d.proof("post", url, tok, now)), engine.CodeInvalidDPoPProof, proofChallenge},
		{"missing htm", url, withAuth("DPoP", tok, signed(func(_, c map[string]any) { delete(c, "htm") })), engine.CodeInvalidDPoPProof, proofChallenge},
		{"htu of another host", url, withAuth("DPoP", tok, d.proof("POST", strings.Replace(url, "127.0.0.1", "localhost", 1), tok, now)), engine.CodeInvalidDPoPProof, proofChallenge},
		{"htu of another port", url, withAuth("DPoP", tok, d.proof("POST", strings.Replace(url, h.srv.Listener.Addr().String(), "127.0.0.1:1", 1), tok, now)), engine.CodeInvalidDPoPProof, proofChallenge},
		{"htu of another path", url, withAuth("DPoP", tok, d.proof("POST", url+"/tts", tok, now)), engine.CodeInvalidDPoPProof, proofChallenge},
		{"htu with a trailing slash", url, withAuth("DPoP", tok, d.proof("POST", url+"/", tok, now)), engine.CodeInvalidDPoPProof, proofChallenge},
		{"htu of another scheme", url, withAuth("DPoP", tok, d.proof("POST", strings.Replace(url, "http://", "https://", 1), tok, now)), engine.CodeInvalidDPoPProof, proofChallenge},
		{"htu relative", url, withAuth("DPoP", tok, d.proof("POST", "/engine", tok, now)), engine.CodeInvalidDPoPProof, proofChallenge},
		{"htu with user info", url, withAuth("DPoP", tok, d.proof("POST", strings.Replace(url, "http://", "http://u:p@", 1), tok, now)), engine.CodeInvalidDPoPProof, proofChallenge},
		{"missing htu", url, withAuth("DPoP", tok, signed(func(_, c map[string]any) { delete(c, "htu") })), engine.CodeInvalidDPoPProof, proofChallenge},
		{"iat 61 s old", url, withAuth("DPoP", tok, d.proof("POST", url, tok, now.Add(-61*time.Second))), engine.CodeInvalidDPoPProof, proofChallenge},
		{"iat 6 s ahead", url, withAuth("DPoP", tok, d.proof("POST", url, tok, now.Add(6*time.Second))), engine.CodeInvalidDPoPProof, proofChallenge},
		{"iat a string", url, withAuth("DPoP", tok, signed(func(_, c map[string]any) { c["iat"] = fmt.Sprint(now.Unix()) })), engine.CodeInvalidDPoPProof, proofChallenge},
		{"missing iat", url, withAuth("DPoP", tok, signed(func(_, c map[string]any) { delete(c, "iat") })), engine.CodeInvalidDPoPProof, proofChallenge},
		{"missing jti", url, withAuth("DPoP", tok, signed(func(_, c map[string]any) { delete(c, "jti") })), engine.CodeInvalidDPoPProof, proofChallenge},
		{"empty jti", url, withAuth("DPoP", tok, signed(func(_, c map[string]any) { c["jti"] = "" })), engine.CodeInvalidDPoPProof, proofChallenge},
		{"jti a number", url, withAuth("DPoP", tok, signed(func(_, c map[string]any) { c["jti"] = 7 })), engine.CodeInvalidDPoPProof, proofChallenge},
		{"jti of 129 characters", url, withAuth("DPoP", tok, signed(func(_, c map[string]any) { c["jti"] = strings.Repeat("j", 129) })), engine.CodeInvalidDPoPProof, proofChallenge},
		{"missing ath", url, withAuth("DPoP", tok, signed(func(_, c map[string]any) { delete(c, "ath") })), engine.CodeInvalidDPoPProof, proofChallenge},
		{"ath of another token", url, withAuth("DPoP", tok, signed(func(_, c map[string]any) { c["ath"] = ath(unbound.SessionToken) })), engine.CodeInvalidDPoPProof, proofChallenge},
		{"ath in standard base64", url, withAuth("DPoP", tok, signed(func(_, c map[string]any) {
			sum := sha256.Sum256([]byte(tok))
			c["ath"] = base64.StdEncoding.EncodeToString(sum[:])
		})), engine.CodeInvalidDPoPProof, proofChallenge},
		{"replayed proof", url, withAuth("DPoP", tok, replayed), engine.CodeInvalidDPoPProof, proofChallenge},
		{"replayed proof, query added to the URL", url + "?x=1", withAuth("DPoP", tok, replayed), engine.CodeInvalidDPoPProof, proofChallenge},
		{"replayed jti, htu in upper case", url, withAuth("DPoP", tok, sameJTI(upperURL)), engine.CodeInvalidDPoPProof, proofChallenge},
		{"replayed jti, htu with a query", url, withAuth("DPoP", tok, sameJTI(url+"?a=b")), engine.CodeInvalidDPoPProof, proofChallenge},

		// The session token.
		{"bound token as Bearer", url, withAuth("Bearer", tok), engine.CodeInvalidSession, dpopToken},
		{"bound token as Bearer with a proof", url, withAuth("Bearer", tok, d.proof("POST", url, tok, now)), engine.CodeInvalidSession, dpopToken},
		{"unbound token as DPoP", url, withAuth("DPoP", unbound.SessionToken, d.proof("POST", url, unbound.SessionToken, now)), engine.CodeInvalidSession, bearerToken},
		{"token of another tenant", url, withAuth("Bearer", foreign.SessionToken), engine.CodeInvalidSession, bearerToken},
		{"tampered token", url, withAuth("DPoP", tampered, d.proof("POST", url, tampered, now)), engine.CodeInvalidSession, dpopToken},
		{"token of another signing key", url, withAuth("DPoP", forged, d.proof("POST", url, forged, now)), engine.CodeInvalidSession, dpopToken},
		{"unknown kid", url, withAuth("DPoP", unknownKid, d.proof("POST", url, unknownKid, now)), engine.CodeInvalidSession, dpopToken},
		{"session the store does not know", url, withAuth("DPoP", forgotten, d.proof("POST", url, forgotten, now)), engine.CodeInvalidSession, dpopToken},
		{"garbage token", url, withAuth("Bearer", "abc"), engine.CodeInvalidSession, bearerToken},
		{"token over 4 KiB", url, withAuth("Bearer", strings.Repeat("a", 5000)), engine.CodeInvalidSession, bearerToken},
		{"Basic scheme", url, withAuth("Basic", "dTpw"), engine.CodeInvalidSession, bearerToken},
		{"scheme without token", url, withAuth("Bearer", ""), engine.CodeInvalidSession, bearerToken},
		{"two Authorization headers", url, func() http.Header {
			hdr := withAuth("Bearer", unbound.SessionToken)
			hdr.Add("Authorization", "Bearer "+unbound.SessionToken)
			return hdr
		}(), engine.CodeInvalidSession, bearerToken},
		{"DPoP proof without a token", url, func() http.Header {
			hdr := headers()
			hdr.Set("DPoP", d.proof("POST", url, tok, now))
			return hdr
		}(), engine.CodeInvalidSession, dpopToken},
	}
	for _, tc := range cases {
		t.Run(tc.name, func(t *testing.T) {
			before := model.Calls()
			resp, p := h.turnStatus(t, tc.url, tc.hdr)
			if resp.StatusCode != 401 || p.Code != tc.code {
				t.Fatalf("got %d %s (%s), want 401 %s", resp.StatusCode, p.Code, p.Detail, tc.code)
			}
			if got := resp.Header.Get("WWW-Authenticate"); got != tc.challenge {
				t.Errorf("WWW-Authenticate %q, want %q", got, tc.challenge)
			}
			if p.Detail == "" || strings.Contains(p.Detail, tok) || strings.Contains(p.Detail, testToken) {
				t.Errorf("detail %q", p.Detail)
			}
			if model.Calls() != before {
				t.Error("the model ran for a refused request")
			}
		})
	}

	t.Run("expired token", func(t *testing.T) {
		clk.Add(25 * time.Hour)
		defer clk.Add(-25 * time.Hour)
		before := model.Calls()
		resp, p := h.turnStatus(t, url, withAuth("DPoP", tok, d.proof("POST", url, tok, clk.Now())))
		if resp.StatusCode != 401 || p.Code != engine.CodeInvalidSession || resp.Header.Get("WWW-Authenticate") != dpopToken {
			t.Fatalf("got %d %s %q", resp.StatusCode, p.Code, resp.Header.Get("WWW-Authenticate"))
		}
		resp, p = h.turnStatus(t, url, withAuth("Bearer", unbound.SessionToken))
		if resp.StatusCode != 401 || p.Code != engine.CodeInvalidSession || resp.Header.Get("WWW-Authenticate") != bearerToken {
			t.Fatalf("unbound: got %d %s %q", resp.StatusCode, p.Code, resp.Header.Get("WWW-Authenticate"))
		}
		if model.Calls() != before {
			t.Error("the model ran for an expired session")
		}
	})
	if n := len(tools.Calls()); n != 0 {
		t.Errorf("%d tool calls for refused requests", n)
	}
}

// TestProofNormalisation checks the URL variants that name the same resource and must pass,
// and those that do not, against a configured public URL.
func TestProofNormalisation(t *testing.T) {
	clk := newClock()
	model := &enginetest.ScriptedModel{Steps: [][]engine.ModelEvent{enginetest.Text("Hi.")}}
	h := newHarness(t, engine.Config{Model: model, Now: clk.Now, PublicURL: "https://api.example.com/assistant/"})
	d := newDevice(t)
	tok := h.boundSession(t, d).SessionToken
	cases := []struct {
		htu string
		ok  bool
	}{
		{"https://api.example.com/assistant/engine", true},
		{"HTTPS://API.Example.COM/assistant/engine", true},
		{"https://api.example.com:443/assistant/engine", true},
		{"https://api.example.com/assistant/engine?debug=1", true},
		{"https://api.example.com/assistant/engine#top", true},
		{"https://api.example.com/assistant/%65ngine", true},
		{"https://api.example.com/assistant/engine/", false},
		{"https://api.example.com/engine", false},
		{"https://api.example.com/Assistant/engine", false},
		{"http://api.example.com/assistant/engine", false},
		{"https://api.example.com:8443/assistant/engine", false},
		{"https://api.example.com:80/assistant/engine", false},
		{"https://example.com/assistant/engine", false},
		{h.srv.URL + "/engine", false},
	}
	for _, tc := range cases {
		t.Run(tc.htu, func(t *testing.T) {
			resp, p := h.turnStatus(t, h.srv.URL+"/engine", withAuth("DPoP", tok, d.proof("POST", tc.htu, tok, clk.Now())))
			if tc.ok && resp.StatusCode != 200 {
				t.Fatalf("refused: %d %s %s", resp.StatusCode, p.Code, p.Detail)
			}
			if !tc.ok && (resp.StatusCode != 401 || p.Code != engine.CodeInvalidDPoPProof) {
				t.Fatalf("got %d %s", resp.StatusCode, p.Code)
			}
		})
	}
}

// TestProofRecordedOnlyWhenAccepted checks that a proof refused for any reason leaves its jti
// usable, and that the iat window is configurable.
func TestProofRecordedOnlyWhenAccepted(t *testing.T) {
	clk := newClock()
	model := &enginetest.ScriptedModel{Steps: [][]engine.ModelEvent{enginetest.Text("Hi.")}}
	h := newHarness(t, engine.Config{Model: model, Now: clk.Now, DPoP: &engine.DPoPOptions{MaxAge: 5 * time.Minute, MaxFuture: time.Minute}})
	url := h.srv.URL + "/engine"
	d := newDevice(t)
	tok := h.boundSession(t, d).SessionToken
	hd, c := d.proofParts("GET", url, tok, clk.Now().Add(-4*time.Minute))
	if resp, p := h.turnStatus(t, url, withAuth("DPoP", tok, d.sign(hd, c))); p.Code != engine.CodeInvalidDPoPProof {
		t.Fatalf("wrong htm: %d %s", resp.StatusCode, p.Code)
	}
	c["htm"] = "POST"
	if resp, p := h.turnStatus(t, url, withAuth("DPoP", tok, d.sign(hd, c))); resp.StatusCode != 200 {
		t.Fatalf("the jti of a refused proof was burnt, or a 4-minute-old iat refused: %d %s %s", resp.StatusCode, p.Code, p.Detail)
	}
	if resp, p := h.turnStatus(t, url, withAuth("DPoP", tok, d.proof("POST", url, tok, clk.Now().Add(50*time.Second)))); resp.StatusCode != 200 {
		t.Fatalf("iat 50 s ahead refused with MaxFuture 1m: %d %s", resp.StatusCode, p.Code)
	}
	if resp, p := h.turnStatus(t, url, withAuth("DPoP", tok, d.sign(hd, c))); p.Code != engine.CodeInvalidDPoPProof {
		t.Fatalf("replay: %d %s", resp.StatusCode, p.Code)
	}
}

func TestProofNonces(t *testing.T) {
	clk := newClock()
	model := &enginetest.ScriptedModel{Steps: [][]engine.ModelEvent{enginetest.Text("Hi.")}}
	h := newHarness(t, engine.Config{Model: model, Now: clk.Now, DPoP: &engine.DPoPOptions{RequireNonce: true, NonceLifetime: time.Minute}})
	url := h.srv.URL + "/engine"
	d := newDevice(t)

	resp := h.do(t.Context(), http.MethodPost, engine.PathCreateSession, headers(), `{"public_key":`+d.jwkJSON()+`}`)
	var s sessionOut
	json.NewDecoder(resp.Body).Decode(&s)
	resp.Body.Close()
	nonce := resp.Header.Get("DPoP-Nonce")
	if resp.StatusCode != 201 || nonce == "" {
		t.Fatalf("create-session: %d, nonce %q", resp.StatusCode, nonce)
	}
	tok := s.SessionToken
	withNonce := func(n string) (map[string]any, map[string]any) {
		hd, c := d.proofParts("POST", url, tok, clk.Now())
		if n != "" {
			c["nonce"] = n
		}
		return hd, c
	}

	hd, c := withNonce("")
	resp, p := h.turnStatus(t, url, withAuth("DPoP", tok, d.sign(hd, c)))
	fresh := resp.Header.Get("DPoP-Nonce")
	if resp.StatusCode != 401 || p.Code != engine.CodeUseDPoPNonce || fresh == "" ||
		resp.Header.Get("WWW-Authenticate") != `DPoP error="use_dpop_nonce", algs="ES256"` {
		t.Fatalf("without nonce: %d %s %v", resp.StatusCode, p.Code, resp.Header)
	}
	c["nonce"] = fresh // the same jti, now with the nonce: it was not burnt
	if resp, p := h.turnStatus(t, url, withAuth("DPoP", tok, d.sign(hd, c))); resp.StatusCode != 200 {
		t.Fatalf("with the nonce: %d %s %s", resp.StatusCode, p.Code, p.Detail)
	}
	hd, c = withNonce(nonce)
	if resp, p := h.turnStatus(t, url, withAuth("DPoP", tok, d.sign(hd, c))); resp.StatusCode != 200 {
		t.Fatalf("with create-session's nonce: %d %s", resp.StatusCode, p.Code)
	}
	hd, c = withNonce(b64.EncodeToString(make([]byte, 24)))
	if _, p := h.turnStatus(t, url, withAuth("DPoP", tok, d.sign(hd, c))); p.Code != engine.CodeUseDPoPNonce {
		t.Fatalf("forged nonce: %s", p.Code)
	}
	clk.Add(2 * time.Minute)
	hd, c = withNonce(nonce)
	if _, p := h.turnStatus(t, url, withAuth("DPoP", tok, d.sign(hd, c))); p.Code != engine.CodeUseDPoPNonce {
		t.Fatalf("stale nonce: %s", p.Code)
	}
}

// TestSessionKeyRotation rotates from an Ed25519 key to an ES256 one: old tokens keep working
// where the old key is still listed, new tokens name the new key.
func TestSessionKeyRotation(t *testing.T) {
	model := &enginetest.ScriptedModel{Steps: [][]engine.ModelEvent{enginetest.Text("Hi.")}}
	store := &engine.MemoryStore{}
	oldKey := ed25519.NewKeyFromSeed(make([]byte, 32))
	newKey, _ := ecdsa.GenerateKey(elliptic.P256(), rand.Reader)
	before := newHarness(t, engine.Config{Model: model, Sessions: store, SessionKeys: []engine.SessionKey{{ID: "2026-a", Key: oldKey}}})
	during := newHarness(t, engine.Config{Model: model, Sessions: store, SessionKeys: []engine.SessionKey{
		{ID: "2026-b", Key: newKey}, {ID: "2026-a", Key: oldKey.Public()}, {ID: "legacy", Key: []byte(strings.Repeat("s", 32))}}})
	after := newHarness(t, engine.Config{Model: model, Sessions: store, SessionKeys: []engine.SessionKey{{ID: "2026-b", Key: newKey}}})

	old := before.createSession(t, headers(), ``).SessionToken
	if hd := tokenHeader(t, old); hd["kid"] != "2026-a" || hd["alg"] != "EdDSA" {
		t.Fatalf("old token header %v", hd)
	}
	fresh := during.createSession(t, headers(), ``).SessionToken
	if hd := tokenHeader(t, fresh); hd["kid"] != "2026-b" || hd["alg"] != "ES256" {
		t.Fatalf("new token header %v", hd)
	}
	for _, tc := range []struct {
		name  string
		h     *harness
		token string
		ok    bool
	}{
		{"old token, old key listed", during, old, true},
		{"new token", during, fresh, true},
		{"new token after rotation", after, fresh, true},
		{"old token after its key left", after, old, false},
		{"new token on the old engine", before, fresh, false},
	} {
		t.Run(tc.name, func(t *testing.T) {
			resp, p := tc.h.turnStatus(t, tc.h.srv.URL+"/engine", withAuth("Bearer", tc.token))
			if tc.ok != (resp.StatusCode == 200) || (!tc.ok && p.Code != engine.CodeInvalidSession) {
				t.Fatalf("got %d %s", resp.StatusCode, p.Code)
			}
		})
	}
}

func TestSessionConfig(t *testing.T) {
	store, _ := engine.NewStaticTenants(testTenant())
	ed := ed25519.NewKeyFromSeed(make([]byte, 32))
	p384, _ := ecdsa.GenerateKey(elliptic.P384(), rand.Reader)
	cases := []struct {
		name string
		edit func(*engine.Config)
	}{
		{"public key first", func(c *engine.Config) { c.SessionKeys = []engine.SessionKey{{ID: "a", Key: ed.Public()}} }},
		{"short secret", func(c *engine.Config) { c.SessionKeys = []engine.SessionKey{{ID: "a", Key: []byte("short")}} }},
		{"duplicate id", func(c *engine.Config) {
			c.SessionKeys = []engine.SessionKey{{ID: "a", Key: ed}, {ID: "a", Key: ed.Public()}}
		}},
		{"empty id", func(c *engine.Config) { c.SessionKeys = []engine.SessionKey{{Key: ed}} }},
		{"P-384", func(c *engine.Config) { c.SessionKeys = []engine.SessionKey{{ID: "a", Key: p384}} }},
		{"RSA-like value", func(c *engine.Config) { c.SessionKeys = []engine.SessionKey{{ID: "a", Key: "secret"}} }},
		{"relative public URL", func(c *engine.Config) { c.PublicURL = "/engine" }},
		{"public URL with query", func(c *engine.Config) { c.PublicURL = "https://a.example/?x=1" }},
		{"negative lifetime", func(c *engine.Config) { c.SessionLifetime = -time.Second }},
		{"negative proof age", func(c *engine.Config) { c.DPoP = &engine.DPoPOptions{MaxAge: -1} }},
	}
	for _, tc := range cases {
		t.Run(tc.name, func(t *testing.T) {
			cfg := engine.Config{Tenants: store, Model: &enginetest.ScriptedModel{}, SigningKey: testSigningKey}
			tc.edit(&cfg)
			if _, err := engine.New(cfg); err == nil {
				t.Fatal("New accepted the configuration")
			}
		})
	}
}

// TestSessionReachesTheTurn checks that a turn of a session binds its confirm widgets to it.
func TestSessionReachesTheTurn(t *testing.T) {
	model := &enginetest.ScriptedModel{Steps: [][]engine.ModelEvent{
		{engine.TextEvent("Please confirm."), call("c1", "transfer", `{"amount":20,"to":"Alex"}`), finish(engine.FinishToolCalls)},
	}}
	h := newHarness(t, engine.Config{Model: model, Toolset: bankTools()})
	d := newDevice(t)
	s := h.boundSession(t, d)
	hdr := withAuth("DPoP", s.SessionToken, d.proof("POST", h.srv.URL+"/engine", s.SessionToken, time.Now()))
	res := h.turnWith(hdr, `{"transcript":"send 20 to Alex"}`)
	if len(res.spec.Widgets) != 1 {
		t.Fatalf("widgets %+v", res.spec.Widgets)
	}
	var w struct {
		Execute struct{ Token string }
	}
	b, _ := json.Marshal(res.spec.Widgets[0])
	json.Unmarshal(b, &w)
	if c := tokenClaims(t, w.Execute.Token); c["sid"] != s.SessionID {
		t.Fatalf("action token claims %v, want sid %s", c, s.SessionID)
	}
	// The action token is not a session token.
	resp, p := h.turnStatus(t, h.srv.URL+"/engine", withAuth("Bearer", w.Execute.Token))
	if resp.StatusCode != 401 || p.Code != engine.CodeInvalidSession {
		t.Fatalf("action token as a session: %d %s", resp.StatusCode, p.Code)
	}
}

// TestSessionOnEveryRoute checks that the other routes verify sessions before anything else.
func TestSessionOnEveryRoute(t *testing.T) {
	h := newHarness(t, engine.Config{Model: &enginetest.ScriptedModel{}})
	d := newDevice(t)
	s := h.boundSession(t, d)
	for _, route := range []struct{ method, path string }{
		{http.MethodPost, engine.PathExecute}, {http.MethodPost, engine.PathTTS}, {http.MethodGet, engine.PathStream},
	} {
		t.Run(route.path, func(t *testing.T) {
			resp := h.do(t.Context(), route.method, route.path, withAuth("Bearer", s.SessionToken), `{}`)
			if p := readProblem(t, resp); resp.StatusCode != 401 || p.Code != engine.CodeInvalidSession {
				t.Fatalf("bound token as Bearer: %d %s", resp.StatusCode, p.Code)
			}
			proof := d.proof(route.method, h.srv.URL+route.path, s.SessionToken, time.Now())
			resp = h.do(t.Context(), route.method, route.path, withAuth("DPoP", s.SessionToken, proof), `{}`)
			// Past the session, each route reaches its own checks: an empty execute or tts
			// body is 400, a plain request to the socket 426.
			if p := readProblem(t, resp); resp.StatusCode == http.StatusUnauthorized || p.Code == engine.CodeInvalidSession || p.Code == engine.CodeInvalidDPoPProof {
				t.Fatalf("valid proof: %d %s %s", resp.StatusCode, p.Code, p.Detail)
			}
		})
	}
}

// brokenStore fails every call, as a store that lost its connection would.
type brokenStore struct{ put bool }

func (b brokenStore) PutSession(context.Context, *engine.Session) error {
	if b.put {
		return nil
	}
	return errors.New("connection refused")
}

func (brokenStore) Session(context.Context, string) (*engine.Session, error) {
	return nil, errors.New("connection refused")
}

func (brokenStore) Claim(context.Context, string, time.Time) (bool, error) {
	return false, errors.New("connection refused")
}

// TestStoreFailures checks that a failing session or replay store is a retryable 503, not an
// invalid session that would make clients create sessions in vain.
func TestStoreFailures(t *testing.T) {
	model := &enginetest.ScriptedModel{Steps: [][]engine.ModelEvent{enginetest.Text("Hi.")}}
	down := newHarness(t, engine.Config{Model: model, Sessions: brokenStore{}})
	resp := down.do(t.Context(), http.MethodPost, engine.PathCreateSession, headers(), ``)
	if p := readProblem(t, resp); resp.StatusCode != 503 || p.Code != engine.CodeStoreUnavailable || !p.Retryable {
		t.Fatalf("create-session: %d %+v", resp.StatusCode, p)
	}

	lookups := newHarness(t, engine.Config{Model: model, Sessions: brokenStore{put: true}})
	s := lookups.createSession(t, headers(), ``)
	if resp, p := lookups.turnStatus(t, lookups.srv.URL+"/engine", withAuth("Bearer", s.SessionToken)); resp.StatusCode != 503 || p.Code != engine.CodeStoreUnavailable {
		t.Fatalf("turn: %d %s", resp.StatusCode, p.Code)
	}

	replay := newHarness(t, engine.Config{Model: model, Replay: brokenStore{}})
	d := newDevice(t)
	b := replay.boundSession(t, d)
	url := replay.srv.URL + "/engine"
	if resp, p := replay.turnStatus(t, url, withAuth("DPoP", b.SessionToken, d.proof("POST", url, b.SessionToken, time.Now()))); resp.StatusCode != 503 || p.Code != engine.CodeStoreUnavailable {
		t.Fatalf("bound turn: %d %s", resp.StatusCode, p.Code)
	}
	if model.Calls() != 0 {
		t.Error("the model ran")
	}
}
