package voice

import (
	"time"

	"github.com/convengine/engine"
	"github.com/convengine/engine/audio/vad"
)

// defaultBargeIn is Options.BargeIn's default: a short word, longer than a click or a
// cough's edge.
const defaultBargeIn = 200 * time.Millisecond

// quietAudio is the audio kept of an utterance in which the detector found no speech yet;
// older audio is let go, so that an open microphone in a quiet room neither fills
// Options.AudioMemory nor runs into the utterance limit. It is long, because the
// detector, which learns the noise from the audio, may miss speech that starts with it: the
// whole utterance is looked at again at end_of_speech.
const quietAudio = 10 * inputSampleRate

// utteranceSpeech follows the speech in the utterance a socket is receiving.
type utteranceSpeech struct {
	detector *vad.Detector
	heard    bool // speech started in this utterance
	// listening hears the utterance while it is spoken, when the engine's recogniser streams;
	// admission holds its place among Options.MaxListening.
	listening engine.Listening
	admission *engine.Admission
}

func (s *utteranceSpeech) reset() {
	if s.detector != nil {
		s.detector.Reset()
	}
	s.heard = false
	s.dropListening()
}

// dropListening closes the utterance's streaming recognition, if any.
func (s *utteranceSpeech) dropListening() {
	if s.listening != nil {
		s.listening.Close()
		s.admission.Release()
		s.listening, s.admission = nil, nil
	}
}

// takeListening hands the streaming recognition of the utterance to its turn.
func (s *utteranceSpeech) takeListening() (engine.Listening, *engine.Admission) {
	l, a := s.listening, s.admission
	s.listening, s.admission = nil, nil
	return l, a
}

// preRoll is the audio before the detector found speech that a streaming recogniser is sent
// with it: the detector needs Options.BargeIn of speech to be sure, and words start softly.
const preRoll = inputSampleRate

// startListening starts hearing the utterance while it is spoken, when the engine's recogniser
// streams and a connection to it is free; else the utterance is heard after its end.
func (c *voiceConn) startListening() {
	a, err := c.e.Admit(c.ctx, c.caller, engine.Work{Kind: engine.WorkListening, Hold: c.s.listening})
	if err != nil {
		return
	}
	l, err := c.e.Listen(c.ctx, c.caller, c.context.Locale)
	if l == nil && err == nil {
		c.s.notStreaming.Store(true) // the engine's recogniser does not stream
	}
	if l == nil || err != nil {
		a.Release()
		if err != nil {
			c.e.Logger().Warn("streaming recognition did not start; the utterance is heard after its end", "requestId", c.caller.RequestID, "tenant", c.caller.EngineKey, "err", err)
		}
		return
	}
	c.speech.listening, c.speech.admission = l, a
	c.stream(c.pcm[max(0, len(c.pcm)-preRoll):])
}

// stream writes samples to the utterance's streaming recognition; one that fails is let go, and
// the utterance heard after its end.
func (c *voiceConn) stream(pcm []int16) {
	if c.speech.listening == nil {
		return
	}
	if err := c.speech.listening.Write(pcm); err != nil {
		c.e.Logger().Warn("streaming recognition failed; the utterance is heard after its end", "requestId", c.caller.RequestID, "tenant", c.caller.EngineKey, "err", err)
		c.speech.dropListening()
	}
}

// listen runs the detector over the last n samples of the utterance. Speech that lasts
// Options.BargeIn cancels the answer under way; with Options.EndOfSpeech, the
// silence after speech ends the utterance. It returns false when the client is to be dropped.
func (c *voiceConn) listen(n int) bool {
	s := &c.speech
	if s.detector == nil {
		silence := c.opts.EndOfSpeech
		if silence == 0 {
			silence = time.Hour // only the client ends utterances
		}
		s.detector = vad.NewDetector(&vad.Options{SampleRate: inputSampleRate, MinSpeech: c.opts.BargeIn, MinSilence: silence})
	}
	c.stream(c.pcm[len(c.pcm)-n:])
	ev := s.detector.Write(c.pcm[len(c.pcm)-n:])
	if !s.heard && s.detector.Speaking() {
		s.heard = true
		if !c.bargeIn() {
			return false
		}
		if s.listening == nil && !c.s.notStreaming.Load() {
			c.startListening()
		}
	}
	if s.heard && s.listening != nil && c.opts.RecognizerEndOfSpeech {
		if _, ended := s.listening.Heard(); ended {
			ev = vad.SpeechEnded
		}
	}
	if !s.heard && len(c.pcm) > quietAudio+inputSampleRate {
		c.forget(len(c.pcm) - quietAudio)
	}
	if ev == vad.SpeechEnded && (c.opts.EndOfSpeech > 0 || c.opts.RecognizerEndOfSpeech) {
		ok := c.onEndOfSpeech()
		c.endedByEngine = true
		return ok
	}
	return true
}

// forget drops the first n samples of the utterance, and their share of the audio memory.
func (c *voiceConn) forget(n int) {
	kept := copy(c.pcm, c.pcm[n:])
	c.pcm = c.pcm[:kept]
	c.s.audioMemory.Give(int64(2 * n))
	c.pcmHeld -= int64(2 * n)
}
