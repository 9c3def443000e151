package elevenlabs

import (
	"context"
	"encoding/base64"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"net/http"
	"net/url"
	"strings"
	"sync"
	"time"
	"unicode"

	"github.com/coder/websocket"

	"github.com/convengine/engine"
	"github.com/convengine/engine/internal/cloudspeech"
)

var _ engine.StreamingSynthesizer = (*Synthesizer)(nil)

// Stream implements [engine.StreamingSynthesizer] with ElevenLabs' input-streaming WebSocket
// (GET /v1/text-to-speech/{voice_id}/stream-input): it opens the connection in the background
// and returns at once, so that the connection is ready by the time the model has written the
// answer's first sentence. Each Synthesize of the stream sends one sentence with flush, and its
// audio ends once ElevenLabs' alignment has accounted for the sentence's characters. A stream
// that could not open, or broke, speaks the rest with the HTTP API (Synthesize). ctx bounds the
// connection: its end sends the closing text "" and lets the connection go.
func (s *Synthesizer) Stream(ctx context.Context, voice string) engine.Synthesizer {
	v, err := s.voice(voice)
	if err != nil {
		return s
	}
	ctx, cancel := context.WithCancel(ctx)
	a := &answer{s: s, voice: v, ctx: ctx, cancel: cancel, ready: make(chan struct{}),
		chunks: make(chan chunk, 64), done: make(chan struct{})}
	go a.run()
	return a
}

// answer is one answer's input stream. Its sentences are spoken one after the other: the
// engine's Speaker says one at a time.
type answer struct {
	s      *Synthesizer
	voice  string
	ctx    context.Context
	cancel context.CancelFunc
	ready  chan struct{} // closed once the connection is open, or failed to
	chunks chan chunk    // what ElevenLabs sent, in order
	done   chan struct{} // closed when run ended

	mu   sync.Mutex
	conn *websocket.Conn // nil until open; nil again once broken
	err  error           // why the stream is not used
}

// chunk is a message of ElevenLabs: audio and how many characters of the text it speaks, or
// the end of the stream.
type chunk struct {
	pcm   []byte
	chars int
	final bool
	err   error
}

// message is what ElevenLabs sends on the stream: base64 audio with its alignment to the
// text, isFinal after the closing text, or an error.
type message struct {
	Audio               *string    `json:"audio"`
	IsFinal             *bool      `json:"isFinal"`
	Alignment           *alignment `json:"alignment"`
	NormalizedAlignment *alignment `json:"normalizedAlignment"`
	Message             string     `json:"message"`
	Error               string     `json:"error"`
}

type alignment struct {
	Chars []string `json:"chars"`
}

// spoken counts the characters of text that are not spaces: what alignment accounts for.
func spoken(chars []string) int {
	n := 0
	for _, c := range chars {
		if strings.TrimSpace(c) != "" {
			n++
		}
	}
	return n
}

func (a *answer) run() {
	defer close(a.done)
	defer a.cancel()
	q := url.Values{"model_id": {a.s.o.Model}, "output_format": {"pcm_16000"}}
	u := cloudspeech.WebSocketURL(a.s.base, "/v1/text-to-speech/"+a.voice+"/stream-input?"+q.Encode())
	dctx, cancel := context.WithTimeout(a.ctx, a.s.o.Timeout)
	opts := &websocket.DialOptions{HTTPHeader: http.Header{"xi-api-key": {a.s.o.APIKey.Reveal()}}}
	if a.s.o.HTTPClient.Timeout == 0 {
		opts.HTTPClient = a.s.o.HTTPClient
	}
	conn, resp, err := websocket.Dial(dctx, u, opts)
	cancel()
	if err == nil {
		conn.SetReadLimit(4 << 20) // a message holds at most a few seconds of base64 audio
		// The first message opens the stream: a single space, the voice's settings.
		err = a.send(conn, map[string]any{"text": " ", "voice_settings": map[string]any{"stability": 0.5, "similarity_boost": 0.8}})
		if err != nil {
			conn.CloseNow()
		}
	}
	if err != nil {
		if resp != nil && resp.StatusCode != http.StatusSwitchingProtocols {
			err = &cloudspeech.StatusError{Provider: "elevenlabs", Status: resp.StatusCode}
		}
		a.fail(fmt.Errorf("elevenlabs: opening the input stream: %w", err))
		close(a.ready)
		return
	}
	a.mu.Lock()
	a.conn = conn
	a.mu.Unlock()
	close(a.ready)
	read := make(chan struct{})
	go func() {
		defer close(read)
		a.read(conn)
	}()
	select {
	case <-a.ctx.Done():
	case <-read:
	}
	// The closing text "" ends the stream; ElevenLabs then closes the connection.
	wctx, cancel := context.WithTimeout(context.Background(), time.Second)
	_ = conn.Write(wctx, websocket.MessageText, []byte(`{"text":""}`))
	cancel()
	conn.CloseNow()
	<-read
}

func (a *answer) send(conn *websocket.Conn, m map[string]any) error {
	b, _ := json.Marshal(m)
	ctx, cancel := context.WithTimeout(a.ctx, a.s.o.Timeout)
	defer cancel()
	return conn.Write(ctx, websocket.MessageText, b)
}

// read passes ElevenLabs' messages on as chunks until the connection ends.
func (a *answer) read(conn *websocket.Conn) {
	put := func(c chunk) bool {
		select {
		case a.chunks <- c:
			return true
		case <-a.ctx.Done():
			return false
		}
	}
	for {
		typ, data, err := conn.Read(a.ctx)
		if err != nil {
			if a.ctx.Err() == nil {
				put(chunk{err: fmt.Errorf("elevenlabs: the input stream ended: %s", closeReason(err))})
			}
			return
		}
		if typ != websocket.MessageText {
			continue
		}
		m, err := parseMessage(data)
		if err != nil {
			put(chunk{err: err})
			return
		}
		if m.Audio != nil || (m.IsFinal != nil && *m.IsFinal) {
			c := chunk{final: m.IsFinal != nil && *m.IsFinal}
			if m.Audio != nil {
				c.pcm, _ = base64.StdEncoding.DecodeString(*m.Audio) // checked by parseMessage
			}
			if m.Alignment != nil {
				c.chars = spoken(m.Alignment.Chars)
			} else if m.NormalizedAlignment != nil {
				c.chars = spoken(m.NormalizedAlignment.Chars)
			}
			if !put(c) {
				return
			}
		}
	}
}

// parseMessage reads one of ElevenLabs' messages: audio that is not base64 or an error message
// is an error, whose text is the provider's, trimmed to printable characters.
func parseMessage(data []byte) (*message, error) {
	var m message
	if err := json.Unmarshal(data, &m); err != nil {
		return nil, errors.New("elevenlabs: a message of the input stream is not JSON")
	}
	if m.Error != "" || (m.Message != "" && m.Audio == nil) {
		return nil, fmt.Errorf("elevenlabs: the input stream failed: %s", cloudspeech.Printable(m.Error+" "+m.Message, 120))
	}
	if m.Audio != nil {
		if _, err := base64.StdEncoding.DecodeString(*m.Audio); err != nil {
			return nil, errors.New("elevenlabs: a message's audio is not base64")
		}
	}
	return &m, nil
}

func closeReason(err error) string {
	if code := websocket.CloseStatus(err); code != -1 {
		return fmt.Sprintf("closed with status %d", code)
	}
	if errors.Is(err, websocket.ErrMessageTooBig) {
		return "a message was too large"
	}
	return "connection lost"
}

func (a *answer) fail(err error) {
	a.mu.Lock()
	if a.err == nil {
		a.err = err
	}
	conn := a.conn
	a.conn = nil
	a.mu.Unlock()
	if conn != nil {
		a.cancel() // run closes the connection
	}
}

// Synthesize speaks text on the stream, as the answer's next sentence, and returns its audio
// as it comes. A voice other than the stream's, or a stream that failed, is spoken with the
// HTTP API.
func (a *answer) Synthesize(ctx context.Context, text, voice string) (*engine.Audio, error) {
	if v, err := a.s.voice(voice); err != nil || v != a.voice {
		return a.s.Synthesize(ctx, text, voice)
	}
	select {
	case <-a.ready:
	case <-ctx.Done():
		return nil, ctx.Err()
	}
	a.mu.Lock()
	conn, want := a.conn, countSpoken(text)
	a.mu.Unlock()
	if conn == nil || want == 0 || want > a.s.o.MaxCharacters {
		return a.s.Synthesize(ctx, text, voice)
	}
	cloudspeech.Name(ctx, "elevenlabs")
	// A sentence ends with a space, and flush has ElevenLabs speak what it holds at once,
	// rather than wait for more text.
	if err := a.send(conn, map[string]any{"text": strings.TrimSpace(text) + " ", "flush": true}); err != nil {
		a.fail(fmt.Errorf("elevenlabs: sending text: %w", err))
		return a.s.Synthesize(ctx, text, voice)
	}
	return &engine.Audio{SampleRate: SampleRate, PCM: &sentence{a: a, ctx: ctx, want: want, left: int64(2 * SampleRate * a.s.o.MaxAudio)}}, nil
}

func countSpoken(text string) int {
	n := 0
	for _, r := range text {
		if !unicode.IsSpace(r) {
			n++
		}
	}
	return n
}

// sentence reads one sentence's audio from the stream: until alignment accounted for its
// characters, or the stream's final message.
type sentence struct {
	a     *answer
	ctx   context.Context
	want  int // characters not yet accounted for
	pcm   []byte
	left  int64
	ended bool
	err   error
}

func (r *sentence) Read(p []byte) (int, error) {
	for len(r.pcm) == 0 {
		if r.err != nil {
			return 0, r.err
		}
		if r.ended {
			return 0, io.EOF
		}
		c := r.next()
		if c.err != nil {
			r.err = c.err
			r.a.fail(c.err)
			continue
		}
		r.pcm, r.want = c.pcm, r.want-c.chars
		r.ended = r.want <= 0 || c.final
	}
	n := copy(p, r.pcm)
	r.pcm = r.pcm[n:]
	if r.left -= int64(n); r.left < 0 {
		r.err = errors.New("elevenlabs: the provider's audio is longer than its bound")
		r.a.fail(r.err)
		return n, r.err
	}
	return n, nil
}

// next waits for the stream's next chunk; what the stream sent before it ended comes first.
func (r *sentence) next() chunk {
	timer := time.NewTimer(r.a.s.o.ReadTimeout)
	defer timer.Stop()
	select {
	case c := <-r.a.chunks:
		return c
	case <-timer.C:
		return chunk{err: fmt.Errorf("elevenlabs: %w", cloudspeech.ErrStalled)}
	case <-r.ctx.Done():
		return chunk{err: r.ctx.Err()}
	case <-r.a.ctx.Done():
		select {
		case c := <-r.a.chunks:
			return c
		default:
			return chunk{err: errors.New("elevenlabs: the input stream closed")}
		}
	}
}

// Close lets the sentence go. A sentence closed before its end leaves audio on the stream
// that would be taken for the next one's: the stream is given up, and the next sentences are
// spoken with the HTTP API.
func (r *sentence) Close() error {
	if !r.ended || len(r.pcm) > 0 {
		r.a.fail(errors.New("elevenlabs: a sentence was left before its end"))
	}
	r.ended, r.pcm = true, nil
	return nil
}
