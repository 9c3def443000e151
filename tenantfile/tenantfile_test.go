package tenantfile_test

import (
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/convengine/engine"

	"github.com/convengine/engine/tenantfile"
)

const good = `
tenants:
  - key: pk_test
    name: Test Bank
    theme: {primary: "#0B5FFF"}
    environments:
      production: {backend_url: "${BANK_URL}"}
    actions:
      transfer:
        confirm:
          en: {title: Send money, body: "Send ${amount|money} to {to}?", confirm_label: Send, cancel_label: Cancel}
    limits: {tool_timeout: 5s, max_steps: 4}
`

func TestParse(t *testing.T) {
	expand := func(name string) string {
		switch name {
		case "BANK_URL":
			return "http://127.0.0.1:9999"
		}
		return ""
	}
	tenants, err := tenantfile.Parse("tenants.yaml", []byte(good), &tenantfile.Options{Expand: expand})
	if err != nil {
		t.Fatal(err)
	}
	tn := tenants[0]
	if tn.Environments["production"].BackendURL != "http://127.0.0.1:9999" {
		t.Errorf("backend url = %q", tn.Environments["production"].BackendURL)
	}
	if tn.Locale != "en" || tn.Limits.MaxSteps != 4 || !tn.IsAction("transfer") {
		t.Errorf("tenant = %+v", tn)
	}
	if got := tn.Actions["transfer"].Confirm["en"].Body; got != "Send ${amount|money} to {to}?" {
		t.Errorf("body = %q", got)
	}
}

func TestParseErrorsNameFileTenantAndField(t *testing.T) {
	cases := []struct{ name, file, want string }{
		{"unknown field", "tenants:\n  - key: pk_a\n    name: A\n    promt: hi\n    environments: {production: {}}\n", `tenants.yaml: tenants[0]: json: unknown field "promt"`},
		{"wrong type", "tenants:\n  - key: pk_a\n    name: [A]\n", "tenants[0]: name: must be a string"},
		{"no production", "tenants:\n  - key: pk_a\n    name: A\n    environments: {staging: {backend_url: 'http://x'}}\n", `tenant "pk_a": environments.production: is missing`},
		{"bad url", "tenants:\n  - key: pk_a\n    name: A\n    environments: {production: {backend_url: 'ftp://x'}}\n", "environments.production.backend_url: must be an absolute http or https URL"},
		{"bad duration", "tenants:\n  - key: pk_a\n    name: A\n    environments: {production: {}}\n    limits: {tool_timeout: soon}\n", `duration "soon"`},
		{"empty", "tenants: []\n", "the file defines no tenant"},
		{"not yaml", "tenants: [\n", "tenants.yaml"},
	}
	for _, tc := range cases {
		t.Run(tc.name, func(t *testing.T) {
			_, err := tenantfile.Parse("tenants.yaml", []byte(tc.file), nil)
			if err == nil || !strings.Contains(err.Error(), tc.want) {
				t.Fatalf("err = %v, want it to contain %q", err, tc.want)
			}
		})
	}
}

func TestLoadJSONAndDuplicateKeys(t *testing.T) {
	dir := t.TempDir()
	path := filepath.Join(dir, "tenants.json")
	one := `{"key":"pk_a","name":"A","environments":{"production":{}}}`
	if err := os.WriteFile(path, []byte(`{"tenants":[`+one+`,`+one+`]}`), 0o600); err != nil {
		t.Fatal(err)
	}
	_, err := tenantfile.Load(path, nil)
	if err == nil || !strings.Contains(err.Error(), "key is used twice") {
		t.Fatalf("err = %v", err)
	}
	if err := os.WriteFile(path, []byte(`{"tenants":[`+one+`]}`), 0o600); err != nil {
		t.Fatal(err)
	}
	store, err := tenantfile.Load(path, nil)
	if err != nil {
		t.Fatal(err)
	}
	if _, err := store.Tenant(t.Context(), "pk_a"); err != nil {
		t.Fatal(err)
	}
}

func TestModelsSection(t *testing.T) {
	data := `
models:
  local: {base_url: "http://127.0.0.1:11434/v1/", model: llama3.2, api_key: "${KEY}"}
tenants:
  - key: pk_a
    name: A
    model: local
    environments: {production: {backend_url: "http://127.0.0.1:1"}}
`
	f, err := tenantfile.ParseFile("t.yaml", []byte(data), &tenantfile.Options{Expand: func(string) string { return "sk-local" }})
	if err != nil {
		t.Fatal(err)
	}
	m := f.Models["local"]
	if m.Model != "llama3.2" || m.BaseURL != "http://127.0.0.1:11434/v1/" || m.APIKey.Reveal() != "sk-local" || f.Tenants[0].Model != "local" {
		t.Fatalf("%+v %+v", f.Models, f.Tenants[0])
	}
	for bad, want := range map[string]string{
		"models: {local: {base_url: x}}\n":              "models.local.model: is empty",
		"models: {local: {model: m, temperature: 1}}\n": "models.local: json: unknown field",
		"models: {'bad name': {model: m}}\n":            "models.bad name: the name must be",
		"models: {a: {model: m}}\ntenants:\n  - {key: pk_b, name: B, model: 'no way', environments: {production: {backend_url: 'http://x'}}}\n": `tenant "pk_b": model: must be 1 to 64`,
	} {
		if !strings.Contains(bad, "tenants:") {
			bad += "tenants:\n  - {key: pk_b, name: B, environments: {production: {backend_url: 'http://x'}}}\n"
		}
		_, err := tenantfile.ParseFile("t.yaml", []byte(bad), nil)
		if err == nil || !strings.Contains(err.Error(), want) {
			t.Errorf("%s: %v, want %q", bad, err, want)
		}
	}
}

// TestChainsAndRegions: a tenant's model may be a list, tried in order, whose first is its
// Model; data_region and the models' regions and time-outs are read; a string model stays one.
func TestChainsAndRegions(t *testing.T) {
	data := `
models:
  eu1: {base_url: "http://127.0.0.1:1/v1/", model: m, region: eu, first_token_timeout: 5s, stall_timeout: 2s}
  us1: {base_url: "http://127.0.0.1:2/v1/", model: m, region: us}
tenants:
  - {key: pk_a, name: A, model: [eu1, intent], data_region: eu, environments: {production: {backend_url: "http://127.0.0.1:1"}}}
  - {key: pk_b, name: B, model: us1, environments: {production: {backend_url: "http://127.0.0.1:1"}}}
`
	f, err := tenantfile.ParseFile("t.yaml", []byte(data), nil)
	if err != nil {
		t.Fatal(err)
	}
	if got := f.Chains["pk_a"]; len(got) != 2 || got[0] != "eu1" || got[1] != "intent" || f.Tenants[0].Model != "eu1" {
		t.Errorf("chain %v, model %q", got, f.Tenants[0].Model)
	}
	if _, ok := f.Chains["pk_b"]; ok || f.Tenants[1].Model != "us1" || f.DataRegions["pk_a"] != "eu" || f.DataRegions["pk_b"] != "" {
		t.Errorf("chains %v, regions %v, model %q", f.Chains, f.DataRegions, f.Tenants[1].Model)
	}
	if m := f.Models["eu1"]; m.Region != "eu" || m.FirstTokenTimeout != engine.Duration(5*time.Second) || m.StallTimeout != engine.Duration(2*time.Second) {
		t.Errorf("%+v", m)
	}
	for bad, want := range map[string]string{
		"model: []":                  "model: must be a model's name or a list",
		"model: [a, a]":              "model[1]: must be a model's name",
		"model: ['no way']":          "model[0]: must be a model's name",
		"model: [a, 3]":              "model: must be a model's name or a list",
		"data_region: 'e u'":         "data_region: must be",
		"model: [a], modle: b":       `unknown field "modle"`,
		"model: [a,b,c,d,e,f,g,h,i]": "a list of 1 to 8 names",
	} {
		doc := "tenants:\n  - {key: pk_b, name: B, " + bad + ", environments: {production: {backend_url: 'http://x'}}}\n"
		_, err := tenantfile.ParseFile("t.yaml", []byte(doc), nil)
		if err == nil || !strings.Contains(err.Error(), want) {
			t.Errorf("%s: %v, want %q", bad, err, want)
		}
	}
	_, err = tenantfile.ParseFile("t.yaml", []byte("models: {a: {model: m, stall_timeout: -1s}}\ntenants:\n  - {key: pk_b, name: B, environments: {production: {}}}\n"), nil)
	if err == nil || !strings.Contains(err.Error(), "stall_timeout must be from 0") {
		t.Errorf("negative time-out: %v", err)
	}
}

// TestLimitsRanges: each limit has a range; a value past it (such as a max_output_tokens of
// 2^31 or a tokens_per_month of 2^63-1) fails the load naming the tenant and the field, and
// the top of each range loads.
func TestLimitsRanges(t *testing.T) {
	file := func(limits string) string {
		return "tenants:\n  - key: pk_a\n    name: A\n    environments: {production: {}}\n    limits: {" + limits + "}\n"
	}
	top := "max_steps: 32, max_output_tokens: 1000000, tokens_per_day: 1000000000000000, tokens_per_month: 1000000000000000, " +
		"speech_seconds_per_day: 1000000000, turns_per_user_per_day: 1000000, user_per_minute: 1000000000, user_burst: 1000000000, " +
		"tenant_per_minute: 1000000000, tenant_burst: 1000000000, tool_timeout: 10m, turn_timeout: 1h, action_ttl: 24h, verification_max_age: 1h"
	if _, err := tenantfile.Parse("tenants.yaml", []byte(file(top)), nil); err != nil {
		t.Fatalf("the top of each range: %v", err)
	}
	for _, tc := range []struct{ limit, want string }{
		{"max_steps: 33", "limits.max_steps: must be from 1 to 32"},
		{"max_output_tokens: 2147483648", "limits.max_output_tokens: must be from 0 to 1000000"},
		{"max_output_tokens: 1000001", "limits.max_output_tokens: must be from 0 to 1000000"},
		{"max_output_tokens: -1", "limits.max_output_tokens: must be from 0 to 1000000"},
		{"tokens_per_day: 1000000000000001", "limits.tokens_per_day: must be from 0 to 1000000000000000"},
		{"tokens_per_month: 9223372036854775807", "limits.tokens_per_month: must be from 0 to 1000000000000000"},
		{"speech_seconds_per_day: 1.0e10", "limits.speech_seconds_per_day: must be from 0 to 1000000000"},
		{"speech_seconds_per_day: -0.5", "limits.speech_seconds_per_day: must be from 0 to 1000000000"},
		{"turns_per_user_per_day: 1000001", "limits.turns_per_user_per_day: must be from 0 to 1000000"},
		{"user_per_minute: 1000000001", "limits.user_per_minute: must be from 0 to 1000000000"},
		{"user_burst: -1", "limits.user_burst: must be from 0 to 1000000000"},
		{"tenant_per_minute: 1000000001", "limits.tenant_per_minute: must be from 0 to 1000000000"},
		{"tenant_burst: 1000000001", "limits.tenant_burst: must be from 0 to 1000000000"},
		{"tool_timeout: 11m", "limits.tool_timeout: must be from 0 to 10m0s"},
		{"turn_timeout: 2h", "limits.turn_timeout: must be from 0 to 1h0m0s"},
		{"action_ttl: 25h", "limits.action_ttl: must be from 0 to 24h0m0s"},
		{"verification_max_age: -1s", "limits.verification_max_age: must be from 0 to 1h0m0s"},
	} {
		t.Run(tc.limit, func(t *testing.T) {
			_, err := tenantfile.Parse("tenants.yaml", []byte(file(tc.limit)), nil)
			if want := `tenant "pk_a": ` + tc.want; err == nil || !strings.Contains(err.Error(), want) {
				t.Fatalf("err = %v, want it to contain %q", err, want)
			}
		})
	}
}

// A tenant's speech section names its recogniser and voice; the voice becomes its Voice. A
// tenant kept in a data region names an Azure region of it, and neither Deepgram nor
// ElevenLabs: one that names eastus while its data_region is eu is refused at load.
func TestSpeech(t *testing.T) {
	data := `
tenants:
  - {key: pk_a, name: A, data_region: eu, speech: {recognizer: [azure, offline], voice: "azure:de-DE-KatjaNeural", region: germanywestcentral}, environments: {production: {}}}
  - {key: pk_b, name: B, speech: {recognizer: deepgram, voice: "elevenlabs:JBFqnCBsd6RMkjVDRZzb", end_of_speech: recognizer}, environments: {production: {}}}
`
	f, err := tenantfile.ParseFile("t.yaml", []byte(data), nil)
	if err != nil {
		t.Fatal(err)
	}
	a, b := f.Speech["pk_a"], f.Speech["pk_b"]
	if a == nil || len(a.Recognizers) != 2 || a.Region != "germanywestcentral" || f.Tenants[0].Voice != "azure:de-DE-KatjaNeural" {
		t.Errorf("pk_a: %+v, voice %q", a, f.Tenants[0].Voice)
	}
	if a.RecognizerEndOfSpeech || b == nil || b.Recognizers[0] != "deepgram" || f.Tenants[1].Voice != "elevenlabs:JBFqnCBsd6RMkjVDRZzb" || !b.RecognizerEndOfSpeech {
		t.Errorf("pk_b: %+v", b)
	}
	for bad, want := range map[string]string{
		"data_region: eu, speech: {recognizer: azure, region: eastus}":                       `speech.region: Azure's region "eastus" is not in the tenant's data_region "eu"`,
		"data_region: eu, speech: {recognizer: azure}":                                       "speech.region: the tenant's data_region is \"eu\"",
		"data_region: eu, speech: {recognizer: deepgram}":                                    "Deepgram and ElevenLabs are not pinned",
		"data_region: eu, speech: {voice: 'elevenlabs:abc'}":                                 "Deepgram and ElevenLabs are not pinned",
		"speech: {recognizer: whisper}":                                                      `speech.recognizer: "whisper" is not one of`,
		"speech: {recognizer: [azure, azure], region: westeurope}":                           "named once",
		"speech: {voice: 'azure:Katja'}":                                                     "speech.voice: must be",
		"speech: {voice: offline, region: westeurope}":                                       "speech.region: is Azure's region",
		"speech: {recognizer: offline, volume: 11}":                                          `speech: json: unknown field "volume"`,
		"speech: {recognizer: deepgram, end_of_speech: provider}":                            "speech.end_of_speech: must be silence",
		"voice: en-us, speech: {voice: offline}":                                             "name the voice once",
		"speech: {recognizer: azure, voice: 'azure:en-US-AvaNeural', region: 'West Europe'}": "speech.region: must be",
	} {
		doc := "tenants:\n  - {key: pk_b, name: B, " + bad + ", environments: {production: {}}}\n"
		_, err := tenantfile.ParseFile("t.yaml", []byte(doc), nil)
		if err == nil || !strings.Contains(err.Error(), want) {
			t.Errorf("%s: %v, want %q", bad, err, want)
		}
	}
}
