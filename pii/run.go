package pii

import (
	"strings"
	"unicode"
	"unicode/utf8"
)

// piece is a group of digits of a number: a typed group ("4111") or what one or a few spoken
// words stand for ("four", "double four", "forty-one", "quatre-vingt-dix-sept").
type piece struct {
	start, end int // bytes of text
	lo, hi     int // the piece's digits are run.digits[lo:hi]
	typed      bool
	gap        string // the text between the previous piece and this one
}

// run is a number written or said in pieces joined by blanks or single punctuation marks.
type run struct {
	pieces []piece
	digits string
	spoken bool // some piece is a spoken word
	pairs  bool // some piece is a number from 10 to 99 said as words ("forty-one")
	plus   bool // preceded by "+" or a word for plus
	// A spelled letter or a code of letters and digits comes right before or after: the
	// digits are part of a code (a reference, an IBAN with a wrong check), not a number.
	spelledBefore, spelledAfter bool
	// Some typed pieces are joined by a separator a spoken number's are not ("/", "_", two
	// spaces): the run is a typed number, and a spoken piece starts another.
	broad bool
}

// runs groups tokens into runs of digits. A word for "double" takes the digit that follows; a
// filler word between two pieces does not break the run.
func (s *scan) runs(text string, toks []token, visit func(r *run)) {
	r := &s.run
	var digits strings.Builder
	first, last := 0, 0 // the tokens of r
	joined := func(gap string) bool { return joinable(gap) || separator(gap) }
	spelled := func(k, from, to int) bool {
		if k < 0 || k >= len(toks) || !joined(text[from:to]) {
			return false
		}
		t := toks[k]
		// A code of letters and digits, a spelled letter, or an IBAN's country code in capitals.
		if t.class == tokMixed || t.class == tokLetters && t.w.digits == "" && t.end-t.start == 1 ||
			t.class == tokLetters && t.end-t.start == 2 && ibanLength(text[t.start], text[t.start+1]) > 0 {
			return true
		}
		// Or the letters of an IBAN's account after its head ("IE71 OZWY 6708…", which a
		// wrong check keeps from being an IBAN).
		for n := 0; n < 3 && t.class == tokLetters && t.w.digits == "" && t.end-t.start <= 4 && k > 0 && joined(text[toks[k-1].end:t.start]); n++ {
			k--
			t = toks[k]
			if t.class == tokMixed && t.end-t.start == 4 {
				a, _ := upper(text[t.start])
				b, _ := upper(text[t.start+1])
				if ibanLength(a, b) > 0 && isDigit(text[t.start+2]) && isDigit(text[t.start+3]) {
					return true
				}
			}
		}
		return false
	}
	flush := func() {
		if len(r.pieces) > 0 {
			r.digits = digits.String()
			r.spelledBefore = first > 0 && spelled(first-1, toks[first-1].end, toks[first].start)
			r.spelledAfter = last+1 < len(toks) && spelled(last+1, toks[last].end, toks[last+1].start)
			visit(r)
		}
		*r = run{pieces: r.pieces[:0]}
		digits.Reset()
	}
	prevEnd := -1 // end of the last piece of r
	for i := 0; i < len(toks); i++ {
		s.steps++
		t := toks[i]
		from := i // the piece's first token
		var p piece
		var ds string
		times, pair := 1, false
		switch {
		case t.class == tokDigits:
			ds, p.typed = asciiDigits(text[t.start:t.end]), true
		case t.class == tokLetters && (t.w.num > 0 || t.w.unit > 0) && s.numberAt(text, toks, &i, &ds):
			// a number from 10 to 99, of one word or several ("forty-one", "cuarenta y uno")
			pair = true
		case t.class == tokLetters && t.w.digits != "":
			ds = t.w.digits
		case t.class == tokLetters && t.w.times > 0 && i+1 < len(toks) && joinable(text[t.end:toks[i+1].start]):
			n := toks[i+1]
			switch {
			case n.class == tokDigits && utf8.RuneCountInString(text[n.start:n.end]) == 1:
				ds = asciiDigits(text[n.start:n.end])
			case n.class == tokLetters && len(n.w.digits) == 1:
				ds = n.w.digits
			}
			if ds != "" {
				times = t.w.times
				i++
			}
		case t.class == tokLetters && t.w.filler && len(r.pieces) > 0:
			continue // a hesitation inside a number; the gap check below decides
		}
		if ds == "" {
			flush()
			prevEnd = -1
			if t.class == tokLetters && t.w.plus {
				r.plus = true
				prevEnd = t.end
			}
			continue
		}
		p.start, p.end = t.start, toks[i].end
		if prevEnd >= 0 {
			p.gap = text[prevEnd:p.start]
			typed := p.typed && !r.spoken && len(r.pieces) > 0 && separator(p.gap)
			switch {
			case !p.typed && r.broad:
				flush()
				prevEnd = -1
			case joinable(p.gap):
			case typed:
				r.broad = true
			case len(r.pieces) > 0 && fillers(s, text, prevEnd, p.start):
			default:
				flush()
				prevEnd = -1
			}
		}
		if len(r.pieces) == 0 && !r.plus && precededByPlus(text, p.start) {
			r.plus = true
		}
		if len(r.pieces) == 0 {
			p.gap = ""
			first = from
		}
		last = i
		p.lo = digits.Len()
		for range times {
			digits.WriteString(ds)
		}
		p.hi = digits.Len()
		r.spoken = r.spoken || !p.typed
		r.pairs = r.pairs || pair
		r.pieces = append(r.pieces, p)
		prevEnd = p.end
	}
	flush()
}

// fillers reports whether text[from:to] holds only filler words joined as a spoken number's
// pieces are ("four, uh, one").
func fillers(s *scan, text string, from, to int) bool {
	gap := text[from:to]
	if len(gap) > 24 {
		return false
	}
	var buf [16]byte
	for _, f := range strings.FieldsFunc(gap, func(r rune) bool { return r == ' ' || r == ',' || r == '-' || r == '.' }) {
		s.steps++
		if !s.d.lookup(f, buf[:0]).filler {
			return false
		}
	}
	return true
}

// precededByPlus reports whether a "+" comes right before i, or with one blank between.
func precededByPlus(text string, i int) bool {
	if i > 0 && text[i-1] == '+' {
		return true
	}
	return i > 1 && text[i-1] == ' ' && text[i-2] == '+'
}

// span returns the bytes of pieces [i, j) of r.
func (r *run) span(i, j int) (int, int) { return r.pieces[i].start, r.pieces[j-1].end }

// separator reports whether gap, between two typed groups of digits, is what people put
// between the groups of a number they write or paste: a short run of blanks (spaces, tabs,
// line breaks) with at most one punctuation mark among them (".", ",", "/", "_", a dash…),
// the closing and opening brackets of groups written in brackets aside ("4539) (1488").
func separator(gap string) bool {
	if gap == "" || len(gap) > 12 {
		return false
	}
	runes, marks := 0, 0
	for i, c := range gap {
		runes++
		switch {
		case c == ' ' || c == '\t' || c == '\n' || c == '\r':
		case (c == ')' || c == ']') && i == 0:
		case (c == '(' || c == '[') && i == len(gap)-1:
		case strings.ContainsRune(".,/_'·،", c) || unicode.Is(unicode.Pd, c):
			marks++
		default:
			return false
		}
	}
	return runes <= 4 && marks <= 1
}

// separatorKey is what two separators of one number have in common: the gap with its runs of
// blanks as one space ("4539 1488\n0343" is grouped one way).
func separatorKey(gap string) string {
	if !strings.ContainsAny(gap, "\t\n\r") && !strings.Contains(gap, "  ") {
		return gap // the usual case, without allocating
	}
	var b strings.Builder
	blank := false
	for _, c := range gap {
		if c == ' ' || c == '\t' || c == '\n' || c == '\r' {
			if !blank {
				b.WriteByte(' ')
			}
			blank = true
			continue
		}
		blank = false
		b.WriteRune(c)
	}
	return b.String()
}

// sameSeparator reports whether gap joins the groups of a number whose first separator is
// first: the same separator, blanks counted alike, or a blank and a dash ("4111 1111-1111").
func sameSeparator(first, gap string) bool {
	if !separator(gap) {
		return false
	}
	k, kg := separatorKey(first), separatorKey(gap)
	return k == kg || (k == " " || k == "-") && (kg == " " || kg == "-")
}

// cards finds the card numbers of a run. In typed digits a card is a whole number of groups in
// a usual grouping, all joined by the same separator (see [separator]).
func (s *scan) cards(r *run, add func(kind Kind, name string, start, end int, value string)) {
	if r.spelledBefore {
		return
	}
	if r.spoken {
		s.spokenCard(r, add)
		return
	}
	free := 0 // the first piece that no card found so far holds
	for i := 0; i < len(r.pieces); {
		best := -1
		var groups [20]int
		n := 0
		for j := i; j < len(r.pieces) && j-i < len(groups); j++ {
			s.steps++
			p := r.pieces[j]
			if j > i && !sameSeparator(r.pieces[i+1].gap, p.gap) {
				break
			}
			groups[j-i] = p.hi - p.lo
			n += p.hi - p.lo
			if n > 19 {
				break
			}
			if n >= 12 && cardShape(groups[:j-i+1], r.pieces[min(i+1, j)].gap) && !r.continues(i, j, free) && isCard(r.digits[r.pieces[i].lo:p.hi]) {
				best = j
			}
		}
		if best < 0 {
			i++
			continue
		}
		start, end := r.span(i, best+1)
		add(Card, "card", start, end, r.digits[r.pieces[i].lo:r.pieces[best].hi])
		i, free = best+1, best+1
	}
}

// continues reports whether the typed pieces [i, j] are part of a longer number: a group of
// three digits or more joined the same way comes right before or after them. ("12/25" after a
// card number is its expiry, not more of it.) Pieces before free are a card found already. A
// number written all at once is whole: a group after a blank is the next thing written (a
// security code, another card), one joined by a dash more of it.
//
// A number written in groups of one, two or three digits ("4 5 3 9…", "453 914…") is whole:
// any group joined the same way before or after it is more of it.
func (r *run) continues(i, j, free int) bool {
	size := func(k int) int { return r.pieces[k].hi - r.pieces[k].lo }
	if i == j {
		return i > free && size(i-1) >= 3 && r.pieces[i].gap == "-" || j+1 < len(r.pieces) && size(j+1) >= 3 && r.pieces[j+1].gap == "-"
	}
	gap := separatorKey(r.pieces[i+1].gap) // the window's own separator
	long := min(3, size(i))
	if i > free && size(i-1) >= long && separatorKey(r.pieces[i].gap) == gap {
		return true
	}
	return j+1 < len(r.pieces) && size(j+1) >= long && separatorKey(r.pieces[j+1].gap) == gap
}

// articles are spoken digits that are also articles ("un", "uno", "um"), which may come
// right before a number said as words without being part of it.
var articles = map[string]bool{"un": true, "une": true, "uno": true, "una": true, "um": true, "uma": true, "one": true, "o": true, "ein": true, "eine": true}

// maxTrailing is how many digits may be said after a spoken card number, after a pause (a
// comma or full stop), and not be part of it: a security code.
const maxTrailing = 4

// minBeforeTrailing is how long a spoken card must be for digits said after it to be left
// out: every network but Maestro and Diners issues cards of 15 digits or more, and shorter
// windows would let chance in.
const minBeforeTrailing = 14

// spokenCard finds a card number said as words. Spoken, the grouping is lost, and trying every
// window of a run would find a Luhn-valid one by chance in one run of digits in a few; so the
// card is the whole run, or the run without a leading article ("un", "uno") or without up to
// four digits said after a pause.
func (s *scan) spokenCard(r *run, add func(kind Kind, name string, start, end int, value string)) {
	last := len(r.pieces)
	starts := []int{0}
	if p := r.pieces[0]; !p.typed && p.hi-p.lo == 1 && len(r.pieces) > 1 && articles[strings.ToLower(s.text[p.start:p.end])] {
		starts = append(starts, 1)
	}
	ends := []int{last}
	for j := last - 1; j > 0 && r.pieces[last-1].hi-r.pieces[j].lo <= maxTrailing; j-- {
		s.steps++
		if strings.ContainsAny(r.pieces[j].gap, ",.") && r.pieces[j].lo >= minBeforeTrailing {
			if len(r.digits) > 16 {
				ends = []int{j, last} // a card of 16 digits or fewer and its code
			} else {
				ends = append(ends, j)
			}
			break
		}
	}
	for _, j := range ends {
		for _, i := range starts {
			s.steps++
			if i >= j {
				continue
			}
			if v := r.digits[r.pieces[i].lo:r.pieces[j-1].hi]; isCard(v) {
				start, end := r.span(i, j)
				add(Card, "card", start, end, v)
				return
			}
		}
	}
}

// spokenPhone finds a phone number said as words: the whole run, with its country code after a
// word for plus (8 to 15 digits), or the length and first digits of a national number of the
// countries whose forms are read in typed text. Said in pairs, without a word for plus, a
// national number must start with its trunk zero ("zéro six, douze…"), as French ones are
// said: any five numbers from 20 to 99 in a row have a United States number's length and
// first digit.
func (s *scan) spokenPhone(r *run, add func(kind Kind, name string, start, end int, value string)) {
	if !r.spoken || r.spelledBefore || r.spelledAfter {
		return
	}
	d := r.digits
	start, end := r.span(0, len(r.pieces))
	if r.plus {
		if len(d) >= 8 && len(d) <= 15 && d[0] != '0' {
			add(Phone, "phone", start, end, "+"+d)
		}
		return
	}
	if nationalDigits(d) && (!r.pairs || d[0] == '0') {
		add(Phone, "phone", start, end, d)
	}
}

// nationalDigits reports whether d has the length and leading digits of a national number:
// Spain (9 digits, 6-9 first), France and Germany (10 or 11 with a trunk 0), the United States
// and Mexico (10 digits, or 11 with the US's 1).
func nationalDigits(d string) bool {
	switch len(d) {
	case 9:
		return d[0] >= '6' && d[0] <= '9'
	case 10:
		return d[0] == '0' && d[1] != '0' || d[0] >= '2'
	case 11:
		return d[0] == '0' && d[1] != '0' || d[0] == '1' && d[1] >= '2'
	}
	return false
}

// spokenPatterns tries the tenant's patterns on the digits of a spoken run; a match covers the
// words that said its digits.
func (s *scan) spokenPatterns(r *run, add func(kind Kind, name string, start, end int, value string)) {
	if !r.spoken {
		return
	}
	for _, p := range s.d.patterns {
		i := 0
		for _, loc := range p.re.FindAllStringIndex(r.digits, -1) {
			if loc[0] == loc[1] {
				continue
			}
			for i < len(r.pieces)-1 && r.pieces[i].hi <= loc[0] {
				s.steps++
				i++
			}
			j := i
			for j < len(r.pieces)-1 && r.pieces[j+1].lo < loc[1] {
				s.steps++
				j++
			}
			start, end := r.span(i, j+1)
			add(p.kind, p.name, start, end, r.digits[loc[0]:loc[1]])
		}
	}
}
