package mcptools

import (
	"bytes"
	"encoding/json"
	"errors"
	"fmt"
	"net/url"
	"strings"

	"github.com/convengine/engine"
	"github.com/convengine/engine/internal/headers"
)

// Config is a tenant's "mcp" section.
type Config struct {
	// Path is joined to the environment's backend URL (default "/mcp").
	Path string `json:"path"`
	// Timeout bounds one call; zero means the tenant's tool time-out.
	Timeout engine.Duration `json:"timeout"`
	// Status holds the line shown while a tool runs, by tool name.
	Status map[string]string `json:"status"`
	// Credentials are the tenant's own headers for the MCP server, such as
	// {"Authorization": "Bearer ${ACME_MCP_TOKEN}"} (tenantfile expands the reference). With
	// them, the handshake and the tool list use these headers and no user's, and one session and
	// one tool list serve every user of the tenant environment; calls still carry each user's
	// token. Without them, the server sees each user's token from the start: every user gets a
	// session and a tool list of their own, and nothing listed with one user's token is shown
	// to another.
	Credentials map[string]string `json:"credentials"`
}

// ErrNoConfig is returned for a tenant without an "mcp" section.
var ErrNoConfig = errors.New("mcptools: the tenant has no mcp section")

// Parse reads a tenant's "mcp" section. Errors name the field.
func Parse(raw json.RawMessage) (*Config, error) {
	if len(bytes.TrimSpace(raw)) == 0 || string(bytes.TrimSpace(raw)) == "null" {
		return nil, ErrNoConfig
	}
	var c Config
	dec := json.NewDecoder(bytes.NewReader(raw))
	dec.DisallowUnknownFields()
	if err := dec.Decode(&c); err != nil {
		return nil, fmt.Errorf("mcp: %w", err)
	}
	if c.Path == "" {
		c.Path = "/mcp"
	}
	if !strings.HasPrefix(c.Path, "/") || strings.ContainsAny(c.Path, "?#") {
		return nil, fmt.Errorf("mcp.path: must start with / and hold no query or fragment")
	}
	if c.Timeout < 0 {
		return nil, fmt.Errorf("mcp.timeout: cannot be negative")
	}
	for name, value := range c.Credentials {
		switch {
		case !headers.ValidName(name):
			return nil, fmt.Errorf("mcp.credentials: %q is not a header name", name)
		case headers.Reserved(name, mcpHeaders...):
			return nil, fmt.Errorf("mcp.credentials: %s is set by the engine or the MCP transport", name)
		case value == "" || strings.ContainsAny(value, "\r\n\x00"):
			return nil, fmt.Errorf("mcp.credentials: %s: the value is empty or holds a line break", name)
		}
	}
	return &c, nil
}

// endpoint returns the MCP server URL of env.
func (c *Config) endpoint(env *engine.Environment) (string, error) {
	if env == nil || env.BackendURL == "" {
		return "", fmt.Errorf("%w: the environment has no backend_url", ErrUnavailable)
	}
	u, err := url.Parse(env.BackendURL)
	if err != nil {
		return "", fmt.Errorf("%w: the environment's backend_url is invalid", ErrUnavailable)
	}
	u.Path = strings.TrimSuffix(u.Path, "/") + c.Path
	return u.String(), nil
}
