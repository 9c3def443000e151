package twilio

import (
	"encoding/base64"
	"encoding/json"
	"testing"
	"time"

	"github.com/coder/websocket"
)

// heard is a callee that keeps what a stream handed it.
type heard struct {
	samples, keys, marks, arrivals int
	last                           time.Duration
}

func (h *heard) Hear(pcm []int16) { h.samples += len(pcm) }
func (h *heard) Press(byte)       { h.keys++ }
func (h *heard) Marked(string)    { h.marks++ }
func (h *heard) Arrived(_ time.Time, d time.Duration) {
	h.arrivals++
	h.last = d
}

// FuzzStreamMessage: whatever a media stream sends (Twilio's messages as its documentation
// shows them, then anything), the reader never panics, hands the call one sample per byte of
// an inbound media payload and nothing for others, a key only for a one-character digit, and a
// media time that is neither negative nor past a day.
func FuzzStreamMessage(f *testing.F) {
	for _, seed := range []string{
		`{"event":"connected","protocol":"Call","version":"1.0.0"}`,
		`{"event":"start","sequenceNumber":"1","start":{"accountSid":"AC0","streamSid":"MZ0","callSid":"CA0","tracks":["inbound"],"mediaFormat":{"encoding":"audio/x-mulaw","sampleRate":8000,"channels":1},"customParameters":{"token":"t"}},"streamSid":"MZ0"}`,
		`{"event":"media","sequenceNumber":"3","media":{"track":"inbound","chunk":"1","timestamp":"5","payload":"` + base64.StdEncoding.EncodeToString(make([]byte, 160)) + `"},"streamSid":"MZ0"}`,
		`{"event":"media","media":{"track":"outbound","payload":"/w=="}}`,
		`{"event":"media","media":{"timestamp":"9223372036854775807","payload":"/w=="}}`,
		`{"event":"media","media":{"payload":"not base64"}}`,
		`{"event":"dtmf","streamSid":"MZ0","sequenceNumber":"5","dtmf":{"track":"inbound_track","digit":"1"}}`,
		`{"event":"dtmf","dtmf":{"digit":"12"}}`,
		`{"event":"mark","sequenceNumber":"4","streamSid":"MZ0","mark":{"name":"s1"}}`,
		`{"event":"stop","sequenceNumber":"5","streamSid":"MZ0","stop":{"accountSid":"AC0","callSid":"CA0"}}`,
		`{"event":"media","media":null}`,
		`[1,2,3]`,
	} {
		f.Add(seed, true)
	}
	f.Add("\xff\x00", false)
	f.Fuzz(func(t *testing.T, data string, text bool) {
		typ := websocket.MessageBinary
		if text {
			typ = websocket.MessageText
		}
		var in inbound
		var h heard
		stop := in.handle(&h, typ, []byte(data))

		var m message
		valid := text && json.Unmarshal([]byte(data), &m) == nil
		if stop != (valid && m.Event == "stop") {
			t.Errorf("stop %v for %q", stop, data)
		}
		want := 0
		if valid && m.Event == "media" && m.Media != nil && (m.Media.Track == "" || m.Media.Track == "inbound") {
			if b, err := base64.StdEncoding.DecodeString(m.Media.Payload); err == nil {
				want = len(b)
			}
		}
		if h.samples != want {
			t.Errorf("%d samples heard, want %d, for %q", h.samples, want, data)
		}
		if h.keys > 0 && !(valid && m.Event == "dtmf" && m.DTMF != nil && len(m.DTMF.Digit) == 1) {
			t.Errorf("a key pressed for %q", data)
		}
		if h.last < 0 || h.last > 24*time.Hour {
			t.Errorf("media time %v for %q", h.last, data)
		}
	})
}
