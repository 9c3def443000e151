package modeltape

import (
	"bytes"
	"encoding/json"
	"fmt"
	"regexp"
	"slices"
	"strconv"
	"unicode/utf8"
)

// excerptLen bounds each value an error shows.
const excerptLen = 80

// firstDifference returns the first JSON path where two canonical JSON documents differ, in
// document order, and both values there, each cut to about [excerptLen] characters around
// where they differ.
func firstDifference(a, b []byte) (path, was, now string) {
	va, vb := decode(a), decode(b)
	p, x, y := diff(va, vb, "")
	if p == "" || p == "." {
		p = "the body's root"
	}
	return p, x, y
}

func decode(b []byte) any {
	dec := json.NewDecoder(bytes.NewReader(b))
	dec.UseNumber()
	var v any
	dec.Decode(&v)
	return v
}

var identifier = regexp.MustCompile(`^[A-Za-z_][A-Za-z0-9_]*$`)

func member(path, key string) string {
	if identifier.MatchString(key) {
		if path == "" {
			return key
		}
		return path + "." + key
	}
	return path + "[" + strconv.Quote(key) + "]"
}

// absent marks a member or item one side does not have.
type absent struct{}

func diff(a, b any, path string) (string, string, string) {
	switch x := a.(type) {
	case map[string]any:
		if y, ok := b.(map[string]any); ok {
			keys := make([]string, 0, len(x)+len(y))
			for k := range x {
				keys = append(keys, k)
			}
			for k := range y {
				if _, ok := x[k]; !ok {
					keys = append(keys, k)
				}
			}
			slices.Sort(keys)
			for _, k := range keys {
				va, ok := x[k]
				if !ok {
					va = absent{}
				}
				vb, ok := y[k]
				if !ok {
					vb = absent{}
				}
				if p, s, t := diff(va, vb, member(path, k)); p != "" || s != "" {
					return p, s, t
				}
			}
			return "", "", ""
		}
	case []any:
		if y, ok := b.([]any); ok {
			for i := range max(len(x), len(y)) {
				var va, vb any = absent{}, absent{}
				if i < len(x) {
					va = x[i]
				}
				if i < len(y) {
					vb = y[i]
				}
				if p, s, t := diff(va, vb, fmt.Sprintf("%s[%d]", path, i)); p != "" || s != "" {
					return p, s, t
				}
			}
			return "", "", ""
		}
	case string:
		if y, ok := b.(string); ok {
			if x == y {
				return "", "", ""
			}
			at := 0
			for at < len(x) && at < len(y) && x[at] == y[at] {
				at++
			}
			return path, excerpt(x, at), excerpt(y, at)
		}
	}
	sa, sb := show(a), show(b)
	if sa == sb {
		return "", "", ""
	}
	if path == "" {
		path = "." // a difference at the root, told apart from none
	}
	return path, sa, sb
}

func show(v any) string {
	if _, ok := v.(absent); ok {
		return "nothing"
	}
	var buf bytes.Buffer
	enc := json.NewEncoder(&buf)
	enc.SetEscapeHTML(false)
	enc.Encode(v)
	return cut(string(bytes.TrimSpace(buf.Bytes())))
}

// excerpt quotes s, cut to about excerptLen bytes, starting a little before byte at (where it
// differs from the other value) when that is far in.
func excerpt(s string, at int) string {
	start := 0
	if at > excerptLen/2 {
		start = at - excerptLen/4
		for start > 0 && !utf8.RuneStart(s[start]) {
			start--
		}
	}
	q := strconv.Quote(cut(s[start:]))
	if start > 0 {
		q = `"…` + q[1:]
	}
	return q
}

// cut shortens s to about excerptLen bytes on a rune boundary, marking the cut.
func cut(s string) string {
	if len(s) <= excerptLen {
		return s
	}
	end := excerptLen
	for end > 0 && !utf8.RuneStart(s[end]) {
		end--
	}
	return s[:end] + "…"
}
