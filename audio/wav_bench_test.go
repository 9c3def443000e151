package audio

import (
	"encoding/binary"
	"testing"
)

const rate16k = 16000

// benchWAV returns a WAV file of seconds of 16 kHz mono PCM16 silence.
func benchWAV(seconds int) []byte {
	data := seconds * rate16k * 2
	b := make([]byte, 44+data)
	copy(b, "RIFF")
	binary.LittleEndian.PutUint32(b[4:], uint32(36+data))
	copy(b[8:], "WAVEfmt ")
	binary.LittleEndian.PutUint32(b[16:], 16)
	binary.LittleEndian.PutUint16(b[20:], 1)
	binary.LittleEndian.PutUint16(b[22:], 1)
	binary.LittleEndian.PutUint32(b[24:], rate16k)
	binary.LittleEndian.PutUint32(b[28:], rate16k*2)
	binary.LittleEndian.PutUint16(b[32:], 2)
	binary.LittleEndian.PutUint16(b[34:], 16)
	copy(b[36:], "data")
	binary.LittleEndian.PutUint32(b[40:], uint32(data))
	return b
}

// BenchmarkDecodeWAV measures decoding five seconds of speech, a typical utterance.
func BenchmarkDecodeWAV(b *testing.B) {
	file := benchWAV(5)
	b.SetBytes(int64(len(file)))
	b.ReportAllocs()
	for b.Loop() {
		if _, err := DecodeWAV(file, rate16k, 60); err != nil {
			b.Fatal(err)
		}
	}
}

func TestDecodeWAVSamples(t *testing.T) {
	file := benchWAV(1)
	data := file[44:]
	for i, v := range []int16{0, 1, -1, 32767, -32768, 258} {
		binary.LittleEndian.PutUint16(data[2*i:], uint16(v))
	}
	pcm, err := DecodeWAV(file, rate16k, 60)
	if err != nil || len(pcm) != rate16k {
		t.Fatalf("%d samples, %v", len(pcm), err)
	}
	for i, want := range []int16{0, 1, -1, 32767, -32768, 258, 0} {
		if pcm[i] != want {
			t.Errorf("sample %d = %d, want %d", i, pcm[i], want)
		}
	}
	if _, err := DecodeWAV(file[:len(file)-1], rate16k, 60); err == nil {
		t.Error("a truncated file decoded")
	}
}
