package verbalize

import (
	"strconv"
	"strings"
	"sync"
)

// gender is what a number agrees with: the noun after it, or none.
type gender uint8

const (
	alone gender = iota // no noun follows: es "uno", de "eins", fr "un"
	masc                // es "un dólar", de "ein Dollar", pt "dois dólares"
	fem                 // es "una libra", fr "vingt et une livres", pt "duas libras"
)

// noun is a word counted by a number, in one language.
type noun struct {
	one, many string
	g         gender
	// two and acc are Arabic's dual ("دولاران") and the accusative singular that follows 11
	// to 99 ("دولارًا").
	two, acc string
}

// language holds what verbalizing needs of one language, for one region.
type language struct {
	tag      string
	cardinal func(n int64, g gender) string // 0 ≤ n < maxWords
	ordinal  func(n int64, g gender) string // 1 ≤ n < maxWords
	year     func(y int64) string           // a year as said in a date
	date     func(y, m, d int, dayFirst bool) string
	clock    func(t clock) string
	// count says n things; nil is the European way: the number, "de" after a round million,
	// and the noun, singular for one.
	count func(n int64, w noun) string

	decimal     byte // the decimal separator: '.' or ','
	spaceGroups bool // "1 234" groups thousands
	fracWords   bool // a fraction of one or two digits is read as a number: "tres coma catorce"
	belowTwo    bool // French counts "zéro euro", "1,5 kilomètre" in the singular

	minus, plus, point, dot, percent string
	percentGender                    gender // de "ein Prozent", he "חמישה אחוז"
	// and joins the units of money ("dollars and cents"); of follows a round million before
	// its noun (es "un millón de dólares"); number reads "#" and "No."; times the "x" of "3x".
	and, of, number, times string
	ampersand, at          string

	months [12]string
	// monthNames maps the lower-case written forms of months, full and abbreviated, to 1–12.
	monthNames map[string]int
	// dayMonth is what joins a day to the month's name as written: " de " in es and pt.
	dayMonth   string
	monthFirst bool // numeric dates are month/day/year (en-US)

	abbrs      []abbr
	units      map[string]noun
	nouns      map[string]gender    // nouns whose number agrees with them ("1 hora")
	scales     map[string]scaleWord // the words of large numbers written after an amount
	currencies map[string]currencyName
	dollar     string // what "$" is here: "USD", or "MXN" where it is the peso
	ordinalOf  func(s string, i int, n int64) (words string, end int, ok bool)
	fraction   func(n, d int64) (string, bool) // "1/2": "one half"
}

// variants caches one language per region.
func variants(build func(region string) *language) func(string) *language {
	var cache sync.Map
	return func(region string) *language {
		if l, ok := cache.Load(region); ok {
			return l.(*language)
		}
		l := build(region)
		if l.monthNames == nil {
			l.monthNames = map[string]int{}
		}
		for i, m := range l.months {
			l.monthNames[strings.ToLower(m)] = i + 1
		}
		if l.dollar == "" {
			l.dollar = "USD"
		}
		cache.Store(region, l)
		return l
	}
}

// numeral is a number as written, separators removed.
type numeral struct {
	neg, pos bool
	digits   string // the ASCII digits of the whole part
	frac     string // the ASCII digits after the decimal separator
	point    bool
}

// integer reads digits, with an optional sign.
func (l *language) integer(s string) string {
	num := numeral{}
	switch {
	case strings.HasPrefix(s, "-"):
		num.neg, s = true, s[1:]
	case strings.HasPrefix(s, "+"):
		num.pos, s = true, s[1:]
	}
	num.digits = s
	return l.words(num, alone)
}

// words reads a numeral, the whole part agreeing with g.
func (l *language) words(num numeral, g gender) string {
	if num.point {
		g = alone // "uno coma cinco"
	}
	var b strings.Builder
	b.WriteString(l.sign(num))
	b.WriteString(l.whole(num.digits, g))
	if num.point && num.frac != "" {
		b.WriteString(" " + l.point + " ")
		if n, err := strconv.Atoi(num.frac); err == nil && l.fracWords && len(num.frac) <= 2 && num.frac[0] != '0' {
			b.WriteString(l.cardinal(int64(n), alone))
		} else {
			b.WriteString(l.digits(num.frac))
		}
	}
	return b.String()
}

func (l *language) sign(num numeral) string {
	switch {
	case num.neg:
		return l.minus + " "
	case num.pos:
		return l.plus + " "
	}
	return ""
}

// whole reads the digits of a whole number: as a number below maxWords, else, or when they
// start with a zero, digit by digit.
func (l *language) whole(digits string, g gender) string {
	if n, ok := value(digits); ok {
		return l.cardinal(n, g)
	}
	return l.digits(digits)
}

// value is the number of digits read as words, if it is one.
func value(digits string) (int64, bool) {
	if digits == "" || len(digits) > 15 || (len(digits) > 1 && digits[0] == '0') {
		return 0, false
	}
	n, err := strconv.ParseInt(digits, 10, 64)
	return n, err == nil && n < maxWords
}

// digits reads each digit of s.
func (l *language) digits(s string) string {
	var b strings.Builder
	for i := 0; i < len(s); i++ {
		if s[i] < '0' || s[i] > '9' {
			continue
		}
		if b.Len() > 0 {
			b.WriteByte(' ')
		}
		b.WriteString(l.cardinal(int64(s[i]-'0'), alone))
	}
	return b.String()
}

// counted says n things of w.
func (l *language) counted(n int64, w noun) string {
	if l.count != nil {
		return l.count(n, w)
	}
	name := w.many
	if n == 1 || (l.belowTwo && n < 2) {
		name = w.one
	}
	words := l.cardinal(n, w.g)
	if l.of != "" && n >= 1_000_000 && n%1_000_000 == 0 {
		return words + " " + gluedOf(l.ofBefore(name), name)
	}
	return words + " " + name
}

// countedNumeral says a written number of w, which may have decimals or be too large for
// words.
func (l *language) countedNumeral(num numeral, w noun) string {
	n, ok := value(num.digits)
	if ok && !num.point {
		return l.sign(num) + l.counted(n, w)
	}
	name := w.many
	switch {
	case l.tag == "ar": // Arabic counts a fraction in the singular
		name = w.one
	case l.belowTwo && ok && n < 2:
		name = w.one
	}
	return l.words(num, w.g) + " " + name
}

// ofBefore is "de" before a noun, elided in French before a vowel: "un million d'euros".
func (l *language) ofBefore(name string) string {
	if l.of == "de" && l.tag == "fr" && name != "" && strings.ContainsRune("aeiouyéèêàâîôûAEIOUÉ", []rune(name)[0]) {
		return "d'"
	}
	return l.of
}

// gluedOf joins of and a noun, without a space after an elided "d'".
func gluedOf(of, name string) string {
	if strings.HasSuffix(of, "'") {
		return of + name
	}
	return of + " " + name
}
