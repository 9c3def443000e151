package main

import (
	"io"
	"net/http"
	"strings"
	"testing"

	"github.com/convengine/engine/widgets"
)

// TestDemoCardWidget: the demo bank's own card widget reaches the client as a widget of its
// type, readable by a client that does not know it, and the served OpenAPI document has it.
func TestDemoCardWidget(t *testing.T) {
	base, _ := startServer(t, nil, nil)
	evs, spec := turn(t, base, "prod-card-1", `{"transcript":"show my card"}`)
	order(t, evs, spec)
	if spec.Speak != "Your Everyday Debit card ending in 4242 is active." || len(spec.Widgets) != 1 {
		t.Fatalf("spec %+v", spec)
	}
	card, ok := spec.Widgets[0].(widgets.Unknown)
	if !ok || card.Type != "card" {
		t.Fatalf("widget %#v", spec.Widgets[0])
	}
	if got, want := widgets.Text(card), "Everyday Debit\nExpires: 08/29\nNetwork: Visa\nNumber: •••• 4242\nStatus: active"; got != want {
		t.Errorf("as text:\n%s\nwant\n%s", got, want)
	}

	resp, err := http.Get(base + "/openapi.yaml")
	if err != nil {
		t.Fatal(err)
	}
	doc, _ := io.ReadAll(resp.Body)
	resp.Body.Close()
	if !strings.Contains(string(doc), "CardWidget:") || !strings.Contains(string(doc), "#/components/schemas/CardWidget") {
		t.Error("the served OpenAPI document lacks the card widget")
	}
}
