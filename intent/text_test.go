package intent

import (
	"slices"
	"testing"
)

func TestTokens(t *testing.T) {
	cases := []struct {
		in   string
		want []string
	}{
		{"What's my balance?", []string{"what", "is", "my", "balance"}},
		{"I don't have it", []string{"i", "do", "not", "have", "it"}},
		{"can't, won't, let's", []string{"can", "not", "will", "not", "let", "us"}},
		{"Alex's account", []string{"alex", "account"}},
		{"I’m here", []string{"i", "am", "here"}},
		{"Recent TRANSACTIONS", []string{"recent", "transaction"}},
		{"activities and boxes, glass and bus", []string{"activity", "and", "box", "glass", "and", "bus"}},
		{"send $20.50 to alex", []string{"send", "#", "to", "alex"}},
		{"one hundred and five dollars", []string{"#", "dollar"}},
		{"1,234 and 5", []string{"#"}},
		{"¿Cuánto dinero tengo?", []string{"cuanto", "dinero", "tengo"}},
		{"Muéstrame mis últimos movimientos", []string{"muestrame", "mis", "ultimo", "movimiento"}},
		{"ما هو رَصِيدي؟", []string{"ما", "هو", "رصيدي"}},
		{"أمس", []string{"امس"}},
		{"  ...  ", nil},
	}
	for _, tc := range cases {
		t.Run(tc.in, func(t *testing.T) {
			if got := tokens(tc.in); !slices.Equal(got, tc.want) {
				t.Errorf("tokens(%q) = %q, want %q", tc.in, got, tc.want)
			}
		})
	}
}

func TestTokenSimilarity(t *testing.T) {
	cases := []struct {
		a, b string
		want float64
	}{
		{"balance", "balance", 1},
		{"balence", "balance", 0.8},
		{"balanc", "balance", 0.8},
		{"recent", "recently", 0.7},
		{"spend", "spending", 0.7},
		{"my", "me", 0},
		{"send", "spend", 0},
		{"sent", "rent", 0},
		{"saved", "save", 0.7},
		{"cat", "cats", 0},
		{"#", "#", 1},
		{"transfer", "transaction", 0},
	}
	for _, tc := range cases {
		t.Run(tc.a+"/"+tc.b, func(t *testing.T) {
			if got := tokenSimilarity(tc.a, tc.b); got != tc.want {
				t.Errorf("tokenSimilarity(%q, %q) = %v, want %v", tc.a, tc.b, got, tc.want)
			}
		})
	}
}
