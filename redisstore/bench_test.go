package redisstore_test

import (
	"errors"
	"fmt"
	"slices"
	"strconv"
	"sync/atomic"
	"testing"
	"time"

	"github.com/convengine/engine"
	"github.com/convengine/engine/enginetest"
	"github.com/convengine/engine/internal/testkit"
	"github.com/convengine/engine/redisstore"
)

// benchWindow is how long the benchmarks' records last, short so that the in-memory store,
// which sweeps what expired as it writes, holds about as much as a busy replica would.
const benchWindow = 10 * time.Millisecond

// benchStores are the in-memory store, for comparison, and Redis on loopback, standalone, as a
// one-node cluster, and behind Sentinel with a replica that confirms each single-use write
// (and, for the cost of that, without).
func benchStores(b *testing.B) []struct {
	name  string
	store enginetest.Store
} {
	needRedis(b)
	p := prefix(b) + strconv.FormatInt(time.Now().UnixNano(), 36) + ":"
	f := testkit.StartRedisFailoverT(b)
	replicated, err := redisstore.NewFromURL(f.URL(), &redisstore.Options{Prefix: p})
	if err != nil {
		b.Fatal(err)
	}
	unconfirmed, err := redisstore.NewFromURL(f.URL()+"&replica_acks=0", &redisstore.Options{Prefix: p})
	if err != nil {
		b.Fatal(err)
	}
	b.Cleanup(func() { replicated.Close(); unconfirmed.Close() })
	return []struct {
		name  string
		store enginetest.Store
	}{
		{"memory", &engine.MemoryStore{}},
		{"redis", redisstore.New(client(b, standalone), &redisstore.Options{Prefix: p})},
		{"cluster", redisstore.New(clusterClient(b, clusterNode), &redisstore.Options{Prefix: p})},
		{"sentinel", replicated},
		{"sentinel-unconfirmed", unconfirmed},
	}
}

// bench runs op on fresh ids: one caller (with the median and 99th percentile of its latency),
// then 64 at once (ops/s is the store's throughput).
func bench(b *testing.B, op func(st enginetest.Store, id string) error) {
	for _, s := range benchStores(b) {
		var n atomic.Int64
		next := func() string { return "pk_bench:" + strconv.FormatInt(n.Add(1), 10) }
		b.Run(s.name, func(b *testing.B) {
			var took []time.Duration
			for b.Loop() {
				start := time.Now()
				if err := op(s.store, next()); err != nil {
					b.Fatal(err)
				}
				took = append(took, time.Since(start))
			}
			slices.Sort(took)
			b.ReportMetric(float64(took[len(took)/2])/1e3, "p50-µs")
			b.ReportMetric(float64(took[len(took)*99/100])/1e3, "p99-µs")
		})
		b.Run(s.name+"/parallel", func(b *testing.B) {
			b.SetParallelism(32)
			start := time.Now()
			b.RunParallel(func(pb *testing.PB) {
				for pb.Next() {
					if err := op(s.store, next()); err != nil {
						b.Error(err)
						return
					}
				}
			})
			b.ReportMetric(float64(b.N)/time.Since(start).Seconds(), "ops/s")
		})
	}
}

// BenchmarkClaim measures Claim, the replay window's check of one proof.
func BenchmarkClaim(b *testing.B) {
	bench(b, func(st enginetest.Store, id string) error {
		ok, err := st.Claim(b.Context(), id, time.Now().Add(benchWindow))
		if err == nil && !ok {
			b.Fatal("a fresh id was refused")
		}
		return err
	})
}

// BenchmarkBeginAction measures BeginAction claiming a fresh action.
func BenchmarkBeginAction(b *testing.B) {
	bench(b, func(st enginetest.Store, id string) error {
		_, err := st.BeginAction(b.Context(), id, id, time.Now().Add(benchWindow))
		return err
	})
}

// BenchmarkExecute measures the store's part of one execute: BeginAction, then FinishAction.
func BenchmarkExecute(b *testing.B) {
	reply := []byte(`{"done":{"type":"success","title":"Money sent","line1":"$20.00 to Alex","line2":"New balance $1,214.56"},"speak":"Done. I sent $20.00 to Alex."}`)
	bench(b, func(st enginetest.Store, id string) error {
		if _, err := st.BeginAction(b.Context(), id, id, time.Now().Add(benchWindow)); err != nil {
			return err
		}
		return st.FinishAction(b.Context(), id, id, reply, time.Now().Add(benchWindow))
	})
}

// BenchmarkAllow measures a request's rate limits: its user's bucket and its tenant's, taken
// together, for users of one tenant in turn (one caller, then 64 at once), in memory and in
// Redis. The limits are high enough never to refuse.
func BenchmarkAllow(b *testing.B) {
	needRedis(b)
	p := prefix(b) + strconv.FormatInt(time.Now().UnixNano(), 36) + ":"
	limiters := []struct {
		name string
		rl   engine.RateLimiter
	}{
		{"memory", &engine.MemoryRateLimiter{}},
		{"redis", redisstore.New(client(b, standalone), &redisstore.Options{Prefix: p})},
		{"cluster", redisstore.New(clusterClient(b, clusterNode), &redisstore.Options{Prefix: p})},
	}
	var n atomic.Int64
	limits := func() []engine.RateLimit {
		return []engine.RateLimit{
			{Tenant: "pk_bench", User: fmt.Sprintf("%032x", n.Add(1)%10_000), PerMinute: 600, Burst: 1_000_000},
			{Tenant: "pk_bench", PerMinute: 60_000_000, Burst: 1_000_000_000},
		}
	}
	allow := func(b *testing.B, rl engine.RateLimiter) bool {
		ok, _, err := rl.Allow(b.Context(), limits())
		if err == nil && !ok {
			err = errors.New("a request was refused")
		}
		if err != nil {
			b.Error(err)
		}
		return err == nil
	}
	for _, l := range limiters {
		b.Run(l.name, func(b *testing.B) {
			var took []time.Duration
			for b.Loop() {
				start := time.Now()
				if !allow(b, l.rl) {
					return
				}
				took = append(took, time.Since(start))
			}
			slices.Sort(took)
			b.ReportMetric(float64(took[len(took)/2])/1e3, "p50-µs")
			b.ReportMetric(float64(took[len(took)*99/100])/1e3, "p99-µs")
		})
		b.Run(l.name+"/parallel", func(b *testing.B) {
			b.SetParallelism(32)
			start := time.Now()
			b.RunParallel(func(pb *testing.PB) {
				for pb.Next() {
					if !allow(b, l.rl) {
						return
					}
				}
			})
			b.ReportMetric(float64(b.N)/time.Since(start).Seconds(), "ops/s")
		})
	}
}

// turnLogs are the turn log in Redis on loopback, as is and sealed (Options.SealKey).
func turnLogs(b *testing.B) []struct {
	name string
	log  engine.TurnLog
} {
	needRedis(b)
	p := prefix(b) + strconv.FormatInt(time.Now().UnixNano(), 36) + ":"
	return []struct {
		name string
		log  engine.TurnLog
	}{
		{"plain", redisstore.New(client(b, standalone), &redisstore.Options{Prefix: p})},
		{"sealed", redisstore.New(client(b, standalone), &redisstore.Options{Prefix: p, SealKey: sealKey})},
	}
}

// benchEvents is a batch of a turn's events as the recorder writes them: speech deltas and a
// done with a widget, some 700 bytes.
var benchEvents = []engine.LoggedEvent{
	{ID: 1, Name: "start", Data: []byte(`{"turnId":"0f6c1d2e-3a4b-4c5d-8e9f-0a1b2c3d4e5f","conversationId":"c1","resumable":true}`)},
	{ID: 2, Name: "speak", Data: []byte(`{"delta":"Your Everyday Checking "}`)},
	{ID: 3, Name: "speak", Data: []byte(`{"delta":"balance is $1,234.56."}`)},
	{ID: 4, Name: "done", Data: []byte(`{"speak":"Your Everyday Checking balance is $1,234.56.","widgets":[{"type":"balance","account":"Everyday Checking","amount":"$1,234.56","asOf":"2026-11-26T10:00:00Z"}],"meta":{"conversationId":"c1","turnId":"0f6c1d2e-3a4b-4c5d-8e9f-0a1b2c3d4e5f","locale":"en"}}`)},
}

// BenchmarkAppendEvents measures writing a turn's four events in one batch, as is and sealed.
// benchTurns numbers the turns BenchmarkAppendEvents appends.
var benchTurns atomic.Int64

func BenchmarkAppendEvents(b *testing.B) {
	owner := &engine.TurnOwner{Tenant: "pk_bench", User: "u", Session: "s"}
	for _, l := range turnLogs(b) {
		b.Run(l.name, func(b *testing.B) {
			for b.Loop() {
				// A new turn each time, across runs too: the server keeps the last ones a second.
				turn := "bench-append-" + l.name + strconv.FormatInt(benchTurns.Add(1), 10)
				if err := l.log.AppendEvents(b.Context(), turn, owner, benchEvents, true, time.Now().Add(time.Second)); err != nil {
					b.Fatal(err)
				}
			}
		})
	}
}

// BenchmarkReadEvents measures a resume's read of a turn's four events, as is and sealed.
func BenchmarkReadEvents(b *testing.B) {
	owner := &engine.TurnOwner{Tenant: "pk_bench", User: "u", Session: "s"}
	for _, l := range turnLogs(b) {
		if err := l.log.AppendEvents(b.Context(), "bench-read-"+l.name, owner, benchEvents, true, time.Now().Add(time.Minute)); err != nil {
			b.Fatal(err)
		}
		b.Run(l.name, func(b *testing.B) {
			for b.Loop() {
				rec, err := l.log.ReadEvents(b.Context(), "bench-read-"+l.name, 0, 10, 0)
				if err != nil || len(rec.Events) != len(benchEvents) {
					b.Fatal(rec, err)
				}
			}
		})
	}
}
