package pii

import (
	"encoding/json"
	"fmt"
	"math/rand/v2"
	"slices"
	"strings"
	"testing"

	"github.com/convengine/engine"
)

// The corpus: banking utterances in six languages, typed and transcribed (digits said as
// words), generated from a fixed seed, with what each one holds. Valid numbers are made with
// the networks' prefixes and lengths and a Luhn check digit, and with each country's IBAN
// length and mod-97 check digits; the hard negatives are amounts, dates, times, reference and
// order numbers, Luhn failures, IBANs with a wrong check, phone numbers where a card is asked.

// sample is an utterance and what it holds.
type sample struct {
	lang   string
	spoken bool
	pairs  bool // some of its digits are said in pairs ("forty-one eleven")
	text   string
	want   []Match // Kind and Value
}

// digitWords are the words for 0-9 the corpus speaks in, per language.
var digitWords = map[string][10]string{
	"en": {"zero", "one", "two", "three", "four", "five", "six", "seven", "eight", "nine"},
	"es": {"cero", "uno", "dos", "tres", "cuatro", "cinco", "seis", "siete", "ocho", "nueve"},
	"fr": {"zéro", "un", "deux", "trois", "quatre", "cinq", "six", "sept", "huit", "neuf"},
	"de": {"null", "eins", "zwei", "drei", "vier", "fünf", "sechs", "sieben", "acht", "neun"},
	"it": {"zero", "uno", "due", "tre", "quattro", "cinque", "sei", "sette", "otto", "nove"},
	"pt": {"zero", "um", "dois", "três", "quatro", "cinco", "seis", "sete", "oito", "nove"},
	"ar": {"صفر", "واحد", "اثنين", "ثلاثة", "أربعة", "خمسة", "ستة", "سبعة", "ثمانية", "تسعة"},
}

// plusWords say "+" in each language.
var plusWords = map[string]string{"en": "plus", "es": "más", "fr": "plus", "de": "plus", "it": "più", "pt": "mais", "ar": "زائد"}

// templates hold a %s for the number, per language and purpose.
var templates = map[string]map[string][]string{
	"en": {
		"card":  {"my card number is %s", "please block the card %s, I lost it", "I'd like to pay with %s", "the card ending in nothing, it's %s, thanks", "charge it to %s"},
		"iban":  {"send 250 pounds to %s", "my IBAN is %s", "the account is %s, John Smith", "transfer to IBAN %s tomorrow"},
		"phone": {"call me on %s", "my phone number is %s", "you can reach me at %s after six"},
		"email": {"my email is %s", "send the statement to %s please"},
		"neg":   {"I paid %s yesterday", "the transfer of %s is pending", "my reference is %s", "it was on %s", "order %s has not arrived"},
	},
	"es": {
		"card":  {"mi número de tarjeta es %s", "quiero bloquear la tarjeta %s", "pagar con la tarjeta %s por favor"},
		"iban":  {"transfiere 300 euros a %s", "mi IBAN es %s", "la cuenta es %s a nombre de María"},
		"phone": {"mi teléfono es %s", "llámame al %s"},
		"email": {"mi correo es %s"},
		"neg":   {"pagué %s ayer", "la referencia es %s", "fue el %s", "el pedido %s no ha llegado"},
	},
	"fr": {
		"card":  {"mon numéro de carte est %s", "je veux faire opposition sur la carte %s", "payer avec la carte %s"},
		"iban":  {"virez 100 euros sur %s", "mon IBAN est %s", "le compte est %s au nom de Pierre"},
		"phone": {"mon numéro est le %s", "appelez-moi au %s"},
		"email": {"mon adresse est %s"},
		"neg":   {"j'ai payé %s hier", "la référence est %s", "c'était le %s", "la commande %s n'est pas arrivée"},
	},
	"de": {
		"card":  {"meine Kartennummer ist %s", "bitte sperren Sie die Karte %s", "mit der Karte %s bezahlen"},
		"iban":  {"überweisen Sie 80 Euro an %s", "meine IBAN ist %s", "das Konto %s gehört Anna"},
		"phone": {"meine Telefonnummer ist %s", "rufen Sie mich unter %s an"},
		"email": {"meine E-Mail ist %s"},
		"neg":   {"ich habe %s bezahlt", "die Referenz ist %s", "es war am %s", "die Bestellung %s ist nicht angekommen"},
	},
	"it": {
		"card":  {"il numero della mia carta è %s", "bloccate la carta %s per favore"},
		"iban":  {"bonifico di 200 euro a %s", "il mio IBAN è %s"},
		"phone": {"il mio numero è %s"},
		"email": {"la mia email è %s"},
		"neg":   {"ho pagato %s ieri", "il riferimento è %s", "era il %s"},
	},
	"pt": {
		"card":  {"o número do meu cartão é %s", "quero bloquear o cartão %s"},
		"iban":  {"transfira 50 euros para %s", "o meu IBAN é %s"},
		"phone": {"o meu telefone é %s"},
		"email": {"o meu email é %s"},
		"neg":   {"paguei %s ontem", "a referência é %s", "foi no dia %s"},
	},
	"ar": {
		"card":  {"رقم بطاقتي هو %s", "أريد إيقاف البطاقة %s فقد ضاعت", "ادفع بالبطاقة %s من فضلك"},
		"iban":  {"حوّل 500 ريال إلى %s", "رقم الآيبان الخاص بي %s", "الحساب %s باسم أحمد"},
		"phone": {"رقم هاتفي %s", "اتصل بي على %s"},
		"email": {"بريدي الإلكتروني %s"},
		"neg":   {"دفعت %s أمس", "المرجع هو %s", "كان ذلك في %s", "الطلب %s لم يصل"},
	},
}

// arabicIndic writes the ASCII digits of s as Arabic-Indic ones, as an Arabic keyboard types
// them.
func arabicIndic(s string) string {
	return strings.Map(func(r rune) rune {
		if r >= '0' && r <= '9' {
			return '٠' + r - '0'
		}
		return r
	}, s)
}

// corpusIssuers are the prefixes and lengths of the generated cards.
var corpusIssuers = []struct {
	prefix string
	length int
}{
	{"4", 16}, {"4", 16}, {"4", 13}, {"4", 19}, {"51", 16}, {"53", 16}, {"55", 16}, {"2221", 16},
	{"2720", 16}, {"2500", 16}, {"34", 15}, {"37", 15}, {"6011", 16}, {"65", 16}, {"644", 16},
	{"3528", 16}, {"3589", 16}, {"36", 14}, {"38", 16}, {"300", 14}, {"305", 14}, {"62", 16},
	{"62", 19}, {"50", 16}, {"56", 16}, {"67", 19}, {"69", 12},
}

// publishedCards are test numbers the networks and processors publish.
var publishedCards = []string{
	"4111 1111 1111 1111", "4012 8888 8888 1881", "4222 2222 2222 2", "5555 5555 5555 4444",
	"5105 1051 0510 5100", "2223 0031 2200 3222", "3782 822463 10005", "3714 496353 98431",
	"3787 344936 71000", "6011 1111 1111 1117", "6011 0009 9013 9424", "3056 9309 0259 04",
	"3852 0000 0232 37", "3530 1113 3330 0000", "3566 0020 2036 0505", "6200 0000 0000 0005",
	"4000 0566 5566 5556", "5200 8282 8282 8210",
}

// registryIBANs are the examples of the IBAN registry.
var registryIBANs = []string{
	"GB82 WEST 1234 5698 7654 32", "DE89 3704 0044 0532 0130 00", "GB29 NWBK 6016 1331 9268 19",
	"ES91 2100 0418 4502 0005 1332", "FR14 2004 1010 0505 0001 3M02 606", "NL91 ABNA 0417 1643 00",
	"BE68 5390 0754 7034", "IT60 X054 2811 1010 0000 0123 456", "CH93 0076 2011 6238 5295 7",
	"AT61 1904 3002 3457 3201", "PL61 1090 1014 0000 0712 1981 2874", "PT50 0002 0123 1234 5678 9015 4",
	"SE45 5000 0000 0583 9825 7466", "NO93 8601 1117 947", "DK50 0040 0440 1162 43",
	"FI21 1234 5600 0007 85", "IE29 AIBK 9311 5212 3456 78", "LU28 0019 4006 4475 0000",
	"MT84 MALT 0110 0001 2345 MTLC AST0 01S", "SA03 8000 0000 6080 1016 7519",
	"AL47 2121 1009 0000 0002 3569 8741", "AD12 0001 2030 2003 5910 0100", "HR12 1001 0051 8630 0016 0",
	"CY17 0020 0128 0000 0012 0052 7600", "CZ65 0800 0000 1920 0014 5399", "EE38 2200 2210 2014 5685",
	"GR16 0110 1250 0000 0001 2300 695", "HU42 1177 3016 1111 1018 0000 0000", "LT12 1000 0111 0100 1000",
	"SK31 1200 0000 1987 4263 7541", "SI56 2633 0001 2039 086", "TR33 0006 1005 1978 6457 8413 26",
	"AE07 0331 2345 6789 0123 456", "RO49 AAAA 1B31 0075 9384 0000", "LI21 0881 0000 2324 013A A",
}

// corpusCountries are the countries of the generated IBANs and the form of their BBAN:
// 'n' a digit, 'a' an upper-case letter, 'c' either.
var corpusCountries = map[string]string{
	"ES": "nnnnnnnnnnnnnnnnnnnn", "DE": "nnnnnnnnnnnnnnnnnn", "FR": "nnnnnnnnnnccccccccccnnn",
	"GB": "aaaannnnnnnnnnnnnn", "IT": "annnnnnnnnncccccccccccc", "NL": "aaaannnnnnnnnn",
	"PT": "nnnnnnnnnnnnnnnnnnnnn", "BE": "nnnnnnnnnnnn", "CH": "nnnnncccccccccccc",
	"AT": "nnnnnnnnnnnnnnnn", "PL": "nnnnnnnnnnnnnnnnnnnnnnnn", "IE": "aaaannnnnnnnnnnnnn",
	"LU": "nnnccccccccccccc", "SE": "nnnnnnnnnnnnnnnnnnnn", "NO": "nnnnnnnnnnn",
	"BR": "nnnnnnnnnnnnnnnnnnnnnnnac", "SA": "nnnnnnnnnnnnnnnnnnnn", "MT": "aaaannnnncccccccccccccccccc",
}

// gen makes the corpus's values.
type gen struct {
	r      *rand.Rand
	paired *bool // set when digits are said in pairs, if not nil
}

func (g gen) digits(n int) string {
	b := make([]byte, n)
	for i := range b {
		b[i] = byte('0' + g.r.IntN(10))
	}
	return string(b)
}

// luhnDigit returns the check digit that makes body+digit Luhn-valid.
func luhnDigit(body string) byte {
	for c := byte('0'); c <= '9'; c++ {
		if luhn(body + string(c)) {
			return c
		}
	}
	panic("unreachable")
}

func (g gen) card() string {
	is := corpusIssuers[g.r.IntN(len(corpusIssuers))]
	body := is.prefix + g.digits(is.length-1-len(is.prefix))
	return body + string(luhnDigit(body))
}

// badCard returns a card-like number that is not a card: a valid prefix with a wrong check
// digit, or a Luhn-valid number with a prefix no network uses.
func (g gen) badCard() string {
	if g.r.IntN(2) == 0 {
		c := g.card()
		last := (c[len(c)-1]-'0'+byte(1+g.r.IntN(9)))%10 + '0'
		return c[:len(c)-1] + string(last)
	}
	prefixes := []string{"1", "7", "8", "9", "0", "31", "33", "28", "29"}
	body := prefixes[g.r.IntN(len(prefixes))]
	body += g.digits(15 - len(body))
	return body + string(luhnDigit(body))
}

func (g gen) iban(bad bool) string {
	codes := make([]string, 0, len(corpusCountries))
	for c := range corpusCountries {
		codes = append(codes, c)
	}
	slices.Sort(codes)
	cc := codes[g.r.IntN(len(codes))]
	var b strings.Builder
	for _, f := range corpusCountries[cc] {
		switch {
		case f == 'n' || f == 'c' && g.r.IntN(3) > 0:
			b.WriteByte(byte('0' + g.r.IntN(10)))
		default:
			b.WriteByte(byte('A' + g.r.IntN(26)))
		}
	}
	bban := b.String()
	check := 98 - mod97rem(bban+cc+"00")
	if bad {
		check = (check-2+1+g.r.IntN(96))%97 + 2 // any other check from 02 to 98
	}
	return fmt.Sprintf("%s%02d%s", cc, check, bban)
}

// mod97rem returns s (digits and upper-case letters) modulo 97, letters read as 10 to 35.
func mod97rem(s string) int {
	r := 0
	for i := range len(s) {
		c := s[i]
		if c >= 'A' && c <= 'Z' {
			r = (r*100 + int(c-'A') + 10) % 97
		} else {
			r = (r*10 + int(c-'0')) % 97
		}
	}
	return r
}

// group writes digits in groups of the given sizes, the rest in fours.
func group(s, sep string, sizes ...int) string {
	var parts []string
	for len(s) > 0 {
		n := 4
		if len(sizes) > 0 {
			n, sizes = sizes[0], sizes[1:]
		}
		n = min(n, len(s))
		parts, s = append(parts, s[:n]), s[n:]
	}
	return strings.Join(parts, sep)
}

// typedCard writes a card as people type it.
func (g gen) typedCard(c string) string {
	sep := []string{" ", " ", "-", ""}[g.r.IntN(4)]
	switch {
	case len(c) == 15:
		return group(c, sep, 4, 6, 5)
	case len(c) == 14 && g.r.IntN(2) == 0:
		return group(c, sep, 4, 6, 4)
	}
	return group(c, sep)
}

// say speaks digits as words of lang, in groups joined by commas or blanks, sometimes with
// "double" (English) or the first group typed.
func (g gen) say(lang, digits string) string {
	w := digitWords[lang]
	var b strings.Builder
	mixed := g.r.IntN(5) == 0 && len(digits) > 8
	for i := 0; i < len(digits); i++ {
		if i > 0 {
			if i%4 == 0 && g.r.IntN(2) == 0 {
				b.WriteString(", ")
			} else {
				b.WriteString(" ")
			}
		}
		if mixed && i == 0 {
			b.WriteString(digits[:4])
			i = 3
			continue
		}
		d := digits[i] - '0'
		if lang == "en" && i+1 < len(digits) && digits[i+1] == digits[i] && g.r.IntN(2) == 0 && (i+1)%4 != 0 {
			b.WriteString("double " + w[d])
			i++
			continue
		}
		if lang == "en" && d == 0 && g.r.IntN(2) == 0 {
			b.WriteString("oh")
			continue
		}
		b.WriteString(w[d])
	}
	return b.String()
}

// tensWords are the words for 10 to 19 and for the tens from 20 to 90, per language.
var tensWords = map[string]struct{ teens, tens [10]string }{
	"en": {
		[10]string{"ten", "eleven", "twelve", "thirteen", "fourteen", "fifteen", "sixteen", "seventeen", "eighteen", "nineteen"},
		[10]string{2: "twenty", "thirty", "forty", "fifty", "sixty", "seventy", "eighty", "ninety"},
	},
	"es": {
		[10]string{"diez", "once", "doce", "trece", "catorce", "quince", "dieciséis", "diecisiete", "dieciocho", "diecinueve"},
		[10]string{2: "veinte", "treinta", "cuarenta", "cincuenta", "sesenta", "setenta", "ochenta", "noventa"},
	},
	"fr": {
		[10]string{"dix", "onze", "douze", "treize", "quatorze", "quinze", "seize", "dix-sept", "dix-huit", "dix-neuf"},
		[10]string{2: "vingt", "trente", "quarante", "cinquante", "soixante"},
	},
	"de": {
		[10]string{"zehn", "elf", "zwölf", "dreizehn", "vierzehn", "fünfzehn", "sechzehn", "siebzehn", "achtzehn", "neunzehn"},
		[10]string{2: "zwanzig", "dreißig", "vierzig", "fünfzig", "sechzig", "siebzig", "achtzig", "neunzig"},
	},
	"it": {
		[10]string{"dieci", "undici", "dodici", "tredici", "quattordici", "quindici", "sedici", "diciassette", "diciotto", "diciannove"},
		[10]string{2: "venti", "trenta", "quaranta", "cinquanta", "sessanta", "settanta", "ottanta", "novanta"},
	},
	"pt": {
		[10]string{"dez", "onze", "doze", "treze", "catorze", "quinze", "dezesseis", "dezessete", "dezoito", "dezenove"},
		[10]string{2: "vinte", "trinta", "quarenta", "cinquenta", "sessenta", "setenta", "oitenta", "noventa"},
	},
	"ar": {
		[10]string{"عشرة", "أحد عشر", "اثنا عشر", "ثلاثة عشر", "أربعة عشر", "خمسة عشر", "ستة عشر", "سبعة عشر", "ثمانية عشر", "تسعة عشر"},
		[10]string{2: "عشرون", "ثلاثون", "أربعون", "خمسون", "ستون", "سبعون", "ثمانون", "تسعون"},
	},
}

// sayNumber says n, from 10 to 99, as a speaker of lang does.
func (g gen) sayNumber(lang string, n int) string {
	t, u := n/10, n%10
	w := tensWords[lang]
	unit := digitWords[lang][u]
	switch {
	case n < 20:
		return w.teens[u]
	case lang == "fr" && n >= 60:
		base, rest := "soixante", n-60
		if n >= 80 {
			base, rest = "quatre-vingt", n-80
		}
		switch {
		case rest == 0 && n == 80:
			return base + "s" // quatre-vingts
		case rest == 0:
			return base
		case rest == 1 || rest == 11:
			if n < 80 {
				return base + " et " + g.sayNumberOrDigit(lang, rest)
			}
		}
		return base + "-" + g.sayNumberOrDigit(lang, rest)
	case u == 0:
		if lang == "ar" && g.r.IntN(2) == 0 {
			return strings.TrimSuffix(w.tens[t], "ون") + "ين" // the spoken form: "أربعين"
		}
		return w.tens[t]
	}
	switch lang {
	case "en":
		return w.tens[t] + []string{"-", " "}[g.r.IntN(2)] + unit
	case "es":
		if t == 2 { // one word: veintiuno, veintidós…
			if accented, ok := map[int]string{2: "dós", 3: "trés", 6: "séis"}[u]; ok {
				unit = accented
			}
			return "veinti" + unit
		}
		return w.tens[t] + " y " + unit
	case "fr":
		if u == 1 {
			return w.tens[t] + []string{" et un", "-et-un"}[g.r.IntN(2)]
		}
		return w.tens[t] + "-" + unit
	case "de":
		if u == 1 {
			unit = "ein"
		}
		return unit + "und" + w.tens[t]
	case "it":
		if u == 1 || u == 8 {
			return w.tens[t][:len(w.tens[t])-1] + unit // ventuno, trentotto
		}
		if u == 3 {
			unit = "tré"
		}
		return w.tens[t] + unit
	case "pt":
		return w.tens[t] + " e " + unit
	case "ar":
		return unit + " و" + w.tens[t]
	}
	panic("no words for " + lang)
}

// sayNumberOrDigit says n from 1 to 19: a digit, or a number.
func (g gen) sayNumberOrDigit(lang string, n int) string {
	if n < 10 {
		return digitWords[lang][n]
	}
	return g.sayNumber(lang, n)
}

// sayPairs speaks digits in pairs, as French phone numbers and card and IBAN groups are said:
// "zéro six, douze, trente-quatre", "forty-one eleven"; a pair starting with 0 and a digit
// left over are said digit by digit. Groups of group digits (0: none) are split by a pause or
// a blank; a speaker pauses after a round ten ("forty, one") and after a "quatre" said alone
// before "vingt" ("zéro quatre, vingt-deux"), where the words would run into one number.
func (g gen) sayPairs(lang, digits string, group int) string {
	if g.paired != nil {
		*g.paired = true
	}
	var b strings.Builder
	prev := "" // the pair said before
	for i := 0; i < len(digits); {
		n := min(2, len(digits)-i)
		if group > 0 && i%group+n > group {
			n = 1
		}
		pair := digits[i : i+n]
		if i > 0 {
			pause := g.r.IntN(3) == 0 || group > 0 && i%group == 0 && g.r.IntN(2) == 0
			if prev[0] != '0' && prev[len(prev)-1] == '0' || lang == "fr" && strings.HasSuffix(prev, "4") && (len(prev) == 1 || prev[0] == '0') && pair[0] == '2' {
				pause = true
			}
			b.WriteString(map[bool]string{true: ", ", false: " "}[pause])
		}
		if n == 2 && pair[0] != '0' {
			b.WriteString(g.sayNumber(lang, int(pair[0]-'0')*10+int(pair[1]-'0')))
		} else {
			b.WriteString(g.say(lang, pair))
		}
		prev = pair
		i += n
	}
	return b.String()
}

// sayIBAN speaks an IBAN: the country code as two letters, letters spelled, digits said.
func (g gen) sayIBAN(lang, iban string) string {
	var parts []string
	if g.r.IntN(2) == 0 {
		parts = append(parts, iban[:1]+" "+iban[1:2])
	} else {
		parts = append(parts, iban[:2])
	}
	run := ""
	pairs := g.r.IntN(2) == 0
	flush := func() {
		if run != "" {
			if pairs {
				parts = append(parts, g.sayPairs(lang, run, 0))
			} else {
				parts = append(parts, g.say(lang, run))
			}
			run = ""
		}
	}
	for i := 2; i < len(iban); i++ {
		if c := iban[i]; c >= 'A' && c <= 'Z' {
			flush()
			parts = append(parts, string(c))
			continue
		}
		run += iban[i : i+1]
	}
	flush()
	return strings.Join(parts, " ")
}

func (g gen) typedIBAN(iban string) string {
	switch g.r.IntN(4) {
	case 0:
		return iban
	case 1:
		return strings.ToLower(group(iban, " "))
	}
	return group(iban, " ")
}

// phone returns a typed phone number and its value.
func (g gen) phone() (string, string) {
	switch g.r.IntN(7) {
	case 0:
		d := "6" + g.digits(8)
		return "+34 " + group(d, " ", 3, 3, 3), "+34" + d
	case 1:
		d := "2" + g.digits(9)
		return fmt.Sprintf("(%s) %s-%s", d[:3], d[3:6], d[6:]), d
	case 2:
		d := "06" + g.digits(8)
		return group(d, []string{" ", "."}[g.r.IntN(2)], 2, 2, 2, 2, 2), d
	case 3:
		d := "7" + g.digits(8)
		return group(d, " ", 3, 3, 3), d
	case 4:
		d := "030" + g.digits(7)
		return d[:3] + " " + d[3:], d
	case 5:
		d := "55" + g.digits(8)
		return group(d, " ", 2, 4, 4), d
	}
	d := "4420" + g.digits(8)
	return "+44 " + group(d[2:], " ", 2, 4, 4), "+" + d
}

// negative returns something that must not be flagged.
func (g gen) negative(lang string) string {
	switch g.r.IntN(12) {
	case 0:
		return fmt.Sprintf("$%d,%03d.%02d", 1+g.r.IntN(99), g.r.IntN(1000), g.r.IntN(100))
	case 1:
		return fmt.Sprintf("%d %03d,%02d €", 1+g.r.IntN(99), g.r.IntN(1000), g.r.IntN(100))
	case 2:
		return fmt.Sprintf("%d.%03d.%03d,%02d EUR", 1+g.r.IntN(9), g.r.IntN(1000), g.r.IntN(1000), g.r.IntN(100))
	case 3:
		return fmt.Sprintf("%02d/%02d/%d", 1+g.r.IntN(28), 1+g.r.IntN(12), 2000+g.r.IntN(30))
	case 4:
		return fmt.Sprintf("%d-%02d-%02d at %02d:%02d", 2000+g.r.IntN(30), 1+g.r.IntN(12), 1+g.r.IntN(28), g.r.IntN(24), g.r.IntN(60))
	case 5:
		return fmt.Sprintf("REF-%s-%s", g.digits(4), g.digits(4))
	case 6:
		return "ORD-" + g.digits(8) + "-" + g.digits(4)
	case 7:
		return g.digits(10 + g.r.IntN(4))
	case 8:
		return g.typedCard(g.badCard())
	case 9:
		return g.typedIBAN(g.iban(true))
	case 10:
		return fmt.Sprintf("%02d.%02d.%d", 1+g.r.IntN(28), 1+g.r.IntN(12), 2000+g.r.IntN(30))
	}
	return "#" + g.digits(6) + " " + g.digits(6)
}

// corpus generates n samples from seed.
func corpus(seed uint64, n int) []sample {
	var paired bool
	g := gen{rand.New(rand.NewPCG(seed, seed^0x9e3779b97f4a7c15)), &paired}
	langs := Locales()
	var out []sample
	add := func(lang string, spoken bool, purpose, value string, want ...Match) {
		ts := templates[lang][purpose]
		// Arabic users type digits as Arabic-Indic ones as often as not: cards and the
		// numbers that must not be taken for cards.
		if lang == "ar" && (purpose == "card" && !spoken && (len(want) == 0 || want[0].Kind == Card) || purpose == "neg") && g.r.IntN(2) == 0 {
			value = arabicIndic(value)
		}
		out = append(out, sample{lang, spoken, paired, fmt.Sprintf(ts[g.r.IntN(len(ts))], value), want})
		paired = false
	}
	for _, c := range publishedCards {
		add("en", false, "card", c, Match{Kind: Card, Value: strings.NewReplacer(" ", "").Replace(c)})
	}
	for _, c := range registryIBANs {
		add("en", false, "iban", c, Match{Kind: IBAN, Value: strings.ReplaceAll(c, " ", "")})
	}
	for len(out) < n {
		lang := langs[g.r.IntN(len(langs))]
		switch k := g.r.IntN(17); k {
		case 0, 1:
			c := g.card()
			add(lang, false, "card", g.typedCard(c), Match{Kind: Card, Value: c})
		case 2, 3:
			c := g.card()
			if g.r.IntN(2) == 0 {
				add(lang, true, "card", g.sayPairs(lang, c, 4), Match{Kind: Card, Value: c})
			} else {
				add(lang, true, "card", g.say(lang, c), Match{Kind: Card, Value: c})
			}
		case 4:
			i := g.iban(false)
			add(lang, false, "iban", g.typedIBAN(i), Match{Kind: IBAN, Value: i})
		case 5:
			i := g.iban(false)
			add(lang, true, "iban", g.sayIBAN(lang, i), Match{Kind: IBAN, Value: i})
		case 6:
			text, v := g.phone()
			add(lang, false, "phone", text, Match{Kind: Phone, Value: v})
		case 7:
			// A phone number where a card is asked for.
			text, v := g.phone()
			add(lang, false, "card", text, Match{Kind: Phone, Value: v})
		case 8:
			if lang == "fr" {
				// A French number, said in pairs the usual way.
				d := "0" + string("123456779"[g.r.IntN(9)]) + g.digits(8)
				add(lang, true, "phone", g.sayPairs(lang, d, 0), Match{Kind: Phone, Value: d})
				break
			}
			d := "6" + g.digits(8)
			add(lang, true, "phone", g.say(lang, d), Match{Kind: Phone, Value: d})
		case 9:
			user := []string{"ana.garcia", "j.smith", "pierre+bank", "m_rossi", "hans.muller42"}[g.r.IntN(5)]
			dom := []string{"example.com", "correo.es", "mail.example.fr", "example.co.uk"}[g.r.IntN(4)]
			add(lang, false, "email", user+"@"+dom, Match{Kind: Email, Value: user + "@" + dom})
		case 10, 11:
			add(lang, false, "neg", g.negative(lang))
		case 12:
			// A spoken number that is no card, no IBAN.
			switch g.r.IntN(3) {
			case 0:
				add(lang, true, "card", g.say(lang, g.badCard()))
			case 1:
				add(lang, true, "card", g.sayPairs(lang, g.badCard(), 4))
			default:
				add(lang, true, "iban", g.sayIBAN(lang, g.iban(true)))
			}
		case 13:
			// A card number said inside a transfer request, with an amount and a date.
			c := g.card()
			text := fmt.Sprintf(templates[lang]["card"][0], g.typedCard(c)) + ", " +
				fmt.Sprintf(templates[lang]["neg"][0], g.negative(lang))
			out = append(out, sample{lang, false, false, text, []Match{{Kind: Card, Value: c}}})
		case 14:
			// A card with its expiry and security code after it, typed or said.
			c := g.card()
			cvv := g.digits(3)
			if g.r.IntN(2) == 0 {
				add(lang, false, "card", fmt.Sprintf("%s exp %02d/%02d cvv %s", g.typedCard(c), 1+g.r.IntN(12), 26+g.r.IntN(5), cvv), Match{Kind: Card, Value: c})
			} else {
				add(lang, true, "card", g.say(lang, c)+", "+g.say(lang, cvv), Match{Kind: Card, Value: c})
			}
		case 15:
			if g.r.IntN(2) == 0 {
				// A reference said digit by digit, too short for a card, too long for anything.
				add(lang, true, "neg", g.say(lang, g.digits(6+g.r.IntN(2))))
				break
			}
			// Numbers from 10 to 99 said one after another: amounts, ages, scores.
			var list []string
			for range 2 + g.r.IntN(7) {
				list = append(list, g.sayNumber(lang, 10+g.r.IntN(90)))
			}
			paired = true
			add(lang, true, "neg", strings.Join(list, ", "))
		case 16:
			// A phone number typed with its country code, or said with a word for plus.
			if g.r.IntN(2) == 0 {
				d := "33" + "6" + g.digits(8)
				said := g.say(lang, d)
				if lang == "fr" {
					said = g.sayNumber(lang, 33) + ", " + g.say(lang, "6") + ", " + g.sayPairs(lang, d[3:], 0)
				}
				add(lang, true, "phone", plusWords[lang]+" "+said, Match{Kind: Phone, Value: "+" + d})
			} else {
				d := "1" + "2" + g.digits(9)
				add(lang, false, "phone", "+"+d[:1]+" "+d[1:4]+" "+d[4:7]+" "+d[7:], Match{Kind: Phone, Value: "+" + d})
			}
		}
	}
	return out
}

// score counts, per kind, matches found that were wanted (tp), found but not wanted (fp) and
// wanted but not found (fn).
type score struct{ tp, fp, fn int }

func (s score) precision() float64 {
	if s.tp+s.fp == 0 {
		return 1
	}
	return float64(s.tp) / float64(s.tp+s.fp)
}

func (s score) recall() float64 {
	if s.tp+s.fn == 0 {
		return 1
	}
	return float64(s.tp) / float64(s.tp+s.fn)
}

// TestCorpus computes precision and recall per kind on the generated corpus: for cards and
// IBANs recall must be at least 99% and precision at least 95%.
func TestCorpus(t *testing.T) {
	d, err := New(nil)
	if err != nil {
		t.Fatal(err)
	}
	samples := corpus(32, 2000)
	scores := map[Kind]*score{}
	forms := map[string]*score{}
	byLang := map[string]*score{} // "card ar"
	lang := func(k Kind, l string) *score {
		key := k.String() + " " + l
		if byLang[key] == nil {
			byLang[key] = &score{}
		}
		return byLang[key]
	}
	for _, k := range Kinds() {
		scores[k] = &score{}
	}
	langs := map[string]bool{}
	spoken, pairs, negatives := 0, 0, 0
	for _, s := range samples {
		langs[s.lang] = true
		if s.spoken {
			spoken++
		}
		if s.pairs {
			pairs++
		}
		if len(s.want) == 0 {
			negatives++
		}
		got := d.Find(s.text)
		form := "typed"
		switch {
		case s.pairs:
			form = "pairs"
		case s.spoken:
			form = "spoken"
		}
		want := slices.Clone(s.want)
		for _, m := range got {
			key := m.Kind.String() + " " + form
			if forms[key] == nil {
				forms[key] = &score{}
			}
			i := slices.IndexFunc(want, func(w Match) bool { return w.Kind == m.Kind && w.Value == m.Value })
			if i >= 0 {
				scores[m.Kind].tp++
				forms[key].tp++
				lang(m.Kind, s.lang).tp++
				want = slices.Delete(want, i, i+1)
				continue
			}
			scores[m.Kind].fp++
			forms[key].fp++
			lang(m.Kind, s.lang).fp++
			if m.Kind != Email {
				t.Logf("false %v: %q (%s)", m.Kind, s.text, m.Value)
			}
		}
		for _, w := range want {
			key := w.Kind.String() + " " + form
			if forms[key] == nil {
				forms[key] = &score{}
			}
			scores[w.Kind].fn++
			forms[key].fn++
			lang(w.Kind, s.lang).fn++
			if w.Kind != Email {
				t.Logf("missed %v: %q (%s)", w.Kind, s.text, w.Value)
			}
		}
	}
	t.Logf("corpus: %d utterances in %d languages, %d transcribed with spoken digits (%d with numbers said in pairs), %d with nothing to find",
		len(samples), len(langs), spoken, pairs, negatives)
	for _, k := range []Kind{Card, IBAN, Phone, Email} {
		s := scores[k]
		t.Logf("%-6v precision %.2f%% recall %.2f%% (tp %d, fp %d, fn %d)", k, 100*s.precision(), 100*s.recall(), s.tp, s.fp, s.fn)
	}
	keys := make([]string, 0, len(forms))
	for k := range forms {
		keys = append(keys, k)
	}
	slices.Sort(keys)
	for _, k := range keys {
		s := forms[k]
		t.Logf("  %-14s precision %.2f%% recall %.2f%% (tp %d, fp %d, fn %d)", k, 100*s.precision(), 100*s.recall(), s.tp, s.fp, s.fn)
	}
	for _, k := range []Kind{Card, IBAN, Phone} {
		var line strings.Builder
		for _, l := range Locales() {
			s := lang(k, l)
			fmt.Fprintf(&line, " %s %d/%d/%d", l, s.tp, s.fp, s.fn)
		}
		t.Logf("  %-6v by language (tp/fp/fn):%s", k, line.String())
	}
	if len(samples) < 1000 || len(langs) < 7 || spoken < 200 || negatives < 100 {
		t.Errorf("corpus too small: %d samples, %d languages, %d spoken, %d negatives", len(samples), len(langs), spoken, negatives)
	}
	for _, k := range []Kind{Card, IBAN} {
		if s := scores[k]; s.recall() < 0.99 || s.precision() < 0.95 {
			t.Errorf("%v: precision %.4f, recall %.4f; want ≥ 0.95 and ≥ 0.99", k, s.precision(), s.recall())
		}
	}
}

// TestCorpusNumbers checks the corpus's own numbers, so that its figures mean something: the
// published cards and registry IBANs are valid, the generated bad ones are not.
func TestCorpusNumbers(t *testing.T) {
	for _, c := range publishedCards {
		if v := strings.ReplaceAll(c, " ", ""); !isCard(v) {
			t.Errorf("published card %s: not a card", c)
		}
	}
	for _, i := range registryIBANs {
		if v := strings.ReplaceAll(i, " ", ""); !isIBAN(v) {
			t.Errorf("registry IBAN %s: not an IBAN", i)
		}
	}
	for cc, f := range corpusCountries {
		if len(f)+4 != ibanLengths[cc] {
			t.Errorf("corpus country %s: BBAN of %d, want %d", cc, len(f), ibanLengths[cc]-4)
		}
	}
	g := gen{rand.New(rand.NewPCG(1, 2)), nil}
	for range 1000 {
		if c := g.card(); !isCard(c) {
			t.Fatalf("generated card %s is not valid", c)
		}
		if c := g.badCard(); isCard(c) {
			t.Fatalf("generated bad card %s is valid", c)
		}
		if i := g.iban(false); !isIBAN(i) {
			t.Fatalf("generated IBAN %s is not valid", i)
		}
		if i := g.iban(true); isIBAN(i) {
			t.Fatalf("generated bad IBAN %s is valid", i)
		}
	}
}

// The forms: card numbers and IBANs as users paste them from statements, PDFs and other apps,
// each written in one way a person still reads as the number (groups joined by dots, slashes,
// a no-break space; invisible characters between digits; full-width, circled, superscript
// digits), and the hard negatives written the same way.

// numberForm is one way of writing a number.
type numberForm struct {
	name string
	// card and iban write a card number or an IBAN in this form; nil when the form is not
	// one of that kind's.
	card, iban func(g gen, v string) string
	// said speaks a number in this form, in a transcript; nil when the form is not spoken.
	said func(g gen, lang, v string) string
	// negatives write, in this form, what must not be found.
	negatives []func(g gen) string
}

// joined writes the groups of a card (4-4-4-4, 4-6-5 for 15 digits) or an IBAN (fours)
// joined by sep.
func joined(sep string) func(g gen, v string) string {
	return func(g gen, v string) string {
		if len(v) == 15 && v[0] == '3' {
			return group(v, sep, 4, 6, 5)
		}
		return group(v, sep)
	}
}

// between puts r between some of the characters of s (digits and letters), as apps and PDFs
// put invisible characters inside what they show.
func between(r string) func(g gen, v string) string {
	return func(g gen, v string) string {
		typed := group(v, []string{" ", "", "-"}[g.r.IntN(3)])
		var b strings.Builder
		n := 0
		for i, c := range typed {
			if i > 0 && c != ' ' && c != '-' && typed[i-1] != ' ' && typed[i-1] != '-' && (g.r.IntN(4) == 0 || n == 0 && i == 4) {
				b.WriteString(r)
				n++
			}
			b.WriteRune(c)
		}
		return b.String()
	}
}

// after puts one of marks after some digits of s.
func after(marks ...string) func(g gen, v string) string {
	return func(g gen, v string) string {
		var b strings.Builder
		for i, c := range group(v, " ") {
			b.WriteRune(c)
			if c >= '0' && c <= '9' && (g.r.IntN(3) == 0 || i == 0) {
				b.WriteString(marks[g.r.IntN(len(marks))])
			}
		}
		return b.String()
	}
}

// digitsAs writes the digits of s (and its letters, when letters is set) with these runes.
func digitsAs(digits [10]rune, letters func(rune) rune, sep string) func(g gen, v string) string {
	return func(g gen, v string) string {
		return strings.Map(func(r rune) rune {
			switch {
			case r >= '0' && r <= '9':
				return digits[r-'0']
			case r >= 'A' && r <= 'Z' && letters != nil:
				return letters(r)
			}
			return r
		}, joined(sep)(g, v))
	}
}

var (
	fullWidth   = [10]rune{'０', '１', '２', '３', '４', '５', '６', '７', '８', '９'}
	circled     = [10]rune{'⓪', '①', '②', '③', '④', '⑤', '⑥', '⑦', '⑧', '⑨'}
	superscript = [10]rune{'⁰', '¹', '²', '³', '⁴', '⁵', '⁶', '⁷', '⁸', '⁹'}
	arabicDigit = [10]rune{'٠', '١', '٢', '٣', '٤', '٥', '٦', '٧', '٨', '٩'}
)

// saidIn says the digits of a card in groups of size joined by sep.
func saidIn(size int, sep string) func(g gen, lang, v string) string {
	return func(g gen, lang, v string) string {
		var parts []string
		for i := 0; i < len(v); i += size {
			parts = append(parts, g.say(lang, v[i:min(i+size, len(v))]))
		}
		return strings.Join(parts, sep)
	}
}

// saidWith says a number with r between some of the words.
func saidWith(r string) func(g gen, lang, v string) string {
	return func(g gen, lang, v string) string {
		words := strings.Split(g.say(lang, v), " ")
		for i := 1; i < len(words); i += 1 + g.r.IntN(3) {
			words[i] = r + words[i]
		}
		return strings.Join(words, " ")
	}
}

// badTyped returns a card-like number failing the card checks, written by f.
func badTyped(f func(g gen, v string) string) func(g gen) string {
	return func(g gen) string { return f(g, g.badCard()) }
}

// badIBAN returns an IBAN with a wrong check, written by f.
func badIBAN(f func(g gen, v string) string) func(g gen) string {
	return func(g gen) string { return f(g, g.iban(true)) }
}

// amounts, dates, phone numbers and references written with sep where their own separators go.
func amountWith(sep string) func(g gen) string {
	return func(g gen) string {
		return fmt.Sprintf("%d%s%03d%s%03d%s%03d,%02d", 1+g.r.IntN(99), sep, g.r.IntN(1000), sep, g.r.IntN(1000), sep, g.r.IntN(1000), g.r.IntN(100))
	}
}

func dateWith(sep string) func(g gen) string {
	return func(g gen) string {
		return fmt.Sprintf("%02d%s%02d%s%d %02d:%02d", 1+g.r.IntN(28), sep, 1+g.r.IntN(12), sep, 2000+g.r.IntN(30), g.r.IntN(24), g.r.IntN(60))
	}
}

func phoneWith(sep string) func(g gen) string {
	return func(g gen) string { return group("0"+string(byte('1'+g.r.IntN(9)))+g.digits(8), sep, 2, 2, 2, 2, 2) }
}

func refWith(sep string) func(g gen) string {
	return func(g gen) string {
		return fmt.Sprintf("%d%s%s%s%s%s%s", 2000+g.r.IntN(30), sep, g.digits(4), sep, g.digits(4), sep, g.digits(2+g.r.IntN(3)))
	}
}

// separated is the form of groups joined by sep, with its hard negatives.
func separated(name, sep string, said func(g gen, lang, v string) string) numberForm {
	return numberForm{name: name, card: joined(sep), iban: joined(sep), said: said, negatives: []func(g gen) string{
		badTyped(joined(sep)), badIBAN(joined(sep)), amountWith(sep), dateWith(sep), phoneWith(sep), refWith(sep),
	}}
}

// numberForms are the forms of the corpus.
var numberForms = []numberForm{
	separated("dots", ".", saidIn(4, ". ")),
	separated("slashes", "/", nil),
	separated("commas", ",", saidIn(4, ", ")),
	separated("underscores", "_", nil),
	separated("en dash", "–", nil),
	separated("spaced en dash", " – ", nil),
	separated("no-break space", "\u00a0", nil),
	separated("two spaces", "  ", nil),
	separated("tab", "\t", nil),
	separated("newline", "\n", saidIn(4, "\n")),
	{name: "every digit spaced", card: func(g gen, v string) string { return group(v, " ", slices.Repeat([]int{1}, len(v))...) }, iban: func(g gen, v string) string { return group(v, " ", slices.Repeat([]int{1}, len(v))...) },
		said: saidIn(1, " "), negatives: []func(g gen) string{
			badTyped(func(g gen, v string) string { return group(v, " ", slices.Repeat([]int{1}, len(v))...) }),
			func(g gen) string { return group(g.digits(6), " ", 1, 1, 1, 1, 1, 1) }, // a one-time code
		}},
	{name: "groups of three", card: func(g gen, v string) string { return group(v, " ", 3, 3, 3, 3, 3, 3) },
		iban: func(g gen, v string) string { return group(v, " ", 3, 3, 3, 3, 3, 3, 3, 3, 3, 3, 3) },
		said: saidIn(3, ", "), negatives: []func(g gen) string{
			badTyped(func(g gen, v string) string { return group(v, " ", 3, 3, 3, 3, 3, 3) }),
			func(g gen) string { return "$" + group(g.digits(12), ",", 3, 3, 3, 3) + ".00" },
			func(g gen) string { return group(g.digits(15), ".", 3, 3, 3, 3, 3) },
			func(g gen) string { return group("6"+g.digits(8), " ", 3, 3, 3) }, // a Spanish phone number
		}},
	{name: "parentheses", card: func(g gen, v string) string { return "(" + joined(") (")(g, v) + ")" },
		iban: func(g gen, v string) string { return "(" + joined(")(")(g, v) + ")" },
		negatives: []func(g gen) string{
			badTyped(func(g gen, v string) string { return "(" + joined(") (")(g, v) + ")" }),
			func(g gen) string { return fmt.Sprintf("(%s) %s-%s", "2"+g.digits(2), g.digits(3), g.digits(4)) },
		}},
	{name: "zero-width space", card: between("\u200b"), iban: between("\u200b"), said: saidWith("\u200b"),
		negatives: []func(g gen) string{badTyped(between("\u200b")), badIBAN(between("\u200b"))}},
	{name: "right-to-left mark", card: between("\u200f"), iban: between("\u200f"), said: saidWith("\u200f"),
		negatives: []func(g gen) string{badTyped(between("\u200f")), badIBAN(between("\u200f"))}},
	{name: "soft hyphen", card: between("\u00ad"), iban: between("\u00ad"),
		negatives: []func(g gen) string{badTyped(between("\u00ad"))}},
	{name: "combining mark", card: after("\u0301", "\u0332", "\u20e3"),
		negatives: []func(g gen) string{badTyped(after("\u0301", "\u0332", "\u20e3"))}},
	{name: "circled digits", card: digitsAs(circled, nil, " "), iban: digitsAs(circled, nil, " "),
		negatives: []func(g gen) string{badTyped(digitsAs(circled, nil, " "))}},
	{name: "superscript digits", card: digitsAs(superscript, nil, " "), iban: digitsAs(superscript, nil, " "),
		negatives: []func(g gen) string{badTyped(digitsAs(superscript, nil, " "))}},
	{name: "full-width", card: digitsAs(fullWidth, nil, "　"), iban: digitsAs(fullWidth, func(r rune) rune { return 'Ａ' + r - 'A' }, "　"),
		negatives: []func(g gen) string{badTyped(digitsAs(fullWidth, nil, "　")), badIBAN(digitsAs(fullWidth, func(r rune) rune { return 'Ａ' + r - 'A' }, "　"))}},
	{name: "Arabic-Indic digits", card: digitsAs(arabicDigit, nil, " "), iban: digitsAs(arabicDigit, nil, " "),
		negatives: []func(g gen) string{badTyped(digitsAs(arabicDigit, nil, " ")), badIBAN(digitsAs(arabicDigit, nil, " "))}},
}

// formSample is an utterance of the forms' corpus.
type formSample struct {
	form, how string // how: "typed", "spoken", "history" or "negative"
	text      string
	want      []Match
}

// formCorpus generates, for each form, n cards and n IBANs typed, spoken where the form is, and
// in a history message, and n hard negatives.
func formCorpus(seed uint64, n int) []formSample {
	g := gen{rand.New(rand.NewPCG(seed, seed^0x9e3779b97f4a7c15)), nil}
	langs := Locales()
	var out []formSample
	in := func(lang, purpose, value string) string {
		ts := templates[lang][purpose]
		return fmt.Sprintf(ts[g.r.IntN(len(ts))], value)
	}
	for _, f := range numberForms {
		for range n {
			lang := langs[g.r.IntN(len(langs))]
			for _, k := range []Kind{Card, IBAN} {
				write := f.card
				v := ""
				if k == Card {
					v = g.card()
				} else {
					write, v = f.iban, g.iban(false)
				}
				if write == nil {
					continue
				}
				want := []Match{{Kind: k, Value: v}}
				out = append(out, formSample{f.name, "typed", in(lang, k.String(), write(g, v)), want})
				// A history message: what the user typed a few turns ago, sent back by the
				// client with the rest of the conversation.
				hist := fmt.Sprintf("%s\n%s", in(lang, k.String(), write(g, v)), in(lang, "neg", fmt.Sprintf("%d.%02d", 1+g.r.IntN(999), g.r.IntN(100))))
				out = append(out, formSample{f.name, "history", hist, want})
				if f.said != nil && k == Card {
					out = append(out, formSample{f.name, "spoken", in(lang, "card", f.said(g, lang, v)), want})
				}
			}
			for _, neg := range f.negatives {
				out = append(out, formSample{f.name, "negative", in(lang, "neg", neg(g)), nil})
			}
		}
	}
	return out
}

// TestCorpusForms computes precision and recall of cards and IBANs per form, typed, spoken
// and in a history message (through a banking Shield's ToModel, as the engine passes history),
// and the precision on each form's hard negatives; the original corpus's hard negatives are
// counted again beside them. Every form must be found with a recall and precision of 99% (95%
// spoken) and its negatives kept out (something found in at most one in 50).
func TestCorpusForms(t *testing.T) {
	d, err := New(nil)
	if err != nil {
		t.Fatal(err)
	}
	p, err := NewPrivacy(nil)
	if err != nil {
		t.Fatal(err)
	}
	tenant := &engine.Tenant{Key: "bank", Privacy: json.RawMessage(`{"preset":"banking"}`)}
	type key struct{ form, how string }
	scores := map[key]*score{}
	negs := map[string]*[2]int{} // by form: samples, samples with something found
	var order []string
	for _, s := range formCorpus(7, 40) {
		if !slices.Contains(order, s.form) {
			order = append(order, s.form)
		}
		var got []Match
		if s.how == "history" {
			sh := p.Turn(tenant).(*shield)
			out := sh.ToModel(s.text)
			for _, m := range sh.values {
				got = append(got, m)
			}
			if len(got) > 0 && strings.Contains(digitsOf(out), s.want[0].Value[len(s.want[0].Value)-8:]) {
				t.Errorf("%s history: the model gets %q", s.form, out)
			}
		} else {
			for _, m := range d.Find(s.text) {
				if m.Kind == Card || m.Kind == IBAN {
					got = append(got, m)
				}
			}
		}
		if s.how == "negative" {
			if negs[s.form] == nil {
				negs[s.form] = &[2]int{}
			}
			negs[s.form][0]++
			if len(got) > 0 {
				negs[s.form][1]++
				t.Logf("false %s in %s: %q (%s)", got[0].Kind, s.form, s.text, got[0].Value)
			}
			continue
		}
		k := key{s.form, s.want[0].Kind.String() + " " + s.how}
		if scores[k] == nil {
			scores[k] = &score{}
		}
		want := slices.Clone(s.want)
		for _, m := range got {
			if i := slices.IndexFunc(want, func(w Match) bool { return w.Kind == m.Kind && w.Value == m.Value }); i >= 0 {
				scores[k].tp++
				want = slices.Delete(want, i, i+1)
				continue
			}
			scores[k].fp++
			t.Logf("false %s in %s %s: %q (%s)", m.Kind, s.form, s.how, s.text, m.Value)
		}
		scores[k].fn += len(want)
		if len(want) > 0 {
			t.Logf("missed %s %s %s: %q", s.form, k.how, s.want[0].Value, s.text)
		}
	}
	var all score
	for _, f := range order {
		var line strings.Builder
		for _, how := range []string{"card typed", "card spoken", "card history", "iban typed", "iban history"} {
			s := scores[key{f, how}]
			if s == nil {
				continue
			}
			all.tp, all.fp, all.fn = all.tp+s.tp, all.fp+s.fp, all.fn+s.fn
			fmt.Fprintf(&line, "  %s %.0f%%/%.0f%%", how, 100*s.recall(), 100*s.precision())
			// A spoken card of 19 digits said in groups loses its last three digits to the
			// rule of a security code said after a pause (see spokenCard).
			low := 0.99
			if strings.HasSuffix(how, "spoken") {
				low = 0.95
			}
			if s.recall() < low || s.precision() < low {
				t.Errorf("%s, %s: recall %.4f, precision %.4f; want ≥ %.2f", f, how, s.recall(), s.precision(), low)
			}
		}
		n := negs[f]
		fmt.Fprintf(&line, "  negatives %d, found in %d", n[0], n[1])
		if n[1]*50 > n[0] {
			t.Errorf("%s: something found in %d of %d hard negatives", f, n[1], n[0])
		}
		t.Logf("%-19s (recall/precision)%s", f, line.String())
	}
	t.Logf("all forms: recall %.2f%% precision %.2f%% (tp %d, fp %d, fn %d)", 100*all.recall(), 100*all.precision(), all.tp, all.fp, all.fn)

	// The original corpus's hard negatives: utterances with nothing to find.
	var neg, found int
	for _, s := range corpus(32, 2000) {
		if len(s.want) > 0 {
			continue
		}
		neg++
		for _, m := range d.Find(s.text) {
			if m.Kind == Card || m.Kind == IBAN {
				found++
				break
			}
		}
	}
	t.Logf("corpus hard negatives: %d, a card or IBAN found in %d (precision on them %.2f%%)", neg, found, 100*float64(neg-found)/float64(neg))
}

// digitsOf returns the ASCII digits of s.
func digitsOf(s string) string {
	return strings.Map(func(r rune) rune {
		if r >= '0' && r <= '9' {
			return r
		}
		return -1
	}, s)
}
