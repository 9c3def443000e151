package verbalize

import (
	"sort"
	"strings"
	"unicode"
	"unicode/utf8"

	"github.com/convengine/engine/internal/locale"
)

// context is where an abbreviation is expanded: only where it cannot mean something else.
type context uint8

const (
	anywhere     context = iota
	beforeName           // a capitalized word follows: "Dr. Smith", not "Elm Dr."
	beforeNumber         // a number follows: "No. 5", not "No."
	saint                // "St. Louis": a capitalized word follows, none comes before
	street               // "Main St.": after a capitalized word or a number, none follows
	mayEnd               // "etc." keeps its period where it ends a sentence
)

type abbr struct {
	written, spoken string
	when            context
}

var abbreviations = map[string][]abbr{
	"en": {
		{"Mr.", "Mister", beforeName}, {"Mrs.", "Missus", beforeName}, {"Ms.", "Miz", beforeName},
		{"Dr.", "Doctor", beforeName}, {"Prof.", "Professor", beforeName},
		{"Jr.", "Junior", anywhere}, {"Sr.", "Senior", anywhere},
		{"St.", "Saint", saint}, {"St.", "Street", street}, {"Ave.", "Avenue", street},
		{"e.g.", "for example", anywhere}, {"i.e.", "that is", anywhere},
		{"etc.", "et cetera", mayEnd}, {"vs.", "versus", anywhere}, {"vs", "versus", anywhere},
		{"approx.", "approximately", anywhere}, {"No.", "number", beforeNumber},
		{"no.", "number", beforeNumber}, {"Nos.", "numbers", beforeNumber},
	},
	"es": {
		{"Sr.", "señor", beforeName}, {"Sra.", "señora", beforeName},
		{"Srta.", "señorita", beforeName}, {"Dr.", "doctor", beforeName},
		{"Dra.", "doctora", beforeName}, {"Ud.", "usted", anywhere}, {"Uds.", "ustedes", anywhere},
		{"Vd.", "usted", anywhere}, {"etc.", "etcétera", mayEnd}, {"p. ej.", "por ejemplo", anywhere},
		{"p.ej.", "por ejemplo", anywhere}, {"EE. UU.", "Estados Unidos", anywhere},
		{"EE.UU.", "Estados Unidos", anywhere}, {"aprox.", "aproximadamente", anywhere},
		{"n.º", "número", beforeNumber}, {"nº", "número", beforeNumber},
		{"Nº", "número", beforeNumber}, {"n°", "número", beforeNumber},
		{"núm.", "número", beforeNumber}, {"No.", "número", beforeNumber},
	},
	"fr": {
		{"M.", "Monsieur", beforeName}, {"MM.", "Messieurs", beforeName},
		{"Mme", "Madame", beforeName}, {"Mmes", "Mesdames", beforeName},
		{"Mlle", "Mademoiselle", beforeName}, {"Dr", "Docteur", beforeName},
		{"Dr.", "Docteur", beforeName}, {"etc.", "et cetera", mayEnd},
		{"p. ex.", "par exemple", anywhere}, {"c.-à-d.", "c'est-à-dire", anywhere},
		{"env.", "environ", anywhere}, {"n°", "numéro", beforeNumber},
		{"nº", "numéro", beforeNumber}, {"N°", "numéro", beforeNumber},
		{"No", "numéro", beforeNumber},
	},
	"de": {
		{"Hr.", "Herr", beforeName}, {"Hrn.", "Herrn", beforeName}, {"Fr.", "Frau", beforeName},
		{"Dr.", "Doktor", beforeName}, {"Prof.", "Professor", beforeName},
		{"z. B.", "zum Beispiel", anywhere}, {"z.B.", "zum Beispiel", anywhere},
		{"d. h.", "das heißt", anywhere}, {"d.h.", "das heißt", anywhere},
		{"u. a.", "unter anderem", anywhere}, {"u.a.", "unter anderem", anywhere},
		{"usw.", "und so weiter", mayEnd}, {"bzw.", "beziehungsweise", anywhere},
		{"ca.", "circa", anywhere}, {"inkl.", "inklusive", anywhere},
		{"ggf.", "gegebenenfalls", anywhere}, {"evtl.", "eventuell", anywhere},
		{"Nr.", "Nummer", beforeNumber},
	},
	"pt": {
		{"Sr.", "senhor", beforeName}, {"Sra.", "senhora", beforeName},
		{"Dr.", "doutor", beforeName}, {"Dra.", "doutora", beforeName},
		{"etc.", "etcétera", mayEnd}, {"p. ex.", "por exemplo", anywhere},
		{"aprox.", "aproximadamente", anywhere}, {"n.º", "número", beforeNumber},
		{"nº", "número", beforeNumber}, {"Nº", "número", beforeNumber},
		{"n°", "número", beforeNumber},
	},
}

func init() {
	// The longest written form is tried first: "Mrs." before "Mr.", "Srta." before "Sr.".
	for _, list := range abbreviations {
		sort.SliceStable(list, func(i, j int) bool { return len(list[i].written) > len(list[j].written) })
	}
}

// abbreviation expands the abbreviation written at i, if one is and its context allows.
func (sc *scanner) abbreviation(i int) (int, bool) {
	s := sc.src
	for _, a := range sc.l.abbrs {
		if !strings.HasPrefix(s[i:], a.written) {
			continue
		}
		end := i + len(a.written)
		if r, _ := utf8.DecodeRuneInString(s[end:]); end < len(s) && isWordRune(r) {
			continue
		}
		next, prev := nextCapitalized(s, end), prevCapitalized(s, i)
		ok := true
		switch a.when {
		case beforeName:
			ok = next
		case beforeNumber:
			ok = nextIsNumber(s, end)
		case saint:
			ok = next && !prev
		case street:
			ok = prev && !next
		}
		if !ok {
			continue
		}
		sc.b.WriteString(a.spoken)
		if a.when == mayEnd && sentenceEnds(s, end) {
			sc.b.WriteByte('.')
		}
		return end, true
	}
	return 0, false
}

// nextCapitalized reports whether white space and then a capital letter follow end.
func nextCapitalized(s string, end int) bool {
	j := skipSpaces(s, end)
	r, _ := utf8.DecodeRuneInString(s[j:])
	return j > end && unicode.IsUpper(r)
}

// nextIsNumber reports whether a number follows end, after white space or none.
func nextIsNumber(s string, end int) bool {
	r, _ := utf8.DecodeRuneInString(s[skipSpaces(s, end):])
	return locale.DigitValue(r) >= 0
}

// prevCapitalized reports whether the word before i, across white space, is capitalized or
// holds a digit: "Main St.", "42nd St.".
func prevCapitalized(s string, i int) bool {
	j := i
	for j > 0 {
		r, size := utf8.DecodeLastRuneInString(s[:j])
		if r != ' ' && r != '\u00a0' {
			break
		}
		j -= size
	}
	if j == i {
		return false
	}
	first := rune(-1)
	for j > 0 {
		r, size := utf8.DecodeLastRuneInString(s[:j])
		if !isWordRune(r) {
			break
		}
		if locale.DigitValue(r) >= 0 {
			return true
		}
		first = r
		j -= size
	}
	return unicode.IsUpper(first)
}

// sentenceEnds reports whether a sentence ends at end: the text ends, or white space and a
// capital letter follow.
func sentenceEnds(s string, end int) bool {
	j := skipSpaces(s, end)
	if j == len(s) {
		return true
	}
	r, _ := utf8.DecodeRuneInString(s[j:])
	return j > end && unicode.IsUpper(r) || r == '\n'
}

func skipSpaces(s string, i int) int {
	for i < len(s) {
		r, size := utf8.DecodeRuneInString(s[i:])
		if r != ' ' && r != '\u00a0' && r != '\u202f' && r != '\t' {
			break
		}
		i += size
	}
	return i
}

// isEmoji reports whether r is a pictograph or a part of an emoji sequence, which a
// synthesizer reads as its Unicode name or not at all.
func isEmoji(r rune) bool {
	switch {
	case r >= 0x1F000 && r <= 0x1FAFF, // pictographs, emoticons, transport, flags, skin tones
		r >= 0x2600 && r <= 0x27BF,   // miscellaneous symbols, dingbats
		r >= 0x2B00 && r <= 0x2BFF,   // arrows and stars: ⭐
		r >= 0xE0020 && r <= 0xE007F, // tags of subdivision flags
		r == 0xFE0F, r == 0xFE0E, r == 0x20E3,
		r == 0x231A, r == 0x231B, r == 0x2328, r == 0x23CF,
		r >= 0x23E9 && r <= 0x23FA:
		return true
	}
	return false
}
