package main

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"log/slog"
	"strings"

	"github.com/convengine/engine"
	"github.com/convengine/engine/deepgram"
	"github.com/convengine/engine/elevenlabs"
)

// addCloudSpeech puts the cloud speech providers the environment turns on in front of m's
// speech, which becomes their fallback: Deepgram for recognition with DEEPGRAM_API_KEY,
// ElevenLabs for voices with ELEVENLABS_API_KEY (ELEVENLABS_VOICE_ID, else a stock voice), each
// at its *_BASE_URL when set. Keys come from the environment only.
func (m *models) addCloudSpeech(mode string, getenv func(string) string, log *slog.Logger) error {
	if mode == "off" {
		return nil
	}
	if key := getenv("DEEPGRAM_API_KEY"); key != "" {
		dg, err := deepgram.New(&deepgram.Options{APIKey: engine.Secret(key), BaseURL: getenv("DEEPGRAM_BASE_URL"), Keyterms: keyterms})
		if err != nil {
			return fmt.Errorf("DEEPGRAM_BASE_URL: %w", err)
		}
		log.Info("speech recognition: Deepgram, live while the user speaks", "fallback", m.transcriber != nil)
		m.transcriber = &recognizers{list: compact[engine.Transcriber](dg, m.transcriber), names: []string{"deepgram", "fallback"}, log: log}
	}
	if key := getenv("ELEVENLABS_API_KEY"); key != "" {
		el, err := elevenlabs.New(&elevenlabs.Options{APIKey: engine.Secret(key), BaseURL: getenv("ELEVENLABS_BASE_URL"), Voice: getenv("ELEVENLABS_VOICE_ID")})
		if err != nil {
			return fmt.Errorf("ELEVENLABS_BASE_URL, ELEVENLABS_VOICE_ID: %w", err)
		}
		log.Info("speech synthesis: ElevenLabs", "fallback", m.synthesizer != nil)
		m.synthesizer = &synthesizers{cloud: el, name: "elevenlabs", next: m.synthesizer, log: log}
	}
	return nil
}

func compact[T comparable](list ...T) []T {
	var zero T
	out := list[:0]
	for _, v := range list {
		if v != zero {
			out = append(out, v)
		}
	}
	return out
}

// keyterms are what Deepgram is told to listen for in a tenant's speech: the values of its
// intents' slots (payees, accounts) and their synonyms, as the grammar does for pocketsphinx.
func keyterms(t *engine.Tenant) []string {
	var cfg struct {
		Intents []struct {
			Slots map[string]struct {
				Values   []string            `json:"values"`
				Synonyms map[string][]string `json:"synonyms"`
			} `json:"slots"`
		} `json:"intents"`
	}
	if len(t.Intents) == 0 || json.Unmarshal(t.Intents, &cfg) != nil {
		return nil
	}
	seen := map[string]bool{}
	var out []string
	add := func(s string) {
		if s = strings.TrimSpace(s); s != "" && !seen[strings.ToLower(s)] && len(out) < 100 {
			seen[strings.ToLower(s)] = true
			out = append(out, s)
		}
	}
	for _, in := range cfg.Intents {
		for _, slot := range in.Slots {
			for _, v := range slot.Values {
				add(v)
			}
			for v, syn := range slot.Synonyms {
				add(v)
				for _, s := range syn {
					add(s)
				}
			}
		}
	}
	return out
}

// recognizers hear with the first of list that answers: a provider that fails hands the audio
// to the next, as models do. Streaming recognition is the first's, when it streams; when its
// stream fails, the engine transcribes the recording, through the whole list.
type recognizers struct {
	list  []engine.Transcriber
	names []string
	log   *slog.Logger
}

// final reports whether err is the answer rather than a provider's failure.
func final(ctx context.Context, err error) bool {
	return err == nil || ctx.Err() != nil || errors.Is(err, engine.ErrNotUnderstood)
}

func (r *recognizers) Transcribe(ctx context.Context, pcm []int16, rate int, locale string) (string, error) {
	return r.TranscribeFor(ctx, nil, pcm, rate, locale)
}

func (r *recognizers) TranscribeFor(ctx context.Context, t *engine.Tenant, pcm []int16, rate int, locale string) (string, error) {
	var err error
	for i, tr := range r.list {
		var text string
		if tt, ok := tr.(engine.TenantTranscriber); ok && t != nil {
			text, err = tt.TranscribeFor(ctx, t, pcm, rate, locale)
		} else {
			text, err = tr.Transcribe(ctx, pcm, rate, locale)
		}
		if final(ctx, err) || i == len(r.list)-1 {
			return text, err
		}
		r.log.WarnContext(ctx, "speech recognition failed; trying the next recogniser", "recognizer", r.names[i], "err", err)
	}
	return "", err
}

func (r *recognizers) Listen(ctx context.Context, t *engine.Tenant, rate int, locale string) (engine.Listening, error) {
	if st, ok := r.list[0].(engine.StreamingTranscriber); ok {
		return st.Listen(ctx, t, rate, locale)
	}
	return nil, nil
}

// synthesizers speak with the cloud voice, and with next when it fails. A voice written
// "elevenlabs:<voice id>" (a tenant's voice) is the cloud's; next speaks its own voices, and
// its default voice in place of the cloud's.
type synthesizers struct {
	cloud engine.Synthesizer
	name  string
	next  engine.Synthesizer
	log   *slog.Logger
}

func (s *synthesizers) Synthesize(ctx context.Context, text, voice string) (*engine.Audio, error) {
	cloudVoice, named := strings.CutPrefix(voice, s.name+":")
	if !named && voice != "" && s.next != nil {
		return s.next.Synthesize(ctx, text, voice) // a voice of the offline engines
	}
	a, err := s.cloud.Synthesize(ctx, text, cloudVoice)
	if err == nil || ctx.Err() != nil || s.next == nil || errors.Is(err, engine.ErrUnknownVoice) {
		return a, err
	}
	s.log.WarnContext(ctx, "speech synthesis failed; speaking with the offline voice", "synthesizer", s.name, "err", err)
	return s.next.Synthesize(ctx, text, "")
}

func (s *synthesizers) VoiceFor(locale string) string {
	return "" // the cloud voice (ELEVENLABS_VOICE_ID) speaks every language
}
