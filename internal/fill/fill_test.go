package fill

import (
	"encoding/json"
	"testing"
)

func TestArgs(t *testing.T) {
	var args map[string]any
	dec := `{"amount":1234.5,"to":"Alex","n":-2000000,"ok":true,"tags":["a"],"result":{"balance":"$10.00","cents":7}}`
	if err := json.Unmarshal([]byte(dec), &args); err != nil {
		t.Fatal(err)
	}
	for _, tc := range []struct{ in, want string }{
		{"Send ${amount|money} to {to}?", "Send $1,234.50 to Alex?"},
		{"{n|money} {n}", "-2,000,000.00 -2000000"},
		{"New balance {result.balance}, {result.cents|money}", "New balance $10.00, 7.00"},
		{"{missing}{result.missing.deeper}|", "|"},
		{"{ok} {tags}", `true ["a"]`},
		{"no placeholders", "no placeholders"},
		{"unclosed {to", "unclosed {to"},
	} {
		if got := Args(tc.in, args); got != tc.want {
			t.Errorf("Args(%q) = %q, want %q", tc.in, got, tc.want)
		}
	}
}
