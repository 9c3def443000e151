package voice_test

import (
	"net/http"
	"strings"
	"testing"
	"time"

	"github.com/convengine/engine"
	"github.com/convengine/engine/azurespeech"
	"github.com/convengine/engine/azurespeech/azurespeechtest"
	"github.com/convengine/engine/deepgram"
	"github.com/convengine/engine/deepgram/deepgramtest"
	"github.com/convengine/engine/elevenlabs"
	"github.com/convengine/engine/elevenlabs/elevenlabstest"
	"github.com/convengine/engine/enginetest"
)

const (
	deepgramKey   = "dg-voice-test-key"
	elevenlabsKey = "xi-voice-test-key"
	azureKey      = "az-voice-test-key"
)

// elevenlabsSynth speaks with ElevenLabs' stand-in.
func elevenlabsSynth(t *testing.T) (*elevenlabs.Synthesizer, *elevenlabstest.Server) {
	t.Helper()
	srv := elevenlabstest.New(elevenlabsKey)
	t.Cleanup(srv.Close)
	s, err := elevenlabs.New(&elevenlabs.Options{APIKey: elevenlabsKey, BaseURL: srv.URL, ReadTimeout: time.Second})
	if err != nil {
		t.Fatal(err)
	}
	return s, srv
}

// deepgramHarness serves the voice socket with Deepgram's stand-in as its recogniser.
func deepgramHarness(t *testing.T, dg *deepgramtest.Server, synth engine.Synthesizer) *harness {
	t.Helper()
	tr, err := deepgram.New(&deepgram.Options{APIKey: deepgramKey, BaseURL: dg.URL, FinalTimeout: 300 * time.Millisecond, ReadTimeout: 2 * time.Second})
	if err != nil {
		t.Fatal(err)
	}
	model := &enginetest.ScriptedModel{Steps: [][]engine.ModelEvent{threeSentences(), threeSentences()}}
	h := newHarness(t, engine.Config{Model: model, Transcriber: tr, Synthesizer: synth})
	h.shutdownAtEnd(t)
	return h
}

// The voice socket hears the user with Deepgram's live API while they speak, and answers with
// ElevenLabs' voice over its input stream: the Deepgram stand-in's final result is the turn's
// transcript, the ElevenLabs stand-in's audio, all of the answer's sentences on one stream,
// the answer's. When the live connection fails in any of the ways a
// provider's does, the utterance is heard by the pre-recorded API instead, and the user is
// answered all the same; when that fails too, the user is told transcriber_unavailable.
func TestStreamDeepgram(t *testing.T) {
	for _, tc := range []struct {
		name    string
		fault   deepgramtest.Fault
		status  int
		want    string // the transcript, or the error code
		live    bool   // the live API was used
		message string // the error message's words
	}{
		{name: "live", want: "what is my balance", live: true},
		{name: "finals out of order", fault: deepgramtest.OutOfOrder, want: "what is my balance", live: true},
		{name: "closed mid-utterance", fault: deepgramtest.CloseMidUtterance, want: "what is my balance"},
		{name: "no final", fault: deepgramtest.NoFinal, want: "what is my balance"},
		{name: "429", fault: deepgramtest.Status, status: http.StatusTooManyRequests, want: engine.CodeTranscriberUnavailable, message: "could not be transcribed"},
	} {
		t.Run(tc.name, func(t *testing.T) {
			checkLeaks(t)
			dg := deepgramtest.New(deepgramKey)
			t.Cleanup(dg.Close)
			dg.Fault, dg.Status = tc.fault, tc.status
			live := false
			dg.Hear = func([]int16, int) string { return "what is my balance" }
			synth, xi := elevenlabsSynth(t)
			h := deepgramHarness(t, dg, synth)
			c := h.dial(t, headers())
			c.sendAudio(voiced(16000), nil)
			c.sendAudio(make([]int16, 3200), nil)
			c.send(map[string]any{"type": "end_of_speech"})
			if strings.HasPrefix(tc.want, "transcriber") {
				m := c.expect("error")
				if m.Error.Code != tc.want || !strings.Contains(m.Error.Message, tc.message) || strings.Contains(string(m.raw), deepgramKey) {
					t.Errorf("error %s", m.raw)
				}
				return
			}
			r := c.turn()
			if r.transcript != tc.want || r.sampleRate != elevenlabs.SampleRate {
				t.Errorf("heard %q, answered at %d Hz, want %q", r.transcript, r.sampleRate, tc.want)
			}
			said := 0
			for _, text := range xi.Texts() {
				said += len(elevenlabstest.Tone(len([]rune(text)))) / 2
			}
			if said == 0 || len(r.audio) != said || xi.Streams() != 1 {
				t.Errorf("%d samples of answer, want the %d ElevenLabs spoke for %q over one input stream (%d)", len(r.audio), said, xi.Texts(), xi.Streams())
			}
			prerecorded := 0
			for _, q := range dg.Queries() {
				if strings.Contains(q, "interim_results=true") {
					live = true
				} else {
					prerecorded++
				}
			}
			if !live || (tc.live != (prerecorded == 0)) {
				t.Errorf("live API used: %v; pre-recorded requests: %d", live, prerecorded)
			}
		})
	}
}

// The voice socket heard and answered by Azure's stand-in: the utterance's transcript is
// Azure's and the answer is spoken in Azure's voice. When Azure answers 401, 429 or 5xx, stalls
// or answers past its bound, the user is told transcriber_unavailable, and the socket stays.
func TestStreamAzure(t *testing.T) {
	for _, tc := range []struct {
		name   string
		fault  azurespeechtest.Fault
		status int
	}{
		{name: "heard"},
		{"401", azurespeechtest.None, http.StatusUnauthorized},
		{"429", azurespeechtest.Status, http.StatusTooManyRequests},
		{"503", azurespeechtest.Status, http.StatusServiceUnavailable},
		{"stall", azurespeechtest.Stall, 0},
		{"too long", azurespeechtest.Long, 0},
	} {
		t.Run(tc.name, func(t *testing.T) {
			checkLeaks(t)
			az := azurespeechtest.New(azureKey)
			t.Cleanup(az.Close)
			az.Fault, az.Status = tc.fault, tc.status
			if tc.status == http.StatusUnauthorized {
				az.Key = "another"
			}
			o := &azurespeech.Options{Key: azureKey, Endpoint: az.URL, Timeout: 300 * time.Millisecond, ReadTimeout: 300 * time.Millisecond}
			tr, _ := azurespeech.NewTranscriber(o)
			synth, _ := azurespeech.NewSynthesizer(o)
			model := &enginetest.ScriptedModel{Steps: [][]engine.ModelEvent{threeSentences()}}
			h := newHarness(t, engine.Config{Model: model, Transcriber: tr, Synthesizer: synth})
			h.shutdownAtEnd(t)
			c := h.dial(t, headers())
			c.sendAudio(voiced(16000), nil)
			c.send(map[string]any{"type": "end_of_speech"})
			if tc.name != "heard" {
				m := c.expect("error")
				if m.Error.Code != engine.CodeTranscriberUnavailable || !m.Error.Retryable || strings.Contains(string(m.raw), azureKey) {
					t.Errorf("error %s", m.raw)
				}
				return
			}
			r := c.turn()
			said := 0
			for _, q := range az.Requests() {
				said += len(azurespeechtest.Tone(len([]rune(q.Text)))) / 2
			}
			if r.transcript != "what is my balance" || r.sampleRate != azurespeech.SampleRate || len(r.audio) != said || said == 0 {
				t.Errorf("heard %q, answered %d samples at %d Hz, want the %d Azure spoke", r.transcript, len(r.audio), r.sampleRate, said)
			}
		})
	}
}
