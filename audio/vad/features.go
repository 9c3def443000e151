package vad

import "math"

// fullScale is the energy of a full-scale square wave, the 0 dB of frame levels.
const fullScale = 32768.0 * 32768.0

// hysteresis is the fraction of a frame's RMS the signal must pass on each side of zero for a
// crossing to count, so that faint noise riding on a slow wave does not add crossings.
const hysteresis = 0.25

// history is the number of samples of the previous frame the band filters need.
const history = 3

// feature is what the detector knows of a frame.
type feature struct {
	// db is the level of the frame, its mean square in dB relative to full scale.
	db float64
	// band is the level of the frame in two parts of the spectrum, in dB relative to full
	// scale: below an eighth of the sample rate (2 kHz at 16 kHz), where voiced sounds have
	// their strength, and above a quarter (4 kHz), where fricatives (s, f, sh) have theirs.
	// Noise is seldom as loud in both: white noise is 6 dB down in the lower band and 3 dB down
	// in the upper, room noise and hum are far down in the upper.
	band [2]float64
	// hz is the dominant frequency from the zero crossings; 0 for fewer than two.
	hz float64
}

// analyser turns frames of samples into features.
type analyser struct {
	rate int
	// The high-pass filter, a one-pole DC blocker: it removes the offset of cheap sound cards
	// and most of mains hum, which would otherwise count as energy.
	a      float64 // pole
	x, y   float64 // previous input and output
	primed bool
	buf    []float64 // the last samples of the previous frame, then the filtered frame
}

func newAnalyser(c *config) analyser {
	return analyser{rate: c.rate, a: c.highPass, buf: make([]float64, history+c.frame)}
}

// reset forgets the samples before.
func (an *analyser) reset() {
	an.x, an.y, an.primed = 0, 0, false
	clear(an.buf)
}

// next measures a frame of samples that follows the one before.
func (an *analyser) next(pcm []int16) feature {
	if !an.primed {
		// Start from the first sample, so that an offset present from the start is not a step.
		an.x, an.primed = float64(pcm[0]), true
	}
	y := an.buf[history:]
	a, px, py := an.a, an.x, an.y
	for i, s := range pcm {
		x := float64(s)
		py = a * (py + x - px)
		px = x
		y[i] = py
	}
	an.x, an.y = px, py
	f := measure(an.buf, an.rate)
	copy(an.buf, an.buf[len(an.buf)-history:])
	return f
}

// measure measures the frame buf[history:], of samples at rate Hz; buf[:history] ends the frame
// before.
func measure(buf []float64, rate int) feature {
	// The bands are the mean of four neighbouring samples, a low-pass filter whose first zero
	// is at a quarter of the rate, and the half difference of two, a high-pass one.
	var sum, lo, hi float64
	for i := history; i < len(buf); i++ {
		v := buf[i]
		sum += v * v
		l := (v + buf[i-1] + buf[i-2] + buf[i-3]) / 4
		h := (v - buf[i-1]) / 2
		lo += l * l
		hi += h * h
	}
	y := buf[history:]
	n := float64(len(y))
	f := feature{db: decibels(sum / n), band: [2]float64{decibels(lo / n), decibels(hi / n)}}
	thr := hysteresis * math.Sqrt(sum/n)
	// Count the crossings of a Schmitt trigger at ±thr, and where the first and last were: the
	// mean spacing of crossings is half the period of the strongest frequency.
	state, crossings, first, last := 0, 0, 0, 0
	for i, v := range y {
		s := 0
		switch {
		case v > thr:
			s = 1
		case v < -thr:
			s = -1
		default:
			continue
		}
		if s != state {
			if state != 0 {
				if crossings == 0 {
					first = i
				}
				crossings++
				last = i
			}
			state = s
		}
	}
	if crossings >= 2 && last > first {
		f.hz = float64(crossings-1) * float64(rate) / (2 * float64(last-first))
	}
	return f
}

// decibels returns a mean square of samples in dB relative to full scale, no lower than the
// floor of digital silence.
func decibels(meanSquare float64) float64 {
	return max(10*math.Log10(meanSquare/fullScale), noiseFloorDB)
}
