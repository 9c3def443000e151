package engine

import (
	"encoding/binary"
	"errors"
	"fmt"
)

// Audio input format of spec 8: 16 kHz mono PCM, 16-bit.
const (
	inputSampleRate = 16000
	maxInputSeconds = 60
)

// ErrInvalidAudio is wrapped by every error of [DecodeWAV].
var ErrInvalidAudio = errors.New("engine: invalid audio")

// DecodeWAV reads a RIFF/WAVE file of 16-bit PCM, 16 kHz, mono, and returns its samples. Chunks
// other than "fmt " and "data" are skipped; sizes are checked against the data, so a truncated
// file or a lying header is an error, as is audio longer than 60 seconds.
func DecodeWAV(b []byte) ([]int16, error) {
	bad := func(format string, args ...any) ([]int16, error) {
		return nil, fmt.Errorf("%w: "+format, append([]any{ErrInvalidAudio}, args...)...)
	}
	if len(b) < 12 || string(b[0:4]) != "RIFF" || string(b[8:12]) != "WAVE" {
		return bad("not a RIFF/WAVE file")
	}
	if riff := binary.LittleEndian.Uint32(b[4:8]); uint64(riff)+8 > uint64(len(b)) {
		return bad("the RIFF size is larger than the file")
	}
	var haveFmt bool
	for off := 12; off+8 <= len(b); {
		id := string(b[off : off+4])
		size := int(binary.LittleEndian.Uint32(b[off+4 : off+8]))
		body := off + 8
		if size < 0 || size > len(b)-body {
			return bad("chunk %q is larger than the file", id)
		}
		switch id {
		case "fmt ":
			if size < 16 {
				return bad("the fmt chunk is too short")
			}
			f := b[body : body+16]
			format := binary.LittleEndian.Uint16(f[0:2])
			channels := binary.LittleEndian.Uint16(f[2:4])
			rate := binary.LittleEndian.Uint32(f[4:8])
			bits := binary.LittleEndian.Uint16(f[14:16])
			switch {
			case format != 1 && format != 0xFFFE:
				return bad("the audio is not PCM")
			case channels != 1:
				return bad("the audio has %d channels; it must be mono", channels)
			case rate != inputSampleRate:
				return bad("the sample rate is %d Hz; it must be 16000 Hz", rate)
			case bits != 16:
				return bad("the samples have %d bits; they must have 16", bits)
			}
			haveFmt = true
		case "data":
			if !haveFmt {
				return bad("the data chunk comes before the fmt chunk")
			}
			if size%2 != 0 {
				return bad("the data chunk has an odd size")
			}
			if size/2 > maxInputSeconds*inputSampleRate {
				return bad("the audio is longer than %d seconds", maxInputSeconds)
			}
			pcm := make([]int16, size/2)
			for i, data := 0, b[body:body+size]; len(data) >= 2; i, data = i+1, data[2:] {
				pcm[i] = int16(binary.LittleEndian.Uint16(data))
			}
			return pcm, nil
		}
		off = body + size + size%2 // chunks are padded to an even size
	}
	return bad("the file has no data chunk")
}
