package pii

import (
	"unicode"
	"unicode/utf8"
)

// maxPhoneGroups bounds the groups of digits of a typed phone number.
const maxPhoneGroups = 8

// phoneForm is a typed number read as groups of digits.
type phoneForm struct {
	plus   bool
	groups [maxPhoneGroups]int
	n      int // groups
	digits [16]byte
	nd     int                  // digits
	paren  int                  // index of the group in parentheses, or -1
	seps   [maxPhoneGroups]byte // the separator before each group (0 for none)
}

func isDigit(c byte) bool { return c >= '0' && c <= '9' }

// phones finds typed phone numbers: "+" and 8 to 15 digits (E.164, with blanks, dashes, dots
// or an area code in parentheses), or a national form with the separators usual in the United
// States ((415) 555-0123, 415-555-0123), Spain (612 345 678, 612 34 56 78), France (06 12 34
// 56 78), Germany (030 1234567, 0171/1234567) and Mexico (55 1234 5678). A bare run of digits
// without "+" is not taken for a phone: it could be anything.
func (s *scan) phones(text string, add func(kind Kind, name string, start, end int, value string)) {
	for i := 0; i < len(text); i++ {
		s.steps++
		c := text[i]
		if c != '+' && c != '(' && !isDigit(c) {
			continue
		}
		if i > 0 {
			p := text[i-1]
			if letterOrDigit(p) || p == '+' || p == '(' || p == '$' || p == '#' || p == '/' || p == '_' || p == '@' ||
				i > 1 && isDigit(text[i-2]) && (p == ' ' || p == '-' || p == '.' || p == ',') ||
				p >= 0x80 || p == ' ' && currencyBefore(text[:i-1]) {
				continue
			}
		}
		f, end, ok := s.readPhone(text, i)
		if !ok {
			continue
		}
		if v, ok := f.value(); ok {
			add(Phone, "phone", i, end, v)
			i = end - 1
		}
	}
}

// letterOrDigit reports whether c is an ASCII letter or digit.
func letterOrDigit(c byte) bool {
	return isDigit(c) || c >= 'a' && c <= 'z' || c >= 'A' && c <= 'Z'
}

// readPhone reads groups of digits from text[i:] and returns where they end. It fails when
// the number goes on past 15 digits or ends glued to a letter, a decimal part or a currency.
func (s *scan) readPhone(text string, i int) (f phoneForm, end int, ok bool) {
	f.paren = -1
	j := i
	if text[j] == '+' {
		f.plus = true
		j++
		if j >= len(text) || !isDigit(text[j]) {
			return f, 0, false
		}
	}
	var sep byte
	for f.n < maxPhoneGroups {
		s.steps++
		open := j < len(text) && text[j] == '('
		if open {
			j++
		}
		k := j
		for k < len(text) && isDigit(text[k]) {
			s.steps++
			if f.nd == 15 {
				return f, 0, false
			}
			f.digits[f.nd] = text[k]
			f.nd++
			k++
		}
		if k == j {
			return f, 0, false
		}
		f.groups[f.n], f.seps[f.n] = k-j, sep
		if open {
			if k >= len(text) || text[k] != ')' || f.paren >= 0 {
				return f, 0, false
			}
			f.paren = f.n
			k++
		}
		f.n++
		end, j = k, k
		// The separator to the next group: one of " -./", or ") " already read.
		sep = 0
		if j < len(text) && (text[j] == ' ' || text[j] == '-' || text[j] == '.' || text[j] == '/') {
			sep = text[j]
			j++
		}
		if j < len(text) && (isDigit(text[j]) || text[j] == '(' && f.paren < 0) {
			if sep == 0 && !open {
				break // "(" right after digits
			}
			continue
		}
		break
	}
	if f.n == maxPhoneGroups && end < len(text) && (text[end] == ' ' || text[end] == '-') && end+1 < len(text) && isDigit(text[end+1]) {
		return f, 0, false
	}
	if end < len(text) {
		c := text[end]
		if letterOrDigit(c) || c == '_' || c == '@' || c >= 0x80 || c == '%' {
			return f, 0, false
		}
		if (c == ',' || c == '.') && end+1 < len(text) && isDigit(text[end+1]) {
			return f, 0, false // a decimal part
		}
		if c == ' ' && end+1 < len(text) && text[end+1] >= utf8.RuneSelf {
			if r, _ := utf8.DecodeRuneInString(text[end+1:]); unicode.Is(unicode.Sc, r) {
				return f, 0, false // a currency sign after a blank ("612 345 678 €")
			}
		}
	}
	return f, end, true
}

// value returns the phone number's digits if the groups have a phone's form.
func (f *phoneForm) value() (string, bool) {
	d := string(f.digits[:f.nd])
	if f.plus {
		if f.nd < 8 || f.nd > 15 || d[0] == '0' {
			return "", false
		}
		for i := 1; i < f.n; i++ {
			if f.seps[i] == '/' {
				return "", false
			}
		}
		return "+" + d, true
	}
	if f.n < 2 {
		return "", false // a bare run of digits
	}
	g := f.groups[:f.n]
	same := true // one kind of separator (a parenthesis may be followed by none or a blank)
	var sep byte
	for i := 1; i < f.n; i++ {
		c := f.seps[i]
		if i == f.paren+1 && (c == 0 || c == ' ') {
			continue
		}
		if sep == 0 {
			sep = c
		}
		if c != sep {
			same = false
		}
	}
	slash := sep == '/'
	eq := func(want ...int) bool {
		if len(want) != len(g) {
			return false
		}
		for i := range want {
			if g[i] != want[i] {
				return false
			}
		}
		return true
	}
	switch {
	case !same:
		// United States: (415) 555-0123.
		if f.paren == 0 && eq(3, 3, 4) && f.seps[2] == '-' && d[0] >= '2' {
			return d, true
		}
		return "", false
	case f.paren > 0:
		return "", false
	case eq(3, 3, 4) && d[0] >= '2' && !slash: // United States, Mexico
		return d, true
	case eq(1, 3, 3, 4) && d[0] == '1' && d[1] >= '2' && !slash && f.paren != 0: // 1-415-555-0123
		return d, true
	case eq(2, 4, 4) && d[0] >= '1' && !slash: // Mexico: 55 1234 5678
		return d, true
	case (eq(3, 3, 3) || eq(3, 2, 2, 2)) && d[0] >= '6' && !slash && f.paren < 0: // Spain
		return d, true
	case eq(2, 2, 2, 2, 2) && d[0] == '0' && d[1] != '0' && !slash && f.paren < 0: // France
		return d, true
	case d[0] == '0' && d[1] != '0' && g[0] >= 3 && g[0] <= 5 && f.n <= 4 && f.nd >= 9 && f.nd <= 12 && sep != '.':
		// Germany: an area code with its trunk 0, then the subscriber's number.
		for _, n := range g[1:] {
			if n < 2 {
				return "", false
			}
		}
		if f.nd-g[0] < 5 {
			return "", false
		}
		return d, true
	}
	return "", false
}

// currencyBefore reports whether text ends with a currency sign.
func currencyBefore(text string) bool {
	for _, c := range []string{"$", "€", "£", "¥"} {
		if len(text) >= len(c) && text[len(text)-len(c):] == c {
			return true
		}
	}
	return false
}
