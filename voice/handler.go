package voice

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
	"sync/atomic"
	"time"

	"github.com/coder/websocket"

	"github.com/convengine/engine"
	"github.com/convengine/engine/internal/bound"
)

// Limits and defaults of the voice socket.
const (
	maxStreamFrame      = 64 << 10
	inputSampleRate     = 16000
	maxInputSeconds     = 60
	maxUtteranceSamples = maxInputSeconds * inputSampleRate
	defaultStreamIdle   = 2 * time.Minute
	defaultStreamWrite  = 10 * time.Second
	defaultSendQueue    = 32
	defaultPing         = 15 * time.Second
	defaultMaxSockets   = 1024
	defaultUserSockets  = 4
	defaultAudioMemory  = 64 << 20
	audioChunkBytes     = 16 << 10 // of PCM per audio message: 0.37 s at 22 050 Hz
	// firstAudioChunkBytes bounds a turn's first audio message: 93 ms at 22 050 Hz.
	firstAudioChunkBytes = 4 << 10
)

// Options configure the voice socket. The zero value, or nil, is the defaults.
type Options struct {
	// OriginPatterns lists the origins of browser pages, besides the engine's own host, that
	// may open the socket: host patterns as path.Match reads them ("app.example.com",
	// "*.example.com"), or with a scheme ("https://app.example.com"). Requests without an
	// Origin header (apps, servers) are always accepted; a page of another origin gets 403.
	OriginPatterns []string
	// IdleTimeout closes a socket (1000) on which the client sent nothing while no turn ran
	// for that long. Default 2 minutes.
	IdleTimeout time.Duration
	// PingInterval is the time between keep-alive pings; a client that does not answer a ping
	// within the interval is disconnected. Default 15 seconds.
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
	// MaxListening bounds the utterances heard at once by a streaming recogniser (an
	// [engine.StreamingTranscriber]), each a connection to its provider: default MaxSockets.
	// One past it is transcribed after its end of speech, as with a recogniser that does not
	// stream.
	MaxListening int
	// RecognizerEndOfSpeech lets a streaming recogniser's endpointing end utterances too
	// (Deepgram's speech_final and UtteranceEnd), besides the engine's detector and the
	// client.
	RecognizerEndOfSpeech bool
}

// withDefaults returns the options with zero values replaced.
func (o *Options) withDefaults() (Options, error) {
	var s Options
	if o != nil {
		s = *o
		s.OriginPatterns = append([]string(nil), o.OriginPatterns...)
	}
	if s.IdleTimeout < 0 || s.PingInterval < 0 || s.WriteTimeout < 0 || s.SendQueue < 0 || s.BargeIn < 0 || s.EndOfSpeech < 0 {
		return s, fmt.Errorf("%w: voice: durations and SendQueue cannot be negative", engine.ErrConfig)
	}
	for _, p := range s.OriginPatterns {
		if _, err := path.Match(p, ""); err != nil {
			return s, fmt.Errorf("%w: voice: OriginPatterns: %q: %v", engine.ErrConfig, p, err)
		}
	}
	if s.IdleTimeout == 0 {
		s.IdleTimeout = defaultStreamIdle
	}
	if s.PingInterval == 0 {
		s.PingInterval = defaultPing
	}
	if s.WriteTimeout == 0 {
		s.WriteTimeout = defaultStreamWrite
	}
	if s.SendQueue == 0 {
		s.SendQueue = defaultSendQueue
	}
	if s.MaxSocketsPerUser == 0 {
		s.MaxSocketsPerUser = defaultUserSockets
	}
	if s.AudioMemory == 0 {
		s.AudioMemory = defaultAudioMemory
	}
	if s.BargeIn == 0 {
		s.BargeIn = defaultBargeIn
	}
	return s, nil
}

// Server serves the voice socket of one engine. Make one with [New]; it is safe for
// concurrent use.
type Server struct {
	e         *engine.Engine
	opts      Options
	streams   streamRegistry
	sockets   *engine.Hold // the process's and each user's sockets, taken by the engine's admission
	listening *engine.Hold // connections to a streaming recogniser
	// notStreaming is set once the engine's recogniser was found not to stream.
	notStreaming atomic.Bool
	audioMemory  *bound.Budget
}

// New returns the voice socket of e, configured by opts (nil: the defaults). It registers with
// e's Shutdown, which then closes its sockets.
func New(e *engine.Engine, opts *Options) (*Server, error) {
	o, err := opts.withDefaults()
	if err != nil {
		return nil, err
	}
	maxSockets := o.MaxSockets
	if maxSockets == 0 {
		maxSockets = defaultMaxSockets
	}
	s := &Server{e: e, opts: o, sockets: engine.NewHold(engine.BoundSockets, "voice sockets", maxSockets, 0, o.MaxSocketsPerUser),
		audioMemory: &bound.Budget{Limit: o.AudioMemory}}
	maxListening := o.MaxListening
	if maxListening == 0 {
		maxListening = maxSockets
	}
	s.listening = engine.NewHold("recognizer_streams", "utterances heard while spoken", maxListening, 0, o.MaxSocketsPerUser)
	e.OnShutdown(s.Shutdown)
	return s, nil
}

// Routes are the socket's routes, for [engine.Engine.Handler]: GET /engine/stream and POST
// /engine/stream-ticket.
func (s *Server) Routes() []engine.Route {
	return []engine.Route{{Pattern: engine.PathStream, Handler: s.Handler()}, {Pattern: engine.PathStreamTicket, Handler: s.TicketHandler()}}
}

// Handler returns the handler of the voice socket, GET /engine/stream (docs/voice.md).
func (s *Server) Handler() http.Handler {
	return s.e.Route(http.MethodGet, engine.PathStream, http.HandlerFunc(s.serveStream))
}

func (s *Server) serveStream(w http.ResponseWriter, r *http.Request) {
	ctx := r.Context()
	// A browser, which cannot set the headers, offers a stream ticket as a subprotocol.
	ticket, offered, err := offeredTicket(r)
	var (
		caller *engine.Caller
		spend  func(context.Context) error
	)
	switch {
	case err != nil:
	case offered:
		if err = s.checkUpgrade(w, r, nil); err == nil {
			caller, spend, err = s.e.OpenTicket(r, ticket)
		}
	default:
		caller, err = s.e.CallerFromRequest(r)
	}
	if err == nil && s.streams.isClosed() {
		err = problem(http.StatusServiceUnavailable, engine.CodeShuttingDown, "the engine is shutting down; connect again", caller)
	}
	// The socket is admitted once, right after its caller is known: its place among the
	// process's and the user's sockets, then the ticket spent, then the rate limits.
	var admission *engine.Admission
	if err == nil {
		admission, err = s.e.Admit(ctx, caller, engine.Work{Kind: engine.WorkConnection, Hold: s.sockets, Claim: spend})
	}
	if err == nil && !offered {
		if err = s.checkUpgrade(w, r, caller); err != nil {
			admission.Release()
		}
	}
	if err != nil {
		engine.WriteProblem(w, err)
		return
	}
	release := admission.Release
	// The origin was checked above, with the problem responses of every route.
	sb := &smallBuffers{ResponseWriter: w}
	ws, err := websocket.Accept(sb, r, &websocket.AcceptOptions{InsecureSkipVerify: true, Subprotocols: []string{SubprotocolEngine}})
	if err != nil {
		release()
		s.e.Logger().WarnContext(ctx, "voice socket upgrade failed", "requestId", caller.RequestID, "err", err)
		return
	}
	ws.SetReadLimit(maxStreamFrame)
	c := &voiceConn{s: s, e: s.e, caller: caller, opts: s.opts, ws: ws, conn: sb.conn, started: time.Now()}
	c.ctx, c.cancel = context.WithCancel(context.Background())
	c.turnsCtx, c.stopTurns = context.WithCancel(c.ctx)
	if !s.streams.add(c) {
		release()
		c.cancel()
		ws.Close(websocket.StatusServiceRestart, "the server is restarting; connect again")
		return
	}
	// The socket lives in a goroutine of its own, so that the server's state of the request
	// (the connection, the request and its headers) is freed when the handler returns.
	go func() {
		defer release()
		defer s.streams.remove(c)
		defer c.cancel()
		c.serve()
	}()
}

// problem is a problem of the socket's, for caller's request when it is known.
func problem(status int, code, detail string, caller *engine.Caller) *engine.Problem {
	p := engine.NewProblem(status, code, detail)
	if caller != nil {
		p.RequestID = caller.RequestID
	}
	return p
}

// Shutdown closes every socket with 1012 (service restart) and refuses new ones. A socket running a
// turn is closed when the turn has been answered; when ctx ends first, the turns still running
// are cancelled and their sockets closed at once, and Shutdown returns ctx.Err(). It returns
// when every socket is closed. The engine's Shutdown calls it.
func (s *Server) Shutdown(ctx context.Context) error {
	conns := s.streams.shutdown()
	for _, c := range conns {
		if !c.busy.Load() {
			c.goAway() // a busy socket goes when its turn ends
		}
	}
	all := make(chan struct{})
	go func() {
		s.streams.wg.Wait()
		close(all)
	}()
	select {
	case <-all:
		return nil
	case <-ctx.Done():
	}
	var closers sync.WaitGroup
	for _, c := range conns {
		closers.Go(func() { c.abort(websocket.StatusServiceRestart, "the server is restarting; connect again") })
	}
	closers.Wait()
	<-all
	return ctx.Err()
}

// checkUpgrade requires a WebSocket upgrade from an allowed origin. The problem is for
// caller's request, when it is known already.
func (s *Server) checkUpgrade(w http.ResponseWriter, r *http.Request, caller *engine.Caller) error {
	h := w.Header()
	if !headerHasToken(r.Header, "Connection", "upgrade") || !headerHasToken(r.Header, "Upgrade", "websocket") {
		h.Set("Upgrade", "websocket")
		h.Set("Connection", "Upgrade")
		return problem(http.StatusUpgradeRequired, engine.CodeUpgradeRequired, engine.PathStream+" is a WebSocket; send an upgrade request", caller)
	}
	if v := r.Header.Get("Sec-WebSocket-Version"); v != "13" {
		h.Set("Sec-Websocket-Version", "13")
		return problem(http.StatusBadRequest, engine.CodeInvalidRequest, "Sec-WebSocket-Version must be 13", caller)
	}
	if keys := r.Header.Values("Sec-WebSocket-Key"); len(keys) != 1 {
		return problem(http.StatusBadRequest, engine.CodeInvalidRequest, "Sec-WebSocket-Key must be sent once", caller)
	} else if k, err := base64.StdEncoding.DecodeString(strings.TrimSpace(keys[0])); err != nil || len(k) != 16 {
		return problem(http.StatusBadRequest, engine.CodeInvalidRequest, "Sec-WebSocket-Key must be 16 bytes in base64", caller)
	}
	if !s.originAllowed(r) {
		return problem(http.StatusForbidden, engine.CodeOriginNotAllowed, "pages of this origin may not open the voice socket", caller)
	}
	return nil
}

// originAllowed accepts requests without Origin, of the engine's own host, or of an origin
// of Options.OriginPatterns.
func (s *Server) originAllowed(r *http.Request) bool {
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
	for _, p := range s.opts.OriginPatterns {
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
