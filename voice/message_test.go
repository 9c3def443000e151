package voice

import (
	"encoding/json"
	"testing"

	"github.com/convengine/engine"
)

// Every speak message joined from two says what the two said, one after the other.
func TestJoinSpeak(t *testing.T) {
	for _, pair := range [][2]string{
		{"Hello", " there."},
		{"", "x"},
		{`say "quoted"`, ` and \ back`},
		{"line\nbreak", "\u2028 and <tags> & é 😀"},
	} {
		joined := joinSpeak(speakMessage(pair[0]), speakMessage(pair[1]))
		var m struct{ Type, Delta string }
		if err := json.Unmarshal(joined, &m); err != nil || m.Type != "speak" || m.Delta != pair[0]+pair[1] {
			t.Errorf("%q + %q: %s (%v)", pair[0], pair[1], joined, err)
		}
	}
}

// FuzzPlainAudioChunk checks the audio fast path against the JSON decoder: whatever it takes
// for a plain audio message, the decoder reads as an audio message with the same chunk, or
// with a chunk that is not base64 either.
func FuzzPlainAudioChunk(f *testing.F) {
	for _, s := range []string{
		`{"type":"audio","chunk":"AAAA"}`,
		`{"type":"audio","chunk":""}`,
		`{"type":"audio","chunk":"AA\"AA"}`,
		`{"type":"audio","chunk":"AA\\u0041"}`,
		`{"type":"audio","chunk":"AAAA","context":{}}`,
		`{"type":"audio","chunk":"é\u2028"}`,
		`{"type":"audio","chunk":"}`,
	} {
		f.Add([]byte(s))
	}
	f.Fuzz(func(t *testing.T, data []byte) {
		b64, ok := plainAudioChunk(data)
		if !ok {
			return
		}
		var m clientMessage
		if err := engine.DecodeJSON(data, &m); err != nil {
			p := err.(*engine.Problem)
			// The fast path took a message the decoder refuses: only a chunk that is not
			// base64 may differ (both paths refuse it then).
			if validBase64(b64) { // base64 without line breaks, quotes or escapes
				t.Fatalf("%q: the fast path took a message the decoder refuses: %v", data, p.Detail)
			}
			return
		}
		if m.Type != "audio" || m.Chunk == nil || m.Context != nil || m.SampleRate != nil {
			t.Fatalf("%q: the decoder reads %+v, the fast path an audio chunk", data, m)
		}
		// The decoder replaces invalid UTF-8; a chunk that holds some is not base64, which
		// both paths refuse alike.
		if *m.Chunk != string(b64) && validBase64(b64) {
			t.Fatalf("%q: the decoder reads the chunk %q, the fast path %q", data, *m.Chunk, b64)
		}
	})
}

func validBase64(b []byte) bool {
	for _, c := range b {
		if !(c >= 'A' && c <= 'Z' || c >= 'a' && c <= 'z' || c >= '0' && c <= '9' || c == '+' || c == '/' || c == '=') {
			return false
		}
	}
	return true
}
