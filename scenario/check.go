package scenario

import (
	"bytes"
	"encoding/json"
	"fmt"
	"math/big"
	"reflect"
	"slices"
	"strings"
	"unicode"

	"github.com/convengine/engine"
	"github.com/convengine/engine/widgets"
)

// check returns the failed expectations of a turn. tools are the tenant's, by name, for the
// currency an action's arguments leave to its schema.
func check(t *Turn, tr *TurnResult, tools map[string]engine.Tool) []*Failure {
	e := &t.Expect
	var out []*Failure
	fail := func(field, expected, got string) {
		out = append(out, &Failure{Field: field, Expected: expected, Got: got})
	}
	called := make([]string, 0, len(tr.ToolCalls))
	for _, c := range tr.ToolCalls {
		called = append(called, c.Name)
	}
	gotCalls := describeCalls(tr.ToolCalls)

	want := e.Error
	if tr.Error != want {
		expected, got := "no error", "no error"
		if want != "" {
			expected = "error " + want
		}
		if tr.Error != "" {
			got = tr.Error + ": " + tr.ErrorMessage
		}
		fail("error", expected, got)
	}
	for _, name := range e.Tools {
		if !slices.Contains(called, name) {
			fail("tools", "a call of "+name, gotCalls)
		}
	}
	if e.NoTools && len(called) > 0 {
		fail("no_tools", "no tool call", gotCalls)
	}
	for _, x := range e.ToolCalls {
		if !slices.ContainsFunc(tr.ToolCalls, func(c ToolCall) bool { return x.matches(c) }) {
			fail("tool_calls", x.describe(), gotCalls)
		}
	}
	var types []string
	var ws []widgets.Widget
	if tr.Spec != nil {
		ws = tr.Spec.Widgets
	}
	for _, w := range ws {
		types = append(types, w.WidgetType())
	}
	if e.Widgets != nil && !slices.Equal(e.Widgets, types) {
		fail("widgets", list(e.Widgets), list(types))
	}
	for _, x := range e.WidgetsContain {
		if !slices.ContainsFunc(ws, func(w widgets.Widget) bool { return subset(x, widgetJSON(w)) }) {
			exp, _ := json.Marshal(x)
			fail("widgets_contain", "a widget with "+string(exp), describeWidgets(ws))
		}
	}
	confirm := firstConfirm(ws)
	if e.Confirm != nil {
		if confirm == nil {
			fail("confirm", "a confirm widget", list(types))
		} else {
			out = append(out, checkAction(e.Confirm, confirm, tools)...)
		}
	}
	if e.NoAction && confirm != nil {
		fail("no_action", "no confirm widget", "confirm "+string(compactWidget(*confirm)))
	}
	speech := strings.ToLower(tr.Speech)
	for _, s := range e.SpeechContains {
		if !strings.Contains(speech, strings.ToLower(s)) {
			fail("speech_contains", quote(s), quote(tr.Speech))
		}
	}
	for _, s := range e.SpeechNotContains {
		if strings.Contains(speech, strings.ToLower(s)) {
			fail("speech_not_contains", "no "+quote(s), quote(tr.Speech))
		}
	}
	for _, s := range e.ModelNotContains {
		for i, req := range tr.modelSaw {
			if strings.Contains(squeezed(req), squeezed(s)) {
				fail("model_not_contains", "no "+quote(s)+" in what the model received", fmt.Sprintf("it in request %d of the turn", i+1))
				break
			}
		}
	}
	if e.SpeechMatches != nil && !e.SpeechMatches.MatchString(tr.Speech) {
		fail("speech_matches", "a match of "+quote(e.SpeechMatches.String()), quote(tr.Speech))
	}
	if e.Language != "" {
		l, loc := strings.ToLower(e.Language), strings.ToLower(tr.Locale)
		if loc != l && !strings.HasPrefix(loc, l+"-") {
			fail("language", e.Language, quote(tr.Locale))
		}
	}
	if e.MaxLatency > 0 && tr.Spec != nil && tr.Latency > e.MaxLatency {
		fail("max_latency", "done within "+e.MaxLatency.String(), "done after "+tr.Latency.Round(1e6).String())
	}
	return out
}

// checkAction compares a confirm widget's action with what was expected of it.
func checkAction(x *ConfirmExpect, cw *widgets.Confirm, tools map[string]engine.Tool) []*Failure {
	var out []*Failure
	args := map[string]json.RawMessage{}
	_ = json.Unmarshal(cw.Execute.Arguments, &args)
	if x.amount != nil {
		raw := bytes.TrimSpace(args["amount"])
		got, ok := new(big.Rat).SetString(string(raw))
		switch {
		case len(raw) == 0:
			out = append(out, &Failure{Field: "confirm.amount", Expected: x.Amount, Got: "no amount in " + string(compactJSON(cw.Execute.Arguments))})
		case !ok || got.Cmp(x.amount) != 0:
			out = append(out, &Failure{Field: "confirm.amount", Expected: x.Amount, Got: string(raw)})
		}
	}
	if x.Currency != "" {
		got := stringArg(args["currency"])
		if got == "" {
			got = schemaCurrency(tools[cw.Execute.Tool])
		}
		if got != x.Currency {
			out = append(out, &Failure{Field: "confirm.currency", Expected: quote(x.Currency), Got: quote(got)})
		}
	}
	if x.Payee != "" {
		got := stringArg(args["to"])
		if _, ok := args["to"]; !ok {
			got = stringArg(args["payee"])
		}
		if got != x.Payee {
			out = append(out, &Failure{Field: "confirm.payee", Expected: quote(x.Payee), Got: quote(got)})
		}
	}
	return out
}

// schemaCurrency is the currency an action's schema gives when its arguments name none: the
// currency property's default, or its one allowed value.
func schemaCurrency(t engine.Tool) string {
	var s struct {
		Properties struct {
			Currency struct {
				Default string   `json:"default"`
				Enum    []string `json:"enum"`
			} `json:"currency"`
		} `json:"properties"`
	}
	_ = json.Unmarshal(t.Parameters, &s)
	c := s.Properties.Currency
	switch {
	case c.Default != "":
		return c.Default
	case len(c.Enum) == 1:
		return c.Enum[0]
	}
	return ""
}

func stringArg(raw json.RawMessage) string {
	var s string
	if json.Unmarshal(raw, &s) != nil {
		return string(raw)
	}
	return s
}

// checkConfirm compares a confirm step's outcome with what was expected of it.
func checkConfirm(step *ConfirmStep, cr *ConfirmResult) []*Failure {
	var out []*Failure
	x := step.Expect
	status := x.Status
	if status == "" {
		status = StatusDone
		if x.Error != "" {
			status = StatusFailed
		}
	}
	if cr.Status != status {
		out = append(out, &Failure{Field: "confirm.expect.status", Expected: status, Got: cr.describe()})
	}
	if x.Error != "" && cr.Error != x.Error {
		got := "no error: " + cr.describe()
		if cr.Error != "" {
			got = cr.Error + ": " + cr.ErrorMessage
		}
		out = append(out, &Failure{Field: "confirm.expect.error", Expected: x.Error, Got: got})
	}
	text := strings.ToLower(cr.Speech + " " + cr.Card)
	for _, s := range x.SpeechContains {
		if !strings.Contains(text, strings.ToLower(s)) {
			out = append(out, &Failure{Field: "confirm.expect.speech_contains", Expected: quote(s), Got: quote(cr.Speech + " | " + cr.Card)})
		}
	}
	return out
}

func firstConfirm(ws []widgets.Widget) *widgets.Confirm {
	for _, w := range ws {
		if c, ok := w.(widgets.Confirm); ok {
			return &c
		}
	}
	return nil
}

func (x *ToolCallExpect) matches(c ToolCall) bool {
	if c.Name != x.Name {
		return false
	}
	var args map[string]any
	if len(c.Arguments) > 0 && json.Unmarshal(c.Arguments, &args) != nil {
		return false
	}
	if args == nil {
		args = map[string]any{}
	}
	if x.Args != nil && !reflect.DeepEqual(x.Args, args) {
		return false
	}
	for k, v := range x.ArgsPartial {
		got, ok := args[k]
		if !ok || !reflect.DeepEqual(v, got) {
			return false
		}
	}
	for k, re := range x.ArgsMatch {
		got, ok := args[k]
		if !ok {
			return false
		}
		s, isString := got.(string)
		if !isString {
			b, _ := json.Marshal(got)
			s = string(b)
		}
		if !re.MatchString(s) {
			return false
		}
	}
	return true
}

func (x *ToolCallExpect) describe() string {
	var parts []string
	if x.Args != nil {
		b, _ := json.Marshal(x.Args)
		parts = append(parts, "args "+string(b))
	}
	if x.ArgsPartial != nil {
		b, _ := json.Marshal(x.ArgsPartial)
		parts = append(parts, "args_partial "+string(b))
	}
	if len(x.ArgsMatch) > 0 {
		m := map[string]string{}
		for k, re := range x.ArgsMatch {
			m[k] = re.String()
		}
		b, _ := json.Marshal(m)
		parts = append(parts, "args_match "+string(b))
	}
	if len(parts) == 0 {
		return "a call of " + x.Name
	}
	return "a call of " + x.Name + " with " + strings.Join(parts, ", ")
}

func describeCalls(calls []ToolCall) string {
	if len(calls) == 0 {
		return "no tool call"
	}
	var parts []string
	for _, c := range calls {
		s := c.Name + " " + string(c.Arguments)
		if c.Proposed {
			s += " (proposed)"
		}
		parts = append(parts, s)
	}
	return strings.Join(parts, "; ")
}

func describeWidgets(ws []widgets.Widget) string {
	if len(ws) == 0 {
		return "no widget"
	}
	var parts []string
	for _, w := range ws {
		parts = append(parts, string(compactWidget(w)))
	}
	return strings.Join(parts, "; ")
}

func list(s []string) string { return "[" + strings.Join(s, ", ") + "]" }

func widgetJSON(w widgets.Widget) any {
	data, err := engine.Event{Type: engine.EventWidget, Widget: w}.Data()
	if err != nil {
		return nil
	}
	var v any
	_ = json.Unmarshal(data, &v)
	return v
}

// subset reports whether want is a JSON subset of got: objects have at least want's members,
// each a subset; each element of an array is a subset of a distinct element of got's; other
// values are equal.
func subset(want, got any) bool {
	switch w := want.(type) {
	case map[string]any:
		g, ok := got.(map[string]any)
		if !ok {
			return false
		}
		for k, v := range w {
			if gv, ok := g[k]; !ok || !subset(v, gv) {
				return false
			}
		}
		return true
	case []any:
		g, ok := got.([]any)
		if !ok {
			return false
		}
		used := make([]bool, len(g))
	next:
		for _, v := range w {
			for i, gv := range g {
				if !used[i] && subset(v, gv) {
					used[i] = true
					continue next
				}
			}
			return false
		}
		return true
	}
	return reflect.DeepEqual(want, got)
}

// squeezed is s in lower case without blanks or dashes, as model_not_contains compares.
func squeezed(s string) string {
	return strings.Map(func(r rune) rune {
		if unicode.IsSpace(r) || r == '-' {
			return -1
		}
		return unicode.ToLower(r)
	}, s)
}
