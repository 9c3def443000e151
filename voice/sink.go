package voice

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
	"time"

	"github.com/convengine/engine"
	"github.com/convengine/engine/internal/verbalize"
	"github.com/convengine/engine/widgets"
)

// voiceSink is the turn sink of the voice socket. It sends the deltas as speak messages and
// synthesizes the answer sentence by sentence while the model is still writing: each complete
// sentence goes to a worker goroutine that streams its audio as audio messages. The spec and
// done follow the last audio.
type voiceSink struct {
	ctx      context.Context // the turn's
	c        *voiceConn
	turnID   string
	speaker  *engine.Speaker // nil: the engine has no synthesizer
	answered *atomic.Bool    // set once done is queued
	spoken   strings.Builder // the deltas, for the socket's conversation

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

func newVoiceSink(ctx context.Context, c *voiceConn, turnID, locale string, answered *atomic.Bool) *voiceSink {
	s := &voiceSink{ctx: ctx, c: c, turnID: turnID, answered: answered, speaker: c.e.Speaker(ctx, c.caller, locale)}
	if s.speaker != nil {
		s.startWorker()
	}
	return s
}

// disclosureTimeout bounds the speech of the AI disclosure, which a barge-in does not cut.
const disclosureTimeout = 15 * time.Second

// sayFirst speaks the tenant's AI disclosure before the answer, to its end: it is said on the
// turn's goroutine, on a context a barge-in does not cancel, so that the turn is stopped only
// once the disclosure's audio has all been sent.
func (s *voiceSink) sayFirst(text string) {
	if s.speaker == nil {
		return
	}
	ctx, cancel := context.WithTimeout(context.WithoutCancel(s.ctx), disclosureTimeout)
	defer cancel()
	sentences, rest := verbalize.CutSentences(text)
	for _, sentence := range append(sentences, rest) {
		if strings.TrimSpace(sentence) != "" {
			s.say(ctx, sentence)
		}
	}
}

// deliver hands a turn's event to the sink; an error says that nobody listens any more.
func (s *voiceSink) deliver(ev engine.Event) error {
	switch ev.Type {
	case engine.EventSpeak:
		return s.Speak(ev.Delta)
	case engine.EventError:
		s.Fail(ev.Error.Code, ev.Error.Message, ev.Error.Retryable)
	case engine.EventDone:
		return s.Done(*ev.Spec)
	}
	// Status and widgets send nothing: the client of the socket hears the answer, not the
	// tools, and its widgets arrive in the spec.
	return nil
}

// Speak sends the delta and queues the sentences it completes for synthesis. After a failure
// the speech of the answer has stopped, and the first delta (the apology) starts it again.
func (s *voiceSink) Speak(delta string) error {
	if !s.c.sendSpeak(s.ctx, delta) {
		return errClientGone
	}
	s.spoken.WriteString(delta)
	if s.failed && !s.apologizing && s.speaker != nil {
		s.apologizing = true
		s.startWorker()
	}
	s.mu.Lock()
	defer s.mu.Unlock()
	if s.ended == nil || s.closed {
		return nil
	}
	s.pending.WriteString(delta)
	sentences, rest := verbalize.CutSentences(s.pending.String())
	if len(sentences) > 0 {
		s.pending.Reset()
		s.pending.WriteString(rest)
		s.queue = append(s.queue, sentences...)
		s.signal()
	}
	return nil
}

// Fail stops the speech of the failed answer and sends the error message.
func (s *voiceSink) Fail(code, message string, retryable bool) {
	s.failed = true
	s.stopWorker() // the rest of a failed answer is not spoken
	s.c.send(s.ctx, errorMessage(s.turnID, code, message, retryable))
}

// Done speaks what is left of the answer (or of the apology of a failed one), then sends the
// spec and done.
func (s *voiceSink) Done(spec widgets.Spec) error {
	if s.speaker != nil {
		s.finishWorker()
	}
	b, err := json.Marshal(map[string]any{"type": "spec", "spec": spec})
	if err != nil {
		return err
	}
	if !s.c.send(s.ctx, b) {
		return errClientGone
	}
	if !s.c.send(s.ctx, doneMessage(s.turnID)) {
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
	log := s.c.e.Logger()
	defer func() {
		if v := recover(); v != nil {
			s.muted = true
			log.ErrorContext(ctx, "speech synthesis panicked", "requestId", s.c.caller.RequestID, "tenant", s.c.caller.EngineKey,
				"turnId", s.turnID, "panic", fmt.Sprintf("%T", v), "stack", string(debug.Stack()))
		}
	}()
	speech, err := s.speaker.Say(ctx, sentence)
	if err != nil {
		if ctx.Err() == nil {
			s.muted = true
			log.WarnContext(ctx, "speech synthesis failed; the rest of the answer has no audio",
				"requestId", s.c.caller.RequestID, "tenant", s.c.caller.EngineKey, "turnId", s.turnID, "voice", s.speaker.Voice(), "err", err)
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
				log.WarnContext(ctx, "speech synthesis failed while streaming; the rest of the answer has no audio",
					"requestId", s.c.caller.RequestID, "tenant", s.c.caller.EngineKey, "turnId", s.turnID, "err", err)
			}
			return
		}
	}
}
