package jsonenc

import (
	"encoding/json"
	"testing"
	"unicode/utf8"
)

// FuzzAppendString checks that any string, valid UTF-8 or not, encodes to one line of JSON
// that decodes back to it (invalid bytes as U+FFFD, as encoding/json writes them).
func FuzzAppendString(f *testing.F) {
	for _, s := range []string{"", "plain", `quote " and \ back`, "line\nbreak\ttab\r", "\x00\x1f\x7f", "مرحبا", "bad \xff utf8", "\u2028\u2029", "<tag>&"} {
		f.Add(s)
	}
	f.Fuzz(func(t *testing.T, s string) {
		b := AppendString(nil, s)
		var back string
		if err := json.Unmarshal(b, &back); err != nil {
			t.Fatalf("%q encodes to invalid JSON %s: %v", s, b, err)
		}
		want := s
		if !utf8.ValidString(s) {
			want = string([]rune(s))
		}
		if back != want {
			t.Fatalf("%q round-trips to %q", s, back)
		}
		for _, c := range b {
			if c == '\n' || c == '\r' {
				t.Fatalf("%q encodes to a line break", s)
			}
		}
	})
}
