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
func HasDuplicateMembers(raw []byte) bool {
	dec := json.NewDecoder(bytes.NewReader(raw))
	// names holds, for each open container, the member names seen so far; nil for an array.
	var names []map[string]bool
	key := false // whether the next token of the innermost object is a member name
	for {
		tok, err := dec.Token()
		if err != nil {
			return false
		}
		switch t := tok.(type) {
		case json.Delim:
			switch t {
			case '{':
				names = append(names, map[string]bool{})
				key = true
				continue
			case '[':
				names = append(names, nil)
			default:
				names = names[:len(names)-1]
			}
		case string:
			if key {
				name := foldName(t)
				seen := names[len(names)-1]
				if seen[name] {
					return true
				}
				seen[name] = true
				key = false
				continue
			}
		}
		if len(names) == 0 {
			return false
		}
		key = names[len(names)-1] != nil
	}
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
