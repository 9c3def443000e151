package vad_test

import (
	"fmt"
	"math"
	"strings"
	"testing"
	"time"

	"github.com/convengine/engine/audio"
	"github.com/convengine/engine/audio/vad"
)

const phrase = "what is my balance"

// testPhrases start and end with strong and weak sounds: a glide, h, s and f; a fricative,
// a stop, a vowel.
var testPhrases = []string{phrase, "how much did I spend on food last month", "seven hundred fifty", "five dollars to savings please"}

// tolerance is how far a found bound may be from the truth.
const tolerance = 100 * time.Millisecond

// dbfs is the RMS level of x.
func dbfs(x []float64) float64 { return 20 * math.Log10(rms(x)/32768) }

// utterance places speech at 1 s in 1 s + speech + 1 s of background, made by noise for a
// length, and returns the audio and where the speech is.
func utterance(speech []int16, noise func(n int) []float64) ([]int16, []vad.Segment) {
	at := samples(time.Second)
	n := 2*at + len(speech)
	x := make([]float64, n)
	if noise != nil {
		x = noise(n)
	}
	add(x, at, floats(speech))
	return pcm16(x), []vad.Segment{{at, at + len(speech)}}
}

// atSNR returns noise at snr dB below the level of speech.
func atSNR(speech []int16, snr float64, gen func(n int, dBFS float64) []float64) func(int) []float64 {
	level := dbfs(floats(speech)) - snr
	return func(n int) []float64 { return gen(n, level) }
}

// ms writes samples as milliseconds.
func ms(n int) string { return fmt.Sprintf("%dms", int64(n)*1000/rate) }

func segString(segs []vad.Segment) string {
	var b strings.Builder
	for i, s := range segs {
		if i > 0 {
			b.WriteString(" ")
		}
		fmt.Fprintf(&b, "[%s,%s)", ms(s.Start), ms(s.End))
	}
	if len(segs) == 0 {
		return "none"
	}
	return b.String()
}

// checkSegments requires got to match want bound for bound within tol samples.
func checkSegments(t *testing.T, got, want []vad.Segment, tol int) {
	t.Helper()
	t.Logf("found %s, truth %s", segString(got), segString(want))
	if len(got) != len(want) {
		t.Fatalf("found %d segments %s, want %d: %s", len(got), segString(got), len(want), segString(want))
	}
	for i := range got {
		if abs(got[i].Start-want[i].Start) > tol || abs(got[i].End-want[i].End) > tol {
			t.Errorf("segment %d is %s, want %s within %s", i, segString(got[i:i+1]), segString(want[i:i+1]), ms(tol))
		}
	}
}

func TestSegmentsSpeech(t *testing.T) {
	// Noise at 10 dB SNR covers the weakest sounds, such as the final s of "balance" in white
	// noise: the speech is found to end up to 150 ms early.
	const noisy = 150 * time.Millisecond
	tests := []struct {
		name  string
		build func(speech []int16) ([]int16, []vad.Segment)
		tol   time.Duration
	}{
		{"digital silence around", func(speech []int16) ([]int16, []vad.Segment) {
			return utterance(speech, nil)
		}, tolerance},
		{"dithered silence around", func(speech []int16) ([]int16, []vad.Segment) {
			r := newRand(1)
			return utterance(speech, func(n int) []float64 { return dither(r, n) })
		}, tolerance},
		{"white noise 20 dB SNR", func(speech []int16) ([]int16, []vad.Segment) {
			s := speech
			r := newRand(2)
			return utterance(s, atSNR(s, 20, func(n int, l float64) []float64 { return white(r, n, l) }))
		}, tolerance},
		{"white noise 10 dB SNR", func(speech []int16) ([]int16, []vad.Segment) {
			s := speech
			r := newRand(3)
			return utterance(s, atSNR(s, 10, func(n int, l float64) []float64 { return white(r, n, l) }))
		}, noisy},
		{"pink noise 10 dB SNR", func(speech []int16) ([]int16, []vad.Segment) {
			s := speech
			r := newRand(4)
			return utterance(s, atSNR(s, 10, func(n int, l float64) []float64 { return pink(r, n, l) }))
		}, noisy},
		{"room noise 10 dB SNR", func(speech []int16) ([]int16, []vad.Segment) {
			s := speech
			r := newRand(5)
			return utterance(s, atSNR(s, 10, func(n int, l float64) []float64 { return room(r, n, l) }))
		}, noisy},
		{"speech at -50 dBFS, room noise at -60 dBFS", func(speech []int16) ([]int16, []vad.Segment) {
			r := newRand(6)
			return utterance(pcm16(toLevel(floats(speech), -50)), func(n int) []float64 { return room(r, n, -60) })
		}, noisy},
		{"speech at -15 dBFS, room noise at -25 dBFS", func(speech []int16) ([]int16, []vad.Segment) {
			r := newRand(12)
			return utterance(pcm16(toLevel(floats(speech), -15)), func(n int) []float64 { return room(r, n, -25) })
		}, noisy},
		{"clipped: 16 times too loud", func(speech []int16) ([]int16, []vad.Segment) {
			s := pcm16(scale(floats(speech), 16))
			r := newRand(7)
			return utterance(s, func(n int) []float64 { return room(r, n, -50) })
		}, tolerance},
		{"DC offset of +8000", func(speech []int16) ([]int16, []vad.Segment) {
			s := speech
			r := newRand(8)
			pcm, want := utterance(s, func(n int) []float64 { return room(r, n, -50) })
			return pcm16(offset(floats(pcm), 8000)), want
		}, tolerance},
		{"50 Hz hum at -30 dBFS", func(speech []int16) ([]int16, []vad.Segment) {
			return utterance(speech, func(n int) []float64 { return hum(n, 50, -30) })
		}, tolerance},
		{"60 Hz hum at -30 dBFS", func(speech []int16) ([]int16, []vad.Segment) {
			return utterance(speech, func(n int) []float64 { return hum(n, 60, -30) })
		}, tolerance},
		{"8 kHz resampled to 16 kHz", func(speech []int16) ([]int16, []vad.Segment) {
			// Made at 8 kHz, as a telephone would, then brought to the engine's rate.
			s := audio.Resample(speech, rate, 8000)
			r := newRand(9)
			x := white(r, 2*8000+len(s), -55)
			add(x, 8000, floats(s))
			pcm := audio.Resample(pcm16(x), 8000, rate)
			at := samples(time.Second)
			return pcm, []vad.Segment{{at, at + 2*len(s)}}
		}, tolerance},
		{"speech from the first sample", func(speech []int16) ([]int16, []vad.Segment) {
			s := speech
			r := newRand(10)
			x := room(r, len(s)+rate, -50)
			add(x, 0, floats(s))
			return pcm16(x), []vad.Segment{{0, len(s)}}
		}, tolerance},
	}
	for _, text := range testPhrases {
		for _, tt := range tests {
			t.Run(text+"/"+tt.name, func(t *testing.T) {
				pcm, want := tt.build(speak(t, text))
				checkSegments(t, vad.Segments(pcm, nil), want, samples(tt.tol))
			})
		}
	}
}

// TestSegments8kHz runs the detector at the rate of a telephone.
func TestSegments8kHz(t *testing.T) {
	s := audio.Resample(speak(t, phrase), rate, 8000)
	r := newRand(11)
	x := white(r, 2*8000+len(s), -50)
	add(x, 8000, floats(s))
	got := vad.Segments(pcm16(x), &vad.Options{SampleRate: 8000})
	// Bounds in 8 kHz samples, shown as 16 kHz ones.
	for i := range got {
		got[i].Start, got[i].End = 2*got[i].Start, 2*got[i].End
	}
	checkSegments(t, got, []vad.Segment{{rate, rate + 2*len(s)}}, samples(tolerance))
}

// TestSegmentsNoSpeech feeds what must never be speech.
func TestSegmentsNoSpeech(t *testing.T) {
	n := samples(5 * time.Second)
	type noSpeech struct {
		name string
		pcm  func() []int16
	}
	tests := []noSpeech{
		{"empty", func() []int16 { return nil }},
		{"shorter than a frame", func() []int16 { return []int16{30000, -30000, 30000} }},
		{"digital silence", func() []int16 { return make([]int16, n) }},
		{"dithered silence", func() []int16 { return pcm16(dither(newRand(20), n)) }},
		{"full-scale constant", func() []int16 { return pcm16(offset(make([]float64, n), 40000)) }},
		{"negative full-scale constant", func() []int16 { return pcm16(offset(make([]float64, n), -40000)) }},
		{"silence, full-scale constant, silence", func() []int16 {
			x := make([]float64, n)
			for i := n / 3; i < 2*n/3; i++ {
				x[i] = 32767
			}
			return pcm16(x)
		}},
		{"click", func() []int16 {
			x := room(newRand(21), n, -55)
			x[n/2] = 32767
			x[n/2+1] = -32768
			return pcm16(x)
		}},
		{"pop: 5 ms burst", func() []int16 {
			x := room(newRand(22), n, -55)
			add(x, n/2, white(newRand(23), samples(5*time.Millisecond), -6))
			return pcm16(x)
		}},
		{"two clicks 60 ms apart", func() []int16 {
			x := room(newRand(24), n, -55)
			add(x, n/2, white(newRand(25), samples(10*time.Millisecond), -6))
			add(x, n/2+samples(60*time.Millisecond), white(newRand(26), samples(10*time.Millisecond), -6))
			return pcm16(x)
		}},
		{"50 Hz hum at -20 dBFS", func() []int16 { return pcm16(hum(n, 50, -20)) }},
		{"60 Hz hum at -20 dBFS", func() []int16 { return pcm16(hum(n, 60, -20)) }},
		{"60 Hz hum switched on after 1 s", func() []int16 {
			x := room(newRand(27), n, -60)
			add(x, rate, hum(n-rate, 60, -20))
			return pcm16(x)
		}},
		{"DC offset of +8000 on room noise", func() []int16 { return pcm16(offset(room(newRand(28), n, -45), 8000)) }},
	}
	for _, level := range []float64{-60, -50, -40, -32, -25} {
		tests = append(tests,
			noSpeech{fmt.Sprintf("white noise at %g dBFS", level), func() []int16 { return pcm16(white(newRand(30), n, level)) }},
			noSpeech{fmt.Sprintf("pink noise at %g dBFS", level), func() []int16 { return pcm16(pink(newRand(31), n, level)) }},
			noSpeech{fmt.Sprintf("room noise at %g dBFS", level), func() []int16 { return pcm16(room(newRand(32), n, level)) }},
			noSpeech{fmt.Sprintf("rumble at %g dBFS", level), func() []int16 { return pcm16(rumble(newRand(33), n, level)) }},
		)
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			pcm := tt.pcm()
			if segs := vad.Segments(pcm, nil); len(segs) != 0 {
				t.Errorf("found speech in %s: %s", tt.name, segString(segs))
			}
			if trimmed := vad.Trim(pcm, nil); trimmed != nil {
				t.Errorf("Trim returned %d samples, want nil", len(trimmed))
			}
			if evs := stream(vad.NewDetector(nil), pcm, frame); len(evs) != 0 {
				t.Errorf("the Detector reported %v", evs)
			}
		})
	}
}
