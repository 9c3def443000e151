package sip_test

import (
	"strings"
	"testing"
	"time"

	"github.com/convengine/engine/deepgram"
	"github.com/convengine/engine/deepgram/deepgramtest"
	"github.com/convengine/engine/internal/testkit"
	"github.com/convengine/engine/telephony"
)

// TestSIPCallHeardWhileSpoken: a SIP call's utterance is heard by a streaming recogniser
// (Deepgram's live API, played by its stand-in) while it is spoken, as a Twilio call's is: one
// live request at 16 kHz, none pre-recorded, the turn answering its transcript.
func TestSIPCallHeardWhileSpoken(t *testing.T) {
	const key = "dg-sip-test-key"
	dg := deepgramtest.New(key)
	t.Cleanup(dg.Close)
	dg.Hear = func([]int16, int) string { return "what is my balance" }
	tr, err := deepgram.New(&deepgram.Options{APIKey: key, BaseURL: dg.URL, FinalTimeout: 300 * time.Millisecond, ReadTimeout: 2 * time.Second})
	if err != nil {
		t.Fatal(err)
	}
	cfg := testkit.FakeSpeech("")
	cfg.Transcriber = tr
	h := newSIP(t, cfg, telephony.Options{EndOfSpeech: 300 * time.Millisecond}, "")
	c := h.dial(t, newPhoneUA(t))
	typed := time.Now()
	c.keys(testkit.PhonePIN + "#")
	c.waitAnswer(typed, 300*time.Millisecond, 10*time.Second)
	c.say(testkit.Voiced(16000))
	c.waitAnswer(time.Time{}, 300*time.Millisecond, 15*time.Second)
	c.hangUp()
	f := h.figures(t)
	q := dg.Queries()
	if len(q) != 1 || !strings.Contains(q[0], "interim_results=true") || !strings.Contains(q[0], "sample_rate=16000") {
		t.Errorf("Deepgram was asked %q, want one live request at 16 kHz", q)
	}
	if f.Turns != 1 || f.HeardWhileSpoken != 1 {
		t.Errorf("figures: %d turns, %d heard while spoken\n%s", f.Turns, f.HeardWhileSpoken, h.Demo.Logs.String())
	}
	if seen := h.Spy.String(); !strings.Contains(seen, "Input:what is my balance") {
		t.Errorf("the record holds no balance turn:\n%s", seen)
	}
}
