package gotools_test

import (
	"bytes"
	"context"
	"fmt"
	"io"
	"log"
	"log/slog"

	"github.com/convengine/engine"
	"github.com/convengine/engine/enginetest"
	"github.com/convengine/engine/gotools"
)

// BalanceArgs are the arguments of get_balance: the model must give the account, may give the
// currency.
type BalanceArgs struct {
	Account  string `json:"account" jsonschema:"the last four digits of the account"`
	Currency string `json:"currency,omitempty" jsonschema:"ISO 4217 code of the answer; the account's by default"`
}

// Balance is get_balance's result.
type Balance struct {
	Account string  `json:"account"`
	Balance float64 `json:"balance"`
}

func Example() {
	getBalance := gotools.Func("get_balance", "Get the balance of one of the user's accounts.",
		func(ctx context.Context, env *engine.ToolEnv, in BalanceArgs) (Balance, error) {
			// env says whose call it is: env.Tenant, env.Environment, env.UserToken.
			if in.Account != "1234" {
				return Balance{}, fmt.Errorf("no account ends in %s", in.Account)
			}
			return Balance{Account: in.Account, Balance: 1520.75}, nil
		}, gotools.Status("Checking your balance"))
	tools, err := gotools.New(getBalance)
	if err != nil {
		log.Fatal(err)
	}

	// A model that calls the tool, then reads its result.
	model := enginetest.ModelFunc(func(_ context.Context, req *engine.ModelRequest) []engine.ModelEvent {
		if enginetest.StepOf(req.Messages) == 0 {
			fmt.Println("parameters:", string(req.Tools[0].Parameters))
			return []engine.ModelEvent{enginetest.ToolCall("c1", "get_balance", `{"account":"1234"}`)}
		}
		result := req.Messages[len(req.Messages)-1].Content
		fmt.Println("result:", result)
		return enginetest.Text("You have $1,520.75.")
	})

	tenants, err := engine.NewStaticTenants(&engine.Tenant{Key: "pk_example", Name: "Example",
		Environments: map[string]*engine.Environment{engine.EnvProduction: {BackendURL: "https://api.example.com"}}})
	if err != nil {
		log.Fatal(err)
	}
	eng, err := engine.New(engine.Config{Tenants: tenants, Model: model, Toolset: tools,
		SigningKey: bytes.Repeat([]byte("k"), 32), Logger: slog.New(slog.NewTextHandler(io.Discard, nil))})
	if err != nil {
		log.Fatal(err)
	}
	defer eng.Close()

	caller := &engine.Caller{EngineKey: "pk_example", UserToken: "the-user's-backend-token"}
	for ev, err := range eng.Turn(context.Background(), caller, &engine.TurnInput{Transcript: "What's my balance?"}) {
		if err != nil {
			log.Fatal(err)
		}
		if ev.Type == engine.EventDone {
			fmt.Println("speak:", ev.Spec.Speak)
		}
	}
	// Output:
	// parameters: {"type":"object","properties":{"account":{"type":"string","description":"the last four digits of the account"},"currency":{"type":"string","description":"ISO 4217 code of the answer; the account's by default"}},"required":["account"],"additionalProperties":false}
	// result: {"account":"1234","balance":1520.75}
	// speak: You have $1,520.75.
}
