package mcptools

import (
	"context"
	"net/http"

	"github.com/convengine/engine"
)

type envKey struct{}

// withEnv attaches the call's environment to ctx, where the transport finds it.
func withEnv(ctx context.Context, env *engine.ToolEnv) context.Context {
	return context.WithValue(ctx, envKey{}, env)
}

type credentialsKey struct{}

// withCredentials makes the requests of ctx carry the tenant's own credentials, for the
// handshake and the tool list of a shared session; env then carries no user's token.
func withCredentials(ctx context.Context, creds map[string]string) context.Context {
	return context.WithValue(ctx, credentialsKey{}, creds)
}

// transport adds to every request of a session the headers of the call that made it: the
// session is shared, the user is not.
type transport struct {
	base http.RoundTripper
}

// mcpHeaders belong to the MCP session and its streamable HTTP transport; forwarded headers,
// like the engine's reserved ones, never replace them.
var mcpHeaders = []string{"Mcp-Session-Id", "Mcp-Protocol-Version", "Content-Type", "Accept", "Last-Event-Id"}

func (t *transport) RoundTrip(req *http.Request) (*http.Response, error) {
	env, _ := req.Context().Value(envKey{}).(*engine.ToolEnv)
	req = req.Clone(req.Context())
	if env != nil {
		env.SetHeaders(req.Header, mcpHeaders...)
	}
	if creds, _ := req.Context().Value(credentialsKey{}).(map[string]string); creds != nil {
		for name, value := range creds {
			req.Header.Set(name, value)
		}
	}
	return t.base.RoundTrip(req)
}
