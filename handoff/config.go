package handoff

import (
	"bytes"
	"encoding/json"
	"fmt"
	"strings"
	"time"

	"github.com/convengine/engine"
)

// Config is a tenant's handoff, the "handoff" object of its tenant file:
//
//	handoff:
//	  webhook: https://centre.example.com/engine   # or desk: true
//	  secret: ${CENTRE_SECRET}
//	  queue_timeout: 5m
//	  hours: {zone: Europe/Madrid, days: [mon, tue, wed, thu, fri], open: "09:00", close: "18:00"}
type Config struct {
	// Webhook is the contact centre's URL (the events of docs/handoff.md are POSTed to it),
	// signed with Secret, at least 16 bytes.
	Webhook string `json:"webhook,omitempty"`
	Secret  string `json:"secret,omitempty"`
	// Desk hands conversations to the host's desk (Options.Desk) instead.
	Desk bool `json:"desk,omitempty"`
	// QueueTimeout is how long a customer waits for a person before the assistant takes back
	// (default 5m); SilenceTimeout how long a person who joined may stay silent (default
	// 10m); IdleTimeout how long a customer may (default 15m): past it, the customer left.
	QueueTimeout   engine.Duration `json:"queue_timeout,omitempty"`
	SilenceTimeout engine.Duration `json:"silence_timeout,omitempty"`
	IdleTimeout    engine.Duration `json:"idle_timeout,omitempty"`
	// Hours are the office hours; none: at any hour.
	Hours *Hours `json:"hours,omitempty"`
	// Repeats hands over when the user asks the same thing this many times in a row (default
	// 2; negative: never).
	Repeats int `json:"repeats,omitempty"`
	// PerUser bounds the handoffs one user may open in an hour (default 3).
	PerUser int `json:"per_user,omitempty"`
}

// Hours are office hours: from Open to Close ("09:00", "17:30") on Days ("mon" … "sun"; none:
// every day), in Zone (an IANA zone; empty: UTC).
type Hours struct {
	Zone  string   `json:"zone,omitempty"`
	Days  []string `json:"days,omitempty"`
	Open  string   `json:"open"`
	Close string   `json:"close"`
}

var dayNames = []string{"sun", "mon", "tue", "wed", "thu", "fri", "sat"}

// Within reports whether t falls within the hours.
func (h *Hours) Within(t time.Time) (bool, error) {
	loc := time.UTC
	if h.Zone != "" {
		var err error
		if loc, err = time.LoadLocation(h.Zone); err != nil {
			return false, fmt.Errorf("hours.zone: %w", err)
		}
	}
	open, err1 := time.Parse("15:04", h.Open)
	closing, err2 := time.Parse("15:04", h.Close)
	if err1 != nil || err2 != nil || !closing.After(open) {
		return false, fmt.Errorf("hours: open and close must be times such as 09:00 and 17:30, open first")
	}
	local := t.In(loc)
	if len(h.Days) > 0 {
		today := dayNames[local.Weekday()]
		found := false
		for _, d := range h.Days {
			found = found || strings.EqualFold(d, today)
		}
		if !found {
			return false, nil
		}
	}
	mins := local.Hour()*60 + local.Minute()
	return mins >= open.Hour()*60+open.Minute() && mins < closing.Hour()*60+closing.Minute(), nil
}

// TenantConfig reads t's handoff configuration; nil when it has none.
func TenantConfig(t *engine.Tenant) (*Config, error) {
	if t == nil || len(t.Handoff) == 0 {
		return nil, nil
	}
	var c Config
	dec := json.NewDecoder(bytes.NewReader(t.Handoff))
	dec.DisallowUnknownFields()
	if err := dec.Decode(&c); err != nil {
		return nil, fmt.Errorf("handoff: tenant %q: %w", t.Key, err)
	}
	return &c, c.Check()
}

// Check reports what is wrong with c.
func (c *Config) Check() error {
	switch {
	case c.Webhook != "" && c.Desk:
		return fmt.Errorf("handoff: webhook and desk cannot both be set")
	case c.Webhook != "" && !strings.HasPrefix(c.Webhook, "https://") && !strings.HasPrefix(c.Webhook, "http://"):
		return fmt.Errorf("handoff: webhook must be an http(s) URL")
	case c.Webhook != "" && len(c.Secret) < 16:
		return fmt.Errorf("handoff: a webhook needs a secret of at least 16 bytes")
	case c.Webhook == "" && !c.Desk:
		return fmt.Errorf("handoff: set webhook (with secret) or desk")
	}
	if c.Hours != nil {
		if _, err := c.Hours.Within(time.Now()); err != nil {
			return fmt.Errorf("handoff: %w", err)
		}
	}
	return nil
}

func (c *Config) queueTimeout() time.Duration { return or(c.QueueTimeout, 5*time.Minute) }
func (c *Config) silence() time.Duration      { return or(c.SilenceTimeout, 10*time.Minute) }
func (c *Config) idle() time.Duration         { return or(c.IdleTimeout, 15*time.Minute) }

func (c *Config) repeats() int {
	if c.Repeats == 0 {
		return 2
	}
	return c.Repeats
}

func (c *Config) perUser() int {
	if c.PerUser <= 0 {
		return 3
	}
	return c.PerUser
}

func or(d engine.Duration, def time.Duration) time.Duration {
	if d <= 0 {
		return def
	}
	return time.Duration(d)
}
