package client

import (
	"encoding/json"
	"reflect"
	"testing"
)

// FuzzPlainAudio checks the audio fast path against the JSON decoder: what it reads, the
// decoder reads alike.
func FuzzPlainAudio(f *testing.F) {
	for _, s := range []string{
		`{"type":"audio","seq":1,"sampleRate":22050,"chunk":"AAAA"}`,
		`{"type":"audio","seq":12,"sampleRate":16000,"chunk":""}`,
		`{"type":"audio","seq":-1,"sampleRate":16000,"chunk":"AAAA"}`,
		`{"type":"audio","seq":1,"sampleRate":16000,"chunk":"AA=A"}`,
		`{"type":"audio","seq":1,"sampleRate":16000,"chunk":"AAAA","x":"}`,
	} {
		f.Add([]byte(s))
	}
	f.Fuzz(func(t *testing.T, data []byte) {
		ev, ok := plainAudio(data)
		if !ok {
			return
		}
		var m streamMessage
		if err := json.Unmarshal(data, &m); err != nil {
			t.Fatalf("%q: the fast path read a message the decoder refuses: %v", data, err)
		}
		want := &AudioEvent{Seq: m.Seq, SampleRate: m.SampleRate, PCM: m.Chunk}
		if m.Type != "audio" || want.Seq != ev.Seq || want.SampleRate != ev.SampleRate || !reflect.DeepEqual(append([]byte{}, want.PCM...), append([]byte{}, ev.PCM...)) {
			t.Fatalf("%q: the decoder reads %+v, the fast path %+v", data, want, ev)
		}
	})
}
