package redisstore_test

import (
	"context"
	"errors"
	"log/slog"
	"sync"
	"testing"
	"time"

	"github.com/redis/go-redis/v9"

	"github.com/convengine/engine"
	"github.com/convengine/engine/redisstore"
	"github.com/convengine/engine/usage"
)

// Two meters, each with its own client and ledger, writing to one Redis, read back as one
// total, by either ledger, on a standalone server and on a cluster; a batch written twice
// counts once; the hashes expire after the retention.
func TestUsageLedgerSharedByReplicas(t *testing.T) {
	needRedis(t)
	for _, tc := range []struct {
		name   string
		client func() redis.UniversalClient
	}{
		{"standalone", func() redis.UniversalClient { return client(t, standalone) }},
		{"cluster", func() redis.UniversalClient { return clusterClient(t, clusterNode) }},
	} {
		t.Run(tc.name, func(t *testing.T) {
			prefix := "usage-" + tc.name + "-" + time.Now().Format("150405.000000") + ":"
			day := time.Now().UTC()
			var ledgers [2]*redisstore.UsageLedger
			var meters [2]*usage.Meter
			for i := range ledgers {
				ledgers[i] = redisstore.NewUsageLedger(redisstore.New(tc.client(), &redisstore.Options{Prefix: prefix, Timeout: generous}), 0)
				m, err := usage.New(&usage.Options{Sink: ledgers[i], MaxBatch: 16})
				if err != nil {
					t.Fatal(err)
				}
				meters[i] = m
			}
			ctx := context.Background()
			var wg sync.WaitGroup
			for i, m := range meters {
				obs := m.Observer(nil)
				wg.Go(func() {
					for j := range 100 {
						obs.ModelCall(ctx, engine.ModelCallEvent{Tenant: "pk_a", Step: 1 + j%2, Outcome: "ok", Model: "gpt-" + string(rune('a'+i)),
							Usage: engine.Usage{InputTokens: 1000, CachedTokens: 512, OutputTokens: 20, ReasoningTokens: 4, Reported: true}})
						obs.ModelCall(ctx, engine.ModelCallEvent{Tenant: "pk_b", Step: 1, Outcome: "cancelled", Estimated: engine.Usage{InputTokens: 30, OutputTokens: 3}})
						obs.ToolEnd(ctx, engine.ToolEvent{Tenant: "pk_a", Tool: "get_balance", Outcome: "ok"})
						obs.Speech(ctx, engine.SpeechEvent{Tenant: "pk_a", Kind: "transcription", AudioSeconds: 1.5})
						obs.Speech(ctx, engine.SpeechEvent{Tenant: "pk_a", Kind: "synthesis", AudioSeconds: 0.25, Characters: 12})
					}
				})
			}
			wg.Wait()
			for _, m := range meters {
				if err := m.Close(ctx); err != nil {
					t.Fatal(err)
				}
			}
			want := usage.Totals{InputTokens: 200_000, CachedInputTokens: 102_400, OutputTokens: 4000, ReasoningTokens: 800, ModelCalls: 200, Turns: 100,
				ToolCalls: 200, SpeechInSeconds: 300, SpeechOutSeconds: 50, SpeechOutCharacters: 2400}
			for i, l := range ledgers {
				rep, err := l.Usage(ctx, "pk_a", day, day)
				if err != nil {
					t.Fatal(err)
				}
				if rep.Totals != want {
					t.Errorf("ledger %d: totals\n %+v, want\n %+v", i, rep.Totals, want)
				}
				if len(rep.Models) != 2 || rep.Models[0].Model != "gpt-a" || rep.Models[0].InputTokens != 100_000 || rep.Models[1].ModelCalls != 100 {
					t.Errorf("ledger %d: models %+v", i, rep.Models)
				}
				if len(rep.Days) != 1 || rep.Days[0].Day != day.Format(time.DateOnly) {
					t.Errorf("ledger %d: days %+v", i, rep.Days)
				}
			}
			b, err := ledgers[1].Usage(ctx, "pk_b", day.AddDate(0, 0, -3), day)
			if err != nil || b.Totals.EstimatedTokens != 200*33 || b.Totals.InputTokens != 0 || b.Totals.ModelCalls != 200 {
				t.Errorf("pk_b: %+v, %v", b, err)
			}
			none, err := ledgers[0].Usage(ctx, "pk_none", day, day)
			if err != nil || none.Totals != (usage.Totals{}) || len(none.Days) != 0 {
				t.Errorf("a tenant with no usage: %+v, %v", none, err)
			}

			// The same batch again, as after a write whose answer was lost, counts once.
			batch := []usage.Record{{Time: day, Kind: usage.KindTool, Tenant: "pk_c", Outcome: "declined"}}
			for range 2 {
				if err := ledgers[0].WriteUsage(ctx, batch); err != nil {
					t.Fatal(err)
				}
			}
			if c, _ := ledgers[1].Usage(ctx, "pk_c", day, day); c.Totals.ToolCalls != 1 || c.Totals.ToolErrors != 1 {
				t.Errorf("a batch written twice: %+v", c.Totals)
			}

			ttl := tc.client().PTTL(ctx, prefix+"usage:{pk_a}:"+day.Format(time.DateOnly)).Val()
			if ttl <= usage.DefaultRetention || ttl > usage.DefaultRetention+24*time.Hour {
				t.Errorf("the day's hash expires in %v, want the retention after the day ends", ttl)
			}
		})
	}
}

// When Redis does not answer, the ledger's error says so, and the meter keeps the records and
// writes them once Redis answers again.
func TestUsageLedgerOutage(t *testing.T) {
	needRedis(t)
	srv := startTestRedis(t)
	c := redis.NewClient(&redis.Options{Addr: srv.Addr, ContextTimeoutEnabled: true, MaxRetries: -1})
	t.Cleanup(func() { c.Close() })
	ledger := redisstore.NewUsageLedger(redisstore.New(c, &redisstore.Options{Timeout: generous}), 0)
	srv.Stop()
	day := time.Now().UTC()
	if err := ledger.WriteUsage(t.Context(), []usage.Record{{Time: day, Kind: usage.KindTool, Tenant: "pk_a", Outcome: "ok"}}); !errors.Is(err, redisstore.ErrUnavailable) || !errors.Is(err, engine.ErrStoreUnavailable) {
		t.Fatalf("writing with Redis down: %v", err)
	}
	if _, err := ledger.Usage(t.Context(), "pk_a", day, day); !errors.Is(err, engine.ErrStoreUnavailable) {
		t.Fatalf("reading with Redis down: %v", err)
	}
	meter, err := usage.New(&usage.Options{Sink: ledger, Logger: slog.New(slog.DiscardHandler)})
	if err != nil {
		t.Fatal(err)
	}
	for range 3 {
		meter.Add(usage.Record{Time: day, Kind: usage.KindTool, Tenant: "pk_a", Outcome: "ok"})
	}
	time.Sleep(300 * time.Millisecond) // a write or two fails
	if err := srv.Start(); err != nil {
		t.Fatal(err)
	}
	ctx, cancel := context.WithTimeout(t.Context(), 20*time.Second)
	defer cancel()
	if err := meter.Close(ctx); err != nil {
		t.Fatal(err)
	}
	rep, err := ledger.Usage(t.Context(), "pk_a", day, day)
	if err != nil || rep.Totals.ToolCalls != 3 {
		t.Errorf("after the outage: %+v, %v", rep, err)
	}
}
