package openai

import (
	"encoding/binary"
	"errors"
	"fmt"
	"io"
)

// errBadWAV is wrapped by the errors of readWAVHeader.
var errBadWAV = errors.New("openai: the speech is not 16-bit mono WAV")

// readWAVHeader reads a WAV header from r, up to the first sample, and returns the sample rate.
// The audio must be 16-bit mono PCM. Sizes are not trusted: a streamed WAV carries placeholders,
// so the samples run to the end of r.
func readWAVHeader(r io.Reader) (int, error) {
	bad := func(format string, args ...any) (int, error) {
		return 0, fmt.Errorf("%w: "+format, append([]any{errBadWAV}, args...)...)
	}
	var riff [12]byte
	if _, err := io.ReadFull(r, riff[:]); err != nil {
		return bad("reading the header: %v", err)
	}
	if string(riff[0:4]) != "RIFF" || string(riff[8:12]) != "WAVE" {
		return bad("no RIFF/WAVE header")
	}
	rate := 0
	for range 16 {
		var head [8]byte
		if _, err := io.ReadFull(r, head[:]); err != nil {
			return bad("reading a chunk: %v", err)
		}
		id, size := string(head[0:4]), int64(binary.LittleEndian.Uint32(head[4:8]))
		switch id {
		case "fmt ":
			if size < 16 || size > 64 {
				return bad("a fmt chunk of %d bytes", size)
			}
			f := make([]byte, size+size%2)
			if _, err := io.ReadFull(r, f); err != nil {
				return bad("reading the fmt chunk: %v", err)
			}
			format, channels := binary.LittleEndian.Uint16(f[0:2]), binary.LittleEndian.Uint16(f[2:4])
			rate = int(binary.LittleEndian.Uint32(f[4:8]))
			bits := binary.LittleEndian.Uint16(f[14:16])
			if (format != 1 && format != 0xFFFE) || channels != 1 || bits != 16 || rate < 8000 || rate > 192000 {
				return bad("format %d, %d channels, %d bits, %d Hz", format, channels, bits, rate)
			}
		case "data":
			if rate == 0 {
				return bad("the data chunk comes before the fmt chunk")
			}
			return rate, nil
		default:
			if size > 1<<20 {
				return bad("a %q chunk of %d bytes", id, size)
			}
			if _, err := io.CopyN(io.Discard, r, size+size%2); err != nil {
				return bad("skipping a chunk: %v", err)
			}
		}
	}
	return bad("no data chunk among the first 16")
}

// encodeWAV writes 16-bit mono samples at rate as a WAV file.
func encodeWAV(pcm []int16, rate int) []byte {
	data := 2 * len(pcm)
	b := make([]byte, 44+data)
	copy(b[0:], "RIFF")
	binary.LittleEndian.PutUint32(b[4:], uint32(36+data))
	copy(b[8:], "WAVEfmt ")
	binary.LittleEndian.PutUint32(b[16:], 16)
	binary.LittleEndian.PutUint16(b[20:], 1) // PCM
	binary.LittleEndian.PutUint16(b[22:], 1) // mono
	binary.LittleEndian.PutUint32(b[24:], uint32(rate))
	binary.LittleEndian.PutUint32(b[28:], uint32(rate*2))
	binary.LittleEndian.PutUint16(b[32:], 2)
	binary.LittleEndian.PutUint16(b[34:], 16)
	copy(b[36:], "data")
	binary.LittleEndian.PutUint32(b[40:], uint32(data))
	for i, s := range pcm {
		binary.LittleEndian.PutUint16(b[44+2*i:], uint16(s))
	}
	return b
}
