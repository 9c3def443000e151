package verbalize

import "strings"

// Spanish writes "1.234,56" (and "1,234.56" in Mexico, the United States, Central America and
// the Caribbean, where "$" is also the peso). "uno" agrees with the noun after it ("un dólar",
// "veintiún dólares", "una libra", "doscientas libras"); "cien" is a round hundred and
// "ciento" starts the others; 10^9 is "mil millones" and 10^12 "un billón". Dates are
// "veintitrés de noviembre de dos mil veintiséis"; times are read on the 24-hour clock the
// way a timetable is: "14:05" is "catorce y cinco", "14:00" "catorce en punto", the hour
// feminine as in "la una", "las veintiuna".
func newSpanish(region string) *language {
	l := &language{
		tag: "es", cardinal: esCardinal, ordinal: esOrdinal, clock: esClock,
		decimal: ',', spaceGroups: true, fracWords: true,
		minus: "menos", plus: "más", point: "coma", dot: "punto", percent: "por ciento",
		and: " con ", of: "de", number: "número", times: "veces", ampersand: "y", at: "arroba",
		months: [12]string{"enero", "febrero", "marzo", "abril", "mayo", "junio", "julio",
			"agosto", "septiembre", "octubre", "noviembre", "diciembre"},
		monthNames: map[string]int{"setiembre": 9},
		dayMonth:   " de ",
	}
	l.year = func(y int64) string { return esCardinal(y, alone) }
	l.date = func(y, m, d int, _ bool) string {
		s := l.months[m-1]
		if d > 0 {
			s = esCardinal(int64(d), alone) + " de " + s
		}
		if y > 0 {
			s += " de " + esCardinal(int64(y), alone)
		}
		return s
	}
	l.ordinalOf = func(s string, i int, n int64) (string, int, bool) { return romanceOrdinalSuffix(l, s, i, n) }
	if dotDecimal[region] {
		l.decimal, l.point = '.', "punto"
	}
	l.with("es")
	if peso[region] {
		l.dollar = "MXN"
	}
	return l
}

// dotDecimal are the regions of Spanish that write "1,234.56".
var dotDecimal = map[string]bool{"MX": true, "US": true, "GT": true, "HN": true, "SV": true,
	"NI": true, "PA": true, "DO": true, "PR": true, "CU": true, "PE": true}

// peso are the regions where "$" is the peso.
var peso = map[string]bool{"MX": true, "AR": true, "CO": true, "CL": true, "UY": true,
	"DO": true, "CU": true}

var esUnits = [...]string{"cero", "uno", "dos", "tres", "cuatro", "cinco", "seis", "siete",
	"ocho", "nueve", "diez", "once", "doce", "trece", "catorce", "quince", "dieciséis",
	"diecisiete", "dieciocho", "diecinueve", "veinte", "veintiuno", "veintidós", "veintitrés",
	"veinticuatro", "veinticinco", "veintiséis", "veintisiete", "veintiocho", "veintinueve"}

var esTens = [...]string{"", "", "", "treinta", "cuarenta", "cincuenta", "sesenta", "setenta",
	"ochenta", "noventa"}

var esHundreds = [...]string{"", "ciento", "doscientos", "trescientos", "cuatrocientos",
	"quinientos", "seiscientos", "setecientos", "ochocientos", "novecientos"}

func esCardinal(n int64, g gender) string {
	if n == 0 {
		return "cero"
	}
	var parts []string
	if b := n / 1e12; b > 0 {
		parts = append(parts, esScale(b, "un billón", "billones"))
	}
	if m := n / 1e6 % 1e6; m > 0 {
		parts = append(parts, esScale(m, "un millón", "millones"))
	}
	if t := n / 1000 % 1000; t > 0 {
		// Thousands agree with the noun ("doscientas mil libras"), and "uno" before "mil" is
		// "un" or "una".
		tg := masc
		if g == fem {
			tg = fem
		}
		if t == 1 {
			parts = append(parts, "mil")
		} else {
			parts = append(parts, esBelow1000(t, tg)+" mil")
		}
	}
	if r := n % 1000; r > 0 {
		parts = append(parts, esBelow1000(r, g))
	}
	return strings.Join(parts, " ")
}

// esScale counts millions or billions, which are masculine nouns: "veintiún millones".
func esScale(c int64, one, many string) string {
	if c == 1 {
		return one
	}
	return esCardinal(c, masc) + " " + many
}

func esBelow1000(n int64, g gender) string {
	if n == 100 {
		return "cien"
	}
	var parts []string
	if h := n / 100; h > 0 {
		w := esHundreds[h]
		if g == fem && h > 1 {
			w = strings.TrimSuffix(w, "os") + "as"
		}
		parts = append(parts, w)
	}
	if r := n % 100; r > 0 {
		parts = append(parts, esBelow100(r, g))
	}
	return strings.Join(parts, " ")
}

func esBelow100(n int64, g gender) string {
	var s string
	if n < 30 {
		s = esUnits[n]
	} else {
		s = esTens[n/10]
		if n%10 > 0 {
			s += " y " + esUnits[n%10]
		}
	}
	if n%10 == 1 && n != 11 {
		switch {
		case g == masc && n == 21:
			s = "veintiún"
		case g == masc:
			s = strings.TrimSuffix(s, "o")
		case g == fem:
			s = strings.TrimSuffix(s, "o") + "a"
		}
	}
	return s
}

var esOrdinals = [...]string{"", "primero", "segundo", "tercero", "cuarto", "quinto", "sexto",
	"séptimo", "octavo", "noveno", "décimo"}

// esOrdinal says the ordinals to ten, and the cardinal beyond, as Spanish mostly does
// ("el piso 15", "el siglo XXI").
func esOrdinal(n int64, g gender) string {
	if n < 1 || n > 10 {
		return esCardinal(n, g)
	}
	w := esOrdinals[n]
	if g == fem {
		return strings.TrimSuffix(w, "o") + "a"
	}
	return w
}

// romanceOrdinalSuffix reads the ordinal indicators of Spanish and Portuguese: "1º", "1.ª",
// "3.er" (es "tercer").
func romanceOrdinalSuffix(l *language, s string, i int, n int64) (string, int, bool) {
	rest := s[i:]
	dot := strings.HasPrefix(rest, ".")
	if dot {
		rest = rest[1:]
	}
	skip := len(s) - len(rest)
	switch {
	case strings.HasPrefix(rest, "º") || strings.HasPrefix(rest, "°") && dot:
		return l.ordinal(n, masc), skip + len("º"), true
	case strings.HasPrefix(rest, "ª"):
		return l.ordinal(n, fem), skip + len("ª"), true
	case l.tag == "es" && strings.HasPrefix(rest, "er") && (n == 1 || n == 3):
		return strings.TrimSuffix(l.ordinal(n, masc), "o"), skip + 2, true
	}
	return "", 0, false
}

// esClock reads a time as a timetable does, the hour feminine: "catorce y cinco", "una en
// punto".
func esClock(t clock) string {
	s := esCardinal(int64(t.h), fem)
	if t.m == 0 {
		s += " en punto"
	} else {
		s += " y " + esCardinal(int64(t.m), alone)
	}
	if t.s > 0 {
		s += " y " + esCardinal(int64(t.s), masc) + " segundo"
		if t.s > 1 {
			s += "s"
		}
	}
	return s
}
