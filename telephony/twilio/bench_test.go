package twilio_test

import (
	"testing"
	"time"

	"github.com/convengine/engine"
	"github.com/convengine/engine/internal/testkit"
	"github.com/convengine/engine/telephony"
)

// BenchmarkPhoneFirstAudio asks the balance by voice, again and again on one call of
// espeak-ng's speech heard by pocketsphinx, and reports the time from the end of the caller's
// speech (as the engine's detector heard it) to the answer's first audio sent down the line.
//
//	go test -run '^$' -bench PhoneFirstAudio -benchtime 30x ./telephony/twilio/
func BenchmarkPhoneFirstAudio(b *testing.B) {
	h := newPhone(b, engine.Config{}, telephony.Options{EndOfSpeech: 500 * time.Millisecond})
	balance := testkit.Say(b, "What is my balance?")
	c := h.call(b, sid(10), caller)
	typed := time.Now()
	c.keys(pin + "#")
	c.waitAnswer(typed, 500*time.Millisecond, 30*time.Second)
	for b.Loop() {
		c.say(balance)
		c.waitAnswer(time.Time{}, 300*time.Millisecond, 20*time.Second)
	}
	b.StopTimer()
	c.hangUp()
	f := <-h.figures
	b.ReportMetric(float64(telephony.Percentile(f.FirstAudio, 50).Milliseconds()), "p50-ms")
	b.ReportMetric(float64(telephony.Percentile(f.FirstAudio, 99).Milliseconds()), "p99-ms")
	b.ReportMetric(float64(len(f.FirstAudio)), "answers")
}

// BenchmarkPhoneCallsHeld holds b.N calls at once, each verified and sending 20 ms of audio
// every 20 ms both ways as Twilio does, for 10 seconds, and reports the CPU one call costs and
// how many calls two cores hold at that rate. The fake Twilio runs in the same process: its
// cost is counted too, so the figure is a floor.
//
//	go test -run '^$' -bench PhoneCallsHeld -benchtime 200x ./telephony/twilio/
func BenchmarkPhoneCallsHeld(b *testing.B) {
	h := newPhone(b, testkit.FakeSpeech("what is my balance"), telephony.Options{Calls: telephony.NewCalls(-1, 0, 0)})
	calls := testkit.DialAll(b.N, func(i int) *fakeCall {
		c := h.call(b, sid(1000+i), caller)
		c.keys(pin + "#")
		return c
	})
	time.Sleep(3 * time.Second) // greetings played, PINs verified
	testkit.ReportCallsHeld(b, b.N, 10*time.Second)
	for _, c := range calls {
		c.hangUp()
	}
}
