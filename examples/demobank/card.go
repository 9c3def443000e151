package demobank

import (
	"encoding/json"
	"net/http"

	"github.com/convengine/engine"
)

// cardResponse is the result of GET /card: the user's debit card, its number masked.
type cardResponse struct {
	Name    string `json:"name"`
	Network string `json:"network"`
	Last4   string `json:"last4"`
	Masked  string `json:"masked"`
	Status  string `json:"status"`
	Expires string `json:"expires"`
}

// handleCard serves GET /card.
func (b *Bank) handleCard(w http.ResponseWriter, r *http.Request) {
	if _, ok := authorize(w, r); !ok {
		return
	}
	if _, err := readQuery(r); err != nil {
		writeInvalid(w, "%v", err)
		return
	}
	writeJSON(w, http.StatusOK, cardResponse{Name: "Everyday Debit", Network: "Visa", Last4: "4242",
		Masked: "•••• 4242", Status: "active", Expires: "08/29"})
}

// CardWidget is the demo bank's own widget type, a payment card, which its clients draw and
// others show from its fields. Its schema only takes a number masked to the last four digits,
// so that a model cannot show a whole card number.
var CardWidget = engine.WidgetType{
	Type: "card",
	Description: "Show one of the user's payment cards: its name, its number masked to the last four digits " +
		"(•••• 4242), its status and expiry. Never show a whole card number.",
	Schema: json.RawMessage(`{"type":"object","properties":{` +
		`"title":{"type":"string","minLength":1,"maxLength":60},` +
		`"number":{"type":"string","pattern":"^•••• [0-9]{4}$"},` +
		`"status":{"type":"string","enum":["active","frozen","expired"]},` +
		`"expires":{"type":"string","pattern":"^(0[1-9]|1[0-2])/[0-9]{2}$"},` +
		`"network":{"type":"string","maxLength":20}},` +
		`"required":["title","number","status"],"additionalProperties":false}`),
}
