package handoff

import (
	"crypto/hmac"
	"crypto/sha256"
	"encoding/hex"
	"errors"
	"strconv"
	"strings"
	"time"
)

// SignatureHeader carries the signature of a webhook's body, both ways:
// "t=<unix seconds>,v1=<hex HMAC-SHA256 of "<t>.<body>">" (Stripe's scheme). A receiver may
// find several v1 values while a secret is rotated.
const SignatureHeader = "Engine-Signature"

// Tolerance is how far a signature's time may be from the receiver's clock.
const Tolerance = 5 * time.Minute

// Errors of [Verify].
var (
	ErrBadSignature   = errors.New("handoff: the signature does not match")
	ErrStaleSignature = errors.New("handoff: the signature is more than five minutes off")
)

// Sign returns the Engine-Signature header of body, signed with secret at t.
func Sign(secret string, t time.Time, body []byte) string {
	ts := strconv.FormatInt(t.Unix(), 10)
	return "t=" + ts + ",v1=" + hex.EncodeToString(mac(secret, ts, body))
}

func mac(secret, ts string, body []byte) []byte {
	m := hmac.New(sha256.New, []byte(secret))
	m.Write([]byte(ts))
	m.Write([]byte{'.'})
	m.Write(body)
	return m.Sum(nil)
}

// Verify checks header, an Engine-Signature, against body and secret at now: the time
// within Tolerance and one v1 matching, compared in constant time. It returns the matching
// signature, which a receiver remembers for Tolerance to refuse a replay.
func Verify(secret, header string, body []byte, now time.Time) (string, error) {
	var ts string
	var sigs []string
	for part := range strings.SplitSeq(header, ",") {
		k, v, _ := strings.Cut(strings.TrimSpace(part), "=")
		switch k {
		case "t":
			ts = v
		case "v1":
			sigs = append(sigs, v)
		}
	}
	sec, err := strconv.ParseInt(ts, 10, 64)
	if err != nil || len(sigs) == 0 || len(sigs) > 8 {
		return "", ErrBadSignature
	}
	if d := now.Sub(time.Unix(sec, 0)); d > Tolerance || d < -Tolerance {
		return "", ErrStaleSignature
	}
	want := mac(secret, ts, body)
	for _, s := range sigs {
		got, err := hex.DecodeString(s)
		if err == nil && hmac.Equal(got, want) {
			// Canonical: the same signature in upper-case hex is the same signature, and a
			// replay of it is refused.
			return ts + "." + hex.EncodeToString(got), nil
		}
	}
	return "", ErrBadSignature
}
