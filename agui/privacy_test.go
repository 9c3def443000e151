package agui_test

import (
	"net/http/httptest"
	"strings"
	"testing"

	"github.com/convengine/engine"
	"github.com/convengine/engine/agui"
	"github.com/convengine/engine/enginetest"
	"github.com/convengine/engine/pii"
)

// TestRunKeepsCardNumbersPrivate: an AG-UI client whose user typed a card number earlier and an
// IBAN now, under the demo tenant's banking policy: the model sees placeholders for both, the
// history included, and the run's text shows the values masked.
func TestRunKeepsCardNumbersPrivate(t *testing.T) {
	privacy, err := pii.NewPrivacy(&pii.PrivacyOptions{Default: pii.Banking()})
	if err != nil {
		t.Fatal(err)
	}
	model := &enginetest.RecordingModel{Answer: func(*engine.ModelRequest) []engine.ModelEvent {
		return enginetest.Text("I will use [CARD_1] to pay [IBAN_1].")
	}}
	d := enginetest.NewDemo(t, &enginetest.DemoOptions{Config: engine.Config{Model: model, Privacy: privacy}})
	srv := httptest.NewServer(agui.Handler(d.Engine, nil))
	t.Cleanup(srv.Close)
	f := &fixture{demo: d, srv: srv}

	body := `{"threadId":"thread-card","runId":"r1","messages":[` +
		`{"id":"1","role":"user","content":"my card is 4111 1111 1111 1111"},` +
		`{"id":"2","role":"assistant","content":"Noted."},` +
		`{"id":"3","role":"user","content":"pay GB82 WEST 1234 5698 7654 32 from it"}]}`
	r := f.run(t, nil, body)
	if r.status != 200 {
		t.Fatalf("%d %v", r.status, r.problem)
	}
	if got := r.text(); got != "I will use •••• 1111 to pay GB•• •••• … 5432." {
		t.Errorf("the run's text is %q", got)
	}
	seen := model.Requests()
	if len(seen) != 1 || !strings.Contains(seen[0], "my card is [CARD_1]") || !strings.Contains(seen[0], "pay [IBAN_1] from it") {
		t.Fatalf("the model saw %q", seen)
	}
	if flat := strings.ReplaceAll(seen[0], " ", ""); strings.Contains(flat, "4111111111111111") || strings.Contains(flat, "GB82WEST") {
		t.Errorf("the model saw a value: %s", seen[0])
	}
}
