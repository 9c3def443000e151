package audio_test

import (
	"bytes"
	"encoding/binary"
	"errors"
	"math"
	"testing"

	"github.com/convengine/engine/audio"
)

// wavFile builds a WAV file from chunks, each an id and a body; sizes are the bodies' own and
// odd bodies are padded, unless a chunk gives its size.
type chunk struct {
	id   string
	body []byte
	size int64 // when not 0, the size written instead of len(body)
	pad  bool  // write the pad byte of an odd body
}

func wavFile(riffSize int64, chunks ...chunk) []byte {
	var b []byte
	for _, c := range chunks {
		b = append(b, c.id...)
		size := uint32(len(c.body))
		if c.size != 0 {
			size = uint32(c.size)
		}
		b = binary.LittleEndian.AppendUint32(b, size)
		b = append(b, c.body...)
		if c.pad && len(c.body)%2 == 1 {
			b = append(b, 0)
		}
	}
	riff := uint32(4 + len(b))
	if riffSize != 0 {
		riff = uint32(riffSize)
	}
	out := append([]byte("RIFF"), binary.LittleEndian.AppendUint32(nil, riff)...)
	return append(append(out, "WAVE"...), b...)
}

func fmtBody(format, channels uint16, rate uint32, bits uint16) []byte {
	le := binary.LittleEndian
	align := channels * bits / 8
	b := le.AppendUint16(nil, format)
	b = le.AppendUint16(b, channels)
	b = le.AppendUint32(b, rate)
	b = le.AppendUint32(b, rate*uint32(align))
	b = le.AppendUint16(b, align)
	return le.AppendUint16(b, bits)
}

var pcmGUID = []byte{1, 0, 0, 0, 0, 0, 0x10, 0, 0x80, 0, 0, 0xAA, 0, 0x38, 0x9B, 0x71}

func extensibleBody(valid uint16, guid []byte) []byte {
	b := fmtBody(0xFFFE, 1, 16000, 16)
	b = binary.LittleEndian.AppendUint16(b, 22)
	b = binary.LittleEndian.AppendUint16(b, valid)
	b = binary.LittleEndian.AppendUint32(b, 4) // channel mask: front centre
	return append(b, guid...)
}

func TestDecodeWAV(t *testing.T) {
	samples := []int16{0, 1, -1, 32767, -32768, 1234}
	data := audio.AppendPCM(nil, samples)
	pcm16k := chunk{id: "fmt ", body: fmtBody(1, 1, 16000, 16)}
	ok := []struct {
		name string
		file []byte
		want []int16
	}{
		{"encoded by EncodeWAV", audio.EncodeWAV(samples, 16000), samples},
		{"plain", wavFile(0, pcm16k, chunk{id: "data", body: data}), samples},
		{"extensible PCM", wavFile(0, chunk{id: "fmt ", body: extensibleBody(16, pcmGUID)}, chunk{id: "data", body: data}), samples},
		{"LIST and odd chunks skipped", wavFile(0, chunk{id: "LIST", body: []byte("INFOISFT\x03\x00\x00\x00ab\x00"), pad: true},
			pcm16k, chunk{id: "odd ", body: []byte{1, 2, 3}, pad: true}, chunk{id: "data", body: data}), samples},
		{"chunks after data ignored", wavFile(0, pcm16k, chunk{id: "data", body: data}, chunk{id: "LIST", body: []byte("INFO")}), samples},
		{"streaming sizes", append(audio.AppendWAVHeader(nil, 16000, -1), data...), samples},
		{"bytes after the RIFF chunk ignored", append(audio.EncodeWAV(samples, 16000), "junk"...), samples},
		{"empty data", wavFile(0, pcm16k, chunk{id: "data"}), []int16{}},
		{"sixty seconds", audio.EncodeWAV(make([]int16, 60*16000), 16000), make([]int16, 60*16000)},
	}
	for _, tc := range ok {
		t.Run(tc.name, func(t *testing.T) {
			got, err := audio.DecodeWAV(tc.file, 16000, 60)
			if err != nil {
				t.Fatal(err)
			}
			if !slicesEqual(got, tc.want) {
				t.Errorf("got %d samples %v…, want %d", len(got), got[:min(len(got), 8)], len(tc.want))
			}
		})
	}

	espeakStyle := wavFile(0x7ffff024, pcm16k, chunk{id: "data", body: data, size: 0x7ffff000})
	bad := []struct {
		name string
		file []byte
	}{
		{"empty", nil},
		{"not RIFF", []byte("RIFX\x00\x00\x00\x00WAVE")},
		{"not WAVE", wavFile(0, pcm16k)[:8]},
		{"RIFF size beyond the file", wavFile(1000, pcm16k, chunk{id: "data", body: data})},
		{"data size beyond the file", wavFile(0, pcm16k, chunk{id: "data", body: data, size: 100})},
		{"placeholder sizes of a pipe", espeakStyle},
		{"truncated in the header", audio.EncodeWAV(samples, 16000)[:30]},
		{"truncated in the data", audio.EncodeWAV(samples, 16000)[:50]},
		{"odd data size", wavFile(0, pcm16k, chunk{id: "data", body: data[:5], pad: true})},
		{"missing pad byte", wavFile(0, chunk{id: "odd ", body: []byte{1, 2, 3}}, pcm16k, chunk{id: "data", body: data})},
		{"no data chunk", wavFile(0, pcm16k)},
		{"no fmt chunk", wavFile(0, chunk{id: "data", body: data})},
		{"data before fmt", wavFile(0, chunk{id: "data", body: data}, pcm16k)},
		{"two fmt chunks", wavFile(0, pcm16k, pcm16k, chunk{id: "data", body: data})},
		{"short fmt", wavFile(0, chunk{id: "fmt ", body: fmtBody(1, 1, 16000, 16)[:14]}, chunk{id: "data", body: data})},
		{"stereo", wavFile(0, chunk{id: "fmt ", body: fmtBody(1, 2, 16000, 16)}, chunk{id: "data", body: data})},
		{"22050 Hz", wavFile(0, chunk{id: "fmt ", body: fmtBody(1, 1, 22050, 16)}, chunk{id: "data", body: data})},
		{"8-bit", wavFile(0, chunk{id: "fmt ", body: fmtBody(1, 1, 16000, 8)}, chunk{id: "data", body: data})},
		{"float", wavFile(0, chunk{id: "fmt ", body: fmtBody(3, 1, 16000, 32)}, chunk{id: "data", body: data})},
		{"extensible float", wavFile(0, chunk{id: "fmt ", body: extensibleBody(16, append([]byte{3}, pcmGUID[1:]...))}, chunk{id: "data", body: data})},
		{"extensible 12 valid bits", wavFile(0, chunk{id: "fmt ", body: extensibleBody(12, pcmGUID)}, chunk{id: "data", body: data})},
		{"extensible too short", wavFile(0, chunk{id: "fmt ", body: extensibleBody(16, pcmGUID)[:30]}, chunk{id: "data", body: data})},
		{"byte rate disagrees", wavFile(0, chunk{id: "fmt ", body: func() []byte {
			b := fmtBody(1, 1, 16000, 16)
			binary.LittleEndian.PutUint32(b[8:], 16000)
			return b
		}()}, chunk{id: "data", body: data})},
		{"longer than sixty seconds", audio.EncodeWAV(make([]int16, 60*16000+1), 16000)},
	}
	for _, tc := range bad {
		t.Run(tc.name, func(t *testing.T) {
			pcm, err := audio.DecodeWAV(tc.file, 16000, 60)
			if !errors.Is(err, audio.ErrInvalid) {
				t.Fatalf("got %d samples, err %v; want ErrInvalid", len(pcm), err)
			}
		})
	}
}

func TestReadWAVHeader(t *testing.T) {
	tests := []struct {
		name string
		file []byte
		want audio.WAVHeader
	}{
		{"streaming", audio.AppendWAVHeader(nil, 22050, -1), audio.WAVHeader{SampleRate: 22050, Channels: 1, BitsPerSample: 16, DataSize: -1}},
		{"sized", audio.AppendWAVHeader(nil, 24000, 480), audio.WAVHeader{SampleRate: 24000, Channels: 1, BitsPerSample: 16, DataSize: 480}},
		{"a LIST first", wavFile(0, chunk{id: "LIST", body: []byte("INFOx"), pad: true},
			chunk{id: "fmt ", body: fmtBody(1, 2, 44100, 16)}, chunk{id: "data", size: 8}),
			audio.WAVHeader{SampleRate: 44100, Channels: 2, BitsPerSample: 16, DataSize: 8}},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			r := bytes.NewReader(append(tc.file, 9, 9))
			got, err := audio.ReadWAVHeader(r)
			if err != nil {
				t.Fatal(err)
			}
			if got != tc.want {
				t.Errorf("got %+v, want %+v", got, tc.want)
			}
			if r.Len() != 2 {
				t.Errorf("the reader is not left at the samples: %d bytes remain", r.Len())
			}
		})
	}
	for _, bad := range [][]byte{nil, []byte("RIFF\x00\x00\x00\x00WAVE"), audio.AppendWAVHeader(nil, 16000, -1)[:40],
		wavFile(0, chunk{id: "data", size: 8})} {
		if _, err := audio.ReadWAVHeader(bytes.NewReader(bad)); !errors.Is(err, audio.ErrInvalid) {
			t.Errorf("ReadWAVHeader(%q) = %v, want ErrInvalid", bad, err)
		}
	}
}

func TestResample(t *testing.T) {
	const from, to = 22050, 16000
	tone := func(freq float64, rate, n int) []int16 {
		pcm := make([]int16, n)
		for i := range pcm {
			pcm[i] = int16(10000 * math.Sin(2*math.Pi*freq*float64(i)/float64(rate)))
		}
		return pcm
	}
	in := tone(1000, from, from) // one second
	out := audio.Resample(in, from, to)
	if d := len(out) - to; d < -1 || d > 1 {
		t.Fatalf("one second at %d Hz gave %d samples at %d Hz", from, len(out), to)
	}
	// The 1 kHz tone keeps its level away from the edges; a 10 kHz one, above the new
	// Nyquist frequency, is filtered out instead of folding to 6 kHz.
	if got, want := rms(out[1000:len(out)-1000]), rms(in); math.Abs(got-want)/want > 0.02 {
		t.Errorf("1 kHz tone: RMS %.0f after resampling, %.0f before", got, want)
	}
	high := audio.Resample(tone(10000, from, from), from, to)
	if r := rms(high[1000 : len(high)-1000]); r > 100 {
		t.Errorf("10 kHz tone: RMS %.0f after resampling to %d Hz; want it filtered out", r, to)
	}
	if got := audio.Resample(in, to, to); &got[0] != &in[0] {
		t.Error("equal rates copied the samples")
	}
	if audio.Resample(in, 0, to) != nil {
		t.Error("a zero rate gave samples")
	}
}

func rms(pcm []int16) float64 {
	var sum float64
	for _, s := range pcm {
		sum += float64(s) * float64(s)
	}
	return math.Sqrt(sum / float64(len(pcm)))
}

func slicesEqual(a, b []int16) bool {
	if len(a) != len(b) {
		return false
	}
	for i := range a {
		if a[i] != b[i] {
			return false
		}
	}
	return true
}

func FuzzDecodeWAV(f *testing.F) {
	f.Add(audio.EncodeWAV([]int16{1, 2, 3}, 16000))
	f.Add(append(audio.AppendWAVHeader(nil, 16000, -1), 1, 2, 3, 4))
	f.Add(wavFile(0, chunk{id: "LIST", body: []byte("INFOx"), pad: true}, chunk{id: "fmt ", body: extensibleBody(16, pcmGUID)}, chunk{id: "data", body: []byte{1, 2}}))
	f.Add([]byte("RIFF\xff\xff\xff\xffWAVEdata\xff\xff\xff\xff"))
	f.Fuzz(func(t *testing.T, b []byte) {
		pcm, err := audio.DecodeWAV(b, 16000, 60)
		if err != nil {
			if !errors.Is(err, audio.ErrInvalid) {
				t.Fatalf("error %v does not wrap ErrInvalid", err)
			}
			return
		}
		if 2*len(pcm) > len(b) || len(pcm) > 60*16000 {
			t.Fatalf("%d samples from %d bytes", len(pcm), len(b))
		}
		again, err := audio.DecodeWAV(audio.EncodeWAV(pcm, 16000), 16000, 60)
		if err != nil || !slicesEqual(again, pcm) {
			t.Fatalf("re-encoded audio does not decode to the same samples: %v", err)
		}
		audio.ReadWAVHeader(bytes.NewReader(b))
	})
}
