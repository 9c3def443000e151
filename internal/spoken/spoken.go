// Package spoken prepares a model's text for the ear: it removes the markup a screen would draw,
// and cuts a stream of text into sentences as soon as each ends, so that each can be
// synthesized while the model is still writing.
package spoken

import (
	"strings"
	"unicode"
	"unicode/utf8"
)

// Plain removes markup from a delta of speech meant for the ear: emphasis marks, code
// ticks, headings, quotes and bullets at the start of a line, and line breaks. lineStart carries, from one delta to the next, whether the text is at the start
// of a line; it starts true.
func Plain(delta string, lineStart *bool) string {
	var b strings.Builder
	for _, r := range delta {
		switch {
		case r == '*' || r == '`' || r == '_' || r == '~':
			continue
		case r == '\n' || r == '\r':
			if !*lineStart {
				b.WriteByte(' ')
			}
			*lineStart = true
			continue
		case *lineStart && (r == '#' || r == '>' || r == '-' || r == '•' || r == ' '):
			continue
		}
		*lineStart = false
		b.WriteRune(r)
	}
	return b.String()
}

// maxSentence is the length, in characters, past which a sentence without an end is cut at
// its last comma, so that a long sentence does not hold back the audio.
const maxSentence = 240

// Cut returns the complete sentences at the start of text and what follows them. A
// sentence ends with . ! ? … ؟ and closing quotes or brackets, followed by white space, or with
// a full-width 。！？ followed by anything.
func Cut(text string) ([]string, string) {
	var out []string
	start := 0
	for i, r := range text {
		if !isSentenceEnd(r) {
			continue
		}
		j := i + utf8.RuneLen(r)
		for j < len(text) {
			c, size := utf8.DecodeRuneInString(text[j:])
			if !strings.ContainsRune(`"'”’)]»`, c) {
				break
			}
			j += size
		}
		if j >= len(text) {
			break // the text may go on: "3." of "3.5"
		}
		// Full-width marks end a sentence by themselves; the others before white space.
		if c, _ := utf8.DecodeRuneInString(text[j:]); !unicode.IsSpace(c) && !isFullWidthEnd(r) {
			continue
		}
		if sentence := strings.TrimSpace(text[start:j]); sentence != "" && j > start {
			out = append(out, sentence)
		}
		start = j
	}
	rest := text[start:]
	if utf8.RuneCountInString(rest) > maxSentence {
		if k := strings.LastIndex(rest, ", "); k > 0 {
			out = append(out, strings.TrimSpace(rest[:k+1]))
			rest = rest[k+1:]
		}
	}
	return out, rest
}

func isFullWidthEnd(r rune) bool { return r == '。' || r == '！' || r == '？' }

func isSentenceEnd(r rune) bool {
	switch r {
	case '.', '!', '?', '…', '。', '！', '？', '؟':
		return true
	}
	return false
}
