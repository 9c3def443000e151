package fill

import (
	"fmt"
	"strings"
	"unicode"
	"unicode/utf8"

	"golang.org/x/text/unicode/norm"
)

// The rules below add to the PRECIS FreeformClass what it lets through and a user cannot read
// off a confirm: blank look-alikes of a space, marks drawn over Latin letters, and text that
// reads as the copy's own amount or question.

// blanks are characters that draw nothing or a blank, beyond the Zs spaces: the braille pattern
// blank, the Hangul fillers (PRECIS refuses these today as old jamo or default ignorable; kept
// here so that a change of tables cannot let them in) and the object replacement character.
var blanks = map[rune]bool{
	'\u2800': true, '\u3164': true, '\u115F': true, '\u1160': true, '\uFFA0': true, '\uFFFC': true,
}

// questionMarks are the question marks of the scripts (U+037E, the Greek one, is ';' in NFC).
const questionMarks = "?\u00BF\u055E\u061F\u1367\u2047\u2048\u2049\u2753\u2754\u2755\u2CFA\u2CFB\u2E2E\uA60F\uFE56\uFF1F"

// lineMarks are the combining marks of U+0300–U+036F that draw a line over, through or under a
// letter rather than a diacritic: an overline, a low line, the overlays.
func lineMark(r rune) bool {
	return r == '\u0305' || (r >= '\u0332' && r <= '\u0338') || r == '\u033F'
}

// maxMarks is how many combining marks a Latin, Greek or Cyrillic letter may carry: two, as in
// Yoruba "ọ̀" or Lithuanian "i̇̃".
const maxMarks = 2

// checkPlain reports why str, a string the confirm shows, could be read as something else: a
// blank that is not a plain space, spaces doubled or at an end, a combining mark that is not a
// diacritic on a Latin, Greek or Cyrillic letter, or on no letter at all, a question mark, a
// currency symbol, or an amount ("9,000.00").
func checkPlain(name, str string) error {
	if strings.HasPrefix(str, " ") || strings.HasSuffix(str, " ") || strings.Contains(str, "  ") {
		return fmt.Errorf("%s has spaces at its start or end, or two in a row; send it with single spaces between words", name)
	}
	var base rune // the letter the marks that follow stand on, or 0 for none
	marks := 0
	prev := rune(0)
	for i, r := range str {
		switch {
		case r != ' ' && (unicode.In(r, unicode.Zs, unicode.Zl, unicode.Zp) || blanks[r]):
			return fmt.Errorf("%s holds a blank character (U+%04X) other than a plain space; use a plain space", name, r)
		case strings.ContainsRune(questionMarks, r):
			return fmt.Errorf("%s holds a question mark; a name or note shown in a confirm may not ask a question of its own", name)
		case unicode.Is(unicode.Sc, r):
			return fmt.Errorf("%s holds a currency symbol; a name or note shown in a confirm may not state an amount (the copy shows the amount sent)", name)
		case strings.ContainsRune(".,\u066B\u066C", r) && unicode.IsDigit(prev) && digitAt(str, i+utf8.RuneLen(r)):
			return fmt.Errorf("%s holds an amount (digits with a decimal or thousands separator); a name or note shown in a confirm may not state an amount", name)
		case unicode.In(r, unicode.Mn, unicode.Me):
			if err := checkMark(name, base, r, &marks); err != nil {
				return err
			}
		case unicode.Is(unicode.Mc, r):
			// Spacing marks belong to the scripts that need them (Indic vowel signs).
		case unicode.IsLetter(r):
			base, marks = r, 0
		default:
			base, marks = 0, 0
		}
		prev = r
	}
	return nil
}

// checkMark reports whether the combining mark r may stand on base, which already carries
// *marks marks.
func checkMark(name string, base, r rune, marks *int) error {
	if base == 0 {
		return fmt.Errorf("%s has a combining mark (U+%04X) on a character that is not a letter", name, r)
	}
	if unicode.Is(unicode.Me, r) || norm.NFC.PropertiesString(string(r)).CCC() == 1 {
		return fmt.Errorf("%s has a mark (U+%04X) drawn over or around a letter, as a strikethrough or a frame; send the plain letters", name, r)
	}
	if !unicode.In(base, unicode.Latin, unicode.Greek, unicode.Cyrillic) {
		return nil
	}
	*marks++
	if r < '\u0300' || r > '\u036F' || lineMark(r) || *marks > maxMarks {
		return fmt.Errorf("%s has a combining mark (U+%04X) on the letter %q that is not one of its diacritics; send the plain letters", name, r, base)
	}
	return nil
}

// digitAt reports whether str has a decimal digit at byte offset i.
func digitAt(str string, i int) bool {
	r, _ := utf8.DecodeRuneInString(str[i:])
	return unicode.IsDigit(r)
}
