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
	k := newKernel(from, to)
	n := int(math.Floor(float64(len(pcm)-1)/k.step)) + 1
	out := make([]int16, n)
	for i := range out {
		out[i] = k.at(pcm, float64(i)*k.step)
	}
	return out
}

// kernel is the windowed-sinc filter of one conversion.
type kernel struct {
	step   float64 // input samples per output sample
	cutoff float64 // of the low-pass filter, relative to the input's Nyquist frequency
	half   float64 // filter half-width in input samples
}

func newKernel(from, to int) kernel {
	cutoff := 0.95 * math.Min(1, float64(to)/float64(from))
	return kernel{step: float64(from) / float64(to), cutoff: cutoff, half: float64(resampleZeroCrossings) / cutoff}
}

// at is the filtered value of pcm at input position t.
func (k kernel) at(pcm []int16, t float64) int16 {
	lo := max(0, int(math.Ceil(t-k.half)))
	hi := min(len(pcm)-1, int(math.Floor(t+k.half)))
	var sum, weight float64
	for i := lo; i <= hi; i++ {
		x := t - float64(i)
		w := k.cutoff * sinc(k.cutoff*x) * blackman(x/k.half)
		sum += w * float64(pcm[i])
		weight += w
	}
	if weight != 0 {
		sum /= weight // unity gain at 0 Hz, also at the edges where the filter is cut short
	}
	return int16(max(math.MinInt16, min(math.MaxInt16, math.Round(sum))))
}

// A Resampler converts a stream of mono PCM from one sample rate to another, chunk by chunk,
// with the filter of [Resample]: its output is Resample's of the whole stream, sample for
// sample, less the filter's half-width at the end until Flush. A phone line's 20 ms frames and
// a synthesizer's reads go through one without clicks at the edges of chunks. It is not safe
// for concurrent use.
type Resampler struct {
	k    kernel
	in   []int16 // the input not yet passed by the filter, from input position base
	base int     // input position of in[0]
	next int     // index of the next output sample
}

// NewResampler returns a Resampler from one positive rate to another.
func NewResampler(from, to int) *Resampler {
	return &Resampler{k: newKernel(max(from, 1), max(to, 1))}
}

// Write adds pcm to the stream and appends to out the output samples it completes.
func (r *Resampler) Write(out, pcm []int16) []int16 {
	r.in = append(r.in, pcm...)
	return r.emit(out, false)
}

// Flush appends the output samples the filter held back for the input still to come, as if the
// stream ended here, and starts a new stream.
func (r *Resampler) Flush(out []int16) []int16 {
	out = r.emit(out, true)
	r.in, r.base, r.next = r.in[:0], 0, 0
	return out
}

func (r *Resampler) emit(out []int16, last bool) []int16 {
	end := r.base + len(r.in) // input positions known: [0, end)
	for {
		t := float64(r.next) * r.k.step
		if t > float64(end-1) || (!last && t+r.k.half > float64(end-1)) {
			break
		}
		// Positions are relative to the kept input; those before it lie outside the filter.
		out = append(out, r.k.at(r.in, t-float64(r.base)))
		r.next++
	}
	// Keep what the next output sample's filter reaches back to.
	keep := max(0, int(math.Ceil(float64(r.next)*r.k.step-r.k.half))-r.base)
	keep = min(keep, len(r.in))
	r.in = append(r.in[:0], r.in[keep:]...)
	r.base += keep
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
