package main

import (
	"context"
	"errors"
	"fmt"
	"log/slog"
	"net/url"
	"sync/atomic"
	"time"

	"github.com/convengine/engine"
	"github.com/convengine/engine/breaker"
	"github.com/convengine/engine/fallback"
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
	// ownCloud: the server's own speech is OpenAI's, which keeps no data region; localSay and
	// localHear are then the offline programs, for the tenants kept in one.
	ownCloud  bool
	localSay  engine.Synthesizer
	localHear engine.Transcriber
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
		out.ownCloud = true
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
// offline intent model, a model of the tenants file's models section, its fallback chain when
// the field is a list, or, when it names none, the server's default (chooseModels). The file's
// models and chains are replaced when it is reloaded; the models' breakers are kept.
type modelRouter struct {
	fallback engine.Model
	intents  *intent.Model
	file     atomic.Pointer[fileRoutes]
	// breakers are the breakers of the file's models, shared by every chain.
	breakers *breaker.Set
	// events hears the chains' degraded answers; it passes them on to the server's Observer.
	events *breakerEvents
	// speech checks the file's speech sections against the providers turned on, once known.
	speech atomic.Pointer[cloudSpeech]
}

// fileRoutes are what a tenants file's models section and chains make.
type fileRoutes struct {
	models  map[string]engine.Model    // by model name
	chains  map[string]*fallback.Chain // by tenant key
	speech  map[string]*tenantfile.Speech
	regions map[string]string // the tenants' data regions
}

func newModelRouter(def engine.Model, intents *intent.Model, events *breakerEvents) *modelRouter {
	return &modelRouter{fallback: def, intents: intents, events: events,
		breakers: breaker.New(&breaker.Options{OnChange: events.change})}
}

func (r *modelRouter) pick(t *engine.Tenant) engine.Model {
	f := r.file.Load()
	if f != nil {
		if c, ok := f.chains[t.Key]; ok {
			return c
		}
	}
	switch t.Model {
	case "":
		return r.fallback
	case intentModelName:
		return r.intents
	}
	if f != nil {
		if m, ok := f.models[t.Model]; ok {
			return m
		}
	}
	return nil
}

// fileModels makes the models of a tenants file's models section and the tenants' chains,
// and checks that each tenant names models the server has, of its data_region when it has
// one: a chain that would send a pinned tenant's data to another region is refused here.
func (r *modelRouter) fileModels(f *tenantfile.File) (*fileRoutes, error) {
	var errs []error
	out := &fileRoutes{models: make(map[string]engine.Model, len(f.Models)), chains: map[string]*fallback.Chain{},
		speech: f.Speech, regions: f.DataRegions}
	if cs := r.speech.Load(); cs != nil {
		errs = append(errs, cs.check(out))
	}
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
		out.models[name] = m
	}
	for _, t := range f.Tenants {
		chain := f.Chains[t.Key]
		names := chain
		if names == nil {
			names = []string{t.Model}
		}
		region, pinned := f.DataRegions[t.Key]
		var members []fallback.Named
		for _, name := range names {
			c, ok := f.Models[name]
			switch {
			case name == intentModelName:
				members = append(members, fallback.Named{Name: name, Model: r.intents, Degraded: true})
				continue
			case name == "" && pinned:
				errs = append(errs, fmt.Errorf("tenant %q: data_region %q: the tenant needs a model of the models section of its region, not the server's default", t.Key, region))
			case name == "":
			case !ok:
				errs = append(errs, fmt.Errorf("tenant %q: model: %q is neither %q nor a model of the models section", t.Key, name, intentModelName))
			case pinned && c.Region != region:
				errs = append(errs, fmt.Errorf("tenant %q: model: %q is of region %q, not of the tenant's data_region %q", t.Key, name, c.Region, region))
			default:
				members = append(members, fallback.Named{Name: name, Model: out.models[name],
					FirstTokenTimeout: time.Duration(c.FirstTokenTimeout), StallTimeout: time.Duration(c.StallTimeout)})
			}
		}
		if chain == nil || len(members) != len(chain) {
			continue
		}
		c, err := fallback.New(&fallback.Options{Breakers: r.breakers, Observer: &engine.Observer{Breaker: r.events.degraded}}, members...)
		if err != nil {
			errs = append(errs, fmt.Errorf("tenant %q: model: %w", t.Key, err))
			continue
		}
		out.chains[t.Key] = c
	}
	return out, errors.Join(errs...)
}

// breakerEvents reports the breakers' changes and the chains' degraded answers to the log and,
// once the server has one, to its Observer.
type breakerEvents struct {
	log *slog.Logger
	obs atomic.Pointer[engine.Observer]
}

func (b *breakerEvents) change(name string, _, to breaker.State) {
	level := slog.LevelWarn
	if to == breaker.Closed {
		level = slog.LevelInfo
	}
	b.log.Log(context.Background(), level, "breaker", "name", name, "state", string(to))
	b.report(context.Background(), engine.BreakerEvent{Name: name, State: string(to)})
}

func (b *breakerEvents) degraded(ctx context.Context, e engine.BreakerEvent) { b.report(ctx, e) }

func (b *breakerEvents) report(ctx context.Context, e engine.BreakerEvent) {
	if o := b.obs.Load(); o != nil && o.Breaker != nil {
		o.Breaker(ctx, e)
	}
}

// hostOf names the server of a base URL for the logs (never its credentials).
func hostOf(base string) string {
	if u, err := url.Parse(base); err == nil && base != "" {
		return u.Host
	}
	return "api.openai.com"
}
