package main

import (
	"fmt"
	"log/slog"
	"net/url"

	"github.com/convengine/engine"
	"github.com/convengine/engine/intent"
	"github.com/convengine/engine/openai"
)

// models are what the reference server answers, speaks and listens with.
type models struct {
	model engine.Model
	// synthesizer and transcriber are nil when no speech service is configured here.
	synthesizer engine.Synthesizer
	transcriber engine.Transcriber
}

// chooseModels picks the model: OpenAI's, or any compatible server's, when OPENAI_API_KEY or
// OPENAI_BASE_URL is set, and otherwise the offline intent model. OpenAI's speech endpoints are
// used with OpenAI itself, not with a compatible server, which rarely has them.
func chooseModels(getenv func(string) string, intents *intent.Model, log *slog.Logger) (models, error) {
	key, base := getenv("OPENAI_API_KEY"), getenv("OPENAI_BASE_URL")
	if key == "" && base == "" {
		log.Info("model: the offline intent model; set OPENAI_API_KEY for a language model")
		return models{model: intents}, nil
	}
	opts := &openai.Options{
		APIKey:       engine.Secret(key),
		BaseURL:      base,
		Organization: getenv("OPENAI_ORG_ID"),
		Project:      getenv("OPENAI_PROJECT_ID"),
		Model:        getenv("ENGINE_MODEL"),
	}
	m, err := openai.NewModel(opts)
	if err != nil {
		return models{}, fmt.Errorf("OPENAI_BASE_URL: %w", err)
	}
	out := models{model: m}
	host := "api.openai.com"
	if u, err := url.Parse(base); err == nil && base != "" {
		host = u.Host
	}
	name := opts.Model
	if name == "" {
		name = openai.DefaultModel
	}
	log.Info("model: OpenAI chat completions", "model", name, "host", host)
	if base == "" {
		if out.synthesizer, err = openai.NewSynthesizer(opts); err != nil {
			return models{}, err
		}
		if out.transcriber, err = openai.NewTranscriber(opts); err != nil {
			return models{}, err
		}
	}
	return out, nil
}
