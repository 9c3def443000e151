package client

import (
	"crypto"
	"crypto/ecdsa"
	"crypto/elliptic"
	"crypto/rand"
	"crypto/sha256"
	"encoding/asn1"
	"encoding/base64"
	"encoding/json"
	"errors"
	"fmt"
	"math/big"
	"time"
)

var b64 = base64.RawURLEncoding

// deviceKey signs DPoP proofs (RFC 9449) with a P-256 key. The private key stays behind the
// crypto.Signer: this package never exports or serializes it.
type deviceKey struct {
	signer crypto.Signer
	// jwk is the public key as a JWK, in the member order of its RFC 7638 thumbprint.
	jwk json.RawMessage
	// header is the proof's encoded JOSE header, the same for every proof.
	header     string
	thumbprint string
}

// ErrKey is wrapped by the errors of an unusable device key.
var ErrKey = errors.New("client: the device key must be an ECDSA P-256 key")

// generateDeviceKey makes a new P-256 key held in memory only.
func generateDeviceKey() (*deviceKey, error) {
	k, err := ecdsa.GenerateKey(elliptic.P256(), rand.Reader)
	if err != nil {
		return nil, err
	}
	return newDeviceKey(k)
}

func newDeviceKey(s crypto.Signer) (*deviceKey, error) {
	pub, ok := s.Public().(*ecdsa.PublicKey)
	if !ok || pub.Curve != elliptic.P256() {
		return nil, ErrKey
	}
	raw, err := pub.Bytes() // 0x04 || x || y
	if err != nil || len(raw) != 65 {
		return nil, ErrKey
	}
	x, y := b64.EncodeToString(raw[1:33]), b64.EncodeToString(raw[33:])
	jwk := `{"crv":"P-256","kty":"EC","x":"` + x + `","y":"` + y + `"}`
	sum := sha256.Sum256([]byte(jwk))
	header := `{"typ":"dpop+jwt","alg":"ES256","jwk":` + jwk + `}`
	return &deviceKey{signer: s, jwk: json.RawMessage(jwk), header: b64.EncodeToString([]byte(header)),
		thumbprint: b64.EncodeToString(sum[:])}, nil
}

// proofClaims are the claims of a proof.
type proofClaims struct {
	JTI   string `json:"jti"`
	HTM   string `json:"htm"`
	HTU   string `json:"htu"`
	IAT   int64  `json:"iat"`
	ATH   string `json:"ath,omitempty"`
	Nonce string `json:"nonce,omitempty"`
}

// proof returns a DPoP proof for one request: its method and URL (without query), the hash of
// the session token it presents, the engine's nonce when it asked for one, and a fresh jti.
func (k *deviceKey) proof(method, htu, token, nonce string, now time.Time) (string, error) {
	var jti [16]byte
	rand.Read(jti[:])
	c := proofClaims{JTI: b64.EncodeToString(jti[:]), HTM: method, HTU: htu, IAT: now.Unix(), Nonce: nonce}
	if token != "" {
		sum := sha256.Sum256([]byte(token))
		c.ATH = b64.EncodeToString(sum[:])
	}
	payload, err := json.Marshal(c)
	if err != nil {
		return "", err
	}
	return k.sign(k.header, payload)
}

// actionProofHeader is the encoded header of every action proof.
var actionProofHeader = b64.EncodeToString([]byte(`{"typ":"action-proof+jwt","alg":"ES256"}`))

// actionProof returns the device's proof of one confirmed action: the hash of its action token,
// the device check as the execute request reports it, and the time, signed with the key (the
// gate key, behind the device's biometric gate).
func (k *deviceKey) actionProof(token, method string, verifiedAt json.RawMessage, now time.Time) (string, error) {
	sum := sha256.Sum256([]byte(token))
	payload, err := json.Marshal(struct {
		ATH        string          `json:"ath"`
		Method     string          `json:"method"`
		VerifiedAt json.RawMessage `json:"verifiedAt"`
		IAT        int64           `json:"iat"`
	}{b64.EncodeToString(sum[:]), method, verifiedAt, now.Unix()})
	if err != nil {
		return "", err
	}
	return k.sign(actionProofHeader, payload)
}

// sign returns the compact ES256 JWS of the encoded header and payload.
func (k *deviceKey) sign(header string, payload []byte) (string, error) {
	input := header + "." + b64.EncodeToString(payload)
	digest := sha256.Sum256([]byte(input))
	der, err := k.signer.Sign(rand.Reader, digest[:], crypto.SHA256)
	if err != nil {
		return "", err
	}
	var sig struct{ R, S *big.Int }
	if rest, err := asn1.Unmarshal(der, &sig); err != nil || len(rest) > 0 || sig.R == nil || sig.S == nil ||
		sig.R.BitLen() > 256 || sig.S.BitLen() > 256 {
		return "", fmt.Errorf("%w: its signer returned no ASN.1 ECDSA signature", ErrKey)
	}
	var raw [64]byte
	sig.R.FillBytes(raw[:32])
	sig.S.FillBytes(raw[32:])
	return input + "." + b64.EncodeToString(raw[:]), nil
}

// ActionProof signs with key (a gate key, behind the device's biometric gate) the device's
// proof of one confirmed action: the hash of its action token, the method and verifiedAt as
// the execute request carries them, and now. [Client.Execute] signs its own; this is for a
// host that executes actions another way (in process, a test runner).
func ActionProof(key crypto.Signer, token, method string, verifiedAt json.RawMessage, now time.Time) (string, error) {
	k, err := newDeviceKey(key)
	if err != nil {
		return "", err
	}
	return k.actionProof(token, method, verifiedAt, now)
}

// PublicJWK is the public key of key as an EC P-256 JWK: what an app sends to its bank to enrol
// its gate key as the device that approves its user's actions (the bank's own enrolment,
// which the engine never relays), and what the engine then forwards with each proof.
func PublicJWK(key crypto.Signer) (json.RawMessage, error) {
	k, err := newDeviceKey(key)
	if err != nil {
		return nil, err
	}
	return k.jwk, nil
}
