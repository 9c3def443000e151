package widgets_test

import (
	"encoding/json"
	"errors"
	"reflect"
	"strings"
	"testing"
	"time"

	"github.com/convengine/engine/widgets"
)

func TestRoundTrip(t *testing.T) {
	exp := time.Date(2026, 11, 22, 10, 0, 0, 0, time.UTC)
	cases := []struct {
		w    widgets.Widget
		json string
	}{
		{widgets.Stat{Label: "Checking", Value: "$1,234.56", Delta: "+$120"}, `{"type":"stat","label":"Checking","value":"$1,234.56","delta":"+$120"}`},
		{widgets.List{Title: "Recent", Items: []widgets.ListItem{{Title: "Coffee", Subtitle: "Nov 20", Trailing: "-$4.50"}}}, `{"type":"list","title":"Recent","items":[{"title":"Coffee","subtitle":"Nov 20","trailing":"-$4.50"}]}`},
		{widgets.Progress{Label: "Lisbon", Value: 0.65}, `{"type":"progress","label":"Lisbon","value":0.65}`},
		{widgets.Confirm{ID: "a1", Title: "Send", Body: "Send $20 to Alex?", ConfirmLabel: "Send", CancelLabel: "Cancel", ExpiresAt: exp,
			Execute: widgets.Execute{Tool: "transfer", Arguments: json.RawMessage(`{"amount":20,"to":"Alex"}`), Token: "t.o.k"}},
			`{"type":"confirm","id":"a1","title":"Send","body":"Send $20 to Alex?","confirmLabel":"Send","cancelLabel":"Cancel","expiresAt":"2026-11-22T10:00:00Z","execute":{"tool":"transfer","arguments":{"amount":20,"to":"Alex"},"token":"t.o.k"}}`},
	}
	for _, tc := range cases {
		t.Run(tc.w.WidgetType(), func(t *testing.T) {
			if err := tc.w.Validate(); err != nil {
				t.Fatal(err)
			}
			b, err := json.Marshal(tc.w)
			if err != nil || string(b) != tc.json {
				t.Fatalf("marshal = %s, %v\nwant %s", b, err, tc.json)
			}
			back, err := widgets.Decode(b)
			if err != nil || !reflect.DeepEqual(back, tc.w) {
				t.Fatalf("decode = %#v, %v", back, err)
			}
		})
	}
}

func TestSpecRoundTripKeepsUnknownWidgets(t *testing.T) {
	in := `{"speak":"Hi","widgets":[{"type":"stat","label":"A","value":"1"},{"type":"chart","points":[1,2]}],"suggestions":["More"],"meta":{"conversationId":"c","direction":"rtl"}}`
	var s widgets.Spec
	if err := json.Unmarshal([]byte(in), &s); err != nil {
		t.Fatal(err)
	}
	if u, ok := s.Widgets[1].(widgets.Unknown); !ok || u.Type != "chart" || u.Validate() == nil {
		t.Fatalf("widget %#v", s.Widgets[1])
	}
	out, _ := json.Marshal(s)
	if string(out) != in {
		t.Fatalf("re-encoded %s", out)
	}
	empty, _ := json.Marshal(widgets.Spec{Speak: "x"})
	if !strings.Contains(string(empty), `"widgets":[]`) {
		t.Errorf("empty widgets not written as an array: %s", empty)
	}
}

func TestValidation(t *testing.T) {
	long := strings.Repeat("x", widgets.MaxTextLen+1)
	cases := []struct {
		name string
		w    widgets.Widget
		want string
	}{
		{"stat without value", widgets.Stat{Label: "A"}, "value is empty"},
		{"stat long label", widgets.Stat{Label: long, Value: "1"}, "label is longer"},
		{"stat bad utf8", widgets.Stat{Label: "\xff", Value: "1"}, "not valid UTF-8"},
		{"list empty", widgets.List{Title: "T"}, "items is empty"},
		{"list untitled item", widgets.List{Title: "T", Items: []widgets.ListItem{{}}}, "items[0].title is empty"},
		{"list too long", widgets.List{Title: "T", Items: make([]widgets.ListItem, 51)}, "more than 50"},
		{"progress over 1", widgets.Progress{Label: "G", Value: 1.5}, "from 0 to 1"},
		{"progress negative", widgets.Progress{Label: "G", Value: -0.1}, "from 0 to 1"},
		{"confirm empty", widgets.Confirm{}, "execute.token is missing"},
		{"confirm array args", widgets.Confirm{ID: "1", Title: "t", Body: "b", ConfirmLabel: "y", CancelLabel: "n", ExpiresAt: time.Now(),
			Execute: widgets.Execute{Tool: "x", Token: "t", Arguments: json.RawMessage(`[1]`)}}, "not a JSON object"},
	}
	for _, tc := range cases {
		t.Run(tc.name, func(t *testing.T) {
			err := tc.w.Validate()
			if err == nil || !errors.Is(err, widgets.ErrInvalid) || !strings.Contains(err.Error(), tc.want) {
				t.Fatalf("err = %v, want %q", err, tc.want)
			}
		})
	}
}

func TestFromToolCall(t *testing.T) {
	w, err := widgets.FromToolCall(widgets.ToolShowProgress, json.RawMessage(`{"label":"Goal","value":0.5}`))
	if err != nil || w != (widgets.Progress{Label: "Goal", Value: 0.5}) {
		t.Fatalf("got %#v, %v", w, err)
	}
	if w, err := widgets.FromToolCall(widgets.ToolShowStat, json.RawMessage(`{"type":"stat","label":"A","value":"1"}`)); err != nil || w != (widgets.Stat{Label: "A", Value: "1"}) {
		t.Errorf("a stat with its own type: %#v, %v", w, err)
	}
	for _, bad := range []string{`{"label":"Goal","value":"half"}`, `{"type":"list","label":"Goal","value":0.5}`, `{"label":"Goal","value":0.5,"colour":"red"}`, `[]`, `{"label":"Goal","value":0.5} {}`} {
		if _, err := widgets.FromToolCall(widgets.ToolShowProgress, json.RawMessage(bad)); err == nil {
			t.Errorf("%s was accepted", bad)
		}
	}
	if s, err := widgets.SuggestionsFromToolCall(json.RawMessage(`{"suggestions":["a","b","c","d","e","f","g","h","i"]}`)); err == nil {
		t.Errorf("nine suggestions accepted: %v", s)
	}
	for _, tool := range widgets.UITools() {
		if !json.Valid(tool.Parameters) || !widgets.IsUITool(tool.Name) {
			t.Errorf("tool %s", tool.Name)
		}
	}
}

func FuzzDecode(f *testing.F) {
	f.Add([]byte(`{"type":"stat","label":"A","value":"1"}`))
	f.Add([]byte(`{"type":"list","title":"T","items":[{"title":"x"}]}`))
	f.Add([]byte(`{"type":"confirm","execute":{"arguments":{}}}`))
	f.Fuzz(func(t *testing.T, data []byte) {
		w, err := widgets.Decode(data)
		if err != nil || w.Validate() != nil {
			return
		}
		// A valid widget survives a round trip unchanged.
		b, err := json.Marshal(w)
		if err != nil {
			t.Fatal(err)
		}
		back, err := widgets.Decode(b)
		if err != nil || back.Validate() != nil {
			t.Fatalf("round trip of %s failed: %v", b, err)
		}
	})
}
