package locale

import (
	"unicode"
	"unicode/utf8"
)

// DigitValue returns the value of r, a decimal digit of any script (ASCII, the Arabic-Indic ٠-٩
// Arabic writes, the Eastern Arabic-Indic ۰-۹ of Persian and Urdu, Devanagari, full-width
// ０-９…), or -1. Unicode lays each script's digits out as runs of ten from zero.
func DigitValue(r rune) int {
	if r < utf8.RuneSelf {
		if r >= '0' && r <= '9' {
			return int(r - '0')
		}
		return -1
	}
	if !unicode.IsDigit(r) { // a search of the table: most runes are letters
		return -1
	}
	for _, rg := range unicode.Nd.R16 {
		if rune(rg.Lo) <= r && r <= rune(rg.Hi) {
			return int(r-rune(rg.Lo)) % 10
		}
	}
	for _, rg := range unicode.Nd.R32 {
		if rune(rg.Lo) <= r && r <= rune(rg.Hi) {
			return int(r-rune(rg.Lo)) % 10
		}
	}
	return -1
}
