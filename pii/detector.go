package pii

import (
	"cmp"
	"slices"
	"sync"
	"unicode/utf8"
)

// Detector finds personal data in text. It is built once per tenant by [New] and is safe for
// concurrent use: Find and Mask only read it.
type Detector struct {
	kinds    [Custom + 1]bool
	patterns []pattern
	words    map[string]*word
	maxInput int
}

// New returns a detector configured by o; nil o means the defaults. It fails with
// [ErrOptions] for an unknown kind or locale, a pattern that is not RE2 or whose kind is not
// Account or Custom.
func New(o *Options) (*Detector, error) {
	kinds, pats, locs, max, err := o.compile()
	if err != nil {
		return nil, err
	}
	return &Detector{kinds: kinds, patterns: pats, words: words(locs), maxInput: max}, nil
}

// MaxInput returns how many bytes of a text Find reads (see [Options].MaxInput).
func (d *Detector) MaxInput() int { return d.maxInput }

// scan is the state of one call of Find.
type scan struct {
	d     *Detector
	text  string
	steps int // work done, counted by the tests to show it is linear
	found [Custom + 1][]Match
	// toks and run are buffers kept from one Find to the next (scans are pooled): a turn
	// masks every delta of its speech, a log handler every line.
	toks []token
	run  run
}

// scans are the scans not in use; one that grew past maxPooled is dropped rather than kept.
var scans = sync.Pool{New: func() any { return new(scan) }}

const maxPooled = 4096 // tokens

// Find returns the personal data in text, in order, without overlaps: where two matches
// overlap, the one of the kind first in [Kinds] is kept (a card before a phone number, a
// tenant's pattern in the order of [Options].Patterns). Only the first [Detector.MaxInput]
// bytes of text are read: personal data past them is not found; a caller that must not let
// any through treats the rest as unread ([Detector.Truncated]). The work is linear in the text.
func (d *Detector) Find(text string) []Match {
	m, _ := d.find(text)
	return m
}

// Truncated reports whether text is longer than what Find reads.
func (d *Detector) Truncated(text string) bool { return len(text) > d.maxInput }

// find is Find, and also returns the steps it took.
func (d *Detector) find(text string) ([]Match, int) {
	if len(text) > d.maxInput {
		cut := d.maxInput
		for cut > 0 && !utf8.RuneStart(text[cut]) {
			cut--
		}
		text = text[:cut]
	}
	// The rules read the text as a person does; the matches cover what was written.
	var rd reading
	read(text, &rd)
	text = rd.text
	s := scans.Get().(*scan)
	s.d, s.text = d, text
	defer func() {
		if cap(s.toks) <= maxPooled && cap(s.run.pieces) <= maxPooled {
			// A pooled scan keeps buffers of offsets only: no text, no digits read.
			*s = scan{toks: s.toks[:0], run: run{pieces: s.run.pieces[:0]}}
			scans.Put(s)
		}
	}()
	var byPattern [][]Match
	if len(d.patterns) > 0 {
		byPattern = make([][]Match, len(d.patterns))
	}
	add := func(kind Kind, name string, start, end int, value string) {
		if !d.kinds[kind] {
			return
		}
		start, end = rd.span(start, end)
		m := Match{Kind: kind, Name: name, Start: start, End: end, Value: value}
		if kind == Account || kind == Custom {
			for i, p := range d.patterns {
				if p.name == name && p.kind == kind {
					byPattern[i] = append(byPattern[i], m)
					return
				}
			}
		}
		s.found[kind] = append(s.found[kind], m)
	}
	toks := s.tokenize(text)
	s.toks = toks
	if d.kinds[Card] || d.kinds[Phone] || len(d.patterns) > 0 {
		s.runs(text, toks, func(r *run) {
			if d.kinds[Card] {
				s.cards(r, add)
			}
			if d.kinds[Phone] {
				s.spokenPhone(r, add)
			}
			s.spokenPatterns(r, add)
		})
	}
	if d.kinds[IBAN] {
		s.ibans(text, toks, add)
	}
	if d.kinds[Phone] {
		s.phones(text, add)
	}
	if d.kinds[Email] {
		s.emails(text, add)
	}
	for i, p := range d.patterns {
		if !d.kinds[p.kind] {
			continue
		}
		for _, loc := range p.re.FindAllStringIndex(text, -1) {
			if loc[0] < loc[1] {
				start, end := rd.span(loc[0], loc[1])
				byPattern[i] = append(byPattern[i], Match{Kind: p.kind, Name: p.name, Start: start, End: end, Value: text[loc[0]:loc[1]]})
			}
		}
	}

	// Keep the matches of each level that overlap none kept before, in the order of Kinds.
	var kept []Match
	level := func(ms []Match) {
		slices.SortStableFunc(ms, func(a, b Match) int { return cmp.Compare(a.Start, b.Start) })
		out := make([]Match, 0, len(kept)+len(ms))
		j, lastEnd := 0, -1
		for _, m := range ms {
			s.steps++
			for j < len(kept) && kept[j].End <= m.Start {
				out = append(out, kept[j])
				j++
			}
			if m.Start < lastEnd || j < len(kept) && kept[j].Start < m.End {
				continue // overlaps a match kept before, or one of its own level
			}
			if len(out) > 0 && out[len(out)-1].End > m.Start {
				continue
			}
			out = append(out, m)
			lastEnd = m.End
		}
		kept = append(out, kept[j:]...)
	}
	for _, k := range Kinds() {
		if k == Account || k == Custom {
			for i, p := range d.patterns {
				if p.kind == k {
					level(byPattern[i])
				}
			}
			continue
		}
		level(s.found[k])
	}
	return kept, s.steps
}
