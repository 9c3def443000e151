package vad_test

import (
	"math"
	"math/rand/v2"
	"time"
)

// newRand returns a random source with a fixed seed, so that every run hears the same noise.
func newRand(seed uint64) *rand.Rand { return rand.New(rand.NewPCG(seed, 0x5EED)) }

// samples is the number of samples in d at rate.
func samples(d time.Duration) int { return int(int64(d) * rate / int64(time.Second)) }

// amplitude is the RMS of a level in dBFS, relative to full scale.
func amplitude(dBFS float64) float64 { return 32768 * math.Pow(10, dBFS/20) }

func rms(x []float64) float64 {
	var s float64
	for _, v := range x {
		s += v * v
	}
	return math.Sqrt(s / float64(max(1, len(x))))
}

// toLevel scales x to an RMS of dBFS.
func toLevel(x []float64, dBFS float64) []float64 {
	g := amplitude(dBFS) / max(rms(x), 1e-9)
	for i := range x {
		x[i] *= g
	}
	return x
}

func white(r *rand.Rand, n int, dBFS float64) []float64 {
	x := make([]float64, n)
	for i := range x {
		x[i] = r.NormFloat64()
	}
	return toLevel(x, dBFS)
}

// pink is Paul Kellet's economy filter of white noise: -3 dB an octave within 0.5 dB.
func pink(r *rand.Rand, n int, dBFS float64) []float64 {
	x := make([]float64, n)
	var b0, b1, b2 float64
	for i := range x {
		w := r.NormFloat64()
		b0 = 0.99765*b0 + w*0.0990460
		b1 = 0.96300*b1 + w*0.2965164
		b2 = 0.57000*b2 + w*1.0526913
		x[i] = b0 + b1 + b2 + w*0.1848
	}
	return toLevel(x, dBFS)
}

// room is noise like a room's: ventilation and traffic, most of it below 300 Hz, falling
// 12 dB an octave above.
func room(r *rand.Rand, n int, dBFS float64) []float64 { return lowPass(r, n, 300, dBFS) }

// rumble is the noise of an engine or a fan, below 120 Hz: in so narrow a band its level varies
// much from frame to frame.
func rumble(r *rand.Rand, n int, dBFS float64) []float64 { return lowPass(r, n, 120, dBFS) }

// lowPass is white noise through two one-pole low-pass filters at hz.
func lowPass(r *rand.Rand, n int, hz, dBFS float64) []float64 {
	x := make([]float64, n)
	a := math.Exp(-2 * math.Pi * hz / rate)
	var y1, y2 float64
	for i := range x {
		y1 = a*y1 + (1-a)*r.NormFloat64()
		y2 = a*y2 + (1-a)*y1
		x[i] = y2
	}
	return toLevel(x, dBFS)
}

// hum is mains hum at hz with its third harmonic 10 dB down.
func hum(n int, hz, dBFS float64) []float64 {
	x := make([]float64, n)
	for i := range x {
		t := 2 * math.Pi * hz * float64(i) / rate
		x[i] = math.Sin(t) + 0.316*math.Sin(3*t+0.5)
	}
	return toLevel(x, dBFS)
}

// dither is triangular noise of ±1 LSB, what a converter or an editor adds to silence.
func dither(r *rand.Rand, n int) []float64 {
	x := make([]float64, n)
	for i := range x {
		x[i] = r.Float64() - r.Float64()
	}
	return x
}

func floats(pcm []int16) []float64 {
	x := make([]float64, len(pcm))
	for i, s := range pcm {
		x[i] = float64(s)
	}
	return x
}

// pcm16 rounds x to samples, clipping at full scale as a sound card does.
func pcm16(x []float64) []int16 {
	out := make([]int16, len(x))
	for i, v := range x {
		out[i] = int16(max(math.MinInt16, min(math.MaxInt16, math.Round(v))))
	}
	return out
}

// add adds y to x from sample at.
func add(x []float64, at int, y []float64) []float64 {
	for i, v := range y {
		x[at+i] += v
	}
	return x
}

func scale(x []float64, g float64) []float64 {
	for i := range x {
		x[i] *= g
	}
	return x
}

func offset(x []float64, dc float64) []float64 {
	for i := range x {
		x[i] += dc
	}
	return x
}
