package fallback_test

import (
	"context"
	"fmt"
	"iter"

	"github.com/convengine/engine"
	"github.com/convengine/engine/fallback"
	"github.com/convengine/engine/intent"
)

// down is a model whose provider is down: it fails before saying anything, with an error
// that says another model may answer.
type down struct{}

type outage struct{}

func (outage) Error() string   { return "provider: 503 Service Unavailable" }
func (outage) Temporary() bool { return true }

func (down) Stream(context.Context, *engine.ModelRequest) iter.Seq2[engine.ModelEvent, error] {
	return func(yield func(engine.ModelEvent, error) bool) { yield(engine.ModelEvent{}, outage{}) }
}

// A chain answers through its offline last resort while its language model is down.
func ExampleNew() {
	chain, err := fallback.New(nil,
		fallback.Named{Name: "primary", Model: down{}},
		fallback.Named{Name: "intent", Model: intent.New(nil), Degraded: true})
	if err != nil {
		panic(err)
	}
	req := &engine.ModelRequest{
		Tenant: &engine.Tenant{Key: "demo", Locale: "en", Intents: []byte(`{"fallback": "help", "intents": [
		  {"name": "help", "responses": {"en": {"speak": "I can check your balance."}}}]}`)},
		Mode: engine.ModeText, Messages: []engine.Message{{Role: engine.RoleUser, Content: "Hello?"}},
	}
	for ev, err := range chain.Stream(context.Background(), req) {
		switch {
		case err != nil:
			fmt.Println("error:", err)
		case ev.Kind == engine.EventText:
			fmt.Printf("%s", ev.Text)
		case ev.Kind == engine.EventFinish:
			fmt.Printf("\nanswered by %s after %d failed attempt\n", ev.Model, ev.Retries)
		}
	}
	// Output:
	// I can check your balance.
	// answered by intent after 1 failed attempt
}
