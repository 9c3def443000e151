package usage

import (
	"context"
	"errors"
	"slices"
	"strings"
	"time"
)

// Sink receives the records of a [Meter], for a host to write where its billing reads them.
//
// The meter calls WriteUsage from one goroutine at a time, with batches of records in the
// order they were made. The slice is the meter's: the sink must not keep it, or change it,
// after WriteUsage returns. An error means the batch was not written: the meter writes the same
// batch again later, with a growing pause, and never skips it. A sink that may have written a
// part of a batch before failing writes the records it already took again, or recognises the
// batch: [Memory] never fails; the Redis ledger (package redisstore) writes a batch once.
// WriteUsage should return when ctx is done.
type Sink interface {
	WriteUsage(ctx context.Context, records []Record) error
}

// Reader reads a tenant's usage, for [Handler].
//
// Usage returns the usage of tenant on the UTC days from the day of from through the day of
// to, both included; a tenant with no usage gets a report of zeros. It is safe for concurrent
// use.
type Reader interface {
	Usage(ctx context.Context, tenant string, from, to time.Time) (*Report, error)
}

// Report is a tenant's usage over days: its totals, each day's, and each model's.
type Report struct {
	Tenant string `json:"tenant"`
	From   string `json:"from"` // YYYY-MM-DD, UTC
	To     string `json:"to"`
	Totals Totals `json:"totals"`
	// Days holds the days with usage, in order.
	Days []DayTotals `json:"days"`
	// Models holds the calls of each model that answered, by name ("" when the server did not
	// name it), and the speech of each speech provider that named itself ("deepgram", "azure",
	// "elevenlabs", "offline"), in name order: only the fields of that work are filled.
	Models []ModelTotals `json:"models"`
}

// DayTotals is the usage of one UTC day.
type DayTotals struct {
	Day string `json:"day"` // YYYY-MM-DD
	Totals
}

// ModelTotals is the usage of one model.
type ModelTotals struct {
	Model string `json:"model"`
	Totals
}

// Totals sums records.
type Totals struct {
	// The tokens the servers reported. A call whose server reported none counts its estimate
	// in EstimatedTokens (input and output together), never here.
	InputTokens       int64 `json:"input_tokens"`
	CachedInputTokens int64 `json:"cached_input_tokens"`
	OutputTokens      int64 `json:"output_tokens"`
	ReasoningTokens   int64 `json:"reasoning_tokens"`
	EstimatedTokens   int64 `json:"estimated_tokens"`
	// ModelCalls counts every call of the model, failed, cancelled and warm-up ones included;
	// WarmupCalls the warm-ups among them; Retries the failed requests retried within calls.
	ModelCalls  int64 `json:"model_calls"`
	WarmupCalls int64 `json:"warmup_calls"`
	Retries     int64 `json:"retries"`
	// Turns counts the turns that called the model (their first calls).
	Turns int64 `json:"turns"`
	// ToolCalls counts tool calls and actions; ToolErrors those whose outcome was not "ok".
	ToolCalls  int64 `json:"tool_calls"`
	ToolErrors int64 `json:"tool_errors"`
	// SpeechInSeconds is the audio transcribed; SpeechOutSeconds and SpeechOutCharacters the
	// audio synthesized (as far as it was read) and the text it was made of.
	SpeechInSeconds     float64 `json:"speech_in_seconds"`
	SpeechOutSeconds    float64 `json:"speech_out_seconds"`
	SpeechOutCharacters int64   `json:"speech_out_characters"`
}

// Add counts r in t.
func (t *Totals) Add(r *Record) {
	switch r.Kind {
	case KindModel:
		if r.Estimated {
			t.EstimatedTokens += r.InputTokens + r.OutputTokens
		} else {
			t.InputTokens += r.InputTokens
			t.CachedInputTokens += r.CachedInputTokens
			t.OutputTokens += r.OutputTokens
			t.ReasoningTokens += r.ReasoningTokens
		}
		t.ModelCalls++
		t.Retries += int64(r.Retries)
		if r.Warmup {
			t.WarmupCalls++
		} else if r.Step == 1 {
			t.Turns++
		}
	case KindTool:
		t.ToolCalls++
		if r.Outcome != "ok" {
			t.ToolErrors++
		}
	case KindTranscription:
		t.SpeechInSeconds += r.AudioSeconds
	case KindSynthesis:
		t.SpeechOutSeconds += r.AudioSeconds
		t.SpeechOutCharacters += r.Characters
	}
}

// Merge adds the counts of o to t.
func (t *Totals) Merge(o *Totals) {
	t.InputTokens += o.InputTokens
	t.CachedInputTokens += o.CachedInputTokens
	t.OutputTokens += o.OutputTokens
	t.ReasoningTokens += o.ReasoningTokens
	t.EstimatedTokens += o.EstimatedTokens
	t.ModelCalls += o.ModelCalls
	t.WarmupCalls += o.WarmupCalls
	t.Retries += o.Retries
	t.Turns += o.Turns
	t.ToolCalls += o.ToolCalls
	t.ToolErrors += o.ToolErrors
	t.SpeechInSeconds += o.SpeechInSeconds
	t.SpeechOutSeconds += o.SpeechOutSeconds
	t.SpeechOutCharacters += o.SpeechOutCharacters
}

// dayFormat is the layout of a day in reports and keys.
const dayFormat = time.DateOnly

// Day returns the UTC day of t as YYYY-MM-DD, as ledgers key it.
func Day(t time.Time) string { return t.UTC().Format(dayFormat) }

// Days returns the UTC days from the day of from through the day of to, in order; none when to
// is before from.
func Days(from, to time.Time) []string {
	var days []string
	first := truncDay(from)
	last := truncDay(to)
	for d := first; !d.After(last); d = d.AddDate(0, 0, 1) {
		days = append(days, d.Format(dayFormat))
	}
	return days
}

func truncDay(t time.Time) time.Time {
	y, m, d := t.UTC().Date()
	return time.Date(y, m, d, 0, 0, 0, 0, time.UTC)
}

// NewReport returns the report of tenant from its days' totals and its days' totals by
// model (keyed by day, then model), for ledgers: the days with nothing are left out.
func NewReport(tenant string, from, to time.Time, days map[string]*Totals, models map[string]map[string]*Totals) *Report {
	r := &Report{Tenant: tenant, From: Day(from), To: Day(to), Days: []DayTotals{}, Models: []ModelTotals{}}
	byModel := map[string]*Totals{}
	for _, d := range Days(from, to) {
		if t := days[d]; t != nil && *t != (Totals{}) {
			r.Totals.Merge(t)
			r.Days = append(r.Days, DayTotals{Day: d, Totals: *t})
		}
		for name, t := range models[d] {
			m := byModel[name]
			if m == nil {
				m = &Totals{}
				byModel[name] = m
			}
			m.Merge(t)
		}
	}
	for name, t := range byModel {
		r.Models = append(r.Models, ModelTotals{Model: name, Totals: *t})
	}
	slices.SortFunc(r.Models, func(a, b ModelTotals) int { return strings.Compare(a.Model, b.Model) })
	return r
}

// MaxDays bounds the days of one report.
const MaxDays = 366

// ErrRange is returned by a Reader for a range of days that ends before it starts, or spans
// more than MaxDays.
var ErrRange = errors.New("usage: the range of days is empty or longer than 366 days")

// CheckRange returns ErrRange when the UTC days from from through to are none or more than
// MaxDays, for Readers.
func CheckRange(from, to time.Time) error {
	f, t := truncDay(from), truncDay(to)
	if t.Before(f) || t.Sub(f) >= MaxDays*24*time.Hour {
		return ErrRange
	}
	return nil
}
