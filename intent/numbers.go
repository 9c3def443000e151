package intent

import (
	"math"
	"strconv"
	"strings"
	"unicode"
)

// maxNumber bounds the numbers read from text, far above any sum a user means, so that a
// value always stays finite through rounding and JSON.
const maxNumber = 1e15

// The kinds of English number words.
const (
	wordUnit     = iota + 1 // zero to nineteen
	wordTen                 // twenty to ninety
	wordScale               // hundred, thousand, million
	wordHundreds            // doscientos to novecientos: a whole number of hundreds
)

// numberWord returns the value and kind of an English number word.
func numberWord(w string) (value float64, kind int, ok bool) {
	units := [...]string{"zero", "one", "two", "three", "four", "five", "six", "seven", "eight",
		"nine", "ten", "eleven", "twelve", "thirteen", "fourteen", "fifteen", "sixteen",
		"seventeen", "eighteen", "nineteen"}
	for i, u := range units {
		if w == u {
			return float64(i), wordUnit, true
		}
	}
	tens := [...]string{"twenty", "thirty", "forty", "fifty", "sixty", "seventy", "eighty", "ninety"}
	for i, t := range tens {
		if w == t {
			return float64(20 + 10*i), wordTen, true
		}
	}
	switch w {
	case "hundred":
		return 100, wordScale, true
	case "thousand":
		return 1000, wordScale, true
	case "million":
		return 1e6, wordScale, true
	}
	return 0, 0, false
}

// spanishNumberWord returns the value and kind of a Spanish number word, with or without its
// accent ("veintidós", "veintidos"). "Once" (eleven) is left out: it is an English word, and
// "pay alex once" must not be read as $11. So are "un" and "una", articles far more often than
// numbers ("una transferencia de 20 dólares").
func spanishNumberWord(w string) (value float64, kind int, ok bool) {
	units := [...]string{"cero", "uno", "dos", "tres", "cuatro", "cinco", "seis", "siete", "ocho",
		"nueve", "diez", "", "doce", "trece", "catorce", "quince", "dieciséis", "diecisiete",
		"dieciocho", "diecinueve", "veinte", "veintiuno", "veintidós", "veintitrés", "veinticuatro",
		"veinticinco", "veintiséis", "veintisiete", "veintiocho", "veintinueve"}
	for i, u := range units {
		if u != "" && (w == u || w == stripAccents(u)) {
			if i == 20 {
				return 20, wordTen, true // "veinte y cinco" is rare, but "veinte" takes no unit
			}
			return float64(i), wordUnit, true
		}
	}
	tens := [...]string{"treinta", "cuarenta", "cincuenta", "sesenta", "setenta", "ochenta", "noventa"}
	for i, t := range tens {
		if w == t {
			return float64(30 + 10*i), wordTen, true
		}
	}
	hundreds := [...]string{"doscientos", "trescientos", "cuatrocientos", "quinientos",
		"seiscientos", "setecientos", "ochocientos", "novecientos"}
	for i, h := range hundreds {
		if w == h || w == strings.TrimSuffix(h, "os")+"as" {
			return float64(200 + 100*i), wordHundreds, true
		}
	}
	switch w {
	case "cien", "ciento":
		return 100, wordScale, true
	case "mil":
		return 1000, wordScale, true
	case "millón", "millon", "millones":
		return 1e6, wordScale, true
	}
	return 0, 0, false
}

// stripAccents removes the acute accents of Spanish vowels.
func stripAccents(s string) string {
	return strings.NewReplacer("á", "a", "é", "e", "í", "i", "ó", "o", "ú", "u").Replace(s)
}

// numberTokens splits s into lower-case tokens for number parsing, with Arabic-Indic digits
// read as ASCII ones. Currency symbols and
// surrounding punctuation are trimmed ("$20." gives "20") and words joined by hyphens are split
// ("twenty-five"), but a token of digits with hyphens, such as a date, is kept whole.
func numberTokens(s string) []string {
	var out []string
	s = strings.Map(func(r rune) rune {
		switch {
		case r >= '٠' && r <= '٩': // Arabic-Indic digits
			return '0' + r - '٠'
		case r >= '۰' && r <= '۹': // Extended Arabic-Indic digits
			return '0' + r - '۰'
		case r == '٫': // Arabic decimal separator
			return '.'
		case r == '٬': // Arabic thousands separator
			return ','
		}
		return r
	}, strings.ToLower(s))
	for _, f := range strings.Fields(s) {
		f = strings.TrimFunc(f, func(r rune) bool {
			return !unicode.IsLetter(r) && !unicode.IsDigit(r)
		})
		if f == "" {
			continue
		}
		if strings.ContainsFunc(f, unicode.IsDigit) {
			out = append(out, f)
			continue
		}
		for p := range strings.SplitSeq(f, "-") {
			if p != "" {
				out = append(out, p)
			}
		}
	}
	return out
}

// numberAt reads a number starting at ts[i]: digits ("1,234.50", "20,50") or a run of English
// or Spanish number words ("one hundred and five", "a thousand", "treinta y cinco"). It returns
// the value and the number of tokens used.
func numberAt(ts []string, i int) (float64, int, bool) {
	if v, ok := parseDigits(ts[i]); ok {
		return v, 1, true
	}
	var (
		total, cur float64
		prev       int     // kind of the previous word
		lastScale  float64 // value of the previous word, when a scale
		n          int
	)
	for j := i; j < len(ts); j++ {
		t := ts[j]
		if t == "and" && prev != 0 && j+1 < len(ts) {
			if _, _, ok := numberWord(ts[j+1]); ok {
				continue
			}
		}
		// Spanish joins tens and units with "y": "treinta y cinco", never "cien y cinco".
		if t == "y" && prev == wordTen && j+1 < len(ts) {
			if v, k, ok := spanishNumberWord(ts[j+1]); ok && k == wordUnit && v < 10 {
				continue
			}
		}
		if t == "a" && prev == 0 && j+1 < len(ts) {
			if _, k, ok := numberWord(ts[j+1]); ok && k == wordScale {
				cur, prev = 1, wordUnit
				continue
			}
		}
		v, kind, ok := numberWord(t)
		if !ok {
			v, kind, ok = spanishNumberWord(t)
		}
		if !ok {
			break
		}
		// "fifteen fifty" is two numbers, and so is "thousand hundred"; "twenty five", "five
		// hundred" and "hundred thousand" are one. So are "doscientos cincuenta" and "dos mil",
		// but not "doscientos cien" or "cinco doscientos".
		if (kind == wordUnit && (prev == wordUnit || (prev == wordTen && v >= 10))) ||
			(kind == wordTen && (prev == wordUnit || prev == wordTen)) ||
			(kind == wordScale && prev == wordScale && v <= lastScale) ||
			(kind == wordScale && prev == wordHundreds && v == 100) ||
			(kind == wordHundreds && prev != 0 && prev != wordScale) {
			break
		}
		switch kind {
		case wordUnit, wordTen, wordHundreds:
			cur += v
		case wordScale:
			if cur == 0 {
				cur = 1
			}
			if v == 100 {
				cur *= v
			} else {
				total += cur * v
				cur = 0
			}
		}
		prev, lastScale, n = kind, v, j-i+1
	}
	if n == 0 || total+cur > maxNumber {
		return 0, 0, false
	}
	return total + cur, n, true
}

// parseDigits reads a number written in digits. Commas group thousands ("1,234.50"), except
// a single comma before exactly two final digits, which is a decimal comma ("20,50").
func parseDigits(t string) (float64, bool) {
	if t == "" || !unicode.IsDigit(rune(t[0])) {
		return 0, false
	}
	if i := strings.IndexByte(t, ','); i >= 0 && strings.Count(t, ",") == 1 &&
		!strings.Contains(t, ".") && len(t)-i == 3 {
		t = t[:i] + "." + t[i+1:]
	}
	v, err := strconv.ParseFloat(strings.ReplaceAll(t, ",", ""), 64)
	if err != nil || v > maxNumber {
		return 0, false
	}
	return v, true
}

// findNumber returns the first number in s, in digits or English words.
func findNumber(s string) (float64, bool) {
	ts := numberTokens(s)
	for i := range ts {
		if v, _, ok := numberAt(ts, i); ok {
			return v, true
		}
	}
	return 0, false
}

// findAmount returns the first sum of money in s: "$20", "20 dollars", "twenty", "15.50",
// "fifteen dollars and fifty cents", "50 cents", "veinte dólares" or "veinte dólares con
// cincuenta centavos". Money is never guessed: an amount finer
// than a cent ("20.505"), or cents that are not a whole number below a hundred ("twenty
// dollars and four hundred cents"), is no amount.
func findAmount(s string) (float64, bool) {
	ts := numberTokens(s)
	for i := range ts {
		v, n, ok := numberAt(ts, i)
		if !ok {
			continue
		}
		j := i + n
		if j < len(ts) && isCentsWord(ts[j]) {
			if !wholeCents(v) {
				return 0, false
			}
			return v / 100, true
		}
		if !exactToCent(v) {
			return 0, false
		}
		if j < len(ts) && isCurrencyWord(ts[j]) {
			j++
		}
		if j < len(ts) && (ts[j] == "and" || ts[j] == "y" || ts[j] == "con") {
			j++
		}
		if j < len(ts) {
			if c, m, ok := numberAt(ts, j); ok && j+m < len(ts) && isCentsWord(ts[j+m]) {
				if !wholeCents(c) || v != math.Trunc(v) {
					return 0, false
				}
				v += c / 100
			}
		}
		return round2(v), true
	}
	return 0, false
}

// wholeCents reports whether c is a count of cents that may follow dollars: 1 to 99.
func wholeCents(c float64) bool { return c == math.Trunc(c) && c >= 1 && c < 100 }

// exactToCent reports whether v has no more than two decimals.
func exactToCent(v float64) bool {
	c := v * 100
	return math.Abs(c-math.Round(c)) < 1e-6
}

func isCurrencyWord(w string) bool {
	switch w {
	case "dollar", "dollars", "buck", "bucks", "usd", "euro", "euros", "eur", "dolar", "dolares",
		"dólar", "dólares", "pesos", "peso":
		return true
	}
	return false
}

func isCentsWord(w string) bool {
	switch w {
	case "cent", "cents", "centavo", "centavos", "centimos", "céntimos":
		return true
	}
	return false
}

func round2(v float64) float64 { return math.Round(v*100) / 100 }

// NumberWords returns the English number words of a transcript ("send twenty five dollars to
// alex" gives twenty, five), in order: the words a recognizer's second opinion must share
// before an amount it heard is acted on.
func NumberWords(transcript string) []string {
	var out []string
	for _, w := range strings.Fields(strings.ToLower(transcript)) {
		if _, _, ok := numberWord(w); ok {
			out = append(out, w)
		}
	}
	return out
}

// WithoutAmounts returns a transcript with each amount said in English words ("twenty five
// dollars", "twelve dollars and fifty cents") replaced by the word "money", or "" when it
// names none: what may still be acted on when the amount itself was not heard for sure. "send
// twenty dollars to alex" becomes "send money to alex", which asks how much rather than
// guessing.
func WithoutAmounts(transcript string) string {
	words := strings.Fields(strings.ToLower(transcript))
	out := make([]string, 0, len(words))
	found := false
	for i := 0; i < len(words); {
		if _, _, ok := numberWord(words[i]); !ok {
			out = append(out, words[i])
			i++
			continue
		}
		found = true
		// The amount runs on over its number words, its currency and cents words, and the
		// "and" or "point" between them.
		j := i + 1
		for j < len(words) {
			w := words[j]
			_, _, number := numberWord(w)
			joins := (w == "and" || w == "point") && j+1 < len(words)
			if joins {
				_, _, joins = numberWord(words[j+1])
			}
			if !number && !joins && !isCurrencyWord(w) && !isCentsWord(w) {
				break
			}
			j++
		}
		out = append(out, "money")
		i = j
	}
	if !found {
		return ""
	}
	return strings.Join(out, " ")
}
