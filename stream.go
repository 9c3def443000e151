package engine

import (
	"bufio"
	"bytes"
	"context"
	"encoding/base64"
	"fmt"
	"net"
	"net/http"
	"net/url"
	"path"
	"strings"
	"sync"
	"time"

	"github.com/coder/websocket"
	"github.com/convengine/engine/internal/token"
)

// Limits and defaults of the voice socket.
const (
	maxStreamFrame      = 64 << 10
	maxUtteranceSamples = maxInputSeconds * inputSampleRate
	defaultStreamIdle   = 2 * time.Minute
	defaultStreamWrite  = 10 * time.Second
	defaultSendQueue    = 32
	audioChunkBytes     = 16 << 10 // of PCM per audio message: 0.37 s at 22 050 Hz
	// firstAudioChunkBytes bounds a turn's first audio message: 93 ms at 22 050 Hz.
	firstAudioChunkBytes = 4 << 10
)

// StreamOptions configure the voice socket. The zero value, or nil, is the defaults.
type StreamOptions struct {
	// OriginPatterns lists the origins of browser pages, besides the engine's own host, that
	// may open the socket: host patterns as path.Match reads them ("app.example.com",
	// "*.example.com"), or with a scheme ("https://app.example.com"). Requests without an
	// Origin header (apps, servers) are always accepted; a page of another origin gets 403.
	OriginPatterns []string
	// IdleTimeout closes a socket (1000) on which the client sent nothing while no turn ran
	// for that long. Default 2 minutes.
	IdleTimeout time.Duration
	// PingInterval is the time between keep-alive pings; a client that does not answer a ping
	// within the interval is disconnected. Default: Config.PingInterval.
	PingInterval time.Duration
	// WriteTimeout bounds the write of one message; a client that reads slower is
	// disconnected. Default 10 seconds.
	WriteTimeout time.Duration
	// SendQueue is how many messages may wait for a slow client (default 32). When it is full
	// the turn waits; a client that lets it fill while it keeps sending is closed with 1008.
	SendQueue int
	// MaxSockets bounds the sockets open at once in the process (default 1024), and
	// MaxSocketsPerUser those of one user of a tenant (default 4); one past them is answered
	// 503 overloaded or 429 rate_limited before the upgrade. Negative means no bound.
	MaxSockets        int
	MaxSocketsPerUser int
	// AudioMemory bounds the bytes of the users' speech that all sockets together hold
	// before it is transcribed (default 64 MiB, about 35 minutes of 16 kHz audio); the
	// utterance that would pass it is refused with an overloaded error message, and the socket
	// stays. Negative means no bound.
	AudioMemory int64
	// BargeIn is how long the user must speak over an answer to cancel it (default 200ms):
	// speech found by the engine's detector, so that room noise, a cough or the answer's own
	// echo in an open microphone never cut the answer off.
	BargeIn time.Duration
	// EndOfSpeech, when set, ends an utterance after that much silence following speech, as
	// if the client had sent end_of_speech: a client may then stream its microphone without
	// detecting the end itself. Zero: only the client ends utterances.
	EndOfSpeech time.Duration
}

// withDefaults returns the options with zero values replaced.
func (o *StreamOptions) withDefaults(ping time.Duration) (StreamOptions, error) {
	var s StreamOptions
	if o != nil {
		s = *o
		s.OriginPatterns = append([]string(nil), o.OriginPatterns...)
	}
	if s.IdleTimeout < 0 || s.PingInterval < 0 || s.WriteTimeout < 0 || s.SendQueue < 0 || s.BargeIn < 0 || s.EndOfSpeech < 0 {
		return s, fmt.Errorf("%w: Stream durations and SendQueue cannot be negative", ErrConfig)
	}
	for _, p := range s.OriginPatterns {
		if _, err := path.Match(p, ""); err != nil {
			return s, fmt.Errorf("%w: Stream.OriginPatterns: %q: %v", ErrConfig, p, err)
		}
	}
	if s.IdleTimeout == 0 {
		s.IdleTimeout = defaultStreamIdle
	}
	if s.PingInterval == 0 {
		s.PingInterval = ping
	}
	if s.WriteTimeout == 0 {
		s.WriteTimeout = defaultStreamWrite
	}
	if s.SendQueue == 0 {
		s.SendQueue = defaultSendQueue
	}
	if s.MaxSocketsPerUser == 0 {
		s.MaxSocketsPerUser = defaultMaxSocketsPerUser
	}
	if s.AudioMemory == 0 {
		s.AudioMemory = defaultAudioMemory
	}
	if s.BargeIn == 0 {
		s.BargeIn = defaultBargeIn
	}
	return s, nil
}

// StreamHandler returns the handler of the voice socket, GET /engine/stream (docs/voice.md).
func (e *Engine) StreamHandler() http.Handler {
	return e.route(http.MethodGet, PathStream, http.HandlerFunc(e.serveStream))
}

func (e *Engine) serveStream(w http.ResponseWriter, r *http.Request) {
	// A browser, which cannot set the headers, offers a stream ticket as a subprotocol.
	ticket, offered, p := offeredTicket(r)
	var (
		req     *request
		claims  *token.TicketClaims
		release func()
	)
	switch {
	case p != nil:
	case offered:
		if p = e.checkUpgrade(r); p == nil {
			req, claims, p = e.openTicket(r, ticket)
		}
	default:
		if req, p = e.readHeaders(r); p == nil {
			p = e.checkUpgrade(r)
		}
	}
	if p == nil && e.streams.isClosed() {
		p = newProblem(http.StatusServiceUnavailable, CodeShuttingDown, "the engine is shutting down; connect again")
	}
	if p == nil {
		release, p = e.acquireSocket(r.Context(), req)
	}
	if p == nil && claims != nil {
		if p = e.spendTicket(r.Context(), req, claims); p != nil {
			release()
		}
	}
	if p != nil {
		writeProblem(w, p, req.idOrEmpty())
		return
	}
	// The origin was checked above, with the problem responses of every route.
	sb := &smallBuffers{ResponseWriter: w}
	ws, err := websocket.Accept(sb, r, &websocket.AcceptOptions{InsecureSkipVerify: true, Subprotocols: []string{SubprotocolEngine}})
	if err != nil {
		release()
		e.log.WarnContext(r.Context(), "voice socket upgrade failed", "requestId", req.ID, "err", err)
		return
	}
	ws.SetReadLimit(maxStreamFrame)
	c := &voiceConn{e: e, req: req, opts: e.streamOpts, ws: ws, conn: sb.conn, started: e.now()}
	c.ctx, c.cancel = context.WithCancel(context.Background())
	c.turnsCtx, c.stopTurns = context.WithCancel(c.ctx)
	if !e.streams.add(c) {
		release()
		c.cancel()
		ws.Close(websocket.StatusGoingAway, "the server is shutting down")
		return
	}
	// The socket lives in a goroutine of its own, so that the server's state of the request
	// (the connection, the request and its headers) is freed when the handler returns.
	go func() {
		defer release()
		defer e.streams.remove(c)
		defer c.cancel()
		c.serve()
	}()
}

// acquireSocket takes one of the process's sockets and one of the user's.
func (e *Engine) acquireSocket(ctx context.Context, req *request) (release func(), p *Problem) {
	releaseSlot, ok := e.socketSlots.tryAcquire()
	if !ok {
		return nil, e.overloaded(ctx, BoundSockets, req, "the engine has as many voice sockets open as it can; connect again in a moment")
	}
	user := e.limits.userBucket(req.Tenant.Key, req.UserToken)
	if !e.userSockets.take(user) {
		releaseSlot()
		return nil, e.overloaded(ctx, BoundUserSockets, req, fmt.Sprintf("this user has %d voice sockets open; close one first", e.userSockets.limit))
	}
	return func() {
		e.userSockets.give(user)
		releaseSlot()
	}, nil
}

// checkUpgrade requires a WebSocket upgrade from an allowed origin.
func (e *Engine) checkUpgrade(r *http.Request) *Problem {
	if !headerHasToken(r.Header, "Connection", "upgrade") || !headerHasToken(r.Header, "Upgrade", "websocket") {
		p := newProblem(http.StatusUpgradeRequired, CodeUpgradeRequired, PathStream+" is a WebSocket; send an upgrade request")
		p.header = http.Header{"Upgrade": {"websocket"}, "Connection": {"Upgrade"}}
		return p
	}
	if v := r.Header.Get("Sec-WebSocket-Version"); v != "13" {
		p := newProblem(http.StatusBadRequest, CodeInvalidRequest, "Sec-WebSocket-Version must be 13")
		p.header = http.Header{"Sec-Websocket-Version": {"13"}}
		return p
	}
	if keys := r.Header.Values("Sec-WebSocket-Key"); len(keys) != 1 {
		return newProblem(http.StatusBadRequest, CodeInvalidRequest, "Sec-WebSocket-Key must be sent once")
	} else if k, err := base64.StdEncoding.DecodeString(strings.TrimSpace(keys[0])); err != nil || len(k) != 16 {
		return newProblem(http.StatusBadRequest, CodeInvalidRequest, "Sec-WebSocket-Key must be 16 bytes in base64")
	}
	if !e.originAllowed(r) {
		return newProblem(http.StatusForbidden, CodeOriginNotAllowed, "pages of this origin may not open the voice socket")
	}
	return nil
}

// originAllowed accepts requests without Origin, of the engine's own host, or of an origin
// of StreamOptions.OriginPatterns.
func (e *Engine) originAllowed(r *http.Request) bool {
	origin := r.Header.Get("Origin")
	if origin == "" {
		return true
	}
	u, err := url.Parse(origin)
	if err != nil || u.Host == "" {
		return false
	}
	if strings.EqualFold(u.Host, r.Host) {
		return true
	}
	for _, p := range e.streamOpts.OriginPatterns {
		target := u.Host
		if strings.Contains(p, "://") {
			target = u.Scheme + "://" + u.Host
		}
		if ok, _ := path.Match(strings.ToLower(p), strings.ToLower(target)); ok {
			return true
		}
	}
	return false
}

func headerHasToken(h http.Header, name, token string) bool {
	for _, v := range h.Values(name) {
		for _, t := range strings.Split(v, ",") {
			if strings.EqualFold(strings.TrimSpace(t), token) {
				return true
			}
		}
	}
	return false
}

// streamRegistry keeps the open sockets for Shutdown.
type streamRegistry struct {
	mu      sync.Mutex
	conns   map[*voiceConn]struct{}
	closing chan struct{} // closed by Shutdown
	closed  bool
	wg      sync.WaitGroup
}

func (s *streamRegistry) isClosed() bool {
	s.mu.Lock()
	defer s.mu.Unlock()
	return s.closed
}

func (s *streamRegistry) add(c *voiceConn) bool {
	s.mu.Lock()
	defer s.mu.Unlock()
	if s.closed {
		return false
	}
	if s.conns == nil {
		s.conns = make(map[*voiceConn]struct{})
	}
	if s.closing == nil {
		s.closing = make(chan struct{})
	}
	c.goingAway = s.closing
	s.conns[c] = struct{}{}
	s.wg.Add(1)
	return true
}

func (s *streamRegistry) remove(c *voiceConn) {
	s.mu.Lock()
	delete(s.conns, c)
	s.mu.Unlock()
	s.wg.Done()
}

// shutdown refuses new sockets, tells the open ones to go, and returns them.
func (s *streamRegistry) shutdown() []*voiceConn {
	s.mu.Lock()
	defer s.mu.Unlock()
	if !s.closed {
		s.closed = true
		if s.closing != nil {
			close(s.closing)
		}
	}
	out := make([]*voiceConn, 0, len(s.conns))
	for c := range s.conns {
		out = append(out, c)
	}
	return out
}

// Buffers of a voice socket's connection. net/http hands a hijacked connection its own
// 4 KiB reader and writer, which an idle socket would hold for as long as it is open. These
// are smaller: a frame larger than a buffer is read or written through it in more than one
// system call, which the socket's message rate makes negligible.
const (
	socketReadBuffer  = 1 << 10
	socketWriteBuffer = 1 << 10
)

// smallBuffers is the ResponseWriter a voice socket is accepted through: its Hijack replaces
// the server's buffers with smaller ones, and keeps the connection, whose write deadline
// bounds each message the socket writes.
type smallBuffers struct {
	http.ResponseWriter
	conn net.Conn
}

// Hijack takes the connection over from the server, with buffers of socketReadBuffer and
// socketWriteBuffer bytes. Bytes the server had read ahead (a frame sent right behind the
// upgrade request) are read first.
func (w *smallBuffers) Hijack() (net.Conn, *bufio.ReadWriter, error) {
	conn, rw, err := http.NewResponseController(w.ResponseWriter).Hijack()
	if err != nil {
		return nil, nil, err
	}
	w.conn = conn
	if err := rw.Writer.Flush(); err != nil {
		conn.Close()
		return nil, nil, fmt.Errorf("flushing the upgrade response: %w", err)
	}
	if n := rw.Reader.Buffered(); n > 0 {
		ahead, _ := rw.Reader.Peek(n)
		conn = &readAheadConn{Conn: conn, ahead: bytes.Clone(ahead)}
	}
	return conn, bufio.NewReadWriter(bufio.NewReaderSize(conn, socketReadBuffer), bufio.NewWriterSize(conn, socketWriteBuffer)), nil
}

// readAheadConn is a connection whose first bytes were already read from it.
type readAheadConn struct {
	net.Conn
	ahead []byte
}

func (c *readAheadConn) Read(p []byte) (int, error) {
	if len(c.ahead) > 0 {
		n := copy(p, c.ahead)
		c.ahead = c.ahead[n:]
		if len(c.ahead) == 0 {
			c.ahead = nil
		}
		return n, nil
	}
	return c.Conn.Read(p)
}
