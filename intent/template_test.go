package intent

import (
	"encoding/json"
	"strings"
	"testing"
)

func TestTemplateRender(t *testing.T) {
	var results any
	if err := json.Unmarshal([]byte(`{"get_balance":`+balanceResult+`,"list_transactions":`+transactionsResult+`,"get_savings_goal":`+goalResult+`}`), &results); err != nil {
		t.Fatal(err)
	}
	root := map[string]any{
		"slots":   map[string]any{"amount": 1234.5, "to": "Alex", "small": -4.0, "ratio": "0.25"},
		"results": results,
		"error":   map[string]any{"tool": "get_balance", "error": "tool_unavailable", "message": "down"},
	}
	cases := []struct {
		tmpl, want string
	}{
		{"plain text", "plain text"},
		{"Your balance is {results.get_balance.formatted}.", "Your balance is $1,234.56."},
		{"{results.get_savings_goal.name}: {results.get_savings_goal.percent}", "Trip to Lisbon: 65%"},
		{"first {results.list_transactions.transactions.0.merchant}", "first Blue Bottle Coffee"},
		{"sixth {results.list_transactions.transactions.5.formatted}", "sixth -$40.00"},
		{"none {results.list_transactions.transactions.9.formatted} here", "none here"},
		{"{slots.amount}", "1234.5"},
		{"${slots.amount|money}", "$1,234.50"},
		{"{slots.amount|money:€}", "€1,234.50"},
		{"{slots.small|money}", "-4.00"},
		{"{slots.small|money:$}", "-$4.00"},
		{"{results.get_balance.balance|number}", "1,234.56"},
		{"{results.get_savings_goal.progress|percent}", "65%"},
		{"{slots.ratio|percent}", "25%"},
		{"{slots.to|upper} {slots.to|lower}", "ALEX alex"},
		{"{results.get_balance.account|title}", "Checking"},
		{"{slots.missing|default:someone}", "someone"},
		{"{slots.to|default:someone}", "Alex"},
		{"{ slots.to }", "Alex"},
		{"{results.get_balance}", ""},
		{"{{literal}} and }} alone }", "{literal} and } alone }"},
		{"{error.message} ({error.tool})", "down (get_balance)"},
		{"  spaced   {slots.missing}  out ", "spaced out"},
	}
	for _, tc := range cases {
		t.Run(tc.tmpl, func(t *testing.T) {
			tm, err := parseTemplate(tc.tmpl)
			if err != nil {
				t.Fatal(err)
			}
			if got := tm.render(scope{root: root}); got != tc.want {
				t.Errorf("render = %q, want %q", got, tc.want)
			}
		})
	}
}

func TestTemplateValue(t *testing.T) {
	root := map[string]any{"slots": map[string]any{"amount": 20.0, "to": "Alex"}}
	cases := []struct {
		tmpl string
		want any
		ok   bool
	}{
		{"{slots.amount}", 20.0, true},
		{"{slots.to}", "Alex", true},
		{"{slots.amount|money}", "20.00", true},
		{"to {slots.to}", "to Alex", true},
		{"{slots.missing}", nil, false},
	}
	for _, tc := range cases {
		t.Run(tc.tmpl, func(t *testing.T) {
			tm, err := parseTemplate(tc.tmpl)
			if err != nil {
				t.Fatal(err)
			}
			if got, ok := tm.value(scope{root: root}); got != tc.want || ok != tc.ok {
				t.Errorf("value = %#v, %v; want %#v, %v", got, ok, tc.want, tc.ok)
			}
		})
	}
}

func TestTemplateErrors(t *testing.T) {
	r := refs{slots: map[string]*slot{"to": {name: "to"}}, tools: map[string]bool{"get_balance": true}}
	cases := []struct {
		tmpl, want string
	}{
		{"Hi {slots.to", "unclosed placeholder"},
		{"{}", "empty placeholder"},
		{"{slots..to}", "is not a path"},
		{"{slots.to|shout}", `unknown filter "shout"`},
		{"{slots.from}", `the intent has no slot "from"`},
		{"{results.get_goal.name}", `the intent does not call tool "get_goal"`},
		{"{user.name}", "paths are slots.<slot>"},
		{"{slots}", "paths are slots.<slot>"},
	}
	for _, tc := range cases {
		t.Run(tc.tmpl, func(t *testing.T) {
			_, err := compileText(tc.tmpl, r)
			if err == nil || !strings.Contains(err.Error(), tc.want) {
				t.Errorf("compileText(%q) = %v, want an error containing %q", tc.tmpl, err, tc.want)
			}
		})
	}
}
