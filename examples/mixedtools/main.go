// Command mixedtools serves one tenant whose tools live in two places: the bank's HTTP
// backend (the demo bank's get_balance, through package httptools) and a typed Go function in
// the host's own process (fx_rate, through package gotools), combined by package toolsets. A
// turn uses both: the balance from the bank, converted with the host's rate.
//
//	go run ./examples/mixedtools
//
// The model here is scripted, standing in for an LLM (set Config.Model to openai.NewModel for
// a real one): it asks for both tools, then answers from their results.
package main

import (
	"context"
	"crypto/rand"
	"encoding/json"
	"fmt"
	"log"
	"net/http/httptest"
	"os"
	"strings"

	"github.com/convengine/engine"
	"github.com/convengine/engine/enginetest"
	"github.com/convengine/engine/examples/demobank"
	"github.com/convengine/engine/gotools"
	"github.com/convengine/engine/httptools"
	"github.com/convengine/engine/toolsets"
)

// RateArgs are the arguments of fx_rate.
type RateArgs struct {
	From string `json:"from" jsonschema:"ISO 4217 code of the currency to convert from"`
	To   string `json:"to" jsonschema:"ISO 4217 code of the currency to convert to"`
}

// Rate is fx_rate's result.
type Rate struct {
	From string  `json:"from"`
	To   string  `json:"to"`
	Rate float64 `json:"rate"`
}

// rates are the host's own exchange rates, per US dollar.
var rates = map[string]float64{"USD": 1, "EUR": 0.92, "MXN": 17.1}

// fxRate is the host's typed Go tool.
var fxRate = gotools.Func("fx_rate", "Get today's exchange rate between two currencies.",
	func(_ context.Context, _ *engine.ToolEnv, in RateArgs) (Rate, error) {
		from, okFrom := rates[strings.ToUpper(in.From)]
		to, okTo := rates[strings.ToUpper(in.To)]
		if !okFrom || !okTo {
			return Rate{}, fmt.Errorf("no rate from %s to %s", in.From, in.To)
		}
		return Rate{From: in.From, To: in.To, Rate: to / from}, nil
	}, gotools.Status("Checking the exchange rate"))

// scriptedModel asks for the balance and the rate at once, then answers from their results.
var scriptedModel = modelFunc(func(_ context.Context, req *engine.ModelRequest) []engine.ModelEvent {
	if enginetest.StepOf(req.Messages) == 0 {
		return []engine.ModelEvent{
			enginetest.ToolCall("c1", "get_balance", `{"account":"checking"}`),
			enginetest.ToolCall("c2", "fx_rate", `{"from":"USD","to":"EUR"}`),
			engine.FinishEvent(engine.FinishToolCalls)}
	}
	var rate Rate
	for _, m := range req.Messages {
		if m.Role == engine.RoleTool && m.Name == "fx_rate" {
			json.Unmarshal([]byte(m.Content), &rate)
		}
	}
	return enginetest.Text(fmt.Sprintf("Your checking balance is $1,234.56, about €%.2f at today's rate.", 1234.56*rate.Rate))
})

// modelFunc is a model of a function, as enginetest.ModelFunc.
type modelFunc = enginetest.ModelFunc

// newEngine serves the demo tenant with its bank's HTTP tools at bankURL and the host's Go
// tools, one toolset.
func newEngine(bankURL string, model engine.Model) (*engine.Engine, error) {
	tenant, err := demobank.Tenant(bankURL, "")
	if err != nil {
		return nil, err
	}
	tenants, err := engine.NewStaticTenants(tenant)
	if err != nil {
		return nil, err
	}
	goTools, err := gotools.New(fxRate)
	if err != nil {
		return nil, err
	}
	tools := toolsets.New(
		toolsets.Member{Name: "bank", Toolset: httptools.New(nil)},
		toolsets.Member{Name: "host", Toolset: goTools})
	key := make([]byte, 32)
	rand.Read(key) // a real host reads a key shared by its replicas from its secret store
	return engine.New(engine.Config{Tenants: tenants, Model: model, Toolset: tools, SigningKey: key})
}

// answer runs one turn as the demo user and returns what the assistant said.
func answer(ctx context.Context, eng *engine.Engine, transcript string) (string, error) {
	caller := &engine.Caller{EngineKey: demobank.EngineKey, UserToken: "demo-user"}
	for ev, err := range eng.Turn(ctx, caller, &engine.TurnInput{Transcript: transcript}) {
		if err != nil {
			return "", err
		}
		if ev.Type == engine.EventDone {
			return ev.Spec.Speak, nil
		}
	}
	return "", fmt.Errorf("the turn ended without an answer")
}

func main() {
	bank := httptest.NewServer(demobank.New(nil)) // stands in for the tenant's backend
	defer bank.Close()
	eng, err := newEngine(bank.URL, scriptedModel)
	if err != nil {
		log.Fatal(err)
	}
	defer eng.Close()
	said, err := answer(context.Background(), eng, "What's my balance in euros?")
	if err != nil {
		fmt.Fprintln(os.Stderr, "mixedtools:", err)
		os.Exit(1)
	}
	fmt.Println(said)
}
