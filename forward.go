package engine

import (
	"log/slog"
	"maps"
	"net/http"
	"slices"
	"strings"

	"github.com/convengine/engine/internal/headers"
)

// The forwarding rule: a client may ask the engine to pass headers to the tenant's backend
// with every tool call of the request, by sending them with the prefix X-Engine-Forward-
// (X-Engine-Forward-Authorization reaches the backend as Authorization). The prefix is matched
// in any case and removed once; the rest of the name keeps the client's spelling where the
// engine's listener could read it (Engine.Listener), since Go's server canonicalises names.
//
// Dropped, while the request goes on:
//   - a name that would become one of the engine's own headers (X-Token, X-Engine-Key,
//     X-Request-ID, X-Client-Metadata, Idempotency-Key, any Engine-*), a hop-by-hop or framing
//     header (Connection, Keep-Alive, TE, Trailer, Transfer-Encoding, Upgrade, Host,
//     Content-Length), any Proxy-*, and a header the request's Connection header names;
//   - a name that is not an RFC 9110 token, and a value that holds CR, LF or NUL;
//   - what passes MaxForwardedHeaders values or MaxForwardedBytes of names and values, taken in
//     the sorted order of the names and then in the order of the values, so that the same
//     request always keeps the same headers.
//
// The Toolsets (httptools, mcptools) check the names again against their own protocol's
// headers before they set them on a request. The values are secrets: logs carry the names only.
const (
	// HeaderForwardPrefix starts the headers a client asks the engine to pass to the backend.
	HeaderForwardPrefix = headers.ForwardPrefix
	// MaxForwardedHeaders bounds the values forwarded with one request.
	MaxForwardedHeaders = headers.MaxForwarded
	// MaxForwardedBytes bounds the bytes of the names and values forwarded with one request.
	MaxForwardedBytes = headers.MaxForwardedBytes
)

// forwarded returns the headers of h that the rule forwards, the prefix removed, for the
// request path (spelling reads the client's spelling of names off the connection) and for
// in-process calls (nil spelling: the host's names as given).
func forwarded(h http.Header, spelling func(string) string) ForwardedHeaders {
	return ForwardedHeaders(headers.Forwarded(h, spelling))
}

// ForwardedHeaders are the headers a client asked the engine to pass to the tenant's backend.
// Their values are secrets (often credentials): logging them prints only their names.
type ForwardedHeaders http.Header

// LogValue implements [slog.LogValuer]: the count and the names, never the values.
func (f ForwardedHeaders) LogValue() slog.Value {
	return slog.GroupValue(slog.Int("count", len(f)), slog.Any("names", f.Names()))
}

// String returns the names of the headers, never their values.
func (f ForwardedHeaders) String() string { return "[" + strings.Join(f.Names(), " ") + "]" }

// Names returns the header names, sorted.
func (f ForwardedHeaders) Names() []string { return slices.Sorted(maps.Keys(f)) }
