package engine_test

import (
	"context"
	"encoding/json"
	"errors"
	"strings"
	"testing"

	"github.com/getkin/kin-openapi/openapi3"

	"github.com/convengine/engine"
	"github.com/convengine/engine/enginetest"
	"github.com/convengine/engine/examples/demobank"
)

// TestHostWidgets: a host's widget type is a UI tool for the model; a call that matches its
// schema is a widget of the spec, one that does not is dropped and the model told why.
func TestHostWidgets(t *testing.T) {
	var results []string
	model := modelFunc(func(_ context.Context, req *engine.ModelRequest) []engine.ModelEvent {
		if enginetest.StepOf(req.Messages) == 0 {
			var offered bool
			for _, s := range req.Tools {
				offered = offered || (s.Name == "show_card" && s.Kind == engine.ToolUI)
			}
			if !offered {
				return enginetest.Text("show_card was not offered.")
			}
			return []engine.ModelEvent{
				engine.TextEvent("Here is your card."),
				call("1", "show_card", `{"type":"card","title":"Everyday Debit","number":"•••• 4242","status":"active"}`),
				call("2", "show_card", `{"title":"Leaky","number":"4111 1111 1111 1111","status":"active"}`),
				call("3", "show_card", `{"title":"Odd","number":"•••• 1234","status":"lost"}`),
			}
		}
		for _, m := range req.Messages {
			if m.Role == engine.RoleTool {
				results = append(results, m.Content)
			}
		}
		return nil
	})
	h := newHarness(t, engine.Config{Model: model, Widgets: []engine.WidgetType{demobank.CardWidget}})
	evs, p := inProcess(t, h.engine, &engine.Caller{EngineKey: testKey, UserToken: testToken}, &engine.TurnInput{Transcript: "my card"})
	if p != nil {
		t.Fatal(p)
	}
	spec := evs[len(evs)-1].Spec
	if len(spec.Widgets) != 1 {
		t.Fatalf("spec %+v", spec)
	}
	data, _ := json.Marshal(spec.Widgets[0])
	if string(data) != `{"type":"card","number":"•••• 4242","status":"active","title":"Everyday Debit"}` &&
		string(data) != `{"type":"card","title":"Everyday Debit","number":"•••• 4242","status":"active"}` {
		t.Errorf("the card widget: %s", data)
	}
	if strings.Contains(evs[len(evs)-1].Spec.Speak, "4111") {
		t.Error("the full card number reached the spec")
	}
	if len(results) != 3 || results[0] != `{"shown":true}` || !strings.Contains(results[1], "invalid_widget") ||
		!strings.Contains(results[1], "number") || !strings.Contains(results[2], "invalid_widget") {
		t.Errorf("the model was told %q", results)
	}
	var widgetEvents int
	for _, ev := range evs {
		if ev.Type == engine.EventWidget {
			widgetEvents++
		}
	}
	if widgetEvents != 1 {
		t.Errorf("%d widget events", widgetEvents)
	}
}

func TestHostWidgetConfigErrors(t *testing.T) {
	schema := json.RawMessage(`{"type":"object","properties":{"title":{"type":"string"}}}`)
	for name, tc := range map[string]struct {
		types []engine.WidgetType
		want  string
	}{
		"built-in type":   {[]engine.WidgetType{{Type: "stat", Schema: schema}}, "not a built-in type"},
		"bad type":        {[]engine.WidgetType{{Type: "Card!", Schema: schema}}, "lower-case"},
		"twice":           {[]engine.WidgetType{{Type: "card", Schema: schema}, {Type: "card", Tool: "show_card2", Schema: schema}}, "registered twice"},
		"taken tool":      {[]engine.WidgetType{{Type: "card", Tool: "show_stat", Schema: schema}}, "taken"},
		"not an object":   {[]engine.WidgetType{{Type: "card", Schema: json.RawMessage(`{"type":"string"}`)}}, `"type": "object"`},
		"type property":   {[]engine.WidgetType{{Type: "card", Schema: json.RawMessage(`{"type":"object","properties":{"type":{"type":"string"}}}`)}}, "engine sets it"},
		"broken schema":   {[]engine.WidgetType{{Type: "card", Schema: json.RawMessage(`{"type":"object","properties":{"a":{"$ref":"http://evil/x"}}}`)}}, "card"},
		"not JSON at all": {[]engine.WidgetType{{Type: "card", Schema: json.RawMessage(`nope`)}}, `"type": "object"`},
	} {
		t.Run(name, func(t *testing.T) {
			_, err := engine.New(engine.Config{Tenants: mustTenants(t), Model: modelSeq(func(func(engine.ModelEvent, error) bool) {}),
				SigningKey: testSigningKey, Widgets: tc.types})
			if !errors.Is(err, engine.ErrConfig) || !strings.Contains(err.Error(), tc.want) {
				t.Errorf("New: %v, want %q", err, tc.want)
			}
		})
	}
}

func mustTenants(t *testing.T) engine.TenantStore {
	s, err := engine.NewStaticTenants(testTenant())
	if err != nil {
		t.Fatal(err)
	}
	return s
}

// TestOpenAPIWithHostWidgets: the engine's OpenAPI document names the host's widget types
// among a spec's widgets, and stays a valid document.
func TestOpenAPIWithHostWidgets(t *testing.T) {
	h := newHarness(t, engine.Config{Model: modelSeq(func(func(engine.ModelEvent, error) bool) {}),
		Widgets: []engine.WidgetType{demobank.CardWidget}})
	raw, err := h.engine.OpenAPI()
	if err != nil {
		t.Fatal(err)
	}
	doc, err := openapi3.NewLoader().LoadFromData(raw)
	if err != nil {
		t.Fatal(err)
	}
	if err := doc.Validate(t.Context()); err != nil {
		t.Fatalf("the extended document is not valid: %v", err)
	}
	card := doc.Components.Schemas["CardWidget"]
	if card == nil || card.Value.Properties["type"] == nil || card.Value.Properties["number"] == nil {
		t.Fatalf("CardWidget: %+v", card)
	}
	var refs []string
	for _, s := range doc.Components.Schemas["Widget"].Value.OneOf {
		refs = append(refs, s.Ref)
	}
	if !strings.Contains(strings.Join(refs, " "), "#/components/schemas/CardWidget") {
		t.Errorf("Widget.oneOf: %v", refs)
	}
	// A card with a whole number does not match the published schema.
	bad := map[string]any{"type": "card", "title": "x", "number": "4111 1111 1111 1111", "status": "active"}
	if err := card.Value.VisitJSON(bad); err == nil {
		t.Error("the published schema takes a whole card number")
	}
	good := map[string]any{"type": "card", "title": "x", "number": "•••• 4242", "status": "active"}
	if err := card.Value.VisitJSON(good); err != nil {
		t.Errorf("the published schema refuses a good card: %v", err)
	}
}
