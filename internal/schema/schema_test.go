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
