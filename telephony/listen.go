package telephony

import (
	"context"

	"github.com/convengine/engine"
	"github.com/convengine/engine/audio"
)

// recognizerRate is the rate a streaming recogniser hears the line at: the engine's input
// rate, the line's 8 kHz brought up through the same filter as a whole utterance's.
const recognizerRate = 16000

// heardStream is an utterance heard by the engine's streaming recogniser while the caller
// speaks it ([engine.StreamingTranscriber]): the transcript is then ready at the end of speech,
// and the turn starts at once rather than a recognition later.
type heardStream struct {
	listening engine.Listening
	admission *engine.Admission // its place among the Calls' recogniser streams
	up        *audio.Resampler
	buf       []int16
	stop      func() bool // stops the call's end from closing it
}

// write sends the line's samples on, at the recogniser's rate.
func (s *heardStream) write(pcm []int16) error { return s.send(s.up.Write(s.buf[:0], pcm)) }

// end sends what the filter held back: the utterance is over.
func (s *heardStream) end() error { return s.send(s.up.Flush(s.buf[:0])) }

// send writes the resampled samples out, keeping their buffer for the next.
func (s *heardStream) send(out []int16) error {
	s.buf = out
	if len(out) == 0 {
		return nil
	}
	return s.listening.Write(out)
}

// close lets the recogniser's connection and its place go; it may be called more than once.
func (s *heardStream) close() {
	if s != nil {
		s.stop()
		s.listening.Close()
		s.admission.Release()
	}
}

// startStream starts hearing the utterance the caller began, with the audio kept before the
// detector was sure (words start softly), when the engine's recogniser streams and one of the
// Calls' recogniser streams is free; else the utterance is heard after its end. It is called
// by the reader.
func (c *Call) startStream(ctx context.Context) {
	if c.notStreaming {
		return
	}
	caller := c.callerOf()
	a, err := c.p.e.Admit(ctx, caller, engine.Work{Kind: engine.WorkListening, Hold: c.p.o.Calls.streams})
	if err != nil {
		return
	}
	l, err := c.p.e.Listen(ctx, caller, "")
	if l == nil || err != nil {
		a.Release()
		c.notStreaming = err == nil // the engine's recogniser does not stream
		if err != nil {
			c.log().Warn("phone: streaming recognition did not start; the utterance is heard after its end", "requestId", c.info.ID, "tenant", c.entry.Tenant.Key, "err", err)
		}
		return
	}
	s := &heardStream{listening: l, admission: a, up: audio.NewResampler(LineRate, recognizerRate)}
	// A call that ends mid-utterance lets it go; the turn that took it closes it otherwise.
	s.stop = context.AfterFunc(ctx, func() { l.Close(); a.Release() })
	c.stream = s
	c.streamWrite(c.utterance)
}

// streamWrite sends pcm to the utterance's streaming recognition; one that fails is let go, and
// the utterance heard after its end.
func (c *Call) streamWrite(pcm []int16) {
	if c.stream == nil {
		return
	}
	if err := c.stream.write(pcm); err != nil {
		c.log().Warn("phone: streaming recognition failed; the utterance is heard after its end", "requestId", c.info.ID, "tenant", c.entry.Tenant.Key, "err", err)
		c.stream.close()
		c.stream = nil
	}
}

// takeStream ends the utterance's streaming recognition and hands it over, nil for none.
func (c *Call) takeStream() *heardStream {
	s := c.stream
	c.stream = nil
	if s != nil && s.end() != nil {
		s.close()
		return nil
	}
	return s
}
