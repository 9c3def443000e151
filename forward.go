package engine

import (
	"net/http"
	"slices"
	"strings"

	"github.com/convengine/engine/internal/headers"
)

// Bounds on forwarded headers: what passes them is dropped, and the turn goes on.
const (
	maxForwardHeaders = 32
	maxForwardBytes   = 16 << 10
)

// forwardedHeaders returns the X-Engine-Forward-* headers of h with the prefix removed once, as
// docs/protocol.md sets: colliding, hop-by-hop and malformed headers are dropped, and so is what
// passes 32 headers or 16 KB of names and values. Headers are taken in sorted order of their
// names and then in the order of their values, so what is dropped is the same for the same
// request. spelling, when not nil, returns the client's spelling of a canonical name (see
// [Engine.Listener]); the names of the result are spelled so.
func forwardedHeaders(h http.Header, spelling func(string) string) ForwardedHeaders {
	// Headers named by Connection are hop-by-hop for this request: a client must not use them
	// to strip what the engine sets.
	var connNamed map[string]bool
	for _, v := range h.Values("Connection") {
		if connNamed == nil {
			connNamed = map[string]bool{}
		}
		for name := range strings.SplitSeq(v, ",") {
			connNamed[http.CanonicalHeaderKey(strings.TrimSpace(name))] = true
		}
	}
	var names []string
	for name := range h {
		if len(name) > len(HeaderForwardPrefix) && strings.EqualFold(name[:len(HeaderForwardPrefix)], HeaderForwardPrefix) && (connNamed == nil || !connNamed[http.CanonicalHeaderKey(name)]) {
			names = append(names, name)
		}
	}
	if len(names) == 0 {
		return nil
	}
	slices.Sort(names)
	out := make(ForwardedHeaders, len(names))
	vals := make([]string, 0, maxForwardHeaders) // one backing array for every header's values
	size := 0
	for _, name := range names {
		spelled := name
		if spelling != nil {
			spelled = spelling(name)
		}
		rest := spelled[len(HeaderForwardPrefix):]
		if !forwardable(rest) {
			continue
		}
		first := len(vals)
		for _, v := range h[name] {
			if len(vals) == maxForwardHeaders {
				break
			}
			if strings.ContainsAny(v, "\r\n\x00") || size+len(rest)+len(v) > maxForwardBytes {
				continue // a smaller header further on may still fit
			}
			size += len(rest) + len(v)
			vals = append(vals, v)
		}
		if len(vals) > first {
			out[rest] = vals[first:len(vals):len(vals)]
		}
		if len(vals) == maxForwardHeaders {
			break
		}
	}
	return out
}

func forwardable(name string) bool {
	return name != "" && headers.ValidName(name) && !headers.Reserved(name)
}
