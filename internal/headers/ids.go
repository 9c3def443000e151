package headers

// The syntax of the protocol's ids: request ids (X-Request-ID) and turn ids. The checks run
// for every request, so they are written out rather than regular expressions.

import (
	"net/http"
	"strings"

	"github.com/google/uuid"
)

// ValidRequestID reports whether id matches ^(prod|stg)-[A-Za-z0-9._:-]{1,128}$, or with
// unprefixed (when the host chooses the environment) also ^[A-Za-z0-9._:-]{1,128}$.
func ValidRequestID(id string, unprefixed bool) bool {
	rest, ok := strings.CutPrefix(id, "prod-")
	if !ok {
		rest, ok = strings.CutPrefix(id, "stg-")
	}
	return (ok && IDChars(rest)) || (unprefixed && IDChars(id))
}

// IDChars reports whether s is 1 to 128 letters, digits or ._:-, what a request id may be made of.
func IDChars(s string) bool {
	if len(s) < 1 || len(s) > 128 {
		return false
	}
	for i := 0; i < len(s); i++ {
		switch c := s[i]; {
		case 'a' <= c && c <= 'z', 'A' <= c && c <= 'Z', '0' <= c && c <= '9', c == '.', c == '_', c == ':', c == '-':
		default:
			return false
		}
	}
	return true
}

// NewRequestID makes the id of a request that came without one: a UUID after the prefix of
// environment env ("stg-" for "staging", else "prod-"), as a client's X-Request-ID would carry,
// so that the backend's logs tell the environments apart whoever made the id.
func NewRequestID(env string) string {
	if env == "staging" {
		return "stg-" + uuid.NewString()
	}
	return "prod-" + uuid.NewString()
}

// CallerRequestID applies X-Request-ID's rule to the id a host gives an in-process caller of
// environment env: with env set (the host chose), 1 to 128 letters, digits or ._:-; without,
// prod- or stg- before them, and stg- chooses "staging". An empty id is a new one. bad is the
// detail of the problem of an id that breaks the rule.
func CallerRequestID(id, env string) (_, _ string, bad string) {
	switch {
	case id == "":
		return NewRequestID(env), env, ""
	case env != "" && !IDChars(id):
		return "", "", "the request id must be 1 to 128 letters, digits or ._:-"
	case env == "" && !ValidRequestID(id, false):
		return "", "", "the request id must be prod- or stg- followed by 1 to 128 letters, digits or ._:-, unless the caller names its Environment"
	case env == "" && strings.HasPrefix(id, "stg-"):
		env = "staging" // as over HTTP: without the host's word, the prefix chooses
	}
	return id, env, ""
}

// ValidTurnID reports whether s can be a turn's id: the engine's are UUIDs, in lower case.
func ValidTurnID(s string) bool {
	if len(s) != 36 {
		return false
	}
	for i := 0; i < len(s); i++ {
		switch c := s[i]; {
		case i == 8 || i == 13 || i == 18 || i == 23:
			if c != '-' {
				return false
			}
		case '0' <= c && c <= '9', 'a' <= c && c <= 'f':
		default:
			return false
		}
	}
	return true
}

// RequestID reads X-Request-ID from h, which must carry the environment's prefix unless
// unprefixed (the host chose the environment). When it is missing, sent twice or malformed,
// bad is the detail of the problem to answer, which does not echo the value.
func RequestID(h http.Header, unprefixed bool) (id, bad string) {
	vals := h.Values("X-Request-ID")
	switch {
	case len(vals) == 0 || vals[0] == "":
		return "", "the X-Request-ID header is missing; it must look like prod-<id> or stg-<id>"
	case len(vals) > 1:
		return "", "the X-Request-ID header is sent more than once"
	case !ValidRequestID(vals[0], unprefixed) && unprefixed:
		return "", "the X-Request-ID header must be 1 to 128 letters, digits or ._:-"
	case !ValidRequestID(vals[0], unprefixed):
		return "", "the X-Request-ID header must be prod- or stg- followed by 1 to 128 letters, digits or ._:-"
	}
	return vals[0], ""
}

// Single returns the header's value, trimmed, or "" when it is absent or sent more than once.
func Single(h http.Header, name string) string {
	vals := h.Values(name)
	if len(vals) != 1 {
		return ""
	}
	return strings.TrimSpace(vals[0])
}

// SessionAuth reads the values of an Authorization header that carries a session token:
// "Bearer <token>" or "DPoP <token>", the scheme in any case, spelled back as these two. When
// the header is sent twice or names another scheme, bad is the detail of the problem to answer
// (in the Bearer scheme); a token that is empty or longer than max is the caller's to refuse,
// in scheme.
func SessionAuth(vals []string, max int) (scheme, token string, ok bool, bad string) {
	if len(vals) > 1 {
		return "", "", false, "the Authorization header is sent more than once"
	}
	scheme, token, _ = strings.Cut(strings.TrimSpace(vals[0]), " ")
	token = strings.TrimSpace(token)
	switch {
	case strings.EqualFold(scheme, "Bearer"):
		scheme = "Bearer"
	case strings.EqualFold(scheme, "DPoP"):
		scheme = "DPoP"
	default:
		return "", "", false, "the Authorization header must be Bearer <session_token> or DPoP <session_token>"
	}
	return scheme, token, token != "" && len(token) <= max, ""
}
