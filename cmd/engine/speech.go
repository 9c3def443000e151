package main

import (
	"fmt"
	"log/slog"

	"github.com/convengine/engine"
	"github.com/convengine/engine/espeak"
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
	if s, err := espeak.New(nil); err != nil {
		log.Warn("speech synthesis unavailable: POST /engine/tts answers 503 and the voice socket sends no audio", "err", err)
	} else {
		synth = s
		log.Info("speech synthesis: espeak-ng")
	}
	// An amount heard through a grammar is acted on only when a free-form pass hears its
	// number words too.
	if t, err := sphinx.New(&sphinx.Options{Grammar: intentGrammar, Confirm: intent.NumberWords}); err != nil {
		log.Warn("speech recognition unavailable: audio input answers 503", "err", err)
	} else {
		trans = t
		log.Info("speech recognition: pocketsphinx", "locales", t.Locales())
	}
	return synth, trans, nil
}

// intentGrammar makes pocketsphinx listen for a tenant's intent phrases; tenants without
// intents are heard free-form.
func intentGrammar(t *engine.Tenant, known func(string) bool) (string, error) {
	if len(t.Intents) == 0 {
		return "", nil
	}
	return intent.Grammar(t.Intents, &intent.GrammarOptions{Known: known})
}
