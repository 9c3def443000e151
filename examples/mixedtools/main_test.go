package main

import (
	"context"
	"encoding/json"
	"net/http/httptest"
	"strings"
	"sync"
	"testing"

	"github.com/google/jsonschema-go/jsonschema"

	"github.com/convengine/engine"
	"github.com/convengine/engine/examples/demobank"
)

// TestATurnUsesBothToolsets answers a turn with the bank's HTTP tool and the host's Go tool,
// and finds that the model was offered fx_rate with the schema derived from RateArgs, byte for
// byte, beside the bank's tools.
func TestATurnUsesBothToolsets(t *testing.T) {
	bank := httptest.NewServer(demobank.New(nil))
	defer bank.Close()
	var (
		mu      sync.Mutex
		offered []engine.ToolSpec
	)
	model := func(ctx context.Context, req *engine.ModelRequest) []engine.ModelEvent {
		mu.Lock()
		offered = req.Tools
		mu.Unlock()
		return scriptedModel(ctx, req)
	}
	eng, err := newEngine(bank.URL, modelFunc(model))
	if err != nil {
		t.Fatal(err)
	}
	defer eng.Close()
	said, err := answer(t.Context(), eng, "What's my balance in euros?")
	if err != nil {
		t.Fatal(err)
	}
	if want := "Your checking balance is $1,234.56, about €1135.80 at today's rate."; said != want {
		t.Errorf("answer %q, want %q (the bank's balance and the host's rate)", said, want)
	}

	derived, err := jsonschema.For[RateArgs](nil)
	if err != nil {
		t.Fatal(err)
	}
	want, _ := json.Marshal(derived)
	var names []string
	var got json.RawMessage
	for _, s := range offered {
		names = append(names, s.Name)
		if s.Name == "fx_rate" {
			got = s.Parameters
		}
	}
	if string(got) != string(want) {
		t.Errorf("fx_rate offered with %s, want the schema derived from RateArgs %s", got, want)
	}
	if !strings.Contains(strings.Join(names, " "), "get_balance") {
		t.Errorf("the model was offered %v, without the bank's get_balance", names)
	}
}
