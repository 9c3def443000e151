package intent

import (
	"bytes"
	"cmp"
	"encoding/json"
	"errors"
	"fmt"
	"maps"
	"regexp"
	"slices"
	"strings"

	"github.com/convengine/engine"
	"github.com/convengine/engine/widgets"
)

// ErrInvalidConfig is wrapped by the errors of [Compile] and [Model.Check].
var ErrInvalidConfig = errors.New("intent: invalid config")

// ErrNoConfig is returned for a tenant whose Intents configuration is empty.
var ErrNoConfig = errors.New("intent: tenant has no intents configuration")

// Defaults of the configuration's top-level keys.
const (
	defaultThreshold    = 0.5
	defaultMaxListItems = 5
	defaultFallback     = "fallback"
	defaultHome         = "home"
)

// Config is a compiled intents configuration: one tenant's intents with their examples,
// patterns, slots, tool calls and per-locale responses. The package documentation describes
// its JSON form. A Config is immutable and safe for concurrent use.
type Config struct {
	threshold float64
	maxList   int
	stop      map[string]bool
	intents   []*intentDef
	fallback  *intentDef
	home      *intentDef
	errorText localized[*template]
}

// intentDef is a compiled intent.
type intentDef struct {
	name      string
	examples  []bag
	patterns  []*regexp.Regexp
	slots     []*slot // by name
	tools     []*call
	action    *call
	responses localized[*response]
}

// call is a compiled tool call: a tool name and argument templates.
type call struct {
	name string
	args []arg // by key
}

// arg is one argument: a JSON literal, or a template when the configuration gave a string.
type arg struct {
	key     string
	literal json.RawMessage
	tmpl    *template
}

// configJSON is the top level of the JSON form.
type configJSON struct {
	Threshold    *float64          `json:"threshold"`
	Fallback     string            `json:"fallback"`
	Home         string            `json:"home"`
	MaxListItems int               `json:"max_list_items"`
	StopWords    []string          `json:"stop_words"`
	Error        map[string]string `json:"error"`
	Intents      []json.RawMessage `json:"intents"`
}

type intentJSON struct {
	Name      string                     `json:"name"`
	Examples  []string                   `json:"examples"`
	Patterns  []string                   `json:"patterns"`
	Slots     map[string]slotJSON        `json:"slots"`
	Tools     []callJSON                 `json:"tools"`
	Action    *callJSON                  `json:"action"`
	Responses map[string]json.RawMessage `json:"responses"`
}

type slotJSON struct {
	Type     string              `json:"type"`
	Required bool                `json:"required"`
	Values   []string            `json:"values"`
	Synonyms map[string][]string `json:"synonyms"`
	// Max is the largest value of an amount or number slot; a larger one leaves the slot
	// unfilled, so that the intent asks again. 0: no bound.
	Max float64 `json:"max"`
}

type callJSON struct {
	Name      string                     `json:"name"`
	Arguments map[string]json.RawMessage `json:"arguments"`
}

// problems collects configuration errors, each prefixed with the path of its field.
type problems []error

func (p *problems) add(path string, err error) {
	if err != nil {
		*p = append(*p, fmt.Errorf("%s: %w", path, err))
	}
}

func (p *problems) addf(path, format string, args ...any) {
	p.add(path, fmt.Errorf(format, args...))
}

func (p problems) err() error {
	if len(p) == 0 {
		return nil
	}
	return fmt.Errorf("%w: %w", ErrInvalidConfig, errors.Join(p...))
}

var namePattern = regexp.MustCompile(`^[A-Za-z0-9_-]{1,64}$`)

// Compile reads and checks a configuration in its JSON form (the value of a tenant's
// "intents" key). Its errors wrap [ErrInvalidConfig] and name the path of each field at
// fault, such as "intents[2].patterns[0]".
func Compile(raw json.RawMessage) (*Config, error) {
	var p problems
	var top configJSON
	if len(bytes.TrimSpace(raw)) == 0 {
		return nil, fmt.Errorf("%w: the configuration is empty", ErrInvalidConfig)
	}
	if err := decodeStrict(raw, &top); err != nil {
		return nil, fmt.Errorf("%w: %w", ErrInvalidConfig, err)
	}
	c := &Config{threshold: defaultThreshold, maxList: defaultMaxListItems, stop: make(map[string]bool)}
	if top.Threshold != nil {
		c.threshold = *top.Threshold
		if c.threshold <= 0 || c.threshold > 1 {
			p.addf("threshold", "must be above 0 and at most 1")
		}
	}
	if top.MaxListItems != 0 {
		c.maxList = top.MaxListItems
		if c.maxList < 1 || c.maxList > widgets.MaxListLen {
			p.addf("max_list_items", "must be from 1 to %d", widgets.MaxListLen)
		}
	}
	for _, w := range strings.Fields(defaultStopWords) {
		for _, t := range tokens(w) {
			c.stop[t] = true
		}
	}
	for i, w := range top.StopWords {
		ts := tokens(w)
		if len(ts) == 0 {
			p.addf(fmt.Sprintf("stop_words[%d]", i), "has no word")
		}
		for _, t := range ts {
			c.stop[t] = true
		}
	}
	for _, loc := range sortedKeys(top.Error) {
		path := "error." + loc
		if !engine.ValidLocale(loc) {
			p.addf(path, "%q is not a BCP 47 language tag", loc)
		}
		t, err := compileText(top.Error[loc], refs{})
		p.add(path, err)
		c.errorText.set(loc, t)
	}
	if len(top.Intents) == 0 {
		p.addf("intents", "is empty")
	}
	byName := make(map[string]*intentDef)
	for i, raw := range top.Intents {
		path := fmt.Sprintf("intents[%d]", i)
		in := c.compileIntent(raw, path, &p)
		if in == nil {
			continue
		}
		if byName[in.name] != nil {
			p.addf(path+".name", "%q is used twice", in.name)
		}
		byName[in.name] = in
		c.intents = append(c.intents, in)
		reserved := in.name == cmp.Or(top.Fallback, defaultFallback) || in.name == cmp.Or(top.Home, defaultHome)
		if len(in.examples) == 0 && len(in.patterns) == 0 && !reserved {
			p.addf(path, "%q is never chosen: it needs examples or patterns", in.name)
		}
	}
	c.fallback = special(top.Fallback, defaultFallback, "fallback", byName, &p)
	c.home = special(top.Home, defaultHome, "home", byName, &p)
	if c.home == nil {
		c.home = c.fallback
	}
	if err := p.err(); err != nil {
		return nil, err
	}
	return c, nil
}

// special resolves the fallback or home intent: the one named, or else the intent called def
// if there is one. Only the fallback is required.
func special(name, def, key string, byName map[string]*intentDef, p *problems) *intentDef {
	if name != "" {
		if byName[name] == nil {
			p.addf(key, "names no intent %q", name)
		}
		return byName[name]
	}
	if in := byName[def]; in != nil {
		return in
	}
	if key == "fallback" && len(byName) > 0 {
		p.addf(key, "is missing: name the intent that answers what nothing else matches")
	}
	return nil
}

// compileIntent compiles one intent; it returns nil when the intent could not be read at all.
func (c *Config) compileIntent(raw json.RawMessage, path string, p *problems) *intentDef {
	var j intentJSON
	if err := decodeStrict(raw, &j); err != nil {
		p.add(path, err)
		return nil
	}
	in := &intentDef{name: j.Name}
	if !namePattern.MatchString(j.Name) {
		p.addf(path+".name", "%q must be 1 to 64 letters, digits, '_' or '-'", j.Name)
	}
	for i, e := range j.Examples {
		b := c.bag(e)
		if b.norm == 0 {
			p.addf(fmt.Sprintf("%s.examples[%d]", path, i), "has no word")
			continue
		}
		in.examples = append(in.examples, b)
	}
	for _, name := range sortedKeys(j.Slots) {
		in.slots = append(in.slots, compileSlot(name, j.Slots[name], path+".slots."+name, p))
	}
	slotsByName := make(map[string]*slot, len(in.slots))
	for _, s := range in.slots {
		slotsByName[s.name] = s
	}
	for i, pat := range j.Patterns {
		f := fmt.Sprintf("%s.patterns[%d]", path, i)
		re, err := regexp.Compile("(?i)" + pat)
		if err != nil {
			p.addf(f, "invalid regexp: %v", err)
			continue
		}
		for _, g := range re.SubexpNames() {
			if g != "" && slotsByName[g] == nil {
				p.addf(f, "group %q names no slot of the intent", g)
			}
		}
		in.patterns = append(in.patterns, re)
	}
	r := refs{slots: slotsByName, tools: make(map[string]bool)}
	for i, cj := range j.Tools {
		f := fmt.Sprintf("%s.tools[%d]", path, i)
		in.tools = append(in.tools, compileCall(cj, f, r, p))
		if r.tools[cj.Name] {
			p.addf(f+".name", "%q is called twice", cj.Name)
		}
		r.tools[cj.Name] = true
	}
	if j.Action != nil {
		in.action = compileCall(*j.Action, path+".action", refs{slots: slotsByName}, p)
		if r.tools[j.Action.Name] {
			p.addf(path+".action.name", "%q is also a data tool of the intent", j.Action.Name)
		}
	}
	if len(j.Responses) == 0 {
		p.addf(path+".responses", "needs the copy of at least one locale")
	}
	hasRequired := slices.ContainsFunc(in.slots, func(s *slot) bool { return s.required })
	for _, loc := range sortedKeys(j.Responses) {
		f := path + ".responses." + loc
		if !engine.ValidLocale(loc) {
			p.addf(f, "%q is not a BCP 47 language tag", loc)
		}
		resp := compileResponse(j.Responses[loc], f, r, p)
		if resp == nil {
			continue
		}
		if hasRequired && resp.ask.empty() {
			p.addf(f+".ask", "is missing: the intent has required slots")
		}
		in.responses.set(loc, resp)
	}
	return in
}

func compileSlot(name string, j slotJSON, path string, p *problems) *slot {
	s := &slot{name: name, typ: slotType(j.Type), required: j.Required, max: j.Max}
	if !namePattern.MatchString(name) {
		p.addf(path, "slot names are letters, digits, '_' or '-'")
	}
	if j.Max < 0 || (j.Max > 0 && s.typ != slotAmount && s.typ != slotNumber) {
		p.addf(path+".max", "only amount and number slots have a max, and it is positive")
	}
	switch s.typ {
	case slotAmount, slotNumber, slotDate:
		if len(j.Values) > 0 || len(j.Synonyms) > 0 {
			p.addf(path+".values", "only name and enum slots have values")
		}
	case slotEnum:
		if len(j.Values) == 0 {
			p.addf(path+".values", "an enum slot needs values")
		}
	case slotName:
	default:
		p.addf(path+".type", "%q is not amount, number, name, date or enum", j.Type)
	}
	for i, v := range j.Values {
		phrase := normalizePhrase(v)
		if phrase == "" {
			p.addf(fmt.Sprintf("%s.values[%d]", path, i), "has no word")
			continue
		}
		sv := slotValue{value: v, phrases: []string{phrase}}
		for k, syn := range j.Synonyms[v] {
			if ph := normalizePhrase(syn); ph != "" {
				sv.phrases = append(sv.phrases, ph)
			} else {
				p.addf(fmt.Sprintf("%s.synonyms.%s[%d]", path, v, k), "has no word")
			}
		}
		s.values = append(s.values, sv)
	}
	for _, k := range sortedKeys(j.Synonyms) {
		if !slices.Contains(j.Values, k) {
			p.addf(path+".synonyms."+k, "is not one of the values")
		}
	}
	return s
}

func compileCall(j callJSON, path string, r refs, p *problems) *call {
	c := &call{name: j.Name}
	if !namePattern.MatchString(j.Name) {
		p.addf(path+".name", "%q is not a tool name", j.Name)
	}
	for _, k := range sortedKeys(j.Arguments) {
		a := arg{key: k}
		raw := j.Arguments[k]
		var s string
		if json.Unmarshal(raw, &s) == nil {
			t, err := compileText(s, r)
			p.add(path+".arguments."+k, err)
			a.tmpl = t
		} else {
			a.literal = raw
		}
		c.args = append(c.args, a)
	}
	return c
}

// arguments renders the call's arguments as a JSON object. An argument that is a single
// placeholder keeps the type of its value and is left out when the value is missing.
func (c *call) arguments(s scope) json.RawMessage {
	m := make(map[string]any, len(c.args))
	for _, a := range c.args {
		if a.tmpl == nil {
			m[a.key] = a.literal
			continue
		}
		if v, ok := a.tmpl.value(s); ok {
			m[a.key] = v
		}
	}
	b, err := json.Marshal(m)
	if err != nil { // values come from decoded JSON and templates, so this cannot happen
		return json.RawMessage("{}")
	}
	return b
}

// compileText parses a template and checks its placeholders against r.
func compileText(s string, r refs) (*template, error) {
	t, err := parseTemplate(s)
	if err != nil {
		return nil, err
	}
	return t, t.check(r)
}

func decodeStrict(raw []byte, v any) error {
	dec := json.NewDecoder(bytes.NewReader(raw))
	dec.DisallowUnknownFields()
	if err := dec.Decode(v); err != nil {
		return err
	}
	if dec.More() {
		return errors.New("trailing data after the value")
	}
	return nil
}

func sortedKeys[V any](m map[string]V) []string {
	return slices.Sorted(maps.Keys(m))
}
