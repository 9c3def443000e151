package headers

import (
	"net/http"
	"slices"
	"strings"
)

// ForwardPrefix starts the headers a client asks the engine to pass to the backend.
const ForwardPrefix = "X-Engine-Forward-"

// Bounds on forwarded headers: what passes them is dropped, and the turn goes on.
const (
	MaxForwarded      = 32
	MaxForwardedBytes = 16 << 10
)

// Forwarded returns the X-Engine-Forward-* headers of h with the prefix removed once, as
// docs/protocol.md sets: colliding, hop-by-hop and malformed headers are dropped, and so is what
// passes 32 headers or 16 KB of names and values. Headers are taken in sorted order of their
// names and then in the order of their values, so what is dropped is the same for the same
// request. spelling, when not nil, returns the client's spelling of a canonical name (as
// the engine's listener records it); the names of the result are spelled so.
func Forwarded(h http.Header, spelling func(string) string) http.Header {
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
		if len(name) > len(ForwardPrefix) && strings.EqualFold(name[:len(ForwardPrefix)], ForwardPrefix) && (connNamed == nil || !connNamed[http.CanonicalHeaderKey(name)]) {
			names = append(names, name)
		}
	}
	if len(names) == 0 {
		return nil
	}
	slices.Sort(names)
	out := make(http.Header, len(names))
	vals := make([]string, 0, MaxForwarded) // one backing array for every header's values
	size := 0
	for _, name := range names {
		spelled := name
		if spelling != nil {
			spelled = spelling(name)
		}
		rest := spelled[len(ForwardPrefix):]
		if !forwardable(rest) {
			continue
		}
		first := len(vals)
		for _, v := range h[name] {
			if len(vals) == MaxForwarded {
				break
			}
			if strings.ContainsAny(v, "\r\n\x00") || size+len(rest)+len(v) > MaxForwardedBytes {
				continue // a smaller header further on may still fit
			}
			size += len(rest) + len(v)
			vals = append(vals, v)
		}
		if len(vals) > first {
			out[rest] = vals[first:len(vals):len(vals)]
		}
		if len(vals) == MaxForwarded {
			break
		}
	}
	return out
}

func forwardable(name string) bool {
	return name != "" && ValidName(name) && !Reserved(name)
}
