package enginetest

import (
	"context"
	"encoding/json"
	"fmt"
	"io"
	"iter"
	"net/http"
	"strconv"
	"strings"
	"sync"
	"time"

	"github.com/convengine/engine"
	"github.com/convengine/engine/widgets"
)

// BenchModel is an [engine.Model] for measuring the engine itself: it streams a fixed answer at
// a configured pace, so that the engine's overhead is what a measurement shows beyond the
// model's own delays. Its events are made once, so that it costs next to nothing itself. It is
// safe for concurrent use; do not change its fields once it streamed.
type BenchModel struct {
	// FirstTokenDelay is waited before the first delta of the answer.
	FirstTokenDelay time.Duration
	// TokenInterval is the time between deltas. Delta i (from 0) is due FirstTokenDelay +
	// i×TokenInterval after the answer's step began, as a provider streams at its own pace:
	// the lateness of one wait does not add up over the deltas, and a consumer slower than
	// that pace gets the deltas as fast as it takes them.
	TokenInterval time.Duration
	// Deltas is the number of speak deltas (default 40), each "word ".
	Deltas int
	// Sentences, when positive, makes the deltas that many sentences of about equal length:
	// the last delta of each is "word. " instead of "word ", so that the voice socket speaks
	// each sentence as soon as it ends. Zero makes one sentence without a full stop, spoken
	// when the answer ends.
	Sentences int
	// ToolCalls is the number of calls of the data tool "bench_lookup" made, in parallel,
	// before the answer; their results are not read.
	ToolCalls int
	// Widgets is the number of stat widgets after the answer.
	Widgets int

	once    sync.Once
	calls   []engine.ModelEvent // the first step, when ToolCalls > 0
	answer  []engine.ModelEvent // the deltas, the widget calls and the finish
	nDeltas int
}

func (m *BenchModel) events() {
	for i := range m.ToolCalls {
		c := engine.ToolCall{ID: "lookup_" + strconv.Itoa(i), Name: "bench_lookup", Arguments: json.RawMessage(`{"n":` + strconv.Itoa(i) + `}`)}
		m.calls = append(m.calls, engine.ToolCallEvent(c))
	}
	m.calls = append(m.calls, engine.FinishEvent(engine.FinishToolCalls))
	m.nDeltas = m.Deltas
	if m.nDeltas == 0 {
		m.nDeltas = 40
	}
	for i := range m.nDeltas {
		d := "word "
		if m.endsSentence(i + 1) {
			d = "word. "
		}
		m.answer = append(m.answer, engine.TextEvent(d))
	}
	for i := range m.Widgets {
		args := fmt.Sprintf(`{"label":"Figure %d","value":"%d.00"}`, i+1, 100*(i+1))
		m.answer = append(m.answer, engine.ToolCallEvent(engine.ToolCall{ID: "w" + strconv.Itoa(i), Name: widgets.ToolShowStat, Arguments: json.RawMessage(args)}))
	}
	m.answer = append(m.answer, engine.FinishEvent(engine.FinishStop))
}

// endsSentence reports whether delta i (from 1) ends a sentence.
func (m *BenchModel) endsSentence(i int) bool {
	s := min(m.Sentences, m.nDeltas)
	if s <= 0 {
		return false
	}
	// Sentence j (from 1) ends at delta j*n/s; i ends one when floor(i*s/n) rises at i.
	return i*s/m.nDeltas > (i-1)*s/m.nDeltas
}

// FirstSentenceDelay is the model's own time until the first sentence of its answer is
// complete: FirstTokenDelay and TokenInterval up to the delta that ends it (the last delta
// when Sentences is zero). It is the model's share of the time to the first audio of a voice
// turn, and does not count the tool calls' step.
func (m *BenchModel) FirstSentenceDelay() time.Duration {
	m.once.Do(m.events)
	k := m.nDeltas
	for i := 1; i <= m.nDeltas; i++ {
		if m.endsSentence(i) {
			k = i
			break
		}
	}
	return m.FirstTokenDelay + time.Duration(k-1)*m.TokenInterval
}

// Stream implements [engine.Model].
func (m *BenchModel) Stream(ctx context.Context, req *engine.ModelRequest) iter.Seq2[engine.ModelEvent, error] {
	m.once.Do(m.events)
	return func(yield func(engine.ModelEvent, error) bool) {
		if m.ToolCalls > 0 && StepOf(req.Messages) == 0 {
			for _, ev := range m.calls {
				if !yield(ev, nil) {
					return
				}
			}
			return
		}
		pace := newPace(m.FirstTokenDelay, m.TokenInterval)
		for i, ev := range m.answer {
			if i < m.nDeltas {
				if err := sleep(ctx, pace.wait(i)); err != nil {
					yield(engine.ModelEvent{}, err)
					return
				}
			}
			if !yield(ev, nil) {
				return
			}
		}
	}
}

// pace schedules deltas: delta i (from 0) is due first + i×interval after the pace began.
type pace struct {
	first, interval time.Duration
	began           time.Time // zero when there is nothing to wait for
}

func newPace(first, interval time.Duration) pace {
	p := pace{first: first, interval: interval}
	if first > 0 || interval > 0 {
		p.began = time.Now()
	}
	return p
}

// wait returns the time until delta i is due.
func (p pace) wait(i int) time.Duration {
	if p.began.IsZero() {
		return 0
	}
	return p.first + time.Duration(i)*p.interval - time.Since(p.began)
}

// BenchTools is the tool configuration (package httptools) of a tenant whose one data tool,
// bench_lookup, calls GET /lookup on a [BenchBackend].
const BenchTools = `[{"name":"bench_lookup","description":"Look a number up.","method":"GET","path":"/lookup",
 "parameters":{"type":"object","properties":{"n":{"type":"integer"}}}}]`

// BenchBackend is a tenant backend that answers every request with {"ok":true} after Latency.
type BenchBackend struct {
	Latency time.Duration
}

// ServeHTTP waits Latency (or for the client to go away) and answers.
func (b BenchBackend) ServeHTTP(w http.ResponseWriter, r *http.Request) {
	if err := sleep(r.Context(), b.Latency); err != nil {
		return
	}
	w.Header().Set("Content-Type", "application/json")
	w.Write([]byte(`{"ok":true}`))
}

// BareSSEHandler writes the bytes of a turn that streams deltas speak events and widgetCount
// stat widgets, with none of the engine's work and no delays: the limit a turn's throughput is
// measured against. It is [BareSSE] with those counts.
func BareSSEHandler(deltas, widgetCount int) http.Handler {
	return &BareSSE{Deltas: deltas, Widgets: widgetCount}
}

// BareSSE is a plain net/http handler that writes the turn stream an engine serving a
// [BenchModel] of the same settings writes, event by event, flushing each one, with the model's
// delays and none of the engine's logic. Driven beside the engine with the same load, it shows
// what the transport alone costs. Its zero value streams 40 deltas and no widget. It is safe for
// concurrent use once serving started; do not change its fields afterwards.
type BareSSE struct {
	// FirstTokenDelay is waited after the start event, before the first delta.
	FirstTokenDelay time.Duration
	// TokenInterval is the time between deltas, paced as [BenchModel] paces them.
	TokenInterval time.Duration
	// Deltas is the number of speak deltas (default 40), each "word ".
	Deltas int
	// Widgets is the number of stat widgets after the deltas.
	Widgets int

	once   sync.Once
	events [][]byte // every event of a turn, encoded
}

// Bare streams carry fixed ids of the engine's length.
const (
	bareTurnID         = "00000000-0000-4000-8000-000000000000"
	bareConversationID = "00000000-0000-4000-8000-000000000001"
)

// ServeHTTP reads the request body and writes the stream.
func (b *BareSSE) ServeHTTP(w http.ResponseWriter, r *http.Request) {
	b.once.Do(b.encode)
	io.Copy(io.Discard, r.Body)
	h := w.Header()
	h.Set("Content-Type", "text/event-stream")
	h.Set("Cache-Control", "no-cache")
	h.Set("X-Accel-Buffering", "no")
	if id := r.Header.Get("X-Request-ID"); id != "" {
		h.Set("X-Request-ID", id)
	}
	w.WriteHeader(http.StatusOK)
	rc := http.NewResponseController(w)
	deltas := len(b.events) - 2 - b.Widgets
	pace := newPace(b.FirstTokenDelay, b.TokenInterval)
	for i, ev := range b.events {
		var d time.Duration
		if i >= 1 && i <= deltas {
			d = pace.wait(i - 1)
		}
		if sleep(r.Context(), d) != nil {
			return
		}
		if _, err := w.Write(ev); err != nil {
			return
		}
		if rc.Flush() != nil {
			return
		}
	}
}

func (b *BareSSE) encode() {
	deltas := b.Deltas
	if deltas == 0 {
		deltas = 40
	}
	var (
		id      int
		speak   strings.Builder
		widgets []string
	)
	event := func(name, data string) {
		id++
		b.events = append(b.events, fmt.Appendf(nil, "id: %d\nevent: %s\ndata: %s\n\n", id, name, data))
	}
	event("start", `{"conversationId":"`+bareConversationID+`","turnId":"`+bareTurnID+`"}`)
	for range deltas {
		event("speak", `{"delta":"word "}`)
		speak.WriteString("word ")
	}
	for i := range b.Widgets {
		w := fmt.Sprintf(`{"type":"stat","label":"Figure %d","value":"%d.00"}`, i+1, 100*(i+1))
		widgets = append(widgets, w)
		event("widget", w)
	}
	event("done", `{"speak":"`+speak.String()+`","widgets":[`+strings.Join(widgets, ",")+
		`],"meta":{"conversationId":"`+bareConversationID+`","turnId":"`+bareTurnID+`","locale":"en","direction":"ltr"}}`)
}
