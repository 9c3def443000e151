package token

import (
	"crypto/sha256"
	"encoding/hex"

	"github.com/convengine/engine/widgets"
)

// Hash is the hex SHA-256 of an action token, which names it where the token may not go: the
// conversation record, which must never hold a token, whose sealed arguments are real values.
func Hash(tok string) string {
	sum := sha256.Sum256([]byte(tok))
	return hex.EncodeToString(sum[:])
}

// HashConfirms returns ws with each confirm widget's action token replaced by "sha256:" and its
// [Hash], which joins the confirm to its execute's evidence. ws is not modified.
func HashConfirms(ws []widgets.Widget) []widgets.Widget {
	out := make([]widgets.Widget, len(ws))
	for i, w := range ws {
		if c, ok := w.(widgets.Confirm); ok {
			c.Execute.Token = "sha256:" + Hash(c.Execute.Token)
			w = c
		}
		out[i] = w
	}
	return out
}
