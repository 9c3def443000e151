package engine_test

import (
	"context"
	"iter"
	"net/http"
	"net/http/httptest"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/convengine/engine"
	"github.com/convengine/engine/internal/sse"
	"github.com/convengine/engine/widgets"
)

// pausedModel yields its phases' events back to back, and waits between two phases until the
// test resumes it: the pauses are a provider's waits for its next tokens.
type pausedModel struct {
	phases  [][]engine.ModelEvent
	paused  chan int      // the phase the model waits to start
	resumed chan struct{} // one value per pause
}

func newPausedModel(phases ...[]engine.ModelEvent) *pausedModel {
	return &pausedModel{phases: phases, paused: make(chan int, len(phases)), resumed: make(chan struct{}, len(phases))}
}

func (m *pausedModel) Stream(ctx context.Context, _ *engine.ModelRequest) iter.Seq2[engine.ModelEvent, error] {
	return func(yield func(engine.ModelEvent, error) bool) {
		for i, phase := range m.phases {
			if i > 0 {
				m.paused <- i
				select {
				case <-m.resumed:
				case <-ctx.Done():
					yield(engine.ModelEvent{}, ctx.Err())
					return
				}
			}
			for _, ev := range phase {
				if !yield(ev, nil) {
					return
				}
			}
		}
	}
}

// flushLog is a ResponseWriter that notes what each flush sent. While gate is open (not nil
// and not closed), a flush waits for it, as a flush to a slow network does.
type flushLog struct {
	http.ResponseWriter
	mu      sync.Mutex
	unsent  []byte
	flushes []string
	gate    chan struct{}
}

func (f *flushLog) Write(p []byte) (int, error) {
	f.mu.Lock()
	f.unsent = append(f.unsent, p...)
	f.mu.Unlock()
	return f.ResponseWriter.Write(p)
}

func (f *flushLog) FlushError() error {
	f.mu.Lock()
	gate := f.gate
	f.mu.Unlock()
	if gate != nil {
		<-gate
	}
	f.mu.Lock()
	f.flushes = append(f.flushes, string(f.unsent))
	f.unsent = nil
	f.mu.Unlock()
	return http.NewResponseController(f.ResponseWriter).Flush()
}

func (f *flushLog) Unwrap() http.ResponseWriter { return f.ResponseWriter }

func (f *flushLog) setGate(g chan struct{}) {
	f.mu.Lock()
	f.gate = g
	f.mu.Unlock()
}

// flushNames returns the events each flush sent, by name: "speak speak|widget done".
func (f *flushLog) flushNames() []string {
	f.mu.Lock()
	defer f.mu.Unlock()
	var out []string
	for _, fl := range f.flushes {
		var names []string
		for line := range strings.SplitSeq(fl, "\n") {
			if name, ok := strings.CutPrefix(line, "event: "); ok {
				names = append(names, name)
			}
		}
		out = append(out, strings.Join(names, " "))
	}
	return out
}

// flushedTurn serves an engine whose turn streams go through a flushLog, over a real HTTP
// server, and starts a turn on it; it returns the stream's reader and the turn's flushLog.
func flushedTurn(t *testing.T, cfg engine.Config) (*sse.Reader, *flushLog) {
	t.Helper()
	h := newHarness(t, cfg)
	logs := make(chan *flushLog, 1)
	srv := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		fl := &flushLog{ResponseWriter: w}
		logs <- fl
		h.engine.Handler().ServeHTTP(fl, r)
	}))
	t.Cleanup(srv.Close)
	// A turn stuck by a bug fails the test instead of hanging it.
	ctx, cancel := context.WithTimeout(t.Context(), 20*time.Second)
	t.Cleanup(cancel)
	req, _ := http.NewRequestWithContext(ctx, http.MethodPost, srv.URL+"/engine", strings.NewReader(`{"transcript":"balance"}`))
	req.Header = headers()
	resp, err := srv.Client().Do(req)
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { resp.Body.Close() })
	if resp.StatusCode != http.StatusOK {
		t.Fatalf("status %d", resp.StatusCode)
	}
	return sse.NewReader(resp.Body, 1<<20), <-logs
}

// readEvents reads events until one named last, and returns their names.
func readEvents(t *testing.T, r *sse.Reader, last string) string {
	t.Helper()
	var names []string
	for {
		ev, err := r.Next()
		if err != nil {
			t.Fatalf("after %v: %v", names, err)
		}
		names = append(names, ev.Name)
		if ev.Name == last {
			return strings.Join(names, " ")
		}
	}
}

var turnLogs = []struct {
	name string
	log  func() engine.TurnLog
}{
	{"without a turn log", func() engine.TurnLog { return nil }},
	{"kept in a turn log", func() engine.TurnLog { return &engine.MemoryTurnLog{} }},
}

// TestTurnStreamFirstDeltaLeavesAtOnce: the client reads the first delta while the model is
// still working on the second, and any later one while the model works on the next; and the
// start event before them, while the model has not answered at all.
func TestTurnStreamFirstDeltaLeavesAtOnce(t *testing.T) {
	for _, tl := range turnLogs {
		t.Run(tl.name, func(t *testing.T) {
			m := newPausedModel(nil, []engine.ModelEvent{engine.TextEvent("Checking")},
				[]engine.ModelEvent{engine.TextEvent(" your")}, []engine.ModelEvent{engine.TextEvent(" balance.")})
			r, _ := flushedTurn(t, engine.Config{Model: m, TurnLog: tl.log()})
			<-m.paused
			if got := readEvents(t, r, engine.EventStart); got != "start" {
				t.Fatalf("events %q before the model answered", got)
			}
			for i := range 2 {
				m.resumed <- struct{}{}
				<-m.paused
				if got := readEvents(t, r, engine.EventSpeak); got != "speak" {
					t.Fatalf("events %q while the model works on delta %d", got, i+2)
				}
			}
			m.resumed <- struct{}{}
			if got := readEvents(t, r, engine.EventDone); got != "speak done" {
				t.Errorf("then %q", got)
			}
		})
	}
}

// TestTurnStreamWritesTheEndAtOnce: the widgets and the done event that a turn produces
// together go to the client in one write and one flush.
func TestTurnStreamWritesTheEndAtOnce(t *testing.T) {
	for _, tl := range turnLogs {
		t.Run(tl.name, func(t *testing.T) {
			m := newPausedModel(
				[]engine.ModelEvent{engine.TextEvent("Here "), engine.TextEvent("it is.")},
				[]engine.ModelEvent{
					call("w1", widgets.ToolShowStat, `{"label":"Checking","value":"$1,234.56"}`),
					call("w2", widgets.ToolShowProgress, `{"label":"Goal","value":0.5}`),
					finish(engine.FinishStop),
				})
			r, fl := flushedTurn(t, engine.Config{Model: m, TurnLog: tl.log()})
			<-m.paused
			readEvents(t, r, engine.EventSpeak)
			readEvents(t, r, engine.EventSpeak)
			m.resumed <- struct{}{}
			if got := readEvents(t, r, engine.EventDone); got != "widget widget done" {
				t.Fatalf("events %q", got)
			}
			flushes := fl.flushNames()
			if last := flushes[len(flushes)-1]; last != "widget widget done" {
				t.Errorf("flushes %q; want the widgets and done in the last one", flushes)
			}
		})
	}
}

// TestTurnStreamBatchesABurst: deltas that the model produces back to back while the
// connection is busy go out together once it is free, instead of one write and one flush each.
func TestTurnStreamBatchesABurst(t *testing.T) {
	const burst = 20
	var deltas []engine.ModelEvent
	for range burst {
		deltas = append(deltas, engine.TextEvent("word "))
	}
	for _, tl := range turnLogs {
		t.Run(tl.name, func(t *testing.T) {
			m := newPausedModel([]engine.ModelEvent{engine.TextEvent("First. ")}, deltas, nil)
			// The first delta after a pause of the model leaves at once, alone; on a clock
			// that stands still the model never pauses, and the burst's first delta waits for
			// the connection as the others do.
			now := time.Now()
			r, fl := flushedTurn(t, engine.Config{Model: m, TurnLog: tl.log(), Now: func() time.Time { return now }})
			<-m.paused
			readEvents(t, r, engine.EventSpeak)
			// Flushes wait until the model has produced the whole burst (or, should the
			// engine wait for its flushes, a while).
			gate := make(chan struct{})
			fl.setGate(gate)
			before := len(fl.flushNames())
			m.resumed <- struct{}{}
			select {
			case <-m.paused:
			case <-time.After(2 * time.Second):
			}
			close(gate)
			for i := range burst {
				if ev, err := r.Next(); err != nil || ev.Name != engine.EventSpeak {
					t.Fatalf("event %d of the burst: %s %v", i, ev.Name, err)
				}
			}
			m.resumed <- struct{}{}
			readEvents(t, r, engine.EventDone)
			var speaks int
			for _, f := range fl.flushNames()[before:] {
				if strings.Contains(f, "speak") {
					speaks++
				}
			}
			if speaks > 2 {
				t.Errorf("the burst of %d deltas took %d flushes: %q", burst, speaks, fl.flushNames()[before:])
			}
		})
	}
}
