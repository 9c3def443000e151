package record

import (
	"bytes"
	"math/rand/v2"
	"testing"
)

// TestCanonicalHeaderIsRFC8785: the header written directly is byte for byte what the general
// RFC 8785 transform makes of it, for strings with quotes, backslashes, every control
// character, non-ASCII letters, U+2028 and emoji.
func TestCanonicalHeaderIsRFC8785(t *testing.T) {
	pieces := []string{"", "a", `"`, `\`, "é", "\u2028", "😀", "<&>", "/", "\x7f", "日本"}
	for c := range 0x20 {
		pieces = append(pieces, string(rune(c)))
	}
	rng := rand.New(rand.NewPCG(1, 2))
	str := func() string {
		var b []byte
		for range rng.IntN(6) {
			b = append(b, pieces[rng.IntN(len(pieces))]...)
		}
		return string(b)
	}
	for i := range 2000 {
		h := Header{V: 1, ID: str(), Chain: str(), Seq: rng.Int64N(1 << 40), Kind: Kind(str()), At: str(), Tenant: str(),
			Environment: str(), User: str(), Session: str(), Conversation: str(), Turn: str(), Request: str(),
			Prev: str(), Personal: str(), Evidence: str()}
		if got, want := h.canonical(), h.canonicalSlow(); !bytes.Equal(got, want) {
			t.Fatalf("header %d:\n got %q\nwant %q", i, got, want)
		}
	}
	// Not valid UTF-8: the general path, as encoding/json reads it.
	h := Header{V: 1, User: "\xff\xfe"}
	if !bytes.Equal(h.canonical(), h.canonicalSlow()) {
		t.Error("a header with invalid UTF-8 is not canonicalised as the general path does")
	}
}
