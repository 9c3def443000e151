package verbalize

import (
	"strings"
	"unicode/utf8"

	"github.com/convengine/engine/internal/locale"
)

// maxGroups bounds the groups of digits read as one number, so that a long list such as
// "1,2,3,..." is not read again from each of its numbers.
const maxGroups = 8

// written is a number as it appears: its runs of digits, the separators between them, and
// where each run ends in the text.
type written struct {
	groups []string // ASCII digits
	seps   []rune
	ends   []int
}

// digitRun reads the digits at i as ASCII.
func digitRun(s string, i int) (string, int) {
	j := i
	for j < len(s) && s[j] >= '0' && s[j] <= '9' {
		j++
	}
	if r, _ := utf8.DecodeRuneInString(s[j:]); j == len(s) || locale.DigitValue(r) < 0 {
		return s[i:j], j // ASCII digits, the common case, need no copy
	}
	var b strings.Builder
	for i < len(s) {
		r, size := utf8.DecodeRuneInString(s[i:])
		v := locale.DigitValue(r)
		if v < 0 {
			break
		}
		b.WriteByte(byte('0' + v))
		i += size
	}
	return b.String(), i
}

// isSeparator reports whether r may separate the digits of a number in l.
func (l *language) isSeparator(r rune) bool {
	switch r {
	case '.', ',', '\u00a0', '\u202f':
		return true
	case ' ':
		return l.spaceGroups
	case '\'', '’':
		return l.tag == "de" || l.tag == "fr"
	case '٫', '٬':
		return l.tag == "ar"
	}
	return false
}

// scanWritten reads the number written at i, which starts with a digit.
func (l *language) scanWritten(s string, i int) written {
	var w written
	for {
		group, end := digitRun(s, i)
		w.groups = append(w.groups, group)
		w.ends = append(w.ends, end)
		r, size := utf8.DecodeRuneInString(s[end:])
		if end >= len(s) || !l.isSeparator(r) || len(w.groups) == maxGroups {
			return w
		}
		if next, _ := utf8.DecodeRuneInString(s[end+size:]); locale.DigitValue(next) < 0 {
			return w
		}
		w.seps = append(w.seps, r)
		i = end + size
	}
}

// read returns the longest start of w that is a number, and where it ends. The locale's
// separators are tried first, then the other convention when it is not ambiguous: when both
// "." and "," appear ("1.234,56" in English), when a "." cannot group thousands ("3.5" in
// Spanish), or for money ("€5,50" in English).
func (w written) read(l *language, money bool) (numeral, int) {
	other := byte('.')
	if l.decimal == '.' {
		other = ','
	}
	for k := len(w.groups); k > 1; k-- {
		if num, ok := w.as(k, l.decimal, l); ok {
			return num, w.ends[k-1]
		}
		seps := w.seps[:k-1]
		hasDot, hasComma := containsRune(seps, '.'), containsRune(seps, ',')
		if money || (hasDot && hasComma) || (l.decimal == ',' && hasDot && !hasComma) {
			if num, ok := w.as(k, other, l); ok {
				return num, w.ends[k-1]
			}
		}
	}
	return numeral{digits: w.groups[0]}, w.ends[0]
}

func containsRune(rs []rune, r rune) bool {
	for _, x := range rs {
		if x == r {
			return true
		}
	}
	return false
}

// as reads the first k groups of w with decimal as the decimal separator: at most one, last;
// the others all alike, between a first group of one to three digits and groups of three.
func (w written) as(k int, decimal byte, l *language) (numeral, bool) {
	seps := w.seps[:k-1]
	groups := w.groups[:k]
	num := numeral{}
	last := seps[len(seps)-1]
	if last == rune(decimal) || last == '٫' {
		num.point, num.frac = true, groups[k-1]
		seps, groups = seps[:len(seps)-1], groups[:k-1]
	}
	for i, sep := range seps {
		if sep == rune(decimal) || sep == '٫' || sep != seps[0] {
			return numeral{}, false
		}
		if len(groups[i+1]) != 3 {
			return numeral{}, false
		}
	}
	if len(seps) > 0 && len(groups[0]) > 3 {
		return numeral{}, false
	}
	num.digits = strings.Join(groups, "")
	return num, true
}

// dotted reads a chain of three or more numbers joined by dots, a version or an address, as
// the numbers and the word for a dot: "two point ten point three".
func (w written) dotted(l *language) (string, int, bool) {
	if len(w.groups) < 3 {
		return "", 0, false
	}
	for _, r := range w.seps {
		if r != '.' {
			return "", 0, false
		}
	}
	parts := make([]string, len(w.groups))
	for i, g := range w.groups {
		parts[i] = l.whole(g, alone)
	}
	return strings.Join(parts, " "+l.dot+" "), w.ends[len(w.ends)-1], true
}
