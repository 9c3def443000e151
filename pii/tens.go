package pii

import "strconv"

// Numbers said as tens: a number from 10 to 99 said as words ("twelve", "forty-one",
// "quatre-vingt-dix-sept", "cuarenta y uno", "einundvierzig", "واحد وأربعون") is one piece of
// two digits, as French phone numbers and card and IBAN groups are said in pairs. Hundreds and
// thousands are not read: "two hundred" is a digit, a word that breaks the run, no number.

// Sets of the numbers that may be said after a tens word ([word].adds): bit n for n.
const (
	addUnits = 1<<10 - 2    // 1 to 9: "forty-one"
	addTeens = 1<<20 - 2    // 1 to 19: "soixante-dix-sept", "quatre-vingt-onze"
	addSeven = 1<<10 - 1<<7 // 7 to 9: "dix-sept"
)

// withNumbers adds to each locale's vocabulary its words for the numbers from 10 to 99, and
// marks its digits from 1 to 9 as units that may start one ("quatre-vingts", "واحد وأربعون").
func withNumbers(v map[string]map[string]word) map[string]map[string]word {
	for _, words := range v {
		for w, x := range words {
			if len(x.digits) == 1 && x.digits != "0" {
				x.unit = int8(x.digits[0] - '0')
				words[w] = x
			}
		}
	}
	// one adds the words of n, a number said by itself.
	one := func(l string, n int, ws ...string) {
		for _, w := range ws {
			v[l][w] = word{num: int8(n)}
		}
	}
	// tens adds the words of n, a number that the numbers in adds may follow.
	tens := func(l string, n int, adds uint32, ws ...string) {
		for _, w := range ws {
			v[l][w] = word{num: int8(n), adds: adds}
		}
	}
	seq := func(l string, from, step int, adds uint32, ws ...[]string) {
		for i, forms := range ws {
			tens(l, from+i*step, adds, forms...)
		}
	}
	f := func(ws ...string) []string { return ws }

	seq("en", 10, 1, 0, f("ten"), f("eleven"), f("twelve"), f("thirteen"), f("fourteen"),
		f("fifteen"), f("sixteen"), f("seventeen"), f("eighteen"), f("nineteen"))
	seq("en", 20, 10, addUnits, f("twenty"), f("thirty"), f("forty", "fourty"), f("fifty"),
		f("sixty"), f("seventy"), f("eighty"), f("ninety"))

	seq("es", 10, 1, 0, f("diez"), f("once"), f("doce"), f("trece"), f("catorce"), f("quince"),
		f("dieciséis", "dieciseis"), f("diecisiete"), f("dieciocho"), f("diecinueve"), f("veinte"),
		f("veintiuno", "veintiuna", "veintiún", "veintiun"), f("veintidós", "veintidos"),
		f("veintitrés", "veintitres"), f("veinticuatro"), f("veinticinco"),
		f("veintiséis", "veintiseis"), f("veintisiete"), f("veintiocho"), f("veintinueve"))
	seq("es", 30, 10, addUnits, f("treinta"), f("cuarenta"), f("cincuenta"), f("sesenta"),
		f("setenta"), f("ochenta"), f("noventa"))
	v["es"]["y"] = word{joiner: true}

	tens("fr", 10, addSeven, "dix")
	seq("fr", 11, 1, 0, f("onze"), f("douze"), f("treize"), f("quatorze"), f("quinze"), f("seize"))
	seq("fr", 20, 10, addUnits, f("vingt"), f("trente"), f("quarante"), f("cinquante"))
	tens("fr", 60, addTeens, "soixante")
	seq("fr", 70, 10, addUnits, f("septante"), f("huitante", "octante"), f("nonante"))
	v["fr"]["vingt"] = word{num: 20, adds: addUnits, score: true}
	v["fr"]["vingts"] = word{score: true}
	v["fr"]["et"] = word{joiner: true}

	seq("de", 10, 1, 0, f("zehn"), f("elf"), f("zwölf", "zwolf", "zwoelf"), f("dreizehn"),
		f("vierzehn"), f("fünfzehn", "funfzehn", "fuenfzehn"), f("sechzehn"), f("siebzehn"),
		f("achtzehn"), f("neunzehn"))
	deTens := [][]string{f("zwanzig"), f("dreißig", "dreissig"), f("vierzig"),
		f("fünfzig", "funfzig", "fuenfzig"), f("sechzig"), f("siebzig"), f("achtzig"), f("neunzig")}
	deUnits := [][]string{f("ein"), f("zwei"), f("drei"), f("vier"), f("fünf", "funf", "fuenf"),
		f("sechs"), f("sieben"), f("acht"), f("neun")}
	seq("de", 20, 10, 0, deTens...)
	for t, ts := range deTens {
		for u, us := range deUnits {
			for _, tw := range ts {
				for _, uw := range us {
					one("de", 20+10*t+1+u, uw+"und"+tw) // "einundvierzig"
				}
			}
		}
	}

	seq("it", 10, 1, 0, f("dieci"), f("undici"), f("dodici"), f("tredici"), f("quattordici"),
		f("quindici"), f("sedici"), f("diciassette"), f("diciotto"), f("diciannove"))
	itTens := []string{"venti", "trenta", "quaranta", "cinquanta", "sessanta", "settanta", "ottanta", "novanta"}
	itUnits := [][]string{f("uno"), f("due"), f("tre", "tré"), f("quattro"), f("cinque"), f("sei"),
		f("sette"), f("otto"), f("nove")}
	for t, tw := range itTens {
		tens("it", 20+10*t, addUnits, tw)
		for u, us := range itUnits {
			for _, uw := range us {
				stem := tw
				if uw[0] == 'u' || uw[0] == 'o' {
					stem = tw[:len(tw)-1] // "ventuno", "trentotto"
				}
				one("it", 20+10*t+1+u, stem+uw)
			}
		}
	}

	seq("pt", 10, 1, 0, f("dez"), f("onze"), f("doze"), f("treze"), f("catorze", "quatorze"),
		f("quinze"), f("dezesseis", "dezasseis"), f("dezessete", "dezassete"), f("dezoito"),
		f("dezenove", "dezanove"))
	seq("pt", 20, 10, addUnits, f("vinte"), f("trinta"), f("quarenta"), f("cinquenta", "cinqüenta"),
		f("sessenta"), f("setenta"), f("oitenta"), f("noventa"))
	v["pt"]["e"] = word{joiner: true}

	// Arabic says the unit first, the tens after it joined by "و" ("واحد وأربعون", one and
	// forty), and the teens as a unit and "عشر" ("ثلاثة عشر"; eleven and twelve with their own
	// units, "أحد عشر", "اثنا عشر").
	one("ar", 10, "عشرة")
	v["ar"]["عشر"] = word{after: 10}
	for _, w := range []string{"أحد", "احد", "إحدى", "احدى"} {
		v["ar"][w] = word{unit: 1}
	}
	for _, w := range []string{"اثنا", "اثني", "اثنتا", "اثنتي", "إثنا", "إثني"} {
		v["ar"][w] = word{unit: 2}
	}
	arTens := [][]string{f("عشرون", "عشرين"), f("ثلاثون", "ثلاثين"), f("أربعون", "أربعين", "اربعون", "اربعين"),
		f("خمسون", "خمسين"), f("ستون", "ستين"), f("سبعون", "سبعين"), f("ثمانون", "ثمانين"), f("تسعون", "تسعين")}
	for t, ts := range arTens {
		for _, w := range ts {
			one("ar", 20+10*t, w)
			v["ar"]["و"+w] = word{after: int8(20 + 10*t)}
		}
	}
	return v
}

// tight reports whether the text between two words of one number keeps them together: blanks
// and at most one hyphen ("forty-one", "forty one"), not a pause (a comma, a full stop).
func tight(gap string) bool {
	if len(gap) > 3 {
		return false
	}
	hyphens := 0
	for i := range len(gap) {
		switch gap[i] {
		case ' ':
		case '-':
			hyphens++
		default:
			return false
		}
	}
	return hyphens <= 1
}

// number reads the number from 10 to 99 said by the words from toks[i] on, and returns it as
// two digits and the index of its last token; "" if toks[i] does not start one. It reads at
// most five tokens ("quatre-vingt-dix-sept").
func (s *scan) number(text string, toks []token, i int) (string, int) {
	t := toks[i]
	if t.class != tokLetters || t.w.num == 0 && t.w.unit == 0 {
		return "", i
	}
	s.steps++
	// next returns the word of toks[k] if it follows toks[k-1] tightly, or nil.
	next := func(k int) *word {
		if k >= len(toks) || toks[k].class != tokLetters || !tight(text[toks[k-1].end:toks[k].start]) {
			return nil
		}
		s.steps++
		return toks[k].w
	}
	n, adds, last := int(t.w.num), t.w.adds, i
	if u := int(t.w.unit); u > 0 {
		switch w := next(i + 1); {
		case w == nil:
		case w.after > 0: // "واحد وأربعون", "ثلاثة عشر"
			return strconv.Itoa(u + int(w.after)), i + 1
		case w.score && u == 4: // "quatre-vingts"; "quatre-vingt-dix"
			n, adds, last = 80, 0, i+1
			if w.num > 0 {
				adds = addTeens
			}
		}
	}
	if n == 0 {
		return "", i
	}
	if adds != 0 {
		k := last + 1
		w := next(k)
		if w != nil && w.joiner {
			k++
			w = next(k)
		}
		// What is added: a unit, or a number below twenty ("dix-sept" after "soixante").
		a := 0
		switch {
		case w == nil:
		case w.unit > 0 && w.digits != "":
			a = int(w.unit)
		case w.num > 0 && w.num < 20:
			a = int(w.num)
			if u := next(k + 1); w.adds != 0 && u != nil && u.digits != "" && w.adds&(1<<u.unit) != 0 {
				a += int(u.unit)
				k++
			}
		}
		if a > 0 && adds&(1<<a) != 0 {
			n, last = n+a, k
		}
	}
	return strconv.Itoa(n), last
}

// numberAt reads the number said from toks[*i] on into ds, and moves *i to its last token; it
// reports whether there was one.
func (s *scan) numberAt(text string, toks []token, i *int, ds *string) bool {
	n, last := s.number(text, toks, *i)
	if n == "" {
		return false
	}
	*ds, *i = n, last
	return true
}
