package main

import (
	"testing"
	"time"
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
