package intent

import (
	"math"
	"regexp"
	"strings"
	"time"
)

// stopWeight is the weight of a stop word in matching, against 1 for any other word.
const stopWeight = 0.2

// Match is how a [Config] understood one utterance.
type Match struct {
	// Intent is the name of the intent chosen: the best match, or the fallback intent when
	// no score reached the threshold.
	Intent string
	// Score is the best similarity found, from 0 to 1; a pattern match scores 1.
	Score float64
	// Slots holds the slot values found, as JSON types: float64 for amounts and numbers,
	// string for names, dates and enums. Slots not found are absent.
	Slots map[string]any
}

// Match classifies text and reads its slots. Dates such as "yesterday" are resolved against
// now. It is what [Model.Stream] does with a user message, without the conversation around it.
func (c *Config) Match(text string, now time.Time) Match {
	in, score, groups := c.classify(text)
	return Match{Intent: in.name, Score: score, Slots: in.extract(text, groups, now)}
}

// bag is an utterance or example as weighted, distinct tokens.
type bag struct {
	toks []string
	w    []float64
	norm float64
}

func (c *Config) bag(text string) bag {
	var b bag
	seen := make(map[string]bool)
	sum := 0.0
	for _, t := range tokens(text) {
		if seen[t] {
			continue
		}
		seen[t] = true
		w := 1.0
		if c.stop[t] {
			w = stopWeight
		}
		b.toks = append(b.toks, t)
		b.w = append(b.w, w)
		sum += w * w
	}
	b.norm = math.Sqrt(sum)
	return b
}

// similarity is the cosine of two bags, where a token of q counts for its best match in e
// (see [tokenSimilarity]) so that near spellings still meet.
func similarity(q, e bag) float64 {
	if q.norm == 0 || e.norm == 0 {
		return 0
	}
	dot := 0.0
	for i, qt := range q.toks {
		best := 0.0
		for j, et := range e.toks {
			best = max(best, tokenSimilarity(qt, et)*e.w[j])
		}
		dot += q.w[i] * best
	}
	return min(1, dot/(q.norm*e.norm))
}

// cleanUtterance straightens typographic apostrophes and collapses white space, the form
// patterns are matched against.
func cleanUtterance(s string) string {
	s = strings.NewReplacer("’", "'", "‘", "'").Replace(s)
	return strings.Join(strings.Fields(s), " ")
}

// classify returns the best intent for text with its score and the named groups of the
// pattern that matched, if one did; below the threshold it returns the fallback intent.
func (c *Config) classify(text string) (*intentDef, float64, map[string]string) {
	text = cleanUtterance(text)
	q := c.bag(text)
	var (
		best      *intentDef
		bestScore float64
		groups    map[string]string
	)
	for _, in := range c.intents {
		if score, g := in.score(text, q); score > bestScore {
			best, bestScore, groups = in, score, g
		}
	}
	if best == nil || bestScore < c.threshold {
		return c.fallback, bestScore, nil
	}
	return best, bestScore, groups
}

// score is 1 with the groups of the first pattern that matches text, and otherwise the best
// similarity of q to one of the examples.
func (in *intentDef) score(text string, q bag) (float64, map[string]string) {
	for _, re := range in.patterns {
		if m := re.FindStringSubmatch(text); m != nil {
			return 1, namedGroups(re, m)
		}
	}
	best := 0.0
	for _, e := range in.examples {
		best = max(best, similarity(q, e))
	}
	return best, nil
}

func namedGroups(re *regexp.Regexp, m []string) map[string]string {
	g := make(map[string]string)
	for i, name := range re.SubexpNames() {
		if name != "" && strings.TrimSpace(m[i]) != "" {
			g[name] = m[i]
		}
	}
	return g
}

// extract reads the intent's slots from text: from the pattern's groups where they captured
// something, else from the whole text.
func (in *intentDef) extract(text string, groups map[string]string, now time.Time) map[string]any {
	out := make(map[string]any)
	for _, s := range in.slots {
		var (
			v  any
			ok bool
		)
		if g, captured := groups[s.name]; captured {
			v, ok = s.parse(g, now)
		} else {
			v, ok = s.find(text, now)
		}
		if ok {
			out[s.name] = v
		}
	}
	return out
}

// missing returns the required slots absent from values.
func (in *intentDef) missing(values map[string]any) []string {
	var out []string
	for _, s := range in.slots {
		if _, ok := values[s.name]; s.required && !ok {
			out = append(out, s.name)
		}
	}
	return out
}

// understand picks the intent and slots that answer user. When the previous user messages
// (oldest first) chose an intent that still lacked required slots (so the answer asked for
// them), a reply that matches nothing better, or the same intent, fills those slots instead:
// "Send money", "How much…?", "20 to Alex"; or over several replies: "Send money", "to
// Jordan", "30 dollars".
func (c *Config) understand(user string, previous []string, now time.Time) (*intentDef, map[string]any) {
	in, score, groups := c.classify(user)
	slots := in.extract(user, groups, now)
	if len(previous) == 0 {
		return in, slots
	}
	// What the previous message came to, itself perhaps a reply to an earlier question.
	last := len(previous) - 1
	prev, prevSlots := c.understand(previous[last], previous[:last], now)
	if len(prev.missing(prevSlots)) == 0 {
		return in, slots
	}
	switch {
	case in == prev:
	case score < c.threshold:
		found := prev.extract(user, nil, now)
		if len(found) == 0 {
			return in, slots
		}
		in, slots = prev, found
	default:
		return in, slots
	}
	for k, v := range slots {
		prevSlots[k] = v
	}
	return in, prevSlots
}
