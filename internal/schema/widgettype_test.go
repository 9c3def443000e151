package schema_test

import (
	"encoding/json"
	"strings"
	"testing"

	"github.com/convengine/engine/internal/schema"
)

func TestCheckWidget(t *testing.T) {
	for _, tc := range []struct{ name, schema, want string }{ // want "" means valid
		{"object", `{"type":"object","properties":{"title":{"type":"string","maxLength":40}}}`, ""},
		{"not an object", `{"type":"string"}`, `"type": "object"`},
		{"not JSON", `{`, `"type": "object"`},
		{"a type property", `{"type":"object","properties":{"type":{"type":"string"}}}`, "the engine sets it"},
		{"not a schema", `{"type":"object","properties":{"n":{"type":"number","minimum":"one"}}}`, "minimum"},
	} {
		t.Run(tc.name, func(t *testing.T) {
			var c schema.Cache
			err := c.CheckWidget(json.RawMessage(tc.schema))
			if (err == nil) != (tc.want == "") || (err != nil && !strings.Contains(err.Error(), tc.want)) {
				t.Fatalf("CheckWidget = %v, want %q", err, tc.want)
			}
		})
	}
}

// TestWidgetFields: a "type" member naming the widget's own type is dropped before the check;
// any other stays, and is checked.
func TestWidgetFields(t *testing.T) {
	var c schema.Cache
	s := json.RawMessage(`{"type":"object","properties":{"title":{"type":"string"}},"additionalProperties":false}`)
	for _, tc := range []struct{ name, args, want string }{ // want "" means refused
		{"fields", `{"title":"Hi"}`, `{"title":"Hi"}`},
		{"its own type", `{"type":"card","title":"Hi"}`, `{"title":"Hi"}`},
		{"another type", `{"type":"chart","title":"Hi"}`, ""},
		{"a type not a string", `{"type":1}`, ""},
	} {
		t.Run(tc.name, func(t *testing.T) {
			got, err := c.WidgetFields(s, json.RawMessage(tc.args), "card")
			if tc.want == "" {
				if err == nil {
					t.Fatalf("WidgetFields accepted %s", tc.args)
				}
				return
			}
			if err != nil || string(got) != tc.want {
				t.Fatalf("WidgetFields = %s, %v; want %s", got, err, tc.want)
			}
		})
	}
}

func TestCheckWidgetType(t *testing.T) {
	var c schema.Cache
	var seen schema.WidgetTypes
	obj := json.RawMessage(`{"type":"object"}`)
	for _, tc := range []struct{ typ, tool, schema, want string }{ // want "" means it joins
		{"card", "show_card", `{"type":"object"}`, ""},
		{"card", "show_card2", `{"type":"object"}`, "registered twice"},
		{"Card", "show_Card", `{"type":"object"}`, "lower-case"},
		{"stat", "show_stat2", `{"type":"object"}`, "built-in"},
		{"chart", "show_card", `{"type":"object"}`, "is taken"},
		{"chart", "show_stat", `{"type":"object"}`, "is taken"},
		{"chart", "show chart", `{"type":"object"}`, "not a valid name"},
		{"chart", "show_chart", `{"type":"string"}`, `"type": "object"`},
		{"chart", "show_chart", string(obj), ""},
	} {
		err := c.CheckWidgetType(&seen, tc.typ, tc.tool, json.RawMessage(tc.schema))
		if (err == nil) != (tc.want == "") || (err != nil && !strings.Contains(err.Error(), tc.want)) {
			t.Errorf("%s %s: %v, want %q", tc.typ, tc.tool, err, tc.want)
		}
	}
}
