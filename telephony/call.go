package telephony

import (
	"context"
	"crypto/subtle"
	"encoding/json"
	"errors"
	"fmt"
	"runtime/debug"
	"strconv"
	"strings"
	"sync"
	"sync/atomic"
	"time"

	"github.com/convengine/engine"
	"github.com/convengine/engine/audio"
	"github.com/convengine/engine/audio/vad"
	"github.com/convengine/engine/handoff"
	"github.com/convengine/engine/internal/verbalize"
	"github.com/convengine/engine/widgets"
)

// Bounds on what a caller's speech holds.
const (
	maxUtterance = 60 * LineRate // the engine's limit of an utterance
	preRoll      = LineRate      // audio kept before the detector found speech
	maxHistory   = 100
)

// A Call is one phone call's conversation: the greeting and the AI disclosure, the caller's
// PIN on the keypad verified by the tenant's backend, then turns from the caller's speech,
// answered sentence by sentence down the [Line], with barge-in, actions confirmed by PIN and
// transfers to a person. The transport feeds it what the caller sends (Hear, Press, Marked)
// from its reader, and runs Run on a goroutine of its own.
type Call struct {
	p      *Phone
	entry  Entry
	info   CallInfo
	line   Line
	keypad Keypad
	lines  *lineTexts // what the line says of its own: the tenant's prompts, in its language

	admission *engine.Admission
	refused   *engine.Problem
	started   time.Time

	closing   chan struct{} // closed when the phone shuts down
	closeOnce sync.Once

	// The reader's.
	detector     *vad.Detector
	utterance    []int16
	speaking     bool         // speech started in the utterance
	stream       *heardStream // the utterance heard while spoken, nil for none
	notStreaming bool         // the engine's recogniser was found not to stream

	listening  atomic.Bool     // the caller's speech makes turns
	heardCtx   context.Context // the conversation's, set before listening
	utterances chan utterance

	mu        sync.Mutex // guards what follows
	caller    *engine.Caller
	token     engine.Secret
	history   []engine.Message
	marks     []mark
	cleared   map[string]bool // marks a clear dropped: their echo proves nothing
	protected string          // the mark that ends audio no barge-in cuts (the disclosure)
	stopTurn  context.CancelFunc
	playEnd   time.Time // when the audio sent so far should have played
	heardWake chan struct{}
	seq       int
	figures   Figures
	jitter    Jitter
}

// utterance is what the caller said, and when the detector heard it end.
type utterance struct {
	pcm    []int16
	ended  time.Time
	stream *heardStream // its recognition while it was spoken, nil for none
}

// mark is a mark sent down the line and not echoed yet.
type mark struct {
	name    string
	text    string // the sentence before it
	message int    // index in history of the answer it belongs to; -1 for none
	expect  time.Time
}

func newCall(p *Phone, entry Entry, info CallInfo, line Line) *Call {
	c := &Call{p: p, entry: entry, info: info, line: line, lines: linesOf(entry), started: time.Now(), closing: make(chan struct{}),
		utterances: make(chan utterance, 1), cleared: map[string]bool{},
		detector: vad.NewDetector(&vad.Options{SampleRate: LineRate, MinSpeech: p.o.BargeIn, MinSilence: p.o.EndOfSpeech})}
	c.keypad.Arm()
	return c
}

func (c *Call) close() { c.closeOnce.Do(func() { close(c.closing) }) }

// Refused is why the call was not admitted (a bound reached, the engine shutting down), nil
// when it was.
func (c *Call) Refused() *engine.Problem { return c.refused }

// Press is a key the caller pressed.
func (c *Call) Press(key byte) { c.keypad.Press(key) }

// Arrived counts a frame of the caller's audio that arrived at at, mediaTime into the call,
// for the call's jitter. It is called by the reader.
func (c *Call) Arrived(at time.Time, mediaTime time.Duration) {
	c.mu.Lock() // the figures read it when the call ends, the reader perhaps still reading
	defer c.mu.Unlock()
	c.jitter.Arrive(at, mediaTime)
}

// Hear takes the caller's audio, 8 kHz samples, from the transport's reader. Speech over an
// answer stops it (and clears the line); the silence after speech ends the utterance, which
// becomes a turn. When the engine's recogniser streams, the utterance is heard while it is
// spoken.
func (c *Call) Hear(pcm []int16) {
	if !c.listening.Load() {
		return
	}
	ev := c.detector.Write(pcm)
	c.utterance = append(c.utterance, pcm...)
	switch {
	case !c.speaking && c.detector.Speaking():
		c.speaking = true
		c.bargeIn()
		c.startStream(c.heardCtx)
	case c.stream != nil:
		c.streamWrite(pcm)
		if c.stream != nil && c.p.o.RecognizerEndOfSpeech {
			if _, ended := c.stream.listening.Heard(); ended {
				ev = vad.SpeechEnded
			}
		}
	}
	switch {
	case !c.speaking && len(c.utterance) > 2*preRoll:
		c.utterance = append(c.utterance[:0], c.utterance[len(c.utterance)-preRoll:]...)
	case c.speaking && (ev == vad.SpeechEnded || len(c.utterance) >= maxUtterance):
		u := utterance{pcm: c.utterance, ended: time.Now(), stream: c.takeStream()}
		c.utterance, c.speaking = nil, false
		c.detector.Reset()
		select { // a newer utterance replaces one the conversation has not taken yet
		case old := <-c.utterances:
			old.stream.close()
		default:
		}
		c.utterances <- u
	}
}

// bargeIn stops the answer the caller speaks over: its turn, and the audio the line holds.
func (c *Call) bargeIn() {
	c.mu.Lock()
	if c.protected != "" || len(c.marks) == 0 && c.stopTurn == nil {
		c.mu.Unlock()
		return
	}
	if c.stopTurn != nil {
		c.stopTurn()
	}
	for _, m := range c.marks {
		c.cleared[m.name] = true
	}
	c.marks, c.playEnd = nil, time.Time{}
	c.figures.BargeIns++
	c.wakeHeard()
	c.mu.Unlock()
	ctx, cancel := context.WithTimeout(context.Background(), 5*time.Second)
	defer cancel()
	if err := c.line.Clear(ctx); err != nil {
		c.log().Info("phone: clearing the line failed", "requestId", c.info.ID, "err", err)
	}
}

// Marked is a mark the line echoed: the caller heard the audio before it, unless a clear
// dropped it.
func (c *Call) Marked(name string) {
	now := time.Now()
	c.mu.Lock()
	defer c.mu.Unlock()
	if c.cleared[name] {
		delete(c.cleared, name)
		return
	}
	for i, m := range c.marks {
		if m.name != name {
			continue
		}
		// Marks come back in order: those before it were heard too.
		for _, h := range c.marks[:i+1] {
			if h.message >= 0 && h.message < len(c.history) {
				msg := &c.history[h.message]
				msg.Content = strings.TrimSpace(msg.Content + " " + h.text)
			}
			if h.name == c.protected {
				c.protected = ""
			}
		}
		c.figures.MarkDelays = append(c.figures.MarkDelays, max(0, now.Sub(m.expect)))
		c.marks = c.marks[i+1:]
		if len(c.marks) == 0 {
			c.wakeHeard()
		}
		return
	}
}

func (c *Call) wakeHeard() {
	if c.heardWake != nil {
		close(c.heardWake)
		c.heardWake = nil
	}
}

// waitHeard waits until the caller heard everything sent, or the audio's length and a grace
// period passed.
func (c *Call) waitHeard(ctx context.Context) {
	c.mu.Lock()
	if len(c.marks) == 0 {
		c.mu.Unlock()
		return
	}
	wait := time.Until(c.playEnd) + 3*time.Second
	if c.heardWake == nil {
		c.heardWake = make(chan struct{})
	}
	wake := c.heardWake
	c.mu.Unlock()
	t := time.NewTimer(wait)
	defer t.Stop()
	select {
	case <-wake:
	case <-t.C:
	case <-ctx.Done():
	}
}

func (c *Call) log() interface {
	Info(string, ...any)
	Warn(string, ...any)
	Error(string, ...any)
} {
	return c.p.e.Logger()
}

// Run runs the call's conversation until the caller hangs up (ctx ends), the call is handed
// to a person, or the engine shuts down (a goodbye, then Hangup). It returns the call's
// figures, which the Phone's Figures hook also gets.
func (c *Call) Run(ctx context.Context) *Figures {
	defer c.p.remove(c)
	reason := "hung up"
	defer func() {
		if v := recover(); v != nil {
			c.log().Error("phone call panicked", "requestId", c.info.ID, "tenant", c.entry.Tenant.Key,
				"panic", fmt.Sprintf("%T", v), "stack", string(debug.Stack()))
			reason = "panic"
		}
		c.admission.Release() // before the figures: a host told the call ended may call again
		c.ended(reason)
	}()
	ctx, cancel := context.WithCancel(ctx) // its end lets an utterance's recognition go
	defer cancel()
	reason = c.converse(ctx)
	return &c.figures
}

// ended logs the call's figures and gives them to the host.
func (c *Call) ended(reason string) {
	c.listening.Store(false)
	c.mu.Lock()
	c.figures.Duration = time.Since(c.started)
	c.figures.Jitter = c.jitter.Value()
	f := c.figures
	c.mu.Unlock()
	attrs := []any{"requestId", c.info.ID, "tenant", c.entry.Tenant.Key, "reason", reason,
		"verified", f.Verified, "turns", f.Turns, "heardWhileSpoken", f.HeardWhileSpoken, "bargeIns", f.BargeIns, "seconds", f.Duration.Seconds(),
		"firstAudioP50ms", ms(Percentile(f.FirstAudio, 50)), "firstAudioMaxMs", ms(Percentile(f.FirstAudio, 100)),
		"markDelayP50ms", ms(Percentile(f.MarkDelays, 50)), "jitterMs", ms(f.Jitter)}
	if m, ok := c.line.(MediaLine); ok {
		mf := m.MediaFigures()
		f.Media = &mf
		attrs = append(attrs, "rtpReceived", mf.Received, "rtpReceivedLost", mf.ReceivedLost, "rtpSent", mf.Sent,
			"rtpSentLost", mf.SentLost, "rtpSentJitterMs", ms(mf.SentJitter), "rtcpReports", mf.Reports)
	}
	c.log().Info("phone call", attrs...)
	if c.p.o.Figures != nil {
		c.p.o.Figures(c.entry.Tenant.Key, &f)
	}
}

func ms(d time.Duration) float64 { return float64(d.Microseconds()) / 1000 }

// converse is the conversation; it returns why it ended.
func (c *Call) converse(ctx context.Context) string {
	t := c.entry.Tenant
	anon := &engine.Caller{EngineKey: t.Key, Environment: engine.EnvProduction, RequestID: c.info.ID}
	if c.refused != nil {
		c.log().Info("phone call refused", "requestId", c.info.ID, "tenant", t.Key, "code", c.refused.Code)
		c.say(ctx, anon, c.lines.busy, true)
		c.hangup(ctx)
		return "refused: " + c.refused.Code
	}
	// The greeting, synthesized ahead, with the disclosure first: no barge-in cuts it, and
	// the keys pressed since the call was answered count.
	if pcm := c.p.greetings.get(ctx, c.p.e, t, greetingText(c.entry)); pcm != nil {
		c.play(ctx, pcm, true)
	}
	if !c.verify(ctx, anon) {
		c.hangup(ctx)
		if ctx.Err() != nil {
			return "hung up"
		}
		return "not verified"
	}
	c.say(ctx, c.callerOf(), c.lines.verified, false)
	c.heardCtx = ctx
	c.listening.Store(true)
	for {
		select {
		case <-ctx.Done():
			return "hung up"
		case <-c.closing:
			c.say(ctx, c.callerOf(), c.lines.closing, true)
			c.hangup(ctx)
			return "shutdown"
		case u := <-c.utterances:
			if c.answer(ctx, u) {
				return "transferred"
			}
		}
	}
}

func (c *Call) callerOf() *engine.Caller {
	c.mu.Lock()
	defer c.mu.Unlock()
	return c.caller
}

// verify asks for the PIN until the backend knows it, Attempts times at most.
func (c *Call) verify(ctx context.Context, anon *engine.Caller) bool {
	cfg := c.entry.Config
	for attempt := 1; attempt <= cfg.PIN.attempts(); attempt++ {
		digits, end, err := c.keypad.Read(ctx, cfg.PIN.maxDigits(), 2*cfg.PIN.timeout(), cfg.PIN.timeout())
		if err != nil {
			return false
		}
		if digits == "" || end == EndStar || end == EndTimeout && len(digits) == 0 {
			c.keypad.Arm()
			c.say(ctx, anon, c.lines.pinMissing, false)
			continue
		}
		token, err := c.p.o.Verifier.Verify(ctx, c.entry.Tenant, cfg.verifyPath(), c.info.ID, c.info.From, digits)
		switch {
		case err == nil:
			c.mu.Lock()
			c.token = token
			c.caller = &engine.Caller{EngineKey: c.entry.Tenant.Key, UserToken: token.Reveal(), Environment: engine.EnvProduction, RequestID: c.info.ID}
			c.history = []engine.Message{}
			c.figures.Verified = true
			c.mu.Unlock()
			return true
		case errors.Is(err, ErrNotVerified):
			c.log().Info("phone caller not verified", "requestId", c.info.ID, "tenant", c.entry.Tenant.Key, "attempt", attempt)
			if attempt < cfg.PIN.attempts() {
				c.keypad.Arm()
				c.say(ctx, anon, c.lines.pinAgain, false)
			}
		default:
			if ctx.Err() != nil {
				return false
			}
			c.log().Warn("phone caller verification failed", "requestId", c.info.ID, "tenant", c.entry.Tenant.Key, "err", err)
			c.say(ctx, anon, c.lines.noVerifier, true)
			return false
		}
	}
	c.say(ctx, anon, c.lines.notVerified, true)
	return false
}

// answer runs a turn from the caller's utterance and speaks its answer; it reports true when
// the call was handed to a person.
func (c *Call) answer(ctx context.Context, u utterance) bool {
	defer u.stream.close()
	caller := c.callerOf()
	admission, err := c.p.e.Admit(ctx, caller, engine.Work{Kind: engine.WorkTurn})
	if err != nil {
		c.say(ctx, caller, c.lines.turnRefused, false)
		return false
	}
	defer admission.Release()
	turnCtx, stop := context.WithCancel(ctx)
	defer stop()
	c.mu.Lock()
	c.stopTurn = stop
	history := append([]engine.Message(nil), c.history...)
	c.figures.Turns++
	c.mu.Unlock()
	defer func() {
		c.mu.Lock()
		c.stopTurn = nil
		c.mu.Unlock()
	}()

	pcm := audio.Resample(u.pcm, LineRate, 16000) // the recogniser's rate, through a proper filter
	in := &engine.TurnInput{Samples: pcm, Mode: engine.ModeVoice, ConversationID: c.info.ID, Messages: history, Admission: admission}
	if u.stream != nil {
		in.Listening = u.stream.listening // its transcript, unless it fails: then pcm's
		c.mu.Lock()
		c.figures.HeardWhileSpoken++
		c.mu.Unlock()
	}
	var (
		sp      *engine.Speaker
		pending strings.Builder
		spec    *widgets.Spec
		message = -1
		first   = u.ended
	)
	speak := func(sentence string) {
		if sp != nil && turnCtx.Err() == nil {
			c.speak(turnCtx, sp, sentence, message, false, &first)
		}
	}
	for ev, err := range c.p.e.Turn(turnCtx, caller, in) {
		if err != nil {
			var failed *engine.TurnError
			if !errors.As(err, &failed) && turnCtx.Err() == nil {
				var p *engine.Problem
				if errors.As(err, &p) && p.Code == engine.CodeNoSpeech {
					c.say(ctx, caller, c.lines.notHeard, false)
					break
				}
				c.log().Warn("phone turn refused", "requestId", c.info.ID, "tenant", c.entry.Tenant.Key, "err", err)
				c.say(ctx, caller, c.lines.turnRefused, false)
			}
			break
		}
		switch ev.Type {
		case engine.EventStart:
			sp = c.p.e.Speaker(turnCtx, caller, ev.Locale)
			// The disclosure was said with the greeting, before anything else.
			message = c.remember(ev.Transcript)
		case engine.EventSpeak:
			pending.WriteString(ev.Delta)
			done, rest := verbalize.CutSentences(pending.String())
			pending.Reset()
			pending.WriteString(rest)
			for _, s := range done {
				speak(s)
			}
		case engine.EventDone:
			spec = ev.Spec
		}
	}
	if rest := strings.TrimSpace(pending.String()); rest != "" {
		speak(rest)
	}
	if spec == nil || turnCtx.Err() != nil {
		return false
	}
	for _, w := range spec.Widgets {
		switch w := w.(type) {
		case widgets.Confirm:
			c.confirm(ctx, caller, w, spec.Meta.Locale)
		case widgets.Custom:
			if w.Type == handoff.WidgetType && c.transfer(ctx, w) {
				return true
			}
		}
	}
	return false
}

// remember starts an exchange of the conversation: what the caller said, and the answer as
// its marks prove it heard. It returns the answer's index in the history.
func (c *Call) remember(said string) int {
	c.mu.Lock()
	defer c.mu.Unlock()
	c.history = append(c.history, engine.Message{Role: engine.RoleUser, Content: said},
		engine.Message{Role: engine.RoleAssistant})
	if n := len(c.history); n > maxHistory {
		c.history = append(c.history[:0], c.history[n-maxHistory:]...)
		for i := range c.marks {
			c.marks[i].message -= n - maxHistory
		}
	}
	return len(c.history) - 1
}

// confirm asks for the PIN again before an action runs, where the tenant runs actions on the
// word of a passcode (the spec's basic mode); a tenant that needs a device's proof is
// confirmed in its app.
func (c *Call) confirm(ctx context.Context, caller *engine.Caller, w widgets.Confirm, locale string) {
	t := c.entry.Tenant
	if t.RequireActionProof {
		c.say(ctx, caller, c.lines.confirmInApp, false)
		return
	}
	c.listening.Store(false)
	defer c.listening.Store(true)
	c.keypad.Arm()
	c.say(ctx, caller, c.lines.confirmPIN, false)
	cfg := c.entry.Config
	digits, end, err := c.keypad.Read(ctx, cfg.PIN.maxDigits(), 2*cfg.PIN.timeout(), cfg.PIN.timeout())
	if err != nil {
		return
	}
	if end == EndStar || digits == "" {
		c.say(ctx, caller, c.lines.cancelled, false)
		return
	}
	token, err := c.p.o.Verifier.Verify(ctx, t, cfg.verifyPath(), c.info.ID, c.info.From, digits)
	c.mu.Lock()
	same := err == nil && subtle.ConstantTimeCompare([]byte(token), []byte(c.token)) == 1
	c.mu.Unlock()
	if !same {
		c.say(ctx, caller, c.lines.confirmWrong, false)
		return
	}
	res, err := c.p.e.Execute(ctx, caller, &engine.ExecuteInput{Execute: w.Execute, Method: "passcode", VerifiedAt: time.Now(), Locale: locale})
	if err != nil {
		c.log().Info("phone action failed", "requestId", c.info.ID, "tenant", t.Key, "tool", w.Execute.Tool, "err", err)
		c.say(ctx, caller, c.lines.actionFailed, false)
		return
	}
	c.say(ctx, caller, res.Speak, false)
}

// transfer hands the call to the tenant's person, once the caller heard that it will be; it
// reports false when the tenant has no number to transfer to (the handoff then goes on as the
// switchboard runs it).
func (c *Call) transfer(ctx context.Context, w widgets.Custom) bool {
	var h struct {
		ID     string `json:"id"`
		Status string `json:"status"`
	}
	if json.Unmarshal(w.Fields, &h) != nil || h.Status != string(handoff.StatusQueued) || c.entry.Config.TransferTo == "" {
		return false
	}
	c.waitHeard(ctx)
	if c.p.o.Transferred != nil {
		c.p.o.Transferred(ctx, c.entry.Tenant.Key, h.ID)
	}
	if err := c.line.Transfer(ctx, c.entry.Config.TransferTo); err != nil {
		c.log().Warn("phone transfer failed", "requestId", c.info.ID, "tenant", c.entry.Tenant.Key, "err", err)
		return false
	}
	c.log().Info("phone call transferred", "requestId", c.info.ID, "tenant", c.entry.Tenant.Key, "handoff", h.ID)
	return true
}

// hangup ends the call once the caller heard the last words.
func (c *Call) hangup(ctx context.Context) {
	c.waitHeard(ctx)
	hctx, cancel := context.WithTimeout(context.WithoutCancel(ctx), 10*time.Second)
	defer cancel()
	if err := c.line.Hangup(hctx); err != nil {
		c.log().Warn("phone hang-up failed", "requestId", c.info.ID, "tenant", c.entry.Tenant.Key, "err", err)
	}
}

// say speaks text of the line's own; protected, no barge-in cuts it.
func (c *Call) say(ctx context.Context, caller *engine.Caller, text string, protected bool) {
	sp := c.p.e.Speaker(ctx, caller, "")
	if sp == nil {
		return
	}
	for _, s := range sentences(text) {
		c.speak(ctx, sp, s, -1, protected, nil)
	}
}

// speak synthesizes a sentence down the line, followed by its mark. first, when not nil, is
// when the caller stopped speaking, to be measured to the turn's first audio and then cleared.
func (c *Call) speak(ctx context.Context, sp *engine.Speaker, sentence string, message int, protected bool, first *time.Time) {
	_, err := synthesize(ctx, sp, sentence, func(pcm []int16) error {
		if first != nil && !first.IsZero() {
			c.mu.Lock()
			c.figures.FirstAudio = append(c.figures.FirstAudio, time.Since(*first))
			c.mu.Unlock()
			*first = time.Time{}
		}
		return c.send(ctx, pcm)
	})
	if err != nil {
		if ctx.Err() == nil {
			c.log().Warn("phone speech failed", "requestId", c.info.ID, "tenant", c.entry.Tenant.Key, "err", err)
		}
		return
	}
	c.markSent(ctx, sentence, message, protected)
}

// play sends audio made ahead (the greeting) and its mark.
func (c *Call) play(ctx context.Context, pcm []int16, protected bool) {
	for i := 0; i < len(pcm); i += playChunk * 10 {
		if c.send(ctx, pcm[i:min(len(pcm), i+playChunk*10)]) != nil {
			return
		}
	}
	c.markSent(ctx, "", -1, protected)
}

// send sends audio down the line, and counts when it should have played.
func (c *Call) send(ctx context.Context, pcm []int16) error {
	if err := c.line.Play(ctx, pcm); err != nil {
		return err
	}
	d := time.Duration(len(pcm)) * time.Second / LineRate
	c.mu.Lock()
	if now := time.Now(); c.playEnd.Before(now) {
		c.playEnd = now
	}
	c.playEnd = c.playEnd.Add(d)
	c.mu.Unlock()
	return nil
}

// markSent sends a mark behind the audio sent, for text; protected, no barge-in cuts the audio
// before it.
func (c *Call) markSent(ctx context.Context, text string, message int, protected bool) {
	c.mu.Lock()
	c.seq++
	m := mark{name: "m" + strconv.Itoa(c.seq), text: text, message: message, expect: c.playEnd}
	c.marks = append(c.marks, m)
	if protected {
		c.protected = m.name
	}
	c.mu.Unlock()
	if err := c.line.Mark(ctx, m.name); err != nil && ctx.Err() == nil {
		c.log().Info("phone mark failed", "requestId", c.info.ID, "err", err)
	}
}
