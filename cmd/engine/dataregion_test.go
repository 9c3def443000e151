package main

import (
	"context"
	"io"
	"log/slog"
	"strings"
	"sync/atomic"
	"testing"

	"github.com/convengine/engine"
	"github.com/convengine/engine/audio"
	"github.com/convengine/engine/enginetest"
	"github.com/convengine/engine/examples/demobank"
	"github.com/convengine/engine/internal/testkit"
)

// countedSpeech is a recogniser and a voice that count what they were given.
type countedSpeech struct{ heard, said atomic.Int32 }

func (s *countedSpeech) Transcribe(context.Context, []int16, int, string) (string, error) {
	s.heard.Add(1)
	return "what is my balance", nil
}

func (s *countedSpeech) Synthesize(context.Context, string, string) (*engine.Audio, error) {
	s.said.Add(1)
	pcm := audio.AppendPCM(nil, make([]int16, 1600))
	return &engine.Audio{PCM: io.NopCloser(strings.NewReader(string(pcm))), SampleRate: 16000}, nil
}

// TestOpenAISpeechKeepsOutOfDataRegions: when the server's own speech is OpenAI's (the OpenAI
// model brought it), a tenant kept in a data region is heard and spoken to by the offline
// programs, never by OpenAI's, even with -speech off or no cloud provider on; the other tenants
// keep OpenAI's.
func TestOpenAISpeechKeepsOutOfDataRegions(t *testing.T) {
	for _, mode := range []string{"auto", "off"} {
		t.Run(mode, func(t *testing.T) {
			cloud, local := &countedSpeech{}, &countedSpeech{}
			m := models{synthesizer: cloud, transcriber: cloud, ownCloud: true}
			if mode != "off" {
				m.localSay, m.localHear = local, local
			}
			router := newModelRouter(nil, nil, &breakerEvents{})
			router.file.Store(&fileRoutes{regions: map[string]string{"pk_eu": "eu"}})
			if err := m.addCloudSpeech(mode, func(string) string { return "" }, router, slog.New(slog.DiscardHandler)); err != nil {
				t.Fatal(err)
			}
			eu, any := demoTenantKeyed(t, "pk_eu"), demoTenantKeyed(t, "pk_any")
			tenants, _ := engine.NewStaticTenants(eu, any)
			eng, err := engine.New(engine.Config{Tenants: tenants, Model: &enginetest.ScriptedModel{Steps: [][]engine.ModelEvent{enginetest.Text("Hi."), enginetest.Text("Hi.")}}, Synthesizer: m.synthesizer, Transcriber: m.transcriber,
				SigningKey: []byte("a signing key of thirty-two byte"), Logger: slog.New(slog.DiscardHandler)})
			if err != nil {
				t.Fatal(err)
			}
			wav := audio.EncodeWAV(testkit.Voiced(16000), 16000)
			for _, key := range []string{"pk_eu", "pk_any"} {
				caller := &engine.Caller{EngineKey: key, UserToken: "u"}
				eng.Synthesize(t.Context(), caller, "Hello.", "")
				for range eng.Turn(t.Context(), caller, &engine.TurnInput{Audio: wav}) {
				}
			}
			if cloud.said.Load() != 1 || cloud.heard.Load() != 1 {
				t.Errorf("OpenAI's speech said %d and heard %d, want pk_any's alone (1 and 1)", cloud.said.Load(), cloud.heard.Load())
			}
			if want := int32(1); mode == "off" {
				want = 0
				if local.said.Load() != 0 || local.heard.Load() != 0 {
					t.Error("the offline programs spoke with -speech off")
				}
			} else if local.said.Load() != want || local.heard.Load() != want {
				t.Errorf("the offline programs said %d and heard %d for pk_eu, want 1 and 1", local.said.Load(), local.heard.Load())
			}
		})
	}
}

// demoTenantKeyed is the demo tenant under key.
func demoTenantKeyed(t *testing.T, key string) *engine.Tenant {
	t.Helper()
	tn, err := demobank.Tenant("http://127.0.0.1:1", "")
	if err != nil {
		t.Fatal(err)
	}
	tn.Key = key
	return tn
}
