package vad

// utterance decides, frame by frame, whether a frame is voiced and where utterances start and
// end. It is the part of the detector shared by [Segments] and [Detector].
type utterance struct {
	c     *config
	noise [2]noiseFloor // of each band

	frame    int // index of the next frame
	speaking bool
	run      int // voiced frames of the run that may start speech
	onset    int // first frame of that run
	// chain is the first of the voiced frames apart by less than minSilence that lead to that
	// run: the syllables before it, too short or broken by noise, are part of the utterance
	// as the pauses after it are.
	chain      int
	lastVoiced int // last voiced frame; -1 before the first
	start, end int // frames of the current or last utterance, half-open
}

func newUtterance(c *config) utterance {
	return utterance{c: c, noise: [2]noiseFloor{newNoiseFloor(c), newNoiseFloor(c)}, lastVoiced: -1}
}

// voiced tells whether a frame is speech: loud above the noise in either band, above dither,
// and not a slow wave.
func (u *utterance) voiced(f feature) (voiced, loud bool) {
	threshold := u.c.threshold
	if u.speaking {
		threshold -= hysteresisDB
	}
	for b := range u.noise {
		n := &u.noise[b]
		loud = loud || f.band[b] > n.level+n.margin(threshold)
	}
	return loud && f.db > minSpeechDBFS && f.hz >= minVoicedHz, loud
}

// step takes the next frame and returns the change it brings.
func (u *utterance) step(f feature) Event {
	voiced, loud := u.voiced(f)
	u.noise[0].update(f.band[0], loud)
	u.noise[1].update(f.band[1], loud)
	i := u.frame
	u.frame++
	ev := None
	switch {
	case voiced && !u.speaking:
		if u.lastVoiced < 0 || i-u.lastVoiced >= u.c.minSilence {
			u.chain = i
		}
		if u.run == 0 || i-u.lastVoiced-1 > u.c.onsetGap {
			u.run, u.onset = 0, i
		}
		u.run++
		if u.run >= u.c.minSpeech {
			u.speaking, ev = true, SpeechStarted
			u.start = u.chain
		}
	case !voiced && u.speaking && i-u.lastVoiced >= u.c.minSilence:
		u.speaking, u.run, ev = false, 0, SpeechEnded
	}
	if voiced {
		u.lastVoiced = i
		if u.speaking {
			u.end = i + 1
		}
	}
	return ev
}
