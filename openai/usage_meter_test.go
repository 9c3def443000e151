package openai_test

import (
	"context"
	"io"
	"net/http"
	"strconv"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/convengine/engine"
	"github.com/convengine/engine/enginetest"
	"github.com/convengine/engine/examples/demobank"
	"github.com/convengine/engine/usage"
)

// keptRecords is a usage sink that keeps every record.
type keptRecords struct {
	mu      sync.Mutex
	records []usage.Record
}

func (k *keptRecords) WriteUsage(_ context.Context, rs []usage.Record) error {
	k.mu.Lock()
	defer k.mu.Unlock()
	k.records = append(k.records, rs...)
	return nil
}

// TestShapeUsageMetered: the balance turn of every shape, posted to the engine's handler with
// this package's model and a usage meter, leaves a record of each call of the model whose
// tokens are what the fixture reported (or, for a shape that reports none, the engine's
// estimate, marked), and a record of the tool call; the ledger's totals are their sums.
func TestShapeUsageMetered(t *testing.T) {
	for _, shape := range enginetest.ServerShapes() {
		if shape.Fails {
			continue
		}
		t.Run(shape.Name, func(t *testing.T) {
			kept, ledger := &keptRecords{}, &usage.Memory{}
			meter, err := usage.New(&usage.Options{Sink: sinks{kept, ledger}})
			if err != nil {
				t.Fatal(err)
			}
			replay := enginetest.NewReplayServer(t, enginetest.OpenAIFixtures(), enginetest.ShapeRoute(shape))
			d := enginetest.NewDemo(t, &enginetest.DemoOptions{Config: engine.Config{Model: newModel(t, replay.URL, nil), Observer: meter.Observer(nil)}})
			req, _ := http.NewRequest(http.MethodPost, d.URL+"/engine", strings.NewReader(`{"transcript":"What's my balance?"}`))
			req.Header.Set("X-Engine-Key", demobank.EngineKey)
			req.Header.Set("X-Token", enginetest.DemoUserToken)
			req.Header.Set("X-Request-ID", "prod-shape-"+shape.Name)
			req.Header.Set("Content-Type", "application/json")
			resp, err := http.DefaultClient.Do(req)
			if err != nil {
				t.Fatal(err)
			}
			body, _ := io.ReadAll(resp.Body)
			resp.Body.Close()
			if resp.StatusCode != http.StatusOK || !strings.Contains(string(body), "event: done") {
				t.Fatalf("the turn: %s %s", resp.Status, body)
			}
			if err := meter.Close(t.Context()); err != nil {
				t.Fatal(err)
			}
			var model []usage.Record
			tools := 0
			for _, r := range kept.records {
				switch r.Kind {
				case usage.KindModel:
					model = append(model, r)
				case usage.KindTool:
					tools++
				}
			}
			if len(model) != 2 || tools != 1 {
				t.Fatalf("%d records of calls of the model and %d of tool calls, want 2 and 1: %+v", len(model), tools, kept.records)
			}
			var want usage.Totals
			for i, r := range model {
				fixture := fixtureUsage(t, "shape_"+shape.Name+"_"+strconv.Itoa(i+1))
				if r.Tenant != demobank.EngineKey || r.Step != i+1 || r.Outcome != "ok" || r.RequestID != "prod-shape-"+shape.Name || r.User == "" {
					t.Errorf("record %d: %+v", i+1, r)
				}
				if fixture.Reported {
					if r.Estimated || r.InputTokens != int64(fixture.InputTokens) || r.OutputTokens != int64(fixture.OutputTokens) ||
						r.CachedInputTokens != int64(fixture.CachedTokens) || r.ReasoningTokens != int64(fixture.ReasoningTokens) {
						t.Errorf("record %d: %+v, want the fixture's %+v", i+1, r, fixture)
					}
					want.InputTokens += int64(fixture.InputTokens)
					want.OutputTokens += int64(fixture.OutputTokens)
					want.CachedInputTokens += int64(fixture.CachedTokens)
					want.ReasoningTokens += int64(fixture.ReasoningTokens)
				} else {
					if !r.Estimated || r.InputTokens == 0 || r.OutputTokens == 0 {
						t.Errorf("record %d: no usage reported, and the record is %+v", i+1, r)
					}
					want.EstimatedTokens += r.InputTokens + r.OutputTokens
				}
			}
			rep, err := ledger.Usage(t.Context(), demobank.EngineKey, time.Now(), time.Now())
			if err != nil {
				t.Fatal(err)
			}
			got := rep.Totals
			if got.InputTokens != want.InputTokens || got.OutputTokens != want.OutputTokens || got.CachedInputTokens != want.CachedInputTokens ||
				got.ReasoningTokens != want.ReasoningTokens || got.EstimatedTokens != want.EstimatedTokens || got.ModelCalls != 2 || got.ToolCalls != 1 || got.Turns != 1 {
				t.Errorf("the ledger's totals %+v, want the tokens %+v", got, want)
			}
		})
	}
}

// sinks writes to each of its sinks in turn.
type sinks []usage.Sink

func (s sinks) WriteUsage(ctx context.Context, rs []usage.Record) error {
	for _, k := range s {
		if err := k.WriteUsage(ctx, rs); err != nil {
			return err
		}
	}
	return nil
}
