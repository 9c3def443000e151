package audio_test

import (
	"math"
	"testing"

	"github.com/convengine/engine/audio"
)

// The codes of a few 16-bit values, as G.711 (table 2a, scaled from 14 bits) and Sun's reference g711.c give them.
func TestMuLawKnownCodes(t *testing.T) {
	cases := []struct {
		in   int16
		code byte
	}{
		{0, 0xFF}, {-1, 0x7F}, {32124, 0x80}, {-32124, 0x00}, {32767, 0x80}, {-32768, 0x00}, {100, 0xF2}, {1000, 0xCE},
	}
	for _, c := range cases {
		if got := audio.MuLawEncode(nil, []int16{c.in})[0]; got != c.code {
			t.Errorf("encode(%d) = %#x, want %#x", c.in, got, c.code)
		}
	}
	if got := audio.MuLawDecode(nil, []byte{0xFF, 0x80, 0x00}); got[0] != 0 || got[1] != 32124 || got[2] != -32124 {
		t.Errorf("decode = %v", got)
	}
}

// Every code decodes to a value that encodes back to it, and a sine survives with the
// signal-to-noise ratio of 8-bit μ-law (about 38 dB).
func TestMuLawRoundTrip(t *testing.T) {
	for c := range 256 {
		if c == 0x7F { // negative zero decodes to 0, whose code is 0xFF
			continue
		}
		pcm := audio.MuLawDecode(nil, []byte{byte(c)})
		if back := audio.MuLawEncode(nil, pcm)[0]; back != byte(c) {
			t.Errorf("%#x → %d → %#x", c, pcm[0], back)
		}
	}
	if snr := sineSNR(audio.MuLawEncode, audio.MuLawDecode); snr < 35 {
		t.Errorf("SNR %.1f dB", snr)
	}
}

// sineSNR is the signal-to-noise ratio, in dB, of a 440 Hz sine coded and decoded.
func sineSNR(encode func([]byte, []int16) []byte, decode func([]int16, []byte) []int16) float64 {
	pcm := make([]int16, 8000)
	for i := range pcm {
		pcm[i] = int16(10000 * math.Sin(2*math.Pi*440*float64(i)/8000))
	}
	back := decode(nil, encode(nil, pcm))
	var sig, noise float64
	for i := range pcm {
		sig += float64(pcm[i]) * float64(pcm[i])
		d := float64(pcm[i] - back[i])
		noise += d * d
	}
	return 10 * math.Log10(sig/noise)
}

// A stream resampled chunk by chunk is the whole resampled at once, sample for sample.
func TestResamplerMatchesResample(t *testing.T) {
	pcm := make([]int16, 8000)
	for i := range pcm {
		pcm[i] = int16(8000*math.Sin(2*math.Pi*300*float64(i)/8000) + 3000*math.Sin(2*math.Pi*2900*float64(i)/8000))
	}
	for _, rates := range [][2]int{{8000, 16000}, {22050, 8000}, {16000, 8000}} {
		whole := audio.Resample(pcm, rates[0], rates[1])
		r := audio.NewResampler(rates[0], rates[1])
		var got []int16
		for i := 0; i < len(pcm); i += 160 + i%97 { // chunks of uneven sizes
			got = r.Write(got, pcm[i:min(len(pcm), i+160+i%97)])
		}
		got = r.Flush(got)
		if len(got) != len(whole) {
			t.Fatalf("%v: %d samples, want %d", rates, len(got), len(whole))
		}
		for i := range got {
			if d := int(got[i]) - int(whole[i]); d > 1 || d < -1 {
				t.Fatalf("%v: sample %d is %d, want %d", rates, i, got[i], whole[i])
			}
		}
	}
}
