package headers

import (
	"context"
	"net"
	"net/http"
	"strings"
	"testing"
)

// TestScanAcrossReads feeds two requests of one connection to the scanner cut in two at every
// byte: the names and the request id are found wherever the reads split them, bodies do not
// confuse the lines, and each request's request line forgets the previous request's names.
func TestScanAcrossReads(t *testing.T) {
	first := "POST /engine HTTP/1.1\r\nHost: x\r\nX-Request-ID: prod-7\r\nx-engine-FORWARD-X-Tenant-ID: a:b\r\n" +
		"X-Engine-Forward-Bad Name: 1\r\nX-Engine-Forwarded: no\r\nContent-Length: 2\r\n\r\n{}"
	second := "GET / HTTP/1.1\r\nX-Engine-Forward-x-api-version: 3\r\n\r\n"
	for cut := range len(first) + 1 {
		c := &scanningConn{}
		c.scan([]byte(first[:cut]))
		c.scan([]byte(first[cut:]))
		if got := c.spelling("X-Engine-Forward-X-Tenant-Id"); got != "x-engine-FORWARD-X-Tenant-ID" || c.requestID != "prod-7" || len(c.spellings) != 1 {
			t.Fatalf("cut %d: %q, request id %q, spellings %v", cut, got, c.requestID, c.spellings)
		}
	}
	for cut := range len(second) + 1 {
		c := &scanningConn{}
		c.scan([]byte(first))
		c.scan([]byte(second[:cut]))
		c.scan([]byte(second[cut:]))
		if got := c.spelling("X-Engine-Forward-X-Api-Version"); got != "X-Engine-Forward-x-api-version" || c.requestID != "" || len(c.spellings) != 1 {
			t.Fatalf("cut %d: %q, request id %q, spellings %v", cut, got, c.requestID, c.spellings)
		}
	}
}

func BenchmarkScanBody(b *testing.B) {
	body := make([]byte, 64<<10)
	for i := range body {
		body[i] = 'a' + byte(i%26)
	}
	c := &scanningConn{}
	b.SetBytes(int64(len(body)))
	for b.Loop() {
		c.scan(body)
	}
}

func TestWriteTooLarge(t *testing.T) {
	var b strings.Builder
	WriteTooLarge(&b, []byte(`{"status":431}`), "Engine-Version", "1.2", "X-Request-ID", "")
	want := "HTTP/1.1 431 Request Header Fields Too Large\r\nContent-Type: application/problem+json\r\n" +
		"Cache-Control: no-store\r\nConnection: close\r\nEngine-Version: 1.2\r\nContent-Length: 14\r\n\r\n" + `{"status":431}`
	if b.String() != want {
		t.Fatalf("wrote %q,\nwant %q", b.String(), want)
	}
}

// TestWrap: the server's ConnContext runs the one set before, then notes scanned connections;
// the listener takes the server's bound on header bytes.
func TestWrap(t *testing.T) {
	type key struct{}
	srv := &http.Server{MaxHeaderBytes: 1234, ConnContext: func(ctx context.Context, _ net.Conn) context.Context {
		return context.WithValue(ctx, key{}, "prev")
	}}
	opts := &ScanOptions{}
	ln := Wrap(srv, nil, opts)
	if opts.MaxHeaderBytes != 1234 || ln.(*scanningListener).opts != opts {
		t.Fatalf("the listener's options: %+v", opts)
	}
	ctx := srv.ConnContext(context.Background(), &scanningConn{opts: opts})
	if ctx.Value(key{}) != "prev" || Spelling(ctx) == nil {
		t.Fatal("ConnContext did not run the one set before, or did not note the scanned connection")
	}
}
