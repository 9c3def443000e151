package main

import (
	"hash/fnv"
	"math"
	"math/rand/v2"
	"slices"
)

// Condition is what happens to the speech between the synthesizer and the engine.
type Condition struct {
	Name        string `json:"name"`
	Description string `json:"description"`
	// Pad is the silence, or noise, put before and after the speech, in seconds.
	Pad float64 `json:"pad_seconds"`
	// SNR is the noise's level below the speech in dB; 0 means no noise.
	SNR float64 `json:"snr_db,omitempty"`
	// Pink shapes the noise -3 dB an octave, nearer to a room's than white noise is.
	Pink bool `json:"pink,omitempty"`
	// Default puts the condition in the run when -conditions is not given; Quick in -quick.
	Default bool `json:"-"`
	Quick   bool `json:"-"`
}

// noisePad is the noise heard before and after the words in the noisy conditions: a
// microphone that is open hears the room before the user speaks.
const noisePad = 0.5

var allConditions = []Condition{
	{Name: "clean", Description: "the synthesizer's output as is", Default: true, Quick: true},
	{Name: "pad1s", Description: "1 s of digital silence before and after", Pad: 1, Default: true, Quick: true},
	{Name: "snr20", Description: "white noise 20 dB below the speech, over it and 0.5 s either side", Pad: noisePad, SNR: 20, Default: true},
	{Name: "snr10", Description: "white noise 10 dB below the speech, over it and 0.5 s either side", Pad: noisePad, SNR: 10, Default: true, Quick: true},
	{Name: "pink10", Description: "pink noise 10 dB below the speech, over it and 0.5 s either side", Pad: noisePad, SNR: 10, Pink: true},
}

// apply returns speech under c. seed makes the noise the same on every run, whatever order
// the turns run in.
func (c Condition) apply(speech []int16, seed string) []int16 {
	pad := int(c.Pad * sampleRate)
	out := make([]int16, pad+len(speech)+pad)
	copy(out[pad:], speech)
	if c.SNR == 0 {
		return out
	}
	h := fnv.New64a()
	h.Write([]byte(c.Name + "\x00" + seed))
	rng := rand.New(rand.NewPCG(h.Sum64(), 1))
	return addNoise(out, noise(rng, len(out), c.Pink), voicedRMS(speech)/math.Pow(10, c.SNR/20))
}

// noise returns n samples of unit-RMS white or pink noise.
func noise(rng *rand.Rand, n int, pink bool) []float64 {
	out := make([]float64, n)
	// Paul Kellet's economical pink filter.
	var b0, b1, b2 float64
	for i := range out {
		w := rng.NormFloat64()
		if pink {
			b0 = 0.99765*b0 + w*0.0990460
			b1 = 0.96300*b1 + w*0.2965164
			b2 = 0.57000*b2 + w*1.0526913
			w = b0 + b1 + b2 + w*0.1848
		}
		out[i] = w
	}
	if r := rms(out); r > 0 {
		for i := range out {
			out[i] /= r
		}
	}
	return out
}

// addNoise adds unit-RMS noise scaled to rms to pcm, clipping at the int16 range as a sound
// card would.
func addNoise(pcm []int16, unit []float64, rms float64) []int16 {
	out := make([]int16, len(pcm))
	for i, s := range pcm {
		v := math.Round(float64(s) + unit[i]*rms)
		out[i] = int16(max(math.MinInt16, min(math.MaxInt16, v)))
	}
	return out
}

// frame is 20 ms, the span over which the speech's level is judged.
const frame = sampleRate / 50

// voicedRMS is the RMS of the speech's voiced frames: those within 30 dB of the loudest
// frame. The SNR is taken over them, not over the whole clip, so that the silences a voice
// leaves between and around words do not make its noise quieter.
func voicedRMS(pcm []int16) float64 {
	var energies []float64
	for i := 0; i+frame <= len(pcm); i += frame {
		var e float64
		for _, s := range pcm[i : i+frame] {
			e += float64(s) * float64(s)
		}
		energies = append(energies, e/frame)
	}
	if len(energies) == 0 {
		return 0
	}
	floor := slices.Max(energies) / 1000 // -30 dB
	var sum float64
	n := 0
	for _, e := range energies {
		if e >= floor {
			sum += e
			n++
		}
	}
	return math.Sqrt(sum / float64(n))
}

func rms(x []float64) float64 {
	if len(x) == 0 {
		return 0
	}
	var sum float64
	for _, v := range x {
		sum += v * v
	}
	return math.Sqrt(sum / float64(len(x)))
}
