package client

import (
	"bytes"
	"context"
	"encoding/base64"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"iter"
	"net"
	"net/http"
	"sync"
	"time"

	"github.com/coder/websocket"

	"github.com/convengine/engine/audio"
	"github.com/convengine/engine/widgets"
)

// PathStream is the path of the voice socket.
const PathStream = "/engine/stream"

// Limits of the voice socket.
const (
	// MaxStreamMessage is the largest message the engine reads on the voice socket.
	MaxStreamMessage = 64 << 10
	// audioChunk is the PCM sent per audio message: half a second, 22 KiB in base64.
	audioChunk = 16 << 10
)

// Errors of the voice socket.
var (
	// ErrStreamClosed is returned by the methods of a [Stream] that was closed.
	ErrStreamClosed = errors.New("client: the voice socket is closed")
	// ErrOddAudio is returned by [Stream.SendAudio] for PCM of an odd number of bytes.
	ErrOddAudio = errors.New("client: audio must hold whole 16-bit samples")
	// ErrMessageTooLarge is returned when a message would exceed [MaxStreamMessage].
	ErrMessageTooLarge = errors.New("client: the message is larger than the voice socket takes")
)

// StreamOptions configure a voice socket. Nil means the defaults.
type StreamOptions struct {
	// Context is sent with the socket's first message: the conversation, the screen, the
	// country and the locale of the turns. Nil sends none: the tenant's locale and a new
	// conversation.
	Context *StreamContext
}

// StreamContext is what the app knows about where the user is, for the turns of a voice
// socket.
type StreamContext struct {
	// SessionID names the conversation; a new one when empty.
	SessionID   string `json:"sessionId,omitempty"`
	Screen      any    `json:"screen,omitempty"`
	CountryCode string `json:"country_code,omitempty"`
	// Locale is a BCP 47 tag such as "en-US".
	Locale string `json:"locale,omitempty"`
}

// Stream is an open voice socket (the engine's WebSocket /engine/stream). Send the user's
// speech with [Stream.SendAudio] and [Stream.EndOfSpeech], or typed text with
// [Stream.SendText]; read the answers with [Stream.Next] or [Stream.Events]. The send
// methods may be called from any goroutine; read from one goroutine. A goroutine of the
// Stream reads the socket all the time, so that the engine's keep-alive pings are answered
// between turns too; it holds up to 64 messages the app has not read yet, after which it
// waits (and pings go unanswered) until the app reads again. Close it when done.
type Stream struct {
	ws       *websocket.Conn
	maxEvent int

	// msgs are the messages read from the socket, in order; closed when the socket ended,
	// with readErr saying how.
	msgs    chan streamFrame
	readErr error
	// reading is closed when the reading goroutine returned.
	reading chan struct{}

	sendMu  sync.Mutex
	context []byte // JSON of the context for the next message; nil when sent
	buf     []byte // the message being built, under sendMu

	spec      *widgets.Spec // of the turn being read
	closeOnce sync.Once
	closed    chan struct{}
}

// Stream opens the voice socket. The upgrade request carries the headers of every request
// (X-Engine-Key, X-Token, X-Request-ID, forwarded headers, the session and its DPoP proof)
// and follows the package's retry rules; a refused upgrade is returned as an [*Error].
func (c *Client) Stream(ctx context.Context, opts *StreamOptions) (*Stream, error) {
	var ctxJSON []byte
	if opts != nil && opts.Context != nil {
		b, err := json.Marshal(opts.Context)
		if err != nil {
			return nil, fmt.Errorf("client: encoding the context: %w", err)
		}
		ctxJSON = b
	}
	id := c.prefix + c.newID()
	var tried retries
	for {
		sess := c.Session()
		req, err := c.newRequest(ctx, http.MethodGet, PathStream, nil, id, sess)
		if err != nil {
			return nil, err
		}
		ws, resp, err := websocket.Dial(ctx, c.baseStr+PathStream, &websocket.DialOptions{HTTPClient: c.http, HTTPHeader: req.Header})
		if resp != nil {
			if n := resp.Header.Get("DPoP-Nonce"); n != "" {
				c.mu.Lock()
				c.nonce = n
				c.mu.Unlock()
			}
		}
		if err == nil {
			ws.SetReadLimit(int64(c.maxEvent))
			s := &Stream{ws: ws, maxEvent: c.maxEvent, context: ctxJSON, closed: make(chan struct{}),
				msgs: make(chan streamFrame, streamBacklog), reading: make(chan struct{})}
			go s.read()
			return s, nil
		}
		if resp == nil || resp.StatusCode == http.StatusSwitchingProtocols {
			return nil, fmt.Errorf("client: opening the voice socket: %w", err)
		}
		if err := c.retry(ctx, resp, sess, &tried); err != nil {
			return nil, err
		}
	}
}

// SetContext makes the next message carry ctx, which replaces the socket's context for the
// turns that follow.
func (s *Stream) SetContext(c *StreamContext) error {
	b, err := json.Marshal(c)
	if err != nil {
		return fmt.Errorf("client: encoding the context: %w", err)
	}
	s.sendMu.Lock()
	s.context = b
	s.sendMu.Unlock()
	return nil
}

// SendAudio sends a piece of the user's speech: 16-bit little-endian PCM, 16 kHz, mono. It
// is split into messages of half a second; any length may be sent at once. The engine
// answers once [Stream.EndOfSpeech] ends the utterance.
func (s *Stream) SendAudio(ctx context.Context, pcm []byte) error {
	if len(pcm)%2 != 0 {
		return ErrOddAudio
	}
	s.sendMu.Lock()
	defer s.sendMu.Unlock()
	for first := true; first || len(pcm) > 0; first = false {
		n := min(len(pcm), audioChunk)
		b := s.start("audio")
		b = append(b, `,"chunk":"`...)
		b = base64.StdEncoding.AppendEncode(b, pcm[:n])
		b = append(b, '"')
		if err := s.write(ctx, b); err != nil {
			return err
		}
		pcm = pcm[n:]
	}
	return nil
}

// maxUtterance bounds an utterance: the engine transcribes at most a minute of speech.
const maxUtterance = 60 * time.Second

// SendWAV sends a recorded utterance and ends it, as [Stream.SendAudio] and
// [Stream.EndOfSpeech] do: wav is a WAV file of 16-bit mono PCM at any sample rate, which is
// brought to the engine's 16 kHz first. It reads wav to the end of its samples, and refuses
// more than a minute of them.
func (s *Stream) SendWAV(ctx context.Context, wav io.Reader) error {
	h, err := audio.ReadWAVHeader(wav)
	if err != nil {
		return fmt.Errorf("client: %w", err)
	}
	if h.Channels != 1 || h.BitsPerSample != 16 {
		return fmt.Errorf("client: the WAV holds %d channels of %d bits; it must be 16-bit mono", h.Channels, h.BitsPerSample)
	}
	limit := int64(maxUtterance.Seconds()) * int64(h.SampleRate) * 2
	if h.DataSize >= 0 {
		limit = min(limit+1, h.DataSize)
	} else {
		limit++ // a streaming WAV runs to the end of wav: one byte more tells it is too long
	}
	data, err := io.ReadAll(io.LimitReader(wav, limit))
	switch {
	case err != nil:
		return fmt.Errorf("client: reading the WAV: %w", err)
	case int64(len(data)) > int64(maxUtterance.Seconds())*int64(h.SampleRate)*2:
		return fmt.Errorf("client: the WAV is longer than %s", maxUtterance)
	}
	pcm := audio.Resample(audio.PCMFromBytes(data), h.SampleRate, 16000)
	if err := s.SendAudio(ctx, audio.AppendPCM(make([]byte, 0, 2*len(pcm)), pcm)); err != nil {
		return err
	}
	return s.EndOfSpeech(ctx)
}

// EndOfSpeech ends the utterance: the engine transcribes it and answers.
func (s *Stream) EndOfSpeech(ctx context.Context) error { return s.send(ctx, "end_of_speech") }

// SendText sends a typed turn, 1 to 8 000 characters; it cuts short an answer still running.
func (s *Stream) SendText(ctx context.Context, text string) error {
	s.sendMu.Lock()
	defer s.sendMu.Unlock()
	b := s.start("text")
	b = append(b, `,"transcript":`...)
	t, err := json.Marshal(text)
	if err != nil {
		return fmt.Errorf("client: encoding the text: %w", err)
	}
	return s.write(ctx, append(b, t...))
}

// Cancel stops the running answer: the engine answers with a [*CancelledEvent] and sends
// nothing more of that turn.
func (s *Stream) Cancel(ctx context.Context) error { return s.send(ctx, "cancel") }

func (s *Stream) send(ctx context.Context, typ string) error {
	s.sendMu.Lock()
	defer s.sendMu.Unlock()
	return s.write(ctx, s.start(typ))
}

// start begins a message of type typ, with the context when it is still to be sent; the
// caller holds sendMu and ends the object with write.
func (s *Stream) start(typ string) []byte {
	b := append(s.buf[:0], `{"type":"`...)
	b = append(b, typ...)
	b = append(b, '"')
	if s.context != nil {
		b = append(b, `,"context":`...)
		b = append(b, s.context...)
	}
	return b
}

// write sends the message b, closing its object; the caller holds sendMu.
func (s *Stream) write(ctx context.Context, b []byte) error {
	b = append(b, '}')
	s.buf = b
	if len(b) > MaxStreamMessage {
		return ErrMessageTooLarge
	}
	select {
	case <-s.closed:
		return ErrStreamClosed
	default:
	}
	if err := ctx.Err(); err != nil {
		return err
	}
	// The write is bounded by its own time-out, not by ctx: a WebSocket write that its context
	// cuts closes the socket, and an app that stops sending (a cancelled utterance) keeps it.
	wctx, cancel := context.WithTimeout(context.WithoutCancel(ctx), streamWriteTimeout)
	defer cancel()
	if err := s.ws.Write(wctx, websocket.MessageText, b); err != nil {
		return s.wrap("sending", err)
	}
	s.context = nil
	return nil
}

// streamWriteTimeout bounds one message's write to the voice socket.
const streamWriteTimeout = 10 * time.Second

// streamBacklog is how many messages the reading goroutine holds for the app.
const streamBacklog = 64

// streamFrame is one message read from the socket.
type streamFrame struct {
	typ  websocket.MessageType
	data []byte
}

// read reads the socket until it ends, handing each message to Next. Reading answers the
// engine's pings.
func (s *Stream) read() {
	defer close(s.reading)
	defer close(s.msgs)
	for {
		// Not a context that ends: coder/websocket closes the connection when a read's
		// context ends. Close ends this read.
		typ, data, err := s.ws.Read(context.Background())
		if err != nil {
			s.readErr = err
			return
		}
		select {
		case s.msgs <- streamFrame{typ, data}:
		case <-s.closed:
			return
		}
	}
}

// Next waits for the next message of the engine and returns it as an event: a
// [*TranscriptEvent], [*SpeakEvent], [*AudioEvent], [*SpecEvent], [*DoneEvent],
// [*CancelledEvent], [*ErrorEvent], or an [*UnknownEvent] of a newer engine. It returns an
// error when the socket ended: [ErrStreamClosed] after Close, else the close or connection
// error (websocket.CloseStatus tells the engine's close code); or ctx's error when ctx ends
// first, which leaves the socket open.
func (s *Stream) Next(ctx context.Context) (Event, error) {
	select {
	case <-s.closed:
		return nil, ErrStreamClosed
	default:
	}
	var f streamFrame
	select {
	case <-s.closed:
		return nil, ErrStreamClosed
	case <-ctx.Done():
		return nil, ctx.Err()
	case m, ok := <-s.msgs:
		if !ok {
			return nil, s.wrap("reading", s.readErr)
		}
		f = m
	}
	typ, data := f.typ, f.data
	if ev, ok := plainAudio(data); ok && typ == websocket.MessageText {
		return ev, nil
	}
	if typ != websocket.MessageText {
		s.ws.Close(websocket.StatusUnsupportedData, "messages are JSON text")
		return nil, errors.New("client: the engine sent a binary message")
	}
	var m streamMessage
	if err := json.Unmarshal(data, &m); err != nil {
		return nil, fmt.Errorf("client: decoding a voice socket message: %w", err)
	}
	bad := func(err error) (Event, error) {
		return nil, fmt.Errorf("client: %s message: %w", m.Type, err)
	}
	switch m.Type {
	case EventTranscript:
		s.spec = nil
		return &TranscriptEvent{TurnID: m.TurnID, Text: m.Text}, nil
	case EventSpeak:
		return &SpeakEvent{Delta: m.Delta}, nil
	case EventAudio:
		return &AudioEvent{Seq: m.Seq, SampleRate: m.SampleRate, PCM: m.Chunk}, nil
	case EventSpec:
		var spec widgets.Spec
		if err := json.Unmarshal(m.Spec, &spec); err != nil {
			return bad(err)
		}
		s.spec = &spec
		return &SpecEvent{Spec: spec}, nil
	case EventDone:
		ev := &DoneEvent{TurnID: m.TurnID}
		if s.spec != nil {
			ev.Spec = *s.spec
		}
		s.spec = nil
		return ev, nil
	case EventCancelled:
		s.spec = nil
		return &CancelledEvent{TurnID: m.TurnID}, nil
	case EventError:
		if m.Error == nil {
			return bad(errors.New("no error object"))
		}
		return &ErrorEvent{TurnID: m.TurnID, Code: m.Error.Code, Message: m.Error.Message, Retryable: m.Error.Retryable}, nil
	}
	return &UnknownEvent{Name: m.Type, Data: json.RawMessage(data)}, nil
}

// Events returns the engine's messages as events, as [Stream.Next] reads them, until the
// socket ends (with its error) or ctx ends. Stopping early leaves the rest for a later call.
func (s *Stream) Events(ctx context.Context) iter.Seq2[Event, error] {
	return func(yield func(Event, error) bool) {
		for {
			ev, err := s.Next(ctx)
			if !yield(ev, err) || err != nil {
				return
			}
		}
	}
}

// Close closes the socket with 1000 (normal closure): a turn still running on the engine is
// cancelled. It may be called more than once, from any goroutine; only the first call does
// anything.
func (s *Stream) Close() error {
	err := ErrStreamClosed
	s.closeOnce.Do(func() {
		close(s.closed)
		err = s.ws.Close(websocket.StatusNormalClosure, "")
		if errors.Is(err, net.ErrClosed) || websocket.CloseStatus(err) != -1 {
			err = nil // the engine closed it first
		}
		<-s.reading
		if err != nil {
			err = fmt.Errorf("client: closing the voice socket: %w", err)
		}
	})
	if errors.Is(err, ErrStreamClosed) {
		return nil
	}
	return err
}

// wrap describes a failure of the socket; after Close it is ErrStreamClosed.
func (s *Stream) wrap(doing string, err error) error {
	select {
	case <-s.closed:
		return ErrStreamClosed
	default:
	}
	if code := websocket.CloseStatus(err); code != -1 {
		return fmt.Errorf("client: %s on the voice socket: the engine closed it (%d): %w", doing, int(code), err)
	}
	return fmt.Errorf("client: %s on the voice socket: %w", doing, err)
}

// plainAudio reads an audio message as the engine writes it,
// {"type":"audio","seq":N,"sampleRate":R,"chunk":"…"}, without the JSON decoder, which
// would scan and unquote the chunk before decoding its base64. Anything else is left to the
// decoder.
func plainAudio(data []byte) (*AudioEvent, bool) {
	rest, ok := bytes.CutPrefix(data, []byte(`{"type":"audio","seq":`))
	if !ok {
		return nil, false
	}
	seq, rest, ok := cutInt(rest, `,"sampleRate":`)
	if !ok {
		return nil, false
	}
	rate, rest, ok := cutInt(rest, `,"chunk":"`)
	if !ok {
		return nil, false
	}
	b64, ok := bytes.CutSuffix(rest, []byte(`"}`))
	if !ok || bytes.ContainsAny(b64, "\"\\\r\n") { // escapes and line breaks: not as the engine writes
		return nil, false
	}
	pcm := make([]byte, base64.StdEncoding.DecodedLen(len(b64)))
	n, err := base64.StdEncoding.Decode(pcm, b64)
	if err != nil {
		return nil, false
	}
	return &AudioEvent{Seq: seq, SampleRate: rate, PCM: pcm[:n]}, true
}

// cutInt reads the digits at the start of b up to sep, and returns their value and what
// follows sep.
func cutInt(b []byte, sep string) (int, []byte, bool) {
	digits, rest, ok := bytes.Cut(b, []byte(sep))
	if !ok || len(digits) == 0 || len(digits) > 9 || (digits[0] == '0' && len(digits) > 1) {
		return 0, nil, false
	}
	n := 0
	for _, d := range digits {
		if d < '0' || d > '9' {
			return 0, nil, false
		}
		n = n*10 + int(d-'0')
	}
	return n, rest, true
}

// streamMessage is any message of the engine on the voice socket.
type streamMessage struct {
	Type       string          `json:"type"`
	TurnID     string          `json:"turnId"`
	Text       string          `json:"text"`
	Delta      string          `json:"delta"`
	Seq        int             `json:"seq"`
	SampleRate int             `json:"sampleRate"`
	Chunk      []byte          `json:"chunk"` // base64 in JSON
	Spec       json.RawMessage `json:"spec"`
	Error      *struct {
		Code      string `json:"code"`
		Message   string `json:"message"`
		Retryable bool   `json:"retryable"`
	} `json:"error"`
}

// Event names of the voice socket, besides speak, error and done.
const (
	EventTranscript = "transcript"
	EventAudio      = "audio"
	EventSpec       = "spec"
	EventCancelled  = "cancelled"
)

// TranscriptEvent opens a turn of the voice socket with what the engine heard (or what was
// typed).
type TranscriptEvent struct {
	TurnID string
	Text   string
}

// AudioEvent is a piece of the spoken answer: 16-bit little-endian mono PCM at SampleRate.
// Seq counts the turn's audio events from 1.
type AudioEvent struct {
	Seq        int
	SampleRate int
	PCM        []byte
}

// SpecEvent carries the turn's render spec, after its last audio; a [*DoneEvent] follows.
type SpecEvent struct {
	Spec widgets.Spec
}

// CancelledEvent answers [Stream.Cancel], or a new utterance or text that cut the running
// answer short. TurnID is the cancelled turn's, empty when no answer was running.
type CancelledEvent struct {
	TurnID string
}

// EventName returns "transcript".
func (*TranscriptEvent) EventName() string { return EventTranscript }

// EventName returns "audio".
func (*AudioEvent) EventName() string { return EventAudio }

// EventName returns "spec".
func (*SpecEvent) EventName() string { return EventSpec }

// EventName returns "cancelled".
func (*CancelledEvent) EventName() string { return EventCancelled }

// Duration returns the length of the event's audio.
func (a *AudioEvent) Duration() time.Duration {
	if a.SampleRate <= 0 {
		return 0
	}
	return time.Duration(len(a.PCM)/2) * time.Second / time.Duration(a.SampleRate)
}
