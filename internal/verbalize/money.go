package verbalize

import "strings"

// currency is an ISO 4217 currency: the unit its names are filed under, and how many decimals
// its minor unit has.
type currency struct {
	unit   string
	digits int
}

var currencies = map[string]currency{
	"USD": {"dollar", 2}, "CAD": {"dollar", 2}, "AUD": {"dollar", 2}, "NZD": {"dollar", 2},
	"HKD": {"dollar", 2}, "SGD": {"dollar", 2}, "EUR": {"euro", 2}, "GBP": {"pound", 2},
	"EGP": {"egpound", 2}, "JPY": {"yen", 0}, "MXN": {"peso", 2}, "ARS": {"peso", 2},
	"COP": {"peso", 2}, "CLP": {"peso", 0}, "UYU": {"peso", 2}, "DOP": {"peso", 2},
	"CUP": {"peso", 2}, "BRL": {"real", 2}, "CHF": {"franc", 2}, "INR": {"rupee", 2},
	"ILS": {"shekel", 2}, "SAR": {"riyal", 2}, "QAR": {"riyal", 2}, "AED": {"dirham", 2},
	"MAD": {"dirham", 2}, "CNY": {"yuan", 2},
}

// currencySigns are the symbols and prefixes written for currencies, longest first so that
// "US$" is found before "$". "$" is the dollar, or the peso where it is ([language].dollar).
var currencySigns = []struct{ sign, code string }{
	{"US$", "USD"}, {"U$S", "USD"}, {"CA$", "CAD"}, {"AU$", "AUD"}, {"NZ$", "NZD"},
	{"HK$", "HKD"}, {"MX$", "MXN"}, {"ر.س", "SAR"}, {"د.إ", "AED"}, {"ج.م", "EGP"},
	{"C$", "CAD"}, {"A$", "AUD"}, {"S$", "SGD"}, {"R$", "BRL"}, {"E£", "EGP"},
	{"$", "$"}, {"€", "EUR"}, {"£", "GBP"}, {"¥", "JPY"}, {"￥", "JPY"}, {"₹", "INR"},
	{"₪", "ILS"}, {"ש\"ח", "ILS"}, {"ש״ח", "ILS"},
}

// currencyName is what a language calls a currency's unit and its minor unit; a minor unit
// without a name reads cents as decimals.
type currencyName struct{ major, minor noun }

func nm(one, many string) noun { return noun{one: one, many: many, g: masc} }
func nf(one, many string) noun { return noun{one: one, many: many, g: fem} }

// nar is an Arabic noun: singular, dual, plural, accusative singular (see newArabic).
func nar(one, two, many, acc string) noun {
	return noun{one: one, two: two, many: many, acc: acc, g: masc}
}

var currencyNames = map[string]map[string]currencyName{
	"en": {
		"dollar":  {nm("dollar", "dollars"), nm("cent", "cents")},
		"euro":    {nm("euro", "euros"), nm("cent", "cents")},
		"pound":   {nm("pound", "pounds"), nm("penny", "pence")},
		"egpound": {nm("Egyptian pound", "Egyptian pounds"), nm("piastre", "piastres")},
		"yen":     {major: nm("yen", "yen")},
		"peso":    {nm("peso", "pesos"), nm("centavo", "centavos")},
		"real":    {nm("real", "reais"), nm("centavo", "centavos")},
		"franc":   {nm("franc", "francs"), nm("centime", "centimes")},
		"rupee":   {nm("rupee", "rupees"), nm("paisa", "paise")},
		"shekel":  {nm("shekel", "shekels"), nm("agora", "agorot")},
		"riyal":   {nm("riyal", "riyals"), nm("halala", "halalas")},
		"dirham":  {nm("dirham", "dirhams"), nm("fils", "fils")},
		"yuan":    {nm("yuan", "yuan"), nm("fen", "fen")},
	},
	"es": {
		"dollar": {nm("dólar", "dólares"), nm("centavo", "centavos")},
		"euro":   {nm("euro", "euros"), nm("céntimo", "céntimos")},
		"pound":  {nf("libra", "libras"), nm("penique", "peniques")},
		"yen":    {major: nm("yen", "yenes")},
		"peso":   {nm("peso", "pesos"), nm("centavo", "centavos")},
		"real":   {nm("real", "reales"), nm("centavo", "centavos")},
		"franc":  {nm("franco", "francos"), nm("céntimo", "céntimos")},
		"rupee":  {major: nf("rupia", "rupias")},
		"shekel": {major: nm("séquel", "séqueles")},
		"riyal":  {major: nm("rial", "riales")},
		"dirham": {major: nm("dírham", "dírhams")},
		"yuan":   {major: nm("yuan", "yuanes")},
	},
	"fr": {
		"dollar": {nm("dollar", "dollars"), nm("cent", "cents")},
		"euro":   {nm("euro", "euros"), nm("centime", "centimes")},
		"pound":  {nf("livre", "livres"), nm("penny", "pence")},
		"yen":    {major: nm("yen", "yens")},
		"peso":   {nm("peso", "pesos"), nm("centavo", "centavos")},
		"real":   {nm("réal", "réaux"), nm("centavo", "centavos")},
		"franc":  {nm("franc", "francs"), nm("centime", "centimes")},
		"rupee":  {major: nf("roupie", "roupies")},
		"shekel": {major: nm("shekel", "shekels")},
		"riyal":  {major: nm("riyal", "riyals")},
		"dirham": {major: nm("dirham", "dirhams")},
		"yuan":   {major: nm("yuan", "yuans")},
	},
	"de": {
		"dollar": {nm("Dollar", "Dollar"), nm("Cent", "Cent")},
		"euro":   {nm("Euro", "Euro"), nm("Cent", "Cent")},
		"pound":  {nm("Pfund", "Pfund"), nm("Penny", "Pence")},
		"yen":    {major: nm("Yen", "Yen")},
		"peso":   {nm("Peso", "Pesos"), nm("Centavo", "Centavos")},
		"real":   {nm("Real", "Real"), nm("Centavo", "Centavos")},
		"franc":  {nm("Franken", "Franken"), nm("Rappen", "Rappen")},
		"rupee":  {major: nf("Rupie", "Rupien")},
		"shekel": {major: nm("Schekel", "Schekel")},
		"riyal":  {major: nm("Rial", "Rial")},
		"dirham": {major: nm("Dirham", "Dirham")},
		"yuan":   {major: nm("Yuan", "Yuan")},
	},
	"pt": {
		"dollar": {nm("dólar", "dólares"), nm("centavo", "centavos")},
		"euro":   {nm("euro", "euros"), nm("centavo", "centavos")},
		"pound":  {nf("libra", "libras"), nm("pêni", "pence")},
		"yen":    {major: nm("iene", "ienes")},
		"peso":   {nm("peso", "pesos"), nm("centavo", "centavos")},
		"real":   {nm("real", "reais"), nm("centavo", "centavos")},
		"franc":  {nm("franco", "francos"), nm("cêntimo", "cêntimos")},
		"rupee":  {major: nf("rupia", "rupias")},
		"shekel": {major: nm("shekel", "shekels")},
		"riyal":  {major: nm("rial", "riais")},
		"dirham": {major: nm("dirham", "dirhams")},
		"yuan":   {major: nm("yuan", "yuans")},
	},
	"ar": {
		"dollar":  {nar("دولار", "دولاران", "دولارات", "دولارًا"), nar("سنت", "سنتان", "سنتات", "سنتًا")},
		"euro":    {nar("يورو", "يوروان", "يورو", "يورو"), nar("سنت", "سنتان", "سنتات", "سنتًا")},
		"pound":   {nar("جنيه", "جنيهان", "جنيهات", "جنيهًا"), nar("بنس", "بنسان", "بنسات", "بنسًا")},
		"egpound": {nar("جنيه", "جنيهان", "جنيهات", "جنيهًا"), nar("قرش", "قرشان", "قروش", "قرشًا")},
		"yen":     {major: nar("ين", "ينان", "ينات", "ينًا")},
		"franc":   {nar("فرنك", "فرنكان", "فرنكات", "فرنكًا"), nar("سنتيم", "سنتيمان", "سنتيمات", "سنتيمًا")},
		"shekel":  {major: nar("شيكل", "شيكلان", "شواكل", "شيكلًا")},
		"riyal":   {major: nar("ريال", "ريالان", "ريالات", "ريالًا")},
		"dirham":  {nar("درهم", "درهمان", "دراهم", "درهمًا"), nar("فلس", "فلسان", "فلوس", "فلسًا")},
		"yuan":    {major: nar("يوان", "يوانان", "يوانات", "يوانًا")},
	},
	"he": {
		"shekel": {nm("שקל", "שקלים"), nf("אגורה", "אגורות")},
		"dollar": {nm("דולר", "דולרים"), nm("סנט", "סנטים")},
		"euro":   {nm("אירו", "אירו"), nm("סנט", "סנטים")},
		"pound":  {major: nf("לירה שטרלינג", "לירות שטרלינג")},
		"yen":    {major: nm("ין", "ין")},
	},
}

// ptEuropeanCurrencies call the cent a "cêntimo", as Portugal does.
var ptEuropeanCurrencies = func() map[string]currencyName {
	out := map[string]currencyName{}
	for k, v := range currencyNames["pt"] {
		if v.minor.one == "centavo" && k != "real" && k != "peso" {
			v.minor = nm("cêntimo", "cêntimos")
		}
		out[k] = v
	}
	return out
}()

// money says an amount of a currency, with the scale word written after it ("$5 million"),
// or reports that the language has no name for the currency.
func (l *language) money(num numeral, code, scaleWord string) (string, bool) {
	if code == "$" {
		code = l.dollar
	}
	cur, ok := currencies[code]
	if !ok {
		return "", false
	}
	names, ok := l.currencies[cur.unit]
	if !ok {
		return "", false
	}
	major, minor := names.major, names.minor
	if scaleWord != "" {
		sw := l.scales[scaleWord]
		s := l.words(num, sw.g) + " " + scaleWord + " "
		if sw.of && l.of != "" {
			return s + gluedOf(l.ofBefore(major.many), major.many), true
		}
		if l.tag == "ar" { // the noun after a thousand or a million is singular
			return s + major.one, true
		}
		return s + major.many, true
	}
	num.digits = trimZeros(num.digits)
	frac := strings.TrimRight(num.frac, "0")
	if len(frac) > cur.digits || (frac != "" && minor.one == "") {
		return l.countedNumeral(num, major), true
	}
	whole, ok := value(num.digits)
	if !ok {
		return l.sign(num) + l.digits(num.digits) + " " + major.many, true
	}
	frac += strings.Repeat("0", cur.digits-len(frac))
	cents, _ := value(trimZeros(frac))
	sign := l.sign(num)
	switch {
	case frac == "" || cents == 0:
		return sign + l.counted(whole, major), true
	case whole == 0:
		return sign + l.counted(cents, minor), true
	}
	return sign + l.counted(whole, major) + l.and + l.counted(cents, minor), true
}

// trimZeros removes the leading zeros of digits, leaving one digit.
func trimZeros(digits string) string {
	for len(digits) > 1 && digits[0] == '0' {
		digits = digits[1:]
	}
	return digits
}
