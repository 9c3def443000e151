package verbalize

import (
	"strconv"
	"strings"
	"unicode/utf8"

	"github.com/convengine/engine/internal/locale"
)

// clock is a time of day as written.
type clock struct {
	h, m, s int
	zero    bool   // the hour has a leading zero: "09:30" is on a 24-hour clock
	mark    string // "am" or "pm", written after an English time
}

// clockAt reads a time at i: "14:05", "9:30:15", and in English "9:30 PM", "9 a.m."; in French
// and Portuguese "14h05" and "14h"; in German the "Uhr" after it is part of what it says.
func (sc *scanner) clockAt(i int) (int, bool) {
	s, l := sc.src, sc.l
	hs, j := digitRun(s, i)
	if len(hs) > 2 {
		return 0, false
	}
	t := clock{h: atoi(hs), zero: len(hs) == 2 && hs[0] == '0'}
	dotted := false
	switch {
	case j < len(s) && s[j] == ':':
		ms, k := digitRun(s, j+1)
		if len(ms) != 2 {
			return 0, false
		}
		t.m, j = atoi(ms), k
		if j < len(s) && s[j] == ':' {
			ss, k := digitRun(s, j+1)
			if len(ss) != 2 {
				return 0, false
			}
			t.s, j = atoi(ss), k
		}
		if l.tag == "en" {
			if mark, k, dot := ampm(s, skipOneSpace(s, j)); mark != "" {
				t.mark, j, dotted = mark, k, dot
			}
		}
	case (l.tag == "fr" || l.tag == "pt") && j < len(s) && s[j] == 'h':
		ms, k := digitRun(s, j+1)
		if len(ms) != 0 && len(ms) != 2 {
			return 0, false
		}
		t.m, j = atoi(ms), k
	case l.tag == "en":
		// An hour alone is a time only with its mark: "9am", "9 p.m.".
		mark, k, dot := ampm(s, skipOneSpace(s, j))
		if mark == "" || t.h < 1 || t.h > 12 {
			return 0, false
		}
		t.mark, j, dotted = mark, k, dot
	default:
		return 0, false
	}
	if t.h > 24 || t.m > 59 || t.s > 59 || (t.h == 24 && t.m+t.s > 0) || isWordAt(s, j) || (j < len(s) && s[j] == ':') {
		return 0, false
	}
	if l.tag == "de" {
		if k := skipOneSpace(s, j); k > j && strings.HasPrefix(s[k:], "Uhr") && !isWordAt(s, k+len("Uhr")) {
			j = k + len("Uhr")
		}
	}
	sc.b.WriteString(l.clock(t))
	if dotted && sentenceEnds(s, j) {
		sc.b.WriteByte('.') // "at 9 p.m." ends the sentence too
	}
	return j, true
}

// ampm reads an English "am" or "pm" at i: "AM", "pm", "a.m.", "P.M.".
func ampm(s string, i int) (mark string, end int, dotted bool) {
	for _, form := range [...]string{"a.m.", "p.m.", "A.M.", "P.M.", "am", "pm", "AM", "PM"} {
		if !strings.HasPrefix(s[i:], form) {
			continue
		}
		end := i + len(form)
		if isWordAt(s, end) {
			return "", 0, false
		}
		return strings.ToLower(form[:1]) + "m", end, strings.HasSuffix(form, ".")
	}
	return "", 0, false
}

func atoi(digits string) int {
	n, _ := strconv.Atoi(digits)
	return n
}

// phone writes a phone number written with hyphens at i, digit by digit in its groups:
// "555-1234", "1-800-555-0100". Three groups or more need seven digits, a first group of at
// most three and a last of at least three, so that "2026-13-01" is no phone.
func (sc *scanner) phone(i int) (int, bool) {
	words, end, ok := sc.phoneWords(i)
	if ok {
		sc.b.WriteString(words)
	}
	return end, ok
}

func (sc *scanner) phoneWords(i int) (string, int, bool) {
	s := sc.src
	var groups []string
	total, j := 0, i
	for len(groups) < 6 {
		g, k := digitRun(s, j)
		if len(g) == 0 || len(g) > 4 {
			return "", 0, false
		}
		groups, total, j = append(groups, g), total+len(g), k
		if next, _ := utf8.DecodeRuneInString(s[min(j+1, len(s)):]); j+1 < len(s) && s[j] == '-' && locale.DigitValue(next) >= 0 {
			j++
			continue
		}
		break
	}
	local := len(groups) == 2 && len(groups[0]) == 3 && len(groups[1]) == 4
	long := len(groups) >= 3 && total >= 7 && len(groups[0]) <= 3 && len(groups[len(groups)-1]) >= 3
	if !(local || long) || isWordAt(s, j) || (j < len(s) && s[j] == '-') {
		return "", 0, false
	}
	parts := make([]string, len(groups))
	for k, g := range groups {
		parts[k] = sc.l.digits(g)
	}
	return strings.Join(parts, ", "), j, true
}

// phoneInParentheses reads "(555) 123-4567".
func (sc *scanner) phoneInParentheses(i int) (int, bool) {
	s := sc.src
	area, j := digitRun(s, i+1)
	if len(area) != 3 || j >= len(s) || s[j] != ')' {
		return 0, false
	}
	words, end, ok := sc.phoneWords(skipOneSpace(s, j+1))
	if !ok || !strings.Contains(words, ", ") {
		return 0, false
	}
	sc.b.WriteString(sc.l.digits(area) + ", " + words)
	return end, true
}
