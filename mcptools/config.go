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

// Config is one MCP server of a tenant's "mcp" section: the section itself, or an entry of
// its list.
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

// Parse reads a tenant's "mcp" section that names one server, an object. Errors name the
// field. A list of servers is an error: [ParseServers] reads both forms.
func Parse(raw json.RawMessage) (*Config, error) {
	raw = bytes.TrimSpace(raw)
	if len(raw) == 0 || string(raw) == "null" {
		return nil, ErrNoConfig
	}
	if raw[0] == '[' {
		return nil, errors.New("mcp: a list of servers: read it with ParseServers")
	}
	return parseServer(raw, "mcp")
}

// ParseServers reads a tenant's "mcp" section: one server, an object, or several, a list of
// such objects whose tools the [Toolset] combines. Errors name the field, such as
// "mcp[1].path". Two servers of a list cannot have the same path: they would be one server.
func ParseServers(raw json.RawMessage) ([]*Config, error) {
	raw = bytes.TrimSpace(raw)
	if len(raw) == 0 || string(raw) == "null" {
		return nil, ErrNoConfig
	}
	if raw[0] != '[' {
		c, err := parseServer(raw, "mcp")
		if err != nil {
			return nil, err
		}
		return []*Config{c}, nil
	}
	var list []json.RawMessage
	if err := json.Unmarshal(raw, &list); err != nil {
		return nil, fmt.Errorf("mcp: %w", err)
	}
	if len(list) == 0 {
		return nil, errors.New("mcp: the list names no server")
	}
	configs := make([]*Config, 0, len(list))
	paths := map[string]int{}
	for i, item := range list {
		field := fmt.Sprintf("mcp[%d]", i)
		if b := bytes.TrimSpace(item); len(b) == 0 || b[0] != '{' {
			return nil, fmt.Errorf("%s: must be an object", field)
		}
		c, err := parseServer(item, field)
		if err != nil {
			return nil, err
		}
		if j, ok := paths[c.Path]; ok {
			return nil, fmt.Errorf("%s.path: %q is also the path of mcp[%d]", field, c.Path, j)
		}
		paths[c.Path] = i
		configs = append(configs, c)
	}
	return configs, nil
}

// parseServer reads one server's object, named field in errors.
func parseServer(raw json.RawMessage, field string) (*Config, error) {
	var c Config
	dec := json.NewDecoder(bytes.NewReader(raw))
	dec.DisallowUnknownFields()
	if err := dec.Decode(&c); err != nil {
		return nil, fmt.Errorf("%s: %w", field, err)
	}
	if c.Path == "" {
		c.Path = "/mcp"
	}
	if !strings.HasPrefix(c.Path, "/") || strings.ContainsAny(c.Path, "?#") {
		return nil, fmt.Errorf("%s.path: must start with / and hold no query or fragment", field)
	}
	if c.Timeout < 0 {
		return nil, fmt.Errorf("%s.timeout: cannot be negative", field)
	}
	for name, value := range c.Credentials {
		switch {
		case !headers.ValidName(name):
			return nil, fmt.Errorf("%s.credentials: %q is not a header name", field, name)
		case headers.Reserved(name, mcpHeaders...):
			return nil, fmt.Errorf("%s.credentials: %s is set by the engine or the MCP transport", field, name)
		case value == "" || strings.ContainsAny(value, "\r\n\x00"):
			return nil, fmt.Errorf("%s.credentials: %s: the value is empty or holds a line break", field, name)
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
