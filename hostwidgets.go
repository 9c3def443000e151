package engine

import (
	"cmp"
	"encoding/json"
	"errors"
	"fmt"

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

// initWidgets checks the host's widget types and describes them to the model.
func (e *Engine) initWidgets(types []WidgetType) error {
	var errs []error
	var seen schema.WidgetTypes
	e.hostWidgets = make(map[string]*WidgetType, len(types))
	for i := range types {
		wt := types[i]
		wt.Tool = cmp.Or(wt.Tool, "show_"+wt.Type)
		if err := e.schemas.CheckWidgetType(&seen, wt.Type, wt.Tool, wt.Schema); err != nil {
			errs = append(errs, fmt.Errorf("%w: Widgets[%d] (%q): %v", ErrConfig, i, wt.Type, err))
			continue
		}
		e.hostWidgets[wt.Tool] = &wt
		e.hostWidgetSpecs = append(e.hostWidgetSpecs, ToolSpec{Name: wt.Tool, Description: wt.Description,
			Parameters: wt.Schema, Kind: ToolUI})
	}
	return errors.Join(errs...)
}

// applyHostWidget turns a call of a host widget's tool into a widget of the spec, if its
// arguments match the type's schema.
func (e *Engine) applyHostWidget(t *turn, wt *WidgetType, c ToolCall) error {
	args, err := e.schemas.WidgetFields(wt.Schema, c.Arguments, wt.Type)
	if err != nil {
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

// OpenAPI returns the OpenAPI 3.1 document of the engine's HTTP surface, as YAML: the
// document of this version of the engine (package docs), with the host's widget types
// (Config.Widgets) among the widgets a render spec may hold, each as a schema named after its
// type ("card" is CardWidget). Without host widgets it is docs.OpenAPI as is.
func (e *Engine) OpenAPI() ([]byte, error) {
	if len(e.hostWidgets) == 0 {
		return docs.OpenAPI, nil
	}
	var types []schema.Widget
	for _, wt := range e.hostWidgets {
		types = append(types, schema.Widget{Type: wt.Type, Description: wt.Description, Schema: wt.Schema})
	}
	return schema.AddWidgets(docs.OpenAPI, types)
}
