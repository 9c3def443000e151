package engine

import (
	"encoding/json"
	"net/http"
	"testing"
	"time"
	"unicode/utf8"

	"github.com/convengine/engine/widgets"
)

func FuzzAppendJSONString(f *testing.F) {
	for _, s := range []string{"", "plain", `quote " and \ back`, "line\nbreak\ttab\r", "\x00\x1f\x7f", "مرحبا", "bad \xff utf8", "\u2028\u2029", "<tag>&"} {
		f.Add(s)
	}
	f.Fuzz(func(t *testing.T, s string) {
		b := appendJSONString(nil, s)
		var back string
		if err := json.Unmarshal(b, &back); err != nil {
			t.Fatalf("%q encodes to invalid JSON %s: %v", s, b, err)
		}
		want := s
		if !utf8.ValidString(s) {
			want = string([]rune(s)) // invalid bytes become U+FFFD, as encoding/json writes them
		}
		if back != want {
			t.Fatalf("%q round-trips to %q", s, back)
		}
		for _, c := range b {
			if c == '\n' || c == '\r' {
				t.Fatalf("%q encodes to a line break", s)
			}
		}
	})
}

// discardFlusher is a ResponseWriter that throws away what is written and can be flushed.
type discardFlusher struct{ h http.Header }

func (d *discardFlusher) Header() http.Header         { return d.h }
func (d *discardFlusher) Write(p []byte) (int, error) { return len(p), nil }
func (d *discardFlusher) WriteHeader(int)             {}
func (d *discardFlusher) Flush()                      {}

// BenchmarkSSEWriter measures writing events with the turn's SSE writer to a connection that
// costs nothing: the engine's own work per event.
func BenchmarkSSEWriter(b *testing.B) {
	for _, bc := range []struct {
		name  string
		write func(s *sseWriter) error
	}{
		{"speak", func(s *sseWriter) error { return s.speak("word ") }},
		{"speak-escaped", func(s *sseWriter) error { return s.speak("\"quoted\"\nline ") }},
		{"widget", func(s *sseWriter) error {
			return s.event(EventWidget, widgets.Stat{Label: "Checking", Value: "$1,234.56"})
		}},
	} {
		b.Run(bc.name, func(b *testing.B) {
			s := newSSEWriter(&discardFlusher{h: http.Header{}}, time.Now)
			b.ReportAllocs()
			for b.Loop() {
				if err := bc.write(s); err != nil {
					b.Fatal(err)
				}
			}
			b.ReportMetric(float64(b.N)/b.Elapsed().Seconds(), "events/s")
		})
	}
}
