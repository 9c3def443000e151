package pii

import (
	"cmp"
	"encoding/json"
	"errors"
	"fmt"
	"regexp"
	"slices"
	"strconv"
	"strings"
	"sync"

	"github.com/convengine/engine"
)

// ErrPlaceholder is the error of [engine.Shield.Restore] for a placeholder the turn never
// gave the model, such as an invented "[CARD_7]". It names the placeholder, never a value.
var ErrPlaceholder = errors.New("pii: unknown placeholder")

// PrivacyOptions configures [NewPrivacy]. A nil *PrivacyOptions means the defaults.
type PrivacyOptions struct {
	// Default is the policy of tenants whose configuration has none; nil means nothing is
	// hidden for them. [Banking] is the usual choice for a bank's engine.
	Default *Policy
	// Handled, when set, is told what was found and where it was handled: tenant is the
	// tenant's key, where "model" (hidden from the model), "user" (masked for the user),
	// "backend" (put back in a tool call), "refused" (a placeholder never given), "logs"
	// (masked in a log line, see [Privacy.LogHandler]) or "traces" (masked in a trace's
	// attribute, see [Privacy.TraceMasker]), n how many. It is never given a value. It is
	// called from many goroutines at once.
	Handled func(tenant string, kind Kind, where string, n int)
}

// Privacy is an [engine.Privacy] that applies each tenant's [Policy] (engine.Tenant.Privacy):
// set it as engine.Config.Privacy. It is safe for concurrent use.
type Privacy struct {
	def     *Policy
	handled func(string, Kind, string, int)
	// compiled holds the policies compiled so far, by their JSON: tenants are immutable, and
	// a policy's detector is built once.
	compiled sync.Map // string → *compiled
	// logs holds the policy of each tenant's latest turn, by tenant key, for LogHandler: as
	// many entries as tenants have had turns.
	logs sync.Map // string → *compiled
}

var _ engine.Privacy = (*Privacy)(nil)

// NewPrivacy returns a Privacy configured by o. It fails with [ErrPolicy] when o.Default is
// not a valid policy.
func NewPrivacy(o *PrivacyOptions) (*Privacy, error) {
	if o == nil {
		o = &PrivacyOptions{}
	}
	p := &Privacy{def: o.Default, handled: o.Handled}
	if o.Default != nil {
		if _, err := o.Default.compile(); err != nil {
			return nil, err
		}
	}
	return p, nil
}

// failClosed is the policy of a tenant whose own cannot be read (which [Check] catches when the
// tenant is loaded): the banking default rather than nothing.
var failClosed = Banking()

// Turn returns the Shield of one turn of t, nil when t has no policy and there is no default.
func (p *Privacy) Turn(t *engine.Tenant) engine.Shield {
	c := p.policyOf(t)
	if c == nil {
		return nil
	}
	return &shield{c: c, p: p, tenant: t.Key}
}

// Know makes the policies of ts those that [Privacy.LogHandler] applies to their log lines
// from now on, before their first turn: a host calls it with its tenants when it loads them.
// It fails with [ErrPolicy] for the tenants whose policy cannot be used, as [Check] does, and
// applies the banking preset to their lines meanwhile.
func (p *Privacy) Know(ts ...*engine.Tenant) error {
	var errs []error
	for _, t := range ts {
		if err := Check(t); err != nil {
			errs = append(errs, fmt.Errorf("tenant %q: %w", t.Key, err))
		}
		p.policyOf(t)
	}
	return errors.Join(errs...)
}

// policyOf returns t's compiled policy, nil when it has none, and keeps it as the one of t's
// log lines.
func (p *Privacy) policyOf(t *engine.Tenant) *compiled {
	key := string(t.Privacy)
	c, ok := p.compiled.Load(key)
	if !ok {
		pol, err := parsePolicy(t.Privacy, p.def)
		if pol == nil && err == nil {
			if _, ok := p.logs.Load(t.Key); ok {
				p.logs.Delete(t.Key)
			}
			return nil
		}
		cp, _ := pol.compileOr(err)
		c, _ = p.compiled.LoadOrStore(key, cp)
	}
	if old, ok := p.logs.Load(t.Key); !ok || old != c {
		p.logs.Store(t.Key, c)
	}
	return c.(*compiled)
}

// compileOr compiles p, or the banking default when p could not be read or compiled.
func (p *Policy) compileOr(err error) (*compiled, error) {
	if err == nil {
		c, cerr := p.compile()
		if cerr == nil {
			return c, nil
		}
		err = cerr
	}
	c, _ := failClosed.compile()
	return c, err
}

// shield is the Shield of one turn: the placeholders it gave the model.
type shield struct {
	c      *compiled
	p      *Privacy
	tenant string

	mu     sync.Mutex
	values map[string]Match // by placeholder
	byVal  map[string]string
	n      [Custom + 1]int

	audit   sync.Mutex
	handled map[[2]string]int // by kind and where
}

func (s *shield) count(k Kind, where string, n int) {
	if n <= 0 {
		return
	}
	if s.p.handled != nil {
		s.p.handled(s.tenant, k, where, n)
	}
	s.audit.Lock()
	if s.handled == nil {
		s.handled = map[[2]string]int{}
	}
	s.handled[[2]string{k.String(), where}] += n
	s.audit.Unlock()
}

// Handled returns what the shield has handled so far, in order of kind and place.
func (s *shield) Handled() []engine.PersonalData {
	s.audit.Lock()
	defer s.audit.Unlock()
	out := make([]engine.PersonalData, 0, len(s.handled))
	for k, n := range s.handled {
		out = append(out, engine.PersonalData{Kind: k[0], Where: k[1], N: n})
	}
	slices.SortFunc(out, func(a, b engine.PersonalData) int {
		return cmp.Or(cmp.Compare(a.Kind, b.Kind), cmp.Compare(a.Where, b.Where))
	})
	return out
}

// ToModel replaces the values the policy hides from the model by placeholders or masks.
func (s *shield) ToModel(text string) string {
	ms := s.c.det.Find(text)
	if len(ms) == 0 {
		return text
	}
	s.mu.Lock()
	defer s.mu.Unlock()
	var b strings.Builder
	last := 0
	for _, m := range ms {
		var repl string
		switch s.c.rules[m.Kind].Model {
		case placeholder:
			repl = s.placeholder(m)
		case mask:
			repl = s.c.det.Mask(m, s.c.keep)
		default:
			continue
		}
		s.count(m.Kind, "model", 1)
		b.WriteString(text[last:m.Start])
		b.WriteString(repl)
		last = m.End
	}
	b.WriteString(text[last:])
	return b.String()
}

// placeholder returns the placeholder of m's value, the same for the same value in a turn.
func (s *shield) placeholder(m Match) string {
	key := m.Kind.String() + ":" + m.Value
	if ph, ok := s.byVal[key]; ok {
		return ph
	}
	if s.values == nil {
		s.values, s.byVal = map[string]Match{}, map[string]string{}
	}
	s.n[m.Kind]++
	ph := "[" + strings.ToUpper(m.Kind.String()) + "_" + strconv.Itoa(s.n[m.Kind]) + "]"
	s.values[ph], s.byVal[key] = m, ph
	return ph
}

// placeholders finds what looks like a placeholder, issued or not.
var placeholders = regexp.MustCompile(`\[(?:CARD|IBAN|ACCOUNT|PHONE|EMAIL|CUSTOM)_?[0-9]{1,6}\]`)

// canonical is a placeholder as the shield issued it: "[CARD1]", which the engine's removal of
// markup from speech makes of "[CARD_1]" (an underscore is an emphasis mark), is "[CARD_1]".
func canonical(ph string) string {
	if strings.IndexByte(ph, '_') >= 0 {
		return ph
	}
	i := strings.IndexFunc(ph, func(r rune) bool { return r >= '0' && r <= '9' })
	return ph[:i] + "_" + ph[i:]
}

// Restore puts the values back in a tool call's arguments; a placeholder never given fails.
func (s *shield) Restore(args json.RawMessage) (json.RawMessage, error) {
	locs := placeholders.FindAllIndex(args, -1)
	if len(locs) == 0 {
		return args, nil
	}
	s.mu.Lock()
	defer s.mu.Unlock()
	out := make([]byte, 0, len(args)+16*len(locs))
	last := 0
	for _, loc := range locs {
		ph := canonical(string(args[loc[0]:loc[1]]))
		m, ok := s.values[ph]
		if !ok {
			kind, _ := kindNamed(strings.ToLower(ph[1:strings.IndexByte(ph, '_')]))
			s.count(kind, "refused", 1)
			return nil, fmt.Errorf("%w: %s was never given in this conversation; ask the user for the value", ErrPlaceholder, ph)
		}
		enc, _ := json.Marshal(m.Value) // the value as the inside of a JSON string
		out = append(append(out, args[last:loc[0]]...), enc[1:len(enc)-1]...)
		last = loc[1]
		s.count(m.Kind, "backend", 1)
	}
	out = append(out, args[last:]...)
	if !json.Valid(out) {
		return nil, fmt.Errorf("%w: a placeholder must stand inside a JSON string", ErrPlaceholder)
	}
	return out, nil
}

// ToUser masks the placeholders and the values the policy masks for the user.
func (s *shield) ToUser(text string) string {
	if strings.IndexByte(text, '[') >= 0 {
		s.mu.Lock()
		text = placeholders.ReplaceAllStringFunc(text, func(ph string) string {
			m, ok := s.values[canonical(ph)]
			switch {
			case !ok:
				return ph
			case s.c.rules[m.Kind].User == pass:
				return m.Value
			}
			s.count(m.Kind, "user", 1)
			return s.c.det.Mask(m, s.c.keep)
		})
		s.mu.Unlock()
	}
	ms := s.c.det.Find(text)
	if len(ms) == 0 {
		return text
	}
	var b strings.Builder
	last := 0
	for _, m := range ms {
		if s.c.rules[m.Kind].User == pass {
			continue
		}
		s.count(m.Kind, "user", 1)
		b.WriteString(text[last:m.Start])
		b.WriteString(s.c.det.Mask(m, s.c.keep))
		last = m.End
	}
	b.WriteString(text[last:])
	return b.String()
}
