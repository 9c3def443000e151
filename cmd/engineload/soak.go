package main

import (
	"context"
	"errors"
	"fmt"
	"io"
	"slices"
	"strconv"
	"strings"
	"time"
)

// Slack of the soak's checks: what a server may keep after a run without it being a leak.
const (
	// goroutineSlack covers the goroutines a server starts on demand and keeps (the runtime's,
	// a connection of the debug listener).
	goroutineSlack = 8
	settlePoll     = 500 * time.Millisecond
)

// Soak is what a -soak run found about the server: its figures before the run, while it ran
// and after it settled, and the checks that failed (the ledger's among them).
type Soak struct {
	// Baseline is the server before the run prepared anything.
	Baseline ServerFigures `json:"baseline"`
	// During is what the server spent while every phase ran.
	During *ServerCost `json:"during"`
	// Settled is the server once the run closed its connections and the goroutines came back
	// (or the -settle time passed), SettleSeconds after the phases ended.
	Settled       ServerFigures `json:"settled"`
	SettleSeconds float64       `json:"settle_seconds"`
	// Failures lists the checks that failed; empty when the soak passed.
	Failures []string `json:"failures"`
}

// ServerFigures are a server's memory and goroutines at one moment, after a collection.
type ServerFigures struct {
	HeapLive    uint64 `json:"heap_live_bytes"`
	TotalMemory uint64 `json:"total_memory_bytes"`
	Goroutines  uint64 `json:"goroutines"`
	// RSS is the process's resident memory, when its pid is known.
	RSS uint64 `json:"rss_bytes,omitempty"`
}

// serverFigures reads the server's figures from its stats endpoint, after a collection.
func serverFigures(ctx context.Context, t *target) (ServerFigures, error) {
	if t.stats == "" {
		return ServerFigures{}, errors.New("-soak needs the server's figures: -stats URL of its /debug/stats (the reference server's -debug-addr)")
	}
	m, err := readServerMemory(ctx, t)
	return ServerFigures{HeapLive: m.heap, TotalMemory: m.total, Goroutines: m.goroutines, RSS: m.rss}, err
}

// settle waits until the server's goroutines are back to the baseline, or for -settle at most,
// and notes its figures then.
func (s *Soak) settle(ctx context.Context, t *target, cfg *config) error {
	start := time.Now()
	for {
		f, err := serverFigures(ctx, t)
		if err != nil {
			return err
		}
		s.Settled = f
		if f.Goroutines <= s.Baseline.Goroutines+goroutineSlack || time.Since(start) >= cfg.settle {
			s.SettleSeconds = round3(time.Since(start).Seconds())
			return nil
		}
		select {
		case <-ctx.Done():
			return ctx.Err()
		case <-time.After(settlePoll):
		}
	}
}

// judge lists the checks the soak failed: errors other than the allowed codes, goroutines or
// heap not back to the baseline, actions not run exactly once.
func (s *Soak) judge(rep *Report, cfg *config) {
	for _, r := range rep.Runs {
		var other []string
		n := int64(0)
		for _, e := range r.Errors {
			if !slices.Contains(cfg.allow, e.Code) {
				other = append(other, fmt.Sprintf("%s %d", e.Code, e.Count))
				n += e.Count
			}
		}
		if n > 0 {
			s.Failures = append(s.Failures, fmt.Sprintf("%s: %d errors (%s)", r.Name, n, strings.Join(other, ", ")))
		}
		if r.OK == 0 {
			s.Failures = append(s.Failures, r.Name+": no operation succeeded")
		}
	}
	if s.Settled.Goroutines > s.Baseline.Goroutines+goroutineSlack {
		s.Failures = append(s.Failures, fmt.Sprintf("goroutines: %d after %.0fs, %d before the run", s.Settled.Goroutines, s.SettleSeconds, s.Baseline.Goroutines))
	}
	if s.Settled.HeapLive > s.Baseline.HeapLive+uint64(cfg.heapSlack) {
		s.Failures = append(s.Failures, fmt.Sprintf("live heap: %s after, %s before the run (more than -heap-slack %s above)",
			bytesString(s.Settled.HeapLive), bytesString(s.Baseline.HeapLive), bytesString(uint64(cfg.heapSlack))))
	}
	if l := rep.Ledger; l != nil && !l.ok() {
		s.Failures = append(s.Failures, fmt.Sprintf("ledger: %d confirmed actions missing, %d run more than once, %d run without a success", l.Missing, l.Duplicated, l.Unasked))
	}
	if s.Failures == nil {
		s.Failures = []string{}
	}
}

// printSoak writes the soak's findings for people.
func printSoak(w io.Writer, s *Soak) {
	fmt.Fprintf(w, "\nserver\n")
	if d := s.During; d != nil {
		fmt.Fprintf(w, "  %.1f µs CPU per operation (%.2f s), %.1f allocations (%.0f B) per operation\n", d.CPUPerOp, d.CPUSeconds, d.AllocsPerOp, d.BytesPerOp)
		fmt.Fprintf(w, "  during: %s live heap, %d goroutines, %s in total at the end\n", bytesString(d.HeapAfter), d.GoroutinesAfter, bytesString(d.MemoryAfter))
	}
	line := func(label string, f ServerFigures) {
		fmt.Fprintf(w, "  %s: %s live heap, %s in total, %d goroutines", label, bytesString(f.HeapLive), bytesString(f.TotalMemory), f.Goroutines)
		if f.RSS > 0 {
			fmt.Fprintf(w, ", %s resident", bytesString(f.RSS))
		}
		fmt.Fprintln(w)
	}
	line("before", s.Baseline)
	line(fmt.Sprintf("after (%.1fs)", s.SettleSeconds), s.Settled)
	if len(s.Failures) == 0 {
		fmt.Fprintln(w, "soak: passed")
		return
	}
	fmt.Fprintln(w, "soak: FAILED")
	for _, f := range s.Failures {
		fmt.Fprintln(w, "  "+f)
	}
}

// parseBytes reads a size such as "32MiB", "500MB", "64k" or "1048576".
func parseBytes(s string) (int64, error) {
	t := strings.TrimSpace(s)
	i := strings.IndexFunc(t, func(r rune) bool { return (r < '0' || r > '9') && r != '.' })
	num, unit := t, ""
	if i >= 0 {
		num, unit = t[:i], strings.ToLower(strings.TrimSpace(t[i:]))
	}
	mult := map[string]float64{"": 1, "b": 1, "k": 1 << 10, "kb": 1e3, "kib": 1 << 10, "m": 1 << 20, "mb": 1e6, "mib": 1 << 20, "g": 1 << 30, "gb": 1e9, "gib": 1 << 30}[unit]
	f, err := strconv.ParseFloat(num, 64)
	if err != nil || mult == 0 || f < 0 {
		return 0, fmt.Errorf("%q is not a size such as 32MiB", s)
	}
	return int64(f * mult), nil
}
