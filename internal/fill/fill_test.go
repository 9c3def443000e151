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

func TestReply(t *testing.T) {
	cp := Copy{Title: "Sent {amount|money}", Line1: " to {to} ", Line2: "{result.ref}", Speak: "Done, {result.ref}."}
	args := []byte(`{"amount":12.5,"to":"Alex"}`)
	for _, tc := range []struct {
		result   string
		declined bool
		typ      string
		want     Copy
	}{
		{`{"ref":"R-1"}`, false, "success", Copy{"Sent 12.50", "to Alex", "R-1", "Done, R-1."}},
		{`{"card":{"title":"Paid","line1":"a","line2":"b"},"speak":"Paid."}`, false, "success", Copy{"Paid", "a", "b", "Paid."}},
		{`{"card":{"title":"No","line1":"over the limit"}}`, true, "error", Copy{"No", "over the limit", "", ""}},
		{`{"card":{"title":""},"ref":"R-2"}`, false, "success", Copy{"Sent 12.50", "to Alex", "R-2", "Done, R-2."}},
		{`{"card":{"title":7}}`, true, "error", Copy{"Sent 12.50", "to Alex", "", "Done, ."}},
	} {
		typ, got := Reply([]byte(tc.result), args, tc.declined, cp)
		if typ != tc.typ || got != tc.want {
			t.Errorf("%s: %s %+v, want %s %+v", tc.result, typ, got, tc.typ, tc.want)
		}
	}
}
