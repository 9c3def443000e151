package engine

import (
	"encoding/json"
	"errors"
	"fmt"
	"regexp"
	"slices"
	"strings"

	"github.com/convengine/engine/docs"
	"github.com/convengine/engine/internal/schema"
	"github.com/convengine/engine/widgets"
)

// WidgetType is a widget type of the host's own, such as a bank's card or a chart, that its
// clients know how to draw. The model gets it as a UI tool like the built-in ones; each call
// is checked against Schema, and an instance that does not match is dropped, with the reason
// given back to the model so that it can try again. Valid instances reach the client as
// widgets of the spec, {"type": Type, …fields}, and clients that do not know the type draw
// them from their fields (widgets.Text; the reference web client's fallback card).
type WidgetType struct {
	// Type is the widget's "type": 1 to 64 lower-case letters, digits or '_', not a built-in
	// type (stat, list, progress, confirm).
	Type string
	// Tool is the name of its UI tool; empty means "show_" + Type.
	Tool string
	// Description tells the model what the widget shows and when to use it.
	Description string
	// Schema is the JSON Schema of the widget's fields, an object schema without a "type"
	// property of its own (the engine adds it). Give maxLength to strings and maxItems to
	// arrays: a widget is at most 8 KiB.
	Schema json.RawMessage
}

var toolNamePattern = regexp.MustCompile(`^[A-Za-z0-9_-]{1,64}$`)

// initWidgets checks the host's widget types and describes them to the model.
func (e *Engine) initWidgets(types []WidgetType) error {
	var errs []error
	e.hostWidgets = make(map[string]*WidgetType, len(types))
	seen := map[string]bool{}
	for i := range types {
		wt := types[i]
		if wt.Tool == "" {
			wt.Tool = "show_" + wt.Type
		}
		bad := func(format string, args ...any) {
			errs = append(errs, fmt.Errorf("%w: Widgets[%d] (%q): %s", ErrConfig, i, wt.Type, fmt.Sprintf(format, args...)))
		}
		var schema struct {
			Type       string                     `json:"type"`
			Properties map[string]json.RawMessage `json:"properties"`
		}
		switch {
		case !widgets.ValidCustomType(wt.Type):
			bad("the type must be 1 to 64 lower-case letters, digits or '_', and not a built-in type")
		case seen[wt.Type]:
			bad("the type is registered twice")
		case !toolNamePattern.MatchString(wt.Tool) || widgets.IsUITool(wt.Tool) || e.hostWidgets[wt.Tool] != nil:
			bad("the tool %q is not a valid name, or is taken", wt.Tool)
		case json.Unmarshal(wt.Schema, &schema) != nil || schema.Type != "object":
			bad(`the schema must be a JSON Schema of "type": "object"`)
		case schema.Properties["type"] != nil:
			bad(`the schema has a "type" property: the engine sets it`)
		default:
			if err := e.schemas.Compile(wt.Schema); err != nil {
				bad("%v", err)
				continue
			}
			seen[wt.Type] = true
			e.hostWidgets[wt.Tool] = &wt
			e.hostWidgetSpecs = append(e.hostWidgetSpecs, ToolSpec{Name: wt.Tool, Description: wt.Description,
				Parameters: wt.Schema, Kind: ToolUI})
		}
	}
	return errors.Join(errs...)
}

// applyHostWidget turns a call of a host widget's tool into a widget of the spec, if its
// arguments match the type's schema.
func (e *Engine) applyHostWidget(t *turn, wt *WidgetType, c ToolCall) error {
	args := withoutType(c.Arguments, wt.Type)
	if err := e.schemas.Check(wt.Schema, args); err != nil {
		return fmt.Errorf("the arguments of %s do not match its schema: %w", wt.Tool, err)
	}
	if len(t.widgets) >= widgets.MaxWidgets {
		return fmt.Errorf("a spec holds at most %d widgets", widgets.MaxWidgets)
	}
	w := widgets.Custom{Type: wt.Type, Fields: args}
	if err := w.Validate(); err != nil {
		return err
	}
	t.widgets = append(t.widgets, w)
	return nil
}

// withoutType returns a call's arguments without a "type" member naming the widget's own
// type, which models often add.
func withoutType(args json.RawMessage, typ string) json.RawMessage {
	var m map[string]json.RawMessage
	if json.Unmarshal(args, &m) != nil {
		return args
	}
	raw, ok := m["type"]
	var s string
	if !ok || json.Unmarshal(raw, &s) != nil || s != typ {
		return args
	}
	delete(m, "type")
	out, err := json.Marshal(m)
	if err != nil {
		return args
	}
	return out
}

// hostWidgetTypes returns the registered types, sorted by type.
func (e *Engine) hostWidgetTypes() []*WidgetType {
	out := make([]*WidgetType, 0, len(e.hostWidgets))
	for _, wt := range e.hostWidgets {
		out = append(out, wt)
	}
	slices.SortFunc(out, func(a, b *WidgetType) int { return strings.Compare(a.Type, b.Type) })
	return out
}

// OpenAPI returns the OpenAPI 3.1 document of the engine's HTTP surface, as YAML: the
// document of this version of the engine (package docs), with the host's widget types
// (Config.Widgets) among the widgets a render spec may hold, each as a schema named after its
// type ("card" is CardWidget). Without host widgets it is docs.OpenAPI as is.
func (e *Engine) OpenAPI() ([]byte, error) {
	if len(e.hostWidgets) == 0 {
		return docs.OpenAPI, nil
	}
	var types []schema.Widget
	for _, wt := range e.hostWidgetTypes() {
		types = append(types, schema.Widget{Type: wt.Type, Description: wt.Description, Schema: wt.Schema})
	}
	return schema.AddWidgets(docs.OpenAPI, types)
}
