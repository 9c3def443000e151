// Package headers holds what the engine reads of a request's headers below its own code: the
// one list of header names that a header forwarded to a tenant's backend may never become, and
// the filter of the X-Engine-Forward-* headers that uses it ([Forwarded], whose rule the
// root's forward.go states); the syntax of request and turn ids, and of a header sent once; and the scan of header blocks
// on the listener's connections (the client's spelling of names, the header memory, the 431
// of an oversized block written in place of Go's), which [Wrap] sets up for a server. The Toolsets (httptools, mcptools) check the list again, with their
// own protocol's headers, before they set the forwarded headers on a request.
package headers

import (
	"encoding/json"
	"errors"
	"fmt"
	"strings"
)

// own are the engine's own headers: the end user's token, the tenant's key, the request's id,
// the client's metadata and an action's idempotency key; every name that starts with Engine-
// (an action's device proof, its key and token, and whatever the engine adds later) is the
// engine's too. Only the engine sets them.
var own = []string{"X-Token", "X-Engine-Key", "X-Request-ID", "X-Client-Metadata", "Idempotency-Key"}

// ownPrefix starts the names of the engine's headers to backends.
const ownPrefix = "Engine-"

// hopByHop are connection-level headers (RFC 9110 section 7.6.1) that a proxy must not pass
// on, and the headers that frame or route a request.
var hopByHop = []string{"Connection", "Keep-Alive", "Te", "Trailer", "Transfer-Encoding", "Upgrade", "Host", "Content-Length"}

// Reserved reports whether a forwarded header named name must be dropped: it is one of the
// engine's own headers, a hop-by-hop header, a Proxy-* header, or one of also (the headers of
// a Toolset's own protocol). Names compare without regard to case.
func Reserved(name string, also ...string) bool {
	return in(name, own) || in(name, hopByHop) || in(name, also) ||
		(len(name) >= 6 && strings.EqualFold(name[:6], "Proxy-")) ||
		(len(name) >= len(ownPrefix) && strings.EqualFold(name[:len(ownPrefix)], ownPrefix))
}

func in(name string, list []string) bool {
	for _, c := range list {
		if len(name) == len(c) && strings.EqualFold(name, c) {
			return true
		}
	}
	return false
}

// ValidName reports whether name is a header name: a non-empty RFC 9110 token.
func ValidName(name string) bool {
	if name == "" {
		return false
	}
	for i := 0; i < len(name); i++ {
		c := name[i]
		switch {
		case c >= 'a' && c <= 'z', c >= 'A' && c <= 'Z', c >= '0' && c <= '9':
		case strings.IndexByte("!#$%&'*+-.^_`|~", c) >= 0:
		default:
			return false
		}
	}
	return true
}

// MaxClientMetadata is the largest X-Client-Metadata header the engine reads, in bytes.
const MaxClientMetadata = 4 << 10

// ClientMetadata decodes the values of the X-Client-Metadata header: one JSON object of at most
// MaxClientMetadata bytes. The error's text is the detail of the problem to answer.
func ClientMetadata(vals []string) (map[string]any, error) {
	if len(vals) > 1 {
		return nil, errors.New("the X-Client-Metadata header is sent more than once")
	}
	if len(vals[0]) > MaxClientMetadata {
		return nil, fmt.Errorf("the X-Client-Metadata header is larger than %d bytes", MaxClientMetadata)
	}
	var md map[string]any
	if err := json.Unmarshal([]byte(vals[0]), &md); err != nil || md == nil {
		return nil, errors.New("the X-Client-Metadata header must be a JSON object")
	}
	return md, nil
}
