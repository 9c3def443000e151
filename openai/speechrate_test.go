package openai

import (
	"bytes"
	"io"
	"testing"

	"github.com/convengine/engine/audio"
)

func FuzzSpeechWAV(f *testing.F) {
	f.Add(audio.EncodeWAV([]int16{1, -2, 3}, 24000))
	f.Add([]byte("RIFF\xff\xff\xff\xffWAVEfmt \x10\x00\x00\x00\x01\x00\x01\x00\xc0\x5d\x00\x00\x80\xbb\x00\x00\x02\x00\x10\x00LIST\x04\x00\x00\x00INFOdata\xff\xff\xff\xff\x01\x00"))
	f.Add([]byte("RIFF\x00\x00\x00\x00WAVEdata\x00\x00\x00\x00"))
	f.Fuzz(func(t *testing.T, b []byte) {
		r := bytes.NewReader(b)
		rate, err := speechRate(r)
		if err != nil {
			return
		}
		if rate < 1000 || rate > 384000 {
			t.Fatalf("rate %d accepted", rate)
		}
		if _, err := io.ReadAll(r); err != nil {
			t.Fatal(err)
		}
	})
}

func TestWAVRoundTrip(t *testing.T) {
	pcm := []int16{0, 1, -1, 32767, -32768}
	r := bytes.NewReader(audio.EncodeWAV(pcm, 16000))
	rate, err := speechRate(r)
	if err != nil || rate != 16000 {
		t.Fatalf("rate %d, error %v", rate, err)
	}
	rest, _ := io.ReadAll(r)
	if len(rest) != 2*len(pcm) || rest[6] != 0xff || rest[9] != 0x80 {
		t.Fatalf("samples % x", rest)
	}
}
