package main

import (
	"encoding/base64"
	"io"
	"net/http"
	"strings"
	"testing"

	"github.com/convengine/engine"
	"github.com/convengine/engine/audio"
	"github.com/convengine/engine/deepgram/deepgramtest"
	"github.com/convengine/engine/elevenlabs"
	"github.com/convengine/engine/elevenlabs/elevenlabstest"
	"github.com/convengine/engine/internal/testkit"
)

// With DEEPGRAM_API_KEY and ELEVENLABS_API_KEY, the demo tenant is heard by Deepgram and
// answered by ElevenLabs (here their stand-ins, at DEEPGRAM_BASE_URL and ELEVENLABS_BASE_URL):
// an audio turn's transcript is Deepgram's, and the tts endpoint speaks ElevenLabs' audio.
// When ElevenLabs fails, the offline voice speaks instead; the keys never reach the logs.
func TestCloudSpeech(t *testing.T) {
	dg := deepgramtest.New("dg-key-from-env")
	defer dg.Close()
	dg.Hear = func([]int16, int) string { return "What is my balance?" }
	xi := elevenlabstest.New("xi-key-from-env")
	defer xi.Close()
	base, _, logs := startServerLogs(t, nil, map[string]string{
		"DEEPGRAM_API_KEY": "dg-key-from-env", "DEEPGRAM_BASE_URL": dg.URL,
		"ELEVENLABS_API_KEY": "xi-key-from-env", "ELEVENLABS_BASE_URL": xi.URL,
	})

	wav := audio.EncodeWAV(testkit.Voiced(16000), 16000)
	_, spec := turn(t, base, "prod-cloud-1", `{"audio_base64":"`+base64.StdEncoding.EncodeToString(wav)+`"}`)
	if spec.Meta.Transcript != "What is my balance?" || !strings.Contains(spec.Speak, "$") {
		t.Errorf("heard %q, answered %q", spec.Meta.Transcript, spec.Speak)
	}
	if q := dg.Queries(); len(q) != 1 || !strings.Contains(q[0], "keyterm=") {
		t.Errorf("Deepgram was asked %q, want one pre-recorded request with the demo's keyterms", q)
	}

	tts := func() (int, string, int) {
		resp, err := http.DefaultClient.Do(demoRequest(t, http.MethodPost, base+engine.PathTTS, `{"text":"Welcome to Demo Bank."}`))
		if err != nil {
			t.Fatal(err)
		}
		defer resp.Body.Close()
		b, _ := io.ReadAll(resp.Body)
		h, err := audio.ReadWAVHeader(strings.NewReader(string(b)))
		if err != nil {
			return resp.StatusCode, err.Error(), 0
		}
		return resp.StatusCode, "", h.SampleRate
	}
	if status, msg, rate := tts(); status != 200 || rate != elevenlabs.SampleRate || len(xi.Texts()) != 1 {
		t.Errorf("tts: %d %s at %d Hz; ElevenLabs said %q", status, msg, rate, xi.Texts())
	}
	xi.Fault, xi.Status = elevenlabstest.Status, http.StatusTooManyRequests
	if status, msg, _ := tts(); status != 200 {
		t.Errorf("tts with ElevenLabs at 429: %d %s, want the offline voice's audio", status, msg)
	}
	for _, k := range []string{"dg-key-from-env", "xi-key-from-env"} {
		if strings.Contains(logs.String(), k) {
			t.Errorf("the key %s is in the logs", k)
		}
	}
}
