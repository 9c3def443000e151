package twilio

import (
	"crypto/hmac"
	"crypto/rand"
	"crypto/sha256"
	"encoding/base64"
	"encoding/json"
	"errors"
	"strings"
	"time"
)

// callToken is what the webhook's single-use stream token stands for: the call it was made for,
// until it expires. The stream's start message carries it back as a custom parameter.
type callToken struct {
	Tenant  string `json:"t"`
	CallSid string `json:"c"`
	From    string `json:"f"`
	To      string `json:"o"`
	Expires int64  `json:"e"` // unix seconds
	Nonce   string `json:"n"`
}

// tokenLifetime is how long Twilio has to open the stream after the webhook answered.
const tokenLifetime = 60 * time.Second

var errBadToken = errors.New("twilio: the stream token is not one of this engine's")

// sealToken signs t with key: base64url(JSON) "." base64url(HMAC-SHA256).
func sealToken(key []byte, t *callToken) string {
	nonce := make([]byte, 16)
	rand.Read(nonce)
	t.Nonce = base64.RawURLEncoding.EncodeToString(nonce)
	payload, _ := json.Marshal(t)
	p := base64.RawURLEncoding.EncodeToString(payload)
	return p + "." + base64.RawURLEncoding.EncodeToString(tokenMAC(key, p))
}

func tokenMAC(key []byte, payload string) []byte {
	m := hmac.New(sha256.New, key)
	m.Write([]byte("twilio call token\x00"))
	m.Write([]byte(payload))
	return m.Sum(nil)
}

// openToken checks s's signature and returns what it stands for; expiry is the caller's to check.
func openToken(key []byte, s string) (*callToken, error) {
	p, sig, ok := strings.Cut(s, ".")
	if !ok || len(s) > 2048 {
		return nil, errBadToken
	}
	mac, err := base64.RawURLEncoding.DecodeString(sig)
	if err != nil || !hmac.Equal(mac, tokenMAC(key, p)) {
		return nil, errBadToken
	}
	payload, err := base64.RawURLEncoding.DecodeString(p)
	if err != nil {
		return nil, errBadToken
	}
	var t callToken
	if json.Unmarshal(payload, &t) != nil || t.Nonce == "" {
		return nil, errBadToken
	}
	return &t, nil
}
