package pii

import (
	"unicode"
	"unicode/utf8"

	"golang.org/x/text/unicode/norm"

	"github.com/convengine/engine/internal/locale"
)

// reading is a text as a person reads it: what users paste from statements, PDFs and other
// apps holds characters that show nothing, or show a digit in another form. The detector's
// rules run on the reading, and a match's bytes are mapped back to the text, so that a mask
// covers the whole of what was written, the invisible characters inside it included.
type reading struct {
	text string
	// from[i] is the byte of the original text where the character that gave text[i]
	// starts; from[len(text)] is the original's length. Nil when text is the original.
	from []int32
}

// read returns the reading of text: format characters (Unicode Cf: zero-width spaces,
// direction marks, soft hyphens) are dropped, and so are combining marks right after a digit;
// characters whose compatibility form (NFKC) is ASCII are that form (full-width digits and
// letters, circled and superscript digits, no-break spaces); digits of every script are ASCII
// digits. A text of ASCII only is its own reading, at no cost.
func read(text string, r *reading) {
	*r = reading{text: text}
	i := 0
	for i < len(text) && text[i] < utf8.RuneSelf {
		i++
	}
	if i == len(text) {
		return
	}
	var b []byte
	from := r.from[:0]
	digit := false // the last character kept is a digit
	for j := 0; j < len(text); {
		c := text[j]
		if c < utf8.RuneSelf {
			if b != nil {
				b = append(b, c)
				from = append(from, int32(j))
			}
			digit = c >= '0' && c <= '9'
			j++
			continue
		}
		ru, size := utf8.DecodeRuneInString(text[j:])
		var repl string // what the rune reads as; "" to drop it
		keep := false
		switch {
		case ru == utf8.RuneError && size == 1:
			keep = true
		case unicode.Is(unicode.Cf, ru):
		case digit && unicode.In(ru, unicode.Mn, unicode.Me, unicode.Mc):
		default:
			if d := locale.DigitValue(ru); d >= 0 {
				repl = string(rune('0' + d))
			} else if dec := norm.NFKC.PropertiesString(text[j:]).Decomposition(); dec != nil && ascii(dec) {
				repl = string(dec)
			} else {
				keep = true
			}
		}
		if keep {
			if b != nil {
				b = append(b, text[j:j+size]...)
				for k := range size {
					from = append(from, int32(j+k))
				}
			}
			digit = false
			j += size
			continue
		}
		if b == nil { // the first change: copy what came before
			b = make([]byte, 0, len(text))
			b = append(b, text[:j]...)
			for k := range j {
				from = append(from, int32(k))
			}
		}
		for k := range len(repl) {
			b = append(b, repl[k])
			from = append(from, int32(j))
		}
		if repl != "" {
			last := repl[len(repl)-1]
			digit = last >= '0' && last <= '9'
		}
		j += size
	}
	if b == nil {
		return
	}
	r.text, r.from = string(b), append(from, int32(len(text)))
}

// ascii reports whether b holds ASCII only.
func ascii(b []byte) bool {
	for _, c := range b {
		if c >= utf8.RuneSelf {
			return false
		}
	}
	return true
}

// span returns the bytes of the original text that the reading's bytes [start, end) come
// from: from the character that gave start to the one that follows what gave end-1 (so that
// the characters dropped right after a match's last one, such as a combining mark on its last
// digit, are covered too).
func (r *reading) span(start, end int) (int, int) {
	if r.from == nil {
		return start, end
	}
	e := end
	for e < len(r.text) && r.from[e] == r.from[end-1] { // inside what one character gave
		e++
	}
	return int(r.from[start]), int(r.from[e])
}
