package verbalize

import "strings"

// Arabic reads Western and Arabic-Indic digits ("٢٠" as "20"), "٫" and "." as the decimal
// separator, "٬" and "," between thousands. Numbers are in the masculine and the nominative,
// the form used to count and to read aloud: 20 "عشرون", 21 "واحد وعشرون", 1234 "ألف ومائتان
// وأربعة وثلاثون" ("مائة" is spelled with the alif, which espeak-ng reads better). A counted
// noun follows the classical agreement, the noun after the number: one "دولار واحد", two the
// dual "دولاران", 3 to 10 the plural "ثلاثة دولارات", 11 to 99 the accusative singular
// "عشرون دولارًا", and a round hundred or thousand the genitive singular "مائة دولار", with the
// dual in construct "مائتا دولار", "ألفا دولار". The same rule counts thousands and millions
// ("ثلاثة آلاف", "أحد عشر ألفًا").
//
// Simplifications: case endings stay nominative where a sentence would ask for another
// ("ألفان" after a preposition); after a hundred, a number ending in one or two takes the
// singular ("مائة وواحد دولار") where the classical style repeats the noun; only masculine
// currencies are named (no rupee, lira); a fraction counts its noun in the singular. Dates
// are "الثالث والعشرون من نوفمبر ألفان وستة وعشرون", with the Egyptian and Gulf month names;
// times are the hour and minutes as numbers: "أربعة عشر وخمسة".
func newArabic(string) *language {
	l := &language{
		tag: "ar", cardinal: arCardinal, ordinal: arOrdinal, count: arCount, clock: arClock,
		decimal: '.', fracWords: true, minus: "سالب", plus: "زائد", point: "فاصلة", dot: "نقطة",
		percent: "بالمائة", and: " و", number: "رقم", ampersand: "و", at: "آت",
		months: [12]string{"يناير", "فبراير", "مارس", "أبريل", "مايو", "يونيو", "يوليو",
			"أغسطس", "سبتمبر", "أكتوبر", "نوفمبر", "ديسمبر"},
		monthNames: map[string]int{"إبريل": 4, "ابريل": 4, "يوليه": 7, "يونيه": 6},
		dayMonth:   " ",
	}
	l.year = func(y int64) string { return arCardinal(y, alone) }
	l.date = func(y, m, d int, _ bool) string {
		s := l.months[m-1]
		if d > 0 {
			s = arOrdinal(int64(d), alone) + " من " + s
		}
		if y > 0 {
			s += " " + arCardinal(int64(y), alone)
		}
		return s
	}
	return l.with("ar")
}

var arUnits = [...]string{"صفر", "واحد", "اثنان", "ثلاثة", "أربعة", "خمسة", "ستة", "سبعة",
	"ثمانية", "تسعة", "عشرة"}

var arTens = [...]string{"", "", "عشرون", "ثلاثون", "أربعون", "خمسون", "ستون", "سبعون",
	"ثمانون", "تسعون"}

var arHundreds = [...]string{"", "مائة", "مائتان", "ثلاثمائة", "أربعمائة", "خمسمائة", "ستمائة",
	"سبعمائة", "ثمانمائة", "تسعمائة"}

// arScales are the powers of a thousand as counted nouns.
var arScales = [...]struct {
	n int64
	w noun
}{
	{1e12, noun{one: "تريليون", two: "تريليونان", many: "تريليونات", acc: "تريليونًا"}},
	{1e9, noun{one: "مليار", two: "ملياران", many: "مليارات", acc: "مليارًا"}},
	{1e6, noun{one: "مليون", two: "مليونان", many: "ملايين", acc: "مليونًا"}},
	{1e3, noun{one: "ألف", two: "ألفان", many: "آلاف", acc: "ألفًا"}},
}

func arCardinal(n int64, _ gender) string {
	if n == 0 {
		return arUnits[0]
	}
	var parts []string
	for _, sc := range arScales {
		switch c := n / sc.n % 1000; {
		case c == 1:
			parts = append(parts, sc.w.one)
		case c > 1:
			parts = append(parts, arCount(c, sc.w))
		}
	}
	if r := n % 1000; r > 0 {
		parts = append(parts, arBelow1000(r))
	}
	return strings.Join(parts, " و")
}

func arBelow1000(n int64) string {
	var parts []string
	if h := n / 100; h > 0 {
		parts = append(parts, arHundreds[h])
	}
	switch r := n % 100; {
	case r == 0:
	case r <= 10:
		parts = append(parts, arUnits[r])
	case r == 11:
		parts = append(parts, "أحد عشر")
	case r == 12:
		parts = append(parts, "اثنا عشر")
	case r < 20:
		parts = append(parts, arUnits[r-10]+" عشر")
	case r%10 == 0:
		parts = append(parts, arTens[r/10])
	default:
		parts = append(parts, arUnits[r%10]+" و"+arTens[r/10])
	}
	return strings.Join(parts, " و")
}

// arCount says n of w with the agreement of the classical rule (see newArabic).
func arCount(n int64, w noun) string {
	switch n {
	case 1:
		return w.one + " واحد"
	case 2:
		return w.two
	}
	words := arCardinal(n, alone)
	switch r := n % 100; {
	case r >= 3 && r <= 10:
		return words + " " + w.many
	case r >= 11:
		return words + " " + w.acc
	}
	return arConstruct(words) + " " + w.one
}

// arConstruct drops the "ن" of a final dual before the noun it counts: "مائتا دولار".
func arConstruct(words string) string {
	switch strings.TrimPrefix(words[strings.LastIndexByte(words, ' ')+1:], "و") {
	case "مائتان", "ألفان", "مليونان", "ملياران", "تريليونان":
		return strings.TrimSuffix(words, "ن")
	}
	return words
}

var arOrdinals = [...]string{"", "الأول", "الثاني", "الثالث", "الرابع", "الخامس", "السادس",
	"السابع", "الثامن", "التاسع", "العاشر"}

// arOrdinal says the masculine ordinals to 99 ("الحادي والعشرون"), the cardinal beyond.
func arOrdinal(n int64, _ gender) string {
	unit := func(u int64) string {
		if u == 1 {
			return "الحادي"
		}
		return arOrdinals[u]
	}
	switch {
	case n < 1 || n > 99:
		return arCardinal(n, alone)
	case n <= 10:
		return arOrdinals[n]
	case n < 20:
		return unit(n-10) + " عشر"
	case n%10 == 0:
		return "ال" + arTens[n/10]
	}
	return unit(n%10) + " وال" + arTens[n/10]
}

func arClock(t clock) string {
	s := arCardinal(int64(t.h), alone)
	if t.m > 0 {
		s += " و" + arCardinal(int64(t.m), alone)
	}
	if t.s > 0 {
		s += " و" + arCardinal(int64(t.s), alone)
	}
	return s
}
