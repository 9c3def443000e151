package main

import (
	"context"
	"fmt"
	"log/slog"

	"github.com/convengine/engine"
	"github.com/convengine/engine/espeak"
	"github.com/convengine/engine/flite"
	"github.com/convengine/engine/intent"
	"github.com/convengine/engine/sphinx"
)

// speechParts returns the offline speech engines that are installed, espeak-ng for speech and
// pocketsphinx for recognition, and logs which are. mode "off" uses neither. A missing part
// leaves its field nil: the engine then answers 503 to what needs it.
func speechParts(mode string, log *slog.Logger) (engine.Synthesizer, engine.Transcriber, error) {
	switch mode {
	case "off":
		log.Info("speech is off: POST /engine/tts and audio input answer 503; the voice socket takes typed text")
		return nil, nil, nil
	case "auto":
	default:
		return nil, nil, fmt.Errorf("-speech: %q is not auto or off", mode)
	}
	var (
		synth engine.Synthesizer
		trans engine.Transcriber
	)
	es, err := espeak.New(nil)
	if err != nil {
		log.Warn("speech synthesis unavailable: POST /engine/tts answers 503 and the voice socket sends no audio", "err", err)
	} else {
		synth = es
		log.Info("speech synthesis: espeak-ng")
	}
	if fl, err := flite.New(nil); err != nil {
		log.Info("flite is not installed (Debian package flite): English is spoken by espeak-ng too", "err", err)
		if es != nil {
			synth = &voices{espeak: es}
		}
	} else if es != nil {
		synth = &voices{flite: fl, espeak: es}
		log.Info("speech synthesis: flite for English, espeak-ng for the other languages", "voices", fl.Voices())
	}
	// An amount heard through a grammar is acted on only when a free-form pass hears its
	// number words too.
	if t, err := sphinx.New(&sphinx.Options{Grammar: intentGrammar, Confirm: intent.NumberWords, Unconfirmed: intent.WithoutAmounts}); err != nil {
		log.Warn("speech recognition unavailable: audio input answers 503", "err", err)
	} else {
		trans = t
		log.Info("speech recognition: pocketsphinx", "locales", t.Locales())
	}
	return synth, trans, nil
}

// addSpeech completes m's speech: OpenAI's when the OpenAI model brought it, else the offline
// programs (speechParts). With OpenAI's, the offline programs are there too, for the tenants
// kept in a data region, whose speech OpenAI's must not hear.
func (m *models) addSpeech(mode string, log *slog.Logger) error {
	if m.synthesizer != nil && m.transcriber != nil {
		if m.ownCloud && mode != "off" {
			var err error
			if m.localSay, m.localHear, err = speechParts(mode, log.With("for", "tenants kept in a data region")); err != nil {
				return err
			}
		}
		return nil
	}
	synth, trans, err := speechParts(mode, log)
	if err != nil {
		return err
	}
	if m.synthesizer == nil {
		m.synthesizer = synth
	}
	if m.transcriber == nil {
		m.transcriber = trans
	}
	return nil
}

// intentGrammar makes pocketsphinx listen for a tenant's intent phrases; tenants without
// intents are heard free-form.
func intentGrammar(t *engine.Tenant, known func(string) bool) (string, error) {
	if len(t.Intents) == 0 {
		return "", nil
	}
	return intent.Grammar(t.Intents, &intent.GrammarOptions{Known: known})
}

// voices speaks English with flite, whose voices are far more intelligible, and every other
// language with espeak-ng. A voice is flite's when flite has it (kal16, slt …), else espeak-ng's
// (en-us, es+Annie …). flite is nil when it is not installed: a voice of flite's is then refused
// with the package to install, not spoken by espeak-ng or called unknown.
type voices struct {
	flite  *flite.Synthesizer
	espeak *espeak.Synthesizer
}

func (v *voices) Synthesize(ctx context.Context, text, voice string) (*engine.Audio, error) {
	switch {
	case v.flite != nil && v.flite.Has(voice):
		return v.flite.Synthesize(ctx, text, voice)
	case v.flite == nil && flite.Builtin(voice):
		return nil, fmt.Errorf("%w: %q is a voice of flite, which is not installed (apt-get install flite)", engine.ErrUnknownVoice, voice)
	}
	return v.espeak.Synthesize(ctx, text, voice)
}

func (v *voices) VoiceFor(locale string) string {
	if v.flite != nil {
		if voice := v.flite.VoiceFor(locale); voice != "" {
			return voice
		}
	}
	return v.espeak.VoiceFor(locale)
}
