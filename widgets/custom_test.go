package widgets_test

import (
	"encoding/json"
	"strings"
	"testing"

	"github.com/convengine/engine/widgets"
)

func TestCustom(t *testing.T) {
	c := widgets.Custom{Type: "card", Fields: json.RawMessage(`{ "title": "Debit",
		"number": "•••• 4242" }`)}
	if err := c.Validate(); err != nil {
		t.Fatal(err)
	}
	b, err := json.Marshal(c)
	if err != nil || string(b) != `{"type":"card","title":"Debit","number":"•••• 4242"}` {
		t.Fatalf("%s %v", b, err)
	}
	// A client decodes it as a widget of a type it does not know, and keeps all of it.
	w, err := widgets.Decode(b)
	if u, ok := w.(widgets.Unknown); err != nil || !ok || u.Type != "card" {
		t.Fatalf("decoded %#v %v", w, err)
	}
	for name, bad := range map[string]widgets.Custom{
		"built-in type":    {Type: "stat", Fields: json.RawMessage(`{}`)},
		"upper case":       {Type: "Card", Fields: json.RawMessage(`{}`)},
		"not an object":    {Type: "card", Fields: json.RawMessage(`[1]`)},
		"its own type":     {Type: "card", Fields: json.RawMessage(`{"type":"stat"}`)},
		"too large":        {Type: "card", Fields: json.RawMessage(`{"a":"` + strings.Repeat("x", widgets.MaxCustomBytes) + `"}`)},
		"invalid JSON":     {Type: "card", Fields: json.RawMessage(`{"a":}`)},
		"no fields at all": {Type: "card"},
	} {
		if err := bad.Validate(); err == nil {
			t.Errorf("%s: valid", name)
		}
	}
}

func TestText(t *testing.T) {
	unknown := func(s string) widgets.Widget {
		w, err := widgets.Decode([]byte(s))
		if err != nil {
			t.Fatal(err)
		}
		return w
	}
	many := make([]string, 0, 25)
	for i := range 25 {
		many = append(many, `"f`+string(rune('a'+i))+`":1`)
	}
	for _, tc := range []struct {
		w    widgets.Widget
		want string
	}{
		{widgets.Stat{Label: "Checking", Value: "$1.00", Delta: "+$1.00"}, "Checking: $1.00 (+$1.00)"},
		{widgets.List{Title: "Recent", Items: []widgets.ListItem{{Title: "Coffee", Subtitle: "Today", Trailing: "-$4.50"}}}, "Recent\n- Coffee, Today: -$4.50"},
		{widgets.Progress{Label: "Trip", Value: 0.655}, "Trip: 66%"},
		{unknown(`{"type":"loan_offer","rate":4.5,"fixed":true,"terms":[12,24],"lender":{"name":"Acme","rating":{"stars":5,"deep":{"x":1}}},"note":null}`),
			"Loan offer\nFixed: Yes\nLender:\n  Name: Acme\n  Rating:\n    Deep: …\n    Stars: 5\nRate: 4.5\nTerms: 12, 24"},
		{unknown(`{"type":"card","label":"Debit","number":"•••• 4242"}`), "Debit\nNumber: •••• 4242"},
		{unknown(`{"type":"chart","points":[{"x":1},{"x":2}]}`), "Chart\nPoints:\n  X: 1\n  X: 2"},
	} {
		if got := widgets.Text(tc.w); got != tc.want {
			t.Errorf("%s:\n%s\nwant\n%s", tc.w.WidgetType(), got, tc.want)
		}
	}
	wide := widgets.Text(unknown(`{"type":"wide",` + strings.Join(many, ",") + `}`))
	if n := strings.Count(wide, "\n"); n != 21 || !strings.HasSuffix(wide, "…") {
		t.Errorf("25 fields: %d lines\n%s", n, wide)
	}
}

func TestHumanize(t *testing.T) {
	for in, want := range map[string]string{"loan_offer": "Loan offer", "loanOffer": "Loan offer", "card": "Card", "": "", "APR": "Apr", "monthlyAPR": "Monthly apr"} {
		if got := widgets.Humanize(in); got != want {
			t.Errorf("Humanize(%q) = %q, want %q", in, got, want)
		}
	}
}
