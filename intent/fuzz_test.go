package intent

import (
	"math"
	"testing"
	"unicode/utf8"
)

func FuzzMatch(f *testing.F) {
	cfg, err := Compile(demoIntents(f))
	if err != nil {
		f.Fatal(err)
	}
	for _, s := range []string{"what's my balance", "send $20 to Alex", "pay Sam one hundred and five",
		"ما هو رصيدي", "¿Cuánto dinero tengo?", "'s n't ''", "1,2,3.4.5", "a a a hundred thousand million"} {
		f.Add(s)
	}
	f.Fuzz(func(t *testing.T, text string) {
		m := cfg.Match(text, fixedNow())
		if m.Intent == "" || m.Score < 0 || m.Score > 1 || math.IsNaN(m.Score) {
			t.Fatalf("Match(%q) = %+v", text, m)
		}
		for k, v := range m.Slots {
			switch x := v.(type) {
			case float64:
				if math.IsNaN(x) || math.IsInf(x, 0) {
					t.Fatalf("slot %s = %v", k, x)
				}
			case string:
				if x == "" || !utf8.ValidString(x) {
					t.Fatalf("slot %s = %q", k, x)
				}
			default:
				t.Fatalf("slot %s has type %T", k, v)
			}
		}
	})
}

func FuzzTemplate(f *testing.F) {
	for _, s := range []string{"Hi {slots.to|money:€|default:x}", "{{", "}}", "{a.b.0}", "{", "{|}", "{x|default:}"} {
		f.Add(s)
	}
	root := map[string]any{"slots": map[string]any{"to": "Alex", "n": 1.5}, "a": map[string]any{"b": []any{"c"}}}
	f.Fuzz(func(t *testing.T, s string) {
		tm, err := parseTemplate(s)
		if err != nil {
			return
		}
		out := tm.render(scope{root: root})
		if utf8.ValidString(s) && !utf8.ValidString(out) {
			t.Fatalf("render(%q) = %q, not UTF-8", s, out)
		}
	})
}
