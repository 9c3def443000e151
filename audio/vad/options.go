package vad

import (
	"math"
	"time"
)

// Options configure the detector. The zero value, or nil, is the defaults; a field left at zero
// takes its default.
type Options struct {
	// SampleRate is the rate of the samples in Hz; default 16000.
	SampleRate int
	// FrameDuration is the length of the analysis frames, which follow one another without
	// overlap; default 20ms, kept between 5ms and 100ms.
	FrameDuration time.Duration
	// MinSpeech is the shortest run of voiced frames that counts as speech, so that a click, a
	// cough's edge or a door are not; default 120ms.
	MinSpeech time.Duration
	// MinSilence is the silence that ends an utterance: shorter pauses are pauses between words;
	// default 600ms, the server's end of speech.
	MinSilence time.Duration
	// Padding is kept before and after the speech by [Trim], so that the soft start of a word and
	// its fading end are not cut; default 200ms.
	Padding time.Duration
	// Threshold is how far above the noise floor, in dB, a frame's level must be to be voiced;
	// default 9. It is 3 dB lower inside an utterance, and higher for noise whose level varies
	// much from frame to frame.
	Threshold float64
}

// Defaults of [Options].
const (
	DefaultSampleRate    = 16000
	DefaultFrameDuration = 20 * time.Millisecond
	DefaultMinSpeech     = 120 * time.Millisecond
	DefaultMinSilence    = 600 * time.Millisecond
	DefaultPadding       = 200 * time.Millisecond
	DefaultThreshold     = 9.0
)

// Constants of the analysis, in time so that they do not depend on the frame length.
const (
	// highPassHz is the corner of the filter that removes DC offset and most mains hum; speech
	// keeps its formants, all above it.
	highPassHz = 100
	// minSpeechDBFS is the quietest frame that can be speech, whatever the noise: below it lie
	// dither and the faint noise of a good microphone, never a voice meant for the engine.
	minSpeechDBFS = -65
	// minVoicedHz is the lowest dominant frequency of a voiced frame, from its zero crossings:
	// every vowel and consonant has energy well above it, mains hum and thumps do not.
	minVoicedHz = 90
	// maxOnsetGap is the longest break inside the run of voiced frames that starts speech.
	maxOnsetGap = 40 * time.Millisecond
	// noiseRise and noiseFall are the time constants with which the noise floor follows frames
	// that are not speech: slowly up, so that the floor is not pulled up by the quiet edges of
	// words, and quickly down, so that it finds the noise after a loud start. riseStepDB is the
	// most a frame counts above the floor, for the same reason.
	noiseRise  = time.Second
	noiseFall  = 100 * time.Millisecond
	riseStepDB = 3
	// spreadMargin is the margin above the floor, in units of the noise's spread (0.6 of a
	// standard deviation), that noise frames do not reach: about five standard deviations.
	spreadMargin = 9
	// hysteresisDB lowers the threshold inside an utterance, so that its weak consonants and
	// fading end stay in it.
	hysteresisDB = 3
	// minBlock and minBlocks make the window of the minimum tracker: when every frame of the
	// last minBlocks×minBlock is above the floor, the noise itself has grown louder (a fan,
	// a car) and the floor jumps to the window's minimum. Speech always has a quiet frame in
	// three seconds.
	minBlock  = 250 * time.Millisecond
	minBlocks = 12
	// noiseFloorDB is the lowest noise floor, that of digital silence.
	noiseFloorDB = -120
)

// config is Options resolved into samples and frames.
type config struct {
	rate       int
	frame      int     // samples per frame
	minSpeech  int     // frames
	minSilence int     // frames
	onsetGap   int     // frames
	padding    int     // samples
	threshold  float64 // dB above the noise floor
	highPass   float64 // pole of the high-pass filter
	rise, fall float64 // weights of a frame in the noise floor
	block      int     // frames per block of the minimum tracker
}

func (o *Options) config() config {
	var opt Options
	if o != nil {
		opt = *o
	}
	if opt.SampleRate <= 0 {
		opt.SampleRate = DefaultSampleRate
	}
	if opt.FrameDuration <= 0 {
		opt.FrameDuration = DefaultFrameDuration
	}
	opt.FrameDuration = min(max(opt.FrameDuration, 5*time.Millisecond), 100*time.Millisecond)
	if opt.MinSpeech <= 0 {
		opt.MinSpeech = DefaultMinSpeech
	}
	if opt.MinSilence <= 0 {
		opt.MinSilence = DefaultMinSilence
	}
	if opt.Padding <= 0 {
		opt.Padding = DefaultPadding
	}
	if opt.Threshold <= 0 {
		opt.Threshold = DefaultThreshold
	}
	rate := opt.SampleRate
	frame := max(1, int(int64(rate)*int64(opt.FrameDuration)/int64(time.Second)))
	fd := time.Duration(frame) * time.Second / time.Duration(rate) // exact frame duration
	frames := func(d time.Duration) int { return max(1, int((d+fd/2)/fd)) }
	return config{
		rate:       rate,
		frame:      frame,
		minSpeech:  frames(opt.MinSpeech),
		minSilence: frames(opt.MinSilence),
		onsetGap:   frames(maxOnsetGap),
		padding:    int(min(int64(opt.Padding)*int64(rate)/int64(time.Second), math.MaxInt32)),
		threshold:  opt.Threshold,
		highPass:   math.Exp(-2 * math.Pi * highPassHz / float64(rate)),
		rise:       1 - math.Exp(-float64(fd)/float64(noiseRise)),
		fall:       1 - math.Exp(-float64(fd)/float64(noiseFall)),
		block:      frames(minBlock),
	}
}
