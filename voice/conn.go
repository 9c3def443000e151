package voice

import (
	"bytes"
	"cmp"
	"context"
	"encoding/base64"
	"encoding/json"
	"errors"
	"fmt"
	"net"
	"net/http"
	"runtime/debug"
	"slices"
	"strconv"
	"strings"
	"sync"
	"sync/atomic"
	"time"
	"unicode/utf8"

	"github.com/coder/websocket"
	"github.com/google/uuid"

	"github.com/convengine/engine"
	"github.com/convengine/engine/audio"
	"github.com/convengine/engine/audio/vad"
	"github.com/convengine/engine/internal/body"
	"github.com/convengine/engine/internal/response"
)

// clientMessage is a message of the client (docs/voice.md).
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
	SessionID   string          `json:"sessionId"`
	Screen      json.RawMessage `json:"screen"`
	CountryCode string          `json:"country_code"`
	Locale      string          `json:"locale"`
}

// input is the turn input the context makes.
func (sc *streamContext) input() engine.TurnInput {
	in := engine.TurnInput{ConversationID: sc.SessionID, CountryCode: sc.CountryCode, Locale: sc.Locale}
	if len(sc.Screen) > 0 && string(sc.Screen) != "null" {
		// A JSON string's text; anything else reaches the prompt as its JSON.
		if json.Unmarshal(sc.Screen, &in.Screen) != nil {
			in.Screen = string(sc.Screen)
		}
	}
	return in
}

// voiceConn is one voice socket. Its reader goroutine reads and owns the state of the
// conversation; each turn runs in a goroutine of its own, one at a time. What is to be sent
// is queued, and a writer goroutine, which runs only while the queue holds something, sends
// it in order. Pings and the idle time-out are timers: an idle socket has one goroutine, the
// reader's, and no buffer of its own besides the connection's.
type voiceConn struct {
	s       *Server
	e       *engine.Engine
	caller  *engine.Caller
	opts    Options
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
	// conversation is conversationID, for Server.Say on other goroutines.
	conversation atomic.Pointer[string]

	// Owned by the reader.
	context        streamContext
	conversationID string
	history        []engine.Message
	pcm            []int16
	pcmHeld        int64 // bytes of pcm reserved from Options.AudioMemory
	refused        bool  // the utterance was refused; its audio is dropped until end_of_speech
	endedByEngine  bool  // the engine ended the last utterance itself (Options.EndOfSpeech)
	speech         utteranceSpeech
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
	if socket := c.e.Observer().Socket; socket != nil {
		ctx := context.WithoutCancel(c.ctx)
		socket(ctx, c.caller.EngineKey, true)
		defer socket(ctx, c.caller.EngineKey, false)
	}
	c.conversationID = uuid.NewString()
	c.conversation.Store(&c.conversationID)
	c.touch()
	c.mu.Lock()
	c.ping = time.AfterFunc(c.opts.PingInterval, c.pingClient)
	c.idle = time.AfterFunc(c.opts.IdleTimeout, c.checkIdle)
	c.mu.Unlock()

	reason := c.readSafely()
	c.dropPCM()

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
	c.e.Logger().Info("voice socket closed", "requestId", c.caller.RequestID, "tenant", c.caller.EngineKey, "turns", c.turns,
		"reason", reason, "seconds", time.Since(c.started).Seconds())
}

// readSafely is readLoop, ending the socket, not the process, when it panics.
func (c *voiceConn) readSafely() (reason string) {
	defer func() {
		if v := recover(); v != nil {
			c.e.Logger().Error("voice socket panicked", "requestId", c.caller.RequestID, "tenant", c.caller.EngineKey,
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
	if err := engine.DecodeJSON(data, &m); err != nil {
		if m.Type == "audio" { // a broken frame spoils its utterance
			c.dropPCM()
			c.refused = true
		}
		p := err.(*engine.Problem)
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
		// No new work: the socket closes when the running turn is answered. Stopping it is
		// no new work, and a request for some is told why it gets none.
		switch m.Type {
		case "cancel":
		case "end_of_speech", "text":
			return c.trySend(errorMessage("", engine.CodeShuttingDown, "the engine is shutting down; connect again", true))
		default:
			return true
		}
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
		// The client's end of the utterance the engine ended already, when what came since
		// holds no speech, is no new utterance. (One refused since ends as any refused one.)
		again := c.endedByEngine && !c.speech.heard && !c.refused
		c.endedByEngine = false
		if again {
			c.dropPCM()
			return true
		}
		return c.onEndOfSpeech()
	case "cancel":
		id := c.stopTurn()
		c.dropPCM()
		c.refused, c.endedByEngine = false, false
		return c.trySend(cancelledMessage(id))
	case "text":
		return c.onText(m)
	case "":
		return c.trySend(errorMessage("", engine.CodeInvalidRequest, "type: is required", false))
	}
	return c.trySend(errorMessage("", engine.CodeInvalidRequest, fmt.Sprintf("type: %q is not audio, end_of_speech, cancel or text", response.Truncate(m.Type, 32)), false))
}

// setContext validates a context the way a turn's body is validated, and keeps it for the
// turns that follow.
func (c *voiceConn) setContext(raw json.RawMessage) *engine.Problem {
	var sc streamContext
	if err := engine.DecodeJSON(raw, &sc); err != nil {
		p := err.(*engine.Problem)
		if p.Field == "" {
			return engine.InvalidField("context", "must be an object")
		}
		return engine.InvalidField("context."+p.Field, strings.TrimPrefix(p.Detail, p.Field+": "))
	}
	if sc.Locale != "" && !engine.ValidLocale(sc.Locale) {
		return engine.InvalidField("context.locale", "must be a BCP 47 language tag such as \"en-US\"")
	}
	in := sc.input()
	if err := in.Check(); err != nil {
		return err.(*engine.Problem)
	}
	c.context = sc
	if sc.SessionID != "" {
		c.conversationID = sc.SessionID
		id := sc.SessionID
		c.conversation.Store(&id)
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
	if c.refused {
		return true
	}
	refuse := func(code, message string) bool {
		c.dropPCM()
		c.refused = true
		return c.trySend(errorMessage("", code, message, code == engine.CodeOverloaded))
	}
	switch {
	case !present:
		return refuse(engine.CodeInvalidRequest, "chunk: is required on audio messages")
	case sampleRate != nil && *sampleRate != inputSampleRate:
		return refuse(engine.CodeInvalidAudio, fmt.Sprintf("the sample rate is %d Hz; it must be 16000 Hz", *sampleRate))
	}
	// The chunk's bytes, between its base64 and the utterance's samples.
	bp := audioBuffers.Get().(*[]byte)
	defer audioBuffers.Put(bp)
	*bp = slices.Grow((*bp)[:0], base64.StdEncoding.DecodedLen(len(b64)))
	n, err := base64.StdEncoding.Decode((*bp)[:cap(*bp)], b64)
	b := (*bp)[:n]
	switch {
	case err != nil:
		return refuse(engine.CodeInvalidAudio, "chunk: is not valid base64")
	case len(b)%2 != 0:
		return refuse(engine.CodeInvalidAudio, "chunk: does not hold whole 16-bit samples")
	case len(c.pcm)+len(b)/2 > maxUtteranceSamples:
		return refuse(engine.CodeUtteranceTooLong, fmt.Sprintf("an utterance holds at most %d seconds of audio", maxInputSeconds))
	case !c.s.audioMemory.Take(int64(len(b))):
		p := c.e.Overloaded(c.ctx, c.caller, engine.BoundAudioMemory, "the engine holds as much audio as it can; say it again in a moment")
		return refuse(p.Code, p.Detail)
	}
	c.pcmHeld += int64(len(b))
	if c.pcm == nil {
		c.pcm = getPCM()
	}
	c.pcm = audio.AppendSamples(c.pcm, b)
	return c.listen(len(b) / 2)
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

// dropPCM lets the utterance's audio go, and its share of Options.AudioMemory.
func (c *voiceConn) dropPCM() {
	c.s.audioMemory.Give(c.pcmHeld)
	c.pcm, c.pcmHeld = nil, 0
	c.speech.reset()
}

func (c *voiceConn) onEndOfSpeech() bool {
	if c.refused {
		c.refused = false
		return true
	}
	if len(c.pcm) == 0 {
		return c.trySend(errorMessage("", engine.CodeNoSpeech, "end_of_speech came without audio", false))
	}
	if !c.speech.heard && vad.Trim(c.pcm, nil) == nil {
		// Noise alone: the answer under way, if any, goes on. (The streaming detector may miss
		// speech that starts with the audio, before it knew the noise; the whole utterance
		// is looked at again here.)
		c.dropPCM()
		return c.trySend(errorMessage("", engine.CodeNoSpeech, "no speech was found in the audio", false))
	}
	if !c.bargeIn() {
		return false
	}
	pcm, held := c.pcm, c.pcmHeld
	c.pcm, c.pcmHeld = nil, 0
	listening, listenAdmission := c.speech.takeListening()
	c.speech.reset()
	return c.startTurn(voiceTurn{pcm: pcm, held: held, listening: listening, listenAdmission: listenAdmission})
}

func (c *voiceConn) onText(m *clientMessage) bool {
	text := ""
	if m.Transcript != nil {
		text = strings.TrimSpace(*m.Transcript)
	}
	switch {
	case text == "":
		return c.trySend(errorMessage("", engine.CodeInvalidRequest, "transcript: is required on text messages", false))
	case !utf8.ValidString(text) || utf8.RuneCountInString(text) > maxMessageLen:
		return c.trySend(errorMessage("", engine.CodeInvalidRequest, fmt.Sprintf("transcript: must be valid UTF-8 of at most %d characters", maxMessageLen), false))
	}
	if !c.bargeIn() {
		return false
	}
	c.dropPCM()
	c.refused, c.endedByEngine = false, false
	return c.startTurn(voiceTurn{text: text})
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
// one of the process's turn slots while it runs ([engine.Engine.Admit]); a turn refused is
// answered with an error message (rate_limited, overloaded) and the socket stays. held is the
// share of Options.AudioMemory that pcm holds, given back once it is transcribed. It returns
// false when the client is to be dropped.
func (c *voiceConn) startTurn(in voiceTurn) bool {
	if c.turn != nil {
		<-c.turn.done // it ended; what it wrote (the history) is visible from here on
	}
	admission, err := c.e.Admit(c.turnsCtx, c.caller, engine.Work{Kind: engine.WorkTurn})
	if err != nil {
		c.s.audioMemory.Give(in.held)
		if in.listening != nil {
			in.listening.Close()
			in.listenAdmission.Release()
		}
		p := problemOf(err)
		return c.trySend(errorMessage("", p.Code, p.Detail, p.Retryable))
	}
	ctx, cancel := context.WithCancel(c.turnsCtx)
	rt := &runningTurn{id: uuid.NewString(), cancel: cancel, done: make(chan struct{})}
	c.turn = rt
	c.turns++
	in.id, in.context, in.conversationID, in.history, in.admission = rt.id, c.context, c.conversationID, slices.Clone(c.history), admission
	c.busy.Store(true)
	go func() {
		defer close(rt.done)
		defer admission.Release()
		defer cancel()
		defer c.turnEnded()
		defer func() {
			// A panic outside the engine's turn (which catches the model's) must not take the
			// process down from this goroutine: the turn fails instead.
			if v := recover(); v != nil {
				c.e.Logger().Error("voice turn panicked", "requestId", c.caller.RequestID, "tenant", c.caller.EngineKey,
					"panic", fmt.Sprintf("%T", v), "stack", string(debug.Stack()))
				if !rt.answered.Swap(true) {
					c.send(ctx, errorMessage(rt.id, engine.CodeInternal, "The engine failed.", false))
				}
			}
		}()
		if user, answer, ok := c.runTurn(ctx, in, &rt.answered); ok {
			c.remember(user, answer)
		}
	}()
	return true
}

// problemOf is err as a problem: the engine's errors are.
func problemOf(err error) *engine.Problem {
	var p *engine.Problem
	if errors.As(err, &p) {
		return p
	}
	return engine.NewProblem(http.StatusInternalServerError, engine.CodeInternal, "the engine failed; the failure is logged")
}

// voiceTurn is what a turn starts from.
type voiceTurn struct {
	id             string
	pcm            []int16
	held           int64 // pcm's share of Options.AudioMemory
	text           string
	context        streamContext
	conversationID string
	history        []engine.Message
	admission      *engine.Admission
	// listening heard pcm while it was spoken; listenAdmission holds its connection.
	listening       engine.Listening
	listenAdmission *engine.Admission
}

// Messages of a conversation the socket keeps: at most maxHistory, each at most maxMessageLen
// characters, as a turn takes them.
const (
	maxHistory    = body.MaxHistory
	maxMessageLen = body.MaxMessageLen
)

// remember adds a finished turn to the conversation of the socket, keeping the last 100
// messages. It runs before the turn's done is closed; the reader reads the history only after.
func (c *voiceConn) remember(user, answer string) {
	clip := func(s string) string {
		if utf8.RuneCountInString(s) > maxMessageLen {
			return string([]rune(s)[:maxMessageLen])
		}
		return s
	}
	c.history = append(c.history, engine.Message{Role: engine.RoleUser, Content: clip(user)},
		engine.Message{Role: engine.RoleAssistant, Content: clip(answer)})
	if n := len(c.history); n > maxHistory {
		c.history = append([]engine.Message(nil), c.history[n-maxHistory:]...)
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

// runTurn runs the turn through [engine.Engine.Turn], which transcribes its audio if there is
// some, into a voice sink that speaks it. It reports the user's words and the answer when the
// turn finished without being cancelled. answered is set once the turn's last message is
// queued.
func (c *voiceConn) runTurn(ctx context.Context, in voiceTurn, answered *atomic.Bool) (string, string, bool) {
	start := time.Now()
	input := in.context.input()
	input.Mode = engine.ModeVoice
	input.ConversationID = in.conversationID
	input.Messages = in.history
	input.TurnID = in.id
	input.Admission = in.admission
	if in.pcm != nil {
		input.Samples, input.Listening = in.pcm, in.listening
	} else {
		input.Transcript = in.text
	}
	samples := len(in.pcm)
	// The engine is done with the samples once the turn has started or failed to.
	freeAudio := func() {
		if in.listening != nil {
			in.listening.Close()
			in.listenAdmission.Release()
			in.listening = nil
		}
		if in.pcm != nil {
			putPCM(in.pcm)
			c.s.audioMemory.Give(in.held)
			in.pcm = nil
		}
	}
	defer freeAudio()

	// The turn's events go to the voice sink, which speaks them.
	var (
		sink     *voiceSink
		user     string
		widgets  int
		errCode  string
		finished bool
	)
turn:
	for ev, err := range c.e.Turn(ctx, c.caller, &input) {
		freeAudio()
		var failed *engine.TurnError
		if errors.As(err, &failed) {
			break // its error event went to the sink
		}
		if err != nil {
			// Answered once the error is queued: a cancel that stopped its sending gets
			// cancelled instead, so that the client hears of the turn either way.
			if p := problemOf(err); ctx.Err() == nil && c.send(ctx, errorMessage(in.id, p.Code, p.Detail, p.Retryable)) {
				answered.Store(true)
			}
			return "", "", false
		}
		switch ev.Type {
		case engine.EventStart:
			user = ev.Transcript
			if !c.send(ctx, transcriptMessage(ev.TurnID, ev.Transcript, ev.Disclosure)) {
				break turn
			}
			sink = newVoiceSink(ctx, c, ev.TurnID, ev.Locale, answered)
			if ev.Disclosure != "" {
				sink.sayFirst(ev.Disclosure)
			}
			continue
		case engine.EventError:
			errCode = ev.Error.Code
		case engine.EventDone:
			widgets = len(ev.Spec.Widgets)
			finished = true
		}
		if sink == nil || sink.deliver(ev) != nil {
			break turn
		}
	}
	audioMessages := 0
	answer := ""
	if sink != nil {
		sink.close()
		audioMessages = sink.seq // the worker has ended
		answer = sink.spoken.String()
	}
	finished = finished && ctx.Err() == nil
	c.e.Logger().InfoContext(ctx, "voice turn",
		"requestId", c.caller.RequestID, "tenant", c.caller.EngineKey, "env", cmp.Or(c.caller.Environment, engine.EnvProduction), "turnId", in.id,
		"audioSeconds", float64(samples)/inputSampleRate, "widgets", widgets, "audioMessages", audioMessages,
		"error", errCode, "cancelled", !finished, "ms", float64(time.Since(start).Microseconds())/1000)
	return user, answer, finished && errCode == ""
}

// touch records the client's activity, or the end of a turn, for the idle time-out.
func (c *voiceConn) touch() { c.lastActivity.Store(time.Now().UnixNano()) }
