package client_test

import (
	"bytes"
	"io"
	"net/http"
	"strconv"
	"strings"
	"sync/atomic"
	"testing"
	"time"

	"github.com/convengine/engine"
	"github.com/convengine/engine/client"
	"github.com/convengine/engine/enginetest"
)

// cutOnce is a transport whose first turn stream breaks after its first speak event, as a
// phone's does when it moves from Wi-Fi to cellular.
type cutOnce struct {
	base http.RoundTripper
	cut  atomic.Bool
}

func (c *cutOnce) RoundTrip(r *http.Request) (*http.Response, error) {
	resp, err := c.base.RoundTrip(r)
	if err != nil || r.URL.Path != client.PathTurn || c.cut.Swap(true) {
		return resp, err
	}
	resp.Body = &cutBody{rc: resp.Body}
	return resp, nil
}

// cutBody passes a stream through up to the end of its first speak event, then fails.
type cutBody struct {
	rc   io.ReadCloser
	seen bytes.Buffer
	done bool
}

func (b *cutBody) Read(p []byte) (int, error) {
	if b.done {
		return 0, io.ErrUnexpectedEOF
	}
	n, err := b.rc.Read(p)
	b.seen.Write(p[:n])
	if i := strings.Index(b.seen.String(), "event: speak\n"); i >= 0 {
		if j := strings.Index(b.seen.String()[i:], "\n\n"); j >= 0 {
			end := i + j + 2
			keep := n - (b.seen.Len() - end)
			b.done = true
			b.rc.Close()
			return max(keep, 0), nil
		}
	}
	return n, err
}

func (b *cutBody) Close() error { return b.rc.Close() }

// TestTurnResumesOnce: a turn whose stream breaks after its first speak event is resumed by
// the client from its last event; the spec is whole and the bank's tool ran once.
func TestTurnResumesOnce(t *testing.T) {
	d := enginetest.NewDemo(t, &enginetest.DemoOptions{Config: engine.Config{TurnLog: &engine.MemoryTurnLog{}}})
	tr := &cutOnce{base: http.DefaultTransport}
	c, err := client.New(d.URL, &client.Options{EngineKey: d.Tenant.Key, UserToken: client.StaticToken(userToken),
		HTTPClient: &http.Client{Transport: tr}})
	if err != nil {
		t.Fatal(err)
	}
	stream, err := c.Turn(t.Context(), &client.TurnRequest{Transcript: "what is my balance"})
	if err != nil {
		t.Fatal(err)
	}
	defer stream.Close()
	var ids []string
	for ev, err := range stream.Events() {
		if err != nil {
			t.Fatal(err)
		}
		switch e := ev.(type) {
		case *client.StartEvent:
			ids = append(ids, e.ID)
		case *client.SpeakEvent:
			ids = append(ids, e.ID)
		case *client.StatusEvent:
			ids = append(ids, e.ID)
		case *client.WidgetEvent:
			ids = append(ids, e.ID)
		case *client.DoneEvent:
			ids = append(ids, e.ID)
		}
	}
	spec, err := stream.Spec()
	if err != nil || spec.Speak != "Your Everyday Checking balance is $1,234.56." || len(spec.Widgets) != 1 {
		t.Fatalf("spec %+v, %v", spec, err)
	}
	if !tr.cut.Load() {
		t.Fatal("the stream was not cut")
	}
	for i, id := range ids {
		if id != strconv.Itoa(i+1) {
			t.Fatalf("event ids %v: an event came twice or not at all", ids)
		}
	}
	balance := 0
	for _, h := range d.Backend.Received() {
		if h.Get("X-Request-ID") != "" {
			balance++
		}
	}
	if balance != 1 {
		t.Errorf("the bank was called %d times", balance)
	}
	// The engine logs the resume once its last event is written: the client may read it first.
	for deadline := time.Now().Add(2 * time.Second); time.Now().Before(deadline) && !strings.Contains(d.Logs.String(), `"msg":"turn resumed"`); {
		time.Sleep(5 * time.Millisecond)
	}
	if !strings.Contains(d.Logs.String(), `"msg":"turn resumed"`) {
		t.Errorf("the turn was not resumed; the engine logged:\n%s", d.Logs.String())
	}
}

// TestClosedTurnIsNotResumed: a stream its caller closed, from another goroutine while it is
// read, ends there: the client does not take the close for a broken network and resume it.
func TestClosedTurnIsNotResumed(t *testing.T) {
	d := enginetest.NewDemo(t, &enginetest.DemoOptions{Config: engine.Config{TurnLog: &engine.MemoryTurnLog{}}})
	var resumes atomic.Int32
	c, err := client.New(d.URL, &client.Options{EngineKey: d.Tenant.Key, UserToken: client.StaticToken(userToken),
		HTTPClient: &http.Client{Transport: roundTripFunc(func(r *http.Request) (*http.Response, error) {
			if strings.HasPrefix(r.URL.Path, client.PathTurns) {
				resumes.Add(1)
			}
			return http.DefaultTransport.RoundTrip(r)
		})}})
	if err != nil {
		t.Fatal(err)
	}
	stream, err := c.Turn(t.Context(), &client.TurnRequest{Transcript: "what is my balance"})
	if err != nil {
		t.Fatal(err)
	}
	events := 0
	for _, err := range stream.Events() {
		if err != nil {
			break
		}
		if events++; events == 1 {
			go stream.Close()
			time.Sleep(50 * time.Millisecond) // the close lands while the stream is read
		}
	}
	if n := resumes.Load(); n != 0 {
		t.Errorf("a closed stream was resumed %d times (%d events read)", n, events)
	}
}

type roundTripFunc func(*http.Request) (*http.Response, error)

func (f roundTripFunc) RoundTrip(r *http.Request) (*http.Response, error) { return f(r) }

// TestTurnResumesThroughADrain: the first resume of a broken turn reaches a replica that is
// shutting down (503 shutting_down, retryable) and the second breaks too; the client pauses
// and resumes again, and the spec is whole, its events each once.
func TestTurnResumesThroughADrain(t *testing.T) {
	d := enginetest.NewDemo(t, &enginetest.DemoOptions{Config: engine.Config{TurnLog: &engine.MemoryTurnLog{}}})
	var resumes atomic.Int32
	cut := &cutOnce{base: http.DefaultTransport}
	c, err := client.New(d.URL, &client.Options{EngineKey: d.Tenant.Key, UserToken: client.StaticToken(userToken),
		HTTPClient: &http.Client{Transport: roundTripFunc(func(r *http.Request) (*http.Response, error) {
			if !strings.HasPrefix(r.URL.Path, client.PathTurns) {
				return cut.RoundTrip(r)
			}
			switch resumes.Add(1) {
			case 1:
				body := `{"type":"about:blank","title":"Service Unavailable","status":503,"code":"shutting_down","detail":"this server is shutting down","retryable":true}`
				return &http.Response{StatusCode: http.StatusServiceUnavailable, Header: http.Header{"Content-Type": {"application/problem+json"}, "Retry-After": {"1"}},
					Body: io.NopCloser(strings.NewReader(body)), Request: r}, nil
			case 2:
				return nil, io.ErrUnexpectedEOF // the balancer's connection broke
			}
			return http.DefaultTransport.RoundTrip(r)
		})}})
	if err != nil {
		t.Fatal(err)
	}
	stream, err := c.Turn(t.Context(), &client.TurnRequest{Transcript: "what is my balance"})
	if err != nil {
		t.Fatal(err)
	}
	defer stream.Close()
	spec, err := stream.Spec()
	if err != nil || spec.Speak != "Your Everyday Checking balance is $1,234.56." || len(spec.Widgets) != 1 {
		t.Fatalf("spec %+v, %v", spec, err)
	}
	if n := resumes.Load(); n != 3 || !cut.cut.Load() {
		t.Errorf("%d resumes (cut %v), want three: refused, broken, answered", n, cut.cut.Load())
	}
}
