package engine

import (
	"encoding/json"
	"testing"
	"unicode/utf8"
)

func FuzzAppendJSONString(f *testing.F) {
	for _, s := range []string{"", "plain", `quote " and \ back`, "line\nbreak\ttab\r", "\x00\x1f\x7f", "مرحبا", "bad \xff utf8", "\u2028\u2029", "<tag>&"} {
		f.Add(s)
	}
	f.Fuzz(func(t *testing.T, s string) {
		b := appendJSONString(nil, s)
		var back string
		if err := json.Unmarshal(b, &back); err != nil {
			t.Fatalf("%q encodes to invalid JSON %s: %v", s, b, err)
		}
		want := s
		if !utf8.ValidString(s) {
			want = string([]rune(s)) // invalid bytes become U+FFFD, as encoding/json writes them
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
