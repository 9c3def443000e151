package voice

import (
	"time"

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
}

func (s *utteranceSpeech) reset() {
	if s.detector != nil {
		s.detector.Reset()
	}
	s.heard = false
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
	ev := s.detector.Write(c.pcm[len(c.pcm)-n:])
	if !s.heard && s.detector.Speaking() {
		s.heard = true
		if !c.bargeIn() {
			return false
		}
	}
	if !s.heard && len(c.pcm) > quietAudio+inputSampleRate {
		c.forget(len(c.pcm) - quietAudio)
	}
	if ev == vad.SpeechEnded && c.opts.EndOfSpeech > 0 {
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
