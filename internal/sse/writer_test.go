package sse

import (
	"encoding/json"
	"io"
	"net/http"
	"net/http/httptest"
	"strconv"
	"strings"
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
	w.Start("t1", "c1")
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
		w.Start("t1", "c1")
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
