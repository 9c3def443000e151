package engine

import (
	"bytes"
	"context"
	"encoding/base64"
	"encoding/json"
	"errors"
	"fmt"
	"net"
	"net/http"
	"net/url"
	"path"
	"runtime/debug"
	"slices"
	"strconv"
	"strings"
	"sync"
	"sync/atomic"
	"time"
	"unicode/utf8"

	"github.com/coder/websocket"
	"github.com/convengine/engine/audio"
	"github.com/convengine/engine/internal/jsonenc"
	"github.com/google/uuid"
)

// Limits and defaults of the voice socket (PROTOCOL 7).
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
}

// withDefaults returns the options with zero values replaced.
func (o *StreamOptions) withDefaults(ping time.Duration) (StreamOptions, error) {
	var s StreamOptions
	if o != nil {
		s = *o
		s.OriginPatterns = append([]string(nil), o.OriginPatterns...)
	}
	if s.IdleTimeout < 0 || s.PingInterval < 0 || s.WriteTimeout < 0 || s.SendQueue < 0 {
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
	return s, nil
}

// StreamHandler returns the handler of the voice socket, GET /engine/stream (PROTOCOL 7).
func (e *Engine) StreamHandler() http.Handler {
	return e.route(http.MethodGet, http.HandlerFunc(e.serveStream))
}

func (e *Engine) serveStream(w http.ResponseWriter, r *http.Request) {
	req, p := e.readHeaders(r)
	if p == nil {
		p = e.checkUpgrade(r)
	}
	if p != nil {
		writeProblem(w, p, req.idOrEmpty())
		return
	}
	if e.streams.isClosed() {
		writeProblem(w, newProblem(http.StatusServiceUnavailable, CodeShuttingDown, "the engine is shutting down; connect again"), req.ID)
		return
	}
	// The origin was checked above, with the problem responses of every route.
	sb := &smallBuffers{ResponseWriter: w}
	ws, err := websocket.Accept(sb, r, &websocket.AcceptOptions{InsecureSkipVerify: true})
	if err != nil {
		e.log.WarnContext(r.Context(), "voice socket upgrade failed", "requestId", req.ID, "err", err)
		return
	}
	ws.SetReadLimit(maxStreamFrame)
	c := &voiceConn{e: e, req: req, opts: e.streamOpts, ws: ws, conn: sb.conn, started: e.now()}
	c.ctx, c.cancel = context.WithCancel(context.Background())
	c.turnsCtx, c.stopTurns = context.WithCancel(c.ctx)
	if !e.streams.add(c) {
		c.cancel()
		ws.Close(websocket.StatusGoingAway, "the server is shutting down")
		return
	}
	// The socket lives in a goroutine of its own, so that the server's state of the request
	// (the connection, the request and its headers) is freed when the handler returns.
	go func() {
		defer e.streams.remove(c)
		defer c.cancel()
		c.serve()
	}()
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

// Shutdown closes every voice socket with 1001 (going away) and refuses new ones. A socket
// running a turn is closed when the turn has been answered; when ctx ends first, the turns
// still running are cancelled and their sockets closed at once, and Shutdown returns
// ctx.Err(). It returns when every socket is closed. An http.Server's Shutdown does not wait
// for WebSockets, which it no longer tracks: call both.
func (e *Engine) Shutdown(ctx context.Context) error {
	conns := e.streams.shutdown()
	for _, c := range conns {
		if !c.busy.Load() {
			c.goAway() // a busy socket goes when its turn ends
		}
	}
	all := make(chan struct{})
	go func() {
		e.streams.wg.Wait()
		close(all)
	}()
	select {
	case <-all:
		return nil
	case <-ctx.Done():
	}
	var closers sync.WaitGroup
	for _, c := range conns {
		closers.Go(func() { c.abort(websocket.StatusGoingAway, "the server is shutting down") })
	}
	closers.Wait()
	<-all
	return ctx.Err()
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

// clientMessage is a message of the client (PROTOCOL 7).
type clientMessage struct {
	Type       string          `json:"type"`
	Chunk      *string         `json:"chunk"`
	SampleRate *int            `json:"sampleRate"`
	Transcript *string         `json:"transcript"`
	Context    json.RawMessage `json:"context"`
}

// streamContext is the context a client sends on its first message: that of a turn's body,
// and the locale of its meta.
type streamContext struct {
	turnContext
	Locale string `json:"locale"`
}

// frame is one message for the writer: data to send, or a close.
type frame struct {
	data []byte
	// speak marks a speak message, which the writer may join with the speak messages queued
	// behind it.
	speak bool
	// pooled marks data taken from audioBuffers, given back once written.
	pooled bool
	close  websocket.StatusCode
	reason string
}

// voiceConn is one voice socket. Its reader goroutine reads and owns the state of the
// conversation; each turn runs in a goroutine of its own, one at a time. What is to be sent
// is queued, and a writer goroutine, which runs only while the queue holds something, sends
// it in order. Pings and the idle time-out are timers: an idle socket has one goroutine, the
// reader's, and no buffer of its own besides the connection's.
type voiceConn struct {
	e       *Engine
	req     *request
	opts    StreamOptions
	ws      *websocket.Conn
	conn    net.Conn // under ws: its write deadline bounds each message
	started time.Time

	ctx       context.Context // ends with the socket
	cancel    context.CancelFunc
	turnsCtx  context.Context // parent of the turns' contexts; ends with ctx or an abort
	stopTurns context.CancelFunc
	goingAway <-chan struct{} // closed when the engine shuts down

	mu      sync.Mutex // guards what follows
	queue   []frame
	space   chan struct{} // closed when the writer takes a message off a full queue
	writing bool          // the writer goroutine runs
	closing bool          // a close is queued: nothing is queued after it
	ended   bool          // the socket is over: no worker starts
	ping    *time.Timer
	idle    *time.Timer
	workers sync.WaitGroup // the writer and a ping under way

	busy         atomic.Bool  // a turn runs
	lastActivity atomic.Int64 // unix nanoseconds of the client's last message

	// Owned by the reader.
	context        streamContext
	conversationID string
	history        []historyMessage
	pcm            []int16
	refused        bool // the utterance was refused; its audio is dropped until end_of_speech
	turn           *runningTurn
	turns          int
}

// runningTurn is a turn's goroutine.
type runningTurn struct {
	id       string
	cancel   context.CancelFunc
	done     chan struct{} // closed when the goroutine ended
	answered atomic.Bool   // its last message (done or error) is queued
}

// running reports whether the turn is still answering: a new utterance or a cancel would cut
// it short.
func (t *runningTurn) running() bool {
	if t == nil || t.answered.Load() {
		return false
	}
	select {
	case <-t.done:
		return false
	default:
		return true
	}
}

func (c *voiceConn) serve() {
	if socket := c.e.obs.Socket; socket != nil {
		ctx := context.WithoutCancel(c.ctx)
		socket(ctx, c.req.Tenant.Key, true)
		defer socket(ctx, c.req.Tenant.Key, false)
	}
	c.conversationID = uuid.NewString()
	c.touch()
	c.mu.Lock()
	c.ping = time.AfterFunc(c.opts.PingInterval, c.pingClient)
	c.idle = time.AfterFunc(c.opts.IdleTimeout, c.checkIdle)
	c.mu.Unlock()

	reason := c.readSafely()

	c.cancel()
	if c.turn != nil {
		<-c.turn.done
	}
	c.mu.Lock()
	c.ended = true
	c.ping.Stop()
	c.idle.Stop()
	c.mu.Unlock()
	c.workers.Wait()
	c.ws.CloseNow()
	c.e.log.Info("voice socket closed", "requestId", c.req.ID, "tenant", c.req.Tenant.Key, "turns", c.turns,
		"reason", reason, "seconds", c.e.now().Sub(c.started).Seconds())
}

// readSafely is readLoop, ending the socket, not the process, when it panics.
func (c *voiceConn) readSafely() (reason string) {
	defer func() {
		if v := recover(); v != nil {
			c.e.log.Error("voice socket panicked", "requestId", c.req.ID, "tenant", c.req.Tenant.Key,
				"panic", fmt.Sprintf("%T", v), "stack", string(debug.Stack()))
			c.ws.CloseNow()
			reason = "panic"
		}
	}()
	return c.readLoop()
}

// readLoop reads the client's messages until the socket ends, and returns why it ended.
func (c *voiceConn) readLoop() string {
	for {
		typ, r, err := c.ws.Reader(c.ctx)
		if err != nil {
			return closeReason(err)
		}
		buf := messageBuffers.Get().(*bytes.Buffer)
		buf.Reset()
		_, err = buf.ReadFrom(r)
		data := buf.Bytes()
		if err != nil {
			putMessageBuffer(buf)
			return closeReason(err)
		}
		c.touch()
		if typ != websocket.MessageText {
			putMessageBuffer(buf)
			c.ws.Close(websocket.StatusUnsupportedData, "messages are JSON text")
			return "binary message"
		}
		ok := c.handleMessage(data)
		putMessageBuffer(buf) // nothing of data is kept: decoding copies what it keeps
		if !ok {
			return "send queue full"
		}
	}
}

// handleMessage decodes one message and acts on it; it returns false when the client is to
// be dropped. Audio messages in the form every client sends, {"type":"audio","chunk":"…"},
// are read without the JSON decoder, which would copy and unquote the chunk first.
func (c *voiceConn) handleMessage(data []byte) bool {
	if b64, ok := plainAudioChunk(data); ok {
		return c.onAudio(b64, true, nil)
	}
	var m clientMessage
	if p := unmarshalStrictly(data, &m); p != nil {
		if m.Type == "audio" { // a broken frame spoils its utterance
			c.pcm, c.refused = nil, true
		}
		return c.trySend(errorMessage("", p.Code, p.Detail, false))
	}
	return c.handle(&m)
}

var audioChunkPrefix = []byte(`{"type":"audio","chunk":"`)

// plainAudioChunk returns the base64 chunk of an audio message that holds only its type and
// chunk, in that order, without white space; other messages go through the JSON decoder.
func plainAudioChunk(data []byte) ([]byte, bool) {
	if !bytes.HasPrefix(data, audioChunkPrefix) || !bytes.HasSuffix(data, []byte(`"}`)) || len(data) < len(audioChunkPrefix)+2 {
		return nil, false
	}
	b64 := data[len(audioChunkPrefix) : len(data)-2]
	if bytes.ContainsAny(b64, "\"\\\r\n") { // escapes and line breaks: the decoder's to judge
		return nil, false
	}
	return b64, true
}

// messageBuffers hold the client's messages while they are handled: one per socket that is
// reading a message, none for an idle socket.
var messageBuffers = sync.Pool{New: func() any { return new(bytes.Buffer) }}

func putMessageBuffer(b *bytes.Buffer) {
	if b.Cap() <= maxStreamFrame+bytes.MinRead {
		messageBuffers.Put(b)
	}
}

func closeReason(err error) string {
	switch code := websocket.CloseStatus(err); {
	case code != -1:
		return "closed " + strconv.Itoa(int(code))
	case errors.Is(err, websocket.ErrMessageTooBig):
		return "frame too large"
	case errors.Is(err, context.Canceled):
		return "ended"
	}
	return "connection lost"
}

// handle acts on one message; it returns false when the client is to be dropped.
func (c *voiceConn) handle(m *clientMessage) bool {
	if len(m.Context) > 0 && string(m.Context) != "null" {
		if p := c.setContext(m.Context); p != nil {
			return c.trySend(errorMessage("", p.Code, p.Detail, false))
		}
	}
	select {
	case <-c.goingAway:
		return true // no new work: the socket closes when the running turn is answered
	default:
	}
	switch m.Type {
	case "audio":
		var chunk []byte
		if m.Chunk != nil {
			chunk = []byte(*m.Chunk)
		}
		return c.onAudio(chunk, m.Chunk != nil, m.SampleRate)
	case "end_of_speech":
		return c.onEndOfSpeech()
	case "cancel":
		id := c.stopTurn()
		c.pcm, c.refused = nil, false
		return c.trySend(cancelledMessage(id))
	case "text":
		return c.onText(m)
	case "":
		return c.trySend(errorMessage("", CodeInvalidRequest, "type: is required", false))
	}
	return c.trySend(errorMessage("", CodeInvalidRequest, fmt.Sprintf("type: %q is not audio, end_of_speech, cancel or text", truncateText(m.Type, 32)), false))
}

// setContext validates a context the way a turn's body is validated, and keeps it for the
// turns that follow.
func (c *voiceConn) setContext(raw json.RawMessage) *Problem {
	var sc streamContext
	if p := unmarshalStrictly(raw, &sc); p != nil {
		if p.Field == "" {
			return invalidField("context", "must be an object")
		}
		return invalidField("context."+p.Field, strings.TrimPrefix(p.Detail, p.Field+": "))
	}
	if sc.Locale != "" && !ValidLocale(sc.Locale) {
		return invalidField("context.locale", "must be a BCP 47 language tag such as \"en-US\"")
	}
	probe := "x"
	if _, p := newTurn(c.req, &turnRequest{Transcript: &probe, Context: &sc.turnContext}); p != nil {
		return p
	}
	c.context = sc
	if sc.SessionID != "" {
		c.conversationID = sc.SessionID
	}
	return nil
}

// bargeIn cancels the answer the user talks or types over, and says so. It returns false when
// the client is to be dropped.
func (c *voiceConn) bargeIn() bool {
	if id := c.stopTurn(); id != "" {
		return c.trySend(cancelledMessage(id))
	}
	return true
}

// onAudio adds a base64 chunk of the user's speech (present says whether the message had
// one) to the utterance, or refuses the utterance.
func (c *voiceConn) onAudio(b64 []byte, present bool, sampleRate *int) bool {
	if !c.bargeIn() {
		return false
	}
	if c.refused {
		return true
	}
	refuse := func(code, message string) bool {
		c.pcm, c.refused = nil, true
		return c.trySend(errorMessage("", code, message, false))
	}
	switch {
	case !present:
		return refuse(CodeInvalidRequest, "chunk: is required on audio messages")
	case sampleRate != nil && *sampleRate != inputSampleRate:
		return refuse(CodeInvalidAudio, fmt.Sprintf("the sample rate is %d Hz; it must be 16000 Hz", *sampleRate))
	}
	// The chunk's bytes, between its base64 and the utterance's samples.
	bp := audioBuffers.Get().(*[]byte)
	defer audioBuffers.Put(bp)
	*bp = slices.Grow((*bp)[:0], base64.StdEncoding.DecodedLen(len(b64)))
	n, err := base64.StdEncoding.Decode((*bp)[:cap(*bp)], b64)
	b := (*bp)[:n]
	switch {
	case err != nil:
		return refuse(CodeInvalidAudio, "chunk: is not valid base64")
	case len(b)%2 != 0:
		return refuse(CodeInvalidAudio, "chunk: does not hold whole 16-bit samples")
	case len(c.pcm)+len(b)/2 > maxUtteranceSamples:
		return refuse(CodeUtteranceTooLong, fmt.Sprintf("an utterance holds at most %d seconds of audio", maxInputSeconds))
	}
	if c.pcm == nil {
		c.pcm = getPCM()
	}
	c.pcm = audio.AppendSamples(c.pcm, b)
	return true
}

// utterances hold the samples of utterances from their first audio message to the end of
// their transcription; those longer than maxPooledUtterance are left to the collector.
var utterances = sync.Pool{New: func() any { return new([]int16) }}

const maxPooledUtterance = 10 * inputSampleRate

func getPCM() []int16 { return (*utterances.Get().(*[]int16))[:0] }

func putPCM(pcm []int16) {
	if cap(pcm) > 0 && cap(pcm) <= maxPooledUtterance {
		pcm = pcm[:0]
		utterances.Put(&pcm)
	}
}

func (c *voiceConn) onEndOfSpeech() bool {
	if c.refused {
		c.refused = false
		return true
	}
	if len(c.pcm) == 0 {
		return c.trySend(errorMessage("", CodeNoSpeech, "end_of_speech came without audio", false))
	}
	if !c.bargeIn() {
		return false
	}
	pcm := c.pcm
	c.pcm = nil
	return c.startTurn(pcm, "")
}

func (c *voiceConn) onText(m *clientMessage) bool {
	text := ""
	if m.Transcript != nil {
		text = strings.TrimSpace(*m.Transcript)
	}
	switch {
	case text == "":
		return c.trySend(errorMessage("", CodeInvalidRequest, "transcript: is required on text messages", false))
	case !utf8.ValidString(text) || utf8.RuneCountInString(text) > maxMessageLen:
		return c.trySend(errorMessage("", CodeInvalidRequest, fmt.Sprintf("transcript: must be valid UTF-8 of at most %d characters", maxMessageLen), false))
	}
	if !c.bargeIn() {
		return false
	}
	c.pcm, c.refused = nil, false
	return c.startTurn(nil, text)
}

// stopTurn cancels the running turn, if any, and waits until it stopped: model, tools and
// synthesis stop with its context, and it sends nothing more. It returns the turn's id, or ""
// when none ran.
func (c *voiceConn) stopTurn() string {
	if !c.turn.running() {
		return ""
	}
	c.turn.cancel()
	<-c.turn.done
	if c.turn.answered.Load() {
		return "" // it finished while it was being stopped
	}
	return c.turn.id
}

// startTurn answers the user's audio (pcm) or typed text in a goroutine of its own. Like a
// turn of POST /engine, the turn passes the rate limits of the tenant and the user, and takes
// one of the process's turn slots while it runs; a turn refused is answered with an error
// message (rate_limited, overloaded) and the socket stays. It returns false when the client
// is to be dropped.
func (c *voiceConn) startTurn(pcm []int16, text string) bool {
	if c.turn != nil {
		<-c.turn.done // it ended; what it wrote (the history) is visible from here on
	}
	if p := c.e.rateLimit(c.turnsCtx, c.req); p != nil {
		return c.trySend(errorMessage("", p.Code, p.Detail, p.Retryable))
	}
	release, p := c.e.turnSlots.acquire()
	if p != nil {
		return c.trySend(errorMessage("", p.Code, p.Detail, p.Retryable))
	}
	ctx, cancel := context.WithCancel(c.turnsCtx)
	rt := &runningTurn{id: uuid.NewString(), cancel: cancel, done: make(chan struct{})}
	c.turn = rt
	c.turns++
	in := voiceTurn{id: rt.id, pcm: pcm, text: text, context: c.context, conversationID: c.conversationID,
		history: append([]historyMessage(nil), c.history...)}
	c.busy.Store(true)
	go func() {
		defer close(rt.done)
		defer release()
		defer cancel()
		defer c.turnEnded()
		defer func() {
			// A panic outside the model (which runTurnSafely catches) must not take the
			// process down from this goroutine: the turn fails instead.
			if v := recover(); v != nil {
				c.e.log.Error("voice turn panicked", "requestId", c.req.ID, "tenant", c.req.Tenant.Key,
					"panic", fmt.Sprintf("%T", v), "stack", string(debug.Stack()))
				if !rt.answered.Swap(true) {
					c.send(ctx, errorMessage(rt.id, CodeInternal, "The engine failed.", false))
				}
			}
		}()
		if user, answer, ok := c.runTurn(ctx, in, &rt.answered); ok {
			c.remember(user, answer)
		}
	}()
	return true
}

// voiceTurn is what a turn starts from.
type voiceTurn struct {
	id             string
	pcm            []int16
	text           string
	context        streamContext
	conversationID string
	history        []historyMessage
}

// remember adds a finished turn to the conversation of the socket, keeping the last 100
// messages. It runs before the turn's done is closed; the reader reads the history only after.
func (c *voiceConn) remember(user, answer string) {
	clip := func(s string) string {
		if utf8.RuneCountInString(s) > maxMessageLen {
			return string([]rune(s)[:maxMessageLen])
		}
		return s
	}
	c.history = append(c.history, historyMessage{Role: string(RoleUser), Content: clip(user)},
		historyMessage{Role: string(RoleAssistant), Content: clip(answer)})
	if n := len(c.history); n > maxHistory {
		c.history = append([]historyMessage(nil), c.history[n-maxHistory:]...)
	}
}

// turnEnded marks the socket idle, and closes it when the engine is shutting down.
func (c *voiceConn) turnEnded() {
	c.touch()
	c.busy.Store(false)
	select {
	case <-c.goingAway:
		c.goAway()
	default:
	}
}

// runTurn transcribes the audio if there is some, then runs the turn loop into a voice sink.
// It reports the user's words and the answer when the turn finished without being cancelled.
// answered is set before the turn's last message is queued.
func (c *voiceConn) runTurn(ctx context.Context, in voiceTurn, answered *atomic.Bool) (string, string, bool) {
	e := c.e
	start := e.now()
	locale := c.req.Tenant.Locale
	if in.context.Locale != "" {
		locale = in.context.Locale
	}
	text := in.text
	heard := in.pcm != nil
	samples := len(in.pcm)
	if heard {
		transcript, p := e.hear(ctx, c.req, in.pcm, locale)
		putPCM(in.pcm) // the transcriber is done with it
		in.pcm = nil
		if ctx.Err() != nil {
			return "", "", false
		}
		if p != nil {
			answered.Store(true)
			c.send(ctx, errorMessage(in.id, p.Code, p.Detail, p.Retryable))
			return "", "", false
		}
		text = transcript
	}
	mode := string(ModeVoice)
	tc := in.context.turnContext
	tc.SessionID = in.conversationID
	t, p := newTurn(c.req, &turnRequest{Transcript: &text, Mode: &mode, Messages: in.history, Context: &tc,
		Meta: &turnMeta{Locale: locale}})
	if p != nil {
		answered.Store(true)
		c.send(ctx, errorMessage(in.id, p.Code, p.Detail, false))
		return "", "", false
	}
	t.turnID = in.id
	t.heard = heard
	if p := e.loadTools(ctx, t); p != nil {
		if ctx.Err() == nil {
			answered.Store(true)
			c.send(ctx, errorMessage(in.id, p.Code, p.Detail, p.Retryable))
		}
		return "", "", false
	}
	if !c.send(ctx, transcriptMessage(t.turnID, t.transcript)) {
		return "", "", false
	}
	sink := newVoiceSink(ctx, c, t, answered)
	t.out = sink
	runCtx, cancel := context.WithTimeout(ctx, c.req.Tenant.Limits.TurnTimeout.or(defaultTurnLimit))
	e.runTurnSafely(runCtx, t)
	cancel()
	finished := ctx.Err() == nil
	if finished {
		e.finishTurn(t)
	}
	sink.close()
	e.log.InfoContext(ctx, "voice turn",
		"requestId", c.req.ID, "tenant", c.req.Tenant.Key, "env", c.req.Environment.Name, "turnId", t.turnID,
		"audioSeconds", float64(samples)/inputSampleRate, "steps", t.steps, "toolCalls", t.toolCalls,
		"widgets", len(t.widgets), "audioMessages", sink.seq, "error", t.errCode, "cancelled", !finished,
		"ms", float64(e.now().Sub(start).Microseconds())/1000)
	return t.transcript, t.speak.String(), finished && t.errCode == ""
}

// touch records the client's activity, or the end of a turn, for the idle time-out.
func (c *voiceConn) touch() { c.lastActivity.Store(c.e.now().UnixNano()) }

// Outcomes of push.
const (
	queued = iota
	queueFull
	queueClosed // a close was queued, or the socket ended
)

// push queues f for the writer, and starts the writer when it does not run. When the queue
// holds SendQueue messages, push waits for room while wait is set (until ctx or the socket
// ends: queueClosed), and answers queueFull otherwise. A close is queued whatever the room.
func (c *voiceConn) push(ctx context.Context, f frame, wait bool) int {
	c.mu.Lock()
	for f.close == 0 && len(c.queue) >= c.opts.SendQueue && !c.closing && !c.ended {
		if !wait {
			c.mu.Unlock()
			return queueFull
		}
		if c.space == nil {
			c.space = make(chan struct{})
		}
		space := c.space
		c.mu.Unlock()
		select {
		case <-space:
		case <-ctx.Done():
			return queueClosed
		case <-c.ctx.Done():
			return queueClosed
		}
		c.mu.Lock()
	}
	defer c.mu.Unlock()
	if c.closing || c.ended {
		return queueClosed
	}
	c.queue = append(c.queue, f)
	c.closing = f.close != 0
	if !c.writing {
		c.writing = true
		c.workers.Add(1)
		go c.writeLoop()
	}
	return queued
}

// send queues a message for the writer, waiting while the queue is full. It reports false
// when ctx or the socket ended first.
func (c *voiceConn) send(ctx context.Context, data []byte) bool {
	return c.push(ctx, frame{data: data}, true) == queued
}

// sendAudio queues an audio message from audioMessage, as send does; the buffer goes back to
// audioBuffers once written.
func (c *voiceConn) sendAudio(ctx context.Context, data []byte) bool {
	return c.push(ctx, frame{data: data, pooled: true}, true) == queued
}

// sendSpeak queues a speak message of delta, as send does.
func (c *voiceConn) sendSpeak(ctx context.Context, delta string) bool {
	return c.push(ctx, frame{data: speakMessage(delta), speak: true}, true) == queued
}

// trySend queues a message from the reader, which must not wait: a client whose queue is
// full while it keeps sending is closed with 1008, and trySend reports false. A message for
// a socket that is closing is dropped.
func (c *voiceConn) trySend(data []byte) bool {
	if c.push(c.ctx, frame{data: data}, false) == queueFull {
		c.ws.Close(websocket.StatusPolicyViolation, "the client does not read its messages")
		return false
	}
	return true
}

// goAway closes the socket with 1001 once the queued messages are written.
func (c *voiceConn) goAway() {
	c.push(c.ctx, frame{close: websocket.StatusGoingAway, reason: "the server is shutting down"}, false)
}

// abort stops the running turn and closes the socket at once. The socket's own context stays
// until the close handshake is done, or the reader would cut the connection without it.
func (c *voiceConn) abort(code websocket.StatusCode, reason string) {
	c.stopTurns()
	c.ws.Close(code, reason)
}

// writeLoop writes the queued messages in order, and returns when the queue is empty.
func (c *voiceConn) writeLoop() {
	defer c.workers.Done()
	for {
		c.mu.Lock()
		if len(c.queue) == 0 || c.ctx.Err() != nil {
			c.queue = nil
			c.writing = false
			c.mu.Unlock()
			return
		}
		f := c.queue[0]
		c.queue[0] = frame{}
		c.queue = c.queue[1:]
		// Speak messages waiting one behind the other go out as one: a client that reads
		// slower than the model writes gets fewer, longer deltas rather than falling behind.
		for f.speak && len(c.queue) > 0 && c.queue[0].speak && len(f.data) < maxJoinedSpeak {
			f.data = joinSpeak(f.data, c.queue[0].data)
			c.queue[0] = frame{}
			c.queue = c.queue[1:]
		}
		if c.space != nil {
			close(c.space)
			c.space = nil
		}
		c.mu.Unlock()
		if f.close != 0 {
			c.ws.Close(f.close, f.reason)
			continue
		}
		// A deadline on the connection rather than a context with a time-out: the context
		// would cost a timer and a goroutine hook per message. What ends the socket closes
		// the connection, which ends a write that waits.
		c.conn.SetWriteDeadline(time.Now().Add(c.opts.WriteTimeout))
		err := c.ws.Write(context.Background(), websocket.MessageText, f.data)
		c.conn.SetWriteDeadline(time.Time{})
		if f.pooled {
			putAudioBuffer(f.data)
		}
		if err != nil {
			if c.ctx.Err() == nil {
				c.e.log.Info("voice socket write failed", "requestId", c.req.ID, "tenant", c.req.Tenant.Key, "err", err)
			}
			c.cancel()
			c.ws.CloseNow()
		}
	}
}

// startWorker counts a goroutine of the socket in workers, unless the socket ended.
func (c *voiceConn) startWorker() bool {
	c.mu.Lock()
	defer c.mu.Unlock()
	if c.ended {
		return false
	}
	c.workers.Add(1)
	return true
}

// pingClient pings the client, which must answer within the interval, and sets the next ping.
func (c *voiceConn) pingClient() {
	if !c.startWorker() {
		return
	}
	defer c.workers.Done()
	ctx, cancel := context.WithTimeout(c.ctx, c.opts.PingInterval)
	err := c.ws.Ping(ctx)
	cancel()
	if err != nil {
		if c.ctx.Err() == nil {
			c.e.log.Info("voice socket ping failed", "requestId", c.req.ID, "tenant", c.req.Tenant.Key, "err", err)
			c.cancel()
			c.ws.CloseNow()
		}
		return
	}
	c.mu.Lock()
	if !c.ended {
		c.ping.Reset(c.opts.PingInterval)
	}
	c.mu.Unlock()
}

// checkIdle closes the socket (1000) when neither the client nor a turn did anything for
// IdleTimeout, and otherwise sets the next check.
func (c *voiceConn) checkIdle() {
	wait := c.opts.IdleTimeout
	if !c.busy.Load() {
		since := c.e.now().Sub(time.Unix(0, c.lastActivity.Load()))
		if since >= c.opts.IdleTimeout {
			c.push(c.ctx, frame{close: websocket.StatusNormalClosure, reason: "idle"}, false)
			return
		}
		wait -= since
	}
	c.mu.Lock()
	if !c.ended {
		c.idle.Reset(wait)
	}
	c.mu.Unlock()
}

// Messages of the server (PROTOCOL 7).

func transcriptMessage(turnID, text string) []byte {
	b := jsonenc.AppendString([]byte(`{"type":"transcript","text":`), text)
	b = jsonenc.AppendString(append(b, `,"turnId":`...), turnID)
	return append(b, '}')
}

func speakMessage(delta string) []byte {
	b := jsonenc.AppendString([]byte(`{"type":"speak","delta":`), delta)
	return append(b, '}')
}

// speakPrefix starts every speak message, up to its delta's first character.
const speakPrefix = `{"type":"speak","delta":"`

// maxJoinedSpeak bounds a speak message joined from several.
const maxJoinedSpeak = 16 << 10

// joinSpeak joins two speak messages into one whose delta is a's then b's. Both deltas are
// JSON strings as speakMessage writes them, so their escaped forms join as they are.
func joinSpeak(a, b []byte) []byte {
	return append(a[:len(a)-len(`"}`)], b[len(speakPrefix):]...)
}

// audioBuffers hold audio messages from their encoding to their write, the PCM read from the
// synthesizer, and the client's chunks once decoded: the largest allocations of a voice turn,
// made again for every message.
var audioBuffers = sync.Pool{New: func() any { return new([]byte) }}

func putAudioBuffer(b []byte) {
	b = b[:0]
	audioBuffers.Put(&b)
}

// audioMessage encodes an audio message into a buffer of audioBuffers.
func audioMessage(seq, rate int, pcm []byte) []byte {
	bp := audioBuffers.Get().(*[]byte)
	b := slices.Grow((*bp)[:0], 64+base64.StdEncoding.EncodedLen(len(pcm)))
	b = append(b, `{"type":"audio","seq":`...)
	b = strconv.AppendInt(b, int64(seq), 10)
	b = append(b, `,"sampleRate":`...)
	b = strconv.AppendInt(b, int64(rate), 10)
	b = append(b, `,"chunk":"`...)
	b = base64.StdEncoding.AppendEncode(b, pcm)
	return append(b, `"}`...)
}

func doneMessage(turnID string) []byte {
	b := jsonenc.AppendString([]byte(`{"type":"done","turnId":`), turnID)
	return append(b, '}')
}

func cancelledMessage(turnID string) []byte {
	if turnID == "" {
		return []byte(`{"type":"cancelled"}`)
	}
	b := jsonenc.AppendString([]byte(`{"type":"cancelled","turnId":`), turnID)
	return append(b, '}')
}

// errorMessage reports a failure; turnID is "" when it concerns no turn.
func errorMessage(turnID, code, message string, retryable bool) []byte {
	m := map[string]any{"type": "error", "error": map[string]any{"code": code, "message": message, "retryable": retryable}}
	if turnID != "" {
		m["turnId"] = turnID
	}
	b, _ := json.Marshal(m)
	return b
}
