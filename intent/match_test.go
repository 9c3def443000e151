package intent

import (
	"reflect"
	"testing"
)

func TestMatch(t *testing.T) {
	cfg, err := Compile(demoIntents(t))
	if err != nil {
		t.Fatal(err)
	}
	cases := []struct {
		text, intent string
		slots        map[string]any
	}{
		// Close variants of the examples.
		{"what's my balance", "balance", nil},
		{"Whats my balence??", "balance", nil},
		{"how much money do I have", "balance", nil},
		{"How much money have I got", "balance", nil},
		{"balance please", "balance", nil},
		{"my account balance", "balance", nil},
		{"what is my checking balance", "balance", map[string]any{"account": "checking"}},
		{"show me my recent transactions", "transactions", nil},
		{"show my latest transactions please", "transactions", nil},
		{"what did I spend recently", "transactions", nil},
		{"what have I been spending on recently", "transactions", nil},
		{"how am I doing on my savings goal", "savings_goal", nil},
		{"how is my savings goal going", "savings_goal", nil},
		{"send $20 to Alex", "transfer", map[string]any{"amount": 20.0, "to": "Alex"}},
		{"transfer twenty dollars to jordan", "transfer", map[string]any{"amount": 20.0, "to": "Jordan"}},
		{"pay Sam 15.50", "transfer", map[string]any{"amount": 15.5, "to": "Sam"}},
		{"Please send 1,250 dollars to TAYLOR.", "transfer", map[string]any{"amount": 1250.0, "to": "Taylor"}},
		{"send money to alex", "transfer", map[string]any{"to": "Alex"}},
		{"¿cuál es mi saldo?", "balance", nil},
		{"Mi saldo de ahorros", "balance", map[string]any{"account": "savings"}},
		{"envía 20 dólares a jordan", "transfer", map[string]any{"amount": 20.0, "to": "Jordan"}},
		{"ما هو رصيدي", "balance", nil},
		{"help", "help", nil},
		{"What can you do for me?", "help", nil},
		// Nothing close: the fallback.
		{"what's the weather tomorrow", "help", nil},
		{"tell me a joke", "help", nil},
		{"book a flight to Paris", "help", nil},
		{"hello", "help", nil},
		{"", "help", nil},
		{"!!!", "help", nil},
	}
	for _, tc := range cases {
		t.Run(tc.text, func(t *testing.T) {
			m := cfg.Match(tc.text, fixedNow())
			if tc.slots == nil {
				tc.slots = map[string]any{}
			}
			if m.Intent != tc.intent || !reflect.DeepEqual(m.Slots, tc.slots) {
				t.Errorf("Match(%q) = %s %v (score %.2f), want %s %v", tc.text, m.Intent, m.Slots, m.Score, tc.intent, tc.slots)
			}
		})
	}
}

func TestMatchScores(t *testing.T) {
	cfg, err := Compile(demoIntents(t))
	if err != nil {
		t.Fatal(err)
	}
	if m := cfg.Match("what's my balance", fixedNow()); m.Score != 1 {
		t.Errorf("an example itself scores %v, want 1", m.Score)
	}
	if m := cfg.Match("pay Sam 15.50", fixedNow()); m.Score != 1 {
		t.Errorf("a pattern match scores %v, want 1", m.Score)
	}
	if m := cfg.Match("tell me a joke", fixedNow()); m.Score >= cfg.threshold {
		t.Errorf("an unrelated phrase scores %v, want below the threshold %v", m.Score, cfg.threshold)
	}
	// Stop words count a little: the content word decides.
	a, b := cfg.Match("balance", fixedNow()), cfg.Match("what is my", fixedNow())
	if a.Intent != "balance" || b.Score >= cfg.threshold {
		t.Errorf(`"balance" gave %s %.2f and "what is my" %s %.2f; want the content word to decide`, a.Intent, a.Score, b.Intent, b.Score)
	}
}
