package sse

import (
	"encoding/json"
	"errors"
	"io"
	"net/http"
	"net/http/httptest"
	"strconv"
	"strings"
	"sync"
	"testing"
	"testing/synctest"
	"time"

	"github.com/convengine/engine/widgets"
)

// TestWriterEvents checks each event a turn writes as a reader sees it: numbered from 1, and
// the done event's data exactly as encoding/json writes the spec, widgets sent before it
// included.
func TestWriterEvents(t *testing.T) {
	stat := widgets.Stat{Label: "Balance", Value: "$1,234.56"}
	spec := widgets.Spec{Speak: "Your balance is \"$1,234.56\".\n", Widgets: []widgets.Widget{stat},
		Suggestions: []string{"Show transactions"},
		Meta: widgets.Meta{ConversationID: "c1", TurnID: "t1", Locale: "en", Direction: "ltr",
			Theme: json.RawMessage("{\n  \"primary\": \"#0B5FFF\"\n}")}}
	rec := httptest.NewRecorder()
	w := NewWriter(rec, time.Now, 0, nil)
	w.Start("t1", "c1", "")
	w.Status("Checking your balance", "get_balance")
	w.Speak("Your balance is \"$1,234.56\".\n")
	w.Widget(stat)
	w.Fail("model_error", "The assistant could not answer.", true)
	w.Done(spec)
	if ct := rec.Header().Get("Content-Type"); ct != "text/event-stream" {
		t.Fatalf("Content-Type %q", ct)
	}
	r := NewReader(strings.NewReader(rec.Body.String()), 1<<20)
	want := []struct{ name, data string }{
		{"start", `{"conversationId":"c1","turnId":"t1"}`},
		{"status", `{"text":"Checking your balance","tool":"get_balance"}`},
		{"speak", `{"delta":"Your balance is \"$1,234.56\".\n"}`},
		{"widget", marshal(t, stat)},
		{"error", `{"code":"model_error","message":"The assistant could not answer.","retryable":true}`},
		{"done", marshal(t, spec)},
	}
	for i, w := range want {
		ev, err := r.Next()
		if err != nil {
			t.Fatalf("event %d: %v", i+1, err)
		}
		if ev.ID != strconv.Itoa(i+1) || ev.Name != w.name || string(ev.Data) != w.data {
			t.Errorf("event %d = %s %s %s\nwant %s", i+1, ev.ID, ev.Name, ev.Data, w.data)
		}
	}
}

func marshal(t *testing.T, v any) string {
	t.Helper()
	b, err := json.Marshal(v)
	if err != nil {
		t.Fatal(err)
	}
	return string(b)
}

// discardFlusher is a ResponseWriter that throws away what is written and can be flushed.
type discardFlusher struct{ h http.Header }

func (d *discardFlusher) Header() http.Header         { return d.h }
func (d *discardFlusher) Write(p []byte) (int, error) { return len(p), nil }
func (d *discardFlusher) WriteHeader(int)             {}
func (d *discardFlusher) Flush()                      {}

// BenchmarkWriter measures writing events to a connection that costs nothing: the engine's own
// work per event.
func BenchmarkWriter(b *testing.B) {
	for _, bc := range []struct {
		name  string
		write func(s *Writer) error
	}{
		{"speak", func(s *Writer) error { return s.Speak("word ") }},
		{"speak-escaped", func(s *Writer) error { return s.Speak("\"quoted\"\nline ") }},
		{"widget", func(s *Writer) error { return s.Widget(widgets.Stat{Label: "Checking", Value: "$1,234.56"}) }},
	} {
		b.Run(bc.name, func(b *testing.B) {
			s := NewWriter(&discardFlusher{h: http.Header{}}, time.Now, 0, nil)
			b.ReportAllocs()
			for b.Loop() {
				if err := bc.write(s); err != nil {
					b.Fatal(err)
				}
				s.widgetData = s.widgetData[:0]
			}
			b.ReportMetric(float64(b.N)/b.Elapsed().Seconds(), "events/s")
		})
	}
}

// TestKeepAlive checks, on a fake clock, that a ping goes out only after a silence of the
// whole interval, and none after the keep-alive stopped.
func TestKeepAlive(t *testing.T) {
	synctest.Test(t, func(t *testing.T) {
		rec := httptest.NewRecorder()
		w := NewWriter(rec, time.Now, 0, nil)
		stop := w.KeepAlive(15 * time.Second)
		w.Start("t1", "c1", "")
		time.Sleep(14 * time.Second)
		w.Speak("Still there.")
		time.Sleep(29 * time.Second) // silent since 14 s: one ping, at 29 s
		stop()
		time.Sleep(time.Minute)
		w.Done(widgets.Spec{Speak: "Still there."})
		events, err := readAll(t, strings.NewReader(rec.Body.String()), 1<<20)
		if err != io.EOF || len(events) != 3 {
			t.Fatalf("%d events, %v", len(events), err)
		}
		if pings := strings.Count(rec.Body.String(), ": ping\n\n"); pings != 1 || events[2].Comments != 1 {
			t.Errorf("%d pings, %d before done; want one, before done:\n%s", pings, events[2].Comments, rec.Body.String())
		}
	})
}

// writeLog is a ResponseWriter that keeps what each write and flush received, and fails
// every write once fail is set.
type writeLog struct {
	h       http.Header
	mu      sync.Mutex
	writes  []string
	flushes int
	fail    bool
}

func (l *writeLog) Header() http.Header { return l.h }
func (l *writeLog) WriteHeader(int)     {}
func (l *writeLog) Write(p []byte) (int, error) {
	l.mu.Lock()
	defer l.mu.Unlock()
	if l.fail {
		return 0, errors.New("connection reset")
	}
	l.writes = append(l.writes, string(p))
	return len(p), nil
}
func (l *writeLog) Flush() {
	l.mu.Lock()
	defer l.mu.Unlock()
	l.flushes++
}

func (l *writeLog) names() []string {
	l.mu.Lock()
	defer l.mu.Unlock()
	var out []string
	for _, w := range l.writes {
		var names []string
		for line := range strings.SplitSeq(w, "\n") {
			if name, ok := strings.CutPrefix(line, "event: "); ok {
				names = append(names, name)
			}
		}
		out = append(out, strings.Join(names, " "))
	}
	return out
}

// TestWriterBatches checks, with the writer's goroutines settled, which events go out when:
// start and later deltas as soon as the producer pauses, the first delta, the first event after
// a pause and done before their call returns, widgets and errors with the done after them, what is left at Close.
func TestWriterBatches(t *testing.T) {
	synctest.Test(t, func(t *testing.T) {
		l := &writeLog{h: http.Header{}}
		w := NewWriter(l, time.Now, 0, nil)
		w.Start("t1", "c1", "")
		w.Speak("One ") // the first delta: sent with start, before Speak returns
		if got := l.names(); len(got) != 1 || got[0] != "start speak" {
			t.Fatalf("writes %q; want start and the first delta in one", got)
		}
		w.Speak("two ")
		w.Speak("three.")
		synctest.Wait()
		if got := l.names(); len(got) != 2 || got[1] != "speak speak" {
			t.Fatalf("writes %q; want the two deltas in one, once the producer paused", got)
		}
		time.Sleep(pause) // the model waits for its next tokens
		w.Speak(" Four")
		if got := l.names(); len(got) != 3 || got[2] != "speak" {
			t.Fatalf("writes %q; want the delta after a pause sent before Speak returned", got)
		}
		time.Sleep(pause)
		w.Widget(widgets.Stat{Label: "Balance", Value: "$1"})
		w.Fail("model_error", "The assistant could not answer.", true)
		w.Speak("Sorry.")
		synctest.Wait()
		if got := l.names(); len(got) != 3 {
			t.Fatalf("writes %q; want the widget, the error and the apology to wait for done", got)
		}
		w.Done(widgets.Spec{Speak: "One two three. Four Sorry."})
		if got := l.names(); len(got) != 4 || got[3] != "widget error speak done" {
			t.Fatalf("writes %q", got)
		}
		w.Widget(widgets.Stat{Label: "Late", Value: "$2"})
		w.Close()
		if got := l.names(); len(got) != 5 || got[4] != "widget" || l.flushes != 5 {
			t.Errorf("writes %q, %d flushes; want Close to send what waited", got, l.flushes)
		}
	})
}

// TestWriterFails checks that a write that fails, by the writer's goroutine too, stops the
// stream: onFail runs once, and every later call returns the error.
func TestWriterFails(t *testing.T) {
	synctest.Test(t, func(t *testing.T) {
		l := &writeLog{h: http.Header{}, fail: true}
		fails := 0
		w := NewWriter(l, time.Now, 0, func() { fails++ })
		w.Start("t1", "c1", "") // sent by the writer's goroutine
		synctest.Wait()
		if fails != 1 {
			t.Fatalf("onFail ran %d times; want once", fails)
		}
		if err := w.Speak("One"); err == nil {
			t.Error("Speak after a failed write returned no error")
		}
		if err := w.Done(widgets.Spec{}); err == nil {
			t.Error("Done after a failed write returned no error")
		}
		w.Close()
		if fails != 1 || len(l.names()) != 0 {
			t.Errorf("onFail ran %d times, writes %q", fails, l.names())
		}
	})
}
