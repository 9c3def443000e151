package audio

import "math"

// resampleZeroCrossings is the half-width of the resampling filter, in zero crossings of its
// sinc: 16 keeps the pass band flat to about 90% of the lower Nyquist frequency.
const resampleZeroCrossings = 16

// Resample converts mono PCM from one sample rate to another with a windowed-sinc low-pass
// filter, so that going down in rate does not fold high frequencies into the speech band. It
// returns pcm itself when the rates are equal, and nil when either rate is not positive.
func Resample(pcm []int16, from, to int) []int16 {
	switch {
	case from <= 0 || to <= 0:
		return nil
	case from == to || len(pcm) == 0:
		return pcm
	}
	step := float64(from) / float64(to) // input samples per output sample
	cutoff := 0.95 * math.Min(1, float64(to)/float64(from))
	half := float64(resampleZeroCrossings) / cutoff // filter half-width in input samples
	n := int(math.Floor(float64(len(pcm)-1)/step)) + 1
	out := make([]int16, n)
	for i := range out {
		t := float64(i) * step
		lo := max(0, int(math.Ceil(t-half)))
		hi := min(len(pcm)-1, int(math.Floor(t+half)))
		var sum, weight float64
		for k := lo; k <= hi; k++ {
			x := t - float64(k)
			w := cutoff * sinc(cutoff*x) * blackman(x/half)
			sum += w * float64(pcm[k])
			weight += w
		}
		if weight != 0 {
			sum /= weight // unity gain at 0 Hz, also at the edges where the filter is cut short
		}
		out[i] = int16(max(math.MinInt16, min(math.MaxInt16, math.Round(sum))))
	}
	return out
}

func sinc(x float64) float64 {
	if x == 0 {
		return 1
	}
	return math.Sin(math.Pi*x) / (math.Pi * x)
}

// blackman is the Blackman window over -1..1.
func blackman(x float64) float64 {
	if x <= -1 || x >= 1 {
		return 0
	}
	p := math.Pi * (x + 1)
	return 0.42 - 0.5*math.Cos(p) + 0.08*math.Cos(2*p)
}
