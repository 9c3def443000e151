package intent

import (
	"encoding/json"
	"reflect"
	"strings"
	"testing"
	"time"
)

func TestFindAmount(t *testing.T) {
	cases := []struct {
		in   string
		want float64
		ok   bool
	}{
		{"20", 20, true},
		{"$20", 20, true},
		{"$20.", 20, true},
		{"20 dollars", 20, true},
		{"20.50", 20.5, true},
		{"pay Sam 15.50", 15.5, true},
		{"$1,234.56", 1234.56, true},
		{"20,50 €", 20.5, true},
		{"twenty", 20, true},
		{"fifteen", 15, true},
		{"twenty-five bucks", 25, true},
		{"twenty five", 25, true},
		{"one hundred and five", 105, true},
		{"a hundred dollars", 100, true},
		{"two thousand three hundred and forty", 2340, true},
		{"twelve thousand", 12000, true},
		{"fifteen dollars and fifty cents", 15.5, true},
		{"20 dollars 5 cents", 20.05, true},
		{"50 cents", 0.5, true},
		{"١٥٠ دولار", 150, true},
		{"veinte dólares", 20, true},
		{"veinte dolares", 20, true},
		{"treinta y cinco dólares", 35, true},
		{"veintidós", 22, true},
		{"veintidos", 22, true},
		{"ciento cincuenta", 150, true},
		{"doscientos cincuenta dólares", 250, true},
		{"quinientos", 500, true},
		{"mil doscientos", 1200, true},
		{"dos mil", 2000, true},
		{"veinte dólares con cincuenta centavos", 20.5, true},
		{"doce dólares y cinco centavos", 12.05, true},
		{"noventa y nueve centavos", 0.99, true},
		// "once" is English too, and "una" an article: neither is read as a number.
		{"pay alex once", 0, false},
		{"una transferencia de 20 dólares", 20, true},
		{"veinte dólares con ciento cincuenta centavos", 0, false},
		// Money is never guessed: finer than a cent, or a hundred cents or more after dollars.
		{"19.999", 0, false},
		{"0.004", 0, false},
		{"twenty three dollars and four hundred and thirty four cents", 0, false},
		{"twenty dollars and a hundred cents", 0, false},
		{"12.5 dollars and 50 cents", 0, false},
		{"four hundred cents", 0, false},
		{"ninety nine cents", 0.99, true},
		{"on 2026-11-20", 0, false},
		{"hundred thousand", 100000, true},
		{"thousand hundred", 1000, true},
		{strings.Repeat("hundred ", 50), 100, true},
		{strings.Repeat("9", 40), 0, false},
		{"NaN", 0, false},
		{"some money", 0, false},
		{"", 0, false},
	}
	for _, tc := range cases {
		t.Run(tc.in, func(t *testing.T) {
			got, ok := findAmount(tc.in)
			if got != tc.want || ok != tc.ok {
				t.Errorf("findAmount(%q) = %v, %v; want %v, %v", tc.in, got, ok, tc.want, tc.ok)
			}
		})
	}
}

func TestFindNumber(t *testing.T) {
	cases := []struct {
		in   string
		want float64
		ok   bool
	}{
		{"show my last 3 transactions", 3, true},
		{"the last ten", 10, true},
		{"fifteen fifty", 15, true},
		{"zero", 0, true},
		{"1.5", 1.5, true},
		{"and", 0, false},
		{"a few", 0, false},
	}
	for _, tc := range cases {
		t.Run(tc.in, func(t *testing.T) {
			got, ok := findNumber(tc.in)
			if got != tc.want || ok != tc.ok {
				t.Errorf("findNumber(%q) = %v, %v; want %v, %v", tc.in, got, ok, tc.want, tc.ok)
			}
		})
	}
}

func TestFindDate(t *testing.T) {
	now := fixedNow() // Friday 2026-11-20
	cases := []struct {
		in, want string
	}{
		{"today", "2026-11-20"},
		{"what did I spend yesterday", "2026-11-19"},
		{"tomorrow", "2026-11-21"},
		{"on 2026-02-03.", "2026-02-03"},
		{"on friday", "2026-11-20"},
		{"last Monday", "2026-11-16"},
		{"saturday", "2026-11-14"},
		{"ayer", "2026-11-19"},
		{"el miércoles", "2026-11-18"},
		{"أمس", "2026-11-19"},
		{"الأحد", "2026-11-15"},
		{"2026-02-30", ""},
		{"someday", ""},
	}
	for _, tc := range cases {
		t.Run(tc.in, func(t *testing.T) {
			got, ok := findDate(tc.in, now)
			if got != tc.want || ok != (tc.want != "") {
				t.Errorf("findDate(%q) = %q, %v; want %q", tc.in, got, ok, tc.want)
			}
		})
	}
	t.Run("midnight", func(t *testing.T) {
		late := time.Date(2026, time.March, 1, 0, 5, 0, 0, time.UTC) // a Sunday
		if got, _ := findDate("yesterday", late); got != "2026-02-28" {
			t.Errorf("yesterday = %q, want 2026-02-28", got)
		}
	})
}

// slotConfig has one intent per slot type, reached by patterns and by free text.
const slotConfig = `{
  "fallback": "other",
  "intents": [
    {"name": "pay", "patterns": ["^pay (?P<to>\\S+)(?: (?P<amount>.+))?$"],
     "slots": {"to": {"type": "name"}, "amount": {"type": "amount"}},
     "responses": {"en": {"speak": "ok"}}},
    {"name": "payee", "patterns": ["^give (?P<to>.+)$"], "examples": ["give money to a friend"],
     "slots": {"to": {"type": "name", "values": ["Alex", "Jordan"], "synonyms": {"Alex": ["my brother"]}}},
     "responses": {"en": {"speak": "ok"}}},
    {"name": "spent", "examples": ["what did I spend", "spending on a day"],
     "slots": {"day": {"type": "date"}, "limit": {"type": "number"}},
     "responses": {"en": {"speak": "ok"}}},
    {"name": "balance", "examples": ["account balance"],
     "slots": {"account": {"type": "enum", "values": ["checking", "savings"], "synonyms": {"savings": ["rainy day fund"]}}},
     "responses": {"en": {"speak": "ok"}}},
    {"name": "other", "responses": {"en": {"speak": "?"}}}
  ]
}`

func TestSlots(t *testing.T) {
	cfg, err := Compile(json.RawMessage(slotConfig))
	if err != nil {
		t.Fatal(err)
	}
	cases := []struct {
		text, intent string
		slots        map[string]any
	}{
		{"pay alex 20", "pay", map[string]any{"to": "Alex", "amount": 20.0}},
		{"pay ÉMILE twenty dollars", "pay", map[string]any{"to": "Émile", "amount": 20.0}},
		{"pay o'brien", "pay", map[string]any{"to": "O'brien"}},
		{"give JORDAN", "payee", map[string]any{"to": "Jordan"}},
		{"give my brother", "payee", map[string]any{"to": "Alex"}},
		{"give bob", "payee", map[string]any{}},
		{"give money to jordan please", "payee", map[string]any{"to": "Jordan"}},
		{"what did I spend yesterday", "spent", map[string]any{"day": "2026-11-19"}},
		{"what did I spend on 2026-11-02, top 3", "spent", map[string]any{"day": "2026-11-02", "limit": 3.0}},
		{"what did I spend on monday, top three", "spent", map[string]any{"day": "2026-11-16", "limit": 3.0}},
		{"what's my savings account balance", "balance", map[string]any{"account": "savings"}},
		{"account balance in my Rainy Day Fund", "balance", map[string]any{"account": "savings"}},
		{"account balance", "balance", map[string]any{}},
	}
	for _, tc := range cases {
		t.Run(tc.text, func(t *testing.T) {
			m := cfg.Match(tc.text, fixedNow())
			if m.Intent != tc.intent || !reflect.DeepEqual(m.Slots, tc.slots) {
				t.Errorf("Match(%q) = %s %v, want %s %v", tc.text, m.Intent, m.Slots, tc.intent, tc.slots)
			}
		})
	}
}

func TestNumberWords(t *testing.T) {
	for in, want := range map[string]string{
		"send twenty five dollars to alex":         "twenty five",
		"Pay Taylor Eleven":                        "eleven",
		"what is my balance":                       "",
		"two thousand three hundred to jordan ten": "two thousand three hundred ten",
	} {
		if got := strings.Join(NumberWords(in), " "); got != want {
			t.Errorf("NumberWords(%q) = %q, want %q", in, got, want)
		}
	}
}

func TestWithoutAmounts(t *testing.T) {
	for in, want := range map[string]string{
		"send twenty five dollars to alex":              "send money to alex",
		"Pay Taylor Eleven":                             "pay taylor money",
		"send twelve dollars and fifty cents to jordan": "send money to jordan",
		"give one hundred and five dollars to sam":      "give money to sam",
		"send twenty point five to alex":                "send money to alex",
		"pay alex thirty two dollars and send ten":      "pay alex money and send money",
		"what is my balance":                            "",
		"send money to alex":                            "",
	} {
		if got := WithoutAmounts(in); got != want {
			t.Errorf("WithoutAmounts(%q) = %q, want %q", in, got, want)
		}
	}
}
