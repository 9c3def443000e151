package verbalize

import (
	"strings"
	"unicode"
	"unicode/utf8"
)

// isoDate reads "2026-11-23".
func (sc *scanner) isoDate(i int) (int, bool) {
	s := sc.src
	parts, end := dateParts(s, i, '-')
	if len(parts) != 3 || len(parts[0]) != 4 || len(parts[1]) != 2 || len(parts[2]) != 2 {
		return 0, false
	}
	y, m, d := atoi(parts[0]), atoi(parts[1]), atoi(parts[2])
	if !validDate(m, d) {
		return 0, false
	}
	sc.b.WriteString(sc.l.date(y, m, d, false))
	return end, true
}

// numericDate reads "11/23/2026" in the United States, "23/11/2026", "23.11.2026" and
// "23-11-2026" elsewhere; a date that cannot be read the locale's way is read the other.
func (sc *scanner) numericDate(i int) (int, bool) {
	s, l := sc.src, sc.l
	for _, sep := range [...]byte{'/', '.', '-'} {
		parts, end := dateParts(s, i, sep)
		if len(parts) != 3 || len(parts[0]) > 2 || len(parts[1]) > 2 || len(parts[2]) != 4 {
			continue
		}
		a, b, y := atoi(parts[0]), atoi(parts[1]), atoi(parts[2])
		m, d := b, a
		if l.monthFirst {
			m, d = a, b
		}
		if !validDate(m, d) {
			m, d = d, m
		}
		if !validDate(m, d) {
			return 0, false
		}
		sc.b.WriteString(l.date(y, m, d, !l.monthFirst))
		return end, true
	}
	return 0, false
}

// dateParts reads groups of digits joined by sep at i, and checks that no word and no other
// group follows.
func dateParts(s string, i int, sep byte) ([]string, int) {
	var parts []string
	for len(parts) < 3 {
		g, j := digitRun(s, i)
		if g == "" {
			return nil, 0
		}
		parts, i = append(parts, g), j
		if len(parts) < 3 {
			if i >= len(s) || s[i] != sep {
				return nil, 0
			}
			i++
		}
	}
	if isWordAt(s, i) || (i+1 < len(s) && s[i] == sep && isWordAt(s, i+1)) {
		return nil, 0
	}
	return parts, i
}

func validDate(m, d int) bool { return m >= 1 && m <= 12 && d >= 1 && d <= 31 }

// dayMonth reads a day before the name of its month, and a year after it: en "23 November
// 2026", "23rd Nov", es "23 de noviembre de 2026", fr "1er mai", de "23. November 2026".
func (sc *scanner) dayMonth(i int) (int, bool) {
	s, l := sc.src, sc.l
	ds, j := digitRun(s, i)
	d := atoi(ds)
	if len(ds) > 2 || d < 1 || d > 31 {
		return 0, false
	}
	switch {
	case l.tag == "en" && j+2 <= len(s):
		if _, k, ok := enOrdinalSuffix(s, j, int64(d)); ok {
			j = k
		}
	case l.tag == "fr" && strings.HasPrefix(s[j:], "er"):
		j += 2
	}
	if !strings.HasPrefix(s[j:], l.dayMonth) {
		return 0, false
	}
	m, end, dot := sc.monthAt(j + len(l.dayMonth))
	if m == 0 {
		return 0, false
	}
	y, end := sc.yearAfter(end)
	sc.b.WriteString(l.date(y, m, d, true))
	if dot && y == 0 && sentenceEnds(s, end) {
		sc.b.WriteByte('.')
	}
	return end, true
}

// monthFirst reads an English date that starts with its month: "November 23, 2026", "Nov.
// 23rd", "November 2026".
func (sc *scanner) monthFirst(i int) (int, bool) {
	s, l := sc.src, sc.l
	if l.tag != "en" {
		return 0, false
	}
	m, j, _ := sc.monthAt(i)
	if m == 0 || j >= len(s) || s[j] != ' ' {
		return 0, false
	}
	ds, k := digitRun(s, j+1)
	switch d := atoi(ds); {
	case len(ds) == 4 && !isWordAt(s, k) && (k >= len(s) || s[k] != ':'):
		sc.b.WriteString(l.date(d, m, 0, false))
		return k, true
	case len(ds) >= 1 && len(ds) <= 2 && d >= 1 && d <= 31:
		if _, e, ok := enOrdinalSuffix(s, k, int64(d)); ok {
			k = e
		}
		if isWordAt(s, k) || (k < len(s) && s[k] == ':') {
			return 0, false
		}
		y, end := sc.yearAfter(k)
		sc.b.WriteString(l.date(y, m, d, false))
		return end, true
	}
	return 0, false
}

// monthAt reads the name of a month at i, full or abbreviated (with its period: "Nov."). In
// English it must be capitalized: "may" is a verb.
func (sc *scanner) monthAt(i int) (month, end int, dot bool) {
	s, l := sc.src, sc.l
	word := wordAt(s, i)
	r, _ := utf8.DecodeRuneInString(word)
	if word == "" || (l.tag == "en" && !unicode.IsUpper(r)) {
		return 0, 0, false
	}
	lower := strings.ToLower(word)
	month = l.monthNames[lower]
	end = i + len(word)
	if month == 0 || isWordAt(s, end) {
		return 0, 0, false
	}
	if lower != strings.ToLower(l.months[month-1]) && end < len(s) && s[end] == '.' {
		end, dot = end+1, true
	}
	return month, end, dot
}

// yearAfter reads the year that may follow a day and a month at i, as the language joins it:
// en "November 23, 2026", es "de 2026", others a space.
func (sc *scanner) yearAfter(i int) (int, int) {
	s := sc.src
	joins := []string{" "}
	switch sc.l.tag {
	case "en":
		joins = []string{", ", " "}
	case "es", "pt":
		joins = []string{" de "}
	}
	for _, join := range joins {
		if !strings.HasPrefix(s[i:], join) {
			continue
		}
		ys, end := digitRun(s, i+len(join))
		if len(ys) == 4 && !isWordAt(s, end) && (end >= len(s) || s[end] != ':') {
			return atoi(ys), end
		}
	}
	return 0, i
}

// yearWords are the words after which a number of four digits is a year, in the languages
// that say years otherwise than numbers: en "in 1999", de "seit 1999".
var yearWords = map[string]map[string]bool{
	"en": {"in": true, "In": true, "since": true, "Since": true, "year": true, "until": true,
		"till": true, "from": true, "From": true, "by": true, "before": true, "after": true,
		"during": true, "around": true, "circa": true},
	"de": {"Jahr": true, "Jahre": true, "Jahres": true, "seit": true, "Seit": true, "im": true,
		"Im": true, "bis": true, "ab": true},
}

// prevWord returns the word before i, across one space.
func prevWord(s string, i int) string {
	if i == 0 || s[i-1] != ' ' {
		return ""
	}
	j := i - 1
	for j > 0 {
		r, size := utf8.DecodeLastRuneInString(s[:j])
		if !unicode.IsLetter(r) {
			break
		}
		j -= size
	}
	return s[j : i-1]
}
