package telephony_test

import (
	"context"
	"strings"
	"testing"

	"github.com/convengine/engine/audio"
	"github.com/convengine/engine/examples/demobank"
	"github.com/convengine/engine/internal/testkit"
)

// demoPhrases are what the demo's callers say, and what the recogniser should hear.
var demoPhrases = []struct{ say, heard string }{
	{"What is my balance?", "what is my balance"},
	{"Show my recent transactions", "show my recent transactions"},
	{"How close am I to my savings goal?", "how close am i to my savings goal"},
	{"Send 20 dollars to Alex", "send twenty dollars to alex"},
	{"I want to talk to a person", "i want to talk to a person"},
	{"What can you do?", "what can you do"},
}

// BenchmarkPhoneRecognition measures how many demo phrases pocketsphinx hears right from
// espeak-ng's speech at 16 kHz, as the voice socket sends it, and through a phone line: down
// to 8 kHz, μ-law both ways, and up to 16 kHz again with the same filter.
//
//	go test -run '^$' -bench PhoneRecognition -benchtime 1x ./telephony/
func BenchmarkPhoneRecognition(b *testing.B) {
	tenant, err := demobank.Tenant("http://127.0.0.1:1", "")
	if err != nil {
		b.Fatal(err)
	}
	rec := testkit.Sphinx(b)
	for b.Loop() {
		var wide, phone int
		for _, p := range demoPhrases {
			pcm := testkit.Say(b, p.say)
			line := audio.MuLawDecode(nil, audio.MuLawEncode(nil, audio.Resample(pcm, 16000, 8000)))
			for i, in := range [][]int16{pcm, audio.Resample(line, 8000, 16000)} {
				got, _ := rec.TranscribeFor(context.Background(), tenant, in, 16000, "en-US")
				ok := strings.EqualFold(strings.TrimSpace(got), p.heard)
				if ok && i == 0 {
					wide++
				} else if ok {
					phone++
				}
				b.Logf("%s: %q → %q", []string{"16 kHz", "μ-law 8 kHz"}[i], p.say, got)
			}
		}
		b.ReportMetric(float64(wide)/float64(len(demoPhrases)), "accuracy16k")
		b.ReportMetric(float64(phone)/float64(len(demoPhrases)), "accuracy8k")
	}
}
