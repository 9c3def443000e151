package demobank_test

import (
	"encoding/json"
	"reflect"
	"testing"
	"time"

	"github.com/convengine/engine/examples/demobank"
	"github.com/convengine/engine/httptools"
)

func TestToolsJSON(t *testing.T) {
	defs, err := httptools.Parse(demobank.ToolsJSON)
	if err != nil {
		t.Fatalf("Parse(ToolsJSON): %v", err)
	}
	// The schemas the contract sets, without their descriptions.
	want := []struct {
		name, method, path string
		action             bool
		schema             string
	}{
		{"get_balance", "GET", "/balance", false,
			`{"type":"object","properties":{"account":{"type":"string","enum":["checking","savings"]}},"additionalProperties":false}`},
		{"list_transactions", "GET", "/transactions", false,
			`{"type":"object","properties":{"limit":{"type":"integer","minimum":1,"maximum":20}},"additionalProperties":false}`},
		{"get_card", "GET", "/card", false,
			`{"type":"object","properties":{},"additionalProperties":false}`},
		{"get_savings_goal", "GET", "/goal", false,
			`{"type":"object","properties":{},"additionalProperties":false}`},
		{"transfer", "POST", "/transfers", true,
			`{"type":"object","properties":{
				"amount":{"type":"number","exclusiveMinimum":0,"maximum":10000},
				"to":{"type":"string","minLength":1,"maxLength":64,"enum":["Alex","Jordan","Sam","Taylor"]},
				"currency":{"type":"string","enum":["USD"]}},
			"required":["amount","to"],"additionalProperties":false}`},
	}
	if len(defs) != len(want) {
		t.Fatalf("%d tools, want %d", len(defs), len(want))
	}
	for i, w := range want {
		d := defs[i]
		t.Run(w.name, func(t *testing.T) {
			if d.Name != w.name || d.Method != w.method || d.Path != w.path || d.Action != w.action {
				t.Errorf("tool %s %s %s action=%v, want %s %s %s action=%v", d.Name, d.Method, d.Path, d.Action, w.name, w.method, w.path, w.action)
			}
			if d.Description == "" || d.Status == "" || time.Duration(d.Timeout) <= 0 {
				t.Errorf("tool %s lacks a description, a status or a timeout", d.Name)
			}
			var got, wantSchema any
			if err := json.Unmarshal(d.Parameters, &got); err != nil {
				t.Fatal(err)
			}
			if err := json.Unmarshal([]byte(w.schema), &wantSchema); err != nil {
				t.Fatal(err)
			}
			if got = withoutDescriptions(got); !reflect.DeepEqual(got, wantSchema) {
				t.Errorf("parameters\n%v\nwant\n%v", got, wantSchema)
			}
		})
	}
}

// withoutDescriptions returns the JSON value v without its "description" members.
func withoutDescriptions(v any) any {
	switch v := v.(type) {
	case map[string]any:
		out := make(map[string]any, len(v))
		for k, e := range v {
			if k != "description" {
				out[k] = withoutDescriptions(e)
			}
		}
		return out
	case []any:
		out := make([]any, len(v))
		for i, e := range v {
			out[i] = withoutDescriptions(e)
		}
		return out
	}
	return v
}
