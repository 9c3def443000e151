package demobank

import (
	"crypto/subtle"
	"encoding/json"
	"net/http"
	"strconv"
	"time"
)

// Phone is a caller the bank knows on its phone line: the number they call from, the PIN they
// type, and the user token (their X-Token) the bank answers for them.
type Phone struct {
	Number, PIN, Token string
}

// Bounds of phone verification.
const (
	maxPINTries = 5 // wrong PINs from one number before it is locked
	pinLockout  = 15 * time.Minute
)

// pinTries counts the wrong PINs of a calling number.
type pinTries struct {
	wrong int
	last  time.Time
}

// handlePhoneVerify serves POST /phone/verify {"caller","digits"}: the caller verification of
// the engine's phone line (docs/telephony.md). The digits must be the PIN of the caller's
// number: 200 {"token"} names the user; 401 otherwise; 429 once a number typed maxPINTries
// wrong PINs, for pinLockout. A number the bank does not know is refused as a wrong PIN is, so
// that the answer says nothing of which numbers it knows.
func (b *Bank) handlePhoneVerify(w http.ResponseWriter, r *http.Request) {
	if !utf8Body(w, r) {
		return
	}
	var req struct {
		Caller string `json:"caller"`
		Digits string `json:"digits"`
	}
	if err := json.NewDecoder(http.MaxBytesReader(w, r.Body, 4<<10)).Decode(&req); err != nil || req.Caller == "" || len(req.Digits) > 32 {
		writeInvalid(w, "the body must be a JSON object with caller and digits")
		return
	}
	now := b.now()
	b.mu.Lock()
	defer b.mu.Unlock()
	if b.pins == nil {
		b.pins = map[string]*pinTries{}
	}
	tries := b.pins[req.Caller]
	if tries != nil && tries.wrong >= maxPINTries && now.Sub(tries.last) < pinLockout {
		w.Header().Set("Retry-After", strconv.Itoa(int((pinLockout-now.Sub(tries.last)).Seconds())+1))
		writeError(w, http.StatusTooManyRequests, "locked", "too many wrong PINs from this number; try again later")
		return
	}
	for _, p := range b.opts.Phones {
		// Compared in constant time, whatever the number.
		if subtle.ConstantTimeCompare([]byte(p.Number), []byte(req.Caller))&subtle.ConstantTimeCompare([]byte(p.PIN), []byte(req.Digits)) == 1 {
			delete(b.pins, req.Caller)
			writeJSON(w, http.StatusOK, map[string]string{"token": p.Token})
			return
		}
	}
	if tries == nil || now.Sub(tries.last) >= pinLockout {
		if len(b.pins) >= b.maxUsers { // a bound on the numbers remembered
			clear(b.pins)
		}
		tries = &pinTries{}
		b.pins[req.Caller] = tries
	}
	tries.wrong++
	tries.last = now
	writeError(w, http.StatusUnauthorized, "not_verified", "the number and PIN do not match")
}
