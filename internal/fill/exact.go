package fill

import (
	"encoding/json"
	"fmt"
	"math/big"
	"strings"
	"unicode"

	"golang.org/x/text/secure/precis"
	"golang.org/x/text/unicode/norm"
)

// shownText is what a string the user confirms may hold: the PRECIS FreeformClass (RFC 8264),
// which refuses control characters (line breaks among them), bidirectional overrides and
// isolates, zero-width spaces and other invisible formatting, and allows the zero-width joiners
// only where a script needs them (RFC 5892, appendix A).
var shownText = precis.NewFreeform(precis.Norm(norm.NFC), precis.DisallowEmpty)

// minorUnits is how many decimals a money amount may have: the minor unit of the currencies the
// confirm copy shows (cents).
const minorUnits = 2

// CheckShown reports, for the placeholders of texts, whether args can be shown exactly as they
// will be sent: every {name|money} a number with at most two decimals, every string shown free
// of invisible, blank and control characters, in Unicode normal form NFC, with single spaces,
// without marks drawn over Latin letters, without a question mark or an amount of its own, and
// without a word that mixes scripts (a Latin name with a Cyrillic look-alike letter). The error names the argument and
// says what is wrong, for the model to read.
func CheckShown(texts []string, args map[string]any) error {
	for _, s := range texts {
		for {
			i := strings.IndexByte(s, '{')
			if i < 0 {
				break
			}
			j := strings.IndexByte(s[i:], '}')
			if j < 0 {
				break
			}
			name, format, _ := strings.Cut(s[i+1:i+j], "|")
			name, format = strings.TrimSpace(name), strings.TrimSpace(format)
			if err := checkValue(name, format, lookupPath(args, name)); err != nil {
				return err
			}
			s = s[i+j+1:]
		}
	}
	return nil
}

func checkValue(name, format string, v any) error {
	if format == "money" {
		if _, err := exactMoney(v); err != nil {
			return fmt.Errorf("%s: %w", name, err)
		}
		return nil
	}
	str, ok := v.(string)
	if !ok || str == "" {
		return nil
	}
	out, err := shownText.String(str)
	switch {
	case err != nil:
		return fmt.Errorf("%s holds characters that cannot be shown to the user as they are (control, invisible or direction-changing characters)", name)
	case out != str:
		return fmt.Errorf("%s is not in Unicode normal form NFC; send it composed", name)
	}
	if err := checkPlain(name, str); err != nil {
		return err
	}
	for word := range strings.FieldsFuncSeq(str, func(r rune) bool { return !unicode.IsLetter(r) && !unicode.Is(unicode.Mn, r) }) {
		if a, b, mixed := mixedScripts(word); mixed {
			return fmt.Errorf("%s mixes %s and %s letters in one word (%q), which can pass for another name", name, a, b, word)
		}
	}
	return nil
}

// scripts are those whose letters pass for each other's.
var scripts = []struct {
	name  string
	table *unicode.RangeTable
}{
	{"Latin", unicode.Latin}, {"Cyrillic", unicode.Cyrillic}, {"Greek", unicode.Greek},
	{"Armenian", unicode.Armenian}, {"Cherokee", unicode.Cherokee}, {"Coptic", unicode.Coptic},
}

// mixedScripts reports whether word holds letters of two of scripts, and which.
func mixedScripts(word string) (string, string, bool) {
	first := ""
	for _, r := range word {
		for _, sc := range scripts {
			if !unicode.Is(sc.table, r) {
				continue
			}
			if first == "" {
				first = sc.name
			} else if sc.name != first {
				return first, sc.name, true
			}
		}
	}
	return "", "", false
}

// exactMoney returns v, a number, with exactly two decimals and thousands separators, or an
// error when it has more decimals than the currency's minor unit (the copy would round what is
// sent) or is not a number.
func exactMoney(v any) (string, error) {
	var text string
	switch x := v.(type) {
	case json.Number:
		text = x.String()
	case float64:
		text = big.NewFloat(x).Text('g', -1)
	default:
		return "", fmt.Errorf("is not a number")
	}
	r, ok := new(big.Rat).SetString(text)
	if !ok {
		return "", fmt.Errorf("is not a number")
	}
	cents := new(big.Rat).Mul(r, big.NewRat(100, 1))
	if !cents.IsInt() {
		return "", fmt.Errorf("has more than %d decimal places (%s): the amount must be exact to the cent", minorUnits, text)
	}
	return grouped(r.FloatString(minorUnits)), nil
}
