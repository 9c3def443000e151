package verbalize

import "strings"

// English says numbers the American way, without "and" after a hundred ("one hundred five"),
// years in pairs ("twenty twenty-six", "nineteen oh five", but "two thousand five"), dates
// with ordinals ("November twenty-third, twenty twenty-six") and times on a 12-hour clock:
// "14:05" is "two oh five PM". A time written without a mark and that could be either half of
// the day ("9:30") gets none: "nine thirty".
func newEnglish(region string) *language {
	l := &language{
		tag: "en", cardinal: enCardinal, ordinal: enOrdinal, year: enYear, clock: enClock,
		decimal: '.', minus: "minus", plus: "plus", point: "point", dot: "point",
		percent: "percent", and: " and ", number: "number", times: "times",
		ampersand: "and", at: "at",
		months: [12]string{"January", "February", "March", "April", "May", "June", "July",
			"August", "September", "October", "November", "December"},
		monthNames: map[string]int{"jan": 1, "feb": 2, "mar": 3, "apr": 4, "jun": 6, "jul": 7,
			"aug": 8, "sep": 9, "sept": 9, "oct": 10, "nov": 11, "dec": 12},
		dayMonth: " ",
		// The United States and the countries that follow its usage write month/day/year.
		monthFirst: region == "" || region == "US" || region == "PH" || region == "CA" || region == "FM" || region == "MH",
	}
	l.date = func(y, m, d int, dayFirst bool) string { return enDate(l, y, m, d, dayFirst) }
	l.ordinalOf = enOrdinalSuffix
	l.fraction = enFraction
	return l.with("en")
}

var enSmall = [...]string{"zero", "one", "two", "three", "four", "five", "six", "seven", "eight",
	"nine", "ten", "eleven", "twelve", "thirteen", "fourteen", "fifteen", "sixteen", "seventeen",
	"eighteen", "nineteen"}

var enTens = [...]string{"", "", "twenty", "thirty", "forty", "fifty", "sixty", "seventy",
	"eighty", "ninety"}

// scale is a power of a thousand and its name.
type scale struct {
	n    int64
	name string
}

var enScales = [...]scale{{1e12, "trillion"}, {1e9, "billion"}, {1e6, "million"}, {1e3, "thousand"}, {1, ""}}

func enCardinal(n int64, _ gender) string {
	if n == 0 {
		return "zero"
	}
	var parts []string
	for _, sc := range enScales {
		c := n / sc.n
		if c == 0 {
			continue
		}
		n %= sc.n
		parts = append(parts, enBelow1000(c))
		if sc.name != "" {
			parts = append(parts, sc.name)
		}
	}
	return strings.Join(parts, " ")
}

func enBelow1000(n int64) string {
	var parts []string
	if h := n / 100; h > 0 {
		parts = append(parts, enSmall[h]+" hundred")
	}
	switch r := n % 100; {
	case r == 0:
	case r < 20:
		parts = append(parts, enSmall[r])
	case r%10 == 0:
		parts = append(parts, enTens[r/10])
	default:
		parts = append(parts, enTens[r/10]+"-"+enSmall[r%10])
	}
	return strings.Join(parts, " ")
}

var enIrregularOrdinals = map[string]string{"one": "first", "two": "second", "three": "third",
	"five": "fifth", "eight": "eighth", "nine": "ninth", "twelve": "twelfth"}

// enOrdinal changes the last word of the cardinal: "twenty-three" → "twenty-third".
func enOrdinal(n int64, _ gender) string {
	w := enCardinal(n, alone)
	i := strings.LastIndexAny(w, " -") + 1
	head, last := w[:i], w[i:]
	switch {
	case enIrregularOrdinals[last] != "":
		return head + enIrregularOrdinals[last]
	case strings.HasSuffix(last, "y"):
		return head + strings.TrimSuffix(last, "y") + "ieth"
	}
	return head + last + "th"
}

// enYear reads a year in pairs of digits, as English says years.
func enYear(y int64) string {
	if y < 1000 || y >= 10000 || (y >= 2000 && y < 2010) || y%1000 == 0 {
		return enCardinal(y, alone)
	}
	hi, lo := y/100, y%100
	switch {
	case lo == 0:
		return enCardinal(hi, alone) + " hundred"
	case lo < 10:
		return enCardinal(hi, alone) + " oh " + enSmall[lo]
	}
	return enCardinal(hi, alone) + " " + enCardinal(lo, alone)
}

// enDate says "November twenty-third, twenty twenty-six", or, for a date written day first,
// "the twenty-third of November, twenty twenty-six".
func enDate(l *language, y, m, d int, dayFirst bool) string {
	s := l.months[m-1]
	switch {
	case d > 0 && dayFirst:
		s = "the " + enOrdinal(int64(d), alone) + " of " + s
	case d > 0:
		s += " " + enOrdinal(int64(d), alone)
	}
	if y > 0 {
		if d > 0 {
			s += ","
		}
		s += " " + enYear(int64(y))
	}
	return s
}

func enClock(t clock) string {
	h, mark := t.h, strings.ToUpper(t.mark)
	switch {
	case mark != "":
		if h > 12 {
			h -= 12
		}
	case h == 0 || h > 12 || t.zero:
		mark = "AM"
		if h >= 12 {
			mark = "PM"
		}
		h %= 12
	}
	if h == 0 {
		h = 12
	}
	s := enCardinal(int64(h), alone)
	switch {
	case t.m == 0 && mark == "":
		s += " o'clock"
	case t.m == 0:
	case t.m < 10:
		s += " oh " + enSmall[t.m]
	default:
		s += " " + enCardinal(int64(t.m), alone)
	}
	if t.s > 0 {
		s += " and " + enCardinal(int64(t.s), alone) + " second"
		if t.s > 1 {
			s += "s"
		}
	}
	if mark != "" {
		s += " " + mark
	}
	return s
}

// enFraction reads the halves, thirds and quarters a text writes "1/2", "3/4"; other slashes
// ("24/7", "9/11") may not be fractions.
func enFraction(n, d int64) (string, bool) {
	if n < 1 || n >= d || d > 4 {
		return "", false
	}
	name := [...]string{2: "half", 3: "third", 4: "quarter"}[d]
	if n > 1 {
		name += "s"
	}
	return enCardinal(n, alone) + " " + name, true
}

// enOrdinalSuffix reads "1st", "22nd", "3rd", "4th".
func enOrdinalSuffix(s string, i int, n int64) (string, int, bool) {
	if i+2 > len(s) {
		return "", 0, false
	}
	switch strings.ToLower(s[i : i+2]) {
	case "st", "nd", "rd", "th":
		return enOrdinal(n, alone), i + 2, true
	}
	return "", 0, false
}
