package main

import (
	"encoding/base64"
	"encoding/json"
	"io"
	"net/http"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/convengine/engine"
	"github.com/convengine/engine/audio"
	"github.com/convengine/engine/azurespeech/azurespeechtest"
	"github.com/convengine/engine/deepgram/deepgramtest"
	"github.com/convengine/engine/elevenlabs/elevenlabstest"
	"github.com/convengine/engine/examples/demobank"
	"github.com/convengine/engine/internal/testkit"
)

// tenantsWithSpeech writes a tenants file: pk_eu kept in the EU and heard and spoken to by
// Azure in speechRegion, pk_any naming no provider.
func tenantsWithSpeech(t *testing.T, speechRegion string) string {
	t.Helper()
	return writeTenants(t,
		demoTenantAs("pk_eu", map[string]any{"model": "intent", "data_region": "eu",
			"speech": map[string]any{"recognizer": "azure", "voice": "azure:de-DE-KatjaNeural", "region": speechRegion}}),
		demoTenantAs("pk_any", nil))
}

// demoTenantAs is the demo tenant, as a tenants file holds it, under key and with extra's fields.
func demoTenantAs(key string, extra map[string]any) map[string]any {
	d, _ := demobank.Tenant("http://127.0.0.1:1", "")
	d.Key = key
	raw, _ := json.Marshal(d)
	var m map[string]any
	json.Unmarshal(raw, &m)
	for k, v := range extra {
		m[k] = v
	}
	return m
}

// writeTenants writes a tenants file of tenants and returns its path.
func writeTenants(t *testing.T, tenants ...map[string]any) string {
	t.Helper()
	data, _ := json.Marshal(map[string]any{"tenants": tenants})
	path := filepath.Join(t.TempDir(), "tenants.json")
	if err := os.WriteFile(path, data, 0o600); err != nil {
		t.Fatal(err)
	}
	return path
}

// Each tenant is heard and spoken to by the providers it names: pk_eu, kept in the EU, by
// Azure's stand-in (its region westeurope) and never by Deepgram or ElevenLabs, which serve
// the tenant naming none. When Azure fails, pk_eu falls back to the server's own speech, not to
// a provider outside its region.
func TestTenantSpeech(t *testing.T) {
	if _, err := os.Stat("/usr/bin/espeak-ng"); err != nil && !testing.Short() {
		t.Fatal("the offline voice needs espeak-ng (apt-get install espeak-ng)")
	} else if err != nil {
		t.Skip("-short: espeak-ng is not installed")
	}
	dg := deepgramtest.New("dg-key")
	defer dg.Close()
	xi := elevenlabstest.New("xi-key")
	defer xi.Close()
	az := azurespeechtest.New("az-key")
	defer az.Close()
	az.Hear = func([]int16) string { return "What is my balance?" }
	env := map[string]string{"DEEPGRAM_API_KEY": "dg-key", "DEEPGRAM_BASE_URL": dg.URL, "ELEVENLABS_API_KEY": "xi-key", "ELEVENLABS_BASE_URL": xi.URL,
		"AZURE_SPEECH_KEY": "az-key", "AZURE_SPEECH_REGION": "westeurope", "AZURE_SPEECH_ENDPOINT": az.URL}
	base, _, logs := startServerLogs(t, []string{"-tenants", tenantsWithSpeech(t, "westeurope")}, env)

	wav := base64.StdEncoding.EncodeToString(audio.EncodeWAV(testkit.Voiced(16000), 16000))
	tts := func(key string) int {
		req := demoRequest(t, http.MethodPost, base+engine.PathTTS, `{"text":"Willkommen."}`)
		req.Header.Set("X-Engine-Key", key)
		resp, err := http.DefaultClient.Do(req)
		if err != nil {
			t.Fatal(err)
		}
		defer resp.Body.Close()
		io.Copy(io.Discard, resp.Body)
		return resp.StatusCode
	}

	_, spec := turnAs(t, base, "pk_eu", "prod-eu-1", `{"audio_base64":"`+wav+`"}`)
	if spec.Meta.Transcript != "What is my balance?" {
		t.Errorf("pk_eu heard %q", spec.Meta.Transcript)
	}
	if status := tts("pk_eu"); status != 200 {
		t.Errorf("pk_eu tts: %d", status)
	}
	reqs := az.Requests()
	if len(reqs) != 2 || reqs[0].Language == "" || reqs[1].Voice != "de-DE-KatjaNeural" || reqs[1].Locale != "de-DE" {
		t.Errorf("Azure was asked %+v", reqs)
	}
	if len(dg.Queries()) != 0 || len(xi.Texts()) != 0 {
		t.Errorf("pk_eu's speech reached Deepgram (%d) or ElevenLabs (%q)", len(dg.Queries()), xi.Texts())
	}

	turnAs(t, base, "pk_any", "prod-any-1", `{"audio_base64":"`+wav+`"}`)
	if status := tts("pk_any"); status != 200 || len(dg.Queries()) != 1 || len(xi.Texts()) != 1 {
		t.Errorf("pk_any: tts %d, Deepgram %d, ElevenLabs %q", status, len(dg.Queries()), xi.Texts())
	}

	az.Fault, az.Status = azurespeechtest.Status, http.StatusServiceUnavailable
	if status := tts("pk_eu"); status != 200 || len(xi.Texts()) != 1 {
		t.Errorf("pk_eu with Azure down: tts %d; ElevenLabs said %q", status, xi.Texts())
	}
	turnAs(t, base, "pk_eu", "prod-eu-2", `{"audio_base64":"`+wav+`"}`)
	if len(dg.Queries()) != 1 {
		t.Errorf("pk_eu's audio went to Deepgram when Azure failed")
	}
	if strings.Contains(logs.String(), "az-key") {
		t.Error("the Azure key is in the logs")
	}
}

// A tenant kept in the EU that names an Azure region of the US is refused at load, as is one
// whose region is not the server's Azure resource's, or that names a provider that is off.
func TestTenantSpeechRefused(t *testing.T) {
	for _, tc := range []struct {
		region, serverRegion, want string
	}{
		{"eastus", "eastus", `speech.region: Azure's region "eastus" is not in the tenant's data_region "eu"`},
		{"westeurope", "northeurope", "speech.region: westeurope, but the server's Azure Speech resource is in northeurope (AZURE_SPEECH_REGION)"},
		{"westeurope", "", "speech.recognizer: azure is not turned on (AZURE_SPEECH_KEY and AZURE_SPEECH_REGION)"},
	} {
		env := map[string]string{}
		if tc.serverRegion != "" {
			env = map[string]string{"AZURE_SPEECH_KEY": "az-key", "AZURE_SPEECH_REGION": tc.serverRegion}
		}
		err := run(t.Context(), []string{"-addr", "127.0.0.1:0", "-tenants", tenantsWithSpeech(t, tc.region)}, func(k string) string { return env[k] }, io.Discard, io.Discard)
		if err == nil || !strings.Contains(err.Error(), tc.want) || strings.Contains(err.Error(), "az-key") {
			t.Errorf("region %s, server's %q: %v, want %q", tc.region, tc.serverRegion, err, tc.want)
		}
	}
}
