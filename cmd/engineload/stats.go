package main

import (
	"math"
	"sort"
	"sync"
	"time"

	"github.com/HdrHistogram/hdrhistogram-go"
)

// Histograms record microseconds from 1 µs to 10 minutes with three significant digits.
const (
	histMin     = 1
	histMax     = int64(10 * time.Minute / time.Microsecond)
	histFigures = 3
)

func newHistogram() *hdrhistogram.Histogram { return hdrhistogram.New(histMin, histMax, histFigures) }

// record adds d to h, clamped to the histogram's range.
func record(h *hdrhistogram.Histogram, d time.Duration) {
	us := d.Microseconds()
	us = min(max(us, histMin), histMax)
	h.RecordValue(us)
}

// Summary is the digest of one latency histogram, in milliseconds.
type Summary struct {
	Count int64   `json:"count"`
	Mean  float64 `json:"mean_ms"`
	P50   float64 `json:"p50_ms"`
	P90   float64 `json:"p90_ms"`
	P99   float64 `json:"p99_ms"`
	P999  float64 `json:"p99_9_ms"`
	Max   float64 `json:"max_ms"`
	// Percentiles is the distribution for charts: the latency at each percentile from 0 up.
	Percentiles []Point `json:"percentiles,omitempty"`
}

// Point is the latency at one percentile.
type Point struct {
	Percentile float64 `json:"percentile"`
	Ms         float64 `json:"ms"`
}

// summarize digests h; a histogram with no values gives a zero Summary.
func summarize(h *hdrhistogram.Histogram) Summary {
	if h.TotalCount() == 0 {
		return Summary{}
	}
	ms := func(us int64) float64 { return round3(float64(us) / 1000) }
	s := Summary{
		Count: h.TotalCount(),
		Mean:  round3(h.Mean() / 1000),
		P50:   ms(h.ValueAtQuantile(50)),
		P90:   ms(h.ValueAtQuantile(90)),
		P99:   ms(h.ValueAtQuantile(99)),
		P999:  ms(h.ValueAtQuantile(99.9)),
		Max:   ms(h.Max()),
	}
	for _, p := range chartPercentiles(h.TotalCount()) {
		s.Percentiles = append(s.Percentiles, Point{Percentile: p, Ms: ms(h.ValueAtQuantile(p))})
	}
	return s
}

// chartPercentiles are the percentiles a chart plots: dense towards the tail, up to the one
// that the number of values can still tell apart from the maximum.
func chartPercentiles(count int64) []float64 {
	var ps []float64
	for _, p := range []float64{0, 10, 20, 30, 40, 50, 60, 70, 75, 80, 85, 90, 92.5, 95, 96, 97, 97.5, 98, 98.5, 99,
		99.25, 99.5, 99.75, 99.9, 99.95, 99.99, 99.995, 99.999} {
		if p > 0 && float64(count)*(100-p)/100 < 1 {
			break
		}
		ps = append(ps, p)
	}
	return append(ps, 100)
}

func round3(f float64) float64 { return math.Round(f*1000) / 1000 }

// A sample is the outcome of one operation.
type sample struct {
	// first is the time to the first speak event (or first audio byte); zero when the
	// operation has no such moment or never reached it.
	first time.Duration
	// total is the time to the end of the operation: the done event, the whole answer.
	total time.Duration
	// code is "" for a success, else the problem or event code, or a class of transport error.
	code string
}

// recorder collects the samples of one phase. It is safe for concurrent use.
type recorder struct {
	// offset is subtracted from first for the added histogram: the model's configured
	// first-token delay.
	offset time.Duration

	mu     sync.Mutex
	first  *hdrhistogram.Histogram
	added  *hdrhistogram.Histogram
	total  *hdrhistogram.Histogram
	ok     int64
	errors map[string]int64
	late   int64
	// since the last tick, for the live progress line
	tickOK, tickErr int64
	tick            *hdrhistogram.Histogram
}

func newRecorder(offset time.Duration) *recorder {
	return &recorder{offset: offset, first: newHistogram(), added: newHistogram(), total: newHistogram(),
		errors: map[string]int64{}, tick: newHistogram()}
}

func (r *recorder) add(s sample) {
	r.mu.Lock()
	defer r.mu.Unlock()
	if s.code != "" {
		r.errors[s.code]++
		r.tickErr++
		return
	}
	r.ok++
	r.tickOK++
	if s.first > 0 {
		record(r.first, s.first)
		record(r.added, max(s.first-r.offset, 0))
		record(r.tick, s.first)
	} else {
		record(r.tick, s.total)
	}
	record(r.total, s.total)
}

func (r *recorder) addLate() {
	r.mu.Lock()
	r.late++
	r.mu.Unlock()
}

// tickStats returns the successes, errors and the p50 and p99 of the first-speak (or total)
// latency since the last call, and resets them.
func (r *recorder) tickStats() (ok, errs int64, p50, p99 time.Duration) {
	r.mu.Lock()
	defer r.mu.Unlock()
	ok, errs = r.tickOK, r.tickErr
	if r.tick.TotalCount() > 0 {
		p50 = time.Duration(r.tick.ValueAtQuantile(50)) * time.Microsecond
		p99 = time.Duration(r.tick.ValueAtQuantile(99)) * time.Microsecond
	}
	r.tickOK, r.tickErr = 0, 0
	r.tick.Reset()
	return ok, errs, p50, p99
}

// counts returns the successes and errors so far.
func (r *recorder) counts() (ok, errs int64) {
	r.mu.Lock()
	defer r.mu.Unlock()
	var e int64
	for _, n := range r.errors {
		e += n
	}
	return r.ok, e
}

// merge adds o's samples to r.
func (r *recorder) merge(o *recorder) {
	r.mu.Lock()
	defer r.mu.Unlock()
	o.mu.Lock()
	defer o.mu.Unlock()
	r.first.Merge(o.first)
	r.added.Merge(o.added)
	r.total.Merge(o.total)
	r.ok += o.ok
	r.late += o.late
	for k, v := range o.errors {
		r.errors[k] += v
	}
}

// ErrorCount is how often one error code occurred.
type ErrorCount struct {
	Code  string `json:"code"`
	Count int64  `json:"count"`
}

// errorList returns the errors, most frequent first.
func (r *recorder) errorList() []ErrorCount {
	r.mu.Lock()
	defer r.mu.Unlock()
	list := make([]ErrorCount, 0, len(r.errors))
	for code, n := range r.errors {
		list = append(list, ErrorCount{code, n})
	}
	sort.Slice(list, func(i, j int) bool {
		if list[i].Count != list[j].Count {
			return list[i].Count > list[j].Count
		}
		return list[i].Code < list[j].Code
	})
	return list
}

// sharedHistogram is a histogram of times that several goroutines record into.
type sharedHistogram struct {
	mu   sync.Mutex
	hist *hdrhistogram.Histogram
}

func newSharedHistogram() *sharedHistogram { return &sharedHistogram{hist: newHistogram()} }

func (s *sharedHistogram) record(d time.Duration) {
	s.mu.Lock()
	record(s.hist, d)
	s.mu.Unlock()
}

// summary digests the times so far, and forgets them when reset.
func (s *sharedHistogram) summary(reset bool) Summary {
	s.mu.Lock()
	defer s.mu.Unlock()
	sum := summarize(s.hist)
	if reset {
		s.hist.Reset()
	}
	return sum
}
