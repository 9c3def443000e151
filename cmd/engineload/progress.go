package main

import (
	"fmt"
	"io"
	"os"
	"sync"
	"sync/atomic"
	"time"
)

// progress shows how a phase goes, once a second: on a terminal one line rewritten in place,
// elsewhere a line each time.
type progress struct {
	w     io.Writer
	tty   bool
	quiet bool
	every time.Duration
}

func newProgress(w io.Writer, quiet bool) *progress {
	p := &progress{w: w, quiet: quiet, every: time.Second}
	if f, ok := w.(*os.File); ok {
		if fi, err := f.Stat(); err == nil && fi.Mode()&os.ModeCharDevice != 0 {
			p.tty = true
		}
	}
	return p
}

// start shows the progress of rec until the returned function is called.
func (p *progress) start(label string, rec *recorder, live *atomic.Int64) (stop func()) {
	if p.quiet {
		return func() {}
	}
	begin := time.Now()
	done := make(chan struct{})
	var wg sync.WaitGroup
	wg.Go(func() {
		t := time.NewTicker(p.every)
		defer t.Stop()
		last := begin
		for {
			select {
			case <-done:
				if p.tty {
					fmt.Fprint(p.w, "\r\x1b[K")
				}
				return
			case now := <-t.C:
				ok, errs := rec.counts()
				tickOK, _, p50, p99 := rec.tickStats()
				rate := float64(tickOK) / now.Sub(last).Seconds()
				last = now
				line := fmt.Sprintf("%s %5.0fs  %d ok  %d failed  %.0f/s  %d in flight  p50 %s  p99 %s",
					label, now.Sub(begin).Seconds(), ok, errs, rate, live.Load(), p50, p99)
				if p.tty {
					fmt.Fprint(p.w, "\r\x1b[K"+line)
				} else {
					fmt.Fprintln(p.w, line)
				}
			}
		}
	})
	return func() {
		close(done)
		wg.Wait()
	}
}
