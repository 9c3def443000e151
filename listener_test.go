package engine_test

import (
	"bufio"
	"bytes"
	"encoding/json"
	"fmt"
	"io"
	"net"
	"net/http"
	"strings"
	"sync"
	"sync/atomic"
	"testing"

	"github.com/convengine/engine"
	"github.com/convengine/engine/enginetest"
	"github.com/convengine/engine/examples/demobank"
)

// rawRecorder is a TCP proxy in front of target that keeps the bytes clients send through it,
// to see header names as they travel, before any server canonicalises them.
type rawRecorder struct {
	URL      string
	accepts  atomic.Int32 // connections opened to the target
	answered atomic.Int64 // bytes the target sent back
	mu       sync.Mutex
	buf      bytes.Buffer
}

func newRawRecorder(t *testing.T, target string) *rawRecorder {
	ln, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	r := &rawRecorder{URL: "http://" + ln.Addr().String()}
	var (
		wg    sync.WaitGroup
		mu    sync.Mutex
		conns []net.Conn
	)
	t.Cleanup(func() {
		ln.Close()
		mu.Lock()
		for _, c := range conns { // kept alive by the engine's pool
			c.Close()
		}
		mu.Unlock()
		wg.Wait()
	})
	wg.Go(func() {
		for {
			c, err := ln.Accept()
			if err != nil {
				return
			}
			up, err := net.Dial("tcp", strings.TrimPrefix(target, "http://"))
			if err != nil {
				c.Close()
				continue
			}
			r.accepts.Add(1)
			mu.Lock()
			conns = append(conns, c, up)
			mu.Unlock()
			wg.Go(func() { io.Copy(up, io.TeeReader(c, r)); up.Close() })
			wg.Go(func() { io.Copy(answerCounter{c, &r.answered}, up); c.Close() })
		}
	})
	return r
}

// answerCounter counts what it passes on to w.
type answerCounter struct {
	w io.Writer
	n *atomic.Int64
}

func (a answerCounter) Write(p []byte) (int, error) {
	n, err := a.w.Write(p)
	a.n.Add(int64(n))
	return n, err
}

func (r *rawRecorder) Write(p []byte) (int, error) {
	r.mu.Lock()
	defer r.mu.Unlock()
	return r.buf.Write(p)
}

func (r *rawRecorder) String() string {
	r.mu.Lock()
	defer r.mu.Unlock()
	return r.buf.String()
}

// serveWithListener serves d's handler on a loopback server of its own through
// Engine.Listener, and returns its URL.
func serveWithListener(t *testing.T, d *enginetest.Demo, maxHeaderBytes int) string {
	ln, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	srv := &http.Server{Handler: d.Handler, MaxHeaderBytes: maxHeaderBytes}
	go srv.Serve(d.Engine.Listener(srv, ln))
	t.Cleanup(func() { srv.Close() })
	return "http://" + ln.Addr().String()
}

// TestForwardedNamesKeepTheirSpelling: through Engine.Listener, a forwarded header reaches the
// backend spelled byte for byte as the client sent it, over plain HTTP/1.1.
func TestForwardedNamesKeepTheirSpelling(t *testing.T) {
	var bank *rawRecorder
	d := newDemo(t, &enginetest.DemoOptions{})
	bank = newRawRecorder(t, d.BankURL)
	for _, env := range d.Tenant.Environments {
		env.BackendURL = bank.URL
	}
	base := serveWithListener(t, d, 0)

	client := &http.Client{Transport: &http.Transport{}}
	defer client.CloseIdleConnections()
	for i, body := range []string{`{"transcript":"what is my balance"}`, `{"transcript":"what is my balance"}`} {
		req, _ := http.NewRequestWithContext(t.Context(), http.MethodPost, base+engine.PathTurn, strings.NewReader(body))
		req.Header = d.Headers()
		// Set in the map directly: Go's client writes names as they are stored.
		req.Header["X-Engine-Forward-X-Tenant-ID"] = []string{"t-1"}
		req.Header["x-engine-forward-x-api-version"] = []string{"3"}
		if i == 1 { // the same connection, another spelling of the same name
			delete(req.Header, "X-Engine-Forward-X-Tenant-ID")
			req.Header["X-ENGINE-FORWARD-x-TENANT-id"] = []string{"t-2"}
		}
		resp, err := client.Do(req)
		if err != nil {
			t.Fatal(err)
		}
		io.Copy(io.Discard, resp.Body)
		resp.Body.Close()
		if resp.StatusCode != http.StatusOK {
			t.Fatalf("status %d", resp.StatusCode)
		}
	}
	raw := bank.String()
	for _, line := range []string{"\r\nX-Tenant-ID: t-1\r\n", "\r\nx-api-version: 3\r\n", "\r\nx-TENANT-id: t-2\r\n"} {
		if !strings.Contains(raw, line) {
			t.Errorf("the backend did not receive %q in:\n%s", line, raw)
		}
	}
	if strings.Contains(raw, "X-Tenant-Id:") || strings.Contains(raw, "X-Api-Version:") {
		t.Errorf("a canonicalised name reached the backend:\n%s", raw)
	}
}

// TestOversizedHeadersAreAProblem: a header block past the server's limit is answered by the
// engine's listener as an RFC 9457 problem with the request's id, and logged; one within it
// whose forwarded headers pass the engine's bounds gets its turn, the excess dropped.
func TestOversizedHeadersAreAProblem(t *testing.T) {
	d := newDemo(t, &enginetest.DemoOptions{})
	base := serveWithListener(t, d, 64<<10)

	send := func(extra int) (*http.Response, []byte) {
		conn, err := net.Dial("tcp", strings.TrimPrefix(base, "http://"))
		if err != nil {
			t.Fatal(err)
		}
		defer conn.Close()
		body := `{"transcript":"what is my balance"}`
		var b strings.Builder
		fmt.Fprintf(&b, "POST %s HTTP/1.1\r\nHost: engine\r\nX-Request-ID: prod-big-1\r\nX-Engine-Key: %s\r\nX-Token: %s\r\nContent-Type: application/json\r\nContent-Length: %d\r\n",
			engine.PathTurn, demobank.EngineKey, enginetest.DemoUserToken, len(body))
		for i := range extra {
			fmt.Fprintf(&b, "X-Engine-Forward-X-Pad-%03d: %s\r\n", i, strings.Repeat("v", 1000))
		}
		b.WriteString("\r\n" + body)
		go io.WriteString(conn, b.String()) // the server may answer before it read everything
		resp, err := http.ReadResponse(bufio.NewReader(conn), nil)
		if err != nil {
			t.Fatal(err)
		}
		defer resp.Body.Close()
		raw, _ := io.ReadAll(resp.Body)
		return resp, raw
	}

	resp, raw := send(60) // 60 KB of forwarded headers: within the server's limit, past the engine's bounds
	if resp.StatusCode != http.StatusOK || !strings.Contains(string(raw), "event: done") {
		t.Fatalf("60 forwarded headers of 1 KB: %d %s", resp.StatusCode, raw)
	}

	resp, raw = send(200)
	var p engine.Problem
	if err := json.Unmarshal(raw, &p); err != nil {
		t.Fatalf("%d %s: %v", resp.StatusCode, raw, err)
	}
	if resp.StatusCode != http.StatusRequestHeaderFieldsTooLarge || resp.Header.Get("Content-Type") != "application/problem+json" ||
		p.Code != engine.CodeHeadersTooLarge || p.RequestID != "prod-big-1" || resp.Header.Get(engine.HeaderRequestID) != "prod-big-1" ||
		resp.Header.Get(engine.HeaderEngineVersion) != engine.Version {
		t.Fatalf("%d %v %+v", resp.StatusCode, resp.Header, p)
	}
	if !strings.Contains(d.Logs.String(), `"msg":"request headers too large","requestId":"prod-big-1"`) {
		t.Errorf("not logged:\n%s", d.Logs.String())
	}
}
