package main

import (
	"errors"
	"fmt"
	"log/slog"
	"net/url"
	"sync/atomic"

	"github.com/convengine/engine"
	"github.com/convengine/engine/intent"
	"github.com/convengine/engine/openai"
	"github.com/convengine/engine/tenantfile"
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
	opts := openaiOptions(getenv)
	m, err := openai.NewModel(opts)
	if err != nil {
		return models{}, fmt.Errorf("OPENAI_BASE_URL: %w", err)
	}
	out := models{model: m}
	host := hostOf(base)
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

// openaiOptions are the options of the OpenAI model as the environment gives them.
func openaiOptions(getenv func(string) string) *openai.Options {
	return &openai.Options{
		APIKey:       engine.Secret(getenv("OPENAI_API_KEY")),
		BaseURL:      getenv("OPENAI_BASE_URL"),
		Organization: getenv("OPENAI_ORG_ID"),
		Project:      getenv("OPENAI_PROJECT_ID"),
		Model:        getenv("ENGINE_MODEL"),
	}
}

// intentModelName is what a tenant's model field says for the offline intent model.
const intentModelName = "intent"

// modelRouter answers each tenant with the model its model field names: "intent" for the
// offline intent model, a model of the tenants file's models section, or, when it names none,
// the server's default (chooseModels). The file's models are replaced when it is reloaded.
type modelRouter struct {
	fallback engine.Model
	intents  *intent.Model
	file     atomic.Pointer[map[string]engine.Model]
}

func (r *modelRouter) pick(t *engine.Tenant) engine.Model {
	switch t.Model {
	case "":
		return r.fallback
	case intentModelName:
		return r.intents
	}
	if m := r.file.Load(); m != nil {
		return (*m)[t.Model]
	}
	return nil
}

// fileModels makes the models of a tenants file's models section, and checks that each
// tenant names one the server has.
func fileModels(f *tenantfile.File) (map[string]engine.Model, error) {
	var errs []error
	out := make(map[string]engine.Model, len(f.Models))
	for name, c := range f.Models {
		if name == intentModelName {
			errs = append(errs, fmt.Errorf("models.%s: the name is the offline intent model's", name))
			continue
		}
		m, err := openai.NewModel(&openai.Options{APIKey: c.APIKey, BaseURL: c.BaseURL, Model: c.Model,
			Organization: c.Organization, Project: c.Project})
		if err != nil {
			errs = append(errs, fmt.Errorf("models.%s: %w", name, err))
			continue
		}
		out[name] = m
	}
	for _, t := range f.Tenants {
		if _, ok := f.Models[t.Model]; !ok && t.Model != "" && t.Model != intentModelName {
			errs = append(errs, fmt.Errorf("tenant %q: model: %q is neither %q nor a model of the models section", t.Key, t.Model, intentModelName))
		}
	}
	return out, errors.Join(errs...)
}

// hostOf names the server of a base URL for the logs (never its credentials).
func hostOf(base string) string {
	if u, err := url.Parse(base); err == nil && base != "" {
		return u.Host
	}
	return "api.openai.com"
}
