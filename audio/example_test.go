package audio_test

import (
	"bytes"
	"fmt"

	"github.com/convengine/engine/audio"
)

// A client sends the engine 16 kHz audio; Resample brings other rates there and EncodeWAV
// wraps the samples for a turn's audio_base64.
func ExampleEncodeWAV() {
	at48k := make([]int16, 4800) // 100 ms of silence at 48 kHz
	wav := audio.EncodeWAV(audio.Resample(at48k, 48000, 16000), 16000)
	pcm, err := audio.DecodeWAV(wav, 16000, 60)
	fmt.Println(len(wav), len(pcm), err)
	// Output: 3244 1600 <nil>
}

// The tts endpoint streams a WAV whose sizes say "unknown": a reader takes the samples to the
// end of the stream.
func ExampleReadWAVHeader() {
	stream := append(audio.AppendWAVHeader(nil, 22050, -1), 0, 0, 1, 0)
	r := bytes.NewReader(stream)
	h, err := audio.ReadWAVHeader(r)
	fmt.Printf("%+v %v, %d bytes of samples follow\n", h, err, r.Len())
	// Output: {SampleRate:22050 Channels:1 BitsPerSample:16 DataSize:-1} <nil>, 4 bytes of samples follow
}
