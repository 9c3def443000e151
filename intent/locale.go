package intent

import (
	"slices"
	"strings"

	"github.com/convengine/engine"
)

// localized holds per-locale values, keyed by lower-case BCP 47 tags.
type localized[V any] struct {
	m    map[string]V
	keys []string // sorted
}

func (l *localized[V]) set(tag string, v V) {
	if l.m == nil {
		l.m = make(map[string]V)
	}
	tag = strings.ToLower(tag)
	if _, dup := l.m[tag]; !dup {
		l.keys = append(l.keys, tag)
		slices.Sort(l.keys)
	}
	l.m[tag] = v
}

// lookup finds the value for locale, trying [engine.LocaleFallbacks] of locale, then of def.
func (l *localized[V]) lookup(locale, def string) (V, bool) {
	for _, tags := range [2][]string{engine.LocaleFallbacks(locale), engine.LocaleFallbacks(def)} {
		for _, tag := range tags {
			if v, ok := l.m[strings.ToLower(tag)]; ok {
				return v, true
			}
		}
	}
	var zero V
	return zero, false
}

// pick is lookup that settles, when no fallback matches, on the first locale in tag order, so
// that an answer is always in some language and always the same one.
func (l *localized[V]) pick(locale, def string) (V, bool) {
	if v, ok := l.lookup(locale, def); ok {
		return v, true
	}
	if len(l.keys) == 0 {
		var zero V
		return zero, false
	}
	return l.m[l.keys[0]], true
}
