package intent

import (
	"encoding/json"
	"errors"
	"regexp"
	"strings"
	"testing"
)

// asciiOnly stands for an English pronunciation dictionary.
func asciiOnly(w string) bool {
	for _, r := range w {
		if r > 127 {
			return false
		}
	}
	return true
}

// grammarRegexp turns a JSGF grammar of the subset Grammar writes into a regular expression
// of its public rule, so that tests can ask which phrases it accepts.
func grammarRegexp(t *testing.T, g string) *regexp.Regexp {
	t.Helper()
	rules := map[string]string{}
	var public string
	for _, line := range strings.Split(g, "\n") {
		line = strings.TrimSpace(line)
		if !strings.HasSuffix(line, ";") || !strings.Contains(line, "=") {
			continue
		}
		name, body, _ := strings.Cut(strings.TrimSuffix(line, ";"), "=")
		name = strings.TrimSpace(name)
		if p, ok := strings.CutPrefix(name, "public "); ok {
			name = p
			public = strings.Trim(p, "<>")
		}
		rules[strings.Trim(name, "<>")] = strings.TrimSpace(body)
	}
	ref := regexp.MustCompile(`<(\w+)>`)
	var expand func(body string, depth int) string
	expand = func(body string, depth int) string {
		if depth > 10 {
			t.Fatalf("rules nest too deep: %s", body)
		}
		body = strings.NewReplacer("[", "(?:", "]", ")?", "(", "(?:").Replace(body)
		return ref.ReplaceAllStringFunc(body, func(m string) string {
			r, ok := rules[m[1:len(m)-1]]
			if !ok {
				t.Fatalf("rule %s is not defined", m)
			}
			return "(?:" + expand(r, depth+1) + ")"
		})
	}
	re := expand(rules[public], 0)
	re = strings.Join(strings.Fields(re), `\s*`) // words are separated by spaces, groups are not
	return regexp.MustCompile(`^(?:` + re + `)$`)
}

func TestGrammarOfTheDemoBank(t *testing.T) {
	g, err := Grammar(demoIntents(t), &GrammarOptions{Known: asciiOnly})
	if err != nil {
		t.Fatal(err)
	}
	if !strings.HasPrefix(g, "#JSGF V1.0;\ngrammar intents;\n") {
		t.Errorf("grammar header:\n%s", g)
	}
	re := grammarRegexp(t, g)
	accepts := func(phrase string) bool { return re.MatchString(phrase) }
	for _, phrase := range []string{
		"what is my balance", "what's my balance", "what's my savings balance", "how much money do i have",
		"show my recent transactions", "show me my recent transactions",
		"how close am i to my savings goal", "how is my savings goal",
		"send twenty dollars to alex", "transfer one hundred and five dollars to taylor",
		"give fifteen dollars and fifty cents to sam", "pay jordan forty two dollars", "send money",
		"wire two thousand three hundred to jordan", "help", "give me an overview",
	} {
		if !accepts(phrase) {
			t.Errorf("the grammar does not accept %q", phrase)
		}
	}
	for _, phrase := range []string{
		"what is my", "send twenty dollars to bob", "send dollars to alex", "cuál es mi saldo",
		"muéstrame mi saldo", "pay alex", "tell me a joke",
	} {
		if accepts(phrase) {
			t.Errorf("the grammar accepts %q", phrase)
		}
	}
	if strings.ContainsAny(g, "áéíóúñ") || strings.Contains(g, "رصيد") {
		t.Errorf("words Known refused are in the grammar:\n%s", g)
	}
}

// TestGrammarKeepsOneLanguage: a pattern of another language is left out even when a word or
// two of it are in the recognizer's dictionary, as "manda" (a name) and "a" are in English's.
func TestGrammarKeepsOneLanguage(t *testing.T) {
	spanish := map[string]bool{"envia": true, "enviar": true, "mandar": true, "transfiere": true, "transferir": true, "pagale": true}
	g, err := Grammar(demoIntents(t), &GrammarOptions{Known: func(w string) bool { return asciiOnly(w) && !spanish[w] }})
	if err != nil {
		t.Fatal(err)
	}
	re := grammarRegexp(t, g)
	if re.MatchString("manda twenty dollars a alex") || strings.Contains(g, "manda") {
		t.Errorf("a Spanish pattern is in the English grammar:\n%s", g)
	}
	if !re.MatchString("send twenty dollars to alex") {
		t.Error("the English pattern is gone")
	}
}

// TestGrammarAmounts: amounts up to the slot's max, cents below a hundred.
func TestGrammarAmounts(t *testing.T) {
	g, err := Grammar(demoIntents(t), &GrammarOptions{Known: asciiOnly})
	if err != nil {
		t.Fatal(err)
	}
	re := grammarRegexp(t, g)
	for phrase, want := range map[string]bool{
		"send twelve dollars and fifty cents to alex":                    true,
		"send ninety nine cents to alex":                                 true,
		"send a thousand dollars to alex":                                true,
		"send ten thousand dollars to alex":                              true,
		"send nine thousand nine hundred and ninety nine dollars to sam": true,
		"send twenty thousand dollars to alex":                           false, // past the slot's max
		"send twenty three dollars and four hundred cents to sam":        false,
		"send one hundred cents to sam":                                  false,
	} {
		if re.MatchString(phrase) != want {
			t.Errorf("%q accepted: %v, want %v", phrase, !want, want)
		}
	}
}

func TestGrammarWithoutKnown(t *testing.T) {
	g, err := Grammar(demoIntents(t), nil)
	if err != nil {
		t.Fatal(err)
	}
	re := grammarRegexp(t, g)
	if !re.MatchString("cuál es mi saldo") || !re.MatchString("كم رصيدي") {
		t.Error("without Known, phrases of every language are kept")
	}
}

func TestGrammarPatterns(t *testing.T) {
	config := func(patterns ...string) json.RawMessage {
		b, _ := json.Marshal(map[string]any{
			"fallback": "pay",
			"intents": []any{map[string]any{
				"name":     "pay",
				"examples": []string{"pay someone"},
				"patterns": patterns,
				"slots": map[string]any{
					"amount": map[string]any{"type": "amount"},
					"who":    map[string]any{"type": "name", "values": []string{"Alex", "Sam"}, "synonyms": map[string][]string{"Sam": {"Samuel"}}},
					"anyone": map[string]any{"type": "name"},
					"when":   map[string]any{"type": "date"},
					"n":      map[string]any{"type": "number"},
				},
				"responses": map[string]any{"en": map[string]string{"speak": "ok"}},
			}},
		})
		return b
	}
	tests := []struct {
		pattern string
		accepts []string
		refuses []string
	}{
		{`\bpay\s+(?P<who>\pL+)\s+(?P<amount>.+)`, []string{"pay samuel ten dollars", "pay alex twenty"}, []string{"pay bob ten dollars"}},
		{`^(?:send|give)\s+(?:the\s+)?money\s+to\s+(?P<who>\w+)$`, []string{"send money to sam", "give the money to alex"}, []string{"send the to sam"}},
		{`colou?r\s+(?P<n>\d+)`, []string{"color seven", "colour nine hundred"}, nil},
		{`(?i)PAY\s+(?P<who>\w+)\s+(?P<when>\w+)`, []string{"pay sam yesterday", "pay alex friday"}, nil},
		{`pay\s+.+\s+to\s+(?P<who>\w+)`, nil, []string{"pay it to sam"}},               // a wildcard outside a slot
		{`pay\s+(?P<anyone>\w+)`, nil, []string{"pay alex"}},                           // a name slot without values
		{`(a|b|c|d|e)(a|b|c|d|e)(a|b|c|d|e)\s+(?P<who>\w+)`, nil, []string{"abc sam"}}, // 125 phrases
	}
	for _, tc := range tests {
		t.Run(tc.pattern, func(t *testing.T) {
			g, err := Grammar(config(tc.pattern), nil)
			if err != nil {
				t.Fatal(err)
			}
			re := grammarRegexp(t, g)
			if !re.MatchString("pay someone") {
				t.Error("the example is missing")
			}
			for _, p := range tc.accepts {
				if !re.MatchString(p) {
					t.Errorf("does not accept %q:\n%s", p, g)
				}
			}
			for _, p := range tc.refuses {
				if re.MatchString(p) {
					t.Errorf("accepts %q:\n%s", p, g)
				}
			}
		})
	}
}

func TestGrammarExamples(t *testing.T) {
	raw := json.RawMessage(`{"fallback":"a-b","intents":[{"name":"a-b","examples":["Send 25 to Alex!","I’m here","don't stop", "¿Qué tal?"],
		"responses":{"en":{"speak":"ok"}}}]}`)
	g, err := Grammar(raw, &GrammarOptions{Name: "my grammar"})
	if err != nil {
		t.Fatal(err)
	}
	if !strings.Contains(g, "grammar my_grammar;") || !strings.Contains(g, "<intent_a_b> =") {
		t.Errorf("names are not made fit for JSGF:\n%s", g)
	}
	re := grammarRegexp(t, g)
	for _, p := range []string{"send twenty five to alex", "i'm here", "i am here", "do not stop", "don't stop", "qué tal"} {
		if !re.MatchString(p) {
			t.Errorf("does not accept %q:\n%s", p, g)
		}
	}
	for digits, words := range map[string]string{"0": "zero", "7": "seven", "40": "forty", "105": "one hundred five",
		"2300": "two thousand three hundred", "999999": "nine hundred ninety nine thousand nine hundred ninety nine", "1000000": ""} {
		if got := spellNumber(digits); got != words {
			t.Errorf("spellNumber(%s) = %q, want %q", digits, got, words)
		}
	}
}

func TestGrammarErrors(t *testing.T) {
	if _, err := Grammar(json.RawMessage(`{"intents":[{"name":""}]}`), nil); !errors.Is(err, ErrInvalidConfig) {
		t.Errorf("invalid config: %v", err)
	}
	g, err := Grammar(demoIntents(t), &GrammarOptions{Known: func(string) bool { return false }})
	if err != nil || g != "" {
		t.Errorf("no word known: %q, %v; want an empty grammar", g, err)
	}
}
