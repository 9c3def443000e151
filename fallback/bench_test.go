package fallback_test

import (
	"context"
	"iter"
	"testing"

	"github.com/convengine/engine"
	"github.com/convengine/engine/fallback"
	"github.com/convengine/engine/intent"
)

// deltas is a model that streams 40 deltas and a finish at once, as the load tool's bench
// model does at zero delay.
type deltas struct{}

func (deltas) Stream(_ context.Context, _ *engine.ModelRequest) iter.Seq2[engine.ModelEvent, error] {
	return func(yield func(engine.ModelEvent, error) bool) {
		for range 40 {
			if !yield(engine.TextEvent("word "), nil) {
				return
			}
		}
		yield(engine.FinishEvent(engine.FinishStop), nil)
	}
}

// BenchmarkCompletion is one completion of the model alone, and of a chain whose primary is
// that model, healthy, with the offline model as its last resort: the chain's cost.
func BenchmarkCompletion(b *testing.B) {
	chain, err := fallback.New(nil, fallback.Named{Name: "primary", Model: deltas{}},
		fallback.Named{Name: "intent", Model: intent.New(nil), Degraded: true})
	if err != nil {
		b.Fatal(err)
	}
	req := request()
	for _, bc := range []struct {
		name  string
		model engine.Model
	}{{"model", deltas{}}, {"chain", chain}} {
		b.Run(bc.name, func(b *testing.B) {
			b.ReportAllocs()
			ctx := context.Background()
			for b.Loop() {
				for _, err := range bc.model.Stream(ctx, req) {
					if err != nil {
						b.Fatal(err)
					}
				}
			}
		})
	}
}
