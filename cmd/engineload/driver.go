package main

import (
	"cmp"
	"context"
	"errors"
	"fmt"
	"sync"
	"sync/atomic"
	"time"
)

// plan is how a phase drives its workers.
type plan struct {
	// concurrency is the number of workers: operations in flight at most.
	concurrency int
	// n is the number of operations of the phase; zero runs for duration.
	n int
	// duration ends the phase (no new operation starts after it); zero runs n operations.
	duration time.Duration
	// rate, when positive, starts operations at this many per second whatever their latency
	// (open loop), with at most concurrency in flight; zero starts the next operation of a
	// worker when its last one ended (closed loop).
	rate float64
	// warmup operations run before the measured ones and are not counted.
	warmup int
}

// prepare makes the phase's workers, concurrently.
func prepare(ctx context.Context, m mode, t *target, p plan) ([]worker, error) {
	workers := make([]worker, p.concurrency)
	errs := make([]error, p.concurrency)
	sem := make(chan struct{}, 32) // sessions and widgets are asked for 32 at a time
	var wg sync.WaitGroup
	for i := range workers {
		wg.Go(func() {
			sem <- struct{}{}
			defer func() { <-sem }()
			s := slot{index: i, count: p.concurrency, ops: share(p.n, p.concurrency, i), warmup: share(p.warmup, p.concurrency, i)}
			workers[i], errs[i] = m.worker(ctx, t, s)
		})
	}
	wg.Wait()
	failed := 0
	var first error
	for _, err := range errs {
		if err != nil {
			failed++
			first = cmp.Or(first, err)
		}
	}
	if first != nil {
		return nil, fmt.Errorf("preparing the workers for %s: %d of %d failed, the first with: %w", t.name, failed, len(errs), first)
	}
	return workers, nil
}

// share is worker i's part of n operations split between count workers.
func share(n, count, i int) int {
	s := n / count
	if i < n%count {
		s++
	}
	return s
}

// drive runs the workers as p says, recording each operation in rec, and returns how long the
// phase took: from its start to the end of its last operation. live counts the operations in
// flight.
func drive(ctx context.Context, workers []worker, p plan, rec *recorder, live *atomic.Int64) (time.Duration, error) {
	start := time.Now()
	var stopAt time.Time
	if p.duration > 0 {
		stopAt = start.Add(p.duration)
	}
	var (
		fatal     error
		fatalOnce sync.Once
		wg        sync.WaitGroup
	)
	ctx, cancel := context.WithCancel(ctx)
	defer cancel()
	run := func(w worker, at time.Time) bool {
		live.Add(1)
		s, err := w.do(ctx, at)
		live.Add(-1)
		switch {
		case errors.Is(err, errExhausted):
			return false
		case err != nil:
			fatalOnce.Do(func() { fatal = err; cancel() })
			return false
		case ctx.Err() != nil:
			return false // cut off by the end of the run: neither a success nor a failure
		}
		rec.add(s)
		return true
	}
	if p.rate <= 0 {
		// With a count, each worker runs its share, so that what it prepared matches.
		for i, w := range workers {
			wg.Go(func() {
				mine := share(p.n, len(workers), i)
				for ran := 0; ctx.Err() == nil; ran++ {
					if p.n > 0 && ran >= mine {
						return
					}
					now := time.Now()
					if !stopAt.IsZero() && !now.Before(stopAt) {
						return
					}
					if !run(w, now) {
						return
					}
				}
			})
		}
		wg.Wait()
		return time.Since(start), fatal
	}

	due := make(chan time.Time)
	done := make(chan struct{})
	for _, w := range workers {
		wg.Go(func() {
			for at := range due {
				if !run(w, at) {
					return
				}
			}
		})
	}
	go func() { wg.Wait(); close(done) }()
	interval := time.Duration(float64(time.Second) / p.rate)
	timer := time.NewTimer(0)
	defer timer.Stop()
schedule:
	for i := 0; ; i++ {
		at := start.Add(time.Duration(i) * interval)
		if (p.n > 0 && i >= p.n) || (!stopAt.IsZero() && !at.Before(stopAt)) {
			break
		}
		if wait := time.Until(at); wait > 0 {
			timer.Reset(wait)
			select {
			case <-timer.C:
			case <-ctx.Done():
				break schedule
			case <-done:
				break schedule
			}
		}
		select {
		case due <- at:
			continue
		default:
		}
		rec.addLate() // every worker is busy: this operation starts late, its latency counts from at
		select {
		case due <- at:
		case <-ctx.Done():
			break schedule
		case <-done:
			break schedule
		}
	}
	close(due)
	<-done
	return time.Since(start), fatal
}
