package intent

import (
	"strings"
	"unicode"
	"unicode/utf8"
)

// defaultStopWords are function words of English, Spanish and Arabic (in folded form). They
// still count a little in matching, so that "what is my balance" beats "balance" alone, but they
// never carry a match on their own.
const defaultStopWords = `a an the i me my mine you your yours we our is are am was were be been
being do does did have has had of to for in on at by with from and or it its this that these
those what which who how much many can could would will shall should please show tell give let
us some any there here just about now again also get see want need like know

el la los las lo un una unos unas de del a al en y o e u mi mis tu tus su sus que cual cuales
cuanto cuanta es son esta estan por para con me se le como muy hay quiero puedes favor

ما ماذا هو هي في من على عن الى كم لي هل ان انا انت هذا هذه`

// tokens splits s into normalised words for matching: lower case, accents and Arabic
// diacritics folded, contractions expanded, simple plurals folded, and every number (digits or
// English words) replaced by "#".
func tokens(s string) []string {
	var out []string
	for _, w := range words(s) {
		for _, x := range expandContraction(w) {
			out = append(out, foldPlural(x))
		}
	}
	return collapseNumbers(out)
}

// normalizePhrase returns the tokens of s joined by single spaces.
func normalizePhrase(s string) string { return strings.Join(tokens(s), " ") }

// words splits s into lower-case words of letters and digits with accents folded. An
// apostrophe inside a word is kept ("what's"), and so are the separators of a number ("15.50").
func words(s string) []string {
	rs := make([]rune, 0, len(s))
	for _, r := range s {
		if r = foldRune(unicode.ToLower(r)); r != 0 {
			rs = append(rs, r)
		}
	}
	var (
		out []string
		cur []rune
	)
	flush := func() {
		if len(cur) > 0 {
			out = append(out, string(cur))
			cur = cur[:0]
		}
	}
	for i, r := range rs {
		switch {
		case unicode.IsLetter(r) || unicode.IsDigit(r):
			cur = append(cur, r)
		case r == '\'' && len(cur) > 0 && i+1 < len(rs) && unicode.IsLetter(rs[i+1]):
			cur = append(cur, r)
		case (r == '.' || r == ',') && len(cur) > 0 && unicode.IsDigit(cur[len(cur)-1]) &&
			i+1 < len(rs) && unicode.IsDigit(rs[i+1]):
			cur = append(cur, r)
		default:
			flush()
		}
	}
	flush()
	return out
}

// foldRune maps accented Latin letters to their base letter and Arabic letter variants to
// one form; it drops combining marks (Arabic diacritics among them) and the tatweel by
// returning 0. Typographic apostrophes become "'".
func foldRune(r rune) rune {
	switch r {
	case 'á', 'à', 'â', 'ä', 'ã', 'å':
		return 'a'
	case 'é', 'è', 'ê', 'ë':
		return 'e'
	case 'í', 'ì', 'î', 'ï':
		return 'i'
	case 'ó', 'ò', 'ô', 'ö', 'õ':
		return 'o'
	case 'ú', 'ù', 'û', 'ü':
		return 'u'
	case 'ñ':
		return 'n'
	case 'ç':
		return 'c'
	case '’', '‘', 'ʼ', '`':
		return '\''
	case 'أ', 'إ', 'آ', 'ٱ':
		return 'ا'
	case 'ة':
		return 'ه'
	case 'ى':
		return 'ي'
	case 'ـ':
		return 0
	}
	if unicode.Is(unicode.Mn, r) {
		return 0
	}
	return r
}

// expandContraction turns an English contraction into its words ("what's" gives "what",
// "is"; "don't" gives "do", "not") and drops the apostrophe of any other word.
func expandContraction(w string) []string {
	if !strings.ContainsRune(w, '\'') {
		return []string{w}
	}
	switch w {
	case "can't":
		return []string{"can", "not"}
	case "won't":
		return []string{"will", "not"}
	case "let's":
		return []string{"let", "us"}
	}
	for _, c := range [...]struct{ suffix, word string }{
		{"n't", "not"}, {"'re", "are"}, {"'ve", "have"}, {"'ll", "will"}, {"'d", "would"},
		{"'m", "am"},
	} {
		if stem, ok := strings.CutSuffix(w, c.suffix); ok && stem != "" {
			return []string{stem, c.word}
		}
	}
	if stem, ok := strings.CutSuffix(w, "'s"); ok && stem != "" {
		switch stem {
		case "what", "that", "it", "there", "here", "who", "where", "how", "he", "she", "when", "why":
			return []string{stem, "is"}
		}
		return []string{stem} // a possessive
	}
	return []string{strings.ReplaceAll(w, "'", "")}
}

// foldPlural strips a simple plural ending from a word of Latin letters: "transactions" gives
// "transaction", "activities" gives "activity". Both sides of a comparison are folded alike, so
// the result need not be a real word.
func foldPlural(w string) string {
	n := len(w)
	if n < 4 || !isLatinWord(w) {
		return w
	}
	switch {
	case strings.HasSuffix(w, "ies") && n > 4:
		return w[:n-3] + "y"
	case strings.HasSuffix(w, "sses"), strings.HasSuffix(w, "ches"), strings.HasSuffix(w, "shes"),
		strings.HasSuffix(w, "xes"):
		return w[:n-2]
	case strings.HasSuffix(w, "ss"), strings.HasSuffix(w, "us"), strings.HasSuffix(w, "is"):
		return w
	case strings.HasSuffix(w, "s"):
		return w[:n-1]
	}
	return w
}

func isLatinWord(w string) bool {
	for i := 0; i < len(w); i++ {
		if c := w[i]; c < 'a' || c > 'z' {
			return false
		}
	}
	return true
}

// collapseNumbers replaces each run of number tokens (digits, or English number words joined
// by "and") by a single "#".
func collapseNumbers(ts []string) []string {
	out := make([]string, 0, len(ts))
	for i, t := range ts {
		num := isNumberToken(t)
		if t == "and" && i > 0 && i+1 < len(ts) && isNumberToken(ts[i-1]) && isNumberToken(ts[i+1]) {
			num = true
		}
		if !num {
			out = append(out, t)
			continue
		}
		if len(out) == 0 || out[len(out)-1] != "#" {
			out = append(out, "#")
		}
	}
	return out
}

func isNumberToken(t string) bool {
	if r, _ := utf8.DecodeRuneInString(t); unicode.IsDigit(r) {
		return true
	}
	_, _, ok := numberWord(t)
	return ok
}

// tokenSimilarity scores how alike two normalised tokens are: 1 when equal, 0.8 when one edit
// apart ("balence"), 0.7 when one is a prefix of the other ("recent", "recently"), else 0. An
// edit needs words of five letters or more and a prefix four, so that short words never blur
// ("send" is not "spend").
func tokenSimilarity(a, b string) float64 {
	if a == b {
		return 1
	}
	la, lb := utf8.RuneCountInString(a), utf8.RuneCountInString(b)
	if min(la, lb) < 4 {
		return 0
	}
	if min(la, lb) >= 5 && la-lb <= 1 && lb-la <= 1 && withinOneEdit([]rune(a), []rune(b)) {
		return 0.8
	}
	if max(la, lb)-min(la, lb) <= 4 && (strings.HasPrefix(a, b) || strings.HasPrefix(b, a)) {
		return 0.7
	}
	return 0
}

// withinOneEdit reports whether a and b differ by at most one insertion, deletion or
// substitution.
func withinOneEdit(a, b []rune) bool {
	if len(a) < len(b) {
		a, b = b, a
	}
	i := 0
	for i < len(b) && a[i] == b[i] {
		i++
	}
	if len(a) == len(b) {
		return string(a[i+min(1, len(a)-i):]) == string(b[i+min(1, len(b)-i):])
	}
	return string(a[i+1:]) == string(b[i:])
}
