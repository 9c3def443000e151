package demobank

import (
	"crypto"
	"crypto/ecdsa"
	"crypto/elliptic"
	"crypto/rand"
	"crypto/rsa"
	"crypto/sha256"
	"crypto/subtle"
	"encoding/base64"
	"encoding/hex"
	"encoding/json"
	"errors"
	"fmt"
	"math/big"
	"net/http"
	"time"
)

// Bounds of device enrolment.
const (
	codeLifetime       = 10 * time.Minute
	maxCodeTries       = 5 // wrong codes before enrolment locks
	codeLockout        = 15 * time.Minute
	maxDevices         = 5 // enrolled devices per user
	maxCodesSent       = 5 // codes sent to a user per codeLifetime, so that nobody floods their phone
	maxKeyBytes        = 1024
	defaultMaxProofAge = 2 * time.Minute
)

// device is a key the bank enrolled for a user: the gate key of an app, or a passkey's public
// key. Transfers are proved by signatures that verify with it.
type device struct {
	key        crypto.PublicKey // *ecdsa.PublicKey on P-256, or an *rsa.PublicKey of a passkey
	thumbprint string
	counter    uint32 // a passkey's signature counter, last accepted
}

// oneTimeCode is an enrolment code sent to the user, bound to the key it enrols.
type oneTimeCode struct {
	code       string
	thumbprint string
	expires    time.Time
}

// UserLabel is how the bank names the user of token where a person reads it (the console's
// one-time codes): the first six hex digits of SHA-256 of the token, never the token.
func UserLabel(token string) string {
	k := keyOf(token)
	return "user " + hex.EncodeToString(k[:3])
}

// deviceRequest is the body of the device routes.
type deviceRequest struct {
	PublicKey json.RawMessage `json:"public_key"`
	Code      string          `json:"code"`
}

// handleDeviceCode serves POST /devices/code {"public_key": JWK}: the bank sends the user a
// one-time code that enrols that key, as its SMS would.
func (b *Bank) handleDeviceCode(w http.ResponseWriter, r *http.Request) {
	key, _, pub, ok := readDeviceRequest(w, r)
	if !ok {
		return
	}
	if b.opts.SendCode == nil {
		writeError(w, http.StatusNotImplemented, "codes_unavailable", "This bank cannot send enrolment codes.")
		return
	}
	code, err := sixDigits()
	if err != nil {
		writeError(w, http.StatusServiceUnavailable, "codes_unavailable", "The bank cannot make a code right now. Try again.")
		return
	}
	if no := b.takeCode(key, b.opts.ClientAddress(r), code, pub.thumbprint); no != nil {
		no.write(w)
		return
	}
	b.opts.SendCode(UserLabel(r.Header.Get("X-Token")), code)
	writeJSON(w, http.StatusAccepted, map[string]any{"sent": true, "user": UserLabel(r.Header.Get("X-Token")),
		"expires_in": int(codeLifetime.Seconds())})
}

// takeCode makes code the one sent to the user of key for the key of thumbprint, asked from
// the client address addr, or says why it may not be sent. The address's bound comes first, so
// that a refused token costs no room in the bank; then the bank's room, the user's lock and the
// user's bound.
func (b *Bank) takeCode(key userKey, addr, code, thumbprint string) *problem {
	b.mu.Lock()
	defer b.mu.Unlock()
	now := b.now()
	if wait := b.senders.wait(addr, now); wait > 0 {
		return &problem{http.StatusTooManyRequests, "too_many_codes_here",
			"Too many codes were asked from this network. Try again later.", wait}
	}
	u, wait := b.user(key, now)
	if u == nil {
		return bankFull(wait)
	}
	defer b.file(u, now)
	if u.locked(now) {
		return u.lockedRefusal(now)
	}
	for len(u.codesSent) > 0 && now.Sub(u.codesSent[0]) >= codeLifetime {
		u.codesSent = u.codesSent[1:]
	}
	if len(u.codesSent) >= maxCodesSent {
		return &problem{http.StatusTooManyRequests, "too_many_codes",
			"Too many codes were sent. Use the last one, or ask again in 10 minutes.", u.codesSent[0].Add(codeLifetime).Sub(now)}
	}
	u.codesSent = append(u.codesSent, now)
	u.code = &oneTimeCode{code: code, thumbprint: thumbprint, expires: now.Add(codeLifetime)}
	b.senders.record(addr, now)
	return nil
}

// handleEnrol serves POST /devices {"code", "public_key"}: with the code the bank sent for that
// key, it enrols the key for the user.
func (b *Bank) handleEnrol(w http.ResponseWriter, r *http.Request) {
	key, req, pub, ok := readDeviceRequest(w, r)
	if !ok {
		return
	}
	now := b.now()
	var no *problem
	ok = b.withUser(w, key, func(u *user) { no = u.enrol(now, req.Code, pub) })
	switch {
	case !ok:
	case no != nil:
		no.write(w)
	default:
		writeJSON(w, http.StatusCreated, map[string]any{"enrolled": true, "thumbprint": pub.thumbprint})
	}
}

// enrol checks code against the code sent for pub and enrols pub, or says why not. u's bank's
// lock is held.
func (u *user) enrol(now time.Time, code string, pub *device) *problem {
	if u.locked(now) {
		return u.lockedRefusal(now)
	}
	c := u.code
	switch {
	case c == nil:
		return &problem{status: http.StatusBadRequest, code: "no_code", message: "Ask for a one-time code first (POST /devices/code with this key)."}
	case !now.Before(c.expires):
		u.code = nil
		return &problem{status: http.StatusGone, code: "code_expired", message: "The code expired. Ask for a new one."}
	case subtle.ConstantTimeCompare([]byte(code), []byte(c.code)) != 1 || c.thumbprint != pub.thumbprint:
		// A code enrols only the key it was sent for: a right code with another key is wrong too.
		u.wrongCodes++
		u.lastWrong = now
		if u.wrongCodes >= maxCodeTries {
			u.code = nil
			return u.lockedRefusal(now)
		}
		return &problem{status: http.StatusForbidden, code: "wrong_code",
			message: fmt.Sprintf("The code is wrong, or was sent for another key. %d tries left.", maxCodeTries-u.wrongCodes)}
	}
	u.code, u.wrongCodes = nil, 0
	if u.devices == nil {
		u.devices = make(map[string]*device)
	}
	if _, ok := u.devices[pub.thumbprint]; !ok && len(u.devices) >= maxDevices {
		return &problem{status: http.StatusConflict, code: "too_many_devices",
			message: fmt.Sprintf("Your account already has %d devices. Remove one in the bank's app first.", maxDevices)}
	}
	u.devices[pub.thumbprint] = pub
	return nil
}

// locked reports whether too many wrong codes lock enrolment. Wrong codes are forgotten
// codeLockout after the last one, which ends a lock.
func (u *user) locked(now time.Time) bool {
	if u.wrongCodes > 0 && now.Sub(u.lastWrong) >= codeLockout {
		u.wrongCodes = 0
	}
	return u.wrongCodes >= maxCodeTries
}

func (u *user) lockedRefusal(now time.Time) *problem {
	return &problem{http.StatusTooManyRequests, "enrolment_locked",
		"Too many wrong codes. Enrolment is locked for 15 minutes; then ask for a new code.", u.lastWrong.Add(codeLockout).Sub(now)}
}

// handleDeviceCheck serves POST /devices/check {"public_key": JWK}, the engine's device check:
// {"enrolled": true} when the key is enrolled for the user. It enrols nothing and creates no
// user.
func (b *Bank) handleDeviceCheck(w http.ResponseWriter, r *http.Request) {
	key, _, pub, ok := readDeviceRequest(w, r)
	if !ok {
		return
	}
	b.mu.Lock()
	enrolled := false
	if u, ok := b.users[key]; ok {
		_, enrolled = u.devices[pub.thumbprint]
	}
	b.mu.Unlock()
	writeJSON(w, http.StatusOK, map[string]bool{"enrolled": enrolled})
}

// readDeviceRequest reads a device route's user, its body and its public key, or answers 401
// or 400.
func readDeviceRequest(w http.ResponseWriter, r *http.Request) (userKey, *deviceRequest, *device, bool) {
	key, ok := authorize(w, r)
	if !ok {
		return userKey{}, nil, nil, false
	}
	if !utf8Body(w, r) {
		return userKey{}, nil, nil, false
	}
	var req deviceRequest
	dec := json.NewDecoder(http.MaxBytesReader(w, r.Body, maxBodyBytes))
	if err := dec.Decode(&req); err != nil {
		writeInvalid(w, "the body must be a JSON object with public_key")
		return userKey{}, nil, nil, false
	}
	pub, err := parseJWK(req.PublicKey)
	if err != nil {
		writeInvalid(w, "public_key %v", err)
		return userKey{}, nil, nil, false
	}
	return key, &req, pub, true
}

var b64 = base64.RawURLEncoding

// parseJWK reads a public JWK, EC P-256 (a gate key, or an ES256 passkey's) or RSA of at least
// 2048 bits (an RS256 passkey's), and computes its RFC 7638 thumbprint.
func parseJWK(raw json.RawMessage) (*device, error) {
	if len(raw) == 0 || len(raw) > maxKeyBytes {
		return nil, errors.New("is required: the device's public key as an EC P-256 or RSA JWK")
	}
	var jwk struct {
		Kty, Crv, X, Y, N, E, D string
	}
	if err := json.Unmarshal(raw, &jwk); err != nil {
		return nil, errors.New("must be a JWK (a JSON object)")
	}
	if jwk.D != "" {
		return nil, errors.New("holds a private key: send the public key only")
	}
	if jwk.Kty == "RSA" {
		return parseRSA(jwk.N, jwk.E)
	}
	x, errX := b64.DecodeString(jwk.X)
	y, errY := b64.DecodeString(jwk.Y)
	switch {
	case jwk.Kty != "EC" || jwk.Crv != "P-256":
		return nil, errors.New(`must be an EC P-256 key (kty "EC", crv "P-256") or an RSA key`)
	case errX != nil || errY != nil || len(x) != 32 || len(y) != 32:
		return nil, errors.New("must have x and y of 32 bytes in base64url")
	}
	pub, err := ecdsa.ParseUncompressedPublicKey(elliptic.P256(), append(append([]byte{4}, x...), y...))
	if err != nil {
		return nil, errors.New("is not a point of the P-256 curve")
	}
	// RFC 7638: the required members, in lexicographic order, no white space.
	sum := sha256.Sum256(fmt.Appendf(nil, `{"crv":"P-256","kty":"EC","x":"%s","y":"%s"}`, b64.EncodeToString(x), b64.EncodeToString(y)))
	return &device{key: pub, thumbprint: b64.EncodeToString(sum[:])}, nil
}

// parseRSA reads the n and e of an RSA JWK: a modulus of at least 2048 bits, an odd exponent
// that fits an int, both without leading zero octets (RFC 7518 section 6.3.1).
func parseRSA(n64, e64 string) (*device, error) {
	nb, errN := b64.DecodeString(n64)
	eb, errE := b64.DecodeString(e64)
	if errN != nil || errE != nil || len(nb) == 0 || len(eb) == 0 || nb[0] == 0 || eb[0] == 0 {
		return nil, errors.New("must have n and e in base64url, without leading zeros")
	}
	n, e := new(big.Int).SetBytes(nb), new(big.Int).SetBytes(eb)
	switch {
	case n.BitLen() < 2048:
		return nil, fmt.Errorf("is an RSA key of %d bits: at least 2048 are needed", n.BitLen())
	case !e.IsInt64() || e.Int64() < 3 || e.Int64() > 1<<31-1 || e.Bit(0) == 0:
		return nil, errors.New("has an unusable RSA exponent")
	}
	sum := sha256.Sum256(fmt.Appendf(nil, `{"e":"%s","kty":"RSA","n":"%s"}`, e64, n64))
	return &device{key: &rsa.PublicKey{N: n, E: int(e.Int64())}, thumbprint: b64.EncodeToString(sum[:])}, nil
}

// sixDigits is a random one-time code.
func sixDigits() (string, error) {
	n, err := rand.Int(rand.Reader, big.NewInt(1_000_000))
	if err != nil {
		return "", err
	}
	return fmt.Sprintf("%06d", n.Int64()), nil
}
