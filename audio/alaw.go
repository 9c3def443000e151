package audio

// G.711 A-law (ITU-T G.711, section A.1), the 8-bit coding of European and most international
// telephone lines: SIP's PCMA payload. Each byte holds a sign, a 3-bit segment and a 4-bit step
// of 13-bit linear samples, its even bits inverted (0x55).

// ALawDecode appends the 16-bit samples of the A-law bytes b to out.
func ALawDecode(out []int16, b []byte) []int16 { return decodeG711(out, b, &aLawTable) }

// ALawEncode appends the A-law bytes of the 16-bit samples pcm to out.
func ALawEncode(out []byte, pcm []int16) []byte { return encodeG711(out, pcm, aLaw) }

func aLaw(s int16) byte {
	v := int(s) >> 3 // 13 bits
	mask := byte(0xD5)
	if v < 0 {
		v, mask = -v-1, 0x55
	}
	seg := 0
	for end := 0x1F; seg < 8 && v > end; end = end<<1 | 1 {
		seg++
	}
	if seg >= 8 {
		return 0x7F ^ mask
	}
	code := byte(seg << 4)
	if seg < 2 {
		code |= byte(v>>1) & 0x0F
	} else {
		code |= byte(v>>seg) & 0x0F
	}
	return code ^ mask
}

// aLawTable is the linear value of each A-law byte.
var aLawTable = func() (t [256]int16) {
	for i := range t {
		c := byte(i) ^ 0x55
		v := int(c&0x0F)<<4 + 8
		switch seg := int(c>>4) & 7; seg {
		case 0:
		case 1:
			v += 0x100
		default:
			v = (v + 0x100) << (seg - 1)
		}
		if c&0x80 == 0 {
			v = -v
		}
		t[i] = int16(v)
	}
	return t
}()
