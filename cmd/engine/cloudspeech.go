package main

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"log/slog"
	"slices"
	"strings"

	"github.com/convengine/engine"
	"github.com/convengine/engine/azurespeech"
	"github.com/convengine/engine/deepgram"
	"github.com/convengine/engine/elevenlabs"
	"github.com/convengine/engine/internal/cloudspeech"
	"github.com/convengine/engine/tenantfile"
)

// cloudSpeech is the server's speech: the cloud providers the environment turns on in front of
// its own speech ("offline": the offline pair, or OpenAI's when the OpenAI model brought it),
// chosen for each tenant by its speech section, else all that are on. A provider that fails
// hands over to the next, the server's own last. Keys come from the environment only.
type cloudSpeech struct {
	deepgram    *deepgram.Transcriber
	azureHear   *azurespeech.Transcriber
	azureSpeak  *azurespeech.Synthesizer
	azureRegion string
	elevenlabs  *elevenlabs.Synthesizer
	offlineHear engine.Transcriber
	offlineSay  engine.Synthesizer
	// ownCloud: the server's own speech (offline*) is OpenAI's; a tenant kept in a data region
	// has the offline programs (local*) instead, or no speech.
	ownCloud  bool
	localHear engine.Transcriber
	localSay  engine.Synthesizer
	router    *modelRouter // the tenants file's speech sections and data regions
	log       *slog.Logger
}

// addCloudSpeech puts the cloud speech providers the environment turns on in front of m's
// speech, which becomes their fallback: Deepgram for recognition with DEEPGRAM_API_KEY,
// ElevenLabs for voices with ELEVENLABS_API_KEY (ELEVENLABS_VOICE_ID, else a stock voice), Azure
// for both with AZURE_SPEECH_KEY and AZURE_SPEECH_REGION, each at its *_BASE_URL or
// AZURE_SPEECH_ENDPOINT when set. It checks the tenants file's speech sections against them.
func (m *models) addCloudSpeech(mode string, getenv func(string) string, router *modelRouter, log *slog.Logger) error {
	if mode == "off" && !m.ownCloud {
		return nil
	}
	cs := &cloudSpeech{offlineHear: m.transcriber, offlineSay: m.synthesizer, ownCloud: m.ownCloud,
		localHear: m.localHear, localSay: m.localSay, router: router, log: log}
	if mode == "off" {
		getenv = func(string) string { return "" } // no provider; the tenants' data regions still hold
	}
	var err error
	if key := getenv("DEEPGRAM_API_KEY"); key != "" {
		if cs.deepgram, err = deepgram.New(&deepgram.Options{APIKey: engine.Secret(key), BaseURL: getenv("DEEPGRAM_BASE_URL"), Keyterms: keyterms}); err != nil {
			return fmt.Errorf("DEEPGRAM_BASE_URL: %w", err)
		}
		log.Info("speech recognition: Deepgram, live while the user speaks")
	}
	if key := getenv("ELEVENLABS_API_KEY"); key != "" {
		if cs.elevenlabs, err = elevenlabs.New(&elevenlabs.Options{APIKey: engine.Secret(key), BaseURL: getenv("ELEVENLABS_BASE_URL"), Voice: getenv("ELEVENLABS_VOICE_ID")}); err != nil {
			return fmt.Errorf("ELEVENLABS_BASE_URL, ELEVENLABS_VOICE_ID: %w", err)
		}
		log.Info("speech synthesis: ElevenLabs, an answer's sentences over its input stream")
	}
	if key := getenv("AZURE_SPEECH_KEY"); key != "" {
		o := &azurespeech.Options{Key: engine.Secret(key), Region: getenv("AZURE_SPEECH_REGION"), Endpoint: getenv("AZURE_SPEECH_ENDPOINT")}
		if o.Region == "" {
			return errors.New("AZURE_SPEECH_KEY needs AZURE_SPEECH_REGION, the region of the Speech resource, for the tenants' data regions")
		}
		if cs.azureHear, err = azurespeech.NewTranscriber(o); err == nil {
			cs.azureSpeak, err = azurespeech.NewSynthesizer(o)
		}
		if err != nil {
			return fmt.Errorf("AZURE_SPEECH_REGION, AZURE_SPEECH_ENDPOINT: %w", err)
		}
		cs.azureRegion = o.Region
		log.Info("speech recognition and synthesis: Azure AI Speech", "region", o.Region, "geography", azurespeech.Geography(o.Region))
	}
	// A tenants file loaded before, and each one reloaded, is checked against them: a tenant
	// naming a provider that is off is refused.
	router.speech.Store(cs)
	if err := cs.check(router.file.Load()); err != nil {
		return err
	}
	if cs.deepgram != nil || cs.azureHear != nil || cs.ownCloud {
		m.transcriber = &recognizers{cs}
	}
	if cs.elevenlabs != nil || cs.azureSpeak != nil || cs.ownCloud {
		m.synthesizer = &synthesizers{cs}
	}
	return nil
}

// ownHear and ownSay are the server's own speech for a tenant kept in region ("": none): the
// offline programs when the server's own is OpenAI's, which keeps no data region.
func (cs *cloudSpeech) ownHear(region string) engine.Transcriber {
	if region != "" && cs.ownCloud {
		return cs.localHear
	}
	return cs.offlineHear
}

func (cs *cloudSpeech) ownSay(region string) engine.Synthesizer {
	if region != "" && cs.ownCloud {
		return cs.localSay
	}
	return cs.offlineSay
}

// regionOf is the data region of the tenant whose speech ctx carries.
func (cs *cloudSpeech) regionOf(ctx context.Context) string {
	if ev := engine.SpeechEventOf(ctx); ev != nil {
		region, _ := cs.pinned(ev.Tenant)
		return region
	}
	return ""
}

// check refuses the speech sections of a tenants file that name a provider the server has not
// turned on, or an Azure region other than its resource's.
func (cs *cloudSpeech) check(f *fileRoutes) error {
	if f == nil {
		return nil
	}
	var errs []error
	for key, sp := range f.speech {
		for _, r := range sp.Recognizers {
			if (r == "deepgram" && cs.deepgram == nil) || (r == "azure" && cs.azureHear == nil) {
				errs = append(errs, fmt.Errorf("tenant %q: speech.recognizer: %s is not turned on (%s)", key, r, envOf[r]))
			}
		}
		if p, _, _ := strings.Cut(sp.Voice, ":"); (p == "elevenlabs" && cs.elevenlabs == nil) || (p == "azure" && cs.azureSpeak == nil) {
			errs = append(errs, fmt.Errorf("tenant %q: speech.voice: %s is not turned on (%s)", key, p, envOf[p]))
		}
		if sp.Region != "" && cs.azureHear != nil && !strings.EqualFold(sp.Region, cs.azureRegion) {
			errs = append(errs, fmt.Errorf("tenant %q: speech.region: %s, but the server's Azure Speech resource is in %s (AZURE_SPEECH_REGION)", key, sp.Region, cs.azureRegion))
		}
	}
	return errors.Join(errs...)
}

var envOf = map[string]string{"deepgram": "DEEPGRAM_API_KEY", "azure": "AZURE_SPEECH_KEY and AZURE_SPEECH_REGION", "elevenlabs": "ELEVENLABS_API_KEY"}

// pinned is the data region of the tenant key names, "" when it has none.
func (cs *cloudSpeech) pinned(key string) (string, *tenantfile.Speech) {
	f := cs.router.file.Load()
	if f == nil {
		return "", nil
	}
	return f.regions[key], f.speech[key]
}

// azureIn reports whether the server's Azure resource keeps speech in dataRegion ("" is
// anywhere).
func (cs *cloudSpeech) azureIn(dataRegion string) bool {
	return dataRegion == "" || azurespeech.InRegion(cs.azureRegion, dataRegion)
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

// recognizers hear each tenant with the recognisers its speech section names, else with those
// the server has on, the server's own last; a tenant kept in a data region only with those of
// its region. A provider that fails hands the audio to the next, as models do. Streaming
// recognition is the first's, when it streams; when its stream fails, the engine transcribes
// the recording, through the whole list.
type recognizers struct{ cs *cloudSpeech }

type recognizer struct {
	name string
	tr   engine.Transcriber
}

func (r *recognizers) chain(t *engine.Tenant) []recognizer {
	cs := r.cs
	region, sp := "", (*tenantfile.Speech)(nil)
	if t != nil {
		region, sp = cs.pinned(t.Key)
	}
	names := []string{"deepgram", "azure", "offline"}
	if sp != nil && len(sp.Recognizers) > 0 {
		names = append(slices.Clone(sp.Recognizers), "offline")
	}
	var out []recognizer
	for i, n := range names {
		var tr engine.Transcriber
		switch {
		case slices.Index(names, n) != i:
		case n == "deepgram" && cs.deepgram != nil && region == "":
			tr = cs.deepgram
		case n == "azure" && cs.azureHear != nil && cs.azureIn(region):
			tr = cs.azureHear
		case n == "offline":
			tr = cs.ownHear(region)
		}
		if tr != nil {
			out = append(out, recognizer{n, tr})
		}
	}
	return out
}

// final reports whether err is the answer rather than a provider's failure.
func final(ctx context.Context, err error) bool {
	return err == nil || ctx.Err() != nil || errors.Is(err, engine.ErrNotUnderstood)
}

func (r *recognizers) Transcribe(ctx context.Context, pcm []int16, rate int, locale string) (string, error) {
	return r.TranscribeFor(ctx, nil, pcm, rate, locale)
}

func (r *recognizers) TranscribeFor(ctx context.Context, t *engine.Tenant, pcm []int16, rate int, locale string) (string, error) {
	list := r.chain(t)
	err := errors.New("no recogniser is available")
	for i, c := range list {
		var text string
		cloudspeech.Name(ctx, c.name)
		if tt, ok := c.tr.(engine.TenantTranscriber); ok && t != nil {
			text, err = tt.TranscribeFor(ctx, t, pcm, rate, locale)
		} else {
			text, err = c.tr.Transcribe(ctx, pcm, rate, locale)
		}
		if final(ctx, err) || i == len(list)-1 {
			return text, err
		}
		r.cs.log.WarnContext(ctx, "speech recognition failed; trying the next recogniser", "recognizer", c.name, "err", err)
	}
	return "", err
}

// Listen hears an utterance with the tenant's first recogniser, when it streams. Its
// endpointing ends the utterance only for a tenant that chose it (speech.end_of_speech); the
// voice socket and the phone take it from every stream.
func (r *recognizers) Listen(ctx context.Context, t *engine.Tenant, rate int, locale string) (engine.Listening, error) {
	list := r.chain(t)
	if len(list) == 0 {
		return nil, nil
	}
	st, ok := list[0].tr.(engine.StreamingTranscriber)
	if !ok {
		return nil, nil
	}
	l, err := st.Listen(ctx, t, rate, locale)
	if l == nil || err != nil {
		return l, err
	}
	var sp *tenantfile.Speech
	if t != nil {
		_, sp = r.cs.pinned(t.Key)
	}
	if sp == nil || !sp.RecognizerEndOfSpeech {
		return silenceEnds{l}, nil
	}
	return l, nil
}

// silenceEnds is a recogniser's stream whose endpointing does not end the utterance: the
// engine's silence detector does.
type silenceEnds struct{ engine.Listening }

func (s silenceEnds) Heard() (string, bool) {
	text, _ := s.Listening.Heard()
	return text, false
}

// synthesizers speak with the voice a tenant (or a request) names: "elevenlabs:<voice id>" is
// ElevenLabs', "azure:<voice name>" Azure's, "offline" and the offline engines' own voice names
// the server's own; "" is the cloud voice the server has on. A tenant kept in a data region is
// spoken to only by a provider of its region, else by the server's own voice. A cloud voice
// that fails hands over to the server's own.
type synthesizers struct{ cs *cloudSpeech }

// route returns the provider of voice for the tenant of ctx, its synthesizer and the voice as
// the provider names it.
func (s *synthesizers) route(ctx context.Context, voice string) (string, engine.Synthesizer, string) {
	cs := s.cs
	region := cs.regionOf(ctx)
	own := cs.ownSay(region)
	if region != "" && cs.ownCloud && !strings.Contains(voice, ":") {
		voice = "" // an OpenAI voice's name means nothing to the offline programs
	}
	provider, v, named := strings.Cut(voice, ":")
	switch {
	case !named && voice == "" && cs.elevenlabs != nil && region == "":
		return "elevenlabs", cs.elevenlabs, ""
	case !named && voice == "" && cs.azureSpeak != nil && cs.azureIn(region):
		return "azure", cs.azureSpeak, ""
	case named && provider == "elevenlabs" && cs.elevenlabs != nil && region == "":
		return "elevenlabs", cs.elevenlabs, v
	case named && provider == "azure" && cs.azureSpeak != nil && cs.azureIn(region):
		return "azure", cs.azureSpeak, v
	case named && (provider == "elevenlabs" || provider == "azure"):
		cs.log.WarnContext(ctx, "a cloud voice that is off, or outside the tenant's data region, is spoken by the server's own", "voice", provider)
		return "offline", own, ""
	case voice == "offline":
		return "offline", own, ""
	}
	return "offline", own, voice
}

func (s *synthesizers) Synthesize(ctx context.Context, text, voice string) (*engine.Audio, error) {
	name, syn, v := s.route(ctx, voice)
	return s.speak(ctx, name, syn, text, v)
}

// speak speaks text with syn, and with the server's own voice when a cloud voice fails.
func (s *synthesizers) speak(ctx context.Context, name string, syn engine.Synthesizer, text, voice string) (*engine.Audio, error) {
	if syn == nil {
		return nil, errors.New("no synthesizer is available")
	}
	cloudspeech.Name(ctx, name)
	a, err := syn.Synthesize(ctx, text, voice)
	own := s.cs.ownSay(s.cs.regionOf(ctx))
	if err == nil || ctx.Err() != nil || name == "offline" || own == nil || errors.Is(err, engine.ErrUnknownVoice) {
		return a, err
	}
	s.cs.log.WarnContext(ctx, "speech synthesis failed; speaking with the server's own voice", "synthesizer", name, "err", err)
	cloudspeech.Name(ctx, "offline")
	return own.Synthesize(ctx, text, "")
}

// Stream implements [engine.StreamingSynthesizer]: an ElevenLabs voice speaks an answer over
// its input stream.
func (s *synthesizers) Stream(ctx context.Context, voice string) engine.Synthesizer {
	name, syn, v := s.route(ctx, voice)
	if st, ok := syn.(engine.StreamingSynthesizer); ok {
		return &answerStream{s: s, name: name, voice: voice, providerVoice: v, stream: st.Stream(ctx, v)}
	}
	return s
}

// answerStream speaks an answer's sentences on a provider's stream, falling back as the
// synthesizers do.
type answerStream struct {
	s             *synthesizers
	name          string
	voice         string // as the tenant names it
	providerVoice string // as the provider does
	stream        engine.Synthesizer
}

func (a *answerStream) Synthesize(ctx context.Context, text, voice string) (*engine.Audio, error) {
	if voice != a.voice {
		return a.s.Synthesize(ctx, text, voice)
	}
	return a.s.speak(ctx, a.name, a.stream, text, a.providerVoice)
}

func (s *synthesizers) VoiceFor(locale string) string {
	switch cs := s.cs; {
	case cs.elevenlabs != nil:
		return "" // ElevenLabs' voice (ELEVENLABS_VOICE_ID) speaks every language
	case cs.azureSpeak != nil:
		if v := cs.azureSpeak.VoiceFor(locale); v != "" {
			return "azure:" + v
		}
		return ""
	}
	if vc, ok := s.cs.offlineSay.(engine.VoiceChooser); ok {
		return vc.VoiceFor(locale)
	}
	return ""
}
