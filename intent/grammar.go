package intent

import (
	"encoding/json"
	"fmt"
	"regexp/syntax"
	"slices"
	"strings"
	"unicode"
)

// GrammarOptions configure [Grammar]. The zero value, or nil, is the defaults.
type GrammarOptions struct {
	// Known reports whether the speech recognizer can hear a word, given in lower case, for
	// example whether the word is in its pronunciation dictionary. A phrase with a word it does
	// not know is left out, and so is a slot value. Nil keeps every phrase.
	Known func(word string) bool
	// Name is the grammar's name; default "intents".
	Name string
}

// maxPatternPhrases bounds the phrases one pattern may spell out; a pattern that describes
// more (or an unbounded text outside a slot) is left out of a grammar.
const maxPatternPhrases = 64

// Grammar returns a JSGF grammar (JSpeech Grammar Format, which pocketsphinx and other
// recognizers read) of the phrases of an intents configuration, so that a recognizer listens
// for what the tenant's users say rather than for any English. Each intent contributes its
// examples and the phrases its patterns spell out, where a named group becomes its slot: a
// name or enum slot any of its values and synonyms, an amount or number slot a number in
// English words ("one hundred and twenty five dollars"), a date slot a day word. Words are in
// lower case; an English contraction may also be said in full ("what's" or "what is"), and
// digits in an example are said as English words.
//
// A pattern that cannot be spelled out as phrases (a wildcard outside a slot, a name slot
// without values, too many alternatives) is left out. Grammar returns the empty string when
// no phrase is left, and an error wrapping [ErrInvalidConfig] when raw does not compile.
func Grammar(raw json.RawMessage, opts *GrammarOptions) (string, error) {
	if _, err := Compile(raw); err != nil {
		return "", err
	}
	var o GrammarOptions
	if opts != nil {
		o = *opts
	}
	if o.Known == nil {
		o.Known = func(string) bool { return true }
	}
	if o.Name == "" {
		o.Name = "intents"
	}
	var top configJSON
	if err := decodeStrict(raw, &top); err != nil {
		return "", fmt.Errorf("%w: %w", ErrInvalidConfig, err)
	}
	g := &grammar{known: o.Known, rules: map[string]string{}}
	var public []string
	for _, rawIntent := range top.Intents {
		var in intentJSON
		if err := decodeStrict(rawIntent, &in); err != nil {
			return "", fmt.Errorf("%w: %w", ErrInvalidConfig, err)
		}
		if name, ok := g.intent(in); ok {
			public = append(public, "<"+name+">")
		}
	}
	if len(public) == 0 {
		return "", nil
	}
	var b strings.Builder
	fmt.Fprintf(&b, "#JSGF V1.0;\ngrammar %s;\n\npublic <utterance> = %s;\n", ruleName(o.Name), strings.Join(public, " | "))
	for _, name := range g.order {
		fmt.Fprintf(&b, "<%s> = %s;\n", name, g.rules[name])
	}
	return b.String(), nil
}

// grammar collects the rules of a grammar as they are written.
type grammar struct {
	known func(string) bool
	rules map[string]string // rule name → its expansion
	order []string
}

func (g *grammar) add(name, expansion string) {
	g.rules[name] = expansion
	g.order = append(g.order, name)
}

// unique returns base, or base with a number when a rule of that name exists.
func (g *grammar) unique(base string) string {
	name := base
	for i := 2; ; i++ {
		if _, taken := g.rules[name]; !taken {
			return name
		}
		name = fmt.Sprintf("%s_%d", base, i)
	}
}

// intent writes the rules of one intent and returns the name of its rule, or false when none
// of its phrases can be heard.
func (g *grammar) intent(in intentJSON) (string, bool) {
	var alts []string
	for _, e := range in.Examples {
		if s, ok := g.phrase(exampleWords(e)); ok {
			alts = append(alts, s)
		}
	}
	slotRules := map[string]string{} // slot name → rule name, or "" when it cannot be heard
	for _, p := range in.Patterns {
		// A pattern whose phrases are mostly unheard is another language's: the one or two of
		// its words that happen to be in this dictionary ("manda", an English name, of "envía
		// | manda | transfiere …") would put that language's phrases in this grammar.
		phrases := patternPhrases(p)
		var heard []string
		for _, ph := range phrases {
			var parts []string
			ok := true
			for _, piece := range ph {
				if piece.slot == "" {
					w, good := g.phrase(piece.words)
					if !good {
						ok = false
						break
					}
					parts = append(parts, w)
					continue
				}
				rule, seen := slotRules[piece.slot]
				if !seen {
					rule = g.slot(in.Name, piece.slot, in.Slots[piece.slot])
					slotRules[piece.slot] = rule
				}
				if rule == "" {
					ok = false
					break
				}
				parts = append(parts, "<"+rule+">")
			}
			if ok && len(parts) > 0 {
				heard = append(heard, strings.Join(parts, " "))
			}
		}
		if 2*len(heard) >= len(phrases) {
			alts = append(alts, heard...)
		}
	}
	alts = dedupe(alts)
	if len(alts) == 0 {
		return "", false
	}
	name := g.unique("intent_" + ruleName(in.Name))
	g.add(name, strings.Join(alts, " | "))
	return name, true
}

// phrase writes a sequence of words, each a word or a group of ways to say it, or reports
// that a word cannot be heard.
func (g *grammar) phrase(words [][]string) (string, bool) {
	if len(words) == 0 {
		return "", false
	}
	parts := make([]string, 0, len(words))
	for _, ways := range words {
		var heard []string
		for _, w := range ways {
			if g.heard(w) {
				heard = append(heard, w)
			}
		}
		switch len(heard) {
		case 0:
			return "", false
		case 1:
			parts = append(parts, heard[0])
		default:
			parts = append(parts, "("+strings.Join(heard, " | ")+")")
		}
	}
	return strings.Join(parts, " "), true
}

// heard reports whether every word of w, a word or words separated by spaces, is known.
func (g *grammar) heard(w string) bool {
	for _, x := range strings.Fields(w) {
		if !g.known(x) {
			return false
		}
	}
	return w != ""
}

// slot writes the rule of one slot of an intent and returns its name, or "" when the slot
// cannot be heard.
func (g *grammar) slot(intent, name string, s slotJSON) string {
	var alts []string
	switch slotType(s.Type) {
	case slotAmount:
		// Amounts as people say them: dollars up to the slot's maximum, then cents below a
		// hundred ("twelve dollars and fifty cents", "fifty cents"), never "four hundred cents".
		if d := g.dollars(s.Max); d != "" && g.heard("dollars") && g.heard("cents") {
			alts = append(alts, "<"+d+"> [dollars | dollar | bucks] [and <below_hundred> (cents | cent)]", "<below_hundred> (cents | cent)")
		}
	case slotNumber:
		if n := g.number(); n != "" {
			alts = append(alts, "<"+n+">")
		}
	case slotDate:
		for _, d := range []string{"today", "yesterday", "tomorrow", "monday", "tuesday", "wednesday",
			"thursday", "friday", "saturday", "sunday"} {
			if g.heard(d) {
				alts = append(alts, d)
			}
		}
	case slotName, slotEnum:
		for _, v := range s.Values {
			for _, say := range append([]string{v}, s.Synonyms[v]...) {
				if p, ok := g.phrase(exampleWords(say)); ok {
					alts = append(alts, p)
				}
			}
		}
	}
	alts = dedupe(alts)
	if len(alts) == 0 {
		return ""
	}
	rule := g.unique("slot_" + ruleName(intent) + "_" + ruleName(name))
	g.add(rule, strings.Join(alts, " | "))
	return rule
}

// number writes the rules of English numbers below a million, once, and returns the name of
// the top one, or "" when the recognizer does not know the words.
func (g *grammar) number() string {
	const top = "number"
	if _, done := g.rules[top]; done {
		return top
	}
	for _, w := range []string{"one", "ten", "twenty", "hundred", "thousand"} {
		if !g.heard(w) {
			return ""
		}
	}
	g.add("digit", g.words("one two three four five six seven eight nine"))
	g.add("teen", g.words("ten eleven twelve thirteen fourteen fifteen sixteen seventeen eighteen nineteen"))
	g.add("tens", g.words("twenty thirty forty fifty sixty seventy eighty ninety"))
	g.add("below_hundred", "<digit> | <teen> | <tens> [<digit>]")
	g.add("below_thousand", "<below_hundred> | [a | <digit>] hundred [[and] <below_hundred>]")
	g.add(top, "zero | <below_thousand> | [<below_thousand>] thousand [[and] <below_thousand>]")
	return top
}

// dollars writes the rule of whole amounts up to max (0: below a million) and returns its
// name: the narrower the rule, the fewer amounts an unclear word can turn into.
func (g *grammar) dollars(max float64) string {
	n := g.number()
	if n == "" {
		return ""
	}
	var rule, expansion string
	switch {
	case max > 0 && max < 1000:
		return "below_thousand"
	case max > 0 && max <= 10_000:
		rule, expansion = "dollars_4", "<below_thousand> | [a | <digit> | ten] thousand [[and] <below_thousand>]"
	case max > 0 && max < 100_000:
		rule, expansion = "dollars_5", "<below_thousand> | [a | <below_hundred>] thousand [[and] <below_thousand>]"
	default:
		return n
	}
	if _, done := g.rules[rule]; !done {
		g.add(rule, expansion)
	}
	return rule
}

// words returns the alternation of the known words of a space-separated list.
func (g *grammar) words(list string) string {
	var out []string
	for _, w := range strings.Fields(list) {
		if g.heard(w) {
			out = append(out, w)
		}
	}
	return strings.Join(out, " | ")
}

// exampleWords splits an example into lower-case words, each with the ways to say it: an
// English contraction also in full, digits as English words.
func exampleWords(s string) [][]string {
	var out [][]string
	for _, w := range speechWords(s) {
		ways := []string{w}
		if x := expandContraction(w); len(x) == 2 {
			ways = append(ways, x[0]+" "+x[1])
		}
		if isDigits(w) {
			spelled := spellNumber(w)
			if spelled == "" {
				return nil
			}
			ways = []string{spelled}
		}
		out = append(out, ways)
	}
	return out
}

// speechWords splits s into lower-case words of letters, digits and inner apostrophes.
func speechWords(s string) []string {
	var (
		out []string
		cur []rune
	)
	rs := []rune(strings.ToLower(s))
	for i, r := range rs {
		switch {
		case r == '’' || r == '‘' || r == 'ʼ':
			r = '\''
		}
		switch {
		case unicode.IsLetter(r) || unicode.IsDigit(r) || unicode.Is(unicode.Mn, r):
			cur = append(cur, r)
		case r == '\'' && len(cur) > 0 && i+1 < len(rs) && unicode.IsLetter(rs[i+1]):
			cur = append(cur, r)
		default:
			if len(cur) > 0 {
				out = append(out, string(cur))
				cur = cur[:0]
			}
		}
	}
	if len(cur) > 0 {
		out = append(out, string(cur))
	}
	return out
}

func isDigits(w string) bool {
	for _, r := range w {
		if r < '0' || r > '9' {
			return false
		}
	}
	return w != ""
}

// spellNumber returns a number below a million in English words, or "".
func spellNumber(digits string) string {
	n := 0
	for _, r := range digits {
		n = n*10 + int(r-'0')
		if n >= 1_000_000 {
			return ""
		}
	}
	units := strings.Fields("zero one two three four five six seven eight nine ten eleven twelve " +
		"thirteen fourteen fifteen sixteen seventeen eighteen nineteen")
	tens := strings.Fields("_ _ twenty thirty forty fifty sixty seventy eighty ninety")
	var below1000 func(n int) []string
	below1000 = func(n int) []string {
		var out []string
		if n >= 100 {
			out = append(out, units[n/100], "hundred")
			n %= 100
			if n == 0 {
				return out
			}
		}
		switch {
		case n < 20:
			out = append(out, units[n])
		case n%10 == 0:
			out = append(out, tens[n/10])
		default:
			out = append(out, tens[n/10], units[n%10])
		}
		return out
	}
	if n < 1000 {
		return strings.Join(below1000(n), " ")
	}
	out := append(below1000(n/1000), "thousand")
	if n%1000 != 0 {
		out = append(out, below1000(n%1000)...)
	}
	return strings.Join(out, " ")
}

// piece is part of a phrase a pattern describes: words, or a slot.
type piece struct {
	words [][]string
	slot  string
}

// patternPhrases spells out the phrases a pattern matches, with its named groups as slots,
// or returns nil when it cannot.
func patternPhrases(pattern string) [][]piece {
	re, err := syntax.Parse(pattern, syntax.Perl|syntax.FoldCase)
	if err != nil {
		return nil
	}
	seqs, ok := spell(re.Simplify())
	if !ok {
		return nil
	}
	var out [][]piece
	for _, seq := range seqs {
		if ph := toPieces(seq); len(ph) > 0 {
			out = append(out, ph)
		}
	}
	return out
}

// atom is a step of a spelled-out pattern: text, a word break, or a slot.
type atom struct {
	text string
	brk  bool
	slot string
}

// spell returns every sequence of atoms re matches, or false when re matches open-ended text
// outside a slot or too many sequences.
func spell(re *syntax.Regexp) ([][]atom, bool) {
	switch re.Op {
	case syntax.OpEmptyMatch, syntax.OpBeginLine, syntax.OpEndLine, syntax.OpBeginText,
		syntax.OpEndText, syntax.OpWordBoundary, syntax.OpNoWordBoundary:
		return [][]atom{nil}, true
	case syntax.OpLiteral:
		return [][]atom{{{text: strings.ToLower(string(re.Rune))}}}, true
	case syntax.OpCharClass:
		if isSpaceClass(re.Rune) {
			return [][]atom{{{brk: true}}}, true
		}
		if len(re.Rune) == 2 && re.Rune[0] == re.Rune[1] { // a single rune
			return [][]atom{{{text: strings.ToLower(string(re.Rune[0]))}}}, true
		}
		if r, ok := caseFoldedRune(re.Rune); ok {
			return [][]atom{{{text: string(r)}}}, true
		}
		return nil, false
	case syntax.OpCapture:
		if re.Name != "" {
			return [][]atom{{{slot: re.Name}}}, true
		}
		return spell(re.Sub[0])
	case syntax.OpStar, syntax.OpPlus, syntax.OpQuest, syntax.OpRepeat:
		if re.Sub[0].Op == syntax.OpCharClass && isSpaceClass(re.Sub[0].Rune) {
			return [][]atom{{{brk: true}}}, true
		}
		if re.Op != syntax.OpQuest {
			return nil, false
		}
		seqs, ok := spell(re.Sub[0])
		if !ok {
			return nil, false
		}
		return append([][]atom{nil}, seqs...), len(seqs)+1 <= maxPatternPhrases
	case syntax.OpConcat:
		out := [][]atom{nil}
		for _, sub := range re.Sub {
			seqs, ok := spell(sub)
			if !ok || len(out)*len(seqs) > maxPatternPhrases {
				return nil, false
			}
			var next [][]atom
			for _, a := range out {
				for _, b := range seqs {
					next = append(next, append(slices.Clip(a), b...))
				}
			}
			out = next
		}
		return out, true
	case syntax.OpAlternate:
		var out [][]atom
		for _, sub := range re.Sub {
			seqs, ok := spell(sub)
			if !ok || len(out)+len(seqs) > maxPatternPhrases {
				return nil, false
			}
			out = append(out, seqs...)
		}
		return out, true
	}
	return nil, false
}

// isSpaceClass reports whether a character class holds only white space.
func isSpaceClass(ranges []rune) bool {
	for i := 0; i+1 < len(ranges); i += 2 {
		for r := ranges[i]; r <= ranges[i+1]; r++ {
			if !unicode.IsSpace(r) {
				return false
			}
		}
	}
	return len(ranges) > 0
}

// caseFoldedRune recognises the class of one letter in its cases, as case folding makes of a
// literal ("[Ss]"), and returns the letter in lower case.
func caseFoldedRune(ranges []rune) (rune, bool) {
	var rs []rune
	for i := 0; i+1 < len(ranges); i += 2 {
		for r := ranges[i]; r <= ranges[i+1]; r++ {
			rs = append(rs, r)
			if len(rs) > 4 {
				return 0, false
			}
		}
	}
	if len(rs) == 0 {
		return 0, false
	}
	lower := unicode.ToLower(rs[0])
	for _, r := range rs {
		if unicode.ToLower(r) != lower {
			return 0, false
		}
	}
	return lower, true
}

// toPieces joins a spelled-out sequence into words and slots.
func toPieces(seq []atom) []piece {
	var (
		out  []piece
		text strings.Builder
	)
	flush := func() {
		if ws := exampleWords(text.String()); len(ws) > 0 {
			if n := len(out); n > 0 && out[n-1].slot == "" {
				out[n-1].words = append(out[n-1].words, ws...)
			} else {
				out = append(out, piece{words: ws})
			}
		}
		text.Reset()
	}
	for _, a := range seq {
		switch {
		case a.slot != "":
			flush()
			out = append(out, piece{slot: a.slot})
		case a.brk:
			text.WriteByte(' ')
		default:
			text.WriteString(a.text)
		}
	}
	flush()
	return out
}

// ruleName makes s fit for a JSGF rule name.
func ruleName(s string) string {
	return strings.Map(func(r rune) rune {
		if r < 0x80 && (unicode.IsLetter(r) || unicode.IsDigit(r)) {
			return r
		}
		return '_'
	}, s)
}

func dedupe(s []string) []string {
	seen := make(map[string]bool, len(s))
	out := s[:0]
	for _, x := range s {
		if !seen[x] {
			seen[x] = true
			out = append(out, x)
		}
	}
	return out
}
