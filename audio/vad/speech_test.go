package vad_test

import (
	"bytes"
	"io"
	"os/exec"
	"sync"
	"testing"

	"github.com/convengine/engine/audio"
)

// rate is the sample rate of the tests' audio, the engine's.
const rate = 16000

var spoken sync.Map // text → []int16

// speak returns text spoken by espeak-ng's US English voice at 16 kHz, cut to where the
// voice is (samples above -40 dB of its peak), so that its bounds are the truth the tests
// compare with. It skips in -short mode and fails, naming the Debian package, when espeak-ng
// is missing.
func speak(t testing.TB, text string) []int16 {
	t.Helper()
	if testing.Short() {
		t.Skip("drives espeak-ng")
	}
	if v, ok := spoken.Load(text); ok {
		return v.([]int16)
	}
	prog, err := exec.LookPath("espeak-ng")
	if err != nil {
		t.Fatalf("%v: install the Debian package espeak-ng (apt-get install espeak-ng)", err)
	}
	out, err := exec.Command(prog, "-v", "en-us", "--stdout", text).Output()
	if err != nil {
		t.Fatalf("espeak-ng: %v", err)
	}
	// espeak-ng writes placeholder sizes, as to a pipe, which DecodeWAV refuses: read it as a
	// stream.
	r := bytes.NewReader(out)
	h, err := audio.ReadWAVHeader(r)
	if err != nil {
		t.Fatal(err)
	}
	if h.Channels != 1 || h.BitsPerSample != 16 {
		t.Fatalf("espeak-ng wrote %+v", h)
	}
	data, _ := io.ReadAll(r)
	pcm := cutToVoice(audio.Resample(audio.PCMFromBytes(data), h.SampleRate, rate))
	spoken.Store(text, pcm)
	return pcm
}

// cutToVoice drops the near-silence espeak-ng writes before and after the voice.
func cutToVoice(pcm []int16) []int16 {
	var peak int
	for _, s := range pcm {
		peak = max(peak, abs(int(s)))
	}
	start, end := 0, len(pcm)
	for start < end && abs(int(pcm[start]))*100 <= peak {
		start++
	}
	for end > start && abs(int(pcm[end-1]))*100 <= peak {
		end--
	}
	return pcm[start:end]
}

func abs(x int) int {
	if x < 0 {
		return -x
	}
	return x
}
