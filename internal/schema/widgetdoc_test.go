package schema_test

import (
	"bytes"
	"context"
	"encoding/json"
	"strings"
	"testing"

	"github.com/getkin/kin-openapi/openapi3"
	"sigs.k8s.io/yaml"

	"github.com/convengine/engine/docs"
	"github.com/convengine/engine/internal/schema"
)

var loanOffer = schema.Widget{
	Type:        "loan_offer",
	Description: "A loan the bank offers.",
	Schema:      json.RawMessage(`{"type":"object","required":["amount"],"properties":{"amount":{"type":"number"},"rate":{"type":"number"}}}`),
}

func schemas(t *testing.T, doc []byte) map[string]any {
	t.Helper()
	raw, err := yaml.YAMLToJSON(doc)
	if err != nil {
		t.Fatal(err)
	}
	var m struct {
		Components struct{ Schemas map[string]any }
	}
	if err := json.Unmarshal(raw, &m); err != nil {
		t.Fatal(err)
	}
	return m.Components.Schemas
}

func refs(widget any) []string {
	var out []string
	for _, r := range widget.(map[string]any)["oneOf"].([]any) {
		out = append(out, r.(map[string]any)["$ref"].(string))
	}
	return out
}

// TestAddWidgets: the host's widget is a schema named after its type, its type a const and required,
// among the Widget oneOf after the engine's own, by type; the rest of the document is unchanged.
func TestAddWidgets(t *testing.T) {
	orig := bytes.Clone(docs.OpenAPI)
	before := schemas(t, docs.OpenAPI)
	withDesc := loanOffer
	withDesc.Type, withDesc.Description = "card", "ignored: the schema has its own"
	withDesc.Schema = json.RawMessage(`{"type":"object","description":"A card.","properties":{"title":{"type":"string"}}}`)
	noProps := schema.Widget{Type: "divider", Schema: json.RawMessage(`{"type":"object"}`)}

	out, err := schema.AddWidgets(docs.OpenAPI, []schema.Widget{loanOffer, withDesc, noProps})
	if err != nil {
		t.Fatal(err)
	}
	if !bytes.Equal(docs.OpenAPI, orig) {
		t.Fatal("Add changed the document it was given")
	}
	after := schemas(t, out)

	// The host's widgets follow the engine's in the order of their types.
	wantRefs := append(refs(before["Widget"]), "#/components/schemas/CardWidget",
		"#/components/schemas/DividerWidget", "#/components/schemas/LoanOfferWidget")
	if got := refs(after["Widget"]); strings.Join(got, " ") != strings.Join(wantRefs, " ") {
		t.Fatalf("Widget oneOf %v,\nwant %v", got, wantRefs)
	}
	// The discriminator maps every type, the engine's and the host's, to its schema, which
	// generated clients dispatch on ("stat", not the schema's name "StatWidget").
	mapping, _ := after["Widget"].(map[string]any)["discriminator"].(map[string]any)["mapping"].(map[string]any)
	for typ, name := range map[string]string{"stat": "StatWidget", "confirm": "ConfirmWidget", "loan_offer": "LoanOfferWidget", "card": "CardWidget", "divider": "DividerWidget"} {
		if mapping[typ] != "#/components/schemas/"+name {
			t.Errorf("discriminator mapping of %q: %v", typ, mapping[typ])
		}
	}
	for name, s := range before {
		if name == "Widget" {
			continue
		}
		if a, b := jsonOf(s), jsonOf(after[name]); a != b {
			t.Errorf("schema %s changed:\n%s\n%s", name, a, b)
		}
	}

	lo := after["LoanOfferWidget"].(map[string]any)
	want := `{"description":"A loan the bank offers.","properties":{"amount":{"type":"number"},"rate":{"type":"number"},"type":{"const":"loan_offer"}},"required":["type","amount"],"type":"object"}`
	if got := jsonOf(lo); got != want {
		t.Fatalf("LoanOfferWidget %s,\nwant %s", got, want)
	}
	if got := jsonOf(after["CardWidget"].(map[string]any)["description"]); got != `"A card."` {
		t.Fatalf("CardWidget's description %s: the schema's own was replaced", got)
	}
	if got := jsonOf(after["DividerWidget"]); got != `{"properties":{"type":{"const":"divider"}},"required":["type"],"type":"object"}` {
		t.Fatalf("DividerWidget %s", got)
	}

	// The result is still a valid OpenAPI document, whose Widget takes the host's widget.
	loader := openapi3.NewLoader()
	doc, err := loader.LoadFromData(out)
	if err != nil {
		t.Fatal(err)
	}
	if err := doc.Validate(context.Background()); err != nil {
		t.Fatalf("the document with the host's widgets does not validate: %v", err)
	}
	widget := doc.Components.Schemas["Widget"].Value
	if err := widget.VisitJSON(map[string]any{"type": "loan_offer", "amount": 1000.0}, openapi3.EnableJSONSchema2020()); err != nil {
		t.Fatalf("a loan_offer widget does not match Widget: %v", err)
	}
	if err := widget.VisitJSON(map[string]any{"type": "loan_offer"}, openapi3.EnableJSONSchema2020()); err == nil {
		t.Fatal("a loan_offer widget without its required amount matches Widget")
	}
}

func TestAddWidgetsRefused(t *testing.T) {
	for _, tc := range []struct {
		name  string
		doc   []byte
		types []schema.Widget
	}{
		{"a name the document has", docs.OpenAPI, []schema.Widget{{Type: "stat", Schema: json.RawMessage(`{}`)}}},
		{"two types of one name", docs.OpenAPI, []schema.Widget{loanOffer, {Type: "loan__offer", Schema: json.RawMessage(`{}`)}}},
		{"a schema that is not JSON", docs.OpenAPI, []schema.Widget{{Type: "x", Schema: json.RawMessage(`{`)}}},
		{"a schema that is not an object", docs.OpenAPI, []schema.Widget{{Type: "x", Schema: json.RawMessage(`[]`)}}},
		{"no Widget schema", []byte("openapi: 3.1.0\ncomponents:\n  schemas: {}\n"), []schema.Widget{loanOffer}},
		{"not YAML", []byte("{"), []schema.Widget{loanOffer}},
	} {
		t.Run(tc.name, func(t *testing.T) {
			if _, err := schema.AddWidgets(tc.doc, tc.types); err == nil {
				t.Fatal("Add accepted it")
			}
		})
	}
}

func jsonOf(v any) string {
	b, _ := json.Marshal(v)
	return string(b)
}
