package verbalize

import (
	"strings"
	"unicode"
	"unicode/utf8"

	"github.com/convengine/engine/internal/locale"
)

// scanner writes src in words, token by token. A token starts only at the start of a word:
// digits inside a word ("mp3", "A4") are left to the synthesizer.
type scanner struct {
	src   string
	l     *language // nil for a language not known: only emoji are dropped
	b     strings.Builder
	prev  rune // the last rune of src read, -1 at the start
	emoji bool // the last rune dropped was an emoji, which a joiner may continue
}

func (sc *scanner) run() {
	s := sc.src
	sc.b.Grow(len(s) + len(s)/4)
	for i := 0; i < len(s); {
		r, size := utf8.DecodeRuneInString(s[i:])
		if isEmoji(r) || (sc.emoji && r == '\u200d') {
			sc.emoji = true
			i += size
			continue
		}
		if sc.emoji && r == ' ' && (sc.b.Len() == 0 || strings.HasSuffix(sc.b.String(), " ")) {
			i += size // the space the emoji stood between
			continue
		}
		sc.emoji = false
		if sc.l != nil {
			if end, ok := sc.token(i, r); ok && end > i {
				sc.prev, _ = utf8.DecodeLastRuneInString(s[:end])
				i = end
				continue
			}
		}
		if r == utf8.RuneError && size == 1 {
			sc.b.WriteRune(utf8.RuneError) // an invalid byte: the output stays UTF-8
		} else {
			sc.b.WriteString(s[i : i+size])
		}
		sc.prev = r
		i += size
	}
}

// isWordRune reports whether r is part of a word, so that a token cannot start after it.
func isWordRune(r rune) bool {
	return r == '_' || unicode.IsLetter(r) || unicode.IsDigit(r) || unicode.IsMark(r) || locale.DigitValue(r) >= 0
}

// token writes the token that starts at i, if one does, and returns where it ends.
func (sc *scanner) token(i int, r rune) (int, bool) {
	s := sc.src
	switch r {
	case '&':
		return sc.spaced(i+1, sc.l.ampersand), true
	case '@':
		return sc.spaced(i+1, sc.l.at), true
	case mask:
		return sc.masked(i), true
	}
	if isWordRune(sc.prev) {
		if unicode.IsLetter(r) || locale.DigitValue(r) >= 0 {
			return sc.copyWord(i), true // the rest of a word: "mp3"
		}
		return 0, false
	}
	switch {
	case locale.DigitValue(r) >= 0:
		return sc.number(i, i, numeral{})
	case r == '-' || r == '−' || r == '+':
		return sc.signed(i)
	case r == '#':
		if nextIsNumber(s, i+1) && skipSpaces(s, i+1) == i+1 {
			sc.b.WriteString(sc.l.number + " ")
			return i + 1, true
		}
	case r == '(':
		return sc.phoneInParentheses(i)
	case unicode.IsLetter(r):
		if end, ok := sc.moneyBefore(i, numeral{}); ok {
			return end, true
		}
		if end, ok := sc.monthFirst(i); ok {
			return end, true
		}
		if end, ok := sc.abbreviation(i); ok {
			return end, true
		}
		return sc.copyWord(i), true
	default:
		return sc.moneyBefore(i, numeral{})
	}
	return 0, false
}

// mask is the character that hides a digit or a letter of a value shown masked ("•••• 1111",
// "GB•• •••• … 5432").
const mask = '•'

// masked reads a masked value at i: the mask is not said, the digits it leaves are, one by
// one, as a card's last four are ("one one one one", not "one thousand one hundred eleven").
func (sc *scanner) masked(i int) int {
	s := sc.src
	j := i
	for j < len(s) {
		r, size := utf8.DecodeRuneInString(s[j:])
		if r != mask && r != '…' && !(r == ' ' && j+1 < len(s) && (strings.HasPrefix(s[j+1:], "•") || strings.HasPrefix(s[j+1:], "…") || locale.DigitValue(rune(s[j+1])) >= 0)) {
			break
		}
		j += size
	}
	left, k := digitRun(s, j)
	if r, _ := utf8.DecodeRuneInString(s[k:]); k < len(s) && isWordRune(r) {
		return j // "•••• 1111abc": the digits are left to be read as they are
	}
	if left != "" {
		if sc.b.Len() > 0 && !strings.HasSuffix(sc.b.String(), " ") {
			sc.b.WriteByte(' ')
		}
		sc.b.WriteString(sc.l.digits(left))
	}
	return k
}

// copyWord writes the word at i as it is.
func (sc *scanner) copyWord(i int) int {
	j := i
	for j < len(sc.src) {
		r, size := utf8.DecodeRuneInString(sc.src[j:])
		if !isWordRune(r) {
			break
		}
		j += size
	}
	sc.b.WriteString(sc.src[i:j])
	return j
}

// spaced writes word, spaced from the words around it: "AT&T" is "AT and T".
func (sc *scanner) spaced(end int, word string) int {
	if sc.b.Len() > 0 && !strings.HasSuffix(sc.b.String(), " ") {
		sc.b.WriteByte(' ')
	}
	sc.b.WriteString(word)
	if r, _ := utf8.DecodeRuneInString(sc.src[end:]); end < len(sc.src) && !unicode.IsSpace(r) {
		sc.b.WriteByte(' ')
	}
	return end
}

// signed reads a sign before a number or an amount: "-5", "-$20.00", "+$60.00", "+1-800-555-0100".
func (sc *scanner) signed(i int) (int, bool) {
	s := sc.src
	r, size := utf8.DecodeRuneInString(s[i:])
	num := numeral{neg: r != '+', pos: r == '+'}
	next, _ := utf8.DecodeRuneInString(s[i+size:])
	if locale.DigitValue(next) >= 0 {
		if r == '+' {
			if words, end, ok := sc.phoneWords(i + size); ok {
				sc.b.WriteString(sc.l.plus + " " + words)
				return end, true
			}
		}
		return sc.number(i, i+size, num)
	}
	return sc.moneyBefore(i+size, num)
}

// number reads what starts with the digits at i, signed by sign (from start): a date, a time,
// a phone number, an amount, a percentage, a measure, an ordinal, or a number.
func (sc *scanner) number(start, i int, sign numeral) (int, bool) {
	s, l := sc.src, sc.l
	unsigned := !sign.neg && !sign.pos
	if unsigned {
		if end, ok := sc.dateOrTime(i); ok {
			return end, true
		}
	}
	w := l.scanWritten(s, i)
	num, end := w.read(l, true)
	num.neg, num.pos = sign.neg, sign.pos
	if end, ok := sc.moneyAfter(num, end); ok {
		return end, true
	}
	num, end = w.read(l, false)
	num.neg, num.pos = sign.neg, sign.pos
	if end < w.ends[len(w.ends)-1] && unsigned {
		if words, end, ok := w.dotted(l); ok && !isWordAt(s, end) {
			sc.b.WriteString(words)
			return end, true
		}
	}
	// A percentage, a measure.
	j := skipOneSpace(s, end)
	for _, pct := range [...]string{"%", "٪"} {
		if strings.HasPrefix(s[j:], pct) {
			sc.b.WriteString(l.words(num, l.percentGender) + " " + l.percent)
			return j + len(pct), true
		}
	}
	if unit, k, ok := sc.unitAt(j); ok {
		sc.b.WriteString(l.countedNumeral(num, unit))
		return k, true
	}
	n, whole := value(num.digits)
	whole = whole && !num.point && num.digits == w.groups[0]
	if whole && l.ordinalOf != nil {
		if words, k, ok := l.ordinalOf(s, end, n); ok && !isWordAt(s, k) {
			sc.b.WriteString(l.sign(num) + words)
			return k, true
		}
	}
	if whole && l.fraction != nil && strings.HasPrefix(s[end:], "/") {
		ds, k := digitRun(s, end+1)
		if d, ok := value(ds); ok && !isWordAt(s, k) && !strings.HasPrefix(s[k:], "/") {
			if words, ok := l.fraction(n, d); ok {
				sc.b.WriteString(l.sign(num) + words)
				return k, true
			}
		}
	}
	if whole && l.times != "" {
		if x := firstRune(s[end:]); (x == "x" || x == "×") && !isWordAt(s, end+len(x)) {
			sc.b.WriteString(sc.times(num, n))
			return end + len(x), true
		}
	}
	if isWordAt(s, end) {
		// "5G", "4K": a number that is part of a word is left to the synthesizer.
		return sc.copyWordFrom(start, end), true
	}
	if whole && unsigned && len(num.digits) == 4 && l.year != nil && yearWords[l.tag][prevWord(s, start)] {
		sc.b.WriteString(l.year(n)) // "in 1999": "nineteen ninety-nine"
		return end, true
	}
	g := alone
	if whole && j > end {
		g = l.nouns[wordAt(s, j)]
	}
	sc.b.WriteString(l.words(num, g))
	return end, true
}

// dateOrTime reads a date, a time or a phone number at i.
func (sc *scanner) dateOrTime(i int) (int, bool) {
	if end, ok := sc.isoDate(i); ok {
		return end, true
	}
	if end, ok := sc.numericDate(i); ok {
		return end, true
	}
	if end, ok := sc.dayMonth(i); ok {
		return end, true
	}
	if end, ok := sc.clockAt(i); ok {
		return end, true
	}
	return sc.phone(i)
}

// times reads the "x" of "3x": "three times", de "dreimal".
func (sc *scanner) times(num numeral, n int64) string {
	if sc.l.tag == "de" {
		if n == 1 && !num.neg {
			return "einmal"
		}
		return sc.l.words(num, alone) + "mal"
	}
	return sc.l.words(num, alone) + " " + sc.l.times
}

func firstRune(s string) string {
	_, size := utf8.DecodeRuneInString(s)
	return s[:size]
}

// copyWordFrom writes src from start to the end of the word that goes on at end.
func (sc *scanner) copyWordFrom(start, end int) int {
	sc.b.WriteString(sc.src[start:end])
	return sc.copyWord(end)
}

// isWordAt reports whether a letter or a digit is at i.
func isWordAt(s string, i int) bool {
	r, _ := utf8.DecodeRuneInString(s[i:])
	return i < len(s) && isWordRune(r)
}

// wordAt returns the word of letters at i.
func wordAt(s string, i int) string {
	j := i
	for j < len(s) {
		r, size := utf8.DecodeRuneInString(s[j:])
		if !unicode.IsLetter(r) {
			break
		}
		j += size
	}
	return s[i:j]
}

// skipOneSpace skips one space, no-break space or narrow no-break space at i.
func skipOneSpace(s string, i int) int {
	r, size := utf8.DecodeRuneInString(s[i:])
	if i < len(s) && (r == ' ' || r == '\u00a0' || r == '\u202f') {
		return i + size
	}
	return i
}

// unitAt reads a unit of measure at j: "km", "°C".
func (sc *scanner) unitAt(j int) (noun, int, bool) {
	s := sc.src
	best, bestEnd := noun{}, 0
	for written, unit := range sc.l.units {
		if strings.HasPrefix(s[j:], written) && len(written) > bestEnd-j && !isWordAt(s, j+len(written)) {
			best, bestEnd = unit, j+len(written)
		}
	}
	return best, bestEnd, bestEnd > 0
}

// moneyBefore reads an amount after its currency, at i: "$20", "US$ 5", "€5", "USD 20",
// signed by sign; a sign may also follow the currency ("$-5").
func (sc *scanner) moneyBefore(i int, sign numeral) (int, bool) {
	s, l := sc.src, sc.l
	code, j := currencyAt(s, i, true)
	if code == "" {
		return 0, false
	}
	if !sign.neg && !sign.pos && j < len(s) && (s[j] == '-' || s[j] == '+') {
		sign.neg, sign.pos = s[j] == '-', s[j] == '+'
		j++
	}
	r, _ := utf8.DecodeRuneInString(s[j:])
	if locale.DigitValue(r) < 0 {
		return 0, false
	}
	num, end := l.scanWritten(s, j).read(l, true)
	num.neg, num.pos = sign.neg, sign.pos
	scaleWord := ""
	if k := skipOneSpace(s, end); k > end {
		if w := wordAt(s, k); w != "" {
			if _, ok := l.scales[w]; ok && !isWordAt(s, k+len(w)) {
				scaleWord, end = w, k+len(w)
			}
		}
	}
	if isWordAt(s, end) {
		return 0, false
	}
	words, ok := l.money(num, code, scaleWord)
	if !ok {
		return 0, false
	}
	sc.b.WriteString(words)
	return end, true
}

// moneyAfter reads the currency after an amount: "5 €", "1.234,56 €", "20 USD".
func (sc *scanner) moneyAfter(num numeral, end int) (int, bool) {
	s := sc.src
	code, k := currencyAt(s, skipOneSpace(s, end), false)
	if code == "" || isWordAt(s, k) {
		return 0, false
	}
	words, ok := sc.l.money(num, code, "")
	if !ok {
		return 0, false
	}
	sc.b.WriteString(words)
	return k, true
}

// currencyAt reads a currency sign or code at i. A code before an amount needs a space or the
// amount after it ("USD 20", "USD20"); a sign may have a space.
func currencyAt(s string, i int, before bool) (string, int) {
	for _, cs := range currencySigns {
		if strings.HasPrefix(s[i:], cs.sign) {
			j := i + len(cs.sign)
			if before {
				j = skipOneSpace(s, j)
			}
			return cs.code, j
		}
	}
	if i+3 <= len(s) {
		if _, ok := currencies[s[i:i+3]]; ok {
			j := i + 3
			if before {
				j = skipOneSpace(s, j)
				if r, _ := utf8.DecodeRuneInString(s[j:]); unicode.IsLetter(r) {
					return "", 0
				}
			}
			return s[i : i+3], j
		}
	}
	return "", 0
}
