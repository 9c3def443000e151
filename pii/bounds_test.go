package pii

import (
	"strings"
	"testing"
	"time"
)

// hostile are texts that make a careless scanner quadratic: long runs of digits, of spoken
// digits, of separators, of candidate starts.
var hostile = map[string]string{
	"digits":          "1",
	"grouped digits":  "4111 ",
	"single digits":   "1 ",
	"dashed":          "1-",
	"spoken":          "one ",
	"spoken card":     "four one one one one one one one one one one one one one one one, ",
	"double":          "double ",
	"spelled letters": "E S ",
	"country codes":   "ES91",
	"iban groups":     "ES91 2100 ",
	"plus":            "+1 ",
	"parentheses":     "(1",
	"at signs":        "a@",
	"addresses":       "a.b@c.de",
	"dots":            "a.",
	"fillers":         "one uh ",
	"accents":         "zéro ",
	"arabic digits":   "٤١١١ ",
	"arabic spoken":   "واحد، ",
	"tatweel":         "واـحد ",
	"tens":            "forty-one ",
	"french tens":     "quatre-vingt-dix-sept ",
	"tens and joiner": "soixante et ",
	"arabic tens":     "واحد وأربعون ",
	"german tens":     "einundvierzig ",
}

// TestLinear counts the steps Find takes on 256 KiB of each hostile text, and on four times
// less: the work per byte is bounded and does not grow with the length.
func TestLinear(t *testing.T) {
	const n = 1 << 18
	d, err := New(&Options{MaxInput: 4 * n, Patterns: []Pattern{{Kind: Account, Name: "acct", Regexp: `\d{9}`}}})
	if err != nil {
		t.Fatal(err)
	}
	for name, unit := range hostile {
		t.Run(name, func(t *testing.T) {
			small := strings.Repeat(unit, n/4/len(unit))
			large := strings.Repeat(unit, n/len(unit))
			_, s1 := d.find(small)
			_, s2 := d.find(large)
			perByte := float64(s2) / float64(len(large))
			growth := (float64(s2) / float64(len(large))) / (float64(s1) / float64(len(small)))
			t.Logf("%d steps for %d bytes (%.1f a byte), %.2f times the rate at a quarter of the length", s2, len(large), perByte, growth)
			if perByte > 64 {
				t.Errorf("%.1f steps a byte, want at most 64", perByte)
			}
			if growth > 1.2 {
				t.Errorf("steps a byte grow %.2f times from %d to %d bytes: not linear", growth, len(small), len(large))
			}
		})
	}
}

// TestMillionDigits is a behaviour check, not a measure: a million digits are read, through
// the default bound and past it, in far less than the generous limit.
func TestMillionDigits(t *testing.T) {
	text := strings.Repeat("4111", 250_000)
	for _, max := range []int{0, 2 << 20} {
		d, err := New(&Options{MaxInput: max})
		if err != nil {
			t.Fatal(err)
		}
		start := time.Now()
		ms, steps := d.find(text)
		if len(ms) != 0 {
			t.Errorf("MaxInput %d: %d matches in a run of a million digits", max, len(ms))
		}
		if read := min(len(text), d.MaxInput()); steps > 8*read {
			t.Errorf("MaxInput %d: %d steps for %d bytes read", max, steps, read)
		}
		if el := time.Since(start); el > 10*time.Second {
			t.Errorf("MaxInput %d: a million digits took %v", max, el)
		}
	}
}
