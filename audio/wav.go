package audio

import (
	"bytes"
	"encoding/binary"
	"errors"
	"fmt"
	"io"
	"slices"
)

// WAV format codes of the "fmt " chunk.
const (
	wavFormatPCM        = 1
	wavFormatExtensible = 0xFFFE
)

// wavUnknownSize is the RIFF and data size of a streaming WAV, whose length was not known when
// its header was written. ffmpeg writes it to pipes, and browsers, sox and ffmpeg read such a
// file to its end.
const wavUnknownSize = 0xFFFFFFFF

// wavPCMSubformat is KSDATAFORMAT_SUBTYPE_PCM, the sub-format GUID of WAVE_FORMAT_EXTENSIBLE
// PCM, in its byte order on disk.
var wavPCMSubformat = []byte{0x01, 0x00, 0x00, 0x00, 0x00, 0x00, 0x10, 0x00, 0x80, 0x00, 0x00, 0xAA, 0x00, 0x38, 0x9B, 0x71}

// ErrInvalid is wrapped by every error of [DecodeWAV] and [ReadWAVHeader]. The text after it
// says what is wrong in words fit for the client that sent the file; it never quotes the file.
var ErrInvalid = errors.New("audio: invalid WAV")

// WAVHeader describes the integer PCM samples of a WAV file.
type WAVHeader struct {
	SampleRate    int
	Channels      int
	BitsPerSample int
	// DataSize is the length of the samples in bytes as the header states it, or -1 for a
	// streaming WAV whose header says the length is unknown (0xFFFFFFFF).
	DataSize int64
}

// DecodeWAV reads a RIFF/WAVE file of 16-bit mono PCM at sampleRate (WAVE_FORMAT_PCM, or
// WAVE_FORMAT_EXTENSIBLE with the PCM sub-format), and returns its samples. Chunks other than
// "fmt " and "data" ("LIST", "fact", odd-sized ones) are skipped. Every size is checked against
// the bytes present, so a truncated file or a lying header is an error, as is audio longer than
// maxSeconds (when it is positive). A data size of 0xFFFFFFFF, the mark of a streaming WAV,
// means the samples run to the end of the file. Bytes after the RIFF chunk are ignored.
func DecodeWAV(b []byte, sampleRate, maxSeconds int) ([]int16, error) {
	if len(b) < 12 || string(b[0:4]) != "RIFF" || string(b[8:12]) != "WAVE" {
		return nil, invalidAudio("not a RIFF/WAVE file")
	}
	end := len(b)
	if riff := binary.LittleEndian.Uint32(b[4:8]); riff != wavUnknownSize {
		if uint64(riff)+8 > uint64(len(b)) {
			return nil, invalidAudio("the RIFF size is larger than the file: the file is truncated")
		}
		end = int(riff) + 8
	}
	var h *WAVHeader
	for off := 12; ; {
		if end-off < 8 {
			return nil, invalidAudio("the file has no data chunk")
		}
		id := string(b[off : off+4])
		size := uint64(binary.LittleEndian.Uint32(b[off+4 : off+8]))
		body := off + 8
		if id == "data" && size == wavUnknownSize {
			size = uint64(end - body)
		}
		if size > uint64(end-body) {
			return nil, invalidAudio(fmt.Sprintf("chunk %q is larger than the file", printableID(id)))
		}
		switch id {
		case "fmt ":
			if h != nil {
				return nil, invalidAudio("the file has two fmt chunks")
			}
			hdr, err := parseFmt(b[body : body+int(size)])
			if err != nil {
				return nil, err
			}
			if err := checkFormat(hdr, sampleRate); err != nil {
				return nil, err
			}
			h = &hdr
		case "data":
			if h == nil {
				return nil, invalidAudio("the data chunk comes before the fmt chunk")
			}
			if size%2 != 0 {
				return nil, invalidAudio("the data chunk does not hold whole 16-bit samples")
			}
			if maxSeconds > 0 && size/2 > uint64(maxSeconds)*uint64(sampleRate) {
				return nil, invalidAudio(fmt.Sprintf("the audio is longer than %d seconds", maxSeconds))
			}
			return PCMFromBytes(b[body : body+int(size)]), nil
		}
		// Chunks are padded to an even size; the pad byte must be there too.
		next := uint64(body) + size + size%2
		if next > uint64(end) {
			return nil, invalidAudio(fmt.Sprintf("chunk %q is larger than the file", printableID(id)))
		}
		off = int(next)
	}
}

// ReadWAVHeader reads a WAV header from r up to the first byte of the samples, which r is left
// at. It accepts integer PCM of any usual rate, channel count and sample size
// (WAVE_FORMAT_PCM, or WAVE_FORMAT_EXTENSIBLE with the PCM sub-format). It is meant for WAV
// produced by a program on a pipe, whose sizes may be placeholders: the samples are best read
// to the end of r.
func ReadWAVHeader(r io.Reader) (WAVHeader, error) {
	const maxSkipped = 1 << 20 // bytes of other chunks before the data
	var hdr [12]byte
	if _, err := io.ReadFull(r, hdr[:]); err != nil {
		return WAVHeader{}, invalidAudio("the WAV header is truncated")
	}
	if string(hdr[0:4]) != "RIFF" || string(hdr[8:12]) != "WAVE" {
		return WAVHeader{}, invalidAudio("not a RIFF/WAVE stream")
	}
	var (
		h       *WAVHeader
		skipped int64
	)
	for {
		var ch [8]byte
		if _, err := io.ReadFull(r, ch[:]); err != nil {
			return WAVHeader{}, invalidAudio("the stream ends before its data chunk")
		}
		id := string(ch[0:4])
		size := int64(binary.LittleEndian.Uint32(ch[4:8]))
		switch id {
		case "fmt ":
			if h != nil {
				return WAVHeader{}, invalidAudio("the stream has two fmt chunks")
			}
			if size > 1024 {
				return WAVHeader{}, invalidAudio("the fmt chunk is too long")
			}
			buf := make([]byte, size+size%2)
			if _, err := io.ReadFull(r, buf); err != nil {
				return WAVHeader{}, invalidAudio("the fmt chunk is truncated")
			}
			hdr, err := parseFmt(buf[:size])
			if err != nil {
				return WAVHeader{}, err
			}
			h = &hdr
		case "data":
			if h == nil {
				return WAVHeader{}, invalidAudio("the data chunk comes before the fmt chunk")
			}
			h.DataSize = size
			if size == wavUnknownSize {
				h.DataSize = -1
			}
			return *h, nil
		default:
			skipped += size + size%2
			if skipped > maxSkipped {
				return WAVHeader{}, invalidAudio("the stream has too much before its data chunk")
			}
			if _, err := io.CopyN(io.Discard, r, size+size%2); err != nil {
				return WAVHeader{}, invalidAudio(fmt.Sprintf("chunk %q is truncated", printableID(id)))
			}
		}
	}
}

// parseFmt reads a "fmt " chunk of integer PCM and checks that its fields agree.
func parseFmt(f []byte) (WAVHeader, error) {
	if len(f) < 16 {
		return WAVHeader{}, invalidAudio("the fmt chunk is too short")
	}
	le := binary.LittleEndian
	format := le.Uint16(f[0:2])
	h := WAVHeader{
		Channels:      int(le.Uint16(f[2:4])),
		SampleRate:    int(le.Uint32(f[4:8])),
		BitsPerSample: int(le.Uint16(f[14:16])),
	}
	byteRate := uint64(le.Uint32(f[8:12]))
	blockAlign := int(le.Uint16(f[12:14]))
	switch format {
	case wavFormatPCM:
	case wavFormatExtensible:
		if len(f) < 40 || le.Uint16(f[16:18]) < 22 {
			return WAVHeader{}, invalidAudio("the extensible fmt chunk is too short")
		}
		if !bytes.Equal(f[24:40], wavPCMSubformat) {
			return WAVHeader{}, invalidAudio("the audio is not PCM")
		}
		if valid := int(le.Uint16(f[18:20])); valid != 0 && valid != h.BitsPerSample {
			return WAVHeader{}, invalidAudio(fmt.Sprintf("the samples have %d valid bits in %d; they must have 16", valid, h.BitsPerSample))
		}
	default:
		return WAVHeader{}, invalidAudio("the audio is not PCM")
	}
	switch {
	case h.Channels < 1 || h.Channels > 8:
		return WAVHeader{}, invalidAudio(fmt.Sprintf("the fmt chunk gives %d channels", h.Channels))
	case h.SampleRate < 1000 || h.SampleRate > 384000:
		return WAVHeader{}, invalidAudio(fmt.Sprintf("the fmt chunk gives a sample rate of %d Hz", h.SampleRate))
	case h.BitsPerSample != 8 && h.BitsPerSample != 16 && h.BitsPerSample != 24 && h.BitsPerSample != 32:
		return WAVHeader{}, invalidAudio(fmt.Sprintf("the samples have %d bits", h.BitsPerSample))
	case blockAlign != h.Channels*h.BitsPerSample/8 || byteRate != uint64(h.SampleRate)*uint64(blockAlign):
		return WAVHeader{}, invalidAudio("the fmt chunk's block size or byte rate disagrees with its format")
	}
	return h, nil
}

// checkFormat requires 16-bit mono samples at rate.
func checkFormat(h WAVHeader, rate int) error {
	switch {
	case h.Channels != 1:
		return invalidAudio(fmt.Sprintf("the audio has %d channels; it must be mono", h.Channels))
	case h.SampleRate != rate:
		return invalidAudio(fmt.Sprintf("the sample rate is %d Hz; it must be %d Hz", h.SampleRate, rate))
	case h.BitsPerSample != 16:
		return invalidAudio(fmt.Sprintf("the samples have %d bits; they must have 16", h.BitsPerSample))
	}
	return nil
}

func invalidAudio(detail string) error { return fmt.Errorf("%w: %s", ErrInvalid, detail) }

// printableID returns a chunk id fit for an error message.
func printableID(id string) string {
	b := []byte(id)
	for i, c := range b {
		if c < 0x20 || c > 0x7E {
			b[i] = '?'
		}
	}
	return string(b)
}

// AppendWAVHeader appends the 44-byte header of a WAV file of 16-bit mono PCM at sampleRate
// whose samples take dataBytes. A negative dataBytes, or one too large for a WAV file, writes
// the streaming form for audio whose length is not known yet: the RIFF and data sizes are
// 0xFFFFFFFF, which players read as "until the end of the stream".
func AppendWAVHeader(b []byte, sampleRate int, dataBytes int64) []byte {
	riff, data := uint32(wavUnknownSize), uint32(wavUnknownSize)
	if dataBytes >= 0 && dataBytes <= wavUnknownSize-36-1 {
		riff, data = uint32(36+dataBytes), uint32(dataBytes)
	}
	le := binary.LittleEndian
	b = append(b, "RIFF"...)
	b = le.AppendUint32(b, riff)
	b = append(b, "WAVEfmt "...)
	b = le.AppendUint32(b, 16)
	b = le.AppendUint16(b, wavFormatPCM)
	b = le.AppendUint16(b, 1) // mono
	b = le.AppendUint32(b, uint32(sampleRate))
	b = le.AppendUint32(b, uint32(sampleRate)*2)
	b = le.AppendUint16(b, 2)  // block align
	b = le.AppendUint16(b, 16) // bits per sample
	b = append(b, "data"...)
	return le.AppendUint32(b, data)
}

// EncodeWAV returns pcm as a WAV file of 16-bit mono PCM at sampleRate.
func EncodeWAV(pcm []int16, sampleRate int) []byte {
	b := AppendWAVHeader(make([]byte, 0, 44+2*len(pcm)), sampleRate, int64(2*len(pcm)))
	return AppendPCM(b, pcm)
}

// AppendPCM appends pcm as 16-bit little-endian samples.
func AppendPCM(b []byte, pcm []int16) []byte {
	for _, s := range pcm {
		b = binary.LittleEndian.AppendUint16(b, uint16(s))
	}
	return b
}

// PCMFromBytes reads 16-bit little-endian samples; a trailing odd byte is ignored.
func PCMFromBytes(b []byte) []int16 {
	return AppendSamples(make([]int16, 0, len(b)/2), b)
}

// AppendSamples appends the 16-bit little-endian samples of b to pcm; a trailing odd byte is
// ignored.
func AppendSamples(pcm []int16, b []byte) []int16 {
	pcm = slices.Grow(pcm, len(b)/2)
	for i := 0; i+1 < len(b); i += 2 {
		pcm = append(pcm, int16(binary.LittleEndian.Uint16(b[i:])))
	}
	return pcm
}
