package batchwriter

import (
	"errors"
	"testing"
	"testing/synctest"
)

// TestFailedWriterKeepsNothing: after a failed write, what the producer adds is dropped, not
// kept in memory until the producer finishes.
func TestFailedWriterKeepsNothing(t *testing.T) {
	synctest.Test(t, func(t *testing.T) {
		w := Start(func([]int, bool) error { return errors.New("store down") })
		w.Add(0)
		synctest.Wait()
		for i := range 1000 {
			w.Add(i)
		}
		synctest.Wait()
		w.mu.Lock()
		n := len(w.pending)
		w.mu.Unlock()
		if n != 0 {
			t.Fatalf("%d items kept after the writing failed", n)
		}
		w.Finish()
	})
}
