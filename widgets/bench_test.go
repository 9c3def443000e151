package widgets_test

import (
	"encoding/json"
	"testing"
	"time"

	"github.com/convengine/engine/widgets"
)

// BenchmarkFromToolCall measures turning a model's UI tool call into a validated widget.
func BenchmarkFromToolCall(b *testing.B) {
	for _, bc := range []struct{ name, tool, args string }{
		{"stat", widgets.ToolShowStat, `{"label":"Checking","value":"$1,234.56","delta":"+$120.00"}`},
		{"progress", widgets.ToolShowProgress, `{"label":"Lisbon trip","value":0.65}`},
		{"list", widgets.ToolShowList, `{"title":"Recent transactions","items":[` +
			`{"title":"Coffee","subtitle":"Nov 20","trailing":"-$4.50"},{"title":"Groceries","subtitle":"Nov 19","trailing":"-$62.10"},` +
			`{"title":"Salary","subtitle":"Nov 15","trailing":"+$3,200.00"},{"title":"Rent","subtitle":"Nov 1","trailing":"-$1,450.00"},` +
			`{"title":"Books","subtitle":"Oct 30","trailing":"-$23.99"}]}`},
	} {
		b.Run(bc.name, func(b *testing.B) {
			args := json.RawMessage(bc.args)
			b.ReportAllocs()
			for b.Loop() {
				if _, err := widgets.FromToolCall(bc.tool, args); err != nil {
					b.Fatal(err)
				}
			}
		})
	}
}

// BenchmarkValidate measures the checks of widgets the engine made itself.
func BenchmarkValidate(b *testing.B) {
	for _, w := range []widgets.Widget{
		widgets.Stat{Label: "Checking", Value: "$1,234.56", Delta: "+$120.00"},
		widgets.Confirm{ID: "0b1e8f8e-3f59-4a4e-9a53-4d3c2a1b0c9d", Title: "Send money", Body: "Send $20.00 to Alex?", ConfirmLabel: "Send",
			CancelLabel: "Cancel", ExpiresAt: time.Date(2026, 11, 22, 10, 0, 0, 0, time.UTC),
			Execute: widgets.Execute{Tool: "transfer", Arguments: json.RawMessage(`{"amount":20,"to":"Alex"}`), Token: "t.o.k"}},
	} {
		b.Run(w.WidgetType(), func(b *testing.B) {
			b.ReportAllocs()
			for b.Loop() {
				if err := w.Validate(); err != nil {
					b.Fatal(err)
				}
			}
		})
	}
}

// BenchmarkMarshal measures writing a widget as the turn stream sends it.
func BenchmarkMarshal(b *testing.B) {
	for _, w := range []widgets.Widget{
		widgets.Stat{Label: "Checking", Value: "$1,234.56", Delta: "+$120.00"},
		widgets.Progress{Label: "Lisbon trip", Value: 0.65},
	} {
		b.Run(w.WidgetType(), func(b *testing.B) {
			b.ReportAllocs()
			for b.Loop() {
				if _, err := json.Marshal(w); err != nil {
					b.Fatal(err)
				}
			}
		})
	}
}
