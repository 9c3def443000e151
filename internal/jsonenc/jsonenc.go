// Package jsonenc holds the JSON the engine reads and writes by hand, for the root package,
// its transports and the test command's tapes:
//
//   - strings appended to byte slices without reflection, for the hot paths: the speech deltas
//     of the turn stream and the voice socket's messages;
//   - the JSON bodies of the engine's requests (AG-UI's too), read labelled application/json
//     and UTF-8, bounded in size and in time, one object whose members of the wrong type are
//     named; a [BodyError] carries the status, problem code and field of the problem the
//     engine answers with;
//   - the canonical form of RFC 8785, in which action tokens hash the arguments they bind;
//   - JSON whose objects repeat a member, which signed documents must not hold.
//   - whether a value is one object, and values compacted, as sessions and tenants keep them.
package jsonenc

import "unicode/utf8"

// AppendString appends s to b as a JSON string. Invalid UTF-8 becomes U+FFFD, as
// encoding/json writes it; U+2028 and U+2029 are escaped so the line is safe in JavaScript too.
func AppendString(b []byte, s string) []byte {
	const hex = "0123456789abcdef"
	b = append(b, '"')
	start := 0
	for i := 0; i < len(s); {
		c := s[i]
		if c < utf8.RuneSelf {
			if c >= 0x20 && c != '"' && c != '\\' {
				i++
				continue
			}
			b = append(b, s[start:i]...)
			switch c {
			case '"', '\\':
				b = append(b, '\\', c)
			case '\n':
				b = append(b, '\\', 'n')
			case '\r':
				b = append(b, '\\', 'r')
			case '\t':
				b = append(b, '\\', 't')
			default:
				b = append(b, '\\', 'u', '0', '0', hex[c>>4], hex[c&0xF])
			}
			i++
			start = i
			continue
		}
		r, size := utf8.DecodeRuneInString(s[i:])
		if r == utf8.RuneError && size == 1 {
			b = append(b, s[start:i]...)
			b = append(b, `\ufffd`...)
			i += size
			start = i
			continue
		}
		if r == '\u2028' || r == '\u2029' {
			b = append(b, s[start:i]...)
			b = append(b, '\\', 'u', '2', '0', '2', hex[r&0xF])
			i += size
			start = i
			continue
		}
		i += size
	}
	b = append(b, s[start:]...)
	return append(b, '"')
}
