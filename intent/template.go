package intent

import (
	"errors"
	"fmt"
	"math"
	"slices"
	"strconv"
	"strings"
	"unicode/utf8"
)

// template is a compiled text template: literal text and {path|filter} placeholders.
type template struct {
	parts []part
}

// part is a literal (path nil) or a placeholder.
type part struct {
	text    string
	path    []string
	filters []filter
}

// filter is one "|name:arg" of a placeholder.
type filter struct {
	name, arg string
}

// parseTemplate compiles s. "{{" and "}}" stand for literal braces.
func parseTemplate(s string) (*template, error) {
	t := &template{}
	var lit strings.Builder
	for i := 0; i < len(s); i++ {
		c := s[i]
		switch {
		case (c == '{' || c == '}') && i+1 < len(s) && s[i+1] == c:
			lit.WriteByte(c)
			i++
		case c == '{':
			end := strings.IndexByte(s[i:], '}')
			if end < 0 {
				return nil, fmt.Errorf("unclosed placeholder at offset %d", i)
			}
			p, err := parsePlaceholder(s[i+1 : i+end])
			if err != nil {
				return nil, err
			}
			if lit.Len() > 0 {
				t.parts = append(t.parts, part{text: lit.String()})
				lit.Reset()
			}
			t.parts = append(t.parts, p)
			i += end
		default:
			lit.WriteByte(c)
		}
	}
	if lit.Len() > 0 {
		t.parts = append(t.parts, part{text: lit.String()})
	}
	return t, nil
}

func parsePlaceholder(s string) (part, error) {
	fields := strings.Split(s, "|")
	path := strings.TrimSpace(fields[0])
	if path == "" {
		return part{}, fmt.Errorf("empty placeholder {%s}", s)
	}
	p := part{path: strings.Split(path, ".")}
	for _, seg := range p.path {
		if seg == "" || strings.ContainsAny(seg, " \t{") {
			return part{}, fmt.Errorf("placeholder {%s}: %q is not a path", s, path)
		}
	}
	for _, f := range fields[1:] {
		name, arg, _ := strings.Cut(strings.TrimSpace(f), ":")
		switch name {
		case "money", "percent", "number", "upper", "lower", "title", "default":
		default:
			return part{}, fmt.Errorf("placeholder {%s}: unknown filter %q", s, name)
		}
		p.filters = append(p.filters, filter{name: name, arg: arg})
	}
	return p, nil
}

// single returns the path of a template that is exactly one placeholder without filters.
func (t *template) single() ([]string, bool) {
	if len(t.parts) == 1 && t.parts[0].path != nil && len(t.parts[0].filters) == 0 {
		return t.parts[0].path, true
	}
	return nil, false
}

// empty reports whether the template renders nothing at all.
func (t *template) empty() bool { return t == nil || len(t.parts) == 0 }

// refs says which placeholder paths a template may use.
type refs struct {
	slots map[string]*slot
	tools map[string]bool
	// any allows every path, for item templates whose fields are the item's own.
	any bool
}

// check reports placeholders that cannot name anything: an undeclared slot, the result of a
// tool the intent does not call, or an unknown root.
func (t *template) check(r refs) error {
	if t == nil || r.any {
		return nil
	}
	var errs []error
	for _, p := range t.parts {
		if p.path != nil {
			errs = append(errs, checkPath(p.path, r))
		}
	}
	return errors.Join(errs...)
}

func checkPath(path []string, r refs) error {
	name := strings.Join(path, ".")
	switch {
	case path[0] == "error":
		return nil
	case path[0] == "slots" && len(path) == 2:
		if r.slots[path[1]] == nil {
			return fmt.Errorf("{%s}: the intent has no slot %q", name, path[1])
		}
		return nil
	case path[0] == "results" && len(path) >= 2:
		if !r.tools[path[1]] {
			return fmt.Errorf("{%s}: the intent does not call tool %q", name, path[1])
		}
		return nil
	}
	return fmt.Errorf("{%s}: paths are slots.<slot>, results.<tool>.… or error.…", name)
}

// scope is the data templates read: slots, results and error, and in an item template the
// item's own fields first.
type scope struct {
	root map[string]any
	item any
}

// lookup resolves a path in the scope. It tries the item first, then the root.
func (s scope) lookup(path []string) (any, bool) {
	if s.item != nil {
		if v, ok := walk(s.item, path); ok {
			return v, true
		}
	}
	return walk(s.root, path)
}

// walk follows path through decoded JSON: object members by name, array elements by index.
func walk(v any, path []string) (any, bool) {
	for _, seg := range path {
		switch x := v.(type) {
		case map[string]any:
			var ok bool
			if v, ok = x[seg]; !ok {
				return nil, false
			}
		case []any:
			i, err := strconv.Atoi(seg)
			if err != nil || i < 0 || i >= len(x) {
				return nil, false
			}
			v = x[i]
		default:
			return nil, false
		}
	}
	return v, v != nil
}

// render fills the template from s. A placeholder whose path names nothing renders empty
// (or its default); runs of spaces that leaves are collapsed.
func (t *template) render(s scope) string {
	if t.empty() {
		return ""
	}
	var b strings.Builder
	for _, p := range t.parts {
		if p.path == nil {
			b.WriteString(p.text)
			continue
		}
		v, _ := s.lookup(p.path)
		b.WriteString(applyFilters(v, p.filters))
	}
	return strings.Join(strings.Fields(b.String()), " ")
}

// resolves reports whether every placeholder of the template names something in s, or has a
// default.
func (t *template) resolves(s scope) bool {
	for _, p := range t.parts {
		if p.path == nil || slices.ContainsFunc(p.filters, func(f filter) bool { return f.name == "default" }) {
			continue
		}
		if _, ok := s.lookup(p.path); !ok {
			return false
		}
	}
	return true
}

// value returns the typed value of a template that is one bare placeholder, and the rendered
// string otherwise. ok is false when the placeholder names nothing.
func (t *template) value(s scope) (any, bool) {
	if path, ok := t.single(); ok {
		return s.lookup(path)
	}
	return t.render(s), true
}

func applyFilters(v any, fs []filter) string {
	out := format(v)
	for _, f := range fs {
		switch f.name {
		case "money":
			// As in the engine's confirm copy: two decimals, no symbol unless given.
			if n, ok := toNumber(v); ok {
				sign := ""
				if n < 0 {
					sign, n = "-", -n
				}
				out = sign + f.arg + groupDigits(strconv.FormatFloat(n, 'f', 2, 64))
			}
		case "percent":
			if n, ok := toNumber(v); ok {
				out = strconv.FormatFloat(math.Round(n*100), 'f', -1, 64) + "%"
			}
		case "number":
			if n, ok := toNumber(v); ok {
				out = groupDigits(strconv.FormatFloat(math.Round(n*100)/100, 'f', -1, 64))
			}
		case "upper":
			out = strings.ToUpper(out)
		case "lower":
			out = strings.ToLower(out)
		case "title":
			out = titleCase(out)
		case "default":
			if strings.TrimSpace(out) == "" {
				out = f.arg
			}
		}
		v = out
	}
	return out
}

// format writes a decoded JSON value as text: numbers in their shortest form, nothing for
// null, objects and arrays.
func format(v any) string {
	switch x := v.(type) {
	case string:
		return x
	case float64:
		return strconv.FormatFloat(x, 'f', -1, 64)
	case bool:
		return strconv.FormatBool(x)
	}
	return ""
}

// toNumber reads a JSON number, or a string holding one.
func toNumber(v any) (float64, bool) {
	switch x := v.(type) {
	case float64:
		return x, true
	case string:
		n, err := strconv.ParseFloat(strings.TrimSpace(x), 64)
		return n, err == nil
	}
	return 0, false
}

// groupDigits inserts thousands separators into a decimal: "-1234.5" gives "-1,234.5".
func groupDigits(s string) string {
	var b strings.Builder
	if rest, ok := strings.CutPrefix(s, "-"); ok {
		b.WriteByte('-')
		s = rest
	}
	whole, frac, hasFrac := strings.Cut(s, ".")
	for i, c := range whole {
		if i > 0 && (len(whole)-i)%3 == 0 {
			b.WriteByte(',')
		}
		b.WriteRune(c)
	}
	if hasFrac {
		b.WriteByte('.')
		b.WriteString(frac)
	}
	return b.String()
}

// truncate shortens s to at most n characters.
func truncate(s string, n int) string {
	if utf8.RuneCountInString(s) <= n {
		return s
	}
	return string([]rune(s)[:n])
}
