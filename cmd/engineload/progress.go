package main

import (
	"fmt"
	"io"
	"os"
	"strings"
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
	return p.startAll([]progressItem{{label, rec, live}})
}

// progressItem is one phase shown in a progress line.
type progressItem struct {
	label string
	rec   *recorder
	live  *atomic.Int64
}

// startAll shows the progress of phases that run together, on one line, until the returned
// function is called.
func (p *progress) startAll(items []progressItem) (stop func()) {
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
				parts := make([]string, len(items))
				for i, it := range items {
					ok, errs := it.rec.counts()
					tickOK, _, p50, p99 := it.rec.tickStats()
					rate := float64(tickOK) / now.Sub(last).Seconds()
					parts[i] = fmt.Sprintf("%s %d ok  %d failed  %.0f/s  %d in flight  p50 %s  p99 %s",
						it.label, ok, errs, rate, it.live.Load(), p50, p99)
				}
				last = now
				line := fmt.Sprintf("%5.0fs  %s", now.Sub(begin).Seconds(), strings.Join(parts, " | "))
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
