package fallback_test

import (
	"bufio"
	"bytes"
	"io"
	"io/fs"
	"net"
	"net/http"
	"net/http/httptest"
	"strings"
	"sync"
	"sync/atomic"
	"testing"

	"github.com/convengine/engine/enginetest"
)

// fake is an OpenAI-compatible server that fails as real ones do. Its mode is the name of a
// recorded answer of enginetest.OpenAIFixtures (text, server_error, rate_limited, cut_midstream,
// error_midstream, cut_before_text, invalid_key…), or one of the shapes no recording holds:
//
//	hang          headers never come: the first token never does
//	stall         the stream opens with its first chunk (no text yet), then nothing
//	stall_text    the stream says a few words, then nothing
//	busy_30s      429 with OpenAI's error body and retry-after: 30, retry-after-ms: 30000
//	overloaded    503 with a proxy's HTML page
type fake struct {
	URL  string
	srv  *httptest.Server
	mode atomic.Pointer[string]
	hits atomic.Int32
	// stop releases the handlers that hang, so that the server can close.
	stop     chan struct{}
	stopOnce sync.Once
}

func newFake(t *testing.T, mode string) *fake {
	t.Helper()
	f := &fake{stop: make(chan struct{})}
	f.set(mode)
	f.srv = httptest.NewServer(http.HandlerFunc(f.serve))
	f.URL = f.srv.URL + "/v1/"
	t.Cleanup(func() {
		f.stopOnce.Do(func() { close(f.stop) })
		f.srv.Close()
	})
	return f
}

func (f *fake) set(mode string) { f.mode.Store(&mode) }

// refused returns the base URL of a port nothing listens on: connections are refused.
func refused(t *testing.T) string {
	t.Helper()
	ln, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	addr := ln.Addr().String()
	ln.Close()
	return "http://" + addr + "/v1/"
}

func (f *fake) serve(w http.ResponseWriter, r *http.Request) {
	io.Copy(io.Discard, r.Body)
	f.hits.Add(1)
	mode := *f.mode.Load()
	wait := func() {
		select {
		case <-r.Context().Done():
		case <-f.stop:
		}
	}
	switch mode {
	case "hang":
		wait()
		return
	case "stall", "stall_text":
		events := fixtureEvents(mode)
		w.Header().Set("Content-Type", "text/event-stream")
		w.WriteHeader(http.StatusOK)
		for _, ev := range events {
			w.Write(ev)
			w.(http.Flusher).Flush()
		}
		wait()
		return
	case "busy_30s":
		w.Header().Set("Content-Type", "application/json")
		w.Header().Set("retry-after", "30")
		w.Header().Set("retry-after-ms", "30000")
		w.WriteHeader(http.StatusTooManyRequests)
		io.WriteString(w, `{"error":{"message":"Rate limit reached for gpt-4o-mini on requests per min (RPM): Limit 500, Used 500, Requested 1.","type":"requests","param":null,"code":"rate_limit_exceeded"}}`)
		return
	case "overloaded":
		w.Header().Set("Content-Type", "text/html")
		w.WriteHeader(http.StatusServiceUnavailable)
		io.WriteString(w, "<html><body><h1>503 Service Temporarily Unavailable</h1></body></html>")
		return
	}
	replay(w, r, mode)
}

// fixtureEvents returns the first events of text.http: its role chunk alone for "stall", and
// the first words too for "stall_text".
func fixtureEvents(mode string) [][]byte {
	_, body := fixture("text")
	events := bytes.SplitAfter(body, []byte("\n\n"))
	if mode == "stall" {
		return events[:1]
	}
	return events[:4]
}

func fixture(name string) (*http.Response, []byte) {
	raw, err := fs.ReadFile(enginetest.OpenAIFixtures(), name+".http")
	if err != nil {
		panic(err)
	}
	resp, err := http.ReadResponse(bufio.NewReader(bytes.NewReader(raw)), nil)
	if err != nil {
		panic(err)
	}
	body, _ := io.ReadAll(resp.Body)
	resp.Body.Close()
	return resp, body
}

// replay answers with a recorded answer as enginetest's replay server does: event by event,
// and a connection dropped where the recording was cut.
func replay(w http.ResponseWriter, _ *http.Request, name string) {
	resp, body := fixture(name)
	for k, vs := range resp.Header {
		switch k {
		case "Content-Length", "Transfer-Encoding", "Connection", "X-Replay-Cut":
			continue
		}
		w.Header()[k] = vs
	}
	w.WriteHeader(resp.StatusCode)
	if strings.HasPrefix(resp.Header.Get("Content-Type"), "text/event-stream") {
		for _, ev := range bytes.SplitAfter(body, []byte("\n\n")) {
			w.Write(ev)
			w.(http.Flusher).Flush()
		}
	} else {
		w.Write(body)
	}
	if resp.Header.Get("X-Replay-Cut") == "true" {
		panic(http.ErrAbortHandler)
	}
}
