package engine

import (
	"context"
	"encoding/json"
	"fmt"
	"io"
	"runtime/debug"
	"slices"
	"strings"
	"sync"
	"sync/atomic"

	"github.com/convengine/engine/internal/spoken"
	"github.com/convengine/engine/widgets"
)

// voiceSink is the turn sink of the voice socket. It sends the deltas as speak messages and
// synthesizes the answer sentence by sentence while the model is still writing: each complete
// sentence goes to a worker goroutine that streams its audio as audio messages. The spec and
// done follow the last audio.
type voiceSink struct {
	ctx      context.Context // the turn's
	c        *voiceConn
	t        *turn
	voice    string
	answered *atomic.Bool // set once done is queued

	failed      bool // the turn reported an error
	apologizing bool // the apology is being spoken

	mu      sync.Mutex
	pending strings.Builder // text that does not end a sentence yet
	queue   []string
	closed  bool          // no sentence will be added
	wake    chan struct{} // a sentence was queued, or the queue closed
	stop    context.CancelFunc
	ended   chan struct{} // closed when the worker ended; nil when none runs

	seq   int  // audio messages sent; the worker's until it ended
	muted bool // synthesis failed in this turn: the rest is not spoken
}

func newVoiceSink(ctx context.Context, c *voiceConn, t *turn, answered *atomic.Bool) *voiceSink {
	s := &voiceSink{ctx: ctx, c: c, t: t, answered: answered}
	if c.e.synthesizer != nil {
		s.voice = c.e.voiceFor(t.req.Tenant, "", t.locale)
		s.startWorker()
	}
	return s
}

// Speak sends the delta and queues the sentences it completes for synthesis. After a failure
// the speech of the answer has stopped, and the first delta (the apology) starts it again.
func (s *voiceSink) Speak(delta string) error {
	if !s.c.sendSpeak(s.ctx, delta) {
		return errClientGone
	}
	if s.failed && !s.apologizing && s.c.e.synthesizer != nil {
		s.apologizing = true
		s.startWorker()
	}
	s.mu.Lock()
	defer s.mu.Unlock()
	if s.ended == nil || s.closed {
		return nil
	}
	s.pending.WriteString(delta)
	sentences, rest := spoken.Cut(s.pending.String())
	if len(sentences) > 0 {
		s.pending.Reset()
		s.pending.WriteString(rest)
		s.queue = append(s.queue, sentences...)
		s.signal()
	}
	return nil
}

// Status sends nothing: the client of the socket hears the answer, not the tools.
func (s *voiceSink) Status(string, string) {}

// Widget sends nothing: the socket's widgets arrive in the spec.
func (s *voiceSink) Widget(widgets.Widget) error { return nil }

// Fail stops the speech of the failed answer and sends the error message.
func (s *voiceSink) Fail(code, message string, retryable bool) {
	s.failed = true
	s.stopWorker() // the rest of a failed answer is not spoken
	s.c.send(s.ctx, errorMessage(s.t.turnID, code, message, retryable))
}

// Done speaks what is left of the answer (or of the apology of a failed one), then sends the
// spec and done.
func (s *voiceSink) Done(spec widgets.Spec) error {
	if s.c.e.synthesizer != nil {
		s.finishWorker()
	}
	b, err := json.Marshal(map[string]any{"type": "spec", "spec": spec})
	if err != nil {
		return err
	}
	if !s.c.send(s.ctx, b) {
		return errClientGone
	}
	if !s.c.send(s.ctx, doneMessage(s.t.turnID)) {
		return errClientGone
	}
	// Answered once done is queued: a cancel that stopped its sending gets cancelled.
	s.answered.Store(true)
	return nil
}

// close stops the synthesis of a turn that ends without done.
func (s *voiceSink) close() { s.stopWorker() }

func (s *voiceSink) signal() {
	select {
	case s.wake <- struct{}{}:
	default:
	}
}

// startWorker starts the goroutine that speaks the queued sentences.
func (s *voiceSink) startWorker() {
	ctx, cancel := context.WithCancel(s.ctx)
	s.mu.Lock()
	s.queue, s.closed = nil, false
	s.wake = make(chan struct{}, 1)
	s.stop, s.ended = cancel, make(chan struct{})
	ended := s.ended
	s.mu.Unlock()
	go func() {
		defer close(ended)
		for {
			sentence, ok := s.next(ctx)
			if !ok {
				return
			}
			s.say(ctx, sentence)
		}
	}()
}

// finishWorker queues what is left of the text and waits until it has been spoken.
func (s *voiceSink) finishWorker() {
	s.mu.Lock()
	if s.ended == nil {
		s.mu.Unlock()
		return
	}
	if rest := strings.TrimSpace(s.pending.String()); rest != "" {
		s.queue = append(s.queue, rest)
	}
	s.pending.Reset()
	s.closed = true
	s.signal()
	ended := s.ended
	s.mu.Unlock()
	<-ended
	s.stopWorker()
}

// stopWorker stops the synthesis at once and waits for the worker to end.
func (s *voiceSink) stopWorker() {
	s.mu.Lock()
	stop, ended := s.stop, s.ended
	s.stop, s.ended = nil, nil
	s.closed = true
	s.pending.Reset()
	s.mu.Unlock()
	if stop != nil {
		stop()
		<-ended
	}
}

// next returns the next sentence to speak, waiting for one; false when the queue is closed and
// empty or ctx ended.
func (s *voiceSink) next(ctx context.Context) (string, bool) {
	for {
		s.mu.Lock()
		if len(s.queue) > 0 {
			sentence := s.queue[0]
			s.queue = s.queue[1:]
			s.mu.Unlock()
			return sentence, true
		}
		closed, wake := s.closed, s.wake
		s.mu.Unlock()
		if closed {
			return "", false
		}
		select {
		case <-wake:
		case <-ctx.Done():
			return "", false
		}
	}
}

// say synthesizes one sentence and sends its audio as it comes. A synthesizer that panics
// mutes the rest of the answer instead of taking the process down.
func (s *voiceSink) say(ctx context.Context, sentence string) {
	if s.muted {
		return
	}
	e := s.c.e
	defer func() {
		if v := recover(); v != nil {
			s.muted = true
			e.log.ErrorContext(ctx, "speech synthesis panicked", "requestId", s.t.req.ID, "tenant", s.t.req.Tenant.Key,
				"turnId", s.t.turnID, "panic", fmt.Sprintf("%T", v), "stack", string(debug.Stack()))
		}
	}()
	start := e.now()
	speech, err := e.synthesizer.Synthesize(ctx, e.speechText(sentence, s.t.locale), s.voice)
	e.observeSpeech(ctx, "synthesis", s.t.req.Tenant.Key, start, err)
	if err != nil {
		if ctx.Err() == nil {
			s.muted = true
			e.log.WarnContext(ctx, "speech synthesis failed; the rest of the answer has no audio",
				"requestId", s.t.req.ID, "tenant", s.t.req.Tenant.Key, "turnId", s.t.turnID, "voice", s.voice, "err", err)
		}
		return
	}
	defer speech.PCM.Close()
	bp := audioBuffers.Get().(*[]byte)
	buf := slices.Grow((*bp)[:0], audioChunkBytes)[:audioChunkBytes]
	defer putAudioBuffer(buf)
	// The turn's first message is short, so that the user hears the answer start as soon as
	// the synthesizer has that much; the others are long, for fewer messages.
	limit := len(buf)
	if s.seq == 0 {
		limit = firstAudioChunkBytes
	}
	have := 0 // bytes in buf; an odd one waits for its other half
	for {
		n, err := speech.PCM.Read(buf[have:limit])
		have += n
		if even := have &^ 1; even > 0 && (err != nil || have >= limit/2) {
			s.seq++
			if !s.c.sendAudio(ctx, audioMessage(s.seq, speech.SampleRate, buf[:even])) {
				return
			}
			have = copy(buf, buf[even:have])
			limit = len(buf)
		}
		switch {
		case err == io.EOF:
			return
		case err != nil:
			if ctx.Err() == nil {
				s.muted = true
				e.log.WarnContext(ctx, "speech synthesis failed while streaming; the rest of the answer has no audio",
					"requestId", s.t.req.ID, "tenant", s.t.req.Tenant.Key, "turnId", s.t.turnID, "err", err)
			}
			return
		}
	}
}
