package vad

import "math"

// Detector finds speech in audio that arrives in pieces, such as the 20 ms frames of a voice
// socket. It does not allocate after [NewDetector]. A Detector is not safe for concurrent use.
type Detector struct {
	c   config
	an  analyser
	buf []int16 // the samples of a frame not yet complete
	u   utterance
}

// NewDetector returns a Detector; o may be nil.
func NewDetector(o *Options) *Detector {
	d := &Detector{c: o.config()}
	d.buf = make([]int16, 0, d.c.frame)
	d.an = newAnalyser(&d.c)
	d.Reset()
	return d
}

// Write analyses pcm, which continues the samples written before, and returns the last change
// it brought: None, SpeechStarted or SpeechEnded. Samples are analysed by whole frames; the
// rest waits for the next Write. A Write no longer than MinSpeech and MinSilence brings at
// most one change; a longer one may bring several, of which only the last is told.
func (d *Detector) Write(pcm []int16) Event {
	ev := None
	for len(pcm) > 0 {
		k := min(len(pcm), d.c.frame-len(d.buf))
		d.buf = append(d.buf, pcm[:k]...)
		pcm = pcm[k:]
		if len(d.buf) < d.c.frame {
			break
		}
		f := d.an.next(d.buf)
		d.buf = d.buf[:0]
		if e := d.u.step(f); e != None {
			ev = e
		}
	}
	return ev
}

// Speaking tells whether the detector is inside an utterance: after SpeechStarted and before
// SpeechEnded.
func (d *Detector) Speaking() bool { return d.u.speaking }

// Segment returns the current or last utterance, in samples since [NewDetector] or
// [Detector.Reset]. While speaking, its end is the end of the last voiced frame; before the
// first SpeechStarted it is empty.
func (d *Detector) Segment() Segment {
	return Segment{d.u.start * d.c.frame, d.u.end * d.c.frame}
}

// Noise returns the current noise floor in dBFS (relative to a full-scale square wave), or
// NaN before the first frame.
func (d *Detector) Noise() float64 {
	n := &d.u.noise
	return 10 * math.Log10(math.Pow(10, n[0].level/10)+math.Pow(10, n[1].level/10))
}

// Reset forgets all audio written, the noise floor included, as for a new stream.
func (d *Detector) Reset() {
	d.an.reset()
	d.buf = d.buf[:0]
	d.u = newUtterance(&d.c)
}
