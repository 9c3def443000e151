package verbalize

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

// CutSentences returns the complete sentences at the start of text and what follows them. A
// sentence ends with . ! ? … ؟ and closing quotes or brackets, followed by white space, or with
// a full-width 。！？ followed by anything.
func CutSentences(text string) ([]string, string) {
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

// maxHeldNumber bounds the number held back at the end of a delta: an IBAN of 34 characters in
// full-width forms with a separator between its groups is shorter.
const maxHeldNumber = 256

// maxHeldBracket bounds the text held back after an unclosed "[": a placeholder such as
// "[ACCOUNT_12]" is shorter, and a stray bracket then holds nothing back for long.
const maxHeldBracket = 32

// Hold splits a stream's text into what can be shown now and what is held back until the next
// delta: an unclosed "[" near the end (a placeholder cut in two), or a run at the end of digits
// (of any script, circled and superscript ones too), capital letters (an IBAN's country code and
// bank code) and the separators a pasted number holds, when it holds a digit (a number cut in
// two), so that whatever masks the text sees placeholders and numbers whole. final releases everything, at the end of the stream.
func Hold(text string, final bool) (ready, held string) {
	if final {
		return text, ""
	}
	cut := len(text)
	if i := strings.LastIndexByte(text, '['); i >= 0 && len(text)-i <= maxHeldBracket && !strings.ContainsRune(text[i:], ']') {
		cut = i
	}
	digit, capitals := false, 0
	i := len(text)
	for i > 0 && len(text)-i < maxHeldNumber {
		r, n := utf8.DecodeLastRuneInString(text[:i])
		isDigit := unicode.IsDigit(r) || unicode.Is(unicode.No, r)
		isUpper := unicode.IsUpper(r)
		if !isDigit && !numberSeparator(r) && !isUpper {
			break
		}
		digit = digit || isDigit
		if isUpper {
			capitals++
		}
		i -= n
	}
	// Two capitals alone may be an IBAN's country code, its digits in the next delta.
	if (digit || capitals > 0 && capitals <= 2) && i < cut {
		cut = i
	}
	return text[:cut], text[cut:]
}

// numberSeparator reports whether r may stand between the digit groups of a number as people
// paste them, as package pii reads them: blanks, dashes, the punctuation of groups (. , / _ '
// and parentheses), and the invisible characters (format characters, combining marks) that a
// copy from a PDF or another app leaves between digits.
func numberSeparator(r rune) bool {
	return unicode.IsSpace(r) || unicode.Is(unicode.Pd, r) || strings.ContainsRune(".,/_'()", r) ||
		unicode.In(r, unicode.Cf, unicode.Mn, unicode.Me)
}

// NumberRuns returns the runs of s that hold digits, with the separators inside them
// ("$1,234.50" gives "1,234.50"): what a listener must hear of a text that shows them.
func NumberRuns(s string) []string {
	var out []string
	for f := range strings.FieldsFuncSeq(s, func(r rune) bool { return !unicode.IsDigit(r) && r != ',' && r != '.' }) {
		f = strings.Trim(f, ",.")
		if strings.ContainsFunc(f, unicode.IsDigit) {
			out = append(out, f)
		}
	}
	return out
}

// JoinStep returns delta, the first delta of a later step of an answer, with a space before it
// when neither what was said before ends with one nor delta starts with one: the steps' texts
// are written without regard to each other.
func JoinStep(said, delta string) string {
	if said == "" || delta == "" {
		return delta
	}
	isSpace := func(r rune) bool { return r == ' ' || r == '\n' || r == '\t' }
	if prev, _ := utf8.DecodeLastRuneInString(said); !isSpace(prev) && !isSpace(rune(delta[0])) {
		return " " + delta
	}
	return delta
}

// ApologyAfter is the delta that ends a failed answer, said so far, with the apology: after a
// cut-off sentence, an ellipsis marks the cut.
func ApologyAfter(said, apology string) string {
	trimmed := strings.TrimRightFunc(said, unicode.IsSpace)
	if trimmed == "" {
		return apology
	}
	sep := ""
	if last, _ := utf8.DecodeLastRuneInString(trimmed); !strings.ContainsRune(".!?…。！？؟", last) {
		sep = "…"
	}
	if len(trimmed) == len(said) || sep != "" {
		sep += " "
	}
	return sep + apology
}
