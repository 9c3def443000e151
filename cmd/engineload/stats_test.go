package main

import (
	"encoding/json"
	"os"
	"testing"
	"time"

	"github.com/convengine/engine/internal/debugstats"
)

func TestSummarize(t *testing.T) {
	t.Run("empty", func(t *testing.T) {
		if s := summarize(newHistogram()); s.Count != 0 || s.Max != 0 || s.Percentiles != nil {
			t.Fatalf("summary of nothing: %+v", s)
		}
	})
	t.Run("uniform", func(t *testing.T) {
		h := newHistogram()
		for i := 1; i <= 1000; i++ {
			record(h, time.Duration(i)*time.Millisecond) // 1 ms … 1 s
		}
		s := summarize(h)
		for _, c := range []struct {
			name      string
			got, want float64
		}{{"p50", s.P50, 500}, {"p90", s.P90, 900}, {"p99", s.P99, 990}, {"p99.9", s.P999, 999}, {"max", s.Max, 1000}, {"mean", s.Mean, 500.5}} {
			if c.got < c.want*0.999 || c.got > c.want*1.001 {
				t.Errorf("%s = %v ms, want %v", c.name, c.got, c.want)
			}
		}
		if s.Count != 1000 {
			t.Errorf("count %d", s.Count)
		}
		ps := s.Percentiles
		if ps[0].Percentile != 0 || ps[len(ps)-1].Percentile != 100 {
			t.Fatalf("percentiles %v", ps)
		}
		for i := 1; i < len(ps); i++ {
			if ps[i].Percentile <= ps[i-1].Percentile || ps[i].Ms < ps[i-1].Ms {
				t.Fatalf("percentiles not increasing: %v", ps)
			}
			if ps[i].Percentile > 99.9 && ps[i].Percentile < 100 {
				t.Fatalf("a percentile that 1000 values cannot tell from the maximum: %v", ps[i])
			}
		}
	})
	t.Run("out of range", func(t *testing.T) {
		h := newHistogram()
		record(h, 0)
		record(h, time.Hour)
		if s := summarize(h); s.Count != 2 || s.Max < 599000 {
			t.Fatalf("clamped values: %+v", s)
		}
	})
}

func TestRecorder(t *testing.T) {
	r := newRecorder(10 * time.Millisecond)
	r.add(sample{first: 12 * time.Millisecond, total: 20 * time.Millisecond})
	r.add(sample{first: 5 * time.Millisecond, total: 20 * time.Millisecond}) // faster than the model: added is 0
	r.add(sample{total: time.Millisecond, code: "tool_unavailable"})
	r.add(sample{total: time.Millisecond, code: "timeout"})
	r.add(sample{total: time.Millisecond, code: "timeout"})
	other := newRecorder(0)
	other.add(sample{total: time.Millisecond, code: "model_error"})
	r.merge(other)

	ok, errs := r.counts()
	if ok != 2 || errs != 4 {
		t.Fatalf("counts %d, %d", ok, errs)
	}
	got := r.errorList()
	want := []ErrorCount{{"timeout", 2}, {"model_error", 1}, {"tool_unavailable", 1}}
	if len(got) != len(want) {
		t.Fatalf("errors %v", got)
	}
	for i := range want {
		if got[i] != want[i] {
			t.Fatalf("errors %v, want %v", got, want)
		}
	}
	if a := summarize(r.added); a.Max < 1.99 || a.Max > 2.01 || a.Count != 2 {
		t.Fatalf("added %+v", a)
	}
	if tickOK, tickErr, p50, _ := r.tickStats(); tickOK != 2 || tickErr != 3 || p50 == 0 {
		t.Fatalf("tick %d %d %v", tickOK, tickErr, p50)
	}
	if tickOK, tickErr, _, _ := r.tickStats(); tickOK != 0 || tickErr != 0 {
		t.Fatal("the tick was not reset")
	}
}

func TestShare(t *testing.T) {
	for _, c := range []struct{ n, count int }{{10, 3}, {2, 5}, {0, 4}, {256, 256}} {
		sum := 0
		for i := range c.count {
			s := share(c.n, c.count, i)
			if s < c.n/c.count || s > c.n/c.count+1 {
				t.Errorf("share(%d, %d, %d) = %d", c.n, c.count, i, s)
			}
			sum += s
		}
		if sum != c.n {
			t.Errorf("shares of %d between %d add up to %d", c.n, c.count, sum)
		}
	}
}

// TestReportJSONShape pins the member names of the JSON report, which scripts and the
// benchmarks page read.
func TestReportJSONShape(t *testing.T) {
	rec := newRecorder(0)
	rec.add(sample{first: time.Millisecond, total: 3 * time.Millisecond})
	rec.add(sample{code: "model_error", total: time.Millisecond})
	ty := &tally{t: &target{name: "engine", url: "http://127.0.0.1:1", pid: 42}, rec: newRecorder(0), seconds: 0}
	before := snapshot{stats: &debugStats{Stats: debugstats.Stats{HeapLive: 1 << 20, Goroutines: 4}}}
	after := snapshot{serverCPU: time.Millisecond, stats: &debugStats{Stats: debugstats.Stats{AllocObjects: 100, AllocBytes: 4000, HeapLive: 1 << 20, Goroutines: 4},
		FirstSpeak: Summary{Count: 1, P50: 0.05}}}
	ty.add(rec, time.Second, before, after)
	cfg := &config{local: true, concurrency: 1, n: 2, rounds: 1}
	rep := &Report{Mode: "turn", Local: true, Settings: settingsOf(cfg), Machine: machineOf(), Runs: []Run{runOf(ty, cfg)}, Ratio: 0.7}
	file := t.TempDir() + "/r.json"
	if err := writeJSON(file, rep); err != nil {
		t.Fatal(err)
	}
	data, _ := os.ReadFile(file)
	var m map[string]any
	if err := json.Unmarshal(data, &m); err != nil {
		t.Fatal(err)
	}
	get := func(path ...any) any {
		var v any = m
		for _, p := range path {
			switch k := p.(type) {
			case string:
				v = v.(map[string]any)[k]
			case int:
				v = v.([]any)[k]
			}
			if v == nil {
				t.Fatalf("no %v in %s", path, data)
			}
		}
		return v
	}
	for _, path := range [][]any{
		{"mode"}, {"throughput_ratio"}, {"settings", "concurrency"}, {"settings", "model", "deltas"}, {"machine", "cpus"}, {"machine", "go"},
		{"runs", 0, "name"}, {"runs", 0, "ok"}, {"runs", 0, "failed"}, {"runs", 0, "throughput_per_s"},
		{"runs", 0, "errors", 0, "code"}, {"runs", 0, "first", "p50_ms"}, {"runs", 0, "added_first", "p99_ms"}, {"runs", 0, "done", "max_ms"},
		{"runs", 0, "done", "percentiles", 0, "percentile"}, {"runs", 0, "server", "cpu_per_op_us"}, {"runs", 0, "server", "allocs_per_op"},
		{"runs", 0, "server", "heap_live_after_bytes"}, {"runs", 0, "server", "first_speak", "p99_ms"}, {"runs", 0, "client_cpu_per_op_us"},
	} {
		get(path...)
	}
	if got := get("runs", 0, "server", "allocs_per_op").(float64); got != 50 {
		t.Errorf("allocations per operation %v, want 100 over 2 operations", got)
	}
}
