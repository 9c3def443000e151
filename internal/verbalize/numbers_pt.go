package verbalize

import "strings"

// Portuguese is Brazil's unless the tag names another region: "pt-PT" (and Africa's
// Portuguese) say "dezasseis", "dezassete", "dezanove", 10^9 "mil milhões" and 10^12
// "bilião", and call a euro's cent a "cêntimo". "e" joins hundreds, tens and units ("cento e
// vinte e três") and comes before the last group of a number when that group is below a
// hundred or a round hundred ("mil e cem", "dois mil e vinte e seis", but "mil duzentos e
// trinta e quatro"). One and two agree with the noun ("uma libra", "duas libras", "duzentas
// libras"); "um milhão de reais". Dates are "primeiro de novembro de dois mil e vinte e seis";
// times "catorze e cinco", "catorze horas", also written "14h05".
func newPortuguese(region string) *language {
	v := ptVariant{european: region != "" && region != "BR"}
	l := &language{
		tag: "pt", cardinal: v.cardinal, ordinal: ptOrdinal, clock: v.clock,
		decimal: ',', spaceGroups: true, fracWords: true,
		minus: "menos", plus: "mais", point: "vírgula", dot: "ponto", percent: "por cento",
		and: " e ", of: "de", number: "número", times: "vezes", ampersand: "e", at: "arroba",
		months: [12]string{"janeiro", "fevereiro", "março", "abril", "maio", "junho", "julho",
			"agosto", "setembro", "outubro", "novembro", "dezembro"},
		monthNames: map[string]int{"marco": 3},
		dayMonth:   " de ",
	}
	l.year = func(y int64) string { return v.cardinal(y, alone) }
	l.date = func(y, m, d int, _ bool) string {
		s := l.months[m-1]
		switch {
		case d == 1:
			s = "primeiro de " + s
		case d > 0:
			s = v.cardinal(int64(d), alone) + " de " + s
		}
		if y > 0 {
			s += " de " + v.cardinal(int64(y), alone)
		}
		return s
	}
	l.ordinalOf = func(s string, i int, n int64) (string, int, bool) { return romanceOrdinalSuffix(l, s, i, n) }
	l.with("pt")
	if v.european {
		l.currencies = ptEuropeanCurrencies
		l.units = ptEuropeanUnits
	}
	return l
}

// ptVariant is the Portuguese of Brazil or of Portugal.
type ptVariant struct{ european bool }

var ptUnits = [...]string{"zero", "um", "dois", "três", "quatro", "cinco", "seis", "sete",
	"oito", "nove", "dez", "onze", "doze", "treze", "catorze", "quinze", "dezesseis",
	"dezessete", "dezoito", "dezenove"}

var ptTens = [...]string{"", "", "vinte", "trinta", "quarenta", "cinquenta", "sessenta",
	"setenta", "oitenta", "noventa"}

var ptHundreds = [...]string{"", "cento", "duzentos", "trezentos", "quatrocentos", "quinhentos",
	"seiscentos", "setecentos", "oitocentos", "novecentos"}

func (v ptVariant) cardinal(n int64, g gender) string {
	if n == 0 {
		return "zero"
	}
	type group struct {
		count int64
		words string
	}
	var groups []group
	add := func(c int64, one, many string) {
		switch {
		case c == 1:
			groups = append(groups, group{c, one})
		case c > 1:
			groups = append(groups, group{c, v.cardinal(c, masc) + " " + many})
		}
	}
	if v.european {
		add(n/1e12, "um bilião", "biliões")
		add(n/1e6%1e6, "um milhão", "milhões")
	} else {
		add(n/1e12, "um trilhão", "trilhões")
		add(n/1e9%1000, "um bilhão", "bilhões")
		add(n/1e6%1000, "um milhão", "milhões")
	}
	switch t := n / 1000 % 1000; {
	case t == 1:
		groups = append(groups, group{t, "mil"})
	case t > 1:
		groups = append(groups, group{t, v.below1000(t, g) + " mil"})
	}
	if r := n % 1000; r > 0 {
		groups = append(groups, group{r, v.below1000(r, g)})
	}
	var b strings.Builder
	for i, gr := range groups {
		switch {
		case i == 0:
		case i == len(groups)-1 && (gr.count < 100 || gr.count%100 == 0):
			b.WriteString(" e ")
		default:
			b.WriteString(" ")
		}
		b.WriteString(gr.words)
	}
	return b.String()
}

func (v ptVariant) below1000(n int64, g gender) string {
	if n == 100 {
		return "cem"
	}
	var parts []string
	if h := n / 100; h > 0 {
		w := ptHundreds[h]
		if g == fem && h > 1 {
			w = strings.TrimSuffix(w, "os") + "as"
		}
		parts = append(parts, w)
	}
	if r := n % 100; r > 0 {
		parts = append(parts, v.below100(r, g))
	}
	return strings.Join(parts, " e ")
}

func (v ptVariant) below100(n int64, g gender) string {
	if n >= 20 {
		s := ptTens[n/10]
		if n%10 > 0 {
			s += " e " + v.below100(n%10, g)
		}
		return s
	}
	switch {
	case n == 1 && g == fem:
		return "uma"
	case n == 2 && g == fem:
		return "duas"
	case v.european && n == 16:
		return "dezasseis"
	case v.european && n == 17:
		return "dezassete"
	case v.european && n == 19:
		return "dezanove"
	}
	return ptUnits[n]
}

var ptOrdinals = [...]string{"", "primeiro", "segundo", "terceiro", "quarto", "quinto", "sexto",
	"sétimo", "oitavo", "nono", "décimo"}

// ptOrdinal says the ordinals to ten, and the cardinal beyond.
func ptOrdinal(n int64, g gender) string {
	if n < 1 || n > 10 {
		return ptVariant{}.cardinal(n, g)
	}
	w := ptOrdinals[n]
	if g == fem {
		return strings.TrimSuffix(w, "o") + "a"
	}
	return w
}

func (v ptVariant) clock(t clock) string {
	s := v.cardinal(int64(t.h), fem)
	switch {
	case t.m > 0:
		s += " e " + v.cardinal(int64(t.m), alone)
	case t.h < 2:
		s += " hora"
	default:
		s += " horas"
	}
	if t.s > 0 {
		s += " e " + v.cardinal(int64(t.s), alone) + " segundo"
		if t.s > 1 {
			s += "s"
		}
	}
	return s
}
