package sip_test

import (
	"testing"
	"time"

	"github.com/convengine/engine"
	"github.com/convengine/engine/internal/testkit"
	"github.com/convengine/engine/telephony"
)

// BenchmarkSIPFirstAudio asks the balance by voice, again and again on one SIP call of
// espeak-ng's speech heard by pocketsphinx, diago the caller on loopback, and reports the time
// from the end of the caller's speech (as the engine's detector heard it) to the answer's
// first audio queued for the RTP writer, which sends it within 20 ms.
//
//	go test -run '^$' -bench SIPFirstAudio -benchtime 30x ./telephony/sip/
func BenchmarkSIPFirstAudio(b *testing.B) {
	h := newSIP(b, engine.Config{}, telephony.Options{EndOfSpeech: 500 * time.Millisecond}, "")
	balance := testkit.Say(b, "What is my balance?")
	c := h.dial(b, newPhoneUA(b))
	typed := time.Now()
	c.keys(testkit.PhonePIN + "#")
	c.waitAnswer(typed, 700*time.Millisecond, 30*time.Second)
	for b.Loop() {
		c.say(balance)
		c.waitAnswer(time.Time{}, 500*time.Millisecond, 20*time.Second)
	}
	b.StopTimer()
	c.hangUp()
	f := h.figures(b)
	b.ReportMetric(float64(telephony.Percentile(f.FirstAudio, 50).Milliseconds()), "p50-ms")
	b.ReportMetric(float64(telephony.Percentile(f.FirstAudio, 99).Milliseconds()), "p99-ms")
	b.ReportMetric(float64(len(f.FirstAudio)), "answers")
}

// BenchmarkSIPCallsHeld holds b.N SIP calls at once, each verified and sending a 20 ms RTP
// packet every 20 ms both ways, for 10 seconds, and reports the CPU one call costs and how
// many calls two cores hold at that rate. The callers (diago) run in the same process: their
// cost is counted too, so the figure is a floor.
//
//	go test -run '^$' -bench SIPCallsHeld -benchtime 200x ./telephony/sip/
func BenchmarkSIPCallsHeld(b *testing.B) {
	h := newSIP(b, testkit.FakeSpeech("what is my balance"), telephony.Options{Calls: telephony.NewCalls(-1, 0, 0)}, "")
	p := newPhoneUA(b)
	calls := testkit.DialAll(b.N, func(int) *phoneCall {
		c := h.dial(b, p)
		c.keys(testkit.PhonePIN + "#")
		return c
	})
	time.Sleep(3 * time.Second) // greetings played, PINs verified
	testkit.ReportCallsHeld(b, b.N, 10*time.Second)
	for _, c := range calls {
		c.hangUp()
	}
}
