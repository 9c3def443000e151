package verbalize

import "strings"

// French writes "1 234,56" (with a space, a no-break space or a narrow one) and spells numbers
// the traditional way, hyphens only below a hundred: "mille deux cent trente-quatre". "un"
// agrees with the noun ("vingt et une livres"); "quatre-vingts" and "deux cents" lose their
// "s" when a number follows or before "mille", not before "millions", which is a noun ("un
// million d'euros"). Belgium and Switzerland say "septante" and "nonante", Switzerland
// "huitante". Dates are "premier novembre", "vingt-trois novembre deux mille vingt-six";
// times "quatorze heures cinq", also written "14h05".
func newFrench(region string) *language {
	variant := frVariant{}
	switch region {
	case "BE", "CD":
		variant.septante = true
	case "CH":
		variant.septante, variant.huitante = true, true
	}
	l := &language{
		tag: "fr", decimal: ',', spaceGroups: true, fracWords: true, belowTwo: true,
		minus: "moins", plus: "plus", point: "virgule", dot: "point", percent: "pour cent",
		and: " et ", of: "de", number: "numéro", times: "fois", ampersand: "et", at: "arobase",
		months: [12]string{"janvier", "février", "mars", "avril", "mai", "juin", "juillet",
			"août", "septembre", "octobre", "novembre", "décembre"},
		monthNames: map[string]int{"janv": 1, "févr": 2, "fevrier": 2, "avr": 4, "juil": 7,
			"aout": 8, "sept": 9, "oct": 10, "nov": 11, "déc": 12, "decembre": 12},
		dayMonth: " ",
	}
	l.cardinal = variant.cardinal
	l.ordinal = variant.ordinal
	l.year = func(y int64) string { return variant.cardinal(y, alone) }
	l.clock = func(t clock) string { return frClock(variant, t) }
	l.date = func(y, m, d int, _ bool) string {
		s := l.months[m-1]
		switch {
		case d == 1:
			s = "premier " + s
		case d > 0:
			s = variant.cardinal(int64(d), alone) + " " + s
		}
		if y > 0 {
			s += " " + variant.cardinal(int64(y), alone)
		}
		return s
	}
	l.ordinalOf = func(s string, i int, n int64) (string, int, bool) { return frOrdinalSuffix(variant, s, i, n) }
	return l.with("fr")
}

// frVariant is the French of a region.
type frVariant struct{ septante, huitante bool }

var frUnits = [...]string{"zéro", "un", "deux", "trois", "quatre", "cinq", "six", "sept", "huit",
	"neuf", "dix", "onze", "douze", "treize", "quatorze", "quinze", "seize", "dix-sept",
	"dix-huit", "dix-neuf"}

var frTens = [...]string{"", "", "vingt", "trente", "quarante", "cinquante", "soixante",
	"septante", "huitante", "nonante"}

var frScales = [...]scale{{1e12, "billion"}, {1e9, "milliard"}, {1e6, "million"}}

func (v frVariant) cardinal(n int64, g gender) string {
	if n == 0 {
		return "zéro"
	}
	var parts []string
	for _, sc := range frScales {
		c := n / sc.n % 1000
		switch {
		case c == 1:
			parts = append(parts, "un "+sc.name)
		case c > 1:
			parts = append(parts, v.below1000(c, masc, true)+" "+sc.name+"s")
		}
	}
	switch t := n / 1000 % 1000; {
	case t == 1:
		parts = append(parts, "mille")
	case t > 1:
		parts = append(parts, v.below1000(t, g, false)+" mille")
	}
	if r := n % 1000; r > 0 {
		parts = append(parts, v.below1000(r, g, true))
	}
	return strings.Join(parts, " ")
}

// below1000 says n < 1000; plural is false before "mille", where "cents" and "vingts" are
// invariable.
func (v frVariant) below1000(n int64, g gender, plural bool) string {
	var parts []string
	h, r := n/100, n%100
	switch {
	case h == 1:
		parts = append(parts, "cent")
	case h > 1 && r == 0 && plural:
		parts = append(parts, frUnits[h]+" cents")
	case h > 1:
		parts = append(parts, frUnits[h]+" cent")
	}
	if r > 0 {
		parts = append(parts, v.below100(r, g, plural))
	}
	return strings.Join(parts, " ")
}

func (v frVariant) below100(n int64, g gender, plural bool) string {
	one := "un"
	if g == fem {
		one = "une"
	}
	t, u := n/10, n%10
	switch {
	case n == 1:
		return one
	case n < 20:
		return frUnits[n]
	case t == 7 && !v.septante:
		if n == 71 {
			return "soixante et onze"
		}
		return "soixante-" + frUnits[n-60]
	case t == 8 && !v.huitante:
		switch {
		case u == 0 && plural:
			return "quatre-vingts"
		case u == 0:
			return "quatre-vingt"
		case u == 1:
			return "quatre-vingt-" + one
		}
		return "quatre-vingt-" + frUnits[u]
	case t == 9 && !v.septante:
		return "quatre-vingt-" + frUnits[n-80]
	case u == 0:
		return frTens[t]
	case u == 1:
		return frTens[t] + " et " + one
	}
	return frTens[t] + "-" + frUnits[u]
}

// ordinal adds "ième" to the last word of the cardinal: "vingt et unième", "cinquième",
// "neuvième", "quatre-vingtième"; one is "premier".
func (v frVariant) ordinal(n int64, g gender) string {
	if n == 1 {
		if g == fem {
			return "première"
		}
		return "premier"
	}
	w := v.cardinal(n, alone)
	i := strings.LastIndexAny(w, " -") + 1
	head, last := w[:i], w[i:]
	switch last {
	case "cinq":
		last = "cinqu"
	case "neuf":
		last = "neuv"
	case "vingts", "cents":
		last = strings.TrimSuffix(last, "s")
	default:
		last = strings.TrimSuffix(last, "e")
	}
	return head + last + "ième"
}

// frOrdinalSuffix reads "1er", "1re", "2e", "2ème", "3ᵉ".
func frOrdinalSuffix(v frVariant, s string, i int, n int64) (string, int, bool) {
	rest := s[i:]
	for _, suf := range [...]string{"ème", "eme", "ᵉ", "er", "re", "e"} {
		if !strings.HasPrefix(rest, suf) {
			continue
		}
		switch {
		case suf == "er" && n != 1, suf == "re" && n != 1:
			return "", 0, false
		case suf == "re":
			return v.ordinal(n, fem), i + len(suf), true
		}
		return v.ordinal(n, masc), i + len(suf), true
	}
	return "", 0, false
}

func frClock(v frVariant, t clock) string {
	s := v.cardinal(int64(t.h), fem) + " heure"
	if t.h > 1 {
		s += "s"
	}
	if t.m > 0 {
		s += " " + v.cardinal(int64(t.m), fem)
	}
	if t.s > 0 {
		s += " et " + v.cardinal(int64(t.s), fem) + " seconde"
		if t.s > 1 {
			s += "s"
		}
	}
	return s
}
