package pii

import (
	"errors"
	"fmt"
	"regexp"
	"slices"
)

// DefaultMaxInput is the number of bytes of a text a [Detector] reads when
// [Options].MaxInput is zero.
const DefaultMaxInput = 64 << 10

// maxPatterns bounds the tenant's patterns, each of which costs a pass over the text.
const maxPatterns = 64

// ErrOptions is returned by [New] for options it cannot use.
var ErrOptions = errors.New("pii: invalid options")

// Options configures a [Detector]. A nil *Options means the defaults.
type Options struct {
	// Kinds are the kinds to find. Nil means Card, IBAN, Phone and Email, and Account and
	// Custom when Patterns has patterns of those kinds.
	Kinds []Kind
	// Patterns are the tenant's own formats: account and routing numbers, customer ids.
	Patterns []Pattern
	// Locales are the languages whose spoken digits are read in transcripts ("four one one
	// one", "quatre un un un"), by their ISO 639-1 codes: "en", "es", "fr", "de", "it", "pt".
	// Nil means all of them; an empty, non-nil slice means none (typed digits only).
	Locales []string
	// MaxInput is the number of bytes of a text that are read (cut back to the start of a
	// UTF-8 sequence); what follows is not looked at. Zero means [DefaultMaxInput].
	MaxInput int
}

// Pattern is one of the tenant's formats.
type Pattern struct {
	// Kind is Account or Custom.
	Kind Kind
	// Name names the pattern in a [Match], as "routing" or "customer_id".
	Name string
	// Regexp is the pattern in RE2 syntax (package regexp), as "\b\d{9}\b". Matching costs
	// time linear in the text. It is also tried on the digits of spoken numbers.
	Regexp string
}

// pattern is a compiled [Pattern].
type pattern struct {
	kind Kind
	name string
	re   *regexp.Regexp
}

// compile checks o and compiles its patterns.
func (o *Options) compile() (kinds [Custom + 1]bool, pats []pattern, locs []string, max int, err error) {
	if o == nil {
		o = &Options{}
	}
	if len(o.Patterns) > maxPatterns {
		return kinds, nil, nil, 0, fmt.Errorf("%w: %d patterns, at most %d", ErrOptions, len(o.Patterns), maxPatterns)
	}
	for i, p := range o.Patterns {
		if p.Kind != Account && p.Kind != Custom {
			return kinds, nil, nil, 0, fmt.Errorf("%w: pattern %d (%q): kind %v, want account or custom", ErrOptions, i, p.Name, p.Kind)
		}
		if p.Name == "" {
			return kinds, nil, nil, 0, fmt.Errorf("%w: pattern %d has no name", ErrOptions, i)
		}
		re, err := regexp.Compile(p.Regexp)
		if err != nil {
			return kinds, nil, nil, 0, fmt.Errorf("%w: pattern %q: %v", ErrOptions, p.Name, err)
		}
		pats = append(pats, pattern{kind: p.Kind, name: p.Name, re: re})
	}
	if o.Kinds == nil {
		kinds[Card], kinds[IBAN], kinds[Phone], kinds[Email] = true, true, true, true
		for _, p := range pats {
			kinds[p.kind] = true
		}
	}
	for _, k := range o.Kinds {
		if k < Card || k > Custom {
			return kinds, nil, nil, 0, fmt.Errorf("%w: unknown kind %d", ErrOptions, int(k))
		}
		kinds[k] = true
	}
	locs = o.Locales
	if locs == nil {
		locs = Locales()
	}
	for _, l := range locs {
		if !slices.Contains(Locales(), l) {
			return kinds, nil, nil, 0, fmt.Errorf("%w: locale %q, want one of %v", ErrOptions, l, Locales())
		}
	}
	max = o.MaxInput
	if max < 0 {
		return kinds, nil, nil, 0, fmt.Errorf("%w: negative MaxInput", ErrOptions)
	}
	if max == 0 {
		max = DefaultMaxInput
	}
	return kinds, pats, locs, max, nil
}
