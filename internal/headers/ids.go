package headers

// The syntax of the protocol's ids: request ids (X-Request-ID) and turn ids. The checks run
// for every request, so they are written out rather than regular expressions.

import "strings"

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
