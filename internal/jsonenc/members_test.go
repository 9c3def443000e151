package jsonenc

import (
	"bytes"
	"encoding/json"
	"testing"
)

func TestHasDuplicateMembers(t *testing.T) {
	for _, tc := range []struct {
		raw  string
		want bool
	}{
		{`{"ath":"a","htm":"b"}`, false},
		{`{"ath":"a","ath":"b"}`, true},
		{`{"ath":"a","\u0061th":"b"}`, true},
		{`{"ath":"a","ATH":"b"}`, true},
		{`{"k":"a","\u212a":"b"}`, true}, // the Kelvin sign folds to k
		{`{"jwk":{"x":"1","y":"2","x":"3"}}`, true},
		{`{"a":[{"b":1},{"b":2}],"c":{"b":3}}`, false},
		{`{"a":[1,[2,{"d":1,"d":2}]]}`, true},
		{`[{"a":1},{"a":1}]`, false},
		{`{"a":{},"b":[],"c":{"a":{}}}`, false},
		{`{"a":{"x":1},"a":{"y":2}}`, true},
		{`{"a":"b","b":"a"}`, false},
		{`{}`, false},
		{`"a"`, false},
		{`not json`, false},
	} {
		if got := HasDuplicateMembers([]byte(tc.raw)); got != tc.want {
			t.Errorf("HasDuplicateMembers(%s) = %v, want %v", tc.raw, got, tc.want)
		}
	}
}

// FuzzHasDuplicateMembers checks, for any valid JSON, that a document whose decoding loses a
// member (a later one of the same name overwrote it) is reported, and that nothing panics.
func FuzzHasDuplicateMembers(f *testing.F) {
	for _, s := range []string{`{"a":1}`, `{"a":1,"a":2}`, `{"a":{"b":[{"c":1,"c":2}]}}`, `[{"a":1},{"a":1}]`, `{"A":1,"a":2}`, `{"\u0061":1,"a":2}`, `{`, `[[[{}]]]`} {
		f.Add([]byte(s))
	}
	f.Fuzz(func(t *testing.T, raw []byte) {
		has := HasDuplicateMembers(raw)
		var v any
		if json.Unmarshal(raw, &v) != nil {
			return
		}
		if written, kept := memberNames(t, raw), keptMembers(v); written != kept && !has {
			t.Fatalf("%s writes %d members and decodes to %d, but has no duplicates reported", raw, written, kept)
		}
	})
}

// memberNames counts the member names written in raw.
func memberNames(t *testing.T, raw []byte) int {
	dec := json.NewDecoder(bytes.NewReader(raw))
	var stack []bool // whether each open container is an object
	key, n := false, 0
	for {
		tok, err := dec.Token()
		if err != nil {
			return n
		}
		if d, ok := tok.(json.Delim); ok {
			switch d {
			case '{', '[':
				stack = append(stack, d == '{')
				key = d == '{'
				continue
			default:
				stack = stack[:len(stack)-1]
			}
		} else if key {
			n++
			key = false
			continue
		}
		key = len(stack) > 0 && stack[len(stack)-1]
	}
}

// keptMembers counts the members of the objects in v, a decoded document.
func keptMembers(v any) int {
	n := 0
	switch x := v.(type) {
	case map[string]any:
		n += len(x)
		for _, e := range x {
			n += keptMembers(e)
		}
	case []any:
		for _, e := range x {
			n += keptMembers(e)
		}
	}
	return n
}
