package verbalize

import "strings"

// Hebrew counts in the feminine, as a number alone is said ("אחת", "שתיים", "שלוש"), and in the
// masculine before a masculine noun ("עשרים שקלים", "שני שקלים"); "ו" joins the last part
// ("אלף מאתיים שלושים וארבע"). Thousands from three to ten have their own forms ("שלושת
// אלפים"). One comes after its noun ("שקל אחד"); two before it is "שני" or "שתי".
//
// Simplifications: a number before a noun it does not know agrees in the feminine; "1" before
// a noun stays before it in running text; dates are "עשרים ושלושה בנובמבר אלפיים עשרים ושש",
// times "ארבע עשרה וחמש"; no abbreviations are expanded.
func newHebrew(string) *language {
	l := &language{
		tag: "he", cardinal: heCardinal, count: heCount, clock: heClock,
		decimal: '.', minus: "מינוס", plus: "פלוס", point: "נקודה", dot: "נקודה",
		percent: "אחוז", percentGender: masc, and: " ו", number: "מספר", ampersand: "ו", at: "שטרודל",
		months: [12]string{"ינואר", "פברואר", "מרץ", "אפריל", "מאי", "יוני", "יולי", "אוגוסט",
			"ספטמבר", "אוקטובר", "נובמבר", "דצמבר"},
		monthNames: map[string]int{},
		dayMonth:   " ",
	}
	for i, m := range l.months {
		l.monthNames["ב"+m] = i + 1 // "23 בנובמבר"
	}
	l.ordinal = func(n int64, g gender) string { return heCardinal(n, g) }
	l.year = func(y int64) string { return heCardinal(y, alone) }
	l.date = func(y, m, d int, _ bool) string {
		s := "ב" + l.months[m-1]
		if d > 0 {
			s = heJoin(heBelow1000(int64(d), masc)) + " " + s // a day is masculine
		}
		if y > 0 {
			s += " " + heCardinal(int64(y), alone)
		}
		return s
	}
	return l.with("he")
}

var heFem = [...]string{"אפס", "אחת", "שתיים", "שלוש", "ארבע", "חמש", "שש", "שבע", "שמונה", "תשע", "עשר"}

var heMasc = [...]string{"אפס", "אחד", "שניים", "שלושה", "ארבעה", "חמישה", "שישה", "שבעה", "שמונה", "תשעה", "עשרה"}

var heTens = [...]string{"", "", "עשרים", "שלושים", "ארבעים", "חמישים", "שישים", "שבעים", "שמונים", "תשעים"}

var heThousands = [...]string{"", "אלף", "אלפיים", "שלושת אלפים", "ארבעת אלפים", "חמשת אלפים",
	"ששת אלפים", "שבעת אלפים", "שמונת אלפים", "תשעת אלפים", "עשרת אלפים"}

var heScales = [...]scale{{1e12, "טריליון"}, {1e9, "מיליארד"}, {1e6, "מיליון"}}

// heCardinal says n; a noun of gender g follows unless g is alone.
func heCardinal(n int64, g gender) string {
	switch {
	case n == 0:
		return heFem[0]
	case n == 2 && g == masc:
		return "שני"
	case n == 2 && g == fem:
		return "שתי"
	}
	var parts []string
	for _, sc := range heScales {
		switch c := n / sc.n % 1000; {
		case c == 1:
			parts = append(parts, sc.name)
		case c == 2:
			parts = append(parts, "שני "+sc.name)
		case c > 2:
			parts = append(parts, heCardinal(c, masc)+" "+sc.name)
		}
	}
	switch t := n / 1000 % 1000; {
	case t > 0 && t <= 10:
		parts = append(parts, heThousands[t])
	case t > 10:
		parts = append(parts, heJoin(heBelow1000(t, masc))+" אלף")
	}
	parts = append(parts, heBelow1000(n%1000, g)...)
	return heJoin(parts)
}

// heBelow1000 returns the parts of n < 1000: hundreds, tens, units.
func heBelow1000(n int64, g gender) []string {
	units := heFem
	if g == masc {
		units = heMasc
	}
	var parts []string
	switch h := n / 100; {
	case h == 1:
		parts = append(parts, "מאה")
	case h == 2:
		parts = append(parts, "מאתיים")
	case h > 2:
		parts = append(parts, heFem[h]+" מאות")
	}
	switch r := n % 100; {
	case r == 0:
	case r <= 10:
		parts = append(parts, units[r])
	case r < 20 && g == masc:
		parts = append(parts, strings.Replace(heMasc[r-10], "שניים", "שנים", 1)+" עשר")
	case r < 20:
		parts = append(parts, strings.Replace(heFem[r-10], "שתיים", "שתים", 1)+" עשרה")
	default:
		parts = append(parts, heTens[r/10])
		if r%10 > 0 {
			parts = append(parts, units[r%10])
		}
	}
	return parts
}

// heJoin joins parts, "ו" before the last.
func heJoin(parts []string) string {
	if len(parts) > 1 {
		parts[len(parts)-1] = "ו" + parts[len(parts)-1]
	}
	return strings.Join(parts, " ")
}

// heCount says n things: "שקל אחד", "שני שקלים", "עשרים שקלים".
func heCount(n int64, w noun) string {
	if n == 1 {
		if w.g == masc {
			return w.one + " אחד"
		}
		return w.one + " אחת"
	}
	return heCardinal(n, w.g) + " " + w.many
}

func heClock(t clock) string {
	s := heCardinal(int64(t.h), alone)
	if t.m > 0 {
		s += " ו" + heCardinal(int64(t.m), alone)
	}
	if t.s > 0 {
		s += " ו" + heCardinal(int64(t.s), alone)
	}
	return s
}
