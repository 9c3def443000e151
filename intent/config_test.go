package intent

import (
	"errors"
	"os"
	"strings"
	"testing"

	"sigs.k8s.io/yaml"
)

func TestCompileErrors(t *testing.T) {
	cases := []struct {
		name, yaml, want string
	}{
		{"empty", ``, "the configuration is empty"},
		{"not an object", `[1, 2]`, "cannot unmarshal array"},
		{"unknown key", "intents: []\nthreshhold: 0.5", `unknown field "threshhold"`},
		{"no intents", `threshold: 0.5`, "intents: is empty"},
		{"threshold", "threshold: 1.5\nintents: [{name: fallback, responses: {en: {speak: hi}}}]", "threshold: must be above 0"},
		{"max list", "max_list_items: 80\nintents: [{name: fallback, responses: {en: {speak: hi}}}]", "max_list_items: must be from 1 to 50"},
		{"no fallback", `intents: [{name: a, examples: [hi], responses: {en: {speak: hi}}}]`, "fallback: is missing"},
		{"unknown fallback", "fallback: nope\nintents: [{name: a, examples: [hi], responses: {en: {speak: hi}}}]", `fallback: names no intent "nope"`},
		{"unknown home", "home: nope\nintents: [{name: fallback, responses: {en: {speak: hi}}}]", `home: names no intent "nope"`},
		{"error locale", "error: {en_US: x}\nintents: [{name: fallback, responses: {en: {speak: hi}}}]", `error.en_US: "en_US" is not a BCP 47`},
		{"error placeholder", "error: {en: '{slots.x}'}\nintents: [{name: fallback, responses: {en: {speak: hi}}}]", `error.en: {slots.x}: the intent has no slot "x"`},
		{"unknown intent key", `intents: [{name: fallback, exmples: [hi]}]`, `intents[0]: json: unknown field "exmples"`},
		{"intent name", `intents: [{name: "a b", responses: {en: {speak: hi}}}, {name: fallback, responses: {en: {speak: hi}}}]`, `intents[0].name: "a b" must be`},
		{"duplicate", `intents: [{name: fallback, responses: {en: {speak: hi}}}, {name: fallback, responses: {en: {speak: hi}}}]`, `intents[1].name: "fallback" is used twice`},
		{"unreachable", `intents: [{name: fallback, responses: {en: {speak: hi}}}, {name: b, responses: {en: {speak: hi}}}]`, `intents[1]: "b" is never chosen`},
		{"empty example", `intents: [{name: fallback, examples: ["?!"], responses: {en: {speak: hi}}}]`, "intents[0].examples[0]: has no word"},
		{"bad regexp", `intents: [{name: fallback, responses: {en: {speak: hi}}}, {name: b, patterns: ["ok", "(unclosed"], responses: {en: {speak: hi}}}]`, "intents[1].patterns[1]: invalid regexp"},
		{"group without slot", `intents: [{name: fallback, patterns: ["to (?P<who>\\w+)"], responses: {en: {speak: hi}}}]`, `intents[0].patterns[0]: group "who" names no slot`},
		{"slot type", `intents: [{name: fallback, slots: {x: {type: money}}, responses: {en: {speak: hi}}}]`, `intents[0].slots.x.type: "money" is not`},
		{"enum values", `intents: [{name: fallback, slots: {x: {type: enum}}, responses: {en: {speak: hi}}}]`, "intents[0].slots.x.values: an enum slot needs values"},
		{"amount values", `intents: [{name: fallback, slots: {x: {type: amount, values: ["1"]}}, responses: {en: {speak: hi}}}]`, "intents[0].slots.x.values: only name and enum slots"},
		{"synonym of nothing", `intents: [{name: fallback, slots: {x: {type: enum, values: [a], synonyms: {b: [c]}}}, responses: {en: {speak: hi}}}]`, "intents[0].slots.x.synonyms.b: is not one of the values"},
		{"tool name", `intents: [{name: fallback, tools: [{name: "get balance"}], responses: {en: {speak: hi}}}]`, `intents[0].tools[0].name: "get balance" is not a tool name`},
		{"tool twice", `intents: [{name: fallback, tools: [{name: t}, {name: t}], responses: {en: {speak: hi}}}]`, `intents[0].tools[1].name: "t" is called twice`},
		{"argument placeholder", `intents: [{name: fallback, tools: [{name: t, arguments: {a: "{slots.nope}"}}], responses: {en: {speak: hi}}}]`, `intents[0].tools[0].arguments.a: {slots.nope}`},
		{"action placeholder", `intents: [{name: fallback, action: {name: pay, arguments: {a: "{results.t.x}"}}, responses: {en: {speak: hi}}}]`, `intents[0].action.arguments.a: {results.t.x}: the intent does not call tool "t"`},
		{"no responses", `intents: [{name: fallback}]`, "intents[0].responses: needs the copy of at least one locale"},
		{"response locale", `intents: [{name: fallback, responses: {"e n": {speak: hi}}}]`, `intents[0].responses.e n: "e n" is not a BCP 47`},
		{"empty response", `intents: [{name: fallback, responses: {en: {follow: hi}}}]`, "intents[0].responses.en: needs speak or widgets"},
		{"unknown response key", `intents: [{name: fallback, responses: {en: {speek: hi}}}]`, `intents[0].responses.en: json: unknown field "speek"`},
		{"speak placeholder", `intents: [{name: fallback, responses: {en: {speak: "{results.x.y}"}}}]`, `intents[0].responses.en.speak: {results.x.y}: the intent does not call tool "x"`},
		{"ask missing", `intents: [{name: fallback, slots: {x: {type: amount, required: true}}, responses: {en: {speak: hi}}}]`, "intents[0].responses.en.ask: is missing"},
		{"too many suggestions", `intents: [{name: fallback, responses: {en: {speak: hi, suggestions: [a, b, c, d, e, f, g, h, i]}}}]`, "intents[0].responses.en.suggestions: has more than 8"},
		{"widget kind", `intents: [{name: fallback, responses: {en: {widgets: [{}]}}}]`, "intents[0].responses.en.widgets[0]: needs exactly one of stat, list, progress or tool"},
		{"stat value", `intents: [{name: fallback, responses: {en: {widgets: [{stat: {label: a}}]}}}]`, "intents[0].responses.en.widgets[0].stat.value: is missing"},
		{"progress path", `intents: [{name: fallback, responses: {en: {widgets: [{progress: {label: a, value: results.goal.progress}}]}}}]`, `intents[0].responses.en.widgets[0].progress.value: {results.goal.progress}: the intent does not call tool "goal"`},
		{"list item", `intents: [{name: fallback, tools: [{name: t}], responses: {en: {widgets: [{list: {title: a, items_from: results.t.rows, limit: 99}}]}}}]`, "widgets[0].list.limit: must be from 1 to 50\nintents[0].responses.en.widgets[0].list.item.title: is missing"},
	}
	for _, tc := range cases {
		t.Run(tc.name, func(t *testing.T) {
			raw, err := yaml.YAMLToJSON([]byte(tc.yaml))
			if err != nil {
				t.Fatal(err)
			}
			if tc.yaml == "" {
				raw = nil
			}
			_, err = Compile(raw)
			if err == nil {
				t.Fatalf("Compile succeeded, want an error containing %q", tc.want)
			}
			if !errors.Is(err, ErrInvalidConfig) {
				t.Errorf("error %v does not wrap ErrInvalidConfig", err)
			}
			if !strings.Contains(err.Error(), tc.want) {
				t.Errorf("error:\n%v\nwant it to contain %q", err, tc.want)
			}
		})
	}
}

func TestCompileDefaults(t *testing.T) {
	raw, err := yaml.YAMLToJSON([]byte(`
intents:
  - name: fallback
    responses: {en: {speak: "Sorry?"}}
  - name: greet
    examples: [hello there]
    responses: {en: {speak: Hello!}}
`))
	if err != nil {
		t.Fatal(err)
	}
	cfg, err := Compile(raw)
	if err != nil {
		t.Fatal(err)
	}
	if cfg.threshold != defaultThreshold || cfg.maxList != defaultMaxListItems {
		t.Errorf("threshold %v, max list %d; want the defaults", cfg.threshold, cfg.maxList)
	}
	if cfg.fallback.name != "fallback" || cfg.home != cfg.fallback {
		t.Errorf("fallback %q, home %q; want the intent named fallback for both", cfg.fallback.name, cfg.home.name)
	}
	for text, want := range map[string]string{"hello": "greet", "hello there!": "greet", "goodbye": "fallback"} {
		if m := cfg.Match(text, fixedNow()); m.Intent != want {
			t.Errorf("Match(%q) = %q, want %q", text, m.Intent, want)
		}
	}
}

// TestDocExample compiles the example configuration of the package documentation, so that it
// stays true.
func TestDocExample(t *testing.T) {
	src, err := os.ReadFile("doc.go")
	if err != nil {
		t.Fatal(err)
	}
	_, rest, _ := strings.Cut(string(src), "// In YAML, as in a tenant file")
	example, _, _ := strings.Cut(rest, "// The demo bank's complete configuration")
	var lines []string
	for _, l := range strings.Split(example, "\n") {
		if y, ok := strings.CutPrefix(l, "//\t"); ok {
			lines = append(lines, y)
		}
	}
	if len(lines) < 20 {
		t.Fatalf("found %d lines of example", len(lines))
	}
	raw, err := yaml.YAMLToJSON([]byte(strings.Join(lines, "\n")))
	if err != nil {
		t.Fatal(err)
	}
	cfg, err := Compile(raw)
	if err != nil {
		t.Fatal(err)
	}
	for text, want := range map[string]string{
		"what's my balance":                 "balance",
		"send twenty dollars to sam":        "transfer",
		"how am I doing on my savings goal": "savings_goal",
		"tell me a joke":                    "help",
	} {
		if m := cfg.Match(text, fixedNow()); m.Intent != want {
			t.Errorf("Match(%q) = %s, want %s", text, m.Intent, want)
		}
	}
}
