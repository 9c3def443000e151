package headers

// The scan of header blocks: a listener whose connections carry plain-text HTTP/1.1 is wrapped
// for what a handler alone cannot see: how the client spelled each forwarded header's name
// (Go's server canonicalises names before any handler sees them), how many bytes the header
// blocks being received hold together, and the server's own plain-text answer to a header
// block past its limit, which it replaces.

import (
	"bytes"
	"context"
	"errors"
	"io"
	"net"
	"net/http"
	"strconv"
	"sync"
	"sync/atomic"
)

// ScanOptions are what a listener's connections share.
type ScanOptions struct {
	// MaxHeaderBytes is the server's http.Server.MaxHeaderBytes; 0 means
	// http.DefaultMaxHeaderBytes.
	MaxHeaderBytes int
	// Take reserves n bytes of the header memory, or reports false when they would pass it;
	// Give gives them back. Both are called from many goroutines at once.
	Take func(n int64) bool
	Give func(n int64)
	// MemoryFull is called when a connection is closed because its header bytes would pass
	// the header memory.
	MemoryFull func()
	// TooLarge writes to conn the whole response to a header block larger than MaxHeaderBytes
	// (its status line, headers and body), in place of the server's plain-text one, given the
	// block's last X-Request-ID value as sent, which may be "" or malformed, and the limit.
	TooLarge func(conn io.Writer, requestID string, limit int)
}

// NewListener returns ln whose connections are scanned. Give the server [ConnContext], so
// that [Spelling] finds a request's connection.
func NewListener(ln net.Listener, opts *ScanOptions) net.Listener {
	return &scanningListener{Listener: ln, opts: opts}
}

// Wrap returns ln whose connections are scanned (see [NewListener]), for srv to serve, and
// sets srv.ConnContext to [ConnContext], calling the one already set first. opts.MaxHeaderBytes
// is set to srv's.
func Wrap(srv *http.Server, ln net.Listener, opts *ScanOptions) net.Listener {
	prev := srv.ConnContext
	srv.ConnContext = func(ctx context.Context, c net.Conn) context.Context {
		if prev != nil {
			ctx = prev(ctx, c)
		}
		return ConnContext(ctx, c)
	}
	opts.MaxHeaderBytes = srv.MaxHeaderBytes
	return NewListener(ln, opts)
}

// WriteTooLarge writes to conn a 431 response whose body is problem, an RFC 9457 problem
// document, and which closes the connection, with header's name and value pairs as more
// headers; a pair with an empty value is left out.
func WriteTooLarge(conn io.Writer, problem []byte, header ...string) error {
	var b bytes.Buffer
	b.WriteString("HTTP/1.1 431 Request Header Fields Too Large\r\nContent-Type: application/problem+json\r\nCache-Control: no-store\r\nConnection: close\r\n")
	for i := 0; i+1 < len(header); i += 2 {
		if header[i+1] != "" {
			b.WriteString(header[i] + ": " + header[i+1] + "\r\n")
		}
	}
	b.WriteString("Content-Length: " + strconv.Itoa(len(problem)) + "\r\n\r\n")
	b.Write(problem)
	_, err := conn.Write(b.Bytes())
	return err
}

// ConnContext is an http.Server's ConnContext: it notes c in ctx when c is scanned.
func ConnContext(ctx context.Context, c net.Conn) context.Context {
	if sc, ok := c.(*scanningConn); ok {
		ctx = context.WithValue(ctx, scanningConnKey{}, sc)
	}
	return ctx
}

// Spelling returns the function that recovers forwarded header names for a request whose
// context came from [ConnContext] on a scanned connection, or nil.
func Spelling(ctx context.Context) func(string) string {
	if c, ok := ctx.Value(scanningConnKey{}).(*scanningConn); ok {
		return c.spelling
	}
	return nil
}

type scanningListener struct {
	net.Listener
	opts *ScanOptions
}

func (l *scanningListener) Accept() (net.Conn, error) {
	c, err := l.Listener.Accept()
	if err != nil {
		return nil, err
	}
	return &scanningConn{Conn: c, opts: l.opts, inHeader: true}, nil
}

type scanningConnKey struct{}

// Bounds of what a connection remembers of the names it read.
const (
	maxScannedLine  = 512 // bytes of a line's start kept to find its name
	maxScannedNames = 256 // spellings kept per connection; past it, the oldest are forgotten
)

var (
	forwardPrefixLower = []byte("x-engine-forward-")
	requestIDLower     = []byte("x-request-id")
)

// scanningConn notes, from the bytes the server reads, how the client spelled each forwarded
// header name and the last X-Request-ID, and replaces the server's plain-text 431.
// The server reads a connection from one goroutine at a time, and its handler asks for
// spellings from another: what is noted is guarded.
type scanningConn struct {
	net.Conn
	opts *ScanOptions

	// Owned by the reading goroutine.
	state scanState
	line  []byte   // the current line's name, or X-Request-ID's value, so far
	tail  [10]byte // the last bytes of the line being skipped, to find a request line's end
	ntail int
	// The header block being received: whether the connection is in one, its last four
	// bytes, and how many of its bytes it counts in the header memory (also given back by
	// Close, from another goroutine).
	inHeader   bool
	headerEnd  uint32
	nextHeader int // where in the bytes scanned last a request's header block starts, or -1
	held       atomic.Int64
	closed     atomic.Bool

	mu        sync.Mutex
	spellings map[string]string // canonical name → as sent
	requestID string            // the value of the last X-Request-ID line, as sent
}

type scanState int

const (
	scanName  scanState = iota // at a line's start, reading its name
	scanValue                  // reading the value of X-Request-ID
	scanSkip                   // skipping to the line's end
)

// ErrHeaderMemory closes a connection whose header bytes would pass the header memory.
var ErrHeaderMemory = errors.New("engine: the header blocks being received fill the engine's header memory")

func (c *scanningConn) Read(p []byte) (int, error) {
	n, err := c.Conn.Read(p)
	c.scan(p[:n])
	if !c.countHeader(p[:n]) {
		c.Conn.Close()
		if c.opts.MemoryFull != nil {
			c.opts.MemoryFull()
		}
		return 0, ErrHeaderMemory
	}
	return n, err
}

// countHeader counts the bytes of b that belong to a header block in the header memory
// until the block's blank line, which gives them back, or reports false when they do not fit.
// Past what the server reads of one block (srv.MaxHeaderBytes and its 4 KiB of slack) the
// bytes cannot be a header block the server will take: they are given back and no longer
// counted.
func (c *scanningConn) countHeader(b []byte) bool {
	if c.nextHeader >= 0 { // a request line ended in b: its header block follows
		c.countHeaderBytes(b[:c.nextHeader])
		c.inHeader, c.headerEnd = true, 0
		b = b[c.nextHeader:]
	}
	return c.countHeaderBytes(b)
}

func (c *scanningConn) countHeaderBytes(b []byte) bool {
	if !c.inHeader || len(b) == 0 {
		return true
	}
	n := len(b)
	for i, ch := range b {
		if c.headerEnd = c.headerEnd<<8 | uint32(ch); c.headerEnd == '\r'<<24|'\n'<<16|'\r'<<8|'\n' {
			n = i + 1
			c.inHeader = false
			break
		}
	}
	if c.inHeader && c.held.Load()+int64(n) > int64(c.maxHeaderBytes())+4096 {
		c.inHeader = false
	}
	if !c.inHeader {
		c.opts.Give(c.held.Swap(0))
		return true
	}
	if !c.opts.Take(int64(n)) {
		c.opts.Give(c.held.Swap(0))
		return false
	}
	c.held.Add(int64(n))
	if c.closed.Load() { // closed meanwhile: Close gave back what it saw
		c.opts.Give(c.held.Swap(0))
	}
	return true
}

// Close closes the connection and gives back the header bytes it holds.
func (c *scanningConn) Close() error {
	c.closed.Store(true)
	c.opts.Give(c.held.Swap(0))
	return c.Conn.Close()
}

// scan follows lines through b. A line that cannot be a forwarded header or X-Request-ID is
// skipped to its end at the speed of bytes.IndexByte, so that bodies and socket frames cost
// little.
func (c *scanningConn) scan(b []byte) {
	all := len(b)
	c.nextHeader = -1
	for len(b) > 0 {
		switch c.state {
		case scanSkip:
			i := bytes.IndexByte(b, '\n')
			if i < 0 {
				c.keepTail(b)
				return
			}
			c.keepTail(b[:i])
			if isRequestLineEnd(c.tail[len(c.tail)-c.ntail:]) {
				c.newRequest()
				c.nextHeader = all - len(b) + i + 1
			}
			b = b[i+1:]
			c.state, c.line, c.ntail = scanName, c.line[:0], 0
		case scanName:
			i := bytes.IndexAny(b, ":\n")
			part := b
			if i >= 0 {
				part = b[:i]
			}
			c.line = append(c.line, part...)
			if len(c.line) > maxScannedLine || !(hasLowerPrefix(c.line, forwardPrefixLower) || hasLowerPrefix(c.line, requestIDLower)) {
				c.state = scanSkip
				continue
			}
			if i < 0 {
				return // the name goes on in the next read
			}
			sep := b[i]
			b = b[i+1:]
			switch {
			case sep == '\n':
				c.line = c.line[:0]
			case len(c.line) == len(requestIDLower):
				c.state, c.line = scanValue, c.line[:0]
			default:
				c.noteName(c.line)
				c.state = scanSkip
			}
		case scanValue:
			i := bytes.IndexByte(b, '\n')
			part := b
			if i >= 0 {
				part = b[:i]
			}
			c.line = append(c.line, part...)
			if len(c.line) > maxScannedLine {
				c.state = scanSkip
				continue
			}
			if i < 0 {
				return
			}
			c.mu.Lock()
			c.requestID = string(bytes.TrimSpace(c.line))
			c.mu.Unlock()
			b = b[i+1:]
			c.state, c.line = scanName, c.line[:0]
		}
	}
}

// keepTail keeps the last bytes of the skipped line, right-aligned in c.tail.
func (c *scanningConn) keepTail(b []byte) {
	var buf [2 * len(c.tail)]byte
	n := copy(buf[:], c.tail[len(c.tail)-c.ntail:])
	if len(b) > len(c.tail) {
		b = b[len(b)-len(c.tail):]
	}
	n += copy(buf[n:], b)
	keep := min(n, len(c.tail))
	copy(c.tail[len(c.tail)-keep:], buf[n-keep:n])
	c.ntail = keep
}

// isRequestLineEnd reports whether a line ends as an HTTP/1 request line does.
func isRequestLineEnd(end []byte) bool {
	return bytes.HasSuffix(end, []byte(" HTTP/1.1\r")) || bytes.HasSuffix(end, []byte(" HTTP/1.0\r"))
}

// newRequest forgets what the connection's previous request sent: names and ids are the
// current request's own. (A pipelined request read before the current one's handler asks
// leaves it the canonical names and no id.)
func (c *scanningConn) newRequest() {
	c.mu.Lock()
	defer c.mu.Unlock()
	clear(c.spellings)
	c.requestID = ""
}

// noteName records the spelling of a forwarded header's name.
func (c *scanningConn) noteName(name []byte) {
	if len(name) <= len(forwardPrefixLower) || !hasLowerPrefix(name, forwardPrefixLower) || !ValidName(string(name)) {
		return
	}
	canonical := http.CanonicalHeaderKey(string(name))
	c.mu.Lock()
	defer c.mu.Unlock()
	if c.spellings[canonical] == string(name) {
		return
	}
	if c.spellings == nil || len(c.spellings) >= maxScannedNames {
		c.spellings = make(map[string]string)
	}
	c.spellings[canonical] = string(name)
}

// hasLowerPrefix reports whether b starts with lower, or lower with b, ignoring ASCII case:
// whether b may still become a line starting with lower.
func hasLowerPrefix(b, lower []byte) bool {
	n := min(len(b), len(lower))
	for i := range n {
		ch := b[i]
		if 'A' <= ch && ch <= 'Z' {
			ch += 'a' - 'A'
		}
		if ch != lower[i] {
			return false
		}
	}
	return true
}

// spelling returns how the client spelled the header whose canonical name is name, or name.
func (c *scanningConn) spelling(name string) string {
	c.mu.Lock()
	defer c.mu.Unlock()
	if s, ok := c.spellings[name]; ok {
		return s
	}
	return name
}

// goTooLarge is what Go's server writes to the connection for a header block past its limit.
const goTooLarge = "HTTP/1.1 431 Request Header Fields Too Large\r\nContent-Type: text/plain; charset=utf-8\r\nConnection: close\r\n\r\n431 Request Header Fields Too Large"

func (c *scanningConn) Write(p []byte) (int, error) {
	if len(p) == len(goTooLarge) && string(p) == goTooLarge {
		c.writeTooLarge()
		return len(p), nil
	}
	return c.Conn.Write(p)
}

// writeTooLarge answers the header block the server refused with ScanOptions.TooLarge.
func (c *scanningConn) writeTooLarge() {
	c.mu.Lock()
	id := c.requestID
	c.mu.Unlock()
	c.opts.TooLarge(c.Conn, id, c.maxHeaderBytes())
}

func (c *scanningConn) maxHeaderBytes() int {
	if c.opts != nil && c.opts.MaxHeaderBytes > 0 {
		return c.opts.MaxHeaderBytes
	}
	return http.DefaultMaxHeaderBytes
}

// CloseWrite lets the server half-close the connection after an error, as it does a TCP one.
func (c *scanningConn) CloseWrite() error {
	if cw, ok := c.Conn.(interface{ CloseWrite() error }); ok {
		return cw.CloseWrite()
	}
	return nil
}
