package main

import (
	"encoding/json"
	"math"
	"testing"

	"github.com/convengine/engine/widgets"
)

// tone is a 440 Hz sine of amplitude amp, with a second of silence after it that the SNR
// must not count as speech.
func tone(amp float64) []int16 {
	pcm := make([]int16, 2*sampleRate)
	for i := range sampleRate {
		pcm[i] = int16(amp * math.Sin(2*math.Pi*440*float64(i)/sampleRate))
	}
	return pcm
}

func TestNoiseSNR(t *testing.T) {
	speech := tone(8000)
	if got, want := voicedRMS(speech), 8000/math.Sqrt2; math.Abs(got-want) > 1 {
		t.Fatalf("voiced RMS %.1f, want %.1f", got, want)
	}
	for _, c := range allConditions {
		t.Run(c.Name, func(t *testing.T) {
			out := c.apply(speech, "seed")
			pad := int(c.Pad * sampleRate)
			if len(out) != len(speech)+2*pad {
				t.Fatalf("%d samples, want %d", len(out), len(speech)+2*pad)
			}
			var signal, noise float64
			for i, s := range out {
				var clean float64
				if j := i - pad; j >= 0 && j < len(speech) {
					clean = float64(speech[j])
				}
				signal += clean * clean
				noise += (float64(s) - clean) * (float64(s) - clean)
			}
			if c.SNR == 0 {
				if noise != 0 {
					t.Errorf("noise energy %.0f in a quiet condition", noise)
				}
				return
			}
			// The SNR is over the voiced half: its energy against the noise's per sample.
			voiced := signal / sampleRate
			snr := 10 * math.Log10(voiced/(noise/float64(len(out))))
			if math.Abs(snr-c.SNR) > 0.2 {
				t.Errorf("SNR %.2f dB, want %.0f", snr, c.SNR)
			}
			if again := c.apply(speech, "seed"); !equal(again, out) {
				t.Error("the same seed gave other noise")
			}
			if other := c.apply(speech, "other"); equal(other, out) {
				t.Error("another seed gave the same noise")
			}
		})
	}
}

func equal(a, b []int16) bool {
	if len(a) != len(b) {
		return false
	}
	for i := range a {
		if a[i] != b[i] {
			return false
		}
	}
	return true
}

func TestScore(t *testing.T) {
	lines := answerLines{Help: "I can help.", Ask: "How much, and to whom?"}
	spec := func(js string) Answer {
		var s widgets.Spec
		if err := json.Unmarshal([]byte(js), &s); err != nil {
			t.Fatal(err)
		}
		return Answer{Status: 200, Spec: s}
	}
	confirm := func(args string) Answer {
		return spec(`{"speak":"I can send it.","widgets":[{"type":"confirm","id":"a1","title":"Send money","body":"b",
			"confirmLabel":"Send","cancelLabel":"Cancel","expiresAt":"2030-01-01T00:00:00Z",
			"execute":{"tool":"transfer","arguments":` + args + `,"token":"tok"}}],"meta":{"transcript":"heard"}}`)
	}
	stat := spec(`{"speak":"You have $5.","widgets":[{"type":"stat","label":"Checking","value":"$5"}],"meta":{"transcript":"what's my balance"}}`)
	home := spec(`{"speak":"Hi!","widgets":[{"type":"stat","label":"Checking","value":"$5"},{"type":"progress","label":"Trip","value":0.5}],"meta":{"transcript":"overview"}}`)
	help := spec(`{"speak":"I can help.","widgets":[],"meta":{"transcript":"tell me a joke"}}`)
	ask := spec(`{"speak":"How much, and to whom?","widgets":[],"meta":{"transcript":"send money"}}`)
	unclear := spec(`{"speak":"Sorry, I didn't catch that. Could you say it again?","widgets":[],"meta":{"transcript":""}}`)
	noSpeech := Answer{Status: 422, Problem: "no_speech"}

	send := transfer(kindDemo, "send twelve dollars and fifty cents to jordan", 1250, "Jordan")
	for _, tc := range []struct {
		name     string
		u        Utterance
		a        Answer
		got      string
		intentOK bool
		argsOK   bool
		noAnswer bool
		falseAct bool
	}{
		{"balance", demo(intentBalance, "what's my balance"), stat, intentBalance, true, false, false, false},
		{"balance heard as home", demo(intentBalance, "what's my balance"), home, intentHome, false, false, false, false},
		{"transfer exact", send, confirm(`{"amount":12.5,"to":"Jordan"}`), intentTransfer, true, true, false, false},
		{"transfer as a string", send, confirm(`{"amount":"12.50","to":"jordan"}`), intentTransfer, true, true, false, false},
		{"transfer wrong amount", send, confirm(`{"amount":12,"to":"Jordan"}`), intentTransfer, true, false, false, false},
		{"transfer wrong payee", send, confirm(`{"amount":12.5,"to":"Sam"}`), intentTransfer, true, false, false, false},
		{"transfer asked", send, ask, gotAsk, true, false, false, false},
		{"send money asked", demo(intentTransfer, "send money"), ask, gotAsk, true, false, false, false},
		{"send money confirmed", demo(intentTransfer, "send money"), confirm(`{"amount":20,"to":"Alex"}`), intentTransfer, false, false, false, false},
		{"help", demo(intentHelp, "help"), help, intentHelp, true, false, false, false},
		{"off-topic as help", offTopic("tell me a joke"), help, intentHelp, true, false, false, false},
		{"off-topic unclear", offTopic("tell me a joke"), unclear, gotNoAnswer, true, false, true, false},
		{"off-topic no speech", offTopic("tell me a joke"), noSpeech, gotNoAnswer, true, false, true, false},
		{"off-topic as balance", offTopic("tell me a joke"), stat, intentBalance, false, false, false, false},
		{"off-topic as a transfer", offTopic("send a message to alex"), confirm(`{"amount":1,"to":"Alex"}`), intentTransfer, false, false, false, true},
		{"balance unheard", demo(intentBalance, "balance please"), noSpeech, gotNoAnswer, false, false, true, false},
	} {
		t.Run(tc.name, func(t *testing.T) {
			s := lines.score(tc.u, tc.a)
			if s.Got != tc.got || s.IntentOK != tc.intentOK || s.ArgsOK != tc.argsOK || s.NoAnswer != tc.noAnswer || s.FalseAction != tc.falseAct {
				t.Errorf("got %s intent %v args %v no answer %v false action %v; want %s %v %v %v %v", s.Got, s.IntentOK, s.ArgsOK,
					s.NoAnswer, s.FalseAction, tc.got, tc.intentOK, tc.argsOK, tc.noAnswer, tc.falseAct)
			}
		})
	}
}

// TestDemoLines checks that the scorer finds the demo's help answer and transfer question.
func TestDemoLines(t *testing.T) {
	l, err := demoLines()
	if err != nil {
		t.Fatal(err)
	}
	if l.Help == "" || l.Ask == "" {
		t.Fatalf("%+v", l)
	}
}

func TestUtterances(t *testing.T) {
	seen := map[string]bool{}
	quickN := 0
	for _, u := range utterances {
		if seen[u.Text] {
			t.Errorf("%q twice", u.Text)
		}
		seen[u.Text] = true
		quickN += map[bool]int{true: 1}[u.Quick]
		if u.Intent == intentTransfer && (u.Cents > 0) != (u.To != "") {
			t.Errorf("%q: a transfer names both its amount and payee or neither", u.Text)
		}
	}
	if len(utterances) < 60 || quickN < 15 || quickN > 25 {
		t.Errorf("%d utterances, %d quick", len(utterances), quickN)
	}
}
