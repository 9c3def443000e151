package verbalize

import "strings"

// German writes "1.234,56" and composes numbers below a million into one word:
// "eintausendzweihundertvierunddreißig". One alone is "eins", before a noun "ein" or "eine"
// (only the nominative: the case a sentence needs is not known); inside a word it is "ein"
// ("einundzwanzig", "einhundert"). Millions and above are nouns: "eine Million", "zwei
// Millionen". Years before 2000 are said in hundreds ("neunzehnhundertneunundneunzig"); a day
// of a date is the ordinal in the form after "am" ("am dreiundzwanzigsten November"), which
// also fits "den" and "vom"; times are "vierzehn Uhr fünf". Switzerland writes "ss" for "ß".
func newGerman(region string) *language {
	l := &language{
		tag: "de", cardinal: deCardinal, ordinal: deOrdinal, year: deYear, clock: deClock,
		decimal: ',', spaceGroups: true,
		minus: "minus", plus: "plus", point: "Komma", dot: "Punkt", percent: "Prozent", percentGender: masc,
		and: " und ", number: "Nummer", times: "mal", ampersand: "und", at: "at",
		months: [12]string{"Januar", "Februar", "März", "April", "Mai", "Juni", "Juli",
			"August", "September", "Oktober", "November", "Dezember"},
		monthNames: map[string]int{"jänner": 1, "jan": 1, "feb": 2, "mär": 3, "apr": 4,
			"jun": 6, "jul": 7, "aug": 8, "sep": 9, "sept": 9, "okt": 10, "nov": 11, "dez": 12},
		dayMonth: ". ",
	}
	l.date = func(y, m, d int, _ bool) string {
		s := l.months[m-1]
		if d > 0 {
			s = deOrdinal(int64(d), alone) + " " + s
		}
		if y > 0 {
			s += " " + deYear(int64(y))
		}
		return s
	}
	l.with("de")
	if region == "CH" || region == "LI" {
		l.decimal, l.point = '.', "Komma"
		swiss(l)
	}
	return l
}

// swiss spells the words of l without "ß".
func swiss(l *language) {
	for _, f := range []*func(int64, gender) string{&l.cardinal, &l.ordinal} {
		inner := *f
		*f = func(n int64, g gender) string { return strings.ReplaceAll(inner(n, g), "ß", "ss") }
	}
	year, date, say := l.year, l.date, l.clock
	l.year = func(y int64) string { return strings.ReplaceAll(year(y), "ß", "ss") }
	l.date = func(y, m, d int, f bool) string { return strings.ReplaceAll(date(y, m, d, f), "ß", "ss") }
	l.clock = func(t clock) string { return strings.ReplaceAll(say(t), "ß", "ss") }
}

var deUnits = [...]string{"null", "eins", "zwei", "drei", "vier", "fünf", "sechs", "sieben",
	"acht", "neun", "zehn", "elf", "zwölf", "dreizehn", "vierzehn", "fünfzehn", "sechzehn",
	"siebzehn", "achtzehn", "neunzehn"}

var deTens = [...]string{"", "", "zwanzig", "dreißig", "vierzig", "fünfzig", "sechzig",
	"siebzig", "achtzig", "neunzig"}

var deScales = [...]struct {
	n         int64
	one, many string
}{{1e12, "eine Billion", "Billionen"}, {1e9, "eine Milliarde", "Milliarden"}, {1e6, "eine Million", "Millionen"}}

func deCardinal(n int64, g gender) string {
	switch {
	case n == 1 && g == masc:
		return "ein"
	case n == 1 && g == fem:
		return "eine"
	case n == 0:
		return "null"
	}
	var parts []string
	for _, sc := range deScales {
		switch c := n / sc.n % 1000; {
		case c == 1:
			parts = append(parts, sc.one)
		case c > 1:
			parts = append(parts, deBelow1000(c, false)+" "+sc.many)
		}
	}
	var word string
	if t := n / 1000 % 1000; t > 0 {
		word = deBelow1000(t, false) + "tausend"
	}
	if r := n % 1000; r > 0 {
		word += deBelow1000(r, true)
	}
	if word != "" {
		parts = append(parts, word)
	}
	return strings.Join(parts, " ")
}

// deBelow1000 says n < 1000 in one word; a final one is "eins" only at the end of the number.
func deBelow1000(n int64, final bool) string {
	var s string
	if h := n / 100; h > 0 {
		s = deUnit(h, false) + "hundert"
	}
	switch r := n % 100; {
	case r == 0:
	case r < 20:
		s += deUnit(r, final)
	case r%10 == 0:
		s += deTens[r/10]
	default:
		s += deUnit(r%10, false) + "und" + deTens[r/10]
	}
	return s
}

func deUnit(n int64, final bool) string {
	if n == 1 && !final {
		return "ein"
	}
	return deUnits[n]
}

// deOrdinal is the ordinal after "am": "ersten", "dritten", "siebten", "zwanzigsten".
func deOrdinal(n int64, _ gender) string {
	r := n % 100
	if r == 0 || r >= 20 {
		return deCardinal(n, alone) + "sten"
	}
	last, ok := deSmallOrdinals[r]
	if !ok {
		last = deUnits[r] + "ten"
	}
	switch head := n - r; {
	case head == 0:
		return last
	case head%1e6 == 0:
		return deCardinal(head, alone) + " " + last
	default:
		return deCardinal(head, alone) + last
	}
}

var deSmallOrdinals = map[int64]string{1: "ersten", 3: "dritten", 7: "siebten", 8: "achten"}

// deYear says the years from 1100 to 1999 in hundreds: "neunzehnhundertneunundneunzig".
func deYear(y int64) string {
	if y >= 1100 && y < 2000 {
		s := deBelow1000(y/100, false) + "hundert"
		if y%100 > 0 {
			s += deBelow1000(y%100, true)
		}
		return s
	}
	return deCardinal(y, alone)
}

func deClock(t clock) string {
	s := deCardinal(int64(t.h), masc) + " Uhr"
	if t.m > 0 {
		s += " " + deCardinal(int64(t.m), alone)
	}
	if t.s > 0 {
		s += " und " + deCardinal(int64(t.s), fem) + " Sekunde"
		if t.s > 1 {
			s += "n"
		}
	}
	return s
}
