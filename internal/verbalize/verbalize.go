// Package verbalize writes text the way a speech synthesizer should read it: "$20.00" becomes
// "twenty dollars" rather than "dollar twenty point zero zero". Currency amounts, numbers,
// percentages, dates, times, measures, a few safe abbreviations and symbols are written as
// words in the language of the text; everything else is left as it is, emoji aside, which are
// dropped.
//
// The languages are English, Spanish, French, German, Portuguese, Arabic and Hebrew, chosen by
// the primary subtag of a BCP 47 tag; a region refines them where a country writes or says
// numbers its own way (es-MX writes "1,234.56" and its "$" is a peso, pt-PT says "dezasseis",
// fr-BE "septante", de-CH "dreissig" and "1'234.50"). A language it does not know gets its
// text back with only the emoji dropped: the synthesizer reads digits in its own voice's
// language better than English words would sound in that voice.
//
// What each language says, and what it simplifies, is in the comment of its numbers_*.go file.
// The choices shared by all:
//
//   - a number is read as words below 10^15, and digit by digit from there on or when it
//     starts with a zero ("007"); a digit inside a word ("mp3", "5G") is left alone;
//   - a written number is parsed by the locale's separators ("1.234,56" in es, "1 234,56" in
//     fr), then by the other convention where that is not ambiguous: both "." and "," in it,
//     a "." that cannot group thousands ("3.5" in es), or an amount ("€5,50" in en);
//   - money drops zero cents ("$20.00" is "twenty dollars"), reads the cents as the currency's
//     minor unit, and an amount finer than that unit as a decimal number of the currency;
//   - dates are ISO ("2026-11-23"), numeric in the locale's order ("11/23/2026" in the United
//     States, "23.11.2026"), or a day and a month's name with an optional year ("November 23,
//     2026", "23 de noviembre de 2026");
//   - times are read as a clock is in each language (en "two oh five PM" on a 12-hour clock,
//     es "catorce y cinco", fr "quatorze heures cinq", de "vierzehn Uhr fünf", pt "catorze e
//     cinco"); phone numbers written with hyphens are read digit by digit;
//   - abbreviations are expanded only where they cannot mean something else: a title before a
//     capitalized name ("Dr. Smith", not "Elm Dr."), "No." before a number; "&", "@", "#3" and
//     the "x" of "3x" are words, other symbols are left to the synthesizer.
//
// It also prepares a model's streamed text for the ear (spoken.go): [Plain] removes the markup
// a screen would draw, [CutSentences] cuts the stream into sentences as soon as each ends, so
// that each can be synthesized while the model is still writing, [Hold] keeps back a
// placeholder or number cut in two, and [NumberRuns] finds the numbers a listener must hear.
// The root package's turns and confirmations and the voice socket use it.
package verbalize

import (
	"strconv"
	"strings"
)

// maxWords bounds the numbers read as words; larger ones are read digit by digit.
const maxWords = 1_000_000_000_000_000

// Text returns s with currency amounts, numbers, percentages, dates, times, abbreviations and
// symbols written as words in the language of locale (a BCP 47 tag such as "en", "en-US",
// "es", "ar"). For a language it does not know, s comes back with only its emoji dropped. It
// never fails: what it cannot read it leaves as written, and invalid UTF-8 becomes U+FFFD.
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

func isLetters(s string) bool {
	for i := 0; i < len(s); i++ {
		if s[i] < 'a' || s[i] > 'z' {
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
		if len(p) == 2 && isLetters(p) || len(p) == 3 && allDigits(p) {
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

// languages builds each language for a region ("" when the tag names none), cached per region
// by [variants]: two letters or three digits, so that the cache stays small whatever tags come.
var languages = map[string]func(region string) *language{
	"en": variants(newEnglish),
	"es": variants(newSpanish),
	"fr": variants(newFrench),
	"de": variants(newGerman),
	"pt": variants(newPortuguese),
	"ar": variants(newArabic),
	"he": variants(newHebrew),
	"iw": variants(newHebrew),
}
