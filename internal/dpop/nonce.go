package dpop

import (
	"crypto/hmac"
	"crypto/sha256"
	"encoding/binary"
	"time"
)

// NewNonces returns nonces keyed with key, issued per period and accepted in that period and the
// next.
func NewNonces(key []byte, period time.Duration) *Nonces { return &Nonces{key: key, period: period} }

// Nonces issues and checks stateless DPoP nonces (RFC 9449 section 9): the number of the period
// they were issued in and an HMAC of it, so that every replica that shares the key accepts the
// nonces of the others.
type Nonces struct {
	key    []byte
	period time.Duration
}

func (n *Nonces) slot(now time.Time) uint64 { return uint64(now.UnixNano() / int64(n.period)) }

func (n *Nonces) mac(slot uint64) []byte {
	var buf [8]byte
	binary.BigEndian.PutUint64(buf[:], slot)
	m := hmac.New(sha256.New, n.key)
	m.Write(buf[:])
	return append(buf[:], m.Sum(nil)[:16]...)
}

// Issue returns the nonce of now's period.
func (n *Nonces) Issue(now time.Time) string { return b64.EncodeToString(n.mac(n.slot(now))) }

// Valid reports whether s was issued in now's period or the one before.
func (n *Nonces) Valid(s string, now time.Time) bool {
	raw, err := b64.DecodeString(s)
	if err != nil || len(raw) != 24 {
		return false
	}
	slot, cur := binary.BigEndian.Uint64(raw[:8]), n.slot(now)
	if slot != cur && slot+1 != cur {
		return false
	}
	return hmac.Equal(raw, n.mac(slot))
}
