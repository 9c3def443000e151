package audio_test

import (
	"testing"

	"github.com/convengine/engine/audio"
)

// The codes of a few 16-bit values, as G.711 (table 1a, scaled from 13 bits) and Sun's
// reference g711.c give them.
func TestALawKnownCodes(t *testing.T) {
	cases := []struct {
		in   int16
		code byte
	}{
		{0, 0xD5}, {-1, 0x55}, {32767, 0xAA}, {-32768, 0x2A}, {100, 0xD3}, {1000, 0xFA}, {-1000, 0x7A},
	}
	for _, c := range cases {
		if got := audio.ALawEncode(nil, []int16{c.in})[0]; got != c.code {
			t.Errorf("encode(%d) = %#x, want %#x", c.in, got, c.code)
		}
	}
	if got := audio.ALawDecode(nil, []byte{0xD5, 0x55, 0xAA, 0x2A}); got[0] != 8 || got[1] != -8 || got[2] != 32256 || got[3] != -32256 {
		t.Errorf("decode = %v", got)
	}
}

// Every code decodes to a value that encodes back to it, and a sine survives with the
// signal-to-noise ratio of 8-bit A-law (about 38 dB).
func TestALawRoundTrip(t *testing.T) {
	for c := range 256 {
		pcm := audio.ALawDecode(nil, []byte{byte(c)})
		if back := audio.ALawEncode(nil, pcm)[0]; back != byte(c) {
			t.Errorf("%#x → %d → %#x", c, pcm[0], back)
		}
	}
	if snr := sineSNR(audio.ALawEncode, audio.ALawDecode); snr < 35 {
		t.Errorf("SNR %.1f dB", snr)
	}
}
