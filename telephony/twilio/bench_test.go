package twilio_test

import (
	"testing"
	"time"

	"github.com/convengine/engine"
	"github.com/convengine/engine/deepgram"
	"github.com/convengine/engine/deepgram/deepgramtest"
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

// BenchmarkPhoneFirstAudioDeepgram is BenchmarkPhoneFirstAudio heard by Deepgram's stand-in,
// live (the call's utterance streamed while spoken; the final result 50 ms after Finalize) and
// batch (the same transcriber with its streaming hidden: the pre-recorded API, answering in
// 500 ms), with the same latencies as the voice socket's figure (docs/benchmarks.md#voice) and a
// synthesizer of tones, so that the recogniser is what differs.
//
//	go test -run '^$' -bench PhoneFirstAudioDeepgram -benchtime 20x ./telephony/twilio/
func BenchmarkPhoneFirstAudioDeepgram(b *testing.B) {
	for _, live := range []bool{true, false} {
		name := map[bool]string{true: "live", false: "batch"}[live]
		b.Run(name, func(b *testing.B) {
			dg := deepgramtest.New(deepgramKey)
			b.Cleanup(dg.Close)
			dg.Hear = func([]int16, int) string { return "what is my balance" }
			dg.FinalLatency, dg.PrerecordedLatency = 50*time.Millisecond, 500*time.Millisecond
			tr, err := deepgram.New(&deepgram.Options{APIKey: deepgramKey, BaseURL: dg.URL})
			if err != nil {
				b.Fatal(err)
			}
			cfg := testkit.FakeSpeech("")
			cfg.Transcriber = tr
			if !live {
				cfg.Transcriber = batchOnly{tr}
			}
			h := newPhone(b, cfg, telephony.Options{EndOfSpeech: 500 * time.Millisecond})
			c := h.call(b, sid(40), caller)
			typed := time.Now()
			c.keys(pin + "#")
			c.waitAnswer(typed, 300*time.Millisecond, 10*time.Second)
			for b.Loop() {
				c.say(testkit.Voiced(16000))
				c.waitAnswer(time.Time{}, 300*time.Millisecond, 20*time.Second)
			}
			b.StopTimer()
			c.hangUp()
			f := <-h.figures
			b.ReportMetric(float64(telephony.Percentile(f.FirstAudio, 50).Milliseconds()), "p50-ms")
			b.ReportMetric(float64(telephony.Percentile(f.FirstAudio, 99).Milliseconds()), "p99-ms")
			b.ReportMetric(float64(f.HeardWhileSpoken), "streamed")
		})
	}
}

// batchOnly is a transcriber with its streaming hidden.
type batchOnly struct{ engine.Transcriber }
