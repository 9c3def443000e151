// Package verbalize writes text the way a speech synthesizer should read it: "$20.00" becomes
// "twenty dollars" rather than "dollar twenty point zero zero". Currency amounts, numbers,
// percentages, dates, times, a few safe abbreviations and symbols are written as words in the
// language of the text; everything else is left as it is, emoji aside, which are dropped.
//
// The languages are English, Spanish, French, German, Portuguese and Arabic, chosen by the
// primary subtag of a BCP 47 tag; a region refines them where a country writes or says
// numbers its own way (es-MX writes "1,234.56" and its "$" is a peso, pt-PT says "dezasseis",
// fr-BE "septante", de-CH "dreissig"). A language it does not know gets its text back with
// only the emoji dropped: the synthesizer reads digits in its own voice's language better
// than English words spoken with that voice would sound.
//
// What it says, language by language, and what it simplifies, is in the comments of the
// numbers_*.go files; the choices shared by all are:
//
//   - a number is read as words up to 10^15 and digit by digit beyond, or when it starts with
//     a zero ("007");
//   - a written number is parsed by the locale's separators ("1.234,56" in es, "1 234,56" in
//     fr), then, when that cannot be, as the other convention where it is not ambiguous
//     ("3.5" in es has no thousands group: it is three and a half);
//   - money drops zero cents ("$20.00" is "twenty dollars"), reads cents as the currency's
//     minor unit, and an amount finer than that unit as a decimal number of the currency;
//   - times are read as a clock says them in each language (en "two oh five PM", es "catorce
//     y cinco", fr "quatorze heures cinq", de "vierzehn Uhr fünf", pt "catorze e cinco");
//   - abbreviations are expanded only where they cannot mean something else: a title before
//     a capitalized name, "No." before a number.
package verbalize

import (
	"strconv"
	"strings"
)

// maxWords bounds the numbers read as words; larger ones are read digit by digit.
const maxWords = 1_000_000_000_000_000

// Text returns s with currency amounts, numbers, percentages, dates, times, abbreviations and
// symbols written as words in the language of locale (a BCP 47 tag such as "en", "en-US",
// "es", "ar"). For a language it does not know, s comes back with only its emoji dropped.
func Text(s, locale string) string {
	sc := scanner{src: s, l: lookup(locale), prev: -1}
	sc.run()
	return sc.b.String()
}

// Number returns n (an integer, may be negative) in words in the language of locale: digit by
// digit from 10^15 on, and as digits for a language it does not know.
func Number(n int64, locale string) string {
	l := lookup(locale)
	if l == nil {
		return strconv.FormatInt(n, 10)
	}
	return l.integer(strconv.FormatInt(n, 10))
}

// Money returns the amount as spoken: Money("1234.56", "USD", "en") = "one thousand two
// hundred thirty-four dollars and fifty-six cents". decimal is a number with an optional sign
// and a "." before its decimals; currency an ISO 4217 code. An amount it cannot read, a
// currency it does not name in the language, or a language it does not know, comes back as
// decimal and currency, for the synthesizer to read.
func Money(decimal string, currency string, locale string) string {
	fallback := strings.TrimSpace(decimal + " " + currency)
	l := lookup(locale)
	if l == nil {
		return fallback
	}
	sign, digits := "", decimal
	if digits != "" && (digits[0] == '-' || digits[0] == '+') {
		sign, digits = digits[:1], digits[1:]
	}
	whole, frac, point := strings.Cut(digits, ".")
	if !allDigits(whole) || (point && !allDigits(frac)) {
		return fallback
	}
	num := numeral{neg: sign == "-", pos: sign == "+", digits: whole, frac: frac, point: point}
	words, ok := l.money(num, strings.ToUpper(currency), "")
	if !ok {
		return fallback
	}
	return words
}

func allDigits(s string) bool {
	if s == "" {
		return false
	}
	for i := 0; i < len(s); i++ {
		if s[i] < '0' || s[i] > '9' {
			return false
		}
	}
	return true
}

// lookup returns the language of a BCP 47 tag, with the variant its region asks for, or nil.
func lookup(locale string) *language {
	parts := strings.Split(strings.ToLower(strings.ReplaceAll(locale, "_", "-")), "-")
	region := ""
	for _, p := range parts[1:] {
		if len(p) == 2 || (len(p) == 3 && p[0] >= '0' && p[0] <= '9') {
			region = strings.ToUpper(p)
			break
		}
	}
	make := languages[parts[0]]
	if make == nil {
		return nil
	}
	return make(region)
}

// languages builds each language for a region ("" when the tag names none). The results are
// cached per tag by [variants].
var languages = map[string]func(region string) *language{
	"en": variants(newEnglish),
	"es": variants(newSpanish),
	"fr": variants(newFrench),
	"de": variants(newGerman),
	"pt": variants(newPortuguese),
	"ar": variants(newArabic),
}
