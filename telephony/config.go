package telephony

import (
	"bytes"
	"encoding/json"
	"errors"
	"fmt"
	"net/netip"
	"regexp"
	"strings"
	"sync/atomic"
	"time"
	"unicode/utf8"

	"github.com/convengine/engine"
)

// Config is a tenant's phone line, the "telephony" object of its tenants file:
//
//	telephony:
//	  numbers: ["+15550100"]          # E.164 numbers that reach this tenant
//	  transfer_to: "+15550199"        # a person, dialled when the caller asks for one
//	  verify: /phone/verify           # the backend's caller verification (the default)
//	  pin: {max_digits: 8, timeout: 5s, attempts: 3}
//	  twilio:
//	    account_sid: AC0123456789abcdef0123456789abcdef
//	    auth_token_env: ACME_TWILIO_AUTH_TOKEN   # the variable that holds it, never the token
//	  sip:
//	    trunks: ["192.0.2.10", "198.51.100.0/28"]  # the SBCs and PBXs that may call its numbers
//	  prompts:                          # the line's own words, where the tenant rewords them
//	    welcome: "Welcome to {name}. Please key in your six-digit PIN, then press hash."
//
// The auth token lives in the environment, never in the file: the section names the variable,
// and the host reads it (package twilio's Options.Secret).
type Config struct {
	Numbers    []string `json:"numbers"`
	TransferTo string   `json:"transfer_to,omitempty"`
	// Verify is the path, on the tenant's production backend, of its caller verification
	// (docs/telephony.md); default "/phone/verify".
	Verify string  `json:"verify,omitempty"`
	PIN    PIN     `json:"pin,omitzero"`
	Twilio *Twilio `json:"twilio,omitempty"`
	SIP    *SIP    `json:"sip,omitempty"`
	// Prompts rewords what the line says of its own, by name: welcome, pin_again,
	// pin_missing, verified, not_verified, no_verifier, busy, confirm_pin, confirm_in_app,
	// cancelled, confirm_wrong, action_failed, turn_refused, not_heard, closing. "{name}" is
	// the tenant's name. A prompt not named is the built-in one in the tenant's language.
	Prompts map[string]string `json:"prompts,omitempty"`
}

// PIN is how a caller's PIN is collected on the keypad: at most MaxDigits (default 12) before
// '#', Timeout between two keys (default 5s, and twice that for the first), Attempts before the
// call ends (default 3).
type PIN struct {
	MaxDigits int             `json:"max_digits,omitempty"`
	Timeout   engine.Duration `json:"timeout,omitempty"`
	Attempts  int             `json:"attempts,omitempty"`
}

// Twilio is a tenant's Twilio account: AccountSID (optional: webhooks of another account are
// refused when it is set) and the environment variable that holds its auth token.
type Twilio struct {
	AccountSID   string `json:"account_sid,omitempty"`
	AuthTokenEnv string `json:"auth_token_env"`
}

// SIP is a tenant's SIP trunks: the addresses (an IP, or a CIDR prefix) of the SBCs and PBXs
// whose INVITEs may reach its numbers. Without it, any address that reaches the engine's SIP
// port may: the port must then be behind a firewall that lets only the trunks in.
type SIP struct {
	Trunks []string `json:"trunks,omitempty"`
}

// Allows reports whether an INVITE from addr may reach the tenant; a nil *SIP allows any.
func (s *SIP) Allows(addr netip.Addr) bool {
	if s == nil || len(s.Trunks) == 0 {
		return true
	}
	addr = addr.Unmap()
	for _, t := range s.Trunks {
		if p, err := parseTrunk(t); err == nil && p.Contains(addr) {
			return true
		}
	}
	return false
}

// parseTrunk reads a trunk's address: an IP is a prefix of its full length.
func parseTrunk(t string) (netip.Prefix, error) {
	if a, err := netip.ParseAddr(t); err == nil {
		return netip.PrefixFrom(a.Unmap(), a.Unmap().BitLen()), nil
	}
	p, err := netip.ParsePrefix(t)
	return p.Masked(), err
}

// e164 is a number in E.164 form.
var e164 = regexp.MustCompile(`^\+[1-9][0-9]{6,14}$`)

// ValidNumber reports whether n is an E.164 number, such as "+15550100".
func ValidNumber(n string) bool { return e164.MatchString(n) }

var envName = regexp.MustCompile(`^[A-Z_][A-Z0-9_]*$`)

// maxPrompt bounds a prompt a tenant rewords, in characters.
const maxPrompt = 500

// TenantConfig reads t's telephony section; nil when it has none.
func TenantConfig(t *engine.Tenant) (*Config, error) {
	if t == nil || len(t.Telephony) == 0 || string(t.Telephony) == "null" {
		return nil, nil
	}
	var c Config
	dec := json.NewDecoder(bytes.NewReader(t.Telephony))
	dec.DisallowUnknownFields()
	if err := dec.Decode(&c); err != nil {
		return nil, fmt.Errorf("telephony: tenant %q: %w", t.Key, err)
	}
	if err := c.Check(); err != nil {
		return nil, fmt.Errorf("telephony: tenant %q: %w", t.Key, err)
	}
	return &c, nil
}

// Check reports what is wrong with c.
func (c *Config) Check() error {
	if len(c.Numbers) == 0 {
		return errors.New("numbers: name at least one E.164 number")
	}
	for i, n := range c.Numbers {
		if !ValidNumber(n) {
			return fmt.Errorf("numbers[%d]: %q is not an E.164 number such as +15550100", i, n)
		}
	}
	switch {
	case c.TransferTo != "" && !ValidNumber(c.TransferTo):
		return fmt.Errorf("transfer_to: %q is not an E.164 number", c.TransferTo)
	case c.Verify != "" && (c.Verify[0] != '/' || len(c.Verify) > 256):
		return errors.New("verify: must be a path starting with /")
	case c.PIN.MaxDigits < 0 || c.PIN.MaxDigits > 32:
		return errors.New("pin.max_digits: must be from 1 to 32")
	case c.PIN.Timeout < 0 || time.Duration(c.PIN.Timeout) > time.Minute:
		return errors.New("pin.timeout: must be at most 1m")
	case c.PIN.Attempts < 0 || c.PIN.Attempts > 10:
		return errors.New("pin.attempts: must be from 1 to 10")
	case c.Twilio != nil && !envName.MatchString(c.Twilio.AuthTokenEnv):
		return errors.New("twilio.auth_token_env: name the environment variable that holds the auth token, such as TWILIO_AUTH_TOKEN")
	}
	for key, text := range c.Prompts {
		switch {
		case (&lineTexts{}).field(key) == nil:
			return fmt.Errorf("prompts.%s: not a prompt of the line's: name one of %s", key, strings.Join(promptKeys, ", "))
		case strings.TrimSpace(text) == "" || utf8.RuneCountInString(text) > maxPrompt:
			return fmt.Errorf("prompts.%s: must be a line of 1 to %d characters", key, maxPrompt)
		}
	}
	if c.SIP != nil {
		for i, t := range c.SIP.Trunks {
			if _, err := parseTrunk(t); err != nil {
				return fmt.Errorf("sip.trunks[%d]: %q is not an IP address or a CIDR prefix such as 192.0.2.0/24", i, t)
			}
		}
	}
	return nil
}

func (c *Config) verifyPath() string {
	if c.Verify == "" {
		return "/phone/verify"
	}
	return c.Verify
}

func (p PIN) maxDigits() int {
	if p.MaxDigits == 0 {
		return 12
	}
	return p.MaxDigits
}

func (p PIN) timeout() time.Duration {
	if p.Timeout == 0 {
		return 5 * time.Second
	}
	return time.Duration(p.Timeout)
}

func (p PIN) attempts() int {
	if p.Attempts == 0 {
		return 3
	}
	return p.Attempts
}

// Entry is a tenant reached by a number, with its phone configuration.
type Entry struct {
	Tenant *engine.Tenant
	Config *Config
}

// A Directory finds the tenant a called number reaches. Replace swaps its tenants at once
// (a reload of the tenants file); it is safe for concurrent use.
type Directory struct {
	lines atomic.Pointer[map[string]Entry]
}

// NewDirectory returns the directory of the numbers of tenants that have a telephony section.
func NewDirectory(tenants ...*engine.Tenant) (*Directory, error) {
	d := &Directory{}
	return d, d.Replace(tenants...)
}

// Replace makes tenants the directory's; on an error (a broken section, a number two tenants
// claim) the directory keeps the tenants it had.
func (d *Directory) Replace(tenants ...*engine.Tenant) error {
	m := map[string]Entry{}
	var errs []error
	for _, t := range tenants {
		c, err := TenantConfig(t)
		if err != nil || c == nil {
			errs = append(errs, err)
			continue
		}
		for _, n := range c.Numbers {
			if other, ok := m[n]; ok {
				errs = append(errs, fmt.Errorf("telephony: %s reaches both tenant %q and tenant %q", n, other.Tenant.Key, t.Key))
			}
			m[n] = Entry{Tenant: t, Config: c}
		}
	}
	if err := errors.Join(errs...); err != nil {
		return err
	}
	d.lines.Store(&m)
	return nil
}

// Lookup returns the line that number reaches.
func (d *Directory) Lookup(number string) (Entry, bool) {
	m := d.lines.Load()
	if m == nil {
		return Entry{}, false
	}
	l, ok := (*m)[number]
	return l, ok
}

// Tenant returns the line of the tenant keyed key, reached by any of its numbers.
func (d *Directory) Tenant(key string) (Entry, bool) {
	m := d.lines.Load()
	if m == nil {
		return Entry{}, false
	}
	for _, l := range *m {
		if l.Tenant.Key == key {
			return l, true
		}
	}
	return Entry{}, false
}

// Len is how many numbers the directory knows.
func (d *Directory) Len() int {
	if m := d.lines.Load(); m != nil {
		return len(*m)
	}
	return 0
}
