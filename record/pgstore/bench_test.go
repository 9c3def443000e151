package pgstore_test

import (
	"context"
	"fmt"
	"sync/atomic"
	"testing"
	"time"

	"github.com/convengine/engine"
	"github.com/convengine/engine/record"
)

// BenchmarkAppend appends one entry per call, each goroutine to conversations of its own, as
// a Recorder's writer and actions do: a transaction that locks one chain's row.
func BenchmarkAppend(b *testing.B) {
	s := open(b, database(b))
	ctx := context.Background()
	var workers atomic.Int64
	b.ReportAllocs()
	b.RunParallel(func(pb *testing.PB) {
		c := chainOf(fmt.Sprintf("bench-%d", workers.Add(1)))
		for i := 0; pb.Next(); i++ {
			if _, err := s.Append(ctx, c, []record.Entry{entry(c, fmt.Sprintf("%s-%d", c.Conversation, i))}, link); err != nil {
				b.Fatal(err)
			}
		}
	})
}

// BenchmarkRecordTurnPostgres is the Recorder's turn path over PostgreSQL: Recorder.Turn (the
// turn encoded, sealed and queued on the turn's goroutine) for each op, then the wait until
// the writer has appended them all, in batches, to 100 conversations. ns/op is thus the
// sustained cost of a turn; queue-ns/turn what the turn's goroutine spends. The figures of
// the database after it: its tables' bytes per turn (with indexes and TOAST), and a turn
// entry's row (pg_column_size).
func BenchmarkRecordTurnPostgres(b *testing.B) {
	url := database(b)
	s := open(b, url)
	r, err := record.New(s, &record.Options{Key: recordKey, MaxQueue: max(b.N, 10_000)})
	if err != nil {
		b.Fatal(err)
	}
	ctx := context.Background()
	turns := make([]*engine.RecordedTurn, 100)
	for i := range turns {
		turns[i] = turnOf(fmt.Sprintf("conv-%d", i), fmt.Sprintf("turn-%d", i))
	}
	b.ReportAllocs()
	b.ResetTimer()
	start := time.Now()
	for i := range b.N {
		r.Turn(ctx, turns[i%len(turns)])
	}
	queued := time.Since(start)
	if err := r.Flush(ctx); err != nil {
		b.Fatal(err)
	}
	b.StopTimer()
	if err := r.Close(ctx); err != nil {
		b.Fatal(err)
	}
	if st := r.Stats(); st.Dropped != 0 || st.Written < int64(b.N) {
		b.Fatalf("stats %+v after %d turns", st, b.N)
	}
	b.ReportMetric(float64(queued.Nanoseconds())/float64(b.N), "queue-ns/turn")
	z := measure(b, url)
	b.ReportMetric(float64(z.Tables["record_entries"])/float64(b.N), "entries-B/turn")
	b.ReportMetric(z.Row[string(record.KindTurn)], "row-B/turn")
	if b.N >= 1000 {
		b.Logf("after %d turns:\n%s", b.N, z)
	}
}

// BenchmarkRecordActionPostgres is the execute path's record over PostgreSQL: an action's
// evidence written synchronously (Recorder.Action), then its outcome, in 100 conversations.
func BenchmarkRecordActionPostgres(b *testing.B) {
	url := database(b)
	s := open(b, url)
	r, err := record.New(s, &record.Options{Key: recordKey})
	if err != nil {
		b.Fatal(err)
	}
	ctx := context.Background()
	actions := make([]*engine.RecordedAction, 100)
	for i := range actions {
		actions[i] = actionOf(fmt.Sprintf("conv-%d", i), fmt.Sprintf("action-%d", i))
	}
	b.ReportAllocs()
	b.ResetTimer()
	for i := range b.N {
		outcome, err := r.Action(ctx, actions[i%len(actions)])
		if err != nil {
			b.Fatal(err)
		}
		outcome(ctx, &engine.ActionOutcome{Time: time.Now(), Outcome: "ok", Result: `{"id":"tr-1","status":"done"}`})
	}
	b.StopTimer()
	if err := r.Close(ctx); err != nil {
		b.Fatal(err)
	}
	z := measure(b, url)
	b.ReportMetric(float64(z.Tables["record_entries"])/float64(b.N), "entries-B/action")
	b.ReportMetric(z.Row[string(record.KindAction)], "row-B/action")
	b.ReportMetric(z.Row[string(record.KindOutcome)], "row-B/outcome")
	if b.N >= 1000 {
		b.Logf("after %d actions and their outcomes:\n%s", b.N, z)
	}
}
