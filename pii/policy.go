package pii

import (
	"encoding/json"
	"errors"
	"fmt"
	"strings"

	"github.com/convengine/engine"
)

// ErrPolicy is returned by [Check] for a tenant's privacy policy it cannot use.
var ErrPolicy = errors.New("pii: invalid privacy policy")

// Policy is a tenant's privacy policy, the JSON of its engine.Tenant.Privacy:
//
//	{"preset": "banking", "keep_last": 4, "locales": ["en", "es"],
//	 "kinds": {"phone": {"model": "mask", "user": "pass", "logs": "mask"}},
//	 "patterns": [{"kind": "account", "name": "routing", "regexp": "\\b\\d{9}\\b"}]}
//
// A kind the policy names neither in Kinds nor through its preset is not looked for.
type Policy struct {
	// Preset starts the policy from a default: "banking" hides cards and IBANs from the model
	// behind placeholders and masks them for the user. Kinds then change or add kinds.
	Preset string `json:"preset,omitempty"`
	// Kinds says, by kind name ("card", "iban", "account", "phone", "email", "custom"), what
	// each destination gets.
	Kinds map[string]Rule `json:"kinds,omitempty"`
	// Patterns are the tenant's account and custom formats (kind "account" or "custom").
	Patterns []PolicyPattern `json:"patterns,omitempty"`
	// Locales are the languages of spoken digits to read (see [Options].Locales); none means
	// all.
	Locales []string `json:"locales,omitempty"`
	// KeepLast is how many last characters a mask shows (default 4; -1 shows none).
	KeepLast int `json:"keep_last,omitempty"`
}

// Rule is what the destinations of one kind of data get.
type Rule struct {
	// Model is "placeholder" (default: "[CARD_1]", put back in tool calls), "mask" ("•••• 1111",
	// which the model cannot put back) or "pass" (the value as said).
	Model string `json:"model,omitempty"`
	// User is "mask" (default) or "pass": what speech, widgets and the transcript echoed show.
	User string `json:"user,omitempty"`
	// Logs is "mask" (default) or "pass": what the lines a [Privacy.LogHandler] writes for the
	// tenant show.
	Logs string `json:"logs,omitempty"`
}

// PolicyPattern is one of the tenant's formats in a [Policy].
type PolicyPattern struct {
	Kind   string `json:"kind"`
	Name   string `json:"name"`
	Regexp string `json:"regexp"`
}

// Banking is the policy of the "banking" preset: card numbers and IBANs never reach the model
// (placeholders) and are masked to their last four characters for the user.
func Banking() *Policy {
	return &Policy{Preset: "banking"}
}

// The values of a [Rule]'s fields.
const (
	placeholder = "placeholder"
	mask        = "mask"
	pass        = "pass"
)

// compiled is a policy ready for turns: its detector, and the rule of each kind.
type compiled struct {
	det   *Detector
	rules [Custom + 1]Rule
	keep  int
	// logs are the kinds masked in the tenant's log lines; anyLogs says whether there is one.
	logs    [Custom + 1]bool
	anyLogs bool
}

func kindNamed(name string) (Kind, bool) {
	for _, k := range Kinds() {
		if k.String() == name {
			return k, true
		}
	}
	return 0, false
}

// compile checks p and builds its detector.
func (p *Policy) compile() (*compiled, error) {
	c := &compiled{keep: 4}
	var on []Kind
	switch p.Preset {
	case "":
	case "banking":
		c.rules[Card], c.rules[IBAN] = Rule{Model: placeholder, User: mask, Logs: mask}, Rule{Model: placeholder, User: mask, Logs: mask}
		on = append(on, Card, IBAN)
	default:
		return nil, fmt.Errorf("%w: preset %q, want \"banking\"", ErrPolicy, p.Preset)
	}
	for name, r := range p.Kinds {
		k, ok := kindNamed(name)
		if !ok {
			return nil, fmt.Errorf("%w: kind %q, want one of card, iban, account, phone, email, custom", ErrPolicy, name)
		}
		if r.Model == "" {
			r.Model = placeholder
		}
		if r.User == "" {
			r.User = mask
		}
		if r.Logs == "" {
			r.Logs = mask
		}
		if r.Model != placeholder && r.Model != mask && r.Model != pass {
			return nil, fmt.Errorf("%w: kinds.%s.model %q, want placeholder, mask or pass", ErrPolicy, name, r.Model)
		}
		if r.User != mask && r.User != pass {
			return nil, fmt.Errorf("%w: kinds.%s.user %q, want mask or pass", ErrPolicy, name, r.User)
		}
		if r.Logs != mask && r.Logs != pass {
			return nil, fmt.Errorf("%w: kinds.%s.logs %q, want mask or pass", ErrPolicy, name, r.Logs)
		}
		c.rules[k] = r
		on = append(on, k)
	}
	for _, k := range on {
		if c.rules[k].Logs == mask {
			c.logs[k], c.anyLogs = true, true
		}
	}
	o := &Options{Kinds: on, Locales: p.Locales}
	for _, pp := range p.Patterns {
		k, ok := kindNamed(pp.Kind)
		if !ok || k != Account && k != Custom {
			return nil, fmt.Errorf("%w: pattern %q: kind %q, want account or custom", ErrPolicy, pp.Name, pp.Kind)
		}
		if c.rules[k].Model == "" {
			return nil, fmt.Errorf("%w: pattern %q: kinds has no rule for %s", ErrPolicy, pp.Name, pp.Kind)
		}
		o.Patterns = append(o.Patterns, Pattern{Kind: k, Name: pp.Name, Regexp: pp.Regexp})
	}
	switch {
	case p.KeepLast < 0:
		c.keep = 0
	case p.KeepLast > 0:
		c.keep = p.KeepLast
	}
	det, err := New(o)
	if err != nil {
		return nil, fmt.Errorf("%w: %w", ErrPolicy, err)
	}
	c.det = det
	return c, nil
}

// parsePolicy reads a tenant's policy; raw empty is def (nil: no policy).
func parsePolicy(raw json.RawMessage, def *Policy) (*Policy, error) {
	if len(strings.TrimSpace(string(raw))) == 0 || string(raw) == "null" {
		return def, nil
	}
	dec := json.NewDecoder(strings.NewReader(string(raw)))
	dec.DisallowUnknownFields()
	var p Policy
	if err := dec.Decode(&p); err != nil {
		return nil, fmt.Errorf("%w: %w", ErrPolicy, err)
	}
	return &p, nil
}

// Check reports whether t's privacy policy can be used, so that a host refuses a tenant
// file with a broken policy when it loads it rather than at a turn.
func Check(t *engine.Tenant) error {
	p, err := parsePolicy(t.Privacy, nil)
	if err != nil || p == nil {
		return err
	}
	_, err = p.compile()
	return err
}
