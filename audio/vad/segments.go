package vad

import "slices"

// Segment is a stretch of speech, in samples: pcm[Start:End].
type Segment struct {
	Start, End int
}

// initialPercentile is the share of frames under the noise floor that [Segments] starts from:
// it finds the noise between words even in audio that starts with speech.
const initialPercentile = 0.1

// Segments finds the stretches of speech in pcm, in order and apart by at least MinSilence.
// A segment runs from the first voiced frame to the end of the last; a last frame shorter
// than FrameDuration is not analysed. It returns nil when pcm holds no speech.
func Segments(pcm []int16, o *Options) []Segment {
	c := o.config()
	n := len(pcm) / c.frame
	if n == 0 {
		return nil
	}
	feats := make([]feature, n)
	an := newAnalyser(&c)
	for i := range feats {
		feats[i] = an.next(pcm[i*c.frame : (i+1)*c.frame])
	}
	u := newUtterance(&c)
	for b := range u.noise {
		u.noise[b].level = max(initialNoise(feats, b), noiseFloorDB)
	}
	var segs []Segment
	for _, f := range feats {
		if u.step(f) == SpeechEnded {
			segs = append(segs, Segment{u.start * c.frame, u.end * c.frame})
		}
	}
	if u.speaking {
		segs = append(segs, Segment{u.start * c.frame, u.end * c.frame})
	}
	return segs
}

// initialNoise is the level under which lie initialPercentile of the frames in band b.
func initialNoise(feats []feature, b int) float64 {
	e := make([]float64, len(feats))
	for i, f := range feats {
		e[i] = f.band[b]
	}
	slices.Sort(e)
	return e[int(initialPercentile*float64(len(e)-1))]
}

// Trim returns the part of pcm from the start of its first speech to the end of its last, with
// Padding on each side where pcm has it; nil when pcm holds no speech. The result shares pcm's
// memory.
func Trim(pcm []int16, o *Options) []int16 {
	segs := Segments(pcm, o)
	if len(segs) == 0 {
		return nil
	}
	pad := o.config().padding
	start := max(0, segs[0].Start-pad)
	end := min(len(pcm), segs[len(segs)-1].End+pad)
	return pcm[start:end:end]
}
