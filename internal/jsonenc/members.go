package jsonenc

import (
	"bytes"
	"encoding/json"
	"strings"
	"unicode"
)

// HasDuplicateMembers reports whether raw holds, at any depth, an object with two members of
// the same name. Names are compared as encoding/json matches them to a struct's fields: after
// unescaping, and without regard to case ("ath" and "ATH" are the same member). RFC 8259 leaves
// a duplicate's meaning to each parser, so that a signer and a verifier can read two different
// documents from one signed text; a verifier refuses them instead. Text that is not JSON may be
// reported either way: the caller's own decoding refuses it.
//
// It scans raw once without a decoder: names are compared in place unless they hold escapes, so
// that a proof's check allocates almost nothing.
func HasDuplicateMembers(raw []byte) bool {
	var frames []frame // the open containers, innermost last
	var names [][]byte // the member names of the open objects, each frame's from its first
	expectKey := false
	for i := 0; i < len(raw); i++ {
		switch c := raw[i]; c {
		case '{', '[':
			frames = append(frames, frame{object: c == '{', first: len(names)})
			expectKey = c == '{'
		case '}', ']':
			if len(frames) == 0 {
				return false
			}
			names = names[:frames[len(frames)-1].first]
			frames = frames[:len(frames)-1]
			expectKey = false
		case ',':
			expectKey = len(frames) > 0 && frames[len(frames)-1].object
		case '"':
			end, escaped := stringEnd(raw, i)
			if end < 0 {
				return false
			}
			if expectKey && len(frames) > 0 {
				name := raw[i+1 : end]
				if escaped {
					var s string
					if json.Unmarshal(raw[i:end+1], &s) != nil {
						return false
					}
					name = []byte(s)
				}
				f := &frames[len(frames)-1]
				if f.seen(names[f.first:], name) {
					return true
				}
				names = append(names, name)
				expectKey = false
			}
			i = end
		}
	}
	return false
}

// frame is an open object or array.
type frame struct {
	object bool
	first  int             // the index of its first name in the names of HasDuplicateMembers
	folded map[string]bool // its names folded, once it has many
}

// manyNames is where an object's names go from a scan to a map: a scan costs nothing for the
// few members of a proof, a map keeps a hostile object of many members linear.
const manyNames = 16

// seen reports whether name is one of the object's names so far.
func (f *frame) seen(names [][]byte, name []byte) bool {
	if len(names) < manyNames {
		for _, n := range names {
			if bytes.EqualFold(n, name) {
				return true
			}
		}
		return false
	}
	if f.folded == nil {
		f.folded = make(map[string]bool, 2*manyNames)
		for _, n := range names {
			f.folded[foldName(string(n))] = true
		}
	}
	k := foldName(string(name))
	if f.folded[k] {
		return true
	}
	f.folded[k] = true
	return false
}

// stringEnd returns the index of the quote that ends the string starting at raw[start], and
// whether it holds escapes; -1 when it does not end.
func stringEnd(raw []byte, start int) (int, bool) {
	escaped := false
	for i := start + 1; i < len(raw); i++ {
		switch raw[i] {
		case '\\':
			escaped = true
			i++
		case '"':
			return i, escaped
		}
	}
	return -1, escaped
}

// foldName is name with every letter replaced by the least of its simple case folding orbit,
// so that two names are equal folded exactly when strings.EqualFold says they are.
func foldName(name string) string {
	return strings.Map(func(r rune) rune {
		least := r
		for f := unicode.SimpleFold(r); f != r; f = unicode.SimpleFold(f) {
			least = min(least, f)
		}
		return least
	}, name)
}
