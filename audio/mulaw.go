package audio

// G.711 μ-law (ITU-T G.711, section A.2), the 8-bit coding of telephone lines: Twilio's media
// streams and SIP's PCMU payload. Each byte holds a sign, a 3-bit segment and a 4-bit step,
// inverted, for 14-bit linear samples with a bias of 0x84.

const (
	muLawBias = 0x84
	muLawClip = 32635
)

// MuLawDecode appends the 16-bit samples of the μ-law bytes b to out.
func MuLawDecode(out []int16, b []byte) []int16 { return decodeG711(out, b, &muLawTable) }

// MuLawEncode appends the μ-law bytes of the 16-bit samples pcm to out.
func MuLawEncode(out []byte, pcm []int16) []byte { return encodeG711(out, pcm, muLaw) }

// decodeG711 appends the samples of the codes b, as table gives them, to out.
func decodeG711(out []int16, b []byte, table *[256]int16) []int16 {
	for _, c := range b {
		out = append(out, table[c])
	}
	return out
}

// encodeG711 appends the codes code gives the samples pcm to out.
func encodeG711(out []byte, pcm []int16, code func(int16) byte) []byte {
	for _, s := range pcm {
		out = append(out, code(s))
	}
	return out
}

func muLaw(s int16) byte {
	v := int(s)
	sign := 0
	if v < 0 {
		v, sign = -v, 0x80
	}
	v = min(v, muLawClip) + muLawBias
	seg := 7
	for mask := 0x4000; seg > 0 && v&mask == 0; mask >>= 1 {
		seg--
	}
	step := (v >> (seg + 3)) & 0x0F
	return ^byte(sign | seg<<4 | step)
}

// muLawTable is the linear value of each μ-law byte.
var muLawTable = func() (t [256]int16) {
	for i := range t {
		c := ^byte(i)
		seg, step := int(c>>4)&7, int(c&0x0F)
		v := ((step << 3) + muLawBias) << seg
		v -= muLawBias
		if c&0x80 != 0 {
			v = -v
		}
		t[i] = int16(v)
	}
	return t
}()
