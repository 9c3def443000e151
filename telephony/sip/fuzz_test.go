package sip

import (
	"testing"

	"github.com/emiago/diago/media"
	"github.com/emiago/diago/media/sdp"
)

// FuzzOffer: no offer panics the check, and an offer it accepts goes through diago's parser
// (what Answer reads of it) without a panic, with G.711 among its codecs.
func FuzzOffer(f *testing.F) {
	f.Add("v=0\r\no=- 1 1 IN IP4 127.0.0.1\r\ns=-\r\nc=IN IP4 127.0.0.1\r\nt=0 0\r\nm=audio 4000 RTP/AVP 0 8 101\r\na=rtpmap:101 telephone-event/8000\r\n")
	f.Add("v=0\r\no=- 1 1 IN IP4 127.0.0.1\r\ns=-\r\nc=IN\r\nt=0 0\r\nm=audio 4000 RTP/AVP 0\r\n")
	f.Add("v=0\no=- 1 1 IN IP6 ::1\nc=IN IP6 ::1\nm=audio 4000 RTP/AVP 96\na=rtpmap:96 PCMA/8000\na=rtpmap:96 PCMA/8000\n")
	f.Fuzz(func(t *testing.T, offer string) {
		body := string(terminated([]byte(offer)))
		if code, _ := checkOffer([]byte(body)); code != 0 {
			return
		}
		sd := sdp.SessionDescription{}
		if err := sdp.Unmarshal([]byte(body), &sd); err != nil {
			t.Fatalf("accepted, but diago cannot read it: %v", err)
		}
		if _, err := sd.SessionInformation(); err != nil {
			t.Fatalf("accepted, but its o= line: %v", err)
		}
		md, err := sd.MediaDescription("audio")
		if err != nil {
			t.Fatalf("accepted, but its m= line: %v", err)
		}
		if _, err := sd.ConnectionInformation(); err != nil {
			t.Fatalf("accepted, but its c= line: %v", err)
		}
		codecs := make([]media.Codec, len(md.Formats))
		n, _ := media.CodecsFromSDPRead(md.Formats, sd.Values("a"), codecs)
		g711 := false
		for _, c := range codecs[:n] {
			g711 = g711 || c.Matches(media.CodecAudioUlaw) || c.Matches(media.CodecAudioAlaw)
		}
		if !g711 {
			t.Fatalf("accepted without G.711: %v", codecs[:n])
		}
	})
}

// FuzzKeys: RFC 4733 payloads and INFO bodies of any shape give a keypad key or nothing.
func FuzzKeys(f *testing.F) {
	f.Add([]byte{5, 0x0a, 0, 160}, true, uint32(1), "Signal=5\r\nDuration=160")
	f.Add([]byte{11, 0x8a, 3, 0}, false, uint32(1), "#")
	f.Fuzz(func(t *testing.T, payload []byte, marker bool, ts uint32, info string) {
		var e events
		for range 3 {
			if k, ok := e.key(marker, ts, payload); ok && !validKey(k) {
				t.Fatalf("key %q", k)
			}
		}
		for _, ct := range []string{"application/dtmf-relay", "application/dtmf"} {
			if k, ok := infoKey(ct, []byte(info)); ok && !validKey(k) {
				t.Fatalf("INFO key %q", k)
			}
		}
	})
}

func validKey(k byte) bool {
	for i := range len(keyNames) {
		if keyNames[i] == k {
			return true
		}
	}
	return false
}

// One key per event: its packets, however many, and its three end packets give one key; the
// next event, at the same timestamp (a sender that does not advance its clock between keys),
// gives the next.
func TestEvents(t *testing.T) {
	var e events
	var got []byte
	send := func(event byte, marker, end bool, ts uint32) {
		flags := byte(10)
		if end {
			flags |= 0x80
		}
		if k, ok := e.key(marker, ts, []byte{event, flags, 0, 160}); ok {
			got = append(got, k)
		}
	}
	for _, ev := range []byte{4, 4, 11} {
		send(ev, true, false, 800)
		send(ev, false, false, 800)
		for range 3 {
			send(ev, false, true, 800)
		}
	}
	send(1, false, true, 1600) // its start lost: still a key
	send(1, false, true, 1600)
	if string(got) != "44#1" {
		t.Errorf("keys %q, want 44#1", got)
	}
	for body, want := range map[string]byte{"Signal=5\r\nDuration=160": '5', "signal= #\n": '#', "Signal=11": '#', "Duration=160": 0} {
		k, ok := infoKey("application/dtmf-relay", []byte(body))
		if k != want || ok != (want != 0) {
			t.Errorf("%q: %q %v", body, k, ok)
		}
	}
}
