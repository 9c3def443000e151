package schema

import (
	"encoding/json"
	"strings"
	"testing"
)

func TestValidateArguments(t *testing.T) {
	const transfer = `{"type":"object","properties":{"amount":{"type":"number","exclusiveMinimum":0,"maximum":10000},
		"to":{"type":"string","minLength":1},"currency":{"enum":["USD"]}},"required":["amount","to"],"additionalProperties":false}`
	cases := []struct {
		name, schema, args, want string // want "" means valid
	}{
		{"valid", transfer, `{"amount":20,"to":"Alex"}`, ""},
		{"missing", transfer, `{"to":"Alex"}`, "amount"},
		{"zero amount", transfer, `{"amount":0,"to":"Alex"}`, "exclusiveMinimum"},
		{"too much", transfer, `{"amount":10000.01,"to":"Alex"}`, "maximum"},
		{"wrong type", transfer, `{"amount":"20","to":"Alex"}`, "type"},
		{"extra argument", transfer, `{"amount":1,"to":"Alex","memo":"x"}`, "memo"},
		{"enum", transfer, `{"amount":1,"to":"Alex","currency":"EUR"}`, "enum"},
		{"not an object", transfer, `[1]`, "must be a JSON object"},
		{"not json", transfer, `{"amount":`, "not valid JSON"},
		{"trailing data", transfer, `{"amount":1,"to":"A"} {}`, "not valid JSON"},
		{"empty schema", ``, `{"anything":true}`, ""},
		{"integer", `{"type":"object","properties":{"limit":{"type":"integer"}}}`, `{"limit":2.5}`, "type"},
		{"remote ref is not fetched", `{"$ref":"https://example.com/schema.json"}`, `{}`, "schema"},
		{"unknown type never validates", `{"type":"thing"}`, `{}`, "want \"thing\""},
	}
	var cache Cache
	for _, tc := range cases {
		t.Run(tc.name, func(t *testing.T) {
			err := cache.Check(json.RawMessage(tc.schema), json.RawMessage(tc.args))
			switch {
			case tc.want == "" && err != nil:
				t.Fatalf("rejected: %v", err)
			case tc.want != "" && (err == nil || !strings.Contains(err.Error(), tc.want)):
				t.Fatalf("err = %v, want it to mention %q", err, tc.want)
			}
		})
	}
}

// TestErrorsDoNotQuoteTheValue: an error says which rule a value broke and where, never the
// value, which may be a card number: it reaches the model and the engine's log.
func TestErrorsDoNotQuoteTheValue(t *testing.T) {
	const card = "4111 1111 1111 1111"
	cases := []struct{ schema, args, want string }{
		{`{"type":"object","properties":{"n":{"type":"string","pattern":"^x$"}}}`, `{"n":"` + card + `"}`, "validating /properties/n: pattern: the value does not match"},
		{`{"type":"object","properties":{"n":{"type":"string","maxLength":4}}}`, `{"n":"` + card + `"}`, "maxLength: the value has"},
		{`{"type":"object","properties":{"n":{"type":"string","minLength":40}}}`, `{"n":"` + card + `"}`, "minLength: the value has"},
		{`{"type":"object","properties":{"n":{"type":"number"}}}`, `{"n":"` + card + `"}`, `type: the value has type "string", want "number"`},
		{`{"type":"object","properties":{"n":{"enum":["a","b"]}}}`, `{"n":"` + card + `"}`, "enum: the value does not equal any of: [a b]"},
		{`{"type":"object","properties":{"n":{"const":"a"}}}`, `{"n":"` + card + `"}`, "const: the value does not equal a"},
		{`{"type":"object","properties":{"n":{"type":"number","maximum":10}}}`, `{"n":4111111111111111}`, "maximum: the value is greater than"},
		{`{"type":"object","properties":{"n":{"type":"number","multipleOf":7}}}`, `{"n":4111111111111111}`, "multipleOf: the value is not a multiple"},
		{`{"type":"object","properties":{"n":{"type":"array","contains":{"type":"number"}}}}`, `{"n":["` + card + `"]}`, "contains: the array does not have an item"},
	}
	var cache Cache
	for _, tc := range cases {
		err := cache.Check(json.RawMessage(tc.schema), json.RawMessage(tc.args))
		if err == nil || strings.Contains(err.Error(), "4111") || !strings.Contains(err.Error(), tc.want) {
			t.Errorf("%s with %s: %v, want it to say %q without the value", tc.schema, tc.args, err, tc.want)
		}
	}
}
