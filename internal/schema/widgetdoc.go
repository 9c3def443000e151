package schema

import (
	"encoding/json"
	"fmt"
	"slices"
	"strings"

	"sigs.k8s.io/yaml"
)

// Widget is a widget type as the document shows it.
type Widget struct {
	Type        string
	Description string
	Schema      json.RawMessage // an object schema without a "type" property
}

// AddWidgets returns doc, an OpenAPI document in YAML, with types among the widgets a render spec
// may hold (the oneOf of its Widget schema), each as a schema named after its type ("card" is
// CardWidget), in the order of their types.
func AddWidgets(doc []byte, types []Widget) ([]byte, error) {
	types = slices.SortedFunc(slices.Values(types), func(a, b Widget) int { return strings.Compare(a.Type, b.Type) })
	raw, err := yaml.YAMLToJSON(doc)
	if err != nil {
		return nil, fmt.Errorf("engine: the OpenAPI document: %w", err)
	}
	var m map[string]any
	if err := json.Unmarshal(raw, &m); err != nil {
		return nil, fmt.Errorf("engine: the OpenAPI document: %w", err)
	}
	components, _ := m["components"].(map[string]any)
	schemas, _ := components["schemas"].(map[string]any)
	widget, _ := schemas["Widget"].(map[string]any)
	oneOf, _ := widget["oneOf"].([]any)
	if widget == nil || oneOf == nil {
		return nil, fmt.Errorf("engine: the OpenAPI document has no Widget schema with oneOf")
	}
	// The discriminator maps each type to its schema: generated clients dispatch on it.
	disc, _ := widget["discriminator"].(map[string]any)
	var mapping map[string]any
	if disc != nil {
		if mapping, _ = disc["mapping"].(map[string]any); mapping == nil {
			mapping = map[string]any{}
			disc["mapping"] = mapping
		}
	}
	for _, wt := range types {
		var s map[string]any
		if err := json.Unmarshal(wt.Schema, &s); err != nil {
			return nil, fmt.Errorf("engine: the schema of widget %q: %w", wt.Type, err)
		}
		props, _ := s["properties"].(map[string]any)
		if props == nil {
			props = map[string]any{}
		}
		props["type"] = map[string]any{"const": wt.Type}
		s["properties"] = props
		required, _ := s["required"].([]any)
		s["required"] = append([]any{"type"}, required...)
		if wt.Description != "" {
			if _, ok := s["description"]; !ok {
				s["description"] = wt.Description
			}
		}
		name := schemaName(wt.Type)
		if _, taken := schemas[name]; taken {
			return nil, fmt.Errorf("engine: widget %q: the OpenAPI document already has a schema %s", wt.Type, name)
		}
		schemas[name] = s
		oneOf = append(oneOf, map[string]any{"$ref": "#/components/schemas/" + name})
		if mapping != nil {
			mapping[wt.Type] = "#/components/schemas/" + name
		}
	}
	widget["oneOf"] = oneOf
	out, err := json.Marshal(m)
	if err != nil {
		return nil, err
	}
	return yaml.JSONToYAML(out)
}

// schemaName is the name of a widget type's schema: "loan_offer" is LoanOfferWidget.
func schemaName(typ string) string {
	var b strings.Builder
	for part := range strings.SplitSeq(typ, "_") {
		if part != "" {
			b.WriteString(strings.ToUpper(part[:1]) + part[1:])
		}
	}
	return b.String() + "Widget"
}
