package pgstore_test

import (
	"context"
	"fmt"
	"sync/atomic"
	"testing"

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
