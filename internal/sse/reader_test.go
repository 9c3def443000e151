package sse

import (
	"errors"
	"io"
	"strings"
	"testing"
	"testing/iotest"
)

func readAll(t *testing.T, r io.Reader, max int) ([]Event, error) {
	t.Helper()
	sr := NewReader(r, max)
	var out []Event
	for {
		ev, err := sr.Next()
		if err != nil {
			return out, err
		}
		out = append(out, ev)
	}
}

func TestSSEReader(t *testing.T) {
	big := strings.Repeat("x", 300<<10)
	cases := []struct {
		name   string
		stream string
		want   []Event
	}{
		{"one event", "id: 1\nevent: speak\ndata: {\"delta\":\"hi\"}\n\n",
			[]Event{{"1", "speak", []byte(`{"delta":"hi"}`), 0, nil}}},
		{"comments and pings", ": ping\n\n: another\nid: 2\n: inside\nevent: done\ndata: {}\n\n",
			[]Event{{"2", "done", []byte(`{}`), 3, nil}}},
		{"multi-line data", "data: a\ndata:b\ndata:  c\n\n", []Event{{"", "message", []byte("a\nb\n c"), 0, nil}}},
		{"empty data line", "data\ndata\n\n", []Event{{"", "message", []byte("\n"), 0, nil}}},
		{"CRLF", "id: 7\r\nevent: x\r\ndata: 1\r\n\r\n", []Event{{"7", "x", []byte("1"), 0, nil}}},
		{"CR", "event: x\rdata: 1\r\revent: y\rdata: 2\r\r", []Event{{"", "x", []byte("1"), 0, nil}, {"", "y", []byte("2"), 0, nil}}},
		{"id persists", "id: 3\ndata: a\n\ndata: b\n\nid\ndata: c\n\n",
			[]Event{{"3", "message", []byte("a"), 0, nil}, {"3", "message", []byte("b"), 0, nil}, {"", "message", []byte("c"), 0, nil}}},
		{"id with NUL ignored", "id: 1\ndata: a\n\nid: 2\x00\ndata: b\n\n",
			[]Event{{"1", "message", []byte("a"), 0, nil}, {"1", "message", []byte("b"), 0, nil}}},
		{"event without data is dropped", "event: a\n\nevent: b\ndata: x\n\n", []Event{{"", "b", []byte("x"), 0, nil}}},
		{"unknown fields and retry", "retry: 10\nfoo: bar\ndata: x\n\n", []Event{{"", "message", []byte("x"), 0, nil}}},
		{"byte order mark", "\xEF\xBB\xBFdata: x\n\n", []Event{{"", "message", []byte("x"), 0, nil}}},
		{"cut off event dropped", "data: x\n\ndata: y\n", []Event{{"", "message", []byte("x"), 0, nil}}},
		{"large event", "event: done\ndata: " + big + "\n\n", []Event{{"", "done", []byte(big), 0, nil}}},
	}
	for _, tc := range cases {
		for _, chunked := range []bool{false, true} {
			name := tc.name
			var r io.Reader = strings.NewReader(tc.stream)
			if chunked {
				name += " one byte at a time"
				r = iotest.OneByteReader(r)
			}
			t.Run(name, func(t *testing.T) {
				got, err := readAll(t, r, 1<<20)
				if !errors.Is(err, io.EOF) {
					t.Fatalf("error %v", err)
				}
				if len(got) != len(tc.want) {
					t.Fatalf("got %d events %+v, want %d", len(got), got, len(tc.want))
				}
				for i := range got {
					if got[i].ID != tc.want[i].ID || got[i].Name != tc.want[i].Name || string(got[i].Data) != string(tc.want[i].Data) || got[i].Comments != tc.want[i].Comments {
						t.Errorf("event %d = %+v, want %+v", i, got[i], tc.want[i])
					}
				}
			})
		}
	}
}

// TestLenientReader reads what servers write beside the standard: a non-standard error field,
// and a last event whose blank line never came before a clean end of the stream.
func TestLenientReader(t *testing.T) {
	stream := "data: {\"a\":1}\n\nerror: {\"code\":500}\n\ndata: {\"b\":2}\n"
	strict, err := readAll(t, strings.NewReader(stream), 1024)
	if !errors.Is(err, io.EOF) || len(strict) != 1 {
		t.Fatalf("strict: %d events, %v", len(strict), err)
	}
	r := NewReader(strings.NewReader(stream), 1024)
	r.Lenient = true
	var got []string
	for {
		ev, err := r.Next()
		if err != nil {
			if !errors.Is(err, io.EOF) {
				t.Fatal(err)
			}
			break
		}
		got = append(got, string(ev.Data)+"|"+string(ev.Error))
	}
	if want := []string{`{"a":1}|`, `|{"code":500}`, `{"b":2}|`}; strings.Join(got, " ") != strings.Join(want, " ") {
		t.Errorf("lenient: %q, want %q", got, want)
	}
	cut := NewReader(iotest.TimeoutReader(strings.NewReader("data: {\"b\"")), 1024)
	cut.Lenient = true
	if _, err := cut.Next(); errors.Is(err, io.EOF) || err == nil {
		t.Errorf("a stream that broke dispatched its cut event: %v", err)
	}
}

func TestSSEReaderBounds(t *testing.T) {
	for name, stream := range map[string]string{
		"long line":       "data: " + strings.Repeat("x", 2000) + "\n\n",
		"many data lines": strings.Repeat("data: "+strings.Repeat("x", 100)+"\n", 30) + "\n",
		"endless line":    strings.Repeat("y", 5000),
	} {
		t.Run(name, func(t *testing.T) {
			if _, err := readAll(t, strings.NewReader(stream), 1024); !errors.Is(err, ErrEventTooLarge) {
				t.Fatalf("error %v, want ErrEventTooLarge", err)
			}
		})
	}
}

// FuzzSSE feeds the stream reader arbitrary bytes: it never panics, never returns an event
// larger than its bound, and reads the same events however the stream is chunked.
func FuzzSSE(f *testing.F) {
	f.Add("id: 1\nevent: speak\ndata: {}\n\n: ping\n\n")
	f.Add("data: a\r\ndata: b\r\rdata\n\n")
	f.Add("\xEF\xBB\xBFid: \x00\nevent\n\n")
	f.Fuzz(func(t *testing.T, s string) {
		whole, err1 := readAll(t, strings.NewReader(s), 256)
		bytewise, err2 := readAll(t, iotest.OneByteReader(strings.NewReader(s)), 256)
		if (err1 == nil) != (err2 == nil) || errors.Is(err1, ErrEventTooLarge) != errors.Is(err2, ErrEventTooLarge) {
			t.Fatalf("errors differ: %v, %v", err1, err2)
		}
		if len(whole) != len(bytewise) {
			t.Fatalf("%d events whole, %d byte by byte", len(whole), len(bytewise))
		}
		for i := range whole {
			if len(whole[i].Data) > 256 {
				t.Fatalf("event of %d bytes", len(whole[i].Data))
			}
			if whole[i].ID != bytewise[i].ID || whole[i].Name != bytewise[i].Name || string(whole[i].Data) != string(bytewise[i].Data) {
				t.Fatalf("event %d differs: %+v, %+v", i, whole[i], bytewise[i])
			}
		}
	})
}
