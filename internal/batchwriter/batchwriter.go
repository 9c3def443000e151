// Package batchwriter writes a sequence to a store in order and in batches, from a goroutine
// of its own, so that the producer never waits for the store.
package batchwriter

import (
	"sync"
	"time"
)

// MaxBatch bounds the items of one write.
const MaxBatch = 64

// Writer queues what the producer adds, in memory, and writes it. When a write fails, it stops
// writing and drops what is added afterwards: a store with a hole in it would read as whole.
type Writer[E any] struct {
	write func(batch []E, last bool) error
	beat  time.Duration // see StartBeating
	wake  chan struct{}
	ended chan struct{}

	mu      sync.Mutex
	pending []E
	over    bool // the producer has finished: what is pending is the last
}

// Start starts a writer whose goroutine calls write with each batch of at most MaxBatch items,
// last marking the final one (which may be empty). A write that returns an error is the last.
func Start[E any](write func(batch []E, last bool) error) *Writer[E] {
	return StartBeating(write, 0)
}

// StartBeating is Start, with a writer that also writes an empty batch when beat has passed
// without a write (no more than 2×beat apart): the store then knows that the producer lives,
// such as a turn's replica that renews its lease on the turn while a tool call runs. A beat of
// 0 or less is Start's writer.
func StartBeating[E any](write func(batch []E, last bool) error, beat time.Duration) *Writer[E] {
	w := &Writer[E]{write: write, beat: beat, wake: make(chan struct{}, 1), ended: make(chan struct{})}
	go w.run()
	return w
}

// Add queues one item; it never blocks.
func (w *Writer[E]) Add(e E) {
	w.mu.Lock()
	w.pending = append(w.pending, e)
	w.mu.Unlock()
	w.signal()
}

func (w *Writer[E]) signal() {
	select {
	case w.wake <- struct{}{}:
	default:
	}
}

// Finish writes what is queued as the last batch and waits until it is written, or the
// writing failed.
func (w *Writer[E]) Finish() {
	w.mu.Lock()
	w.over = true
	w.mu.Unlock()
	w.signal()
	<-w.ended
}

// take returns up to MaxBatch pending items, and whether they are the last.
func (w *Writer[E]) take(batch []E) ([]E, bool) {
	w.mu.Lock()
	defer w.mu.Unlock()
	n := min(len(w.pending), MaxBatch)
	batch = append(batch[:0], w.pending[:n]...)
	w.pending = w.pending[n:]
	if len(w.pending) == 0 {
		w.pending = nil // lets the backing array go
	}
	return batch, w.over && len(w.pending) == 0
}

func (w *Writer[E]) run() {
	defer close(w.ended)
	batch := make([]E, 0, MaxBatch)
	var beats <-chan time.Time
	if w.beat > 0 {
		t := time.NewTicker(w.beat)
		defer t.Stop()
		beats = t.C
	}
	wrote := false // since the last beat
	for {
		select {
		case <-w.wake:
		case <-beats:
			if !wrote {
				if err := w.write(batch[:0], false); err != nil {
					w.drain()
					return
				}
			}
			wrote = false
			continue
		}
		for {
			var last bool
			batch, last = w.take(batch)
			if len(batch) == 0 && !last {
				break // nothing more yet
			}
			if err := w.write(batch, last); err != nil {
				w.drain()
				return
			}
			wrote = true
			if last {
				return
			}
		}
	}
}

// drain drops what is added from now on, until the producer finishes.
func (w *Writer[E]) drain() {
	for {
		w.mu.Lock()
		w.pending = nil
		over := w.over
		w.mu.Unlock()
		if over {
			return
		}
		<-w.wake
	}
}
