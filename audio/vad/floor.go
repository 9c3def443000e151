package vad

import "math"

// noiseFloor estimates the level of the background, in dB relative to full scale, from the
// frames that are not speech, and how much that level varies from frame to frame.
//
// It works in dB, where noise spreads evenly on both sides of its mean. It follows the frames
// that are not loud enough to be speech slowly up, by at most riseStepDB of each, so that the
// quiet edges of words barely lift it, and quickly down, so that a loud start does not keep it
// high; it settles a little under the noise's mean. Loud frames do not move it. But when every
// frame of the last few seconds was loud, the noise itself has grown (a fan, a car), and the
// floor jumps to the quietest of them.
//
// Noise whose power lies in a narrow or low band (the rumble of a fan, a car) varies more from
// one frame to the next than white noise, and more in short frames than in long ones. The
// spread measures that: it is the mean of how far the frames under the floor fall under it,
// which for noise is near 0.6 of its standard deviation. Speech never falls under the floor,
// so it does not count.
type noiseFloor struct {
	level  float64 // dBFS; NaN until the first frame
	spread float64 // dB; 0 until the first frame under the floor
	under  int     // frames under the floor, up to spreadFrames
	rise   float64
	fall   float64
	// The minimum tracker: the minimum of each finished block of frames, in a ring.
	block    int // frames per block
	n        int // frames in the current block
	blockMin float64
	mins     [minBlocks]float64
	filled   int // blocks in mins
	next     int // where the next block's minimum goes
}

func newNoiseFloor(c *config) noiseFloor {
	return noiseFloor{level: math.NaN(), rise: c.rise, fall: c.fall, block: c.block, blockMin: math.Inf(1)}
}

// update takes the level of a frame and whether it was loud enough to be speech.
func (f *noiseFloor) update(db float64, loud bool) {
	switch {
	case math.IsNaN(f.level):
		f.level = db
	case db < f.level:
		f.trackSpread(f.level - db)
		f.level += f.fall * (db - f.level)
	case !loud:
		f.level += f.rise * min(db-f.level, riseStepDB)
	}
	f.blockMin = min(f.blockMin, db)
	if f.n++; f.n == f.block {
		f.mins[f.next] = f.blockMin
		f.next = (f.next + 1) % len(f.mins)
		f.filled = min(f.filled+1, len(f.mins))
		f.n, f.blockMin = 0, math.Inf(1)
		if f.filled == len(f.mins) {
			f.level = max(f.level, minOf(f.mins[:]))
		}
	}
	f.level = max(f.level, noiseFloorDB)
}

func minOf(v []float64) float64 {
	m := v[0]
	for _, x := range v[1:] {
		m = min(m, x)
	}
	return m
}

const (
	// spreadFrames is the number of frames under the floor the spread is the mean of; it is
	// their running mean until there are that many.
	spreadFrames = 32
	// maxSpread is the spread of the most uneven noise that is still noise: a standard
	// deviation of 3.5 dB.
	maxSpread = 2
)

// trackSpread averages the shortfalls of the frames under the floor. A shortfall larger than
// four times the spread, such as the silence after a fan stops, counts as four times.
func (f *noiseFloor) trackSpread(short float64) {
	f.under = min(f.under+1, spreadFrames)
	if f.under > 1 {
		short = min(short, 4*f.spread)
	}
	f.spread = min(f.spread+(short-f.spread)/float64(f.under), maxSpread)
}

// margin is how far above the floor a frame must be to be loud: base, or more for noise that
// varies much.
func (f *noiseFloor) margin(base float64) float64 {
	return max(base, spreadMargin*f.spread)
}
