// Package tenantfile reads the tenants of a YAML or JSON file into an [engine.StaticTenants].
//
// The file holds one top-level key, "tenants", a list of tenants with the fields of
// [engine.Tenant] in snake_case:
//
//	tenants:
//	  - key: pk_live_acme
//	    name: Acme Bank
//	    prompt: You are Acme Bank's assistant.
//	    voice: en-us
//	    locale: en
//	    theme: {primary: "#0B5FFF", logo_url: "https://acme.example/logo.svg"}
//	    environments:
//	      production: {backend_url: "https://api.acme.example"}
//	      staging: {backend_url: "https://staging.acme.example"}
//	    tools: [...]      # read by the Toolset (package httptools)
//	    intents: {...}    # read by the offline model (package intent)
//	    actions:
//	      transfer:
//	        confirm:
//	          en: {title: Send money, body: "Send ${amount|money} to {to}?", confirm_label: Send, cancel_label: Cancel}
//	    limits: {tool_timeout: 5s, turn_timeout: 30s, max_steps: 6}
//	    model: local     # a model of the models section, or one the host offers ("intent")
//	    # or a fallback chain, tried in order:  model: [local, backup, intent]
//	    data_region: eu  # only models of region eu (and the offline model) may answer it
//	    speech: {recognizer: azure, voice: "azure:de-DE-KatjaNeural", region: westeurope}  # see Speech
//
// An optional top-level "models" section names OpenAI-compatible chat servers that tenants
// choose with their "model" field, so that one engine answers each tenant with its own model:
//
//	models:
//	  local:
//	    base_url: http://127.0.0.1:11434/v1/   # Ollama, vLLM, llama.cpp server, Groq …
//	    model: llama3.2
//	    api_key: ${LOCAL_API_KEY}             # secrets come from the environment (Options.Expand)
//	    region: eu                            # where it processes what it is sent
//	    first_token_timeout: 10s              # in a chain: the next model after this long
//	    stall_timeout: 15s                    # without a first chunk, or between two
//
// Unknown fields are errors, so that a misspelt field does not silently fall back to a default.
// Every error names the file, the tenant and the field.
package tenantfile

import (
	"bytes"
	"cmp"
	"encoding/json"
	"errors"
	"fmt"
	"maps"
	"os"
	"path/filepath"
	"regexp"
	"slices"
	"strings"
	"time"

	"sigs.k8s.io/yaml"

	"github.com/convengine/engine"
)

// Options adjust how a file is read. A nil *Options means the defaults.
type Options struct {
	// Expand, when set, replaces ${NAME} references in the file's text before it is parsed,
	// for example with os.Getenv, so that secrets and URLs can come from the environment. NAME
	// is upper case letters, digits and '_'; other text, such as "${amount|money}" in copy, is
	// left as it is.
	Expand func(name string) string
}

// File is what a tenants file holds.
type File struct {
	Tenants []*engine.Tenant
	// Models are the models of the models section, by name.
	Models map[string]Model
	// Chains are the fallback chains of the tenants whose model is a list, by tenant key, in
	// the order the models are tried; the tenant's Model is the first of them.
	Chains map[string][]string
	// DataRegions are the tenants' data_region, by tenant key, for those that have one: only
	// models of that region (and the offline model) may answer them. The host checks it.
	DataRegions map[string]string
	// Speech are the tenants' speech sections, by tenant key, for those that have one. A
	// tenant's voice is also its Voice.
	Speech map[string]*Speech
}

// maxChain bounds the models of a tenant's chain.
const maxChain = 8

// Model is an entry of the models section: an OpenAI-compatible chat completions server.
type Model struct {
	// BaseURL is the server's base URL, such as "http://127.0.0.1:11434/v1/"; empty means
	// OpenAI's.
	BaseURL string `json:"base_url,omitempty"`
	// Model is the model's name on the server (required).
	Model string `json:"model"`
	// APIKey authenticates to the server; empty for a local server that needs none.
	APIKey engine.Secret `json:"api_key,omitempty"`
	// Organization and Project are OpenAI's headers, when needed.
	Organization string `json:"organization,omitempty"`
	Project      string `json:"project,omitempty"`
	// Region is where the server processes what it is sent, such as "eu"; tenants with a
	// data_region may only use models of theirs.
	Region string `json:"region,omitempty"`
	// FirstTokenTimeout and StallTimeout bound, in a fallback chain, the wait for the model's
	// first chunk and the silence between two chunks before the next model is tried (package
	// fallback's defaults when zero).
	FirstTokenTimeout engine.Duration `json:"first_token_timeout,omitempty"`
	StallTimeout      engine.Duration `json:"stall_timeout,omitempty"`
}

// Load reads the file at path and returns a store of its tenants.
func Load(path string, opts *Options) (*engine.StaticTenants, error) {
	data, err := os.ReadFile(path)
	if err != nil {
		return nil, fmt.Errorf("tenantfile: %w", err)
	}
	tenants, err := Parse(path, data, opts)
	if err != nil {
		return nil, err
	}
	store, err := engine.NewStaticTenants(tenants...)
	if err != nil {
		return nil, fmt.Errorf("tenantfile: %s: %w", path, err)
	}
	return store, nil
}

// Parse reads the tenants of data, named name in errors. A name ending in ".json" is read as
// JSON; anything else as YAML, of which JSON is a subset. Tenants are validated.
func Parse(name string, data []byte, opts *Options) ([]*engine.Tenant, error) {
	f, err := ParseFile(name, data, opts)
	if err != nil {
		return nil, err
	}
	return f.Tenants, nil
}

// LoadFile reads the file at path, its tenants and its models.
func LoadFile(path string, opts *Options) (*File, error) {
	data, err := os.ReadFile(path)
	if err != nil {
		return nil, fmt.Errorf("tenantfile: %w", err)
	}
	return ParseFile(path, data, opts)
}

// ParseFile reads the tenants and the models of data, as Parse does. A tenant's model must
// be one of the models section or a name the host offers itself, which the host checks.
func ParseFile(name string, data []byte, opts *Options) (*File, error) {
	if opts != nil && opts.Expand != nil {
		data = envRef.ReplaceAllFunc(data, func(ref []byte) []byte {
			return []byte(opts.Expand(string(ref[2 : len(ref)-1])))
		})
	}
	if !strings.EqualFold(filepath.Ext(name), ".json") {
		j, err := yaml.YAMLToJSON(data)
		if err != nil {
			return nil, fmt.Errorf("tenantfile: %s: %w", name, err)
		}
		data = j
	}
	var file struct {
		Tenants []json.RawMessage          `json:"tenants"`
		Models  map[string]json.RawMessage `json:"models"`
	}
	if err := strict(data, &file); err != nil {
		return nil, fmt.Errorf("tenantfile: %s: %w", name, err)
	}
	if len(file.Tenants) == 0 {
		return nil, fmt.Errorf("tenantfile: %s: tenants: the file defines no tenant", name)
	}
	out := &File{Models: map[string]Model{}, Chains: map[string][]string{}, DataRegions: map[string]string{}, Speech: map[string]*Speech{}}
	var errs []error
	for _, key := range slices.Sorted(maps.Keys(file.Models)) {
		var m Model
		field := "models." + key
		switch err := strict(file.Models[key], &m); {
		case !modelName.MatchString(key):
			errs = append(errs, fmt.Errorf("tenantfile: %s: %s: the name must be 1 to 64 letters, digits, '_', '.' or '-'", name, field))
		case err != nil:
			errs = append(errs, fmt.Errorf("tenantfile: %s: %s: %w", name, field, err))
		case strings.TrimSpace(m.Model) == "":
			errs = append(errs, fmt.Errorf("tenantfile: %s: %s.model: is empty", name, field))
		case m.Region != "" && !modelName.MatchString(m.Region):
			errs = append(errs, fmt.Errorf("tenantfile: %s: %s.region: must be 1 to 64 letters, digits, '_', '.' or '-'", name, field))
		case m.FirstTokenTimeout < 0 || m.StallTimeout < 0 || m.FirstTokenTimeout > maxTimeout || m.StallTimeout > maxTimeout:
			errs = append(errs, fmt.Errorf("tenantfile: %s: %s: first_token_timeout and stall_timeout must be from 0 to %v", name, field, time.Duration(maxTimeout)))
		default:
			out.Models[key] = m
		}
	}
	for i, raw := range file.Tenants {
		var t engine.Tenant
		raw, chain, region, speech, err := placement(raw)
		if err == nil {
			err = strict(raw, &t)
		}
		if err == nil && speech != nil {
			if t.Voice != "" && speech.Voice != "" {
				err = errors.New("voice and speech.voice: name the voice once")
			}
			t.Voice = cmp.Or(t.Voice, speech.Voice)
			out.Speech[t.Key] = speech
		}
		if err != nil {
			errs = append(errs, fmt.Errorf("tenantfile: %s: tenants[%d]: %w", name, i, err))
			continue
		}
		if len(chain) > 0 {
			t.Model = chain[0]
			out.Chains[t.Key] = chain
		}
		if region != "" {
			out.DataRegions[t.Key] = region
		}
		if err := t.Validate(); err != nil {
			errs = append(errs, fmt.Errorf("tenantfile: %s: tenant %q: %w", name, t.Key, err))
			continue
		}
		out.Tenants = append(out.Tenants, &t)
	}
	if err := errors.Join(errs...); err != nil {
		return nil, err
	}
	return out, nil
}

var modelName = regexp.MustCompile(`^[A-Za-z0-9._-]{1,64}$`)

// maxTimeout bounds a model's time-outs.
const maxTimeout = engine.Duration(10 * time.Minute)

// placement takes out of a tenant's raw fields what says which models and speech providers
// serve it, which [engine.Tenant] does not hold: a model field that is a list (the chain; a
// string stays as it is), data_region and speech.
func placement(raw json.RawMessage) (rest json.RawMessage, chain []string, region string, speech *Speech, err error) {
	var fields map[string]json.RawMessage
	if json.Unmarshal(raw, &fields) != nil || fields == nil {
		return raw, nil, "", nil, nil // strict reports it
	}
	if r, ok := fields["data_region"]; ok {
		if json.Unmarshal(r, &region) != nil || !modelName.MatchString(region) {
			return nil, nil, "", nil, errors.New("data_region: must be 1 to 64 letters, digits, '_', '.' or '-'")
		}
		delete(fields, "data_region")
	}
	if r, ok := fields["speech"]; ok {
		if speech, err = parseSpeech(r, region); err != nil {
			return nil, nil, "", nil, err
		}
		delete(fields, "speech")
	}
	m := bytes.TrimSpace(fields["model"])
	if len(m) > 0 && m[0] == '[' {
		if json.Unmarshal(m, &chain) != nil || len(chain) == 0 || len(chain) > maxChain {
			return nil, nil, "", nil, fmt.Errorf("model: must be a model's name or a list of 1 to %d names", maxChain)
		}
		for i, c := range chain {
			if !modelName.MatchString(c) || slices.Index(chain, c) != i {
				return nil, nil, "", nil, fmt.Errorf("model[%d]: must be a model's name, 1 to 64 letters, digits, '_', '.' or '-', named once", i)
			}
		}
		delete(fields, "model")
	}
	if rest, err = json.Marshal(fields); err != nil {
		return nil, nil, "", nil, err
	}
	return rest, chain, region, speech, nil
}

var envRef = regexp.MustCompile(`\$\{[A-Z_][A-Z0-9_]*\}`)

func strict(data []byte, v any) error {
	dec := json.NewDecoder(bytes.NewReader(data))
	dec.DisallowUnknownFields()
	if err := dec.Decode(v); err != nil {
		var typ *json.UnmarshalTypeError
		if errors.As(err, &typ) && typ.Field != "" {
			return fmt.Errorf("%s: must be a %s", typ.Field, typ.Type)
		}
		return err
	}
	return nil
}
