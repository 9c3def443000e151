package twilio_test

import (
	"strings"
	"testing"
	"time"

	"github.com/convengine/engine/deepgram"
	"github.com/convengine/engine/deepgram/deepgramtest"
	"github.com/convengine/engine/internal/testkit"
	"github.com/convengine/engine/telephony"
)

const deepgramKey = "dg-phone-test-key"

// TestTwilioCallHeardWhileSpoken: with a streaming recogniser (Deepgram's live API, played by
// its stand-in), a caller's utterance is heard while it is spoken: the live API gets the line's
// audio brought up to 16 kHz, the turn answers its transcript, no pre-recorded request is made,
// and the call's figures count the turn. When the live connection breaks mid-utterance, the
// utterance is heard by the pre-recorded API and answered all the same.
func TestTwilioCallHeardWhileSpoken(t *testing.T) {
	for i, tc := range []struct {
		name  string
		fault deepgramtest.Fault
		live  bool
	}{
		{name: "live", live: true},
		{name: "closed mid-utterance", fault: deepgramtest.CloseMidUtterance},
	} {
		t.Run(tc.name, func(t *testing.T) {
			dg := deepgramtest.New(deepgramKey)
			t.Cleanup(dg.Close)
			dg.Fault = tc.fault
			rates := make(chan int, 8)
			dg.Hear = func(pcm []int16, rate int) string {
				select {
				case rates <- rate:
				default:
				}
				return "what is my balance"
			}
			tr, err := deepgram.New(&deepgram.Options{APIKey: deepgramKey, BaseURL: dg.URL, FinalTimeout: 300 * time.Millisecond, ReadTimeout: 2 * time.Second})
			if err != nil {
				t.Fatal(err)
			}
			cfg := testkit.FakeSpeech("")
			cfg.Transcriber = tr
			h := newPhone(t, cfg, telephony.Options{EndOfSpeech: 300 * time.Millisecond})
			c := h.call(t, sid(20+i), caller)
			typed := time.Now()
			c.keys(pin + "#")
			c.waitAnswer(typed, 300*time.Millisecond, 10*time.Second)
			if q := dg.Queries(); len(q) != 0 {
				t.Fatalf("the recogniser heard the call before the caller was verified: %q", q)
			}

			c.say(testkit.Voiced(16000))
			c.waitAnswer(time.Time{}, 300*time.Millisecond, 15*time.Second)
			if seen := h.spy.String(); !strings.Contains(seen, "Input:what is my balance") || !strings.Contains(seen, "1,234.56") {
				t.Fatalf("the record holds no answered balance turn:\n%s\nthe engine logged:\n%s", seen, h.demo.Logs.String())
			}
			live, prerecorded := 0, 0
			for _, q := range dg.Queries() {
				switch {
				case strings.Contains(q, "interim_results=true") && strings.Contains(q, "sample_rate=16000"):
					live++
				case strings.Contains(q, "interim_results=true"):
					t.Errorf("a live request not at 16 kHz: %s", q)
				default:
					prerecorded++
				}
			}
			if live != 1 || tc.live != (prerecorded == 0) {
				t.Errorf("live requests %d, pre-recorded %d (%q)", live, prerecorded, dg.Queries())
			}

			c.hangUp()
			select {
			case f := <-h.figures:
				if tc.live && (f.Turns != 1 || f.HeardWhileSpoken != 1) {
					t.Errorf("figures: %d turns, %d heard while spoken", f.Turns, f.HeardWhileSpoken)
				}
			case <-time.After(10 * time.Second):
				t.Fatal("the call's figures did not come")
			}
			if got := <-rates; got != 16000 {
				t.Errorf("the recogniser heard the line at %d Hz", got)
			}
			h.PINNowhere(t, "what is my balance")
		})
	}
}

// TestTwilioHangUpMidUtterance: a caller who hangs up while speaking leaves no connection to the
// streaming recogniser open, and gives back its place among the calls' recogniser streams (two
// a call: with room for one call, two such calls would otherwise leave none for the next).
func TestTwilioHangUpMidUtterance(t *testing.T) {
	dg := deepgramtest.New(deepgramKey)
	t.Cleanup(dg.Close)
	tr, err := deepgram.New(&deepgram.Options{APIKey: deepgramKey, BaseURL: dg.URL, FinalTimeout: 300 * time.Millisecond, ReadTimeout: 2 * time.Second})
	if err != nil {
		t.Fatal(err)
	}
	cfg := testkit.FakeSpeech("")
	cfg.Transcriber = tr
	h := newPhone(t, cfg, telephony.Options{EndOfSpeech: 300 * time.Millisecond, Calls: telephony.NewCalls(1, 0, 0)})
	verified := func(n int) *fakeCall {
		c := h.call(t, sid(n), caller) // the call before gave its place back with its figures
		typed := time.Now()
		c.keys(pin + "#")
		c.waitAnswer(typed, 300*time.Millisecond, 10*time.Second)
		return c
	}
	for n := range 2 {
		c := verified(30 + n)
		c.say(testkit.Voiced(5 * 16000))
		testkit.Poll(t, 5*time.Second, "the live recognition's start", func() bool { return dg.Live() == 1 })
		c.hangUp()
		testkit.Poll(t, 5*time.Second, "the live connection's end", func() bool { return dg.Live() == 0 })
		select {
		case <-h.figures:
		case <-time.After(10 * time.Second):
			t.Fatal("the call's figures did not come")
		}
	}
	c := verified(32)
	c.say(testkit.Voiced(16000))
	c.waitAnswer(time.Time{}, 300*time.Millisecond, 15*time.Second)
	c.hangUp()
	live := 0
	for _, q := range dg.Queries() {
		if strings.Contains(q, "interim_results=true") {
			live++
		}
	}
	if live != 3 {
		t.Errorf("%d utterances heard while spoken, want 3: a call that hung up kept its place (%q)", live, dg.Queries())
	}
}
