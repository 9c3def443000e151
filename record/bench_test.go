package record_test

import (
	"bytes"
	"context"
	"fmt"
	"io"
	"runtime"
	"testing"
	"time"

	"github.com/convengine/engine"
	"github.com/convengine/engine/internal/testkit"
	"github.com/convengine/engine/record"
	"github.com/convengine/engine/record/pgstore"
)

// heapPeak samples the heap while f runs and returns the highest HeapAlloc seen.
func heapPeak(f func()) uint64 {
	runtime.GC()
	stop := make(chan struct{})
	peak := make(chan uint64)
	go func() {
		var m runtime.MemStats
		var p uint64
		t := time.NewTicker(5 * time.Millisecond)
		defer t.Stop()
		for {
			runtime.ReadMemStats(&m)
			p = max(p, m.HeapAlloc)
			select {
			case <-stop:
				peak <- p
				return
			case <-t.C:
			}
		}
	}()
	f()
	close(stop)
	return <-peak
}

// TestAHugeConversationExportsAndVerifiesInBoundedMemory records 3,000 turns in one
// conversation and logs the heap's peak while it is exported and verified.
func TestAHugeConversationExportsAndVerifiesInBoundedMemory(t *testing.T) {
	if testing.Short() {
		t.Skip("3,000 turns")
	}
	f := newFixture(t, nil)
	ctx := context.Background()
	long := string(bytes.Repeat([]byte("words "), 200))
	for i := range 3000 {
		f.rec.Turn(ctx, turn("ann", "huge", t0.Add(time.Duration(i)*time.Second), fmt.Sprint("turn ", i, " ", long), long))
		if i%500 == 499 {
			if err := f.rec.Flush(ctx); err != nil {
				t.Fatal(err)
			}
			if _, err := f.rec.Checkpoint(ctx); err != nil {
				t.Fatal(err)
			}
		}
	}
	if err := f.rec.Flush(ctx); err != nil {
		t.Fatal(err)
	}
	var size int64
	cw := &countWriter{}
	peakExport := heapPeak(func() {
		if err := f.rec.Export(ctx, cw, record.ExportQuery{Tenant: "bank", User: "ann"}); err != nil {
			t.Fatal(err)
		}
	})
	size = cw.n
	var exp bytes.Buffer
	if err := f.rec.Export(ctx, &exp, record.ExportQuery{Tenant: "bank", User: "ann"}); err != nil {
		t.Fatal(err)
	}
	var rep *record.Report
	peakVerifyExport := heapPeak(func() {
		var err error
		rep, err = record.VerifyExport(bytes.NewReader(exp.Bytes()), f.pub)
		if err != nil || !rep.OK() || rep.Entries != 3000 {
			t.Fatalf("VerifyExport: %+v %v", rep, err)
		}
	})
	peakVerify := heapPeak(func() {
		if r := f.verify(t); !r.OK() || r.Entries != 3000 {
			t.Fatalf("Verify: %+v", r)
		}
	})
	t.Logf("3,000 turns: export %d bytes; heap peak while exporting to a discarding writer %.1f MiB, verifying the export %.1f MiB (of which the export itself %.1f MiB in memory), verifying the store %.1f MiB",
		size, mib(peakExport), mib(peakVerifyExport), mib(uint64(exp.Len())), mib(peakVerify))
}

func mib(n uint64) float64 { return float64(n) / (1 << 20) }

type countWriter struct{ n int64 }

func (c *countWriter) Write(p []byte) (int, error) { c.n += int64(len(p)); return len(p), nil }

var _ io.Writer = (*countWriter)(nil)

// BenchmarkRecordTurn is the Recorder's Turn path, written to SQLite in batches: ns/op is the
// engine's cost (encoding and queueing), and the bytes a turn takes in record_entries are
// reported.
func BenchmarkRecordTurn(b *testing.B) {
	f := newFixture(b, &record.Options{MaxQueue: 1 << 20})
	ctx := context.Background()
	rt := turn("ann", "bench", t0, "what is my balance on the checking account?", "Your checking balance is $1,234.56.")
	b.ReportAllocs()
	for b.Loop() {
		rt.Time = rt.Time.Add(time.Millisecond)
		f.rec.Turn(ctx, rt)
	}
	b.StopTimer()
	if err := f.rec.Flush(ctx); err != nil {
		b.Fatal(err)
	}
	reportRowBytes(b, f)
}

// reportRowBytes reports the mean size of an entry row (its columns' bytes).
func reportRowBytes(b *testing.B, f *fixture) {
	var n, total float64
	err := f.store.DB().QueryRow(`SELECT count(*), coalesce(sum(length(id) + length(chain) + 8 + length(kind) + length(at) + length(tenant) +
		length(environment) + length(user_id) + length(session_id) + length(conversation_id) + length(turn_id) + length(request_id) +
		length(prev) + length(hash) + coalesce(length(personal), 0) + coalesce(length(personal_hash), 0) +
		coalesce(length(evidence), 0) + coalesce(length(evidence_hash), 0)), 0) FROM record_entries`).Scan(&n, &total)
	if err != nil {
		b.Fatal(err)
	}
	if n > 0 {
		b.ReportMetric(total/n, "row-bytes/entry")
	}
}

// BenchmarkEngineTurn is the root's turn, in-process, with the record off and on (SQLite, and
// PostgreSQL from Debian's package on loopback): the record's cost to a turn, and the bytes a
// turn takes in record_entries.
func BenchmarkEngineTurn(b *testing.B) {
	for _, store := range []string{"off", "sqlite", "postgres"} {
		b.Run("records="+store, func(b *testing.B) {
			var f *fixture
			var rec *record.Recorder
			switch store {
			case "sqlite":
				f = newFixture(b, &record.Options{Key: signingKey, MaxQueue: 1 << 20})
				rec = f.rec
			case "postgres":
				srv := testkit.StartPostgresT(b)
				s, err := pgstore.Open(context.Background(), srv.NewDatabase(b))
				if err != nil {
					b.Fatal(err)
				}
				b.Cleanup(func() { s.Close() })
				if rec, err = record.New(s, &record.Options{Key: signingKey, MaxQueue: 1 << 20}); err != nil {
					b.Fatal(err)
				}
				b.Cleanup(func() { rec.Close(context.Background()) })
			}
			var hook engine.Recorder // nil with the record off, not a nil *Recorder
			if rec != nil {
				hook = rec
			}
			e := newBank(b, hook)
			b.ReportAllocs()
			i := 0
			for b.Loop() {
				i++
				say(b, e, fmt.Sprint("conv-", i%50), "what is my balance?")
			}
			b.StopTimer()
			if rec != nil {
				if err := rec.Flush(context.Background()); err != nil {
					b.Fatal(err)
				}
			}
			if f != nil {
				reportRowBytes(b, f)
			}
		})
	}
}
