package scenario_test

import (
	"context"
	"crypto/rand"
	"fmt"
	"log"
	"strings"

	"github.com/convengine/engine"
	"github.com/convengine/engine/enginetest"
	"github.com/convengine/engine/gotools"
	"github.com/convengine/engine/scenario"
)

// RatesArgs are the arguments of the host's get_rates tool.
type RatesArgs struct {
	Currency string `json:"currency" jsonschema:"ISO 4217 code of the currency to price in US dollars"`
}

// newHostConfig builds the host's engine configuration, as its server does: its tenants, its
// model and its own Go tools, which `go run ./cmd/engine test` cannot load.
func newHostConfig(context.Context) (engine.Config, func() error, error) {
	getRates := gotools.Func("get_rates", "Get today's exchange rate of a currency, per US dollar.",
		func(_ context.Context, _ *engine.ToolEnv, in RatesArgs) (map[string]any, error) {
			rates := map[string]float64{"EUR": 0.92, "MXN": 17.1}
			rate, ok := rates[in.Currency]
			if !ok {
				return nil, fmt.Errorf("no rate for %s", in.Currency)
			}
			return map[string]any{"currency": in.Currency, "rate": rate}, nil
		}, gotools.Status("Checking the rates"))
	tools, err := gotools.New(getRates)
	if err != nil {
		return engine.Config{}, nil, err
	}
	tenants, err := engine.NewStaticTenants(&engine.Tenant{Key: "pk_shop", Name: "Shop",
		Environments: map[string]*engine.Environment{engine.EnvProduction: {}}})
	if err != nil {
		return engine.Config{}, nil, err
	}
	key := make([]byte, 32)
	rand.Read(key)
	return engine.Config{Tenants: tenants, Model: ratesModel, Toolset: tools, SigningKey: key}, nil, nil
}

// ratesModel stands in for the host's LLM (an openai model, with its traffic on tapes): it asks
// for the euro's rate, then says it.
var ratesModel = enginetest.ModelFunc(func(_ context.Context, req *engine.ModelRequest) []engine.ModelEvent {
	if enginetest.StepOf(req.Messages) == 0 {
		return []engine.ModelEvent{enginetest.ToolCall("c1", "get_rates", `{"currency":"EUR"}`)}
	}
	return enginetest.Text("A dollar buys 0.92 euros today.")
})

// A host whose tools are its own Go code tests its tenant with a runner of its own: the
// scenarios of docs/testing-tenants.md, run on engines built from the host's configuration.
// In a test, the same lines run the host's scenario files (scenario.Load("scenarios")) and
// fail the test with the report's summary.
func ExampleNewRunner() {
	scenarios, err := scenario.Parse("rates.yaml", []byte(`
name: euro rate
tenant: pk_shop
user: u1
turns:
  - say: how many euros is a dollar
    expect:
      tool_calls: [{name: get_rates, args: {currency: EUR}}]
      speech_contains: ["0.92 euros"]
`))
	if err != nil {
		log.Fatal(err)
	}
	r, err := scenario.NewRunner(&scenario.RunnerOptions{Config: newHostConfig})
	if err != nil {
		log.Fatal(err)
	}
	rep, err := r.Run(context.Background(), scenarios) // checks the scenarios first
	if err != nil {
		log.Fatal(err)
	}
	for _, res := range rep.Results {
		fmt.Println(res.Scenario.Name, res.Status())
		if res.Status() == scenario.Failed {
			fmt.Println(strings.TrimSpace(res.Details()))
		}
	}
	passed, failed, _ := rep.Counts()
	fmt.Println(passed, "passed,", failed, "failed")
	// Output:
	// euro rate passed
	// 1 passed, 0 failed
}
