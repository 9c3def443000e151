package record

import (
	"crypto/sha256"
	"encoding/hex"
)

// ChainID is the id of a conversation's chain: the lowercase hex of
// SHA-256(tenant "\x00" environment "\x00" user "\x00" conversation).
func ChainID(tenant, environment, user, conversation string) string {
	h := sha256.New()
	for i, s := range []string{tenant, environment, user, conversation} {
		if i > 0 {
			h.Write([]byte{0})
		}
		h.Write([]byte(s))
	}
	return hex.EncodeToString(h.Sum(nil))
}
