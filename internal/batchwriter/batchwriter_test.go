package batchwriter_test

import (
	"errors"
	"fmt"
	"slices"
	"sync"
	"testing"
	"testing/synctest"
	"time"

	"github.com/convengine/engine/internal/batchwriter"
)

// store records the writes of a Writer[int]; a write waits while the store is held.
type store struct {
	mu      sync.Mutex
	batches [][]int
	lasts   []bool
	held    chan struct{} // nil: writes do not wait
	failAt  int           // the write (from 1) that fails; 0 for none
}

func (s *store) write(batch []int, last bool) error {
	s.mu.Lock()
	s.batches = append(s.batches, slices.Clone(batch))
	s.lasts = append(s.lasts, last)
	n, held := len(s.batches), s.held
	s.mu.Unlock()
	if held != nil {
		<-held
	}
	if n == s.failAt {
		return errors.New("store down")
	}
	return nil
}

func (s *store) hold() {
	s.mu.Lock()
	s.held = make(chan struct{})
	s.mu.Unlock()
}

func (s *store) release() {
	s.mu.Lock()
	close(s.held)
	s.held = nil
	s.mu.Unlock()
}

func (s *store) writes() ([][]int, []bool) {
	s.mu.Lock()
	defer s.mu.Unlock()
	return slices.Clone(s.batches), slices.Clone(s.lasts)
}

func TestOrderAndLast(t *testing.T) {
	synctest.Test(t, func(t *testing.T) {
		var s store
		w := batchwriter.Start(s.write)
		var want []int
		for i := range 1000 {
			w.Add(i)
			want = append(want, i)
			if i%37 == 0 {
				synctest.Wait()
			}
		}
		w.Finish()
		batches, lasts := s.writes()
		var got []int
		for i, b := range batches {
			if len(b) > batchwriter.MaxBatch {
				t.Errorf("batch %d holds %d items, past MaxBatch", i, len(b))
			}
			if lasts[i] != (i == len(batches)-1) {
				t.Errorf("batch %d of %d: last = %v", i+1, len(batches), lasts[i])
			}
			got = append(got, b...)
		}
		if !slices.Equal(got, want) {
			t.Fatalf("written %v, want 0..999 in order", got)
		}
	})
}

func TestFinishWithNothing(t *testing.T) {
	synctest.Test(t, func(t *testing.T) {
		var s store
		batchwriter.Start(s.write).Finish()
		batches, lasts := s.writes()
		if len(batches) != 1 || len(batches[0]) != 0 || !lasts[0] {
			t.Fatalf("writes %v, last %v; want one empty last batch", batches, lasts)
		}
	})
}

// TestBatching: what is added while a write is in flight is written together by the next,
// at most MaxBatch at a time.
func TestBatching(t *testing.T) {
	synctest.Test(t, func(t *testing.T) {
		var s store
		s.hold()
		w := batchwriter.Start(s.write)
		w.Add(0)
		synctest.Wait() // the write of [0] is in flight
		for i := 1; i <= 150; i++ {
			w.Add(i) // never waits for the store
		}
		synctest.Wait()
		if batches, _ := s.writes(); len(batches) != 1 {
			t.Fatalf("%d writes while the first was in flight", len(batches))
		}
		s.release()
		synctest.Wait()
		w.Finish()
		batches, lasts := s.writes()
		want := fmt.Sprint([][]int{{0}, seq(1, 64), seq(65, 128), seq(129, 150), {}})
		if fmt.Sprint(batches) != want {
			t.Fatalf("batches %v,\nwant %v", batches, want)
		}
		if !slices.Equal(lasts, []bool{false, false, false, false, true}) {
			t.Fatalf("last %v", lasts)
		}
	})
}

// TestFinishWritesAll: Finish with more than MaxBatch queued writes it all, last marking only
// the final batch.
func TestFinishWritesAll(t *testing.T) {
	synctest.Test(t, func(t *testing.T) {
		var s store
		s.hold()
		w := batchwriter.Start(s.write)
		w.Add(0)
		synctest.Wait() // the write of [0] is in flight
		for i := 1; i <= 150; i++ {
			w.Add(i)
		}
		finished := make(chan struct{})
		go func() {
			w.Finish()
			close(finished)
		}()
		synctest.Wait()
		s.release()
		<-finished
		batches, lasts := s.writes()
		want := fmt.Sprint([][]int{{0}, seq(1, 64), seq(65, 128), seq(129, 150)})
		if fmt.Sprint(batches) != want {
			t.Fatalf("batches %v,\nwant %v", batches, want)
		}
		if !slices.Equal(lasts, []bool{false, false, false, true}) {
			t.Fatalf("last %v", lasts)
		}
	})
}

func seq(from, to int) []int {
	var s []int
	for i := from; i <= to; i++ {
		s = append(s, i)
	}
	return s
}

// TestFinishWaits: Finish returns once what was added is written, not before.
func TestFinishWaits(t *testing.T) {
	synctest.Test(t, func(t *testing.T) {
		var s store
		w := batchwriter.Start(s.write)
		w.Add(1)
		synctest.Wait()
		s.hold()
		w.Add(2)
		synctest.Wait() // the write of [2] is in flight
		finished := make(chan struct{})
		go func() {
			w.Finish()
			close(finished)
		}()
		synctest.Wait()
		select {
		case <-finished:
			t.Fatal("Finish returned while the last batch was being written")
		default:
		}
		s.release()
		<-finished
		if batches, lasts := s.writes(); fmt.Sprint(batches) != "[[1] [2] []]" || !lasts[2] {
			t.Fatalf("batches %v, last %v", batches, lasts)
		}
	})
}

// TestError: a write that fails is the last; what is added afterwards is dropped, and Finish
// returns.
func TestError(t *testing.T) {
	for _, failAt := range []int{1, 2} {
		t.Run(fmt.Sprint("write ", failAt), func(t *testing.T) {
			synctest.Test(t, func(t *testing.T) {
				s := store{failAt: failAt}
				w := batchwriter.Start(s.write)
				for i := range 5 {
					w.Add(i)
					synctest.Wait()
				}
				w.Finish()
				batches, lasts := s.writes()
				if len(batches) != failAt || slices.Contains(lasts, true) {
					t.Fatalf("writes %v, last %v: want %d writes, none after the failure", batches, lasts, failAt)
				}
				w.Add(9) // after the end, a no-op
			})
		})
	}
}

// TestErrorWhileAdding: the producer keeps adding after a failed write without ever waiting.
func TestErrorWhileAdding(t *testing.T) {
	synctest.Test(t, func(t *testing.T) {
		s := store{failAt: 1}
		w := batchwriter.Start(s.write)
		for i := range 10000 {
			w.Add(i)
		}
		w.Finish()
		if batches, _ := s.writes(); len(batches) != 1 {
			t.Fatalf("%d writes after the first failed", len(batches))
		}
	})
}

// TestBeats: a beating writer writes an empty batch when a beat passed without a write, and
// none while items keep it writing; the beats stop with the writer.
func TestBeats(t *testing.T) {
	synctest.Test(t, func(t *testing.T) {
		var s store
		w := batchwriter.StartBeating(s.write, time.Second)
		w.Add(1)
		synctest.Wait()
		time.Sleep(1500 * time.Millisecond) // the first beat saw a write: no empty batch
		synctest.Wait()
		if got, _ := s.writes(); len(got) != 1 {
			t.Fatalf("writes after one beat: %v, want the item's alone", got)
		}
		time.Sleep(time.Second) // the second beat saw none
		synctest.Wait()
		got, lasts := s.writes()
		if len(got) != 2 || len(got[1]) != 0 || lasts[1] {
			t.Fatalf("writes after two beats: %v %v, want an empty batch that is not the last", got, lasts)
		}
		w.Finish()
		time.Sleep(5 * time.Second)
		synctest.Wait()
		if got, _ := s.writes(); len(got) != 3 {
			t.Fatalf("writes after Finish: %v, want the last batch and no beat", got)
		}
	})
}
