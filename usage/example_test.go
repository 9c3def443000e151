package usage_test

import (
	"context"
	"fmt"
	"time"

	"github.com/convengine/engine"
	"github.com/convengine/engine/usage"
)

func Example() {
	ledger := &usage.Memory{}
	meter, err := usage.New(&usage.Options{Sink: ledger})
	if err != nil {
		panic(err)
	}
	// The engine calls the hooks of meter.Observer(next), given as Config.Observer.
	obs := meter.Observer(nil)
	ctx := context.Background()
	obs.ModelCall(ctx, engine.ModelCallEvent{Tenant: "pk_demo", Step: 1, Outcome: "ok", Model: "gpt-4o-mini",
		Usage: engine.Usage{InputTokens: 1200, CachedTokens: 1024, OutputTokens: 18, Reported: true}})
	obs.ToolEnd(ctx, engine.ToolEvent{Tenant: "pk_demo", Tool: "get_balance", Outcome: "ok"})
	if err := meter.Close(ctx); err != nil { // writes what is buffered
		panic(err)
	}
	rep, _ := ledger.Usage(ctx, "pk_demo", time.Now(), time.Now())
	fmt.Println(rep.Totals.InputTokens, rep.Totals.CachedInputTokens, rep.Totals.OutputTokens, rep.Totals.ModelCalls, rep.Totals.ToolCalls)
	// Output: 1200 1024 18 1 1
}
