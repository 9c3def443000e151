package pii

import (
	"strings"
	"unicode"
	"unicode/utf8"

	"github.com/convengine/engine/internal/locale"
)

// Locales returns the languages whose spoken digits a [Detector] reads, by ISO 639-1 code.
func Locales() []string { return []string{"en", "es", "fr", "de", "it", "pt", "ar"} }

// word is what a word of a transcript means to the detector.
type word struct {
	digits string // the digits it stands for ("4" for "four", "cuatro", "vier")
	times  int    // 2 or 3 for "double", "triple": the next digit said that many times
	filler bool   // a hesitation ("uh", "euh") that does not break a run of digits
	plus   bool   // "plus", "más": the number that follows has its country code
	// A number from 10 to 99 said as words (tens.go).
	num    int8   // the number the word says by itself ("twelve", "forty", "einundvierzig")
	adds   uint32 // bit n: the words of n may follow, to say num+n ("forty-one")
	unit   int8   // 1 to 9: a unit that may start a number ("quatre-vingts", "واحد وأربعون")
	after  int8   // the word adds after to a unit said right before it ("وأربعون", "عشر")
	score  bool   // "vingt": after "quatre", eighty
	joiner bool   // "y", "e", "et": joins a tens word and what is added to it
}

// vocabulary holds each locale's words for digits, and for the numbers from 10 to 99
// (withNumbers). Accented words are also listed without their accents, as transcribers write
// both.
var vocabulary = withNumbers(map[string]map[string]word{
	"en": {
		"zero": {digits: "0"}, "oh": {digits: "0"}, "o": {digits: "0"}, "nought": {digits: "0"},
		"one": {digits: "1"}, "two": {digits: "2"}, "three": {digits: "3"},
		"four": {digits: "4"}, "five": {digits: "5"}, "six": {digits: "6"},
		"seven": {digits: "7"}, "eight": {digits: "8"}, "nine": {digits: "9"},
		"double": {times: 2}, "triple": {times: 3},
		"uh": {filler: true}, "um": {filler: true}, "er": {filler: true}, "erm": {filler: true},
		"plus": {plus: true},
	},
	"es": {
		"cero": {digits: "0"}, "uno": {digits: "1"}, "una": {digits: "1"}, "dos": {digits: "2"},
		"tres": {digits: "3"}, "cuatro": {digits: "4"}, "cinco": {digits: "5"},
		"seis": {digits: "6"}, "siete": {digits: "7"}, "ocho": {digits: "8"},
		"nueve": {digits: "9"},
		"doble": {times: 2}, "triple": {times: 3},
		"eh": {filler: true}, "em": {filler: true},
		"más": {plus: true}, "mas": {plus: true},
	},
	"fr": {
		"zéro": {digits: "0"}, "zero": {digits: "0"}, "un": {digits: "1"}, "une": {digits: "1"},
		"deux": {digits: "2"}, "trois": {digits: "3"}, "quatre": {digits: "4"},
		"cinq": {digits: "5"}, "six": {digits: "6"}, "sept": {digits: "7"},
		"huit": {digits: "8"}, "neuf": {digits: "9"},
		"double": {times: 2}, "triple": {times: 3},
		"euh": {filler: true}, "heu": {filler: true},
		"plus": {plus: true},
	},
	"de": {
		"null": {digits: "0"}, "eins": {digits: "1"}, "zwei": {digits: "2"}, "zwo": {digits: "2"},
		"drei": {digits: "3"}, "vier": {digits: "4"}, "fünf": {digits: "5"},
		"funf": {digits: "5"}, "fuenf": {digits: "5"}, "sechs": {digits: "6"},
		"sieben": {digits: "7"}, "acht": {digits: "8"}, "neun": {digits: "9"},
		"doppel": {times: 2}, "doppelt": {times: 2},
		"äh": {filler: true}, "ähm": {filler: true}, "ah": {filler: true},
		"plus": {plus: true},
	},
	"it": {
		"zero": {digits: "0"}, "uno": {digits: "1"}, "una": {digits: "1"}, "due": {digits: "2"},
		"tre": {digits: "3"}, "quattro": {digits: "4"}, "cinque": {digits: "5"},
		"sei": {digits: "6"}, "sette": {digits: "7"}, "otto": {digits: "8"},
		"nove":   {digits: "9"},
		"doppio": {times: 2}, "doppia": {times: 2}, "triplo": {times: 3},
		"ehm": {filler: true},
		"più": {plus: true}, "piu": {plus: true},
	},
	"pt": {
		"zero": {digits: "0"}, "um": {digits: "1"}, "uma": {digits: "1"}, "dois": {digits: "2"},
		"duas": {digits: "2"}, "três": {digits: "3"}, "tres": {digits: "3"},
		"quatro": {digits: "4"}, "cinco": {digits: "5"}, "seis": {digits: "6"},
		"meia": {digits: "6"}, "sete": {digits: "7"}, "oito": {digits: "8"},
		"nove":  {digits: "9"},
		"duplo": {times: 2}, "dupla": {times: 2}, "triplo": {times: 3},
		"hã":   {filler: true},
		"mais": {plus: true},
	},
	// Arabic: the words of Modern Standard Arabic and their common spoken and unvoweled
	// spellings (a transcriber writes "اثنين" as often as "اثنان", "اربعة" without its hamza).
	"ar": {
		"صفر": {digits: "0"}, "واحد": {digits: "1"}, "واحدة": {digits: "1"},
		"اثنان": {digits: "2"}, "اثنين": {digits: "2"}, "إثنان": {digits: "2"}, "إثنين": {digits: "2"}, "اتنين": {digits: "2"},
		"ثلاثة": {digits: "3"}, "ثلاث": {digits: "3"}, "تلاتة": {digits: "3"},
		"أربعة": {digits: "4"}, "اربعة": {digits: "4"}, "أربع": {digits: "4"}, "اربع": {digits: "4"},
		"خمسة": {digits: "5"}, "خمس": {digits: "5"}, "ستة": {digits: "6"}, "ست": {digits: "6"},
		"سبعة": {digits: "7"}, "سبع": {digits: "7"},
		"ثمانية": {digits: "8"}, "ثماني": {digits: "8"}, "ثمان": {digits: "8"}, "تمانية": {digits: "8"},
		"تسعة": {digits: "9"}, "تسع": {digits: "9"},
		"يعني": {filler: true},
		"زائد": {plus: true},
	},
})

// words merges the vocabularies of the locales.
func words(locales []string) map[string]*word {
	m := map[string]*word{}
	for _, l := range locales {
		for w, v := range vocabulary[l] {
			// A word that is a filler in one language and a digit in another ("um" in
			// English and Portuguese) is the digit: missing a digit costs more than
			// breaking a run.
			if old, ok := m[w]; ok && old.digits != "" {
				continue
			}
			m[w] = &v
		}
	}
	return m
}

// none is what a word that is not in the vocabulary means.
var none = &word{}

// Token classes.
const (
	tokDigits  = iota + 1 // digits only, of any script
	tokLetters            // letters only
	tokMixed              // letters and digits
)

// token is a maximal run of letters and digits.
type token struct {
	start, end int
	class      int
	w          *word // for tokLetters, what the word means; never nil
}

// isLetterOrDigit reports whether the rune at text[i:] is a letter or a digit, and its size.
func isAlnum(text string, i int) (letter, digit bool, size int) {
	c := text[i]
	if c < utf8.RuneSelf {
		switch {
		case c >= '0' && c <= '9':
			return false, true, 1
		case c >= 'a' && c <= 'z' || c >= 'A' && c <= 'Z':
			return true, false, 1
		}
		return false, false, 1
	}
	r, size := utf8.DecodeRuneInString(text[i:])
	if locale.DigitValue(r) >= 0 {
		return false, true, size
	}
	return unicode.IsLetter(r) || unicode.Is(unicode.Mn, r), false, size
}

// asciiDigits returns the digits of a token of digits as ASCII ones.
func asciiDigits(ds string) string {
	for i := range len(ds) {
		if ds[i] >= utf8.RuneSelf {
			b := make([]byte, 0, len(ds))
			for _, r := range ds {
				if d := locale.DigitValue(r); d >= 0 {
					b = append(b, byte('0'+d))
				} else {
					b = append(b, byte(r))
				}
			}
			return string(b)
		}
	}
	return ds
}

// tokenize splits text into tokens of letters and digits, reading each word's meaning.
func (s *scan) tokenize(text string) []token {
	toks := s.toks[:0]
	var buf [24]byte
	for i := 0; i < len(text); {
		s.steps++
		letter, digit, size := isAlnum(text, i)
		if !letter && !digit {
			i += size
			continue
		}
		t := token{start: i, w: none}
		var hasL, hasD bool
		for i < len(text) {
			s.steps++
			letter, digit, size := isAlnum(text, i)
			if !letter && !digit {
				// An apostrophe between letters is part of the word ("it's", "l'IBAN").
				if n := apostrophe(text, i); n > 0 && hasL && !hasD && i+n < len(text) {
					if l, _, _ := isAlnum(text, i+n); l {
						i += n
						continue
					}
				}
				break
			}
			hasL, hasD = hasL || letter, hasD || digit
			i += size
		}
		t.end = i
		switch {
		case hasL && hasD:
			t.class = tokMixed
		case hasD:
			t.class = tokDigits
		default:
			t.class = tokLetters
			t.w = s.d.lookup(text[t.start:t.end], buf[:0])
		}
		toks = append(toks, t)
	}
	return toks
}

// lookup returns what w means in the detector's locales.
func (d *Detector) lookup(w string, buf []byte) *word {
	if len(w) > 24 || len(d.words) == 0 {
		return none
	}
	ascii := true
	for i := range len(w) {
		c := w[i]
		if c >= utf8.RuneSelf {
			ascii = false
			break
		}
		if c >= 'A' && c <= 'Z' {
			c += 'a' - 'A'
		}
		buf = append(buf, c)
	}
	v := d.words[string(buf)] // no allocation for a map index
	if !ascii {
		// Without case, vowel marks or the tatweel that stretches Arabic words.
		v = d.words[strings.Map(func(r rune) rune {
			if unicode.Is(unicode.Mn, r) || r == 'ـ' {
				return -1
			}
			return unicode.ToLower(r)
		}, w)]
	}
	if v == nil {
		return none
	}
	return v
}

// joinable reports whether the text between two pieces of a spoken number keeps them in one
// run: blanks, with at most one hyphen, comma, full stop or slash among them.
func joinable(gap string) bool {
	if len(gap) > 8 {
		return false
	}
	punct := 0
	for i := 0; i < len(gap); i++ {
		switch gap[i] {
		case ' ', '\t', '\n', '\r':
		case '-', ',', '.':
			punct++
		default:
			if !strings.HasPrefix(gap[i:], "،") { // the Arabic comma
				return false
			}
			punct++
			i += len("،") - 1
		}
	}
	return punct <= 1
}

// apostrophe returns the length of the apostrophe at text[i:], or 0.
func apostrophe(text string, i int) int {
	switch {
	case text[i] == '\'':
		return 1
	case strings.HasPrefix(text[i:], "’"):
		return len("’")
	}
	return 0
}
